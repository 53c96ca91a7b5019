//! The per-second series (operations, bytes and latency of each second) and the streams' file
//! handling.

use crate::common::{op, run_ok, workload};
use fslab_engine::workload::OpKind;
use fslab_engine::RunOptions;
use fslab_testkit::tempdir;

#[test]
fn the_series_adds_up_to_the_totals() {
    let dir = tempdir();
    let w = workload(
        r#"
name = "series"
[stop]
time = "1s"
[[fileset]]
name = "data"
files = 2
dirs = 0
size = "256k"
[[group]]
name = "readers"
threads = 2
fileset = "data"
[[group.op]]
op = "read"
size = "4k"
"#,
    );
    let wall = std::time::Instant::now();
    let r = run_ok(&w, dir.path());
    let wall = wall.elapsed().as_secs_f64();
    let series_ops: u64 = r.series.iter().map(|s| s.ops).sum();
    let series_bytes: u64 = r.series.iter().map(|s| s.bytes_read).sum();
    assert_eq!(series_ops, r.totals.ops, "every operation shows in some second");
    assert_eq!(series_bytes, r.totals.bytes_read);
    // The last sample is the partial second at the end: after the 1 s deadline, and within the
    // call (how soon after the deadline the threads stop is up to the scheduler).
    let last = r.series.last().unwrap().t;
    assert!(
        (1.0..=wall).contains(&last),
        "the last sample, at {last} s, is not the partial second after the 1 s limit ({wall} s in all)"
    );
}

#[test]
fn an_own_seqwrite_empties_its_file_before_writing_it() {
    let dir = tempdir();
    let w = workload(
        r#"
name = "seqwrite"
[stop]
ops = 1
[[fileset]]
name = "data"
files = 1
dirs = 0
size = "1m"
[[group]]
name = "writer"
fileset = "data"
[[group.op]]
op = "seqwrite"
bs = "4k"
"#,
    );
    let r = run_ok(&w, dir.path());
    assert_eq!(
        r.ops.iter().find(|o| o.op == OpKind::SeqWrite).map(|o| o.count),
        Some(1)
    );
    let len = std::fs::metadata(dir.path().join("data/f0")).unwrap().len();
    assert_eq!(len, 4096, "the 1 MiB file was emptied, then one block was written");
}

#[test]
fn own_scope_reads_keep_each_thread_on_its_own_file() {
    let dir = tempdir();
    // With this seed one file is 4 KiB and the other 1 MiB: a 64 KiB read moves 4 KiB on the
    // small one and 64 KiB on the large one, so each thread's bytes show which file it read.
    let w = workload(
        r#"
name = "own"
seed = 3
[stop]
ops = 20
[[fileset]]
name = "data"
files = 2
dirs = 0
size = { table = [["4k", 1], ["1m", 1]] }
[[group]]
name = "readers"
threads = 2
fileset = "data"
[[group.op]]
op = "read"
size = "64k"
bs = "4k"
scope = "own"
"#,
    );
    let r = run_ok(&w, dir.path());
    let size = |f: &str| std::fs::metadata(dir.path().join("data").join(f)).unwrap().len();
    let sizes = (size("f0"), size("f1"));
    assert!(
        sizes == (4096, 1 << 20) || sizes == (1 << 20, 4096),
        "the seed gives the files different sizes: {sizes:?}"
    );
    // Thread k reads file k: 4 KiB per read from the small file, 64 KiB from the large one.
    let moved = |file_size: u64| 10 * file_size.min(65536);
    let bytes: Vec<(u32, u64)> = r.threads.iter().map(|t| (t.thread, t.bytes)).collect();
    assert_eq!(bytes, vec![(0, moved(sizes.0)), (1, moved(sizes.1))]);
}

#[test]
fn groups_on_one_fileset_take_own_files_of_their_own() {
    let dir = tempdir();
    // Two groups of one writer each on two files: the second group's thread comes after the
    // first's, so each empties and writes a file of its own (IOzone's mixed workload makes each
    // child a group of one this way).
    let w = workload(
        r#"
name = "two"
[stop]
ops = 2
[[fileset]]
name = "data"
files = 2
dirs = 0
size = "64k"
[[group]]
name = "a"
fileset = "data"
[[group.op]]
op = "seqwrite"
bs = "4k"
[[group]]
name = "b"
fileset = "data"
[[group.op]]
op = "seqwrite"
bs = "4k"
"#,
    );
    assert_eq!((w.thread_on_fileset(0, 0), w.thread_on_fileset(1, 0)), (0, 1));
    let r = run_ok(&w, dir.path());
    assert_eq!(r.totals.ops, 2);
    let size = |f: &str| std::fs::metadata(dir.path().join("data").join(f)).unwrap().len();
    assert_eq!(
        (size("f0"), size("f1")),
        (4096, 4096),
        "each emptied and wrote one block"
    );
}

/// Reads with a 2 ms pause after each: at most 500 in any second.
const PAUSED_READS: &str = r#"
name = "paused"
[stop]
time = "1500ms"
[[fileset]]
name = "data"
files = 2
dirs = 0
size = "256k"
[[group]]
name = "readers"
threads = 2
fileset = "data"
delay = "2ms"
[[group.op]]
op = "read"
size = "4k"
"#;

#[test]
fn every_second_carries_the_latency_of_its_operations() {
    seconds_carry_their_latency(false);
}

#[test]
fn every_second_of_worker_processes_carries_their_latency() {
    // The buckets are written by the processes and read by the monitor: they must be in the
    // memory the two share, not on the heap each process has its own copy of.
    seconds_carry_their_latency(true);
}

fn seconds_carry_their_latency(processes: bool) {
    let dir = tempdir();
    let mut w = workload(PAUSED_READS);
    w.processes = processes;
    let r = run_ok(&w, dir.path());
    assert!(
        r.series.len() >= 2,
        "a second and a half gives two samples: {:?}",
        r.series
    );
    for s in &r.series {
        let Some(l) = s.latency else {
            assert_eq!(s.ops, 0, "a second with operations has their latency: {s:?}");
            continue;
        };
        // An operation ending while the monitor reads a thread's counters lands in neighbouring
        // seconds of the two figures; with 2 ms between each thread's reads, one or two each.
        assert!(
            l.ops.abs_diff(s.ops) <= 4,
            "every operation of the second is timed, give or take the two threads' in flight: {s:?}"
        );
        assert!(l.ops <= 2 * 500 + 2, "two threads pausing 2 ms after each read: {s:?}");
        assert!(
            0.0 < l.p50_us
                && l.p50_us <= l.p90_us
                && l.p90_us <= l.p95_us
                && l.p95_us <= l.p99_us
                && l.p99_us <= l.max_us,
            "percentiles in order: {l:?}"
        );
        assert!(l.mean_us > 0.0 && l.mean_us <= l.max_us * 1.02, "{l:?}");
    }
    // The seconds together agree with the run's own histogram of the reads.
    let read = op(&r, OpKind::Read);
    let timed: u64 = r.series.iter().filter_map(|s| s.latency).map(|l| l.ops).sum();
    assert_eq!(timed, read.count);
    let max = r
        .series
        .iter()
        .filter_map(|s| s.latency)
        .map(|l| l.max_us)
        .fold(0.0, f64::max);
    assert!(
        (max - read.latency.max_us).abs() <= 0.03 * read.latency.max_us,
        "the slowest second's max {max} µs is the run's max {} µs",
        read.latency.max_us
    );
    let sum_us: f64 = r
        .series
        .iter()
        .filter_map(|s| s.latency)
        .map(|l| l.mean_us * l.ops as f64)
        .sum();
    let mean = sum_us / timed as f64;
    assert!(
        (mean - read.latency.mean_us).abs() <= 0.02 * read.latency.mean_us,
        "the seconds' mean {mean} µs is the run's mean {} µs",
        read.latency.mean_us
    );
}

#[test]
fn progress_hands_out_each_seconds_latency_buckets() {
    let dir = tempdir();
    let opts = RunOptions {
        dir: dir.path().to_path_buf(),
        ..RunOptions::default()
    };
    let mut seen = Vec::new();
    let r = fslab_engine::run(&workload(PAUSED_READS), &opts, &mut |p| {
        seen.push((p.second.clone(), p.latency.clone()));
    })
    .unwrap_or_else(|e| panic!("the run failed: {e}"));
    assert!(!seen.is_empty(), "at least the first second is handed out");
    for (second, buckets) in &seen {
        let l = second.latency.expect("reads in every full second");
        assert_eq!(buckets.count(), l.ops);
        assert_eq!(buckets.percentile_ns(95.0).map(|ns| ns as f64 / 1000.0), Some(l.p95_us));
        assert_eq!(buckets.max_ns().map(|ns| ns as f64 / 1000.0), Some(l.max_us));
        // Any percentile, not only the ones the series keeps.
        let p97 = buckets.percentile_ns(97.0).expect("timed reads") as f64 / 1000.0;
        assert!(
            l.p95_us <= p97 && p97 <= l.p99_us,
            "{p97} µs is between p95 and p99 of {l:?}"
        );
    }
    assert_eq!(
        &r.series[..seen.len()],
        seen.iter().map(|s| s.0.clone()).collect::<Vec<_>>()
    );
}

#[test]
fn without_timing_the_seconds_have_no_latency() {
    let dir = tempdir();
    let opts = RunOptions {
        dir: dir.path().to_path_buf(),
        no_latency: true,
        ..RunOptions::default()
    };
    let r = fslab_engine::run(&workload(PAUSED_READS), &opts, &mut |_| {}).unwrap_or_else(|e| panic!("{e}"));
    assert!(r.totals.ops > 0);
    assert!(r.series.iter().all(|s| s.latency.is_none()), "{:?}", r.series);
}
