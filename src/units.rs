//! Numbers as kvtest writes them: `10k`, `2KiB`, `0x1000`, `1G`.
//!
//! kvtest multiplies K/M/G (and KB/MB/GB) by powers of 1000 and KiB/MiB/GiB by
//! powers of 1024, matching suffixes case-insensitively. We follow it exactly
//! so a kvtest command line means the same thing here, but unlike kvtest we
//! reject anything we cannot read instead of silently ignoring it.

use crate::error::Error;

const SUFFIXES: &[(&str, u64)] = &[
    ("KiB", 1 << 10),
    ("MiB", 1 << 20),
    ("GiB", 1 << 30),
    ("TiB", 1 << 40),
    ("KB", 1_000),
    ("MB", 1_000_000),
    ("GB", 1_000_000_000),
    ("TB", 1_000_000_000_000),
    ("K", 1_000),
    ("M", 1_000_000),
    ("G", 1_000_000_000),
    ("T", 1_000_000_000_000),
    ("B", 1),
];

/// Parses a non-negative integer with an optional kvtest-style suffix.
pub fn parse_number(text: &str) -> Result<u64, Error> {
    let bad = || {
        Error::usage(format!(
            "invalid number \"{text}\": use digits or 0x-hex with an optional K, M, G (x1000) or KiB, MiB, GiB (x1024) suffix, e.g. 10k"
        ))
    };
    let trimmed = text.trim();
    let trimmed = trimmed.strip_prefix('+').unwrap_or(trimmed);
    let (digits, suffix, radix) = if let Some(hex) = trimmed
        .strip_prefix("0x")
        .or_else(|| trimmed.strip_prefix("0X"))
    {
        let end = hex
            .find(|c: char| !c.is_ascii_hexdigit())
            .unwrap_or(hex.len());
        (&hex[..end], &hex[end..], 16)
    } else {
        let end = trimmed
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(trimmed.len());
        (&trimmed[..end], &trimmed[end..], 10)
    };
    if digits.is_empty() {
        return Err(bad());
    }
    let value = u64::from_str_radix(digits, radix).map_err(|_| bad())?;
    let multiplier = if suffix.is_empty() {
        1
    } else {
        SUFFIXES
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(suffix))
            .map(|&(_, m)| m)
            .ok_or_else(bad)?
    };
    value
        .checked_mul(multiplier)
        .ok_or_else(|| Error::usage(format!("number \"{text}\" is too large")))
}

/// clap value parser for counts and sizes.
pub fn number_arg(text: &str) -> Result<u64, String> {
    parse_number(text).map_err(|e| e.to_string())
}

/// Formats a byte count for people: 1.5 MB, 20.0 kB (decimal, as kvtest's MB/s).
pub fn human_bytes(bytes: u64) -> String {
    let b = bytes as f64;
    if b >= 1e9 {
        format!("{:.2} GB", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.1} MB", b / 1e6)
    } else if b >= 1e3 {
        format!("{:.1} kB", b / 1e3)
    } else {
        format!("{bytes} B")
    }
}

/// Formats nanoseconds with a unit that keeps 3-4 significant digits.
pub fn human_duration_ns(ns: f64) -> String {
    if ns >= 1e9 {
        format!("{:.3} s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.3} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.2} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kvtest_suffixes() {
        assert_eq!(parse_number("100k").unwrap(), 100_000);
        assert_eq!(parse_number("10K").unwrap(), 10_000);
        assert_eq!(parse_number("2KiB").unwrap(), 2048);
        assert_eq!(parse_number("1mib").unwrap(), 1 << 20);
        assert_eq!(parse_number("1G").unwrap(), 1_000_000_000);
        assert_eq!(parse_number("3MB").unwrap(), 3_000_000);
        assert_eq!(parse_number("0x1000").unwrap(), 4096);
        assert_eq!(parse_number("0x10k").unwrap(), 16_000);
        assert_eq!(parse_number("42").unwrap(), 42);
    }

    #[test]
    fn rejects_what_kvtest_would_misread() {
        for bad in ["10q", "", "k", "-5", "1.5k", "0x", "10 kb extra"] {
            let err = parse_number(bad).unwrap_err().to_string();
            assert!(err.contains("invalid number"), "{bad}: {err}");
        }
        assert!(parse_number("99999999999999G").is_err());
    }
}
