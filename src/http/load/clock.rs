//! The server's clock as a load sees it. Each response's `Date` header
//! (whole seconds, stamped by the server while it answered) bounds how far
//! the server's clock is ahead of this machine's: the stamp fell between
//! the request's send and the response's arrival, and within the second it
//! names. Over a level, responses either side of the server's second
//! boundaries narrow the bounds to about a round trip (as htpdate sets a
//! clock from web servers). `merge` uses each process's bounds to place
//! runs from several machines on one clock, or to say it could not.

use hyper::header::HeaderValue;

use crate::result::load::ClockOffset;

/// The bounds so far, ns (server minus local).
#[derive(Debug, Clone, Copy)]
pub(crate) struct OffsetBounds {
    low: i128,
    high: i128,
    /// Responses that carried a Date.
    dated: u64,
}

impl Default for OffsetBounds {
    fn default() -> Self {
        OffsetBounds {
            low: i128::MIN,
            high: i128::MAX,
            dated: 0,
        }
    }
}

impl OffsetBounds {
    /// A response dated `date_s` (Unix seconds) to a request sent at
    /// `sent_ns` whose response arrived by `arrived_ns` (this machine's
    /// clock, Unix ns).
    pub(crate) fn record(&mut self, date_s: u64, sent_ns: u64, arrived_ns: u64) {
        let date = i128::from(date_s) * 1_000_000_000;
        self.low = self.low.max(date - i128::from(arrived_ns));
        self.high = self.high.min(date + 1_000_000_000 - i128::from(sent_ns));
        self.dated += 1;
    }

    /// Adds another worker's bounds.
    pub(crate) fn absorb(&mut self, o: &OffsetBounds) {
        self.low = self.low.max(o.low);
        self.high = self.high.min(o.high);
        self.dated += o.dated;
    }

    /// The bounds, or None when no response was dated or the dates
    /// contradict each other (a server whose Date is not its clock's).
    pub(crate) fn result(&self) -> Option<ClockOffset> {
        if self.dated == 0 || self.low >= self.high {
            return None;
        }
        Some(ClockOffset {
            low_ns: i64::try_from(self.low).ok()?,
            high_ns: i64::try_from(self.high).ok()?,
        })
    }
}

/// A worker's last `Date` header and its value in Unix seconds: a header
/// changes once a second, so it is parsed once a second.
#[derive(Default)]
pub(crate) struct DateCache {
    last: Option<(HeaderValue, Option<u64>)>,
}

impl DateCache {
    /// `value` in Unix seconds (None when it is no HTTP date).
    pub(crate) fn seconds(&mut self, value: &HeaderValue) -> Option<u64> {
        if let Some((v, s)) = &self.last
            && v == value
        {
            return *s;
        }
        let s = value
            .to_str()
            .ok()
            .and_then(|t| httpdate::parse_http_date(t).ok())
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| d.as_secs());
        self.last = Some((value.clone(), s));
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    #[test]
    fn responses_either_side_of_a_second_boundary_pin_the_offset() {
        // The server's clock is 250 ms ahead; each request takes 2 ms.
        let offset = 250_000_000i64;
        let mut b = OffsetBounds::default();
        for local_ms in (0..3000).step_by(7) {
            let sent = 1_000 * S + local_ms * 1_000_000;
            let stamped = sent + 1_000_000;
            let date = (stamped as i64 + offset) as u64 / S;
            b.record(date, sent, sent + 2_000_000);
        }
        let o = b.result().unwrap();
        assert!(o.low_ns <= offset && offset < o.high_ns, "{o:?}");
        assert!(o.half_width_ns() <= 5_000_000, "{o:?}");
    }

    #[test]
    fn one_response_bounds_within_a_second_and_none_say_nothing() {
        assert_eq!(OffsetBounds::default().result(), None);
        let mut b = OffsetBounds::default();
        b.record(1000, 1000 * S + S / 2, 1000 * S + S / 2 + 1_000_000);
        let o = b.result().unwrap();
        assert!(o.low_ns <= 0 && 0 < o.high_ns, "{o:?}");
        assert!(o.high_ns - o.low_ns <= S as i64 + 1_000_000, "{o:?}");
    }

    #[test]
    fn dates_that_contradict_each_other_give_no_offset() {
        let mut b = OffsetBounds::default();
        b.record(1000, 1000 * S, 1000 * S + 1000);
        b.record(1005, 1000 * S + 2000, 1000 * S + 3000);
        assert_eq!(b.result(), None);
    }

    #[test]
    fn a_date_is_parsed_once_until_it_changes() {
        let mut c = DateCache::default();
        let v = HeaderValue::from_static("Wed, 02 Dec 2026 19:00:00 GMT");
        assert_eq!(c.seconds(&v), Some(1_796_238_000));
        assert_eq!(c.seconds(&v), Some(1_796_238_000));
        assert_eq!(c.seconds(&HeaderValue::from_static("soon")), None);
    }
}
