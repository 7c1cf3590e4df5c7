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

/// Why text is not a number [`parse_number`] takes.
enum NumberError {
    /// Not digits (or 0x-hex) with a known suffix.
    Invalid,
    /// A number, but past what 64 bits hold.
    TooLarge,
}

impl NumberError {
    /// The one-line usage error for `text`.
    fn into_error(self, text: &str) -> Error {
        match self {
            NumberError::Invalid => Error::usage(format!(
                "invalid number \"{text}\": use digits or 0x-hex with an optional K, M, G (x1000) or KiB, MiB, GiB (x1024) suffix, e.g. 10k"
            )),
            NumberError::TooLarge => Error::usage(format!(
                "number \"{}\" is too large (at most {})",
                text.trim(),
                u64::MAX
            )),
        }
    }
}

/// Parses a non-negative integer with an optional kvtest-style suffix.
pub fn parse_number(text: &str) -> Result<u64, Error> {
    number(text).map_err(|e| e.into_error(text))
}

/// [`parse_number`]'s reading, with why it failed as a value.
fn number(text: &str) -> Result<u64, NumberError> {
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
        return Err(NumberError::Invalid);
    }
    // Digits alone fail only by overflowing: a number, but too large.
    let value = u64::from_str_radix(digits, radix).map_err(|_| NumberError::TooLarge)?;
    let multiplier = if suffix.is_empty() {
        1
    } else {
        SUFFIXES
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(suffix))
            .map(|&(_, m)| m)
            .ok_or(NumberError::Invalid)?
    };
    value.checked_mul(multiplier).ok_or(NumberError::TooLarge)
}

/// A plain whole number (digits only) from 0 to `max`; the error says
/// which is wrong: not a whole number, or too large (with the limit).
pub fn whole_number(text: &str, max: u64) -> Result<u64, String> {
    let digits = text.trim();
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("\"{digits}\" is not a whole number"));
    }
    match digits.parse::<u64>() {
        Ok(n) if n <= max => Ok(n),
        _ => Err(format!("\"{digits}\" is too large (at most {max})")),
    }
}

/// clap value parser for counts and sizes.
pub fn number_arg(text: &str) -> Result<u64, String> {
    parse_number(text).map_err(|e| e.to_string())
}

/// The largest key (and so the largest count of blobs) any store can hold:
/// SQLite, PostgreSQL and MariaDB keep keys in signed 64-bit columns.
pub const MAX_KEY: u64 = i64::MAX as u64;

/// The largest blob blobbench makes: SQLite's API passes a blob's length as
/// a C int, so no store can take more than 2^31 - 1 bytes from us in one
/// value (a store's own limit may be lower; it is checked before writing).
pub const MAX_BLOB_SIZE: u64 = i32::MAX as u64;

/// The most content an option may ask for in total (1 PiB): more than any
/// disk holds, so the free-space check refuses it with the real numbers,
/// and far enough from 2^64 that sums and products of totals cannot wrap.
pub const MAX_TOTAL: u64 = 1 << 50;

/// The most rounds or repetitions a command accepts: more than anyone can
/// wait for, and small enough that products of rounds, cases and keys stay
/// far from overflowing.
pub const MAX_ROUNDS: u64 = 1_000_000;

/// A clap value parser for a whole number from `min` to `max` (kvtest
/// suffixes allowed), converted to `T`. clap names the option and the value
/// in its error; the message adds the allowed range, so a value the code
/// cannot honour is refused before anything runs instead of being truncated.
pub fn number_in<T>(
    min: u64,
    max: u64,
) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync + 'static
where
    T: TryFrom<u64>,
{
    move |text| {
        let out_of_range = || format!("{} is out of range: use {min} to {max}", text.trim());
        let n = match number(text) {
            Ok(n) => n,
            // Past 64 bits is past `max` too: the range is the news.
            Err(NumberError::TooLarge) => return Err(out_of_range()),
            Err(e @ NumberError::Invalid) => return Err(e.into_error(text).to_string()),
        };
        if n < min || n > max {
            return Err(out_of_range());
        }
        T::try_from(n).map_err(|_| out_of_range())
    }
}

/// Parses a signed whole number with kvtest suffixes (`-2000`, `-2KiB`)
/// within `min..=max`.
pub fn parse_signed(text: &str, min: i64, max: i64) -> Result<i64, Error> {
    let trimmed = text.trim();
    let (negative, digits) = match trimmed.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, trimmed),
    };
    let magnitude = i128::from(parse_number(digits)?);
    let value = if negative { -magnitude } else { magnitude };
    if value < i128::from(min) || value > i128::from(max) {
        return Err(Error::usage(format!(
            "number \"{trimmed}\" is out of range: use {min} to {max}"
        )));
    }
    Ok(value as i64)
}

/// A clap value parser for a duration (`10s`, `1m30s`, `250ms`) from `min`
/// to `max`: zero or an endless duration is refused where parsed instead of
/// spinning or overflowing a deadline later.
pub fn duration_in(
    min: std::time::Duration,
    max: std::time::Duration,
) -> impl Fn(&str) -> Result<humantime::Duration, String> + Clone + Send + Sync + 'static {
    move |text| {
        let d: humantime::Duration = text
            .trim()
            .parse()
            .map_err(|e| format!("{e}: give a duration with its unit, e.g. 10s, 500ms or 2m"))?;
        if *d < min || *d > max {
            return Err(format!(
                "{} is out of range: use {} to {}",
                text.trim(),
                humantime::format_duration(min),
                humantime::format_duration(max)
            ));
        }
        Ok(d)
    }
}

/// A clap value parser for a decimal number from `min` to `max` (finite:
/// NaN and infinities are refused).
pub fn float_in(
    min: f64,
    max: f64,
) -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync + 'static {
    move |text| {
        let v: f64 = text
            .trim()
            .parse()
            .map_err(|_| format!("\"{}\" is not a number, e.g. 2.5", text.trim()))?;
        if !(v.is_finite() && v >= min && v <= max) {
            return Err(format!(
                "{} is out of range: use {min} to {max}",
                text.trim()
            ));
        }
        Ok(v)
    }
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

    /// A number that is only too large says so, with the limit, whether
    /// its digits or its suffix pass 64 bits; never "invalid number".
    #[test]
    fn too_large_numbers_say_so() {
        for big in [
            "18446744073709551616",
            "99999999999999999999999",
            "0x1ffffffffffffffff",
            "99999999999999G",
        ] {
            let err = parse_number(big).unwrap_err().to_string();
            assert!(
                err.contains("too large (at most 18446744073709551615)") && err.contains(big),
                "{big}: {err}"
            );
        }
        assert_eq!(whole_number("42", 100), Ok(42));
        assert!(
            whole_number("101", 100)
                .unwrap_err()
                .contains("too large (at most 100)")
        );
        assert!(
            whole_number("4294967296", 1000)
                .unwrap_err()
                .contains("too large (at most 1000)")
        );
        assert!(
            whole_number("99999999999999999999999", 1000)
                .unwrap_err()
                .contains("too large (at most 1000)")
        );
        for not in ["x", "", "1.5", "-1", "1e3"] {
            assert!(
                whole_number(not, 1000)
                    .unwrap_err()
                    .contains("not a whole number"),
                "{not}"
            );
        }
    }
}
