//! Latency second by second: each worker thread counts its timed operations into a fixed array
//! of log-linear buckets, and the monitor thread takes the difference once a second.
//!
//! The run's own histograms ([`OpStats`](crate::histogram::OpStats)) belong to their thread
//! until it ends; these buckets are read while the thread runs. So that recording stays as cheap
//! as the live operation counters, only the owning thread writes them, with a relaxed load and a
//! store (no locked instruction, no allocation), and the monitor only reads.
//!
//! Buckets: values below 64 ns have one each; above, every power of two is cut into 32 equal
//! buckets, so a bucket is at most 1/32 of its values wide and the middle of a bucket is within
//! 1.6% of anything in it. Values up to 2^41 ns (about 36 minutes) are told apart; longer ones
//! fall into the last bucket. Counts are 32 bits (4.6 KiB per thread): the monitor takes
//! differences with wrapping arithmetic, which stay right as long as no bucket of one thread
//! gains 2^32 operations between two looks.

use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};

/// Bits of a value below its leading bit that pick a bucket: 32 buckets per power of two.
const SUB_BITS: u32 = 5;
const SUB: u64 = 1 << SUB_BITS;
/// Values below this have a bucket each.
const LINEAR: u64 = 2 * SUB;
/// The largest shift told apart: values up to 2^(MAX_SHIFT + SUB_BITS + 1) - 1 ns.
const MAX_SHIFT: u32 = 35;
/// Buckets in all: 64 exact ones, then 32 per power of two.
pub(crate) const BUCKETS: usize = (MAX_SHIFT as usize + 2) * SUB as usize;

/// The bucket of a value in nanoseconds.
#[inline]
fn bucket(ns: u64) -> usize {
    if ns < LINEAR {
        return ns as usize;
    }
    let shift = 63 - ns.leading_zeros() - SUB_BITS;
    if shift > MAX_SHIFT {
        return BUCKETS - 1;
    }
    // (ns >> shift) is in [SUB, 2 * SUB): shift s fills buckets (s + 1) * SUB .. (s + 2) * SUB.
    (shift as u64 * SUB + (ns >> shift)) as usize
}

/// The smallest and largest value in nanoseconds of bucket `i`.
fn bounds(i: usize) -> (u64, u64) {
    let i = i as u64;
    if i < LINEAR {
        return (i, i);
    }
    let shift = i / SUB - 1;
    let low = (i % SUB + SUB) << shift;
    (low, low + (1 << shift) - 1)
}

/// The value that stands for bucket `i`: its middle.
fn middle(i: usize) -> u64 {
    let (low, high) = bounds(i);
    low + (high - low) / 2
}

/// The latency of one second's timed operations, in microseconds, from log-linear buckets
/// (each figure within 1.6% of the exact one; the mean is exact).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SecondLatency {
    /// Operations timed in this second. The monitor reads a thread's operation counters and
    /// its latency buckets one after the other, not at one instant, so an operation that ends
    /// between the two reads counts here in one second and in `Second::ops` in the next: the
    /// two differ by a few at most, and their sums over the run are equal.
    pub ops: u64,
    pub mean_us: f64,
    pub p50_us: f64,
    pub p90_us: f64,
    pub p95_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
}

/// One thread's buckets and the sum of its timed latencies, since the run started. The buckets
/// are held inline, not boxed: the counters live in memory that worker processes share with the
/// monitor ([`Shm`](crate::shm::Shm)), and a box would put them on each process's own heap.
pub(crate) struct LiveLatency {
    counts: [AtomicU32; BUCKETS],
    sum_ns: AtomicU64,
}

impl LiveLatency {
    pub fn new() -> LiveLatency {
        LiveLatency {
            counts: std::array::from_fn(|_| AtomicU32::new(0)),
            sum_ns: AtomicU64::new(0),
        }
    }

    /// Counts one operation of `ns` nanoseconds. Only the owning thread may call this: a load
    /// and a store, not an atomic increment.
    #[inline]
    pub fn record(&self, ns: u64) {
        let c = &self.counts[bucket(ns)];
        c.store(c.load(Relaxed).wrapping_add(1), Relaxed);
        self.sum_ns.store(self.sum_ns.load(Relaxed).wrapping_add(ns), Relaxed);
    }
}

/// The monitor's side: what each thread's buckets held at the last look.
pub(crate) struct LatencyTally {
    last: Vec<u32>,
    last_sum: Vec<u64>,
    /// What the threads added since the last `finish`.
    diff: Vec<u64>,
    sum: u64,
}

impl LatencyTally {
    pub fn new(threads: usize) -> LatencyTally {
        LatencyTally {
            last: vec![0; threads * BUCKETS],
            last_sum: vec![0; threads],
            diff: vec![0; BUCKETS],
            sum: 0,
        }
    }

    /// What the threads timed since the last call, over all threads (in the order of `new`).
    #[cfg(test)]
    pub fn take<'a>(&mut self, threads: impl Iterator<Item = &'a LiveLatency>) -> SecondHistogram {
        for (t, live) in threads.enumerate() {
            self.add(t, live);
        }
        self.finish()
    }

    /// Adds what thread `t` (in the order of `new`) timed since the last look. The monitor calls
    /// this right after reading the same thread's operation counters, so that a second's
    /// latencies and its operation count differ only by the operations that ended between the
    /// two reads.
    pub fn add(&mut self, t: usize, live: &LiveLatency) {
        let last = &mut self.last[t * BUCKETS..(t + 1) * BUCKETS];
        for ((now, before), d) in live.counts.iter().zip(last.iter_mut()).zip(&mut self.diff) {
            let now = now.load(Relaxed);
            *d += u64::from(now.wrapping_sub(*before));
            *before = now;
        }
        let now = live.sum_ns.load(Relaxed);
        self.sum = self.sum.wrapping_add(now.wrapping_sub(self.last_sum[t]));
        self.last_sum[t] = now;
    }

    /// The histogram of everything added since the last call, and a fresh start for the next.
    pub fn finish(&mut self) -> SecondHistogram {
        let second = SecondHistogram::from_counts(&self.diff, self.sum);
        self.diff.iter_mut().for_each(|d| *d = 0);
        self.sum = 0;
        second
    }
}

/// The latencies of the operations timed over a stretch of the run (one second as the engine
/// hands it out; several merged by a front-end that reports every few seconds), in the
/// log-linear buckets described above: any percentile can be read from it, within 1.6%.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SecondHistogram {
    /// (bucket, operations) of the buckets with any, in increasing order.
    buckets: Vec<(u32, u64)>,
    count: u64,
    sum_ns: u64,
}

impl SecondHistogram {
    /// The histogram of these latencies in nanoseconds, as if timed by the engine.
    pub fn from_ns(values: impl IntoIterator<Item = u64>) -> SecondHistogram {
        let mut counts = vec![0u64; BUCKETS];
        let mut sum_ns = 0u64;
        for ns in values {
            counts[bucket(ns)] += 1;
            sum_ns = sum_ns.wrapping_add(ns);
        }
        SecondHistogram::from_counts(&counts, sum_ns)
    }

    /// From a count per bucket.
    fn from_counts(counts: &[u64], sum_ns: u64) -> SecondHistogram {
        let buckets: Vec<(u32, u64)> = counts
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(i, &n)| (i as u32, n))
            .collect();
        SecondHistogram {
            count: buckets.iter().map(|b| b.1).sum(),
            buckets,
            sum_ns,
        }
    }

    /// Operations timed.
    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn mean_ns(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum_ns as f64 / self.count as f64)
    }

    /// The latency below which `p` percent of the operations fall (nearest rank: the bucket of
    /// the ⌈count × p / 100⌉th fastest operation, at least the first), in nanoseconds; `None`
    /// when nothing was timed. `p` = 0 gives the fastest bucket, 100 the slowest.
    pub fn percentile_ns(&self, p: f64) -> Option<u64> {
        if self.count == 0 {
            return None;
        }
        let rank = ((self.count as f64 * p.clamp(0.0, 100.0) / 100.0).ceil() as u64).max(1);
        let mut seen = 0;
        for &(i, n) in &self.buckets {
            seen += n;
            if seen >= rank {
                return Some(middle(i as usize));
            }
        }
        self.max_ns()
    }

    pub fn max_ns(&self) -> Option<u64> {
        self.buckets.last().map(|&(i, _)| middle(i as usize))
    }

    /// Adds `other`'s operations to these.
    pub fn merge(&mut self, other: &SecondHistogram) {
        let mut merged = Vec::with_capacity(self.buckets.len() + other.buckets.len());
        let (mut a, mut b) = (self.buckets.iter().peekable(), other.buckets.iter().peekable());
        loop {
            let next = match (a.peek(), b.peek()) {
                (Some(x), Some(y)) if x.0 == y.0 => {
                    let sum = (x.0, x.1 + y.1);
                    a.next();
                    b.next();
                    sum
                }
                (Some(x), Some(y)) if x.0 < y.0 => *a.next().expect("peeked"),
                (Some(_), Some(_)) | (None, Some(_)) => *b.next().expect("peeked"),
                (Some(_), None) => *a.next().expect("peeked"),
                (None, None) => break,
            };
            merged.push(next);
        }
        self.buckets = merged;
        self.count += other.count;
        self.sum_ns = self.sum_ns.wrapping_add(other.sum_ns);
    }

    /// The fixed figures a [`Second`](crate::result::Second) keeps; `None` when nothing was
    /// timed.
    pub fn summary(&self) -> Option<SecondLatency> {
        let us = |p: f64| self.percentile_ns(p).unwrap_or(0) as f64 / 1000.0;
        Some(SecondLatency {
            ops: self.count,
            mean_us: self.mean_ns()? / 1000.0,
            p50_us: us(50.0),
            p90_us: us(90.0),
            p95_us: us(95.0),
            p99_us: us(99.0),
            max_us: self.max_ns().unwrap_or(0) as f64 / 1000.0,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_contiguous_and_hold_their_values() {
        let mut expected_low = 0;
        for i in 0..BUCKETS {
            let (low, high) = bounds(i);
            assert_eq!(
                low,
                expected_low,
                "bucket {i} starts where {} ends",
                i.saturating_sub(1)
            );
            assert!(high >= low);
            assert_eq!(bucket(low), i, "{low} ns");
            assert_eq!(bucket(high), i, "{high} ns");
            expected_low = high + 1;
        }
        assert_eq!(expected_low, 1 << 41, "the last bucket ends at 2^41 ns");
        assert_eq!(bucket(u64::MAX), BUCKETS - 1);
    }

    #[test]
    fn the_middle_of_a_bucket_is_within_two_percent_of_its_values() {
        for ns in [
            64u64,
            100,
            1_000,
            4_095,
            37_000,
            1_234_567,
            999_999_999,
            100_000_000_000,
        ] {
            let got = middle(bucket(ns)) as f64;
            let err = (got - ns as f64).abs() / ns as f64;
            assert!(
                err <= 1.0 / 64.0,
                "{ns} ns reads back as {got} ({:.2}% off)",
                err * 100.0
            );
        }
        assert_eq!(middle(bucket(37)), 37, "values below 64 ns are exact");
    }

    fn histogram(values: &[u64]) -> SecondHistogram {
        SecondHistogram::from_ns(values.iter().copied())
    }

    #[test]
    fn the_tally_gives_what_was_recorded_since_the_last_look() {
        let live = [LiveLatency::new(), LiveLatency::new()];
        let mut tally = LatencyTally::new(2);
        live[0].record(1_000);
        live[1].record(3_000);
        let first = tally.take(live.iter());
        assert_eq!((first.count(), first.mean_ns()), (2, Some(2_000.0)));
        assert_eq!(tally.take(live.iter()), SecondHistogram::default(), "nothing new");
        for _ in 0..9 {
            live[1].record(10_000);
        }
        live[0].record(50);
        let next = tally.take(live.iter());
        let mut want = vec![10_000; 9];
        want.push(50);
        assert_eq!(next, histogram(&want));
        assert_eq!(next.count(), 10);
        assert_eq!(next.percentile_ns(10.0), Some(50));
        assert_eq!(next.max_ns(), Some(middle(bucket(10_000))));
    }

    #[test]
    fn percentiles_take_the_nearest_rank() {
        // 90 operations of 1 µs, 5 of 2 µs, 5 of 50 µs.
        let mut v = vec![1_000; 90];
        v.extend([2_000; 5]);
        v.extend([50_000; 5]);
        let h = histogram(&v);
        let near = |got: Option<u64>, want: u64| {
            let got = got.expect("a value") as f64;
            assert!(
                (got - want as f64).abs() / (want as f64) < 0.016,
                "{got} is not about {want}"
            );
        };
        near(h.percentile_ns(90.0), 1_000);
        near(h.percentile_ns(95.0), 2_000);
        near(h.percentile_ns(96.0), 50_000);
        near(h.percentile_ns(0.0), 1_000);
        near(h.percentile_ns(100.0), 50_000);
        near(h.max_ns(), 50_000);
        assert_eq!(SecondHistogram::default().percentile_ns(95.0), None);
        let s = h.summary().expect("timed operations");
        assert_eq!(s.ops, 100);
        assert!((s.mean_us - 3.5).abs() < 1e-9, "{}", s.mean_us);
        assert_eq!(SecondHistogram::default().summary(), None);
    }

    #[test]
    fn merging_adds_bucket_by_bucket() {
        let mut a = histogram(&[1_000, 5_000, 5_000]);
        let b = histogram(&[20, 5_000, 900_000]);
        a.merge(&b);
        assert_eq!(a, histogram(&[20, 1_000, 5_000, 5_000, 5_000, 900_000]));
    }
}
