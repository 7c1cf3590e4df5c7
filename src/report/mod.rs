//! Results (the versioned JSON document) and their renderings: terminal
//! tables, HTML with charts, Markdown, CSV, PNG, and comparisons.

pub mod chart;
pub mod compare;
pub mod figures;
pub mod html;
pub mod kinds;
pub mod measures;
pub mod png;
pub mod sections;
pub mod table;
pub mod terminal;
pub mod text;
pub mod view;
