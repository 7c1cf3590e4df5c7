//! `suite lob --order both`: whether the order blobs are written and read
//! in matters, as the paper checked ("We repeated BLOB read and write in
//! different orders; however no significant difference was observed").
//! Every system, size and phase is one case, random against sequential;
//! they are judged together as `compare` judges a family: a rank test per
//! case, Holm's correction over all of them, and a difference counted only
//! when the whole bootstrap interval of the ratio of medians lies beyond
//! [`ORDER_THRESHOLD`].

use crate::measure::significance::{ALPHA, Call, Case, assess};
use crate::result::lob::{LobTables, ORDER_THRESHOLD, Order, OrderCall, OrderEffect};

/// One case before judging: what it is and its two sides' samples.
struct Pending {
    system: String,
    size: u64,
    phase: &'static str,
    sequential: Vec<f64>,
    random: Vec<f64>,
}

/// Random against sequential for every system, size and phase measured in
/// both orders (none unless both were measured), in the samples' order.
pub fn order_effects(t: &LobTables) -> Vec<OrderEffect> {
    let as_f64 = |v: &[u64]| v.iter().map(|&x| x as f64).collect::<Vec<f64>>();
    let mut pending = Vec::new();
    for s in t.lob.iter().filter(|s| s.order == Order::Sequential) {
        let Some(r) = t.samples_in(&s.system, s.size, Order::Random) else {
            continue;
        };
        for (phase, seq, rnd) in [
            ("write", &s.write_ns, &r.write_ns),
            ("read", &s.read_ns, &r.read_ns),
        ] {
            pending.push(Pending {
                system: s.system.clone(),
                size: s.size,
                phase,
                sequential: as_f64(seq),
                random: as_f64(rnd),
            });
        }
    }
    let cases: Vec<Case> = pending
        .iter()
        .enumerate()
        .map(|(i, p)| Case::new(&p.sequential, &p.random, 0x4f72_6465 ^ i as u64))
        .collect();
    let family = assess(&cases, ORDER_THRESHOLD);
    // Too few blobs a side for any case to reach significance over the
    // whole family: "within noise" would claim what was never tested.
    let testable = family.best_possible_p < ALPHA;
    pending
        .iter()
        .zip(&family.cases)
        .map(|(p, a)| OrderEffect {
            system: p.system.clone(),
            size: p.size,
            phase: p.phase.into(),
            sequential_median_ns: crate::measure::significance::median(&p.sequential),
            random_median_ns: crate::measure::significance::median(&p.random),
            ratio: a.interval.ratio,
            low: a.interval.low,
            high: a.interval.high,
            n: p.sequential.len().min(p.random.len()),
            p_adjusted: a.p_adjusted,
            call: match a.call {
                _ if !testable => OrderCall::Insufficient,
                Call::Insufficient => OrderCall::Insufficient,
                Call::NotSignificant | Call::BelowThreshold => OrderCall::WithinNoise,
                Call::Up => OrderCall::RandomSlower,
                Call::Down => OrderCall::RandomFaster,
            },
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::lob::Samples;

    fn samples(system: &str, order: Order, write: &[u64], read: &[u64]) -> Samples {
        Samples {
            system: system.into(),
            size: 1000,
            write_ns: write.to_vec(),
            read_ns: read.to_vec(),
            cold: None,
            order,
        }
    }

    #[test]
    fn a_clear_difference_is_called_and_noise_is_not() {
        let seq: Vec<u64> = (0..10).map(|i| 1000 + i * 7).collect();
        // Reads twice as slow in random order; writes the same within noise.
        let slow: Vec<u64> = seq.iter().map(|x| x * 2).collect();
        let same: Vec<u64> = seq.iter().rev().map(|x| x + 3).collect();
        let t = LobTables {
            lob: vec![
                samples("sqlite", Order::Sequential, &seq, &seq),
                samples("sqlite", Order::Random, &same, &slow),
            ],
            orders: vec![Order::Sequential, Order::Random],
            ..Default::default()
        };
        let e = order_effects(&t);
        assert_eq!(e.len(), 2);
        let write = e.iter().find(|x| x.phase == "write").unwrap();
        let read = e.iter().find(|x| x.phase == "read").unwrap();
        assert_eq!(write.call, OrderCall::WithinNoise, "{write:?}");
        assert!(write.low <= 1.0 && write.high >= 1.0, "{write:?}");
        assert_eq!(read.call, OrderCall::RandomSlower, "{read:?}");
        assert!((read.ratio - 2.0).abs() < 0.05, "{read:?}");
        assert!(read.low > 1.0 + ORDER_THRESHOLD, "{read:?}");
        assert_eq!(t.order_differences("sqlite").len(), 0, "not stored yet");
        // Only one order measured: nothing to compare.
        let one = LobTables {
            lob: vec![samples("dir", Order::Sequential, &seq, &seq)],
            ..Default::default()
        };
        assert!(order_effects(&one).is_empty());
        // Four blobs a side: even a doubling cannot pass Holm over the
        // family, so nothing is called, not even "within noise".
        let t = LobTables {
            lob: vec![
                samples("sqlite", Order::Sequential, &seq[..4], &seq[..4]),
                samples("sqlite", Order::Random, &slow[..4], &slow[..4]),
            ],
            ..Default::default()
        };
        let e = order_effects(&t);
        assert!(e.iter().all(|x| x.call == OrderCall::Insufficient), "{e:?}");
    }
}
