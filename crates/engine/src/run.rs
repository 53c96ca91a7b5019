//! Running a workload: set the filesets up (untimed), start the threads together, watch them
//! once a second, stop them, and gather what they measured into a [`RunResult`].

use crate::confine::{ConfineError, RunDir};
use crate::cpu::{CpuSnapshot, CpuUsage};
use crate::fileset::{FileTable, SetupError, SetupReport};
use crate::histogram::OpStats;
use crate::result::{self, FirstError, OpResult, RunResult, Second, Status, StopReason, Totals, MIB};
use crate::sysinfo::SystemInfo;
use crate::worker::{LiveCounters, Shared, ThreadOutcome, ThreadPlan, Worker};
use crate::workload::{FinalSync, Invalid, OpKind, Workload};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{mpsc, Barrier};
use std::time::{Duration, Instant, SystemTime};

#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// The run directory: every path the workload touches is beneath it.
    pub dir: PathBuf,
    /// Count errors and go on instead of stopping at the first one.
    pub continue_on_error: bool,
    /// Leave latency timing and histograms out (only to measure what they cost).
    pub no_latency: bool,
}

/// The live view handed to the caller once a second.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    pub elapsed: Duration,
    /// Ramp plus measured time, when the run is time-bound.
    pub planned: Option<Duration>,
    pub in_ramp: bool,
    pub ops_per_sec: f64,
    pub bytes_per_sec: f64,
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("the workload is not valid: {0}")]
    Invalid(#[from] Invalid),
    #[error(transparent)]
    Confine(#[from] ConfineError),
    #[error(transparent)]
    Setup(#[from] SetupError),
}

/// Runs `workload` in `opts.dir`; `progress` is called from this thread once a second.
pub fn run(workload: &Workload, opts: &RunOptions, progress: &mut dyn FnMut(&Progress)) -> Result<RunResult, RunError> {
    workload.validate()?;
    let started_at = result::rfc3339(SystemTime::now());
    let seed = workload.seed.unwrap_or_else(rand::random);
    let mut compiled = workload.clone();
    compiled.seed = Some(seed);
    raise_open_file_limit();
    crate::clock::init();

    let run_dir = RunDir::open(&opts.dir)?;
    let mut tables = Vec::new();
    let mut setup = Vec::new();
    for (k, fs) in workload.filesets.iter().enumerate() {
        let users = || {
            workload
                .groups
                .iter()
                .filter(|g| g.fileset == fs.name)
                .flat_map(|g| &g.ops)
        };
        let dynamic = users().any(|o| o.op.changes_membership());
        let meta = users().any(|o| matches!(o.op, OpKind::Mkdir | OpKind::Rmdir));
        if dynamic && users().any(|o| o.op.is_stream()) {
            let gi = workload.groups.iter().position(|g| g.fileset == fs.name).unwrap_or(0);
            return Err(Invalid {
                path: vec![crate::workload::PathSeg::Key("group"), crate::workload::PathSeg::Index(gi)],
                message: format!("fileset `{}` is used by streams and by create/delete/rename at once; give the streams a fileset of their own", fs.name),
            }
            .into());
        }
        let (table, report): (FileTable, SetupReport) =
            FileTable::setup(&run_dir, fs, dynamic, meta, seed.wrapping_add(k as u64))?;
        tables.push(table);
        setup.push(report);
    }

    let stop = &workload.stop;
    let total_threads = workload.total_threads();
    let shared = Shared {
        stop: AtomicBool::new(false),
        measuring: AtomicBool::new(stop.ramp.0.is_zero()),
        stonewall: stop.stonewall,
        continue_on_error: opts.continue_on_error,
        latency: !opts.no_latency,
        barrier: Barrier::new(total_threads as usize + 1),
    };
    let live: Vec<LiveCounters> = (0..total_threads).map(|_| LiveCounters::new()).collect();
    let cursors: Vec<Vec<AtomicU64>> = workload
        .groups
        .iter()
        .map(|g| g.ops.iter().map(|_| AtomicU64::new(0)).collect())
        .collect();
    let share = |total: u64, idx: u64| total / total_threads + u64::from(idx < total % total_threads);

    let (done_tx, done_rx) = mpsc::channel::<()>();
    let mut series = Vec::new();
    let (outcomes, timing) = std::thread::scope(|s| {
        let mut handles = Vec::new();
        let mut global = 0u64;
        for (gi, g) in workload.groups.iter().enumerate() {
            let table = &tables[workload
                .filesets
                .iter()
                .position(|f| f.name == g.fileset)
                .expect("validated")];
            for t in 0..g.threads {
                let plan = ThreadPlan {
                    thread_in_group: t,
                    seed: seed ^ (global + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15),
                    ops_quota: stop.ops.map(|o| share(o, global)),
                    bytes_quota: stop.bytes.map(|b| share(b.0, global)),
                };
                let (shared, live, cursors, done) =
                    (&shared, &live[global as usize], &cursors[gi][..], done_tx.clone());
                handles.push((
                    gi,
                    std::thread::Builder::new()
                        .name(format!("{}-{t}", g.name))
                        .spawn_scoped(s, move || {
                            let outcome = match Worker::new(g, table, shared, live, cursors, plan) {
                                Ok(w) => w.run(),
                                Err(e) => {
                                    shared.barrier.wait();
                                    shared.stop.store(true, Relaxed);
                                    ThreadOutcome {
                                        stats: g.ops.iter().map(|_| OpStats::default()).collect(),
                                        first_error: Some((g.ops[0].op, e.to_string(), e.raw_os_error())),
                                        ended: Instant::now(),
                                        finished: false,
                                    }
                                }
                            };
                            let _ = done.send(());
                            outcome
                        })
                        .expect("spawn a worker thread"),
                ));
                global += 1;
            }
        }
        drop(done_tx);
        let timing = monitor(workload, &shared, &live, &done_rx, total_threads, &mut series, progress);
        let outcomes: Vec<(usize, ThreadOutcome)> = handles
            .into_iter()
            .map(|(gi, h)| (gi, h.join().expect("worker thread")))
            .collect();
        (outcomes, timing)
    });

    let Timing {
        measure_start,
        cpu_start,
        deadline_hit,
    } = timing;
    let mut end = outcomes
        .iter()
        .map(|o| o.1.ended)
        .max()
        .unwrap_or_else(Instant::now)
        .max(measure_start);
    let mut final_sync = None;
    if stop.final_sync == FinalSync::Inside {
        let t = Instant::now();
        rustix::fs::sync();
        final_sync = Some(t.elapsed());
        end = Instant::now();
    }
    let cpu = CpuUsage::between(&cpu_start, &CpuSnapshot::take());
    if stop.final_sync == FinalSync::Outside {
        let t = Instant::now();
        rustix::fs::sync();
        final_sync = Some(t.elapsed());
    }
    let duration = end - measure_start;

    // Merge per operation type, in a fixed order.
    let mut merged: Vec<Option<OpStats>> = OpKind::ALL.iter().map(|_| None).collect();
    for (gi, o) in &outcomes {
        for (spec, st) in workload.groups[*gi].ops.iter().zip(&o.stats) {
            merged[spec.op.index()].get_or_insert_with(OpStats::default).merge(st);
        }
    }
    let secs = duration.as_secs_f64().max(1e-9);
    let mut totals = Totals::default();
    let mut ops = Vec::new();
    for (kind, st) in OpKind::ALL.iter().zip(&merged) {
        let Some(st) = st else { continue };
        totals.ops += st.count;
        totals.errors += st.errors;
        totals.skipped += st.skipped;
        totals.transactions += st.transactions;
        if kind.writes() {
            totals.bytes_written += st.bytes;
        } else {
            totals.bytes_read += st.bytes;
        }
        ops.push(OpResult {
            op: *kind,
            count: st.count,
            errors: st.errors,
            skipped: st.skipped,
            bytes: st.bytes,
            transactions: st.transactions,
            ops_per_sec: st.count as f64 / secs,
            mib_per_sec: st.bytes as f64 / MIB / secs,
            latency: st.latency(),
            histogram: st.buckets(),
        });
    }
    totals.ops_per_sec = totals.ops as f64 / secs;
    totals.transactions_per_sec = totals.transactions as f64 / secs;
    totals.read_mib_per_sec = totals.bytes_read as f64 / MIB / secs;
    totals.write_mib_per_sec = totals.bytes_written as f64 / MIB / secs;

    let first_error = outcomes
        .iter()
        .filter_map(|o| o.1.first_error.clone())
        .next()
        .map(|(op, message, errno)| FirstError {
            op,
            message,
            errno,
            total_errors: totals.errors.max(1),
        });
    let any_finished = outcomes.iter().any(|o| o.1.finished);
    let stopped_by = if first_error.is_some() && !opts.continue_on_error {
        StopReason::Error
    } else if deadline_hit {
        StopReason::Time
    } else if stop.stonewall && any_finished {
        StopReason::Stonewall
    } else if stop.ops.is_some() && any_finished {
        StopReason::Ops
    } else if stop.bytes.is_some() && any_finished {
        StopReason::Bytes
    } else {
        StopReason::Done
    };
    Ok(RunResult {
        schema_version: result::SCHEMA_VERSION,
        fslab_version: env!("CARGO_PKG_VERSION").to_string(),
        started_at,
        system: SystemInfo::collect(),
        dir: opts.dir.display().to_string(),
        workload: compiled,
        seed,
        status: if first_error.is_some() {
            Status::Failed
        } else {
            Status::Ok
        },
        stopped_by,
        first_error,
        setup,
        duration,
        ramp: stop.ramp.0,
        final_sync,
        totals,
        ops,
        series,
        cpu,
    })
}

struct Timing {
    measure_start: Instant,
    cpu_start: CpuSnapshot,
    deadline_hit: bool,
}

/// The monitor: releases the threads, ends the ramp, enforces the time limit, and samples the
/// live counters once a second until every thread is done.
fn monitor(
    workload: &Workload,
    shared: &Shared,
    live: &[LiveCounters],
    done: &mpsc::Receiver<()>,
    threads: u64,
    series: &mut Vec<Second>,
    progress: &mut dyn FnMut(&Progress),
) -> Timing {
    let ramp = workload.stop.ramp.0;
    let mut cpu_start = CpuSnapshot::take();
    shared.barrier.wait();
    let start = Instant::now();
    let mut measure_start = start;
    let ramp_end = (!ramp.is_zero()).then(|| start + ramp);
    let mut deadline = workload.stop.time.map(|t| start + ramp + t.0);
    let planned = workload.stop.time.map(|t| ramp + t.0);
    let mut deadline_hit = false;
    let mut in_ramp = ramp_end.is_some();
    let mut last = [[0u64; OpKind::ALL.len()]; 2];
    let mut last_tick = start;
    let mut next_tick = start + Duration::from_secs(1);
    let mut running = threads;

    let mut sample = |now: Instant, last_tick: &mut Instant, in_ramp: bool, series: &mut Vec<Second>| {
        let mut cur = [[0u64; OpKind::ALL.len()]; 2];
        for l in live {
            for (k, (ops, bytes)) in l.ops.iter().zip(&l.bytes).enumerate() {
                cur[0][k] += ops.load(Relaxed);
                cur[1][k] += bytes.load(Relaxed);
            }
        }
        let mut sec = Second {
            t: (now - start).as_secs_f64(),
            ramp: in_ramp,
            ops: 0,
            bytes_read: 0,
            bytes_written: 0,
            by_op: Vec::new(),
        };
        for (k, kind) in OpKind::ALL.iter().enumerate() {
            let (dops, dbytes) = (cur[0][k] - last[0][k], cur[1][k] - last[1][k]);
            sec.ops += dops;
            if kind.writes() {
                sec.bytes_written += dbytes;
            } else {
                sec.bytes_read += dbytes;
            }
            if dops > 0 {
                sec.by_op.push((*kind, dops));
            }
        }
        last = cur;
        let span = (now - *last_tick).as_secs_f64().max(1e-9);
        *last_tick = now;
        let p = Progress {
            elapsed: now - start,
            planned,
            in_ramp,
            ops_per_sec: sec.ops as f64 / span,
            bytes_per_sec: (sec.bytes_read + sec.bytes_written) as f64 / span,
        };
        series.push(sec);
        p
    };

    while running > 0 {
        let mut wake = next_tick;
        if let Some(r) = ramp_end.filter(|_| in_ramp) {
            wake = wake.min(r);
        }
        if let Some(d) = deadline {
            wake = wake.min(d);
        }
        match done.recv_timeout(wake.saturating_duration_since(Instant::now())) {
            Ok(()) => {
                running -= 1;
                continue;
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        let now = Instant::now();
        // Sample first: a tick that falls on the end of the ramp covers the ramp's last second.
        if now >= next_tick {
            let p = sample(now, &mut last_tick, in_ramp, series);
            progress(&p);
            next_tick += Duration::from_secs(1);
        }
        if in_ramp && ramp_end.is_some_and(|r| now >= r) {
            in_ramp = false;
            cpu_start = CpuSnapshot::take();
            measure_start = Instant::now();
            // The time limit counts from the real end of the ramp.
            deadline = workload.stop.time.map(|t| measure_start + t.0);
            shared.measuring.store(true, Relaxed);
        }
        if deadline.is_some_and(|d| now >= d) && !shared.stop.load(Relaxed) {
            deadline_hit = true;
            shared.stop.store(true, Relaxed);
            deadline = None;
        }
    }
    let now = Instant::now();
    if (now - last_tick) > Duration::from_millis(100) {
        sample(now, &mut last_tick, in_ramp, series);
    }
    if in_ramp {
        // The run ended inside its ramp: nothing was measured after it.
        measure_start = now;
    }
    Timing {
        measure_start,
        cpu_start,
        deadline_hit,
    }
}

/// Filesets of many files with threads that keep them open need more descriptors than the
/// usual soft limit of 1024.
fn raise_open_file_limit() {
    use rustix::process::{getrlimit, setrlimit, Resource};
    let mut lim = getrlimit(Resource::Nofile);
    if lim.current < lim.maximum {
        lim.current = lim.maximum;
        let _ = setrlimit(Resource::Nofile, lim);
    }
}
