//! The `Range` request header: which single byte range of a blob a GET
//! asks for.

/// A single byte range of a blob of `size` bytes, from a `Range` header.
#[derive(Debug, PartialEq, Eq)]
pub enum RangeRequest {
    /// No usable Range header (absent, malformed or multiple ranges): the whole blob.
    Whole,
    /// Bytes start..=end.
    Part {
        /// First byte sent.
        start: u64,
        /// Last byte sent (inclusive), always below the blob's size.
        end: u64,
    },
    /// Starts past the last byte, asks for the last 0 bytes, or any range of
    /// an empty blob: answered with 416.
    Unsatisfiable,
}

/// Reads a `Range` header against a blob of `size` bytes. Anything this
/// server does not serve as a range (several ranges, other units, a
/// malformed spec) falls back to the whole blob, as RFC 9110 allows.
pub fn parse_range(header: Option<&str>, size: u64) -> RangeRequest {
    let Some(spec) = header.and_then(|h| h.trim().strip_prefix("bytes=")) else {
        return RangeRequest::Whole;
    };
    if spec.contains(',') {
        return RangeRequest::Whole;
    }
    let Some((a, b)) = spec.trim().split_once('-') else {
        return RangeRequest::Whole;
    };
    let num = |s: &str| -> Option<u64> {
        (!s.is_empty() && s.bytes().all(|c| c.is_ascii_digit()))
            .then(|| s.parse().ok())
            .flatten()
    };
    match (a.is_empty(), b.is_empty()) {
        // bytes=-N: the last N bytes.
        (true, false) => match num(b) {
            Some(0) => RangeRequest::Unsatisfiable,
            Some(n) if size == 0 => {
                let _ = n;
                RangeRequest::Unsatisfiable
            }
            Some(n) => RangeRequest::Part {
                start: size.saturating_sub(n),
                end: size - 1,
            },
            None => RangeRequest::Whole,
        },
        // bytes=A-: from A to the end.
        (false, true) => match num(a) {
            Some(s) if s >= size => RangeRequest::Unsatisfiable,
            Some(s) => RangeRequest::Part {
                start: s,
                end: size - 1,
            },
            None => RangeRequest::Whole,
        },
        (false, false) => match (num(a), num(b)) {
            (Some(s), Some(e)) if s > e => RangeRequest::Whole,
            (Some(s), Some(_)) if s >= size => RangeRequest::Unsatisfiable,
            (Some(s), Some(e)) => RangeRequest::Part {
                start: s,
                end: e.min(size - 1),
            },
            _ => RangeRequest::Whole,
        },
        (true, true) => RangeRequest::Whole,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        use RangeRequest::*;
        assert_eq!(parse_range(None, 100), Whole);
        assert_eq!(
            parse_range(Some("bytes=0-9"), 100),
            Part { start: 0, end: 9 }
        );
        assert_eq!(
            parse_range(Some("bytes=90-"), 100),
            Part { start: 90, end: 99 }
        );
        assert_eq!(
            parse_range(Some("bytes=-10"), 100),
            Part { start: 90, end: 99 }
        );
        assert_eq!(
            parse_range(Some("bytes=-500"), 100),
            Part { start: 0, end: 99 }
        );
        assert_eq!(
            parse_range(Some("bytes=50-500"), 100),
            Part { start: 50, end: 99 }
        );
        assert_eq!(parse_range(Some("bytes=100-"), 100), Unsatisfiable);
        assert_eq!(parse_range(Some("bytes=100-200"), 100), Unsatisfiable);
        assert_eq!(parse_range(Some("bytes=-0"), 100), Unsatisfiable);
        assert_eq!(parse_range(Some("bytes=0-0"), 0), Unsatisfiable);
        // Malformed or multiple ranges: ignored, the whole blob is sent.
        for h in [
            "bytes=9-1",
            "bytes=a-b",
            "items=0-1",
            "bytes=0-1,5-6",
            "bytes=-",
            "bytes=1",
        ] {
            assert_eq!(parse_range(Some(h), 100), Whole, "{h}");
        }
    }

    proptest::proptest! {
        /// Any header against any size: no panic, and a part always lies
        /// inside the blob (start <= end < size).
        #[test]
        fn any_header_gives_a_range_inside_the_blob(
            header in "(bytes=)?[0-9a-z=, -]{0,30}|\\PC{0,40}",
            size in proptest::prop_oneof![0u64..1000, proptest::num::u64::ANY],
        ) {
            if let RangeRequest::Part { start, end } = parse_range(Some(&header), size) {
                proptest::prop_assert!(start <= end && end < size, "{header} {size}: {start}..={end}");
            }
        }

        /// Every well-formed single range of an existing blob is served as
        /// the bytes it names, clipped to the blob.
        #[test]
        fn well_formed_ranges_are_served(size in 1u64..u64::MAX, a in proptest::num::u64::ANY, len in 0u64..1 << 40) {
            let start = a % size;
            let end = start.saturating_add(len);
            let got = parse_range(Some(&format!("bytes={start}-{end}")), size);
            proptest::prop_assert_eq!(got, RangeRequest::Part { start, end: end.min(size - 1) });
        }
    }
}
