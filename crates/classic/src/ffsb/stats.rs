//! FFSB 6.0's `[stats]`: a threadgroup with `enable_stats=1` times each system call its
//! operations make (`fh.c`, `fileops.c`) and prints, after its table, each call's minimum,
//! average and maximum in milliseconds and how many were made, then with `enable_range=1` how
//! many fell in each `msec_range` (`ffsb_stats.c`).
//!
//! FFSB times `open` (every open, a create's too), `read`, `write`, `lseek`, `close`, `unlink`
//! (delete) and `stat` (the stat operation only: the `stat()` that reads a file's size before
//! read and write is not timed). It names `create` too, but never times one. `ignore=<call>`
//! leaves a call out. The engine times the same calls (`call_latency`), with its own clock:
//! FFSB reads `gettimeofday()`, in whole microseconds; fslab keeps nanoseconds, so its minimum,
//! average and maximum are the exact ones, and a call goes to the range its whole microseconds
//! fall in, as FFSB's would, to within the engine's histogram's resolution (under 1%).

use fslab_engine::calls::Call;
use fslab_engine::histogram::OpStats;
use fslab_engine::result::CallResult;
use serde::Serialize;
use std::fmt::Write as _;

/// A call FFSB can time, in the order it prints them (`syscall_names`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Syscall {
    Open,
    Read,
    Write,
    Create,
    Lseek,
    Unlink,
    Close,
    Stat,
}

impl Syscall {
    pub const ALL: [Syscall; 8] = [
        Syscall::Open,
        Syscall::Read,
        Syscall::Write,
        Syscall::Create,
        Syscall::Lseek,
        Syscall::Unlink,
        Syscall::Close,
        Syscall::Stat,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Syscall::Open => "open",
            Syscall::Read => "read",
            Syscall::Write => "write",
            Syscall::Create => "create",
            Syscall::Lseek => "lseek",
            Syscall::Unlink => "unlink",
            Syscall::Close => "close",
            Syscall::Stat => "stat",
        }
    }

    /// The call `ignore=<text>` names: as FFSB's `ffsb_stats_str2syscall`, the first whose name
    /// begins the text, in any case (`ignore=READS` is read).
    pub fn from_ignore(text: &str) -> Option<Syscall> {
        Syscall::ALL.into_iter().find(|s| {
            text.get(..s.name().len())
                .is_some_and(|head| head.eq_ignore_ascii_case(s.name()))
        })
    }

    /// The engine's timing of this call; none for create, which FFSB never times.
    fn engine(self) -> Option<Call> {
        match self {
            Syscall::Open => Some(Call::Open),
            Syscall::Read => Some(Call::Read),
            Syscall::Write => Some(Call::Write),
            Syscall::Create => None,
            Syscall::Lseek => Some(Call::Lseek),
            Syscall::Unlink => Some(Call::Unlink),
            Syscall::Close => Some(Call::Close),
            Syscall::Stat => Some(Call::Stat),
        }
    }
}

/// A threadgroup's `[stats]` with `enable_stats=1`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StatsSpec {
    /// The calls `ignore` names: left out of the block. FFSB does not time them at all; the
    /// engine times every kind, and its figures for these stay in the run's `calls`.
    pub ignore: Vec<Syscall>,
    /// With `enable_range=1`: each `msec_range`, in whole microseconds as FFSB keeps them
    /// (`(uint32_t)(ms * 1000)`), in FFSB's order: the profile's last line first.
    pub ranges: Vec<(u32, u32)>,
}

impl StatsSpec {
    /// A `msec_range` bound as FFSB keeps it: milliseconds times 1000, truncated.
    pub fn micros(ms: f64) -> u32 {
        (ms * 1000.0) as u32
    }
}

/// One call's line of FFSB's statistics, and its ranges.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallLine {
    pub call: Syscall,
    pub min_ms: f64,
    pub avg_ms: f64,
    pub max_ms: f64,
    pub calls: u64,
    /// (range's lowest µs, highest µs, calls in it), one per range.
    pub ranges: Vec<(u32, u32, u64)>,
}

/// One threadgroup's statistics: the calls it made, in FFSB's order.
pub fn lines(spec: &StatsSpec, group: &str, measured: &[CallResult]) -> Vec<CallLine> {
    Syscall::ALL
        .into_iter()
        .filter(|s| !spec.ignore.contains(s))
        .filter_map(|s| {
            let call = s.engine()?;
            let m = measured.iter().find(|c| c.group == group && c.call == call)?;
            (m.count > 0).then(|| CallLine {
                call: s,
                min_ms: m.latency.min_us / 1000.0,
                avg_ms: m.latency.mean_us / 1000.0,
                max_ms: m.latency.max_us / 1000.0,
                calls: m.count,
                ranges: in_ranges(&spec.ranges, &m.histogram_ns),
            })
        })
        .collect()
}

/// How many calls of the histogram fall in each range: a call whose whole microseconds are in
/// [lowest, highest] counts in the first such range, as FFSB's `ffsb_add_data` counts it; a
/// call in none counts nowhere. The calls of a histogram bucket count where its middle falls.
fn in_ranges(ranges: &[(u32, u32)], histogram_ns: &[(u64, u64)]) -> Vec<(u32, u32, u64)> {
    let mut counts: Vec<(u32, u32, u64)> = ranges.iter().map(|&(lo, hi)| (lo, hi, 0)).collect();
    for (lo, hi, n) in OpStats::from_buckets(histogram_ns).spans() {
        let us = (lo + (hi - lo) / 2) / 1000;
        if let Some(r) = counts.iter_mut().find(|r| (r.0 as u64..=r.1 as u64).contains(&us)) {
            r.2 += n;
        }
    }
    counts
}

/// FFSB's `ffsb_statsd_print`.
pub fn render(o: &mut String, lines: &[CallLine]) {
    let _ = write!(
        o,
        "\nSystem Call Latency statistics in millisecs\n=====\n\
         \t\tMin\t\tAvg\t\tMax\t\tTotal Calls\n\
         \t\t========\t========\t========\t============\n"
    );
    for l in lines {
        let _ = writeln!(
            o,
            "[{:>7}]\t{:.6}\t{:.6}\t{:.6}\t{:>12}",
            l.call.name(),
            l.min_ms,
            l.avg_ms,
            l.max_ms,
            l.calls
        );
        if l.ranges.is_empty() {
            let _ = writeln!(o, "   -");
            continue;
        }
        for (i, (lo, hi, n)) in l.ranges.iter().enumerate() {
            let _ = writeln!(
                o,
                "\t\t msec_range[{i}]\t{:.6} - {:.6} : {n:>8}",
                *lo as f64 / 1000.0,
                *hi as f64 / 1000.0
            );
        }
        let _ = writeln!(o);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fslab_engine::histogram::Latency;

    #[test]
    fn ignore_names_a_call_by_its_first_letters_in_any_case() {
        assert_eq!(Syscall::from_ignore("read"), Some(Syscall::Read));
        assert_eq!(Syscall::from_ignore("READS"), Some(Syscall::Read));
        assert_eq!(Syscall::from_ignore("lseek64"), Some(Syscall::Lseek));
        assert_eq!(Syscall::from_ignore("rea"), None);
        assert_eq!(Syscall::from_ignore("fsync"), None);
    }

    #[test]
    fn bounds_are_truncated_microseconds_as_ffsb_keeps_them() {
        assert_eq!(StatsSpec::micros(0.01), 10);
        assert_eq!(StatsSpec::micros(0.5), 500);
        assert_eq!(StatsSpec::micros(1.0009), 1000);
        assert_eq!(StatsSpec::micros(5000.0), 5_000_000);
    }

    #[test]
    fn calls_count_in_the_first_range_their_microseconds_are_in() {
        let mut h = OpStats::default();
        // 9.5 µs is 9, 10.5 is 10, 20.0 is 20, 1 s is in no range.
        for ns in [9_500, 9_500, 10_500, 20_000, 1_000_000_000] {
            h.record(ns, 0, 0);
        }
        let got = in_ranges(&[(0, 10), (10, 20), (20, 50)], &h.buckets());
        // 10 is in two ranges and 20 too: the first of each wins.
        assert_eq!(got, vec![(0, 10, 3), (10, 20, 1), (20, 50, 0)]);
        assert_eq!(in_ranges(&[(0, 10)], &[]), vec![(0, 10, 0)]);
    }

    #[test]
    fn the_block_is_printed_as_ffsb_prints_it() {
        let m = |call, count, min_us, mean_us, max_us| CallResult {
            group: "tg0".into(),
            call,
            count,
            latency: Latency {
                min_us,
                mean_us,
                max_us,
                ..Latency::default()
            },
            histogram_ns: vec![(3_000, count / 2), (1_500_000, count - count / 2)],
        };
        let measured = vec![
            m(Call::Open, 10, 3.0, 4.5, 1500.0),
            m(Call::Close, 10, 1.0, 1.25, 2.0),
            m(Call::Stat, 4, 2.0, 2.0, 2.0),
            m(Call::Fsync, 3, 900.0, 1000.0, 1100.0),
        ];
        let spec = StatsSpec {
            ignore: vec![Syscall::Stat],
            ranges: vec![(0, 10), (10, 2000)],
        };
        let l = lines(&spec, "tg0", &measured);
        assert_eq!(
            l.iter().map(|l| l.call).collect::<Vec<_>>(),
            vec![Syscall::Open, Syscall::Close]
        );
        let mut out = String::new();
        render(&mut out, &l);
        assert_eq!(
            out,
            "\nSystem Call Latency statistics in millisecs\n=====\n\
             \t\tMin\t\tAvg\t\tMax\t\tTotal Calls\n\
             \t\t========\t========\t========\t============\n\
             [   open]\t0.003000\t0.004500\t1.500000\t          10\n\
             \t\t msec_range[0]\t0.000000 - 0.010000 :        5\n\
             \t\t msec_range[1]\t0.010000 - 2.000000 :        5\n\n\
             [  close]\t0.001000\t0.001250\t0.002000\t          10\n\
             \t\t msec_range[0]\t0.000000 - 0.010000 :        5\n\
             \t\t msec_range[1]\t0.010000 - 2.000000 :        5\n\n"
        );
        let mut plain = String::new();
        let no_ranges = lines(&StatsSpec::default(), "tg0", &measured);
        render(&mut plain, &no_ranges[..1]);
        assert!(
            plain.ends_with("[   open]\t0.003000\t0.004500\t1.500000\t          10\n   -\n"),
            "{plain}"
        );
    }
}
