//! Summary statistics over repetitions.

use serde::{Deserialize, Serialize};

/// Summary of one measure over repetitions (rounds), in the unit of the
/// values summarized (ns, bytes/s, ...). All zero when there were none.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, Default, PartialEq)]
pub struct Summary {
    /// How many values were summarized.
    pub n: usize,
    /// The middle value (mean of the two middle ones for an even count):
    /// the figure reports lead with, as one slow round does not move it.
    pub median: f64,
    /// Arithmetic mean.
    pub mean: f64,
    /// Smallest value (the best round for a time).
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// Sample standard deviation (0 for a single value).
    pub stddev: f64,
}

/// Median, mean, extremes and spread of `values`, in any order.
pub fn summarize(values: &[f64]) -> Summary {
    if values.is_empty() {
        return Summary::default();
    }
    let mut v = values.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    let mean = v.iter().sum::<f64>() / n as f64;
    let var = if n > 1 {
        v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64
    } else {
        0.0
    };
    Summary {
        n,
        median,
        mean,
        min: v[0],
        max: v[n - 1],
        stddev: var.sqrt(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_spread() {
        let s = summarize(&[3.0, 1.0, 2.0, 10.0]);
        assert_eq!(s.median, 2.5);
        assert_eq!(s.min, 1.0);
        assert_eq!(s.max, 10.0);
        assert_eq!(s.mean, 4.0);
        assert!((s.stddev - 4.0825).abs() < 1e-3);
        assert_eq!(summarize(&[5.0]).stddev, 0.0);
    }
}
