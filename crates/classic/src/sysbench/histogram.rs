//! sysbench 1.0.20's latency histogram (`sb_histogram.c`, set up in `sb_logger.c`): 1024 slots
//! on a log scale from 0.001 ms to 100,000 ms, each about 1.8% wider than the one before. A
//! latency of `ms` counts in slot `floor((ln ms − ln 0.001) · 1023 / ln 10^8 + 0.5)`, clamped to
//! the first and last; slot `i` stands for `exp(i · ln 10^8 / 1023 + ln 0.001)` ms.
//!
//! sysbench takes its percentile from these slots (the value of the first slot at which the
//! running count reaches `floor(n · p / 100 + 0.5)`), so its percentiles come in those steps;
//! `--histogram` prints the non-empty slots, each with a bar 40 stars long at the fullest.
//!
//! fslab's engine keeps its own, finer buckets (under 1% wide). Each of its buckets is shared
//! among the sysbench slots its span overlaps, in proportion to the overlap on the log scale,
//! and the shares are rounded so that the counts add up to the number of events.

use std::fmt::Write;

const SLOTS: usize = 1024;
const MIN_MS: f64 = 1e-3;
const MAX_MS: f64 = 1e5;

fn deduct() -> f64 {
    MIN_MS.ln()
}

fn mult() -> f64 {
    (SLOTS - 1) as f64 / (MAX_MS.ln() - deduct())
}

/// Where `ms` falls on the slots' scale: its slot is this, rounded down.
fn position(ms: f64) -> f64 {
    (ms.ln() - deduct()) * mult() + 0.5
}

/// The value a slot stands for, in ms.
fn value(slot: usize) -> f64 {
    (slot as f64 / mult() + deduct()).exp()
}

/// A latency in ms as sysbench reports it: the value of the slot it counts in.
pub fn quantize(ms: f64) -> f64 {
    value((position(ms).floor().max(0.0) as usize).min(SLOTS - 1))
}

/// Events per slot.
#[derive(Debug, Clone, PartialEq)]
pub struct Slots(Vec<u64>);

impl Slots {
    /// The slots of the engine's buckets, given as (lowest, highest ns, count).
    pub fn from_spans(spans: &[(u64, u64, u64)]) -> Slots {
        let mut share = vec![0.0f64; SLOTS];
        for &(lo, hi, n) in spans.iter().filter(|s| s.2 > 0) {
            // The bucket holds whole nanoseconds lo..=hi: on the line, [lo, hi + 1).
            let from = position(lo.max(1) as f64 / 1e6);
            let to = position((hi + 1) as f64 / 1e6);
            let width = to - from;
            let mut at = from;
            while at < to {
                let next = (at.floor() + 1.0).min(to);
                let slot = (at.floor().max(0.0) as usize).min(SLOTS - 1);
                share[slot] += n as f64 * (next - at) / width;
                at = next;
            }
        }
        // Round the running total, so that no count is lost or made up.
        let mut slots = vec![0u64; SLOTS];
        let (mut sum, mut given) = (0.0, 0u64);
        for (slot, s) in slots.iter_mut().zip(&share) {
            sum += s;
            let upto = sum.round() as u64;
            *slot = upto.saturating_sub(given);
            given = given.max(upto);
        }
        Slots(slots)
    }

    pub fn events(&self) -> u64 {
        self.0.iter().sum()
    }

    /// sysbench's `p`th percentile in ms; 0 when there were no events.
    pub fn percentile_ms(&self, p: u32) -> f64 {
        let n = self.events();
        if n == 0 {
            return 0.0;
        }
        let want = (n as f64 * p as f64 / 100.0 + 0.5).floor() as u64;
        let mut seen = 0;
        for (slot, &k) in self.0.iter().enumerate() {
            seen += k;
            if seen >= want {
                return value(slot);
            }
        }
        value(SLOTS - 1)
    }

    /// The non-empty slots as (value in ms, count), for `--json`.
    pub fn rows(&self) -> Vec<(f64, u64)> {
        self.0
            .iter()
            .enumerate()
            .filter(|(_, &k)| k > 0)
            .map(|(slot, &k)| (value(slot), k))
            .collect()
    }
}

/// What `--histogram` prints before the report: the title, the column heads and a line per
/// non-empty slot, then a line holding one space (nothing but the title and that line when no
/// event was timed).
pub fn print(rows: &[(f64, u64)]) -> String {
    let mut s = String::from("Latency histogram (values are in milliseconds)\n");
    let most = rows.iter().map(|r| r.1).max().unwrap_or(0);
    if most > 0 {
        s.push_str("       value  ------------- distribution ------------- count\n");
        for &(ms, k) in rows {
            let stars = (k as f64 * 40.0 / most as f64 + 0.5).floor() as usize;
            let _ = writeln!(s, "{ms:12.3} |{:<40} {k}", "*".repeat(stars));
        }
    }
    s.push_str(" \n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_sysbench_s() {
        // sb_histogram_update's slot for 1 ms is floor(ln(1000) * 1023 / ln(1e8) + 0.5) = 384.
        assert_eq!(position(1.0).floor(), 384.0);
        assert!((value(0) - 0.001).abs() < 1e-12 && (value(SLOTS - 1) - 1e5).abs() < 1e-6);
        // Each slot is e^(ln 1e8 / 1023) = 1.8% wider than the one before.
        assert!((value(501) / value(500) - 1.01817).abs() < 1e-5);
        // A value reads back as its slot's: 1.0 ms is slot 384, 1.00678 ms.
        assert!((quantize(1.0) - value(384)).abs() < 1e-12);
        assert!((quantize(0.0000001) - 0.001).abs() < 1e-12);
        assert_eq!(quantize(1e9), value(SLOTS - 1));
    }

    #[test]
    fn a_bucket_inside_one_slot_stays_whole_and_one_across_two_is_shared() {
        // 1.000 ms to 1.001 ms lies within slot 384 (0.99775 ms to 1.01588 ms).
        let one = Slots::from_spans(&[(1_000_000, 1_000_999, 7)]);
        assert_eq!(one.rows().len(), 1);
        assert_eq!(one.rows()[0].1, 7);
        // 1.000 ms to 1.019 ms runs past 1.01588 ms: 84% of it (on the log scale) is in slot
        // 384, the rest in 385.
        let two = Slots::from_spans(&[(1_000_000, 1_018_999, 100)]);
        let rows = two.rows();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows.iter().map(|r| r.1).sum::<u64>(), 100);
        assert!((82..=86).contains(&rows[0].1), "{rows:?}");
    }

    #[test]
    fn counts_add_up_and_the_percentile_is_sysbench_s() {
        // 90 events at 10 µs, 10 at 5 ms: the 95th percentile is the 5 ms slot's value (the
        // 95th event), the 90th the 10 µs slot's.
        let s = Slots::from_spans(&[(10_000, 10_063, 90), (5_000_000, 5_031_000, 10)]);
        assert_eq!(s.events(), 100);
        assert!(
            (s.percentile_ms(95) - quantize(5.0)).abs() < 0.0001,
            "{}",
            s.percentile_ms(95)
        );
        assert!((s.percentile_ms(90) - quantize(0.01)).abs() < 0.0001);
        assert_eq!(Slots::from_spans(&[]).percentile_ms(95), 0.0);
        // Sub-microsecond latencies fall into the first slot, as in sysbench.
        let tiny = Slots::from_spans(&[(1, 1, 3), (200, 201, 4)]).rows();
        assert_eq!(tiny.len(), 1);
        assert!((tiny[0].0 - 0.001).abs() < 1e-12 && tiny[0].1 == 7, "{tiny:?}");
    }

    #[test]
    fn the_printout_is_sysbench_s() {
        let want = "\
Latency histogram (values are in milliseconds)
       value  ------------- distribution ------------- count
       0.001 |**************************************** 1474
       0.002 |*****                                    186
       3.748 |                                         1
 \n";
        assert_eq!(print(&[(0.001, 1474), (0.002, 186), (3.748, 1)]), want);
        assert_eq!(print(&[]), "Latency histogram (values are in milliseconds)\n \n");
    }
}
