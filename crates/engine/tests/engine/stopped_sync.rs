//! A writing stream with `sync` syncs its file where it stops writing it: at the end of the file,
//! or where the run stops the thread (IOzone's `-e` with stonewalling), inside the thread's time.

use crate::common::{counts, run_ok, workload};
use fslab_engine::result::StopReason;
use fslab_engine::workload::OpKind;
use fslab_engine::Workload;
use fslab_testkit::tempdir;

/// Two writers of one 1 MiB file each in 64 KiB blocks, the second slowed down by `delay`; the
/// first to finish stops the other (stonewall).
fn writers(sync: &str, delay: &str) -> Workload {
    workload(&format!(
        r#"
name = "writers"
seed = 5
stop = {{ stonewall = true }}

[[fileset]]
name = "fast"
files = 1
dirs = 0
size = "1m"
prealloc = false

[[fileset]]
name = "slow"
files = 1
dirs = 0
size = "1m"
prealloc = false

[[group]]
name = "fast"
fileset = "fast"
[[group.op]]
op = "seqwrite"
bs = "64k"
{sync}

[[group]]
name = "slow"
fileset = "slow"
delay = "{delay}"
[[group.op]]
op = "seqwrite"
bs = "64k"
{sync}
"#
    ))
}

fn fsyncs(r: &fslab_engine::RunResult) -> u64 {
    counts(r).iter().find(|c| c.0 == OpKind::Fsync).map_or(0, |c| c.1)
}

#[test]
fn a_stonewalled_stream_syncs_where_it_stopped() {
    let dir = tempdir();
    let r = run_ok(&writers("sync = \"fsync\"", "20ms"), dir.path());
    assert_eq!(r.stopped_by, StopReason::Stonewall);
    let slow = r.threads.iter().find(|t| t.group == "slow").unwrap();
    let fast = r.threads.iter().find(|t| t.group == "fast").unwrap();
    assert!(fast.finished && !slow.finished, "{:?}", r.threads);
    assert!(
        slow.bytes < 1 << 20,
        "the slow writer was stopped inside its file: {}",
        slow.bytes
    );
    // The fast writer's fsync falls in its last block's write; the stopped one fsyncs apart.
    assert_eq!(fsyncs(&r), 1, "{:?}", counts(&r));
    let fsync = r.ops.iter().find(|o| o.op == OpKind::Fsync).unwrap();
    assert_eq!((fsync.errors, fsync.bytes), (0, 0));
}

#[test]
fn without_sync_a_stopped_stream_does_not_fsync() {
    let dir = tempdir();
    let r = run_ok(&writers("", "20ms"), dir.path());
    assert_eq!(r.stopped_by, StopReason::Stonewall);
    assert_eq!(fsyncs(&r), 0, "{:?}", counts(&r));
}

#[test]
fn streams_that_end_on_their_own_sync_once_each() {
    let dir = tempdir();
    let mut w = writers("sync = \"fsync\"", "0ms");
    w.stop.stonewall = false;
    let r = run_ok(&w, dir.path());
    assert!(
        r.threads.iter().all(|t| t.finished && t.bytes == 1 << 20),
        "{:?}",
        r.threads
    );
    assert_eq!(
        fsyncs(&r),
        0,
        "each sync fell in its stream's last write: {:?}",
        counts(&r)
    );
}
