//! `processes = true`: each worker is a process forked after the setup. Its figures come back
//! whole, the run's shared state (stonewall, stop, interruption) reaches it, and a worker that
//! dies stops the run with an error that says so. (Which process makes which call is checked
//! under strace by the CLI's tests.)

use crate::common::{data_files, op, run_ok, try_run, try_run_opts, workload};
use fslab_engine::result::{Status, StopReason};
use fslab_engine::workload::OpKind;
use fslab_engine::{RunOptions, RunResult};
use fslab_testkit::tempdir;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// `threads` writers, each filling its own 256 KiB file 4 KiB at a time, as processes; a run
/// with a time limit goes round its file until then.
fn writers(threads: u32, stop: &str) -> fslab_engine::Workload {
    let wrap = stop.contains("time");
    workload(&format!(
        "name = \"w\"\nseed = 3\nprocesses = true\n[stop]\n{stop}\n\
         [[fileset]]\nname = \"data\"\nfiles = {threads}\ndirs = 0\nsize = \"256k\"\nprealloc = false\n\
         [[group]]\nname = \"g\"\nthreads = {threads}\nfileset = \"data\"\n\
         [[group.op]]\nop = \"seqwrite\"\nbs = \"4k\"\nscope = \"own\"\nwrap = {wrap}\n"
    ))
}

/// The processes the thread `tid` of this process has forked and not yet reaped.
fn children_of(tid: i32) -> Vec<i32> {
    std::fs::read_to_string(format!("/proc/self/task/{tid}/children"))
        .unwrap_or_default()
        .split_whitespace()
        .map(|p| p.parse().expect("a pid"))
        .collect()
}

/// Runs `w` in `dir` on a thread of its own, handing that thread's id to `meanwhile` while the
/// run goes on; a run that takes over a minute fails the test.
fn run_watched(w: fslab_engine::Workload, opts: RunOptions, meanwhile: impl FnOnce(i32)) -> RunResult {
    let (tid_tx, tid_rx) = mpsc::channel();
    let (done_tx, done_rx) = mpsc::channel();
    std::thread::spawn(move || {
        tid_tx.send(unsafe { libc::gettid() }).unwrap();
        let _ = done_tx.send(fslab_engine::run(&w, &opts, &mut |_| {}));
    });
    let tid = tid_rx.recv().unwrap();
    meanwhile(tid);
    let r = done_rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the run ended within a minute")
        .unwrap_or_else(|e| panic!("the run failed to start: {e}"));
    assert_eq!(children_of(tid), Vec::<i32>::new(), "every worker process was reaped");
    r
}

/// Waits until thread `tid` has `n` children, and returns them.
fn wait_for_children(tid: i32, n: usize) -> Vec<i32> {
    let t = Instant::now();
    loop {
        let c = children_of(tid);
        if c.len() >= n {
            return c;
        }
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "{n} worker processes never appeared: {c:?}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn processes_hand_back_their_counts_latencies_and_files() {
    let dir = tempdir();
    let r = run_ok(&writers(3, ""), dir.path());
    assert_eq!(r.stopped_by, StopReason::Done);
    let w = op(&r, OpKind::SeqWrite);
    assert_eq!((w.count, w.bytes, w.errors), (3 * 64, 3 * 256 * 1024, 0));
    // The histograms came back through the pipe: every write has a latency.
    assert!(
        w.latency.min_us > 0.0 && w.latency.max_us >= w.latency.p50_us,
        "{:?}",
        w.latency
    );
    let threads: Vec<(u32, u64, bool)> = r.threads.iter().map(|t| (t.thread, t.ops, t.finished)).collect();
    assert_eq!(threads, [(0, 64, true), (1, 64, true), (2, 64, true)]);
    assert!(r
        .threads
        .iter()
        .all(|t| t.secs > 0.0 && t.secs <= r.duration.as_secs_f64() + 1e-6));
    let sizes: Vec<u64> = data_files(&dir.path().join("data")).into_iter().map(|f| f.1).collect();
    assert_eq!(sizes, [256 * 1024; 3]);
    // The processes' CPU time is the run's: they were waited for before it was taken.
    assert!(r.cpu.process_user_secs + r.cpu.process_system_secs > 0.0, "{:?}", r.cpu);
}

#[test]
fn a_process_that_finishes_first_stonewalls_the_others() {
    let dir = tempdir();
    // A short stream of 16 reads and one that wraps for ever: only the stonewall ends the run.
    let text = fslab_testkit::short_and_long("").replace("seed = 1\n", "seed = 1\nprocesses = true\n");
    let w = workload(&text);
    assert!(w.processes);
    let r = run_ok(&w, dir.path());
    assert_eq!(r.stopped_by, StopReason::Stonewall);
    let long = r.threads.iter().find(|t| t.group == "long").unwrap();
    let short = r.threads.iter().find(|t| t.group == "short").unwrap();
    assert!(short.finished && short.ops == 16, "{short:?}");
    assert!(!long.finished, "{long:?}");
}

#[test]
fn an_interrupted_run_stops_its_processes_and_reaps_them() {
    let dir = tempdir();
    let interrupt = Arc::new(AtomicBool::new(false));
    let opts = RunOptions {
        dir: dir.path().to_path_buf(),
        interrupt: Some(interrupt.clone()),
        ..RunOptions::default()
    };
    let t = Instant::now();
    let r = run_watched(writers(2, "time = \"30s\""), opts, |tid| {
        assert_eq!(wait_for_children(tid, 2).len(), 2);
        std::thread::sleep(Duration::from_millis(300));
        interrupt.store(true, Ordering::Relaxed);
    });
    assert!(
        t.elapsed() < Duration::from_secs(10),
        "stopped at once, not at its 30 s"
    );
    assert_eq!((r.status, r.stopped_by), (Status::Ok, StopReason::Interrupted));
    assert!(op(&r, OpKind::SeqWrite).count > 0);
}

#[test]
fn a_worker_process_that_is_killed_stops_the_run_and_says_so() {
    let dir = tempdir();
    let opts = RunOptions {
        dir: dir.path().to_path_buf(),
        ..RunOptions::default()
    };
    let t = Instant::now();
    let r = run_watched(writers(2, "time = \"30s\""), opts, |tid| {
        let victim = wait_for_children(tid, 2)[0];
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(unsafe { libc::kill(victim, libc::SIGKILL) }, 0);
    });
    assert!(
        t.elapsed() < Duration::from_secs(10),
        "stopped at once, not at its 30 s"
    );
    assert_eq!(r.status, Status::Failed);
    let e = r.first_error.expect("an error").error;
    assert!(
        e.message.contains("worker process") && e.message.contains("was killed by signal 9"),
        "{}",
        e.message
    );
}

#[test]
fn processes_refuse_operations_that_change_a_shared_fileset() {
    let text = "name = \"c\"\nprocesses = true\n[[fileset]]\nname = \"data\"\nfiles = 4\nsize = 0\n\
                [[group]]\nname = \"g\"\nfileset = \"data\"\n[[group.op]]\nop = \"create\"\n";
    let e = fslab_engine::Workload::from_toml(text, "c.toml").expect_err("refused");
    let e = e.to_string();
    assert!(
        e.contains("create changes what fileset `data` holds, which only threads share: leave out `processes`"),
        "{e}"
    );
    // Without it the same workload runs.
    let dir = tempdir();
    let w = workload(&text.replace("processes = true\n", "stop = { ops = 8 }\n"));
    assert!(try_run(&w, dir.path()).is_ok());
}

#[test]
fn a_run_of_processes_and_one_of_threads_count_the_same() {
    let dir = tempdir();
    let mut w = writers(2, "");
    let by_processes = run_ok(&w, dir.path());
    w.processes = false;
    let dir2 = tempdir();
    let by_threads = try_run_opts(
        &w,
        RunOptions {
            dir: dir2.path().to_path_buf(),
            ..RunOptions::default()
        },
    )
    .unwrap();
    let counts = |r: &RunResult| (r.totals.ops, r.totals.bytes_written, r.threads.len());
    assert_eq!(counts(&by_processes), counts(&by_threads));
    assert!(by_processes.workload.processes, "the result's workload says how it ran");
    assert!(files_equal(&dir.path().join("data"), &dir2.path().join("data")));
}

fn files_equal(a: &Path, b: &Path) -> bool {
    let read = |d: &Path| -> Vec<Vec<u8>> {
        data_files(d)
            .into_iter()
            .map(|(p, _)| std::fs::read(p).unwrap())
            .collect()
    };
    read(a) == read(b)
}

/// `RunOptions::process_cpu` (IOzone's `-+u`): each worker, process or thread, reports the CPU
/// time its process used over its own time; without it, none.
#[test]
fn process_cpu_is_reported_per_thread_only_when_asked() {
    let dir = tempdir();
    for processes in [true, false] {
        let mut w = writers(2, "");
        w.processes = processes;
        let asked = RunOptions {
            dir: dir.path().to_path_buf(),
            process_cpu: true,
            ..RunOptions::default()
        };
        let r = try_run_opts(&w, asked).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(r.threads.len(), 2);
        for t in &r.threads {
            let cpu = t
                .process_cpu_secs
                .unwrap_or_else(|| panic!("processes {processes}: no CPU time: {t:?}"));
            // Writing 256 KiB takes some CPU time, and a process alone cannot use more than its
            // wall time on each CPU.
            assert!(cpu > 0.0, "processes {processes}: {t:?}");
            let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
            assert!(cpu <= t.secs * cpus + 0.01, "processes {processes}: {t:?}");
        }
        let r = run_ok(&w, dir.path());
        assert!(
            r.threads.iter().all(|t| t.process_cpu_secs.is_none()),
            "{:?}",
            r.threads
        );
    }
}
