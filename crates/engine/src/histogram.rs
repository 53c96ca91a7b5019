//! Per-operation statistics of one thread: counts, bytes, FFSB transactions and a log-linear
//! latency histogram (HdrHistogram, 2 significant digits: under 1% relative error from 1 ns to an
//! hour). Each thread owns its own and they are merged after the run, so recording takes no lock.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Highest latency the histograms track exactly: one hour, in nanoseconds.
const MAX_NS: u64 = 3_600_000_000_000;

#[derive(Debug, Clone)]
pub struct OpStats {
    pub count: u64,
    pub errors: u64,
    /// Operations that found nothing to work on (no file to read, no directory to remove).
    pub skipped: u64,
    /// Script steps whose outcome was not the one the script expects (dbench's status checks).
    pub mismatches: u64,
    pub bytes: u64,
    pub transactions: u64,
    pub hist: Histogram<u64>,
}

impl Default for OpStats {
    fn default() -> Self {
        OpStats {
            count: 0,
            errors: 0,
            skipped: 0,
            mismatches: 0,
            bytes: 0,
            transactions: 0,
            hist: Histogram::new_with_bounds(1, MAX_NS, 2).expect("valid histogram bounds"),
        }
    }
}

impl OpStats {
    #[inline]
    pub fn record(&mut self, ns: u64, bytes: u64, transactions: u64) {
        self.count += 1;
        self.bytes += bytes;
        self.transactions += transactions;
        self.hist.saturating_record(ns.max(1));
    }

    /// Counts an operation without timing it (latency recording switched off).
    #[inline]
    pub fn count_only(&mut self, bytes: u64, transactions: u64) {
        self.count += 1;
        self.bytes += bytes;
        self.transactions += transactions;
    }

    pub fn merge(&mut self, other: &OpStats) {
        self.count += other.count;
        self.errors += other.errors;
        self.skipped += other.skipped;
        self.mismatches += other.mismatches;
        self.bytes += other.bytes;
        self.transactions += other.transactions;
        self.hist.add(&other.hist).expect("histograms share their bounds");
    }

    pub fn reset(&mut self) {
        self.count = 0;
        self.errors = 0;
        self.skipped = 0;
        self.mismatches = 0;
        self.bytes = 0;
        self.transactions = 0;
        self.hist.reset();
    }

    pub fn latency(&self) -> Latency {
        let h = &self.hist;
        let us = |ns: u64| ns as f64 / 1000.0;
        if h.is_empty() {
            return Latency::default();
        }
        Latency {
            min_us: us(h.min()),
            mean_us: h.mean() / 1000.0,
            p50_us: us(h.value_at_quantile(0.50)),
            p90_us: us(h.value_at_quantile(0.90)),
            p95_us: us(h.value_at_quantile(0.95)),
            p99_us: us(h.value_at_quantile(0.99)),
            p99_9_us: us(h.value_at_quantile(0.999)),
            p99_99_us: us(h.value_at_quantile(0.9999)),
            max_us: us(h.max()),
        }
    }

    /// A histogram read back from its [`buckets`](Self::buckets): each bucket's count recorded
    /// again at its upper bound lands in the same bucket, so merging such histograms is exact
    /// (the counts, bytes and errors are the caller's to set).
    pub fn from_buckets(buckets: &[(u64, u64)]) -> OpStats {
        let mut s = OpStats::default();
        for &(ns, n) in buckets {
            s.hist.saturating_record_n(ns.max(1), n);
        }
        s
    }

    /// The histogram as (upper bound in ns, count) pairs of its non-empty buckets, for storage
    /// and for merging across repeats.
    pub fn buckets(&self) -> Vec<(u64, u64)> {
        self.hist
            .iter_recorded()
            .map(|v| (self.hist.highest_equivalent(v.value_iterated_to()), v.count_at_value()))
            .collect()
    }
}

/// Latency summary of one operation type, in microseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Latency {
    pub min_us: f64,
    pub mean_us: f64,
    pub p50_us: f64,
    pub p90_us: f64,
    pub p95_us: f64,
    pub p99_us: f64,
    pub p99_9_us: f64,
    pub p99_99_us: f64,
    pub max_us: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_stay_within_one_percent_from_a_microsecond_to_100_seconds() {
        for value in [1_000u64, 37_000, 1_234_567, 999_999_999, 100_000_000_000] {
            let mut s = OpStats::default();
            s.record(value, 0, 0);
            let got = s.hist.value_at_quantile(0.5) as f64;
            let err = (got - value as f64).abs() / value as f64;
            assert!(err <= 0.01, "{value} ns read back as {got} ({:.3}% off)", err * 100.0);
        }
    }

    #[test]
    fn merging_adds_counts_and_keeps_the_extremes() {
        let mut a = OpStats::default();
        let mut b = OpStats::default();
        for ns in [1_000, 2_000, 3_000] {
            a.record(ns, 4096, 1);
        }
        b.record(50_000_000, 8192, 2);
        b.errors = 1;
        a.merge(&b);
        assert_eq!((a.count, a.bytes, a.transactions, a.errors), (4, 4096 * 3 + 8192, 5, 1));
        let lat = a.latency();
        assert!((lat.min_us - 1.0).abs() < 0.01);
        assert!((lat.max_us - 50_000.0).abs() / 50_000.0 < 0.01);
        assert_eq!(a.buckets().iter().map(|b| b.1).sum::<u64>(), 4);
    }

    #[test]
    fn a_histogram_read_back_from_its_buckets_has_the_same_buckets() {
        let mut a = OpStats::default();
        for ns in [1_000, 1_003, 2_000, 77_777, 5_000_000_000] {
            a.record(ns, 0, 0);
        }
        let back = OpStats::from_buckets(&a.buckets());
        assert_eq!(back.buckets(), a.buckets());
        assert_eq!(back.hist.len(), 5);
    }
}
