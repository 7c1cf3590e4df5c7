//! Target strings (`sqlite:PATH?journal_mode=wal`, `dir:PATH`, a bare `x.db`)
//! parsed once into typed configurations.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{Error, Result};
use crate::units::parse_number;

/// SQLite connection settings a target string may carry. `None` leaves the
/// database's (or the run's) own setting alone.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SqliteSettings {
    pub page_size: Option<u32>,
    pub journal_mode: Option<String>,
    pub synchronous: Option<String>,
    pub cache_size: Option<i64>,
    pub mmap_size: Option<u64>,
    pub locking_mode: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Target {
    /// Blobs inside the database, table `kv(k INTEGER PRIMARY KEY, v BLOB)` as kvtest.
    Sqlite {
        path: PathBuf,
        settings: SqliteSettings,
    },
    /// The database holds each blob's file name; the content is a file beside it.
    SqliteExt {
        path: PathBuf,
        settings: SqliteSettings,
    },
    /// One file per blob in one folder, named `000001` as kvtest.
    Dir { path: PathBuf },
    /// One file per blob in `00/00/01` folders as kvtest's `--tree`.
    Tree { path: PathBuf },
}

pub const JOURNAL_MODES: &[&str] = &["delete", "truncate", "persist", "memory", "wal", "off"];
pub const SYNCHRONOUS: &[&str] = &["off", "normal", "full", "extra"];
pub const LOCKING_MODES: &[&str] = &["normal", "exclusive"];

impl Target {
    /// Parses a target string. A bare path is classified the way kvtest does:
    /// a directory holding a `00` folder is a tree, any other directory a dir,
    /// anything else (or a name ending in .db/.sqlite/.sqlite3) a database.
    pub fn parse(text: &str) -> Result<Target> {
        if text.is_empty() {
            return Err(Error::usage(
                "empty target: name a database (x.db, sqlite:PATH) or a folder (dir:PATH, tree:PATH)",
            ));
        }
        if let Some((scheme, rest)) = text.split_once(':') {
            let known = ["sqlite", "sqlite-ext", "dir", "tree"];
            if known.contains(&scheme) {
                let (path, query) = match rest.split_once('?') {
                    Some((p, q)) => (p, Some(q)),
                    None => (rest, None),
                };
                if path.is_empty() {
                    return Err(Error::usage(format!(
                        "target \"{text}\" has no path after \"{scheme}:\""
                    )));
                }
                let path = PathBuf::from(path);
                return match scheme {
                    "sqlite" | "sqlite-ext" => {
                        let settings = parse_settings(text, query)?;
                        Ok(if scheme == "sqlite" {
                            Target::Sqlite { path, settings }
                        } else {
                            Target::SqliteExt { path, settings }
                        })
                    }
                    _ => {
                        if query.is_some() {
                            return Err(Error::usage(format!(
                                "target \"{text}\": {scheme}: targets take no ?settings"
                            )));
                        }
                        Ok(if scheme == "dir" {
                            Target::Dir { path }
                        } else {
                            Target::Tree { path }
                        })
                    }
                };
            }
            if ["postgres", "postgresql", "mysql", "mariadb", "s3"].contains(&scheme) {
                return Err(Error::usage(format!(
                    "target \"{text}\": {scheme} targets are not supported yet; use sqlite:, sqlite-ext:, dir: or tree:"
                )));
            }
        }
        Ok(classify_bare_path(Path::new(text)))
    }

    pub fn path(&self) -> &Path {
        match self {
            Target::Sqlite { path, .. }
            | Target::SqliteExt { path, .. }
            | Target::Dir { path }
            | Target::Tree { path } => path,
        }
    }

    pub fn kind_name(&self) -> &'static str {
        match self {
            Target::Sqlite { .. } => "sqlite",
            Target::SqliteExt { .. } => "sqlite-ext",
            Target::Dir { .. } => "dir",
            Target::Tree { .. } => "tree",
        }
    }

    pub fn is_files(&self) -> bool {
        matches!(self, Target::Dir { .. } | Target::Tree { .. })
    }

    pub fn sqlite_settings_mut(&mut self) -> Option<&mut SqliteSettings> {
        match self {
            Target::Sqlite { settings, .. } | Target::SqliteExt { settings, .. } => Some(settings),
            _ => None,
        }
    }

    /// The same target without a journal mode to set: for the untimed,
    /// read-only opens around a run (sizes, read-back, space), which must not
    /// try to switch a database whose mode the run changed (journal_mode=off
    /// and memory do not persist past the connection).
    pub fn for_inspection(&self) -> Target {
        let mut t = self.clone();
        if let Some(s) = t.sqlite_settings_mut() {
            s.journal_mode = None;
        }
        t
    }

    pub fn sqlite_settings(&self) -> Option<&SqliteSettings> {
        match self {
            Target::Sqlite { settings, .. } | Target::SqliteExt { settings, .. } => Some(settings),
            _ => None,
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.kind_name(), self.path().display())
    }
}

fn classify_bare_path(path: &Path) -> Target {
    if path.is_dir() {
        let path = path.to_path_buf();
        return if path.join("00").is_dir() {
            Target::Tree { path }
        } else {
            Target::Dir { path }
        };
    }
    Target::Sqlite {
        path: path.to_path_buf(),
        settings: SqliteSettings::default(),
    }
}

fn parse_settings(target: &str, query: Option<&str>) -> Result<SqliteSettings> {
    let mut settings = SqliteSettings::default();
    let Some(query) = query else {
        return Ok(settings);
    };
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (name, value) = pair.split_once('=').ok_or_else(|| {
            Error::usage(format!(
                "target \"{target}\": setting \"{pair}\" needs a value, e.g. journal_mode=wal"
            ))
        })?;
        let value_lc = value.to_ascii_lowercase();
        match name {
            "page_size" => settings.page_size = Some(parse_page_size(value)?),
            "journal_mode" => {
                settings.journal_mode = Some(one_of("journal_mode", &value_lc, JOURNAL_MODES)?)
            }
            "synchronous" => settings.synchronous = Some(parse_synchronous(&value_lc)?),
            "locking_mode" => {
                settings.locking_mode = Some(one_of("locking_mode", &value_lc, LOCKING_MODES)?)
            }
            "cache_size" => settings.cache_size = Some(parse_cache_size(value)?),
            "mmap_size" => settings.mmap_size = Some(parse_number(value)?),
            other => {
                return Err(Error::usage(format!(
                    "target \"{target}\": unknown setting \"{other}\"; known: page_size, journal_mode, synchronous, cache_size, mmap_size, locking_mode"
                )));
            }
        }
    }
    Ok(settings)
}

pub fn parse_page_size(value: &str) -> Result<u32> {
    let n = parse_number(value)?;
    if !(512..=65536).contains(&n) || !n.is_power_of_two() {
        return Err(Error::usage(format!(
            "page size \"{value}\" is not a power of two between 512 and 65536"
        )));
    }
    Ok(n as u32)
}

/// SQLite's cache_size: positive = pages, negative = KiB. Both accepted.
pub fn parse_cache_size(value: &str) -> Result<i64> {
    match value.strip_prefix('-') {
        Some(rest) => Ok(-(parse_number(rest)? as i64)),
        None => Ok(parse_number(value)? as i64),
    }
}

pub fn parse_synchronous(value: &str) -> Result<String> {
    let v = value.to_ascii_lowercase();
    let named = match v.as_str() {
        "0" => "off",
        "1" => "normal",
        "2" => "full",
        "3" => "extra",
        other => other,
    };
    one_of("synchronous", named, SYNCHRONOUS)
}

pub fn one_of(setting: &str, value: &str, allowed: &[&str]) -> Result<String> {
    let v = value.to_ascii_lowercase();
    if allowed.contains(&v.as_str()) {
        Ok(v)
    } else {
        Err(Error::usage(format!(
            "unknown {setting} \"{value}\"; use one of: {}",
            allowed.join(", ")
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_schemes_and_settings() {
        let t = Target::parse(
            "sqlite:/tmp/a.db?journal_mode=WAL&synchronous=1&page_size=8KiB&mmap_size=1G",
        )
        .unwrap();
        let Target::Sqlite { path, settings } = t else {
            panic!()
        };
        assert_eq!(path, PathBuf::from("/tmp/a.db"));
        assert_eq!(settings.journal_mode.as_deref(), Some("wal"));
        assert_eq!(settings.synchronous.as_deref(), Some("normal"));
        assert_eq!(settings.page_size, Some(8192));
        assert_eq!(settings.mmap_size, Some(1_000_000_000));
        assert!(matches!(
            Target::parse("dir:/x").unwrap(),
            Target::Dir { .. }
        ));
        assert!(matches!(
            Target::parse("tree:/x").unwrap(),
            Target::Tree { .. }
        ));
        assert!(matches!(
            Target::parse("sqlite-ext:/x.db").unwrap(),
            Target::SqliteExt { .. }
        ));
        assert!(matches!(
            Target::parse("nothing-here.db").unwrap(),
            Target::Sqlite { .. }
        ));
    }

    #[test]
    fn rejects_bad_settings() {
        for bad in [
            "sqlite:a.db?journal_mode=fast",
            "sqlite:a.db?page_size=1000",
            "sqlite:a.db?colour=blue",
            "sqlite:a.db?synchronous",
            "dir:x?a=b",
            "sqlite:",
            "postgres://u@h/db",
        ] {
            assert!(Target::parse(bad).is_err(), "{bad}");
        }
        assert!(Target::parse("sqlite:a.db?page_size=8192").is_ok());
        assert!(Target::parse("sqlite:a.db?cache_size=-2000").is_ok());
    }

    #[test]
    fn bare_directory_is_tree_when_it_has_00() {
        let tmp = tempfile::tempdir().unwrap();
        assert!(matches!(
            Target::parse(tmp.path().to_str().unwrap()).unwrap(),
            Target::Dir { .. }
        ));
        std::fs::create_dir(tmp.path().join("00")).unwrap();
        assert!(matches!(
            Target::parse(tmp.path().to_str().unwrap()).unwrap(),
            Target::Tree { .. }
        ));
    }
}
