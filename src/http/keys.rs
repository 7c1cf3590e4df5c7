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
    /// Digits only, but above u64::MAX.
    Overflow,
}

impl std::fmt::Display for KeyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            KeyError::Empty => "empty key",
            KeyError::TooLong => "key longer than 20 characters",
            KeyError::NotDigits => "a key is a positive decimal number",
            KeyError::Zero => "keys start at 1",
            KeyError::Overflow => "key out of range",
        })
    }
}

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
    let key: u64 = segment.parse().map_err(|_| KeyError::Overflow)?;
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
        ] {
            assert!(parse_key(bad).is_err(), "{bad:?}");
        }
    }
}
