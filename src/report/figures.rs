//! Reading figures out of results: shared by the views and by compare,
//! so neither imports the other for them.

use serde_json::Value;

use crate::result::Tables;
use crate::result::load::LevelResult;

/// The string at `key` of a JSON object, empty when absent.
pub fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// The HTTP systems of a result, each with its levels: the http suite's
/// list, or load's single server as "server" (none for other kinds).
pub fn http_systems(tables: &Tables) -> Vec<(&str, &[LevelResult])> {
    match tables {
        Tables::Http(t) => t
            .http
            .iter()
            .map(|s| (s.system.as_str(), s.levels.as_slice()))
            .collect(),
        Tables::Load(t) => vec![("server", t.levels.as_slice())],
        _ => Vec::new(),
    }
}

/// A run's name without its " (round N)" suffix: the case it measures.
pub fn strip_round(name: &str) -> &str {
    match name.rfind(" (round ") {
        Some(i) if name.ends_with(')') => &name[..i],
        _ => name,
    }
}
