//! Per-operation statistics of one thread: counts, bytes, FFSB transactions and a log-linear
//! latency histogram (HdrHistogram, 2 significant digits: under 1% relative error from 1 ns to an
//! hour). Each thread owns its own and they are merged after the run, so recording takes no lock.
//! A thread counts each latency into its bucket of that layout (a plain array), and the counts
//! become an HdrHistogram once the run reads them: the same one, at a fraction of the cost per
//! operation. The counts are made at the first latency recorded (37 KB): statistics that only
//! count (latency off, untimed fsyncs) cost nothing, so that short runs repeated many times
//! (IOzone's automatic mode) do not sweep the CPU caches between measurements.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// Highest latency the histograms track exactly: one hour, in nanoseconds.
const MAX_NS: u64 = 3_600_000_000_000;

/// Handed from a worker process to the run as data (its histogram as its buckets).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct OpStats {
    pub count: u64,
    pub errors: u64,
    /// Operations that found nothing to work on (no file to read, no directory to remove).
    pub skipped: u64,
    /// Script steps whose outcome was not the one the script expects (dbench's status checks).
    pub mismatches: u64,
    pub bytes: u64,
    pub transactions: u64,
    hist: Hist,
}

/// Buckets of [`Hist::raw`]: HdrHistogram's layout for 1 ns to [`MAX_NS`] at 2 significant
/// digits. Values below 256 have a bucket each; above, each power of two is cut into 128 equal
/// buckets, so that bucket `k` of a value `v` with `s = log2(v) - 7` is `s * 128 + (v >> s)`.
const RAW_LEN: usize = 4608;

/// The bucket of `ns` in [`Hist::raw`]: HdrHistogram's own, so that a count folded in at the
/// bucket's lowest value ([`raw_low`]) lands where recording each value would have put it.
#[inline]
fn raw_index(ns: u64) -> usize {
    let v = ns.clamp(1, MAX_NS);
    if v < 256 {
        return v as usize;
    }
    let shift = 56 - v.leading_zeros();
    shift as usize * 128 + (v >> shift) as usize
}

/// The lowest value of bucket `k` of [`Hist::raw`].
fn raw_low(k: usize) -> u64 {
    if k < 256 {
        return k as u64;
    }
    ((k % 128 + 128) as u64) << (k / 128 - 1)
}

/// A statistic's latencies. A thread counts them into `raw` (a count per bucket: an index and
/// an add, where HdrHistogram's own record runs about 70 instructions, on every timed
/// operation); they become an HdrHistogram when read, merged, or sent as buckets.
#[derive(Debug, Clone, Default)]
struct Hist {
    /// Latencies this thread recorded, made at the first.
    raw: Option<Box<[u64; RAW_LEN]>>,
    /// Latencies merged in, or read back from buckets.
    merged: Option<Histogram<u64>>,
}

impl Hist {
    #[inline]
    fn record(&mut self, ns: u64) {
        self.raw.get_or_insert_with(|| Box::new([0; RAW_LEN]))[raw_index(ns)] += 1;
    }

    /// Everything recorded and merged, as one HdrHistogram; none when nothing was.
    fn view(&self) -> Option<Cow<'_, Histogram<u64>>> {
        let Some(raw) = &self.raw else {
            return self.merged.as_ref().map(Cow::Borrowed);
        };
        let mut h = self.merged.clone().unwrap_or_else(new_histogram);
        for (k, &n) in raw.iter().enumerate().filter(|(_, &n)| n > 0) {
            h.saturating_record_n(raw_low(k), n);
        }
        Some(Cow::Owned(h))
    }

    fn merge(&mut self, other: &Hist) {
        let Some(theirs) = other.nonempty() else {
            return;
        };
        match &mut self.merged {
            Some(mine) => mine.add(&*theirs).expect("histograms share their bounds"),
            None => self.merged = Some(theirs.into_owned()),
        }
    }

    fn reset(&mut self) {
        if let Some(raw) = &mut self.raw {
            raw.fill(0);
        }
        if let Some(h) = &mut self.merged {
            h.reset();
        }
    }

    /// None, or a histogram holding something.
    fn nonempty(&self) -> Option<Cow<'_, Histogram<u64>>> {
        self.view().filter(|h| !h.is_empty())
    }
}

/// A histogram as data: its [`buckets`](OpStats::buckets), which merge back exactly.
impl Serialize for Hist {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        buckets(self.view().as_deref()).serialize(s)
    }
}

impl<'de> Deserialize<'de> for Hist {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Hist, D::Error> {
        let b: Vec<(u64, u64)> = Deserialize::deserialize(d)?;
        Ok(OpStats::from_buckets(&b).hist)
    }
}

/// A histogram's (upper bound in ns, count) pairs of its non-empty buckets.
fn buckets(hist: Option<&Histogram<u64>>) -> Vec<(u64, u64)> {
    let Some(h) = hist else {
        return Vec::new();
    };
    h.iter_recorded()
        .map(|v| (h.highest_equivalent(v.value_iterated_to()), v.count_at_value()))
        .collect()
}

fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_NS, 2).expect("valid histogram bounds")
}

impl OpStats {
    #[inline]
    pub fn record(&mut self, ns: u64, bytes: u64, transactions: u64) {
        self.count += 1;
        self.bytes += bytes;
        self.transactions += transactions;
        self.hist.record(ns);
    }

    /// Times an operation counted already (with [`count_only`](Self::count_only)), whose
    /// latency is known only once its request completes.
    #[inline]
    pub fn record_latency(&mut self, ns: u64) {
        self.hist.record(ns);
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
        self.hist.merge(&other.hist);
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
        let Some(h) = self.hist.nonempty() else {
            return Latency::default();
        };
        let us = |ns: u64| ns as f64 / 1000.0;
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
        for &(ns, n) in buckets.iter().filter(|b| b.1 > 0) {
            s.hist
                .merged
                .get_or_insert_with(new_histogram)
                .saturating_record_n(ns.max(1), n);
        }
        s
    }

    /// The histogram as (upper bound in ns, count) pairs of its non-empty buckets, for storage
    /// and for merging across repeats.
    pub fn buckets(&self) -> Vec<(u64, u64)> {
        buckets(self.hist.view().as_deref())
    }

    /// Each non-empty bucket as (lowest, highest value in ns, count): the span its values were
    /// in, for front-ends that regroup the latencies into their original's buckets.
    pub fn spans(&self) -> Vec<(u64, u64, u64)> {
        let Some(h) = self.hist.view() else {
            return Vec::new();
        };
        h.iter_recorded()
            .map(|v| {
                let at = v.value_iterated_to();
                (h.lowest_equivalent(at), h.highest_equivalent(at), v.count_at_value())
            })
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
    fn statistics_come_back_whole_through_json() {
        let mut s = OpStats::default();
        for ns in [900, 1_000, 50_000, 50_000, 7_000_000] {
            s.record(ns, 4096, 1);
        }
        s.errors = 2;
        s.mismatches = 1;
        let back: OpStats = serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
        assert_eq!((back.count, back.bytes, back.transactions), (5, 5 * 4096, 5));
        assert_eq!((back.errors, back.mismatches), (2, 1));
        assert_eq!(back.buckets(), s.buckets());
        assert_eq!(back.latency(), s.latency());
        let none: OpStats = serde_json::from_str(&serde_json::to_string(&OpStats::default()).unwrap()).unwrap();
        assert!(none.hist.view().is_none() && none.buckets().is_empty());
    }

    #[test]
    fn percentiles_stay_within_one_percent_from_a_microsecond_to_100_seconds() {
        for value in [1_000u64, 37_000, 1_234_567, 999_999_999, 100_000_000_000] {
            let mut s = OpStats::default();
            s.record(value, 0, 0);
            let got = s.hist.view().unwrap().value_at_quantile(0.5) as f64;
            let err = (got - value as f64).abs() / value as f64;
            assert!(err <= 0.01, "{value} ns read back as {got} ({:.3}% off)", err * 100.0);
        }
    }

    #[test]
    fn each_span_holds_its_values_and_no_other_bucket_s() {
        let mut s = OpStats::default();
        let values = [1u64, 255, 256, 257, 1_000, 1_007, 999_999, 5_000_000_000];
        for ns in values {
            s.record(ns, 0, 0);
        }
        let spans = s.spans();
        assert_eq!(spans.iter().map(|t| t.2).sum::<u64>(), values.len() as u64);
        for ns in values {
            let holders: Vec<_> = spans.iter().filter(|t| t.0 <= ns && ns <= t.1).collect();
            assert_eq!(holders.len(), 1, "{ns} ns is in one span: {spans:?}");
        }
        for w in spans.windows(2) {
            assert!(w[0].1 < w[1].0, "spans overlap: {w:?}");
        }
        // Buckets are under 1% of their values wide (2 significant digits).
        assert!(spans
            .iter()
            .all(|&(lo, hi, _)| (hi - lo) as f64 <= 0.01 * lo as f64 || hi - lo < 2));
        assert_eq!(
            s.buckets().iter().map(|b| b.0).collect::<Vec<_>>(),
            spans.iter().map(|t| t.1).collect::<Vec<_>>()
        );
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
    fn counting_only_makes_no_histogram_and_merging_one_in_keeps_its_latencies() {
        let mut counted = OpStats::default();
        counted.count_only(4096, 1);
        assert!(
            counted.hist.raw.is_none() && counted.hist.merged.is_none(),
            "a statistic that only counts allocates no histogram"
        );
        assert_eq!(counted.latency(), Latency::default());
        assert!(counted.buckets().is_empty());
        let mut timed = OpStats::default();
        timed.record(2_000, 4096, 1);
        counted.merge(&timed);
        assert_eq!(counted.count, 2);
        assert_eq!(counted.buckets().iter().map(|b| b.1).sum::<u64>(), 1);
        assert!((counted.latency().max_us - 2.0).abs() < 0.02);
    }

    #[test]
    fn a_histogram_read_back_from_its_buckets_has_the_same_buckets() {
        let mut a = OpStats::default();
        for ns in [1_000, 1_003, 2_000, 77_777, 5_000_000_000] {
            a.record(ns, 0, 0);
        }
        let back = OpStats::from_buckets(&a.buckets());
        assert_eq!(back.buckets(), a.buckets());
        assert_eq!(back.hist.view().map(|h| h.len()), Some(5));
    }

    /// Counting into buckets, then folding them in, gives the HdrHistogram that recording each
    /// value gives: the same buckets, extremes, mean and percentiles, for values at every bucket
    /// edge from 1 ns past the top (an hour), 0 and beyond the top clamped as before.
    #[test]
    fn counted_latencies_fold_into_the_histogram_recording_each_gives() {
        let mut direct = new_histogram();
        let mut s = OpStats::default();
        let mut values = vec![0, 1, 2, 255, 256, 257, 511, 512, 513, 1_000, 1_003, 77_777];
        for shift in 8..42 {
            let p = 1u64 << shift;
            values.extend([p - 1, p, p + 1, p + p / 3, p + p / 128, p + p / 128 - 1]);
        }
        values.extend([MAX_NS - 1, MAX_NS, MAX_NS + 1, u64::MAX]);
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            values.push(x >> (x % 40 + 24));
        }
        for &ns in &values {
            direct.saturating_record(ns.max(1));
            s.record(ns, 0, 0);
        }
        let folded = s.hist.view().expect("a histogram");
        assert_eq!(buckets(Some(&direct)), buckets(Some(&folded)));
        assert_eq!(
            (folded.min(), folded.max(), folded.len()),
            (direct.min(), direct.max(), direct.len())
        );
        assert_eq!(folded.mean(), direct.mean());
        for q in [0.0, 0.5, 0.9, 0.99, 0.999, 1.0] {
            assert_eq!(folded.value_at_quantile(q), direct.value_at_quantile(q), "quantile {q}");
        }
        // Each bucket's lowest value is in that bucket, and the value below it in the one
        // before, up to the bucket of the top.
        assert!(raw_index(MAX_NS) < RAW_LEN && raw_index(u64::MAX) == raw_index(MAX_NS));
        for k in 2..=raw_index(MAX_NS) {
            assert_eq!(raw_index(raw_low(k)), k, "bucket {k}");
            assert_eq!(raw_index(raw_low(k) - 1), k - 1, "below bucket {k}");
        }
    }
}
