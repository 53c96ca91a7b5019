//! Stop conditions: time, operations, bytes, stonewalling, streams that end, the ramp and the
//! final sync.

use crate::common::{op, run_ok, workload};
use fslab_engine::result::StopReason;
use fslab_engine::workload::OpKind;
use fslab_testkit::tempdir;
use std::time::{Duration, Instant};

/// Random 4k reads of one 1m file by `threads` threads, with the given stop table.
pub(crate) fn reads(threads: u32, stop: &str) -> fslab_engine::Workload {
    workload(&format!(
        r#"
name = "reads"
seed = 17

[stop]
{stop}

[[fileset]]
name = "data"
files = 1
dirs = 0
size = "1m"

[[group]]
name = "g"
threads = {threads}
fileset = "data"

[[group.op]]
op = "read"
size = "12k"
bs = "4k"
"#
    ))
}

#[test]
fn stop_time_ends_the_run_after_that_time() {
    // How long after its deadline a thread sees the stop is up to the scheduler: the measured
    // time is at least the limit, and no longer than the call took.
    let wall = Instant::now();
    let r = run_ok(&reads(1, "time = \"1s\""), tempdir().path());
    let wall = wall.elapsed();
    assert_eq!(r.stopped_by, StopReason::Time);
    assert!(
        r.duration >= Duration::from_secs(1) && r.duration <= wall,
        "duration {:?} is outside [1s, {wall:?} the whole call took]",
        r.duration
    );
    assert!(op(&r, OpKind::Read).count > 0);
}

/// No time (FFSB's time=0): the filesets are set up and nothing is measured, whoever would
/// have started first; with one thread or several, in threads or processes.
#[test]
fn stop_time_zero_sets_up_and_runs_no_operation() {
    for threads in [1, 3] {
        for processes in [false, true] {
            for _ in 0..5 {
                let d = tempdir();
                let mut w = reads(threads, "time = \"0s\"");
                w.processes = processes;
                let r = run_ok(&w, d.path());
                assert_eq!(
                    r.stopped_by,
                    StopReason::Time,
                    "{threads} threads, processes {processes}"
                );
                assert_eq!(r.totals.ops, 0, "{threads} threads, processes {processes}");
                assert_eq!(r.setup[0].files, 1);
                assert_eq!(std::fs::metadata(d.path().join("data/f0")).unwrap().len(), 1 << 20);
            }
        }
    }
}

#[test]
fn stop_ops_ends_the_run_at_exactly_that_many_operations() {
    let r = run_ok(&reads(1, "ops = 37"), tempdir().path());
    assert_eq!(r.stopped_by, StopReason::Ops);
    assert_eq!(op(&r, OpKind::Read).count, 37);
    assert_eq!(r.totals.ops, 37);
}

#[test]
fn stop_ops_is_split_over_the_threads_and_met_exactly() {
    // 101 over 2 threads: 51 + 50.
    let r = run_ok(&reads(2, "ops = 101"), tempdir().path());
    assert_eq!(r.stopped_by, StopReason::Ops);
    assert_eq!(op(&r, OpKind::Read).count, 101);
    assert_eq!(op(&r, OpKind::Read).bytes, 101 * 12 * 1024);
}

#[test]
fn stop_bytes_ends_the_run_once_that_many_bytes_moved() {
    const LIMIT: u64 = 1 << 20;
    // 1m is not a multiple of the 12k each read moves: the last read crosses the limit.
    let r = run_ok(&reads(1, "bytes = \"1m\""), tempdir().path());
    assert_eq!(r.stopped_by, StopReason::Bytes);
    let bytes = r.totals.bytes_read + r.totals.bytes_written;
    assert!(bytes >= LIMIT, "{bytes} bytes moved, under the limit of {LIMIT}");
    assert!(
        bytes < LIMIT + 12 * 1024,
        "{bytes} bytes: more than one read past the limit"
    );
    assert_eq!(op(&r, OpKind::Read).count, LIMIT.div_ceil(12 * 1024));
}

#[test]
fn stonewall_stops_every_thread_when_the_first_finishes() {
    // Group "short" reads its 64k file once and finishes. Group "long" wraps around its file, so
    // it never finishes by itself: only the stonewall ends the run (or the hang guard fails the
    // test), and the workload needs no other stop condition. How far the long stream got before
    // the short one finished is up to the scheduler (on a loaded machine the short thread may
    // wait for a CPU while the long one reads megabytes), so that is not asserted; that it was
    // stopped, and by what, is.
    let w = workload(&fslab_testkit::short_and_long(""));
    let r = run_ok(&w, tempdir().path());
    assert_eq!(r.stopped_by, StopReason::Stonewall);
    let thread = |group: &str| {
        r.threads
            .iter()
            .find(|t| t.group == group)
            .unwrap_or_else(|| panic!("no thread of group {group}: {:?}", r.threads))
    };
    let (short, long) = (thread("short"), thread("long"));
    assert!(short.finished, "the short stream ran out of work: {short:?}");
    assert_eq!(
        (short.ops, short.bytes),
        (16, 64 << 10),
        "the short stream read its whole 64k file, once"
    );
    assert!(
        !long.finished,
        "a wrapping stream cannot run out of work, so it was stopped: {long:?}"
    );
    assert_eq!(op(&r, OpKind::SeqRead).bytes, short.bytes + long.bytes);
}

#[test]
fn stonewall_needs_one_group_that_ends_by_itself() {
    let text = |short_wraps: bool| {
        format!(
            r#"
name = "stonewall"
[stop]
stonewall = true
[[fileset]]
name = "data"
files = 2
size = "64k"
[[group]]
name = "short"
fileset = "data"
[[group.op]]
op = "seqread"
wrap = {short_wraps}
[[group]]
name = "long"
fileset = "data"
[[group.op]]
op = "seqread"
wrap = true
"#
        )
    };
    fslab_engine::Workload::from_toml(&text(false), "w.toml").unwrap_or_else(|e| panic!("{e}"));
    let e = fslab_engine::Workload::from_toml(&text(true), "w.toml")
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("w.toml:3:1: the workload never stops"), "{e}");
}

#[test]
fn streams_without_wrap_or_limit_end_by_themselves() {
    // Two files of 100000 bytes: 24 whole 4k blocks and a short one of 1696 each.
    let w = workload(
        r#"
name = "streams"
seed = 4

[[fileset]]
name = "data"
files = 2
dirs = 0
size = 100000

[[group]]
name = "g"
threads = 2
fileset = "data"

[[group.op]]
op = "seqread"
scope = "own"
bs = "4k"
"#,
    );
    let r = run_ok(&w, tempdir().path());
    assert_eq!(r.stopped_by, StopReason::Done);
    let s = op(&r, OpKind::SeqRead);
    assert_eq!(s.bytes, 200_000, "both files read once, whole");
    assert_eq!(s.count, 50, "25 reads per file");
}

#[test]
fn stream_transactions_count_only_whole_blocks() {
    // One file of 100000 bytes: 24 whole 4k blocks and a short one of 1696.
    let w = workload(
        r#"
name = "streams"
seed = 4

[[fileset]]
name = "data"
files = 1
dirs = 0
size = 100000

[[group]]
name = "g"
fileset = "data"

[[group.op]]
op = "seqread"
bs = "4k"
"#,
    );
    let r = run_ok(&w, tempdir().path());
    let s = op(&r, OpKind::SeqRead);
    assert_eq!((s.count, s.bytes), (25, 100_000));
    assert_eq!(s.transactions, 24, "the short last read of the file is no transaction");
}

#[test]
fn shared_stream_reads_the_whole_fileset_once() {
    let w = workload(
        r#"
name = "shared"
seed = 4

[[fileset]]
name = "data"
files = 3
dirs = 2
size = "64k"

[[group]]
name = "g"
threads = 2
fileset = "data"

[[group.op]]
op = "seqread"
scope = "shared"
bs = "16k"
"#,
    );
    let r = run_ok(&w, tempdir().path());
    assert_eq!(r.stopped_by, StopReason::Done);
    let s = op(&r, OpKind::SeqRead);
    assert_eq!((s.count, s.bytes), (12, 3 * 64 * 1024));
}

#[test]
fn the_ramp_is_left_out_and_marked_in_the_series() {
    let wall = Instant::now();
    let r = run_ok(&reads(1, "ramp = \"1s\"\ntime = \"1s\""), tempdir().path());
    let wall = wall.elapsed();
    assert_eq!(r.stopped_by, StopReason::Time);
    assert_eq!(r.ramp, Duration::from_secs(1));
    // The measured time follows the ramp: at least the limit, and the ramp is not in it.
    assert!(
        r.duration >= Duration::from_secs(1) && r.duration + r.ramp <= wall,
        "measured duration {:?} should be the 1s after the 1s ramp, within the {wall:?} of the call",
        r.duration
    );
    let marked: Vec<_> = r.series.iter().map(|s| (s.t, s.ramp)).collect();
    assert!(
        r.series.iter().any(|s| s.ramp),
        "no second of the series is marked ramp: (t, ramp) = {marked:?}"
    );
    assert!(
        r.series.iter().any(|s| !s.ramp),
        "no second after the ramp in the series: {marked:?}"
    );
    // The ramp's operations are not in the totals: they are only those after it.
    let after: u64 = r.series.iter().filter(|s| !s.ramp).map(|s| s.ops).sum();
    let during: u64 = r.series.iter().filter(|s| s.ramp).map(|s| s.ops).sum();
    assert!(
        r.totals.ops < after + during,
        "the totals ({}) include the ramp's operations ({during})",
        r.totals.ops
    );
}

#[test]
fn final_sync_inside_is_timed_and_reported() {
    let r = run_ok(&reads(1, "ops = 5\nfinal_sync = \"inside\""), tempdir().path());
    assert!(
        r.final_sync.is_some(),
        "final_sync inside: the result has no final_sync time"
    );
    assert!(
        r.duration >= r.final_sync.unwrap(),
        "an inside sync is part of the duration"
    );
    let r = run_ok(&reads(1, "ops = 5\nfinal_sync = \"outside\""), tempdir().path());
    assert!(
        r.final_sync.is_some(),
        "final_sync outside: the result has no final_sync time"
    );
    let r = run_ok(&reads(1, "ops = 5"), tempdir().path());
    assert!(r.final_sync.is_none(), "no final sync asked for, but one is reported");
}

/// The measured phase starts when every worker is ready: a ring of 4096 buffers of 64 KiB (256
/// MiB to fill) takes far longer to make than the 64 reads after it, and none of it is measured.
#[test]
fn a_worker_s_own_setup_is_left_out_of_the_measured_time() {
    let w = workload(
        "name = \"init\"\nseed = 1\nstop = { ops = 64 }\n\
         [[fileset]]\nname = \"d\"\nfiles = 1\ndirs = 0\nsize = \"4m\"\n\
         [[group]]\nname = \"g\"\nfileset = \"d\"\nengine = \"io_uring\"\niodepth = 4096\n\
         [[group.op]]\nop = \"read\"\nsize = \"64k\"\n",
    );
    for processes in [false, true] {
        let mut w = w.clone();
        w.processes = processes;
        let dir = fslab_testkit::tempdir();
        let t = std::time::Instant::now();
        let r = crate::common::run_ok(&w, dir.path());
        let wall = t.elapsed();
        assert_eq!(r.totals.ops, 64);
        assert!(
            r.duration < wall / 2,
            "processes = {processes}: the measured {:?} of a run of {wall:?} includes the worker's setup",
            r.duration
        );
    }
}
