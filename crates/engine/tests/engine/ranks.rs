//! What a job of several ranks needs of the engine: a gate between the untimed setup and the
//! measured start, a stop from outside that counts as a stonewall, and the ranks' results
//! merged into one.

use crate::common::{op, try_run_opts, workload};
use fslab_engine::result::StopReason;
use fslab_engine::run::{merge_ranks, StartGate};
use fslab_engine::workload::OpKind;
use fslab_engine::RunOptions;
use fslab_testkit::tempdir;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

fn reads(stop: &str, threads: u32) -> fslab_engine::Workload {
    workload(&format!(
        r#"
name = "reads"
seed = 3

[stop]
{stop}

[[fileset]]
name = "data"
files = 3
dirs = 0
size = "64k"

[[group]]
name = "g"
threads = {threads}
fileset = "data"

[[group.op]]
op = "read"
bs = "4k"
"#
    ))
}

#[test]
fn the_start_gate_is_called_once_after_the_setup_and_the_threads_end_is_told() {
    let dir = tempdir();
    let root = dir.path().to_path_buf();
    let calls = Arc::new(AtomicU64::new(0));
    let files_seen = Arc::new(AtomicU64::new(0));
    let ended = Arc::new(AtomicBool::new(false));
    let (c, f, e) = (calls.clone(), files_seen.clone(), ended.clone());
    let gate = StartGate(Arc::new(move || {
        c.fetch_add(1, Ordering::SeqCst);
        assert!(!e.load(Ordering::SeqCst), "no thread has ended before the start");
        let n = walk(&root);
        f.store(n, Ordering::SeqCst);
    }));
    let r = try_run_opts(
        &reads("ops = 50", 2),
        RunOptions {
            dir: dir.path().to_path_buf(),
            start_gate: Some(gate),
            stopped: Some(ended.clone()),
            ..RunOptions::default()
        },
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    // The three files of the fileset, and fslab's marker of the files it made.
    assert_eq!(
        files_seen.load(Ordering::SeqCst),
        4,
        "the gate sees the fileset laid out"
    );
    assert_eq!(r.totals.ops, 50);
    assert!(ended.load(Ordering::SeqCst), "the threads' end was told");
}

fn walk(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir).map_or(0, |d| {
        d.flatten()
            .map(|e| match e.file_type() {
                Ok(t) if t.is_dir() => walk(&e.path()),
                Ok(t) if t.is_file() => 1,
                _ => 0,
            })
            .sum()
    })
}

#[test]
fn a_peer_stop_ends_an_unbounded_run_as_a_stonewall() {
    let dir = tempdir();
    let stop = Arc::new(AtomicBool::new(false));
    let s = stop.clone();
    let setter = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        s.store(true, Ordering::SeqCst);
    });
    let r = try_run_opts(
        &reads("time = \"60s\"", 2),
        RunOptions {
            dir: dir.path().to_path_buf(),
            peer_stop: Some(stop),
            ..RunOptions::default()
        },
    )
    .unwrap_or_else(|e| panic!("{e}"));
    setter.join().unwrap();
    assert_eq!(r.stopped_by, StopReason::Stonewall);
    assert!(r.duration < Duration::from_secs(10), "{:?}", r.duration);
    assert!(op(&r, OpKind::Read).count > 0);
}

#[test]
fn merged_ranks_sum_their_counts_and_add_their_histograms() {
    let runs: Vec<_> = [30u64, 50, 70]
        .iter()
        .map(|n| {
            let dir = tempdir();
            try_run_opts(
                &reads(&format!("ops = {n}"), 2),
                RunOptions {
                    dir: dir.path().to_path_buf(),
                    ..RunOptions::default()
                },
            )
            .unwrap_or_else(|e| panic!("{e}"))
        })
        .collect();
    let m = merge_ranks(&runs);
    assert_eq!(m.totals.ops, 150);
    assert_eq!(
        m.totals.bytes_read,
        runs.iter().map(|r| r.totals.bytes_read).sum::<u64>()
    );
    assert_eq!(m.totals.bytes_read, 150 * 4096);
    let read = op(&m, OpKind::Read);
    assert_eq!(read.count, 150);
    assert_eq!(
        read.histogram.iter().map(|b| b.1).sum::<u64>(),
        150,
        "one bucket entry per op"
    );
    // Each bucket's count is the sum of the ranks' counts in that bucket.
    for (ns, n) in &read.histogram {
        let sum: u64 = runs
            .iter()
            .flat_map(|r| {
                op(r, OpKind::Read)
                    .histogram
                    .iter()
                    .filter(|b| b.0 == *ns)
                    .map(|b| b.1)
                    .collect::<Vec<_>>()
            })
            .sum();
        assert_eq!(*n, sum, "bucket {ns}");
    }
    let lats: Vec<_> = runs.iter().map(|r| op(r, OpKind::Read).latency).collect();
    assert_eq!(
        read.latency.min_us,
        lats.iter().map(|l| l.min_us).fold(f64::INFINITY, f64::min)
    );
    assert_eq!(read.latency.max_us, lats.iter().map(|l| l.max_us).fold(0.0, f64::max));
    // The median is read from the merged buckets: a bucket bound at or above half the ops.
    let mut below = 0;
    let p50_ns = read
        .histogram
        .iter()
        .find(|b| {
            below += b.1;
            below * 2 >= 150
        })
        .unwrap()
        .0;
    assert_eq!(read.latency.p50_us, p50_ns as f64 / 1000.0);
    // Six threads, numbered 0..6 in one group.
    let numbers: Vec<u32> = m.threads.iter().map(|t| t.thread).collect();
    assert_eq!(numbers, [0, 1, 2, 3, 4, 5]);
    assert_eq!(m.threads.iter().map(|t| t.ops).sum::<u64>(), 150);
    assert_eq!(m.setup[0].files, 9);
    assert_eq!(m.duration, runs.iter().map(|r| r.duration).max().unwrap());
    let series_ops: u64 = m.series.iter().map(|s| s.ops).sum();
    assert_eq!(series_ops, 150, "the series adds up to the totals");
}
