//! Blob keys in URLs. A key is a positive decimal number and nothing else:
//! it never becomes part of a path, so `..`, `%2e%2e`, slashes, absolute
//! paths and NUL bytes are all simply not keys.

/// Why a path segment is not a key (answered with 400).
#[derive(Debug, PartialEq, Eq)]
pub enum KeyError {
    /// Nothing after `/blobs/`.
    Empty,
    /// More than 20 characters, longer than any u64 (checked before the
    /// characters, so a huge segment is refused without scanning it).
    TooLong,
    /// A character other than an ASCII digit (signs, dots, `%`, slashes).
    NotDigits,
    /// Key 0: datasets' keys start at 1.
    Zero,
    /// Digits only, but above the largest key a store holds (2^63-1, the
    /// largest SQLite rowid and PostgreSQL bigint): a larger number would
    /// wrap to a negative rowid and name another blob.
    Overflow,
}

impl std::fmt::Display for KeyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            KeyError::Empty => "empty key",
            KeyError::TooLong => "key longer than 20 characters",
            KeyError::NotDigits => "a key is a positive decimal number",
            KeyError::Zero => "keys start at 1",
            KeyError::Overflow => "key out of range: keys are 1 to 9223372036854775807",
        })
    }
}

/// The largest key: i64::MAX, so that every key is a valid rowid.
pub const MAX_KEY: u64 = i64::MAX as u64;

/// Parses the raw (still percent-encoded) segment after `/blobs/`.
/// Percent-encoding is not decoded: an encoded digit is not a plain key.
pub fn parse_key(segment: &str) -> Result<u64, KeyError> {
    if segment.is_empty() {
        return Err(KeyError::Empty);
    }
    if segment.len() > 20 {
        return Err(KeyError::TooLong);
    }
    if !segment.bytes().all(|b| b.is_ascii_digit()) {
        return Err(KeyError::NotDigits);
    }
    let key: u64 = segment
        .parse()
        .ok()
        .filter(|&k| k <= MAX_KEY)
        .ok_or(KeyError::Overflow)?;
    if key == 0 {
        return Err(KeyError::Zero);
    }
    Ok(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_positive_numbers_are_keys() {
        assert_eq!(parse_key("1"), Ok(1));
        assert_eq!(parse_key("000042"), Ok(42));
        assert_eq!(parse_key("9223372036854775807"), Ok(MAX_KEY));
        for bad in [
            "",
            "0",
            "..",
            "%2e%2e",
            "..%2f..%2fetc%2fpasswd",
            "/etc/passwd",
            "1%00",
            "1\0",
            "a",
            "-1",
            "+1",
            "1.5",
            " 1",
            "%31",
            "123456789012345678901",
            "99999999999999999999",
            // Above 2^63-1: would alias the negative rowids -5 and -1.
            "9223372036854775808",
            "18446744073709551611",
            "18446744073709551615",
        ] {
            assert!(parse_key(bad).is_err(), "{bad:?}");
        }
    }
}
