//! `RunOptions::one_process`: a run of one thread that stops by its quotas is made on the calling
//! thread, with no monitor beside it; anything else still has its monitor. (That the process then
//! starts no thread at all is checked under strace by the CLI's IOzone tests.)

use crate::common::{op, try_run_opts};
use crate::stop::reads;
use fslab_engine::result::StopReason;
use fslab_engine::workload::OpKind;
use fslab_engine::RunOptions;
use fslab_testkit::tempdir;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn one_process(dir: &std::path::Path) -> RunOptions {
    RunOptions {
        dir: dir.to_path_buf(),
        one_process: true,
        ..RunOptions::default()
    }
}

#[test]
fn a_run_of_one_thread_by_quota_has_no_monitor_and_meets_its_quota() {
    let dir = tempdir();
    let r = try_run_opts(&reads(1, "ops = 1000"), one_process(dir.path())).expect("the run");
    assert_eq!(r.stopped_by, StopReason::Ops);
    assert_eq!(op(&r, OpKind::Read).count, 1000);
    assert_eq!(op(&r, OpKind::Read).bytes, 1000 * 12 * 1024);
    assert!(r.duration > Duration::ZERO);
    // No monitor, so no second sampled: a monitor always leaves the last, partial one.
    assert!(r.series.is_empty(), "{:?}", r.series);
    // With two threads the monitor is back, and so is the series.
    let r = try_run_opts(&reads(2, "ops = 1000"), one_process(dir.path())).expect("the run");
    assert_eq!((r.stopped_by, r.totals.ops), (StopReason::Ops, 1000));
    assert!(!r.series.is_empty());
}

#[test]
fn a_run_on_the_calling_thread_stops_at_the_callers_interruption() {
    let dir = tempdir();
    let interrupt = Arc::new(AtomicBool::new(false));
    let opts = RunOptions {
        interrupt: Some(interrupt.clone()),
        ..one_process(dir.path())
    };
    // Once the fileset is laid out (its marker written), the run is under way.
    let marker = dir.path().join("data").join(".fslab-fileset");
    let setter = std::thread::spawn(move || {
        let t = Instant::now();
        while !marker.exists() && t.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(10));
        }
        std::thread::sleep(Duration::from_millis(200));
        interrupt.store(true, Ordering::Relaxed);
    });
    let t = Instant::now();
    // Far more operations than the test's time allows.
    let r = try_run_opts(&reads(1, "ops = 1000000000000"), opts).expect("the run");
    setter.join().unwrap();
    assert_eq!(r.stopped_by, StopReason::Interrupted);
    assert!(r.totals.ops > 0 && r.totals.ops < 1_000_000_000_000, "{}", r.totals.ops);
    assert!(t.elapsed() < Duration::from_secs(8), "stopped after {:?}", t.elapsed());
}

#[test]
fn a_time_limit_keeps_its_monitor() {
    let r = try_run_opts(&reads(1, "time = \"300ms\""), one_process(tempdir().path())).expect("the run");
    assert_eq!(r.stopped_by, StopReason::Time);
    assert!(r.duration >= Duration::from_millis(300), "{:?}", r.duration);
    assert!(!r.series.is_empty());
}
