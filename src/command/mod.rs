//! One module per subcommand; each turns parsed arguments into library calls
//! and prints the human table.

pub mod compare;
pub mod export;
pub mod init;
pub mod load;
pub mod progress;
pub mod report;
pub mod run;
pub mod serve;
