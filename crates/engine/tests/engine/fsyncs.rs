//! sysbench's fsyncs in the engine: a group's periodic bursts (`fsync_every`) and its end
//! fsyncs (`fsync_end`), counted as sysbench 1.0.20 counts them.

use crate::common::{op, run_ok, workload};
use fslab_engine::workload::OpKind;
use fslab_engine::RunResult;
use fslab_testkit::tempdir;

/// One thread writing 4 files, a burst of 4 fsyncs after every 3 writes, stopping after `ops`
/// operations, with or without the end fsyncs.
fn writes_with_bursts(ops: u64, end: bool) -> String {
    format!(
        r#"
name = "bursts"
[stop]
ops = {ops}
[[fileset]]
name = "data"
files = 4
dirs = 0
size = "64k"
[[group]]
name = "writer"
fileset = "data"
fsync_every = 3
fsync_end = {end}
[[group.op]]
op = "write"
size = "4k"
"#
    )
}

/// Operations timed: the entries of every histogram.
fn timed(r: &RunResult, kind: OpKind) -> u64 {
    op(r, kind).histogram.iter().map(|b| b.1).sum()
}

#[test]
fn a_burst_stops_where_the_ops_quota_ends() {
    let dir = tempdir();
    // w w w F F F F  w w w F F F F  w w w F F F F: 21 operations. With fewer, the run ends inside
    // a burst, as sysbench 1.0.20 ends after exactly --events events (checked against it: 17,
    // 19, 20 and 21 events give 9 writes and 8, 10, 11 and 12 periodic fsyncs).
    for (ops, writes, fsyncs) in [
        (21, 9, 12),
        (20, 9, 11),
        (19, 9, 10),
        (17, 9, 8),
        (16, 8, 8),
        (13, 6, 7),
    ] {
        let r = run_ok(&workload(&writes_with_bursts(ops, false)), dir.path());
        assert_eq!(
            (op(&r, OpKind::Write).count, op(&r, OpKind::Fsync).count, r.totals.ops),
            (writes, fsyncs, ops),
            "stop.ops = {ops}"
        );
        assert_eq!(
            timed(&r, OpKind::Fsync),
            fsyncs,
            "a burst's fsyncs are events, and timed"
        );
    }
}

#[test]
fn the_end_fsyncs_are_counted_but_neither_timed_nor_in_the_quota() {
    let dir = tempdir();
    // 10 operations: 3 writes, 4 fsyncs, 3 writes; then the 4 end fsyncs.
    let r = run_ok(&workload(&writes_with_bursts(10, true)), dir.path());
    assert_eq!(op(&r, OpKind::Write).count, 6);
    assert_eq!(op(&r, OpKind::Fsync).count, 8, "4 in the burst, 4 at the end");
    assert_eq!(timed(&r, OpKind::Fsync), 4, "only the burst's fsyncs are timed");
    assert_eq!(timed(&r, OpKind::Write), 6);
    let series_ops: u64 = r.series.iter().map(|s| s.ops).sum();
    let series_timed: u64 = r.series.iter().filter_map(|s| s.latency).map(|l| l.ops).sum();
    assert_eq!((series_ops, series_timed), (14, 10), "{:?}", r.series);
}

#[test]
fn threads_of_one_generator_share_the_budget_and_the_bursts() {
    let dir = tempdir();
    // 4 threads, one generator: the 21 operations of one thread's run above, whichever thread
    // takes each. Without it each thread makes its own 5 or 6, and its own bursts: 12 writes
    // and 9 fsyncs.
    let text = writes_with_bursts(21, false).replace(
        "fsync_every = 3",
        "threads = 4\nshared_requests = true\nfsync_every = 3",
    );
    for _ in 0..3 {
        let r = run_ok(&workload(&text), dir.path());
        assert_eq!(
            (op(&r, OpKind::Write).count, op(&r, OpKind::Fsync).count, r.totals.ops),
            (9, 12, 21)
        );
    }
}

#[test]
fn one_generator_is_refused_where_it_cannot_apply() {
    let text =
        writes_with_bursts(21, false).replace("fsync_every = 3", "shared_requests = true\nfsync_every = 5000000000");
    let e = fslab_engine::Workload::from_toml(&text, "w.toml")
        .expect_err("refused")
        .to_string();
    assert!(
        e.starts_with("w.toml:") && e.contains("shared_requests takes an fsync_every of at most 4294967295"),
        "{e}"
    );
}
