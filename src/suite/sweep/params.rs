//! Sweep parameters: connection settings given as `NAME=v1,v2,...`, checked
//! before anything runs, and the cartesian product of their values.

use crate::error::{Error, Result};
use crate::target::{JOURNAL_MODES, LOCKING_MODES, SYNCHRONOUS, parse_page_size};

// The types a result holds live in the result contract; re-exported here
// because the sweep speaks of them everywhere.
pub use crate::result::sweep::{Case, Condition, Param, bracketed, power_safe, product};

// The parameters with a meaning beyond "PRAGMA name=value", in the order
// the seed article writes its bracketed cases.
/// How the connection is opened: nomutex or fullmutex.
pub const OPEN_MODE: &str = "open_mode";
/// How each transaction begins: BEGIN DEFERRED, IMMEDIATE or EXCLUSIVE.
pub const TRANSACTION: &str = "transaction";
const OPEN_MODES: &[&str] = &["nomutex", "fullmutex"];
const TRANSACTIONS: &[&str] = &["deferred", "immediate", "exclusive"];
/// Settings applied before the schema exists (in this order), then the rest.
pub const APPLY_ORDER: &[&str] = &[
    "page_size",
    "cache_size",
    "locking_mode",
    "synchronous",
    "journal_mode",
    "mmap_size",
    "journal_size_limit",
];

/// The seed article's 1152-case product: open mode x cache size x page size
/// x locking mode x transaction mode x journal size limit x synchronous x
/// journal mode.
pub fn seed_params() -> Vec<Param> {
    let p = |name: &str, values: &[&str]| Param {
        name: name.into(),
        values: values.iter().map(|v| v.to_string()).collect(),
    };
    vec![
        p(OPEN_MODE, &["nomutex", "fullmutex"]),
        p("cache_size", &["1000", "2000", "4000", "8000"]),
        p("page_size", &["1024", "2048", "4096", "8192"]),
        p("locking_mode", &["normal", "exclusive"]),
        p(TRANSACTION, &["immediate", "exclusive"]),
        p("journal_size_limit", &["-1"]),
        p("synchronous", &["full", "normal", "off"]),
        p("journal_mode", &["wal", "truncate", "memory"]),
    ]
}

/// Parses `NAME=v1,v2,...`. Known settings have their values checked here;
/// any other name must be a PRAGMA this SQLite knows (`known_pragmas`) and
/// its values plain words or numbers.
pub fn parse_param(text: &str, known_pragmas: &[String]) -> Result<Param> {
    let Some((name, values)) = text.split_once('=') else {
        return Err(Error::usage(format!(
            "--param {text}: expected NAME=v1,v2,... e.g. --param page_size=4096,8192"
        )));
    };
    let name = name.trim().to_ascii_lowercase();
    let values: Vec<String> = values
        .split(',')
        .map(|v| v.trim().to_ascii_lowercase())
        .filter(|v| !v.is_empty())
        .collect();
    if values.is_empty() {
        return Err(Error::usage(format!(
            "--param {text}: no values; give them comma-separated, e.g. {name}=1,2"
        )));
    }
    for v in &values {
        check_value(&name, v, known_pragmas)?;
    }
    let mut unique = values.clone();
    unique.sort();
    unique.dedup();
    if unique.len() != values.len() {
        return Err(Error::usage(format!("--param {text}: a value is repeated")));
    }
    Ok(Param { name, values })
}

fn check_value(name: &str, v: &str, known_pragmas: &[String]) -> Result<()> {
    let one_of = |allowed: &[&str]| {
        if allowed.contains(&v) {
            Ok(())
        } else {
            Err(Error::usage(format!(
                "--param {name}={v}: unknown value; use one of {}",
                allowed.join(", ")
            )))
        }
    };
    let integer = || {
        v.parse::<i64>().map(|_| ()).map_err(|_| {
            Error::usage(format!(
                "--param {name}={v}: not an integer, e.g. {name}=2000"
            ))
        })
    };
    match name {
        OPEN_MODE => one_of(OPEN_MODES),
        TRANSACTION => one_of(TRANSACTIONS),
        "journal_mode" => one_of(JOURNAL_MODES),
        "synchronous" => one_of(SYNCHRONOUS),
        "locking_mode" => one_of(LOCKING_MODES),
        "page_size" => parse_page_size(v).map(|_| ()),
        "cache_size" | "mmap_size" | "journal_size_limit" => integer(),
        other => {
            if !known_pragmas.iter().any(|p| p == other) {
                return Err(Error::usage(format!(
                    "--param {other}: not a setting blobbench knows nor a PRAGMA of SQLite {}; \
known settings: {OPEN_MODE}, {TRANSACTION}, {}",
                    rusqlite::version(),
                    APPLY_ORDER.join(", ")
                )));
            }
            if v.is_empty()
                || !v
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            {
                return Err(Error::usage(format!(
                    "--param {other}={v}: values are words or numbers"
                )));
            }
            Ok(())
        }
    }
}

/// The PRAGMA names this SQLite build knows.
pub fn known_pragmas() -> Vec<String> {
    let Ok(conn) = rusqlite::Connection::open_in_memory() else {
        return Vec::new();
    };
    let Ok(mut stmt) = conn.prepare("SELECT name FROM pragma_pragma_list") else {
        return Vec::new();
    };
    stmt.query_map([], |r| r.get::<_, String>(0))
        .map(|rows| rows.flatten().collect())
        .unwrap_or_default()
}

/// Parses and checks a `--filter` or `--exclude` condition (named by
/// `option`) against the swept parameters.
pub fn parse_condition(option: &str, text: &str, params: &[Param]) -> Result<Condition> {
    let Some((name, values)) = text.split_once('=') else {
        return Err(Error::usage(format!(
            "{option} {text}: expected NAME=v1,v2 e.g. {option} synchronous=off"
        )));
    };
    let name = name.trim().to_ascii_lowercase();
    let Some(param) = params.iter().find(|p| p.name == name) else {
        return Err(Error::usage(format!(
            "{option} {text}: {name} is not swept; swept: {}",
            params
                .iter()
                .map(|p| p.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    };
    let values: Vec<String> = values
        .split(',')
        .map(|v| v.trim().to_ascii_lowercase())
        .filter(|v| !v.is_empty())
        .collect();
    for v in &values {
        if !param.values.contains(v) {
            return Err(Error::usage(format!(
                "{option} {text}: {name} is swept over {}, not {v}",
                param.values.join(", ")
            )));
        }
    }
    if values.is_empty() {
        return Err(Error::usage(format!("{option} {text}: no values")));
    }
    Ok(Condition { name, values })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seed_product_has_1152_cases() {
        let cases = product(&seed_params());
        assert_eq!(cases.len(), 1152);
        assert_eq!(
            bracketed(&cases[0], &seed_params()),
            "[NOMUTEX, 1000, 1024, NORMAL, IMMEDIATE, FULL, WAL]"
        );
        assert_eq!(cases.iter().filter(|c| power_safe(c)).count(), 1152 / 9 * 4);
    }

    #[test]
    fn params_are_checked() {
        let pragmas = known_pragmas();
        assert!(pragmas.iter().any(|p| p == "temp_store"));
        assert!(parse_param("temp_store=memory,file", &pragmas).is_ok());
        assert!(parse_param("page_size=1000", &pragmas).is_err());
        assert!(parse_param("journal_mode=fast", &pragmas).is_err());
        assert!(parse_param("no_such_pragma=1", &pragmas).is_err());
        assert!(parse_param("temp_store=1;drop", &pragmas).is_err());
        assert!(parse_param("cache_size", &pragmas).is_err());
        let params = vec![parse_param("synchronous=off,full", &pragmas).unwrap()];
        assert!(parse_condition("--exclude", "synchronous=off", &params).is_ok());
        assert!(parse_condition("--exclude", "synchronous=normal", &params).is_err());
        assert!(parse_condition("--exclude", "page_size=4096", &params).is_err());
    }
}
