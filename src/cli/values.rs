//! Value parsers for options whose value is more than a number: one parser
//! per concept, with one set of limits, so clap hands every command typed
//! values and a bad one is refused (exit 2, one line naming the value and
//! the fix) before anything runs. Numbers, durations and decimals use
//! `units`' parsers; the closed word lists are `ValueEnum`s.

use clap::ValueEnum;

use crate::error::{Error, Result};
use crate::result::aging::SizeRange;
use crate::units::{MAX_BLOB_SIZE, parse_number};

/// The most connections (`-c`) one load level or one `suite http` level
/// opens: as many as a raised file-descriptor limit comfortably holds.
pub const MAX_CONNECTIONS: u64 = 100_000;

/// The most worker threads a run, a suite or advise starts.
pub const MAX_THREADS: u64 = 1024;

/// A connection count (`load -c`, `suite http -c`), kvtest suffixes allowed.
/// The message names the option as it is usually written, `-c`.
pub fn connection_count(text: &str) -> std::result::Result<usize, String> {
    counted(text, MAX_CONNECTIONS).ok_or_else(|| {
        format!(
            "-c {}: concurrency levels are numbers from 1 to {MAX_CONNECTIONS}, e.g. -c 1,2,4,8",
            text.trim()
        )
    })
}

/// A time of the system clock (`load --start-at`): RFC 3339, UTC when it
/// names no zone.
pub fn start_time(text: &str) -> std::result::Result<std::time::SystemTime, String> {
    humantime::parse_rfc3339_weak(text.trim()).map_err(|_| {
        format!(
            "--start-at {}: not a time; give one in RFC 3339, UTC, e.g. --start-at {}",
            text.trim(),
            humantime::format_rfc3339_seconds(
                std::time::SystemTime::now() + std::time::Duration::from_secs(60)
            )
        )
    })
}

/// `--reads-per-transaction`: a count of 1 or more, or `all` (None: every
/// read of a pass in one transaction).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadsPerTransaction(pub Option<u64>);

/// Parses `--reads-per-transaction`.
pub fn reads_per_transaction(text: &str) -> std::result::Result<ReadsPerTransaction, String> {
    if text.trim().eq_ignore_ascii_case("all") {
        return Ok(ReadsPerTransaction(None));
    }
    counted(text, u64::from(u32::MAX))
        .map(|n| ReadsPerTransaction(Some(n as u64)))
        .ok_or_else(|| {
            format!(
                "--reads-per-transaction {}: give a count of 1 or more (1: a transaction per read, as a server answering one request per blob) or all",
                text.trim()
            )
        })
}

/// A worker-thread count (`--threads`, alone or in a list).
pub fn thread_count(text: &str) -> std::result::Result<usize, String> {
    counted(text, MAX_THREADS).ok_or_else(|| {
        format!(
            "--threads {}: thread counts are numbers from 1 to {MAX_THREADS}, e.g. --threads 1,2,4,8",
            text.trim()
        )
    })
}

/// A whole number from 1 to `max` (kvtest suffixes allowed), or None.
fn counted(text: &str, max: u64) -> Option<usize> {
    parse_number(text)
        .ok()
        .filter(|n| (1..=max).contains(n))
        .and_then(|n| usize::try_from(n).ok())
}

/// SQLite's cache_size as `run --cache-size` takes it: pages, or negative
/// for KiB, within the C int SQLite keeps it in.
pub fn cache_size(text: &str) -> Result<i64> {
    crate::target::parse_cache_size("--cache-size", text)
}

/// A journal mode SQLite knows (any case), lowercased, as `--jmode` takes it.
pub fn journal_mode(text: &str) -> Result<String> {
    crate::target::one_of("--jmode", text, crate::target::JOURNAL_MODES)
}

/// `--precision`: "3%" or "3" -> 0.03, from 0.5% to 50%.
pub fn precision(text: &str) -> std::result::Result<f64, String> {
    let t = text.trim();
    let value = t.strip_suffix('%').unwrap_or(t).trim().parse::<f64>();
    match value {
        Ok(v) if (0.5..=50.0).contains(&v) => Ok(v / 100.0),
        _ => Err(format!(
            "--precision {t}: give the interval's half-width in percent of the figure, from 0.5% to 50%, e.g. 3%"
        )),
    }
}

/// An occupancy to fill a volume to: "50%" or "0.5" -> 0.5; from 1% to 98%.
pub fn occupancy(text: &str) -> Result<f64> {
    let value = match text.trim().strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|v| v / 100.0),
        None => text.trim().parse::<f64>(),
    };
    match value {
        Ok(v) if (0.01..=0.98).contains(&v) => Ok(v),
        _ => Err(Error::usage(format!(
            "--fill {}: give an occupancy between 1% and 98%, e.g. 50% or 0.9",
            text.trim()
        ))),
    }
}

/// A series' blob sizes: "256KiB" (constant) or "256KiB-1MiB" (uniform).
pub fn size_range(text: &str) -> Result<SizeRange> {
    let text = text.trim();
    let bad = |why: &str| {
        Error::usage(format!(
            "--sizes {text}: {why}; give a size (256KiB) or a range (256KiB-1MiB)"
        ))
    };
    let (min, max) = match text.split_once('-') {
        Some((a, b)) => (parse_number(a)?, parse_number(b)?),
        None => {
            let v = parse_number(text)?;
            (v, v)
        }
    };
    if min == 0 || max < min {
        return Err(bad("sizes must be positive and a range low-high"));
    }
    if max > MAX_BLOB_SIZE {
        return Err(bad("larger than a blob can be"));
    }
    Ok(SizeRange { min, max })
}

/// The largest storage age: a thousand times the volume's content
/// rewritten is already far past any store's life.
pub const MAX_AGE: f64 = 1000.0;

/// One storage age (bytes overwritten / bytes stored), above 0 and at most
/// [`MAX_AGE`]. That a list ascends is the command's to check.
pub fn storage_age(text: &str) -> Result<f64> {
    let a = text.trim();
    let why = match a.parse::<f64>() {
        Ok(v) if v > 0.0 && v <= MAX_AGE => return Ok(v),
        Ok(v) if v > MAX_AGE => format!("too large (at most {MAX_AGE})"),
        Ok(v) if v.is_nan() => "not a number".to_string(),
        Ok(_) => "a storage age is above 0".to_string(),
        Err(_) => "not a number".to_string(),
    };
    Err(Error::usage(format!(
        "--ages {a}: {why}; give storage ages (bytes overwritten / bytes stored) from above 0 to {MAX_AGE}, e.g. 1,2,4,8"
    )))
}

/// `suite http --extra NAME=URLFILE`: another server over the same blobs,
/// by name, and the file listing its URLs (read by the command).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExtraServerArg {
    /// The name its column gets.
    pub name: String,
    /// The file of its URLs, one per line.
    pub file: std::path::PathBuf,
}

/// Splits `NAME=URLFILE`.
pub fn extra_server(text: &str) -> Result<ExtraServerArg> {
    match text.split_once('=') {
        Some((name, file)) => Ok(ExtraServerArg {
            name: name.to_string(),
            file: file.into(),
        }),
        None => Err(Error::usage(format!(
            "--extra {text}: expected NAME=URLFILE, e.g. --extra nginx=nginx-urls.txt"
        ))),
    }
}

/// The order a load visits its URLs in (`load --order`, `suite http --order`).
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum UrlOrder {
    /// a random URL per request (siege -i)
    Random,
    /// the list in its order, round and round, shared by all connections (siege -f)
    Sequential,
}

impl From<UrlOrder> for crate::result::load::Order {
    fn from(order: UrlOrder) -> Self {
        match order {
            UrlOrder::Random => crate::result::load::Order::Random,
            UrlOrder::Sequential => crate::result::load::Order::Sequential,
        }
    }
}

/// The SQLite table(s) `suite http` serves.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum TableChoice {
    /// the blog's and kvtest's tables side by side
    Both,
    /// the blog's files(id, data), each blob found by its text id
    Blog,
    /// kvtest's kv(k, v), each blob found by its rowid
    Kv,
}

/// The order `suite lob` writes and reads its blobs in.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum LobOrderChoice {
    /// ids 1, 2, 3 .. written and read back in that order
    Sequential,
    /// written in a random permutation of the ids, read back in another
    Random,
    /// every size measured in both orders, side by side
    Both,
}

/// `suite lob --logging`: whether the writes are durable.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum Logging {
    /// the paper's "logging disabled": no journal, no fsync, no synchronous commit
    Off,
    /// durable writes: journal, fsync, synchronous commit
    On,
}

/// `advise --durability`: what a write must survive.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum DurabilityChoice {
    /// a commit is on disk when it returns
    Power,
    /// survives power loss without corruption, may lose the last writes
    Crash,
    /// data you can rebuild
    None,
}

impl From<DurabilityChoice> for crate::result::advise::Durability {
    fn from(choice: DurabilityChoice) -> Self {
        match choice {
            DurabilityChoice::Power => crate::result::advise::Durability::Power,
            DurabilityChoice::Crash => crate::result::advise::Durability::Crash,
            DurabilityChoice::None => crate::result::advise::Durability::None,
        }
    }
}

/// `init --dist`: the shape of the blob sizes.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum DistChoice {
    /// size +/- variance, uniformly
    Uniform,
    /// every blob exactly size bytes
    Fixed,
    /// log-normal around the median size, shape --sigma
    Lognormal,
}

/// `run --workload`: one of YCSB's core workloads.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum YcsbWorkload {
    /// read=50,update=50
    YcsbA,
    /// read=95,update=5
    YcsbB,
    /// read only
    YcsbC,
    /// read=95,insert=5, latest keys
    YcsbD,
    /// scan=95,insert=5
    YcsbE,
    /// read=50,rmw=50
    YcsbF,
}

/// A choice's name as its option takes it (`ycsb-a`, `lognormal`): what
/// results record and messages quote.
pub fn choice_name(choice: impl ValueEnum) -> String {
    choice
        .to_possible_value()
        .map(|v| v.get_name().to_owned())
        .unwrap_or_default()
}

/// A URL for an option that names one kind of server: its scheme must be
/// that server's. Any other text was read as a target of another kind
/// (`--pg notaurl`, a SQLite file named `notaurl?mode=bytea...`) and
/// measured and labelled as the server it was not.
fn server_url(
    option: &str,
    text: &str,
    schemes: &[&str],
    what: &str,
    example: &str,
) -> Result<String> {
    let scheme = text.split_once("://").map(|(s, _)| s);
    if scheme.is_some_and(|s| schemes.contains(&s)) {
        return Ok(text.to_string());
    }
    Err(Error::usage(format!(
        "{option} {}: not {what} URL; give {example}",
        crate::target::redact(text)
    )))
}

/// `--pg`: a PostgreSQL URL (postgres:// or postgresql://).
pub fn postgres_url(text: &str) -> Result<String> {
    server_url(
        "--pg",
        text,
        &["postgres", "postgresql"],
        "a PostgreSQL",
        "postgres://USER@HOST:PORT/DB",
    )
}

/// `--mysql`: a MariaDB or MySQL URL (mysql:// or mariadb://).
pub fn mysql_url(text: &str) -> Result<String> {
    server_url(
        "--mysql",
        text,
        &["mysql", "mariadb"],
        "a MariaDB/MySQL",
        "mysql://USER:PASS@HOST:PORT/DB",
    )
}

/// `--s3`: an S3 URL (s3://).
pub fn s3_url(text: &str) -> Result<String> {
    server_url(
        "--s3",
        text,
        &["s3"],
        "an S3",
        "s3://BUCKET/PREFIX?endpoint=http://HOST:PORT",
    )
}

/// `text` with the password of every URL in it (`user:PASSWORD@`)
/// replaced by `***`: clap's message for a refused value repeats the
/// value as given, and a URL given to the wrong option may carry one.
pub fn redact_passwords(text: &str) -> String {
    text.split(' ')
        .map(|word| {
            let inner = word.trim_matches(|c| c == '\'' || c == '"');
            if inner.contains("://") {
                word.replace(inner, &crate::target::redact(inner))
            } else {
                word.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {

    #[test]
    fn passwords_in_urls_are_hidden_wherever_they_stand() {
        let said = "invalid value 'mysql://me:secret@h/db' for '--pg <URL>': --pg s3://a:b@h/x";
        let shown = redact_passwords(said);
        assert_eq!(
            shown,
            "invalid value 'mysql://me:***@h/db' for '--pg <URL>': --pg s3://a:***@h/x"
        );
    }

    use super::*;

    #[test]
    fn lists_parse_and_bad_values_name_themselves() {
        assert_eq!(occupancy("50%").unwrap(), 0.5);
        assert_eq!(occupancy("0.9").unwrap(), 0.9);
        assert!(
            occupancy("100%")
                .unwrap_err()
                .to_string()
                .contains("--fill 100%")
        );
        assert_eq!(
            size_range("256KiB-1MiB").unwrap(),
            SizeRange {
                min: 256 << 10,
                max: 1 << 20
            }
        );
        assert!(size_range("1MiB-256KiB").is_err());
        assert_eq!(storage_age("2").unwrap(), 2.0);
        assert!(
            storage_age("0")
                .unwrap_err()
                .to_string()
                .contains("above 0")
        );
        for (text, why) in [
            ("1000000", "too large (at most 1000)"),
            ("inf", "too large (at most 1000)"),
            ("x", "not a number"),
            ("-1", "above 0"),
            ("NaN", "not a number"),
        ] {
            let e = storage_age(text).unwrap_err().to_string();
            assert!(
                e.contains(why) && e.contains(&format!("--ages {text}")),
                "{text}: {e}"
            );
        }
    }

    /// One parser per count concept: the limits and the option named.
    #[test]
    fn counts_have_one_range_each() {
        assert_eq!(connection_count("100000"), Ok(100_000));
        assert!(connection_count("0").unwrap_err().starts_with("-c 0:"));
        assert!(connection_count("100001").is_err());
        assert_eq!(thread_count("1024"), Ok(1024));
        assert!(thread_count("0").unwrap_err().starts_with("--threads 0:"));
        assert!(thread_count("x").is_err());
    }
}
