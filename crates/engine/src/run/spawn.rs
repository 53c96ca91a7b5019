//! Starting the workers together: the state they share, and one worker per thread of each group
//! with its own seed and its share of the quotas, as a thread or, with `Workload::processes`, as
//! a process of its own (`processes.rs`). The calling thread then runs the monitor until every
//! worker has ended; or, for a run made as one process (`RunOptions::one_process`), is itself
//! the one worker.

use super::monitor::{monitor, Timing};
use super::prepare::Prepared;
use super::processes;
use super::{Progress, RunError, RunOptions};
use crate::cpu::CpuSnapshot;
use crate::io::SharedFile;
use crate::result::{Second, StopReason};
use crate::shm::{Share, Shm};
use crate::worker::{Gate, GroupFiles, LiveCounters, Shared, ThreadOutcome, ThreadPlan, Worker};
use crate::workload::{Group, Workload};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::mpsc;
use std::time::Instant;

/// What the threads did, and what the monitor saw of them.
pub(super) struct Ran {
    /// (group, thread in the group, what it did), in group order.
    pub outcomes: Vec<(usize, u32, ThreadOutcome)>,
    pub timing: Timing,
    /// One entry per second, ramp included.
    pub series: Vec<Second>,
    /// A worker saw the filesystem reach `stop.util`.
    pub util_reached: bool,
}

/// Runs every thread of the workload on the prepared filesets, `bases` being each script
/// thread's directory (per group, per thread) and `opened` the files opened for each group's
/// threads (`open = "shared"`), and watches them until they have all ended.
pub(super) fn run_threads(
    workload: &Workload,
    opts: &RunOptions,
    prepared: &Prepared,
    bases: Vec<Vec<Option<crate::script::ScriptBase>>>,
    opened: &[Vec<SharedFile>],
    seed: u64,
    progress: &mut dyn FnMut(&Progress),
) -> Result<Ran, RunError> {
    let stop = &workload.stop;
    let total_threads = workload.total_threads();
    // Only the monitor ends a run by time, ramp, steady state, fill level or a peer's stop.
    let on_this_thread = opts.one_process
        && total_threads == 1
        && stop.time.is_none()
        && stop.ramp.0.is_zero()
        && stop.steady.is_none()
        && stop.util.is_none()
        && opts.peer_stop.is_none();
    // Where workers made as processes share them as threads do.
    let share = if workload.processes {
        Share::Processes
    } else {
        Share::Threads
    };
    let shared = Shm::new(1, share, |_| Shared {
        // A run of no time (FFSB's time=0) sets up its filesets and measures nothing: stopped
        // before any thread starts, rather than after whatever one managed before the monitor
        // looked.
        stop: AtomicBool::new(stop.time.is_some_and(|t| t.0.is_zero())),
        interrupt: opts.interrupt.clone().filter(|_| on_this_thread),
        measuring: AtomicBool::new(stop.ramp.0.is_zero()),
        stonewall: stop.stonewall,
        child_end: stop.child_end,
        continue_on_error: opts.continue_on_error,
        latency: !opts.no_latency,
        process_cpu: opts.process_cpu,
        // With util_poll only the monitor checks.
        util: stop.util.filter(|_| stop.util_poll.is_none()),
        util_reached: AtomicBool::new(false),
        start: Gate::new(total_threads as usize + if on_this_thread { 0 } else { 1 }),
    })
    .map_err(RunError::Shared)?;
    let shared = &shared[0];
    let live = Shm::new(total_threads as usize, share, |_| LiveCounters::new()).map_err(RunError::Shared)?;
    // One cursor per entry of each group's mix, then the group's next arrival
    // (`rate.arrivals = "poisson"`), then its request generator (`shared_requests`).
    let cursors = workload
        .groups
        .iter()
        .map(|g| {
            let n = g.ops.len() + 1 + crate::worker::requests::slots(g.ops.len());
            Shm::new(n, share, |_| AtomicU64::new(0))
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(RunError::Shared)?;
    let cursors = |gi: usize| &cursors[gi][..];
    let files = |gi: usize| GroupFiles {
        tables: prepared.group_tables(workload, &workload.groups[gi]),
        opened: &opened[gi],
    };
    // Thread `idx` of all's share of a total: an even part, one more for the first remainder.
    let share = |total: u64, idx: u64| total / total_threads + u64::from(idx < total % total_threads);
    // Thread `t` of its group, `global` of all: its own seed and its shares of the quotas; its
    // own file (`thread_on_fileset`) counts it after the threads of the groups before its own
    // on the same filesets.
    // With `shared_requests`, a group's threads claim their events from the group's share of
    // stop.ops: every one of its threads' shares, summed.
    let first_of = |gi: usize| workload.groups[..gi].iter().map(|g| u64::from(g.threads)).sum::<u64>();
    let plan_of = |global: u64, t: u32, gi: usize| {
        let g = &workload.groups[gi];
        let group_ops = stop.ops.filter(|_| g.shared_requests).map(|o| {
            let first = first_of(gi);
            (first..first + u64::from(g.threads)).map(|k| share(o, k)).sum()
        });
        ThreadPlan {
            worker: global,
            thread_on_fileset: workload.thread_on_fileset(gi, t),
            seed: seed ^ (global + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15),
            ops_quota: stop.ops.filter(|_| !g.shared_requests).map(|o| share(o, global)),
            bytes_quota: stop.bytes.map(|b| share(b.0, global)),
            group_ops,
        }
    };
    let util = stop.util.map(|u| (prepared.tables[0].root(), u));
    if on_this_thread {
        let g = &workload.groups[0];
        let base = bases.into_iter().next().and_then(|b| b.into_iter().next()).flatten();
        return Ok(run_here(
            g,
            files(0),
            base,
            shared,
            &live[0],
            cursors(0),
            plan_of(0, 0, 0),
            opts,
        ));
    }

    let (done_tx, done_rx) = mpsc::channel::<()>();
    let mut series = Vec::new();
    // What the processes' times are sent relative to.
    let epoch = Instant::now();
    let ran = std::thread::scope(|s| {
        let refused = |started: u64, what, error| RunError::Workers {
            wanted: total_threads,
            started,
            what,
            error,
        };
        // With processes, one thread of this process waits for them and reads back their
        // figures. It starts first, so that a machine that refuses it has forked nothing.
        let (to_reaper, reaper) = if workload.processes {
            let (tx, rx) = mpsc::channel();
            let done = done_tx.clone();
            let reaper = std::thread::Builder::new()
                .name("reaper".into())
                .spawn_scoped(s, move || {
                    processes::reap(rx.iter().collect(), epoch, workload, shared, &done)
                })
                .map_err(|e| refused(0, "processes (and no thread to wait for them)", e))?;
            (Some(tx), Some(reaper))
        } else {
            (None, None)
        };
        let mut threads = Vec::new();
        let mut global = 0u64;
        let mut refusal = None;
        'start: for (gi, (g, bases)) in workload.groups.iter().zip(bases).enumerate() {
            let group_files = files(gi);
            for (t, base) in (0..g.threads).zip(bases) {
                let (plan, live, cursors, files) = (
                    plan_of(global, t, gi),
                    &live[global as usize],
                    cursors(gi),
                    group_files.clone(),
                );
                let work = move || match Worker::new(g, files, base, shared, live, cursors, plan) {
                    Ok(w) => w.run(),
                    Err(e) => could_not_start(g, shared, e),
                };
                let started = match &to_reaper {
                    Some(reaper) => processes::fork(gi, t, epoch, work).map(|child| {
                        let _ = reaper.send(child);
                    }),
                    None => {
                        let done = done_tx.clone();
                        std::thread::Builder::new()
                            .name(format!("{}-{t}", g.name))
                            .spawn_scoped(s, move || {
                                let outcome = work();
                                let _ = done.send(());
                                outcome
                            })
                            .map(|h| threads.push((gi, t, h)))
                    }
                };
                if let Err(error) = started {
                    refusal = Some(error);
                    break 'start;
                }
                global += 1;
            }
        }
        drop(to_reaper);
        if let Some(error) = refusal {
            // The machine refuses more workers: send the ones started home and wait for them,
            // then say why.
            shared.start.call_off();
            for (_, _, h) in threads {
                let _ = h.join();
            }
            if let Some(reaper) = reaper {
                let _ = reaper.join();
            }
            let what = if workload.processes { "processes" } else { "threads" };
            return Err(refused(global, what, error));
        }
        drop(done_tx);
        let timing = monitor(
            workload,
            shared,
            &live,
            &done_rx,
            total_threads,
            util,
            opts,
            &mut series,
            progress,
        );
        let mut outcomes: Vec<(usize, u32, ThreadOutcome)> = threads
            .into_iter()
            .map(|(gi, t, h)| (gi, t, h.join().expect("worker thread")))
            .collect();
        if let Some(reaper) = reaper {
            outcomes.extend(reaper.join().expect("reaper thread"));
        }
        Ok((outcomes, timing))
    });
    let (outcomes, timing) = ran?;
    Ok(Ran {
        outcomes,
        timing,
        series,
        util_reached: shared.util_reached.load(Relaxed),
    })
}

/// The run's one worker, on the calling thread: the process has no other thread while it
/// measures. The worker itself stops at the caller's interruption.
#[allow(clippy::too_many_arguments)]
fn run_here(
    g: &Group,
    files: GroupFiles,
    base: Option<crate::script::ScriptBase>,
    shared: &Shared,
    live: &LiveCounters,
    cursors: &[AtomicU64],
    plan: ThreadPlan,
    opts: &RunOptions,
) -> Ran {
    let worker = Worker::new(g, files, base, shared, live, cursors, plan);
    let cpu_start = CpuSnapshot::take(false);
    let outcome = match worker {
        Ok(w) => w.run(),
        Err(e) => could_not_start(g, shared, e),
    };
    // The worker opened the start line (its only party) once ready, as a monitor would see it.
    let measure_start = shared.start.opened_at();
    if let Some(s) = opts.stopped.as_deref() {
        s.store(true, Relaxed);
    }
    let interrupted = shared.interrupt.as_ref().is_some_and(|i| i.load(Relaxed));
    Ran {
        outcomes: vec![(0, 0, outcome)],
        timing: Timing {
            measure_start,
            cpu_start,
            stopped: interrupted.then_some(StopReason::Interrupted),
            steady: None,
        },
        series: Vec::new(),
        util_reached: shared.util_reached.load(Relaxed),
    }
}

/// A thread whose worker could not be made (io_uring missing, say) still meets the others at
/// the start, then stops the run with the reason as its error.
fn could_not_start(g: &Group, shared: &Shared, e: std::io::Error) -> ThreadOutcome {
    shared.start.wait();
    shared.stop.store(true, Relaxed);
    ThreadOutcome::failed(g, e.to_string(), e.raw_os_error())
}
