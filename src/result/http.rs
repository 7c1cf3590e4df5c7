//! The `suite http` result's own tables: the same dataset served by each
//! system (a database, a folder, any extra server), loaded at every
//! concurrency level.

use serde::{Deserialize, Serialize};

use super::load::{LevelResult, Order};
use crate::dataset::{DatasetSpec, SizeDistribution};

/// One server's figures, level by level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HttpSystem {
    /// "sqlite-blog", "sqlite-kv", "dir", or the NAME of an
    /// `--extra NAME=URLFILE` ("sqlite" in results from before layouts).
    pub system: String,
    /// The table a database system served from, in words (absent for the
    /// others, and in results from before layouts, which used kv).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table: Option<String>,
    /// One record per concurrency level, in the order of `-c`.
    pub levels: Vec<LevelResult>,
}

/// The kind-specific part of a `suite http` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HttpTables {
    /// Every system, the databases first (the first is the ratios'
    /// denominator).
    pub http: Vec<HttpSystem>,
    /// The blobs every system served.
    pub dataset: DatasetSpec,
    /// How long each system was loaded at each level.
    pub duration_ns: u64,
    /// In which order each connection took its next URL (absent in results
    /// written before `--order` existed: those always requested random keys).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<Order>,
}

impl HttpTables {
    /// The URL order the run used (random for results older than `--order`).
    pub fn url_order(&self) -> Order {
        self.order.unwrap_or(Order::Random)
    }
}

/// The blog's blob sizes: `head -c {n}K` with n uniform in 200..4000, so
/// 200 KiB..4000 KiB (binary units), written here as the middle +/- half
/// the span in bytes.
pub const BLOG_SIZE: u64 = 2100 * 1024;
/// The +/- around [`BLOG_SIZE`] that spans the blog's 200..4000 KiB.
pub const BLOG_VARIANCE: u64 = 1900 * 1024;

/// Whether a dataset's sizes are the blog's 200..4000 KiB.
pub fn blog_sizes(spec: &DatasetSpec) -> bool {
    spec.size == BLOG_SIZE && size_variance(spec) == BLOG_VARIANCE
}

/// The sizes as a reader of the blog would write them: `200..4000 KiB
/// (the blog's)` for the blog's, else `SIZE +/- VARIANCE bytes`.
pub fn describe_sizes(spec: &DatasetSpec) -> String {
    if blog_sizes(spec) {
        return format!(
            "{}..{} KiB, uniform (the blog's `head -c {{200..4000}}K`)",
            (BLOG_SIZE - BLOG_VARIANCE) / 1024,
            (BLOG_SIZE + BLOG_VARIANCE) / 1024
        );
    }
    match size_variance(spec) {
        0 => format!("{} bytes", spec.size),
        v => format!("{} +/- {v} bytes", spec.size),
    }
}

/// What `order` means for the suite's loads, as the header lines say it.
pub fn describe_order(order: Order) -> &'static str {
    match order {
        Order::Sequential => {
            "sequential order (the URL list in key order, round and round, as siege -f without -i)"
        }
        Order::Random => "random order (a random URL per request, as siege -i)",
    }
}

/// The +/- of a dataset's sizes as `--variance` gave it (0 for fixed sizes),
/// as the suite's header lines show it.
pub fn size_variance(spec: &DatasetSpec) -> u64 {
    match spec.distribution {
        SizeDistribution::Uniform { variance } => variance,
        SizeDistribution::Fixed | SizeDistribution::LogNormal { .. } => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::spec_from_options;

    #[test]
    fn the_blogs_sizes_are_200_to_4000_kib() {
        let spec = spec_from_options(2000, BLOG_SIZE, BLOG_VARIANCE, "uniform", 1.0, 1).unwrap();
        let sizes: Vec<usize> = (1..=2000).map(|k| spec.size_of(k)).collect();
        let (min, max) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
        assert!((200 * 1024..210 * 1024).contains(min), "{min}");
        assert!((3990 * 1024..=4000 * 1024).contains(max), "{max}");
        assert!(blog_sizes(&spec));
        assert!(describe_sizes(&spec).starts_with("200..4000 KiB"));
        let kb = spec_from_options(2000, 2_100_000, 1_900_000, "uniform", 1.0, 1).unwrap();
        assert!(!blog_sizes(&kb));
        assert_eq!(describe_sizes(&kb), "2100000 +/- 1900000 bytes");
    }

    #[test]
    fn results_before_order_read_as_random() {
        let spec = spec_from_options(1, 10, 0, "uniform", 1.0, 1).unwrap();
        let t = HttpTables {
            http: Vec::new(),
            dataset: spec,
            duration_ns: 1,
            order: None,
        };
        assert_eq!(t.url_order(), Order::Random);
        let text = serde_json::to_string(&t).unwrap();
        assert!(!text.contains("order"), "{text}");
    }
}
