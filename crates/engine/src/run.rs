//! Running a workload: set the filesets up (untimed), start the threads together, watch them
//! once a second, stop them, and gather what they measured into a [`RunResult`].

use crate::confine::{ConfineError, RunDir};
use crate::cpu::{CpuSnapshot, CpuUsage};
use crate::fileset::{self, FileTable, SetupError};
use crate::histogram::OpStats;
use crate::live_latency::{LatencyTally, SecondHistogram};
use crate::marker;
use crate::result::{
    self, FirstError, GroupResult, OpResult, RunResult, Second, Status, StepResult, StopReason, ThreadResult, Totals,
    MIB,
};
use crate::sysinfo::SystemInfo;
use crate::worker::{LiveCounters, Shared, ThreadOutcome, ThreadPlan, Worker};
use crate::workload::{FinalSync, Invalid, OpKind, Workload};
use std::os::fd::{AsFd, OwnedFd};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{mpsc, Barrier};
use std::time::{Duration, Instant, SystemTime};

/// How full a filesystem is, also at this path for the crates that name it here.
pub use crate::space::{fs_space, utilisation};

#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// The run directory: every path the workload touches is beneath it.
    pub dir: PathBuf,
    /// Count errors and go on instead of stopping at the first one.
    pub continue_on_error: bool,
    /// Leave latency timing and histograms out (only to measure what they cost).
    pub no_latency: bool,
    /// After the untimed setup, write dirty data back and drop the page cache, dentries and
    /// inodes (`/proc/sys/vm/drop_caches`, root only), so the measured phase starts cold.
    pub drop_caches: bool,
}

/// The live view handed to the caller once a second.
#[derive(Debug, Clone)]
pub struct Progress {
    pub elapsed: Duration,
    /// Ramp plus measured time, when the run is time-bound.
    pub planned: Option<Duration>,
    pub in_ramp: bool,
    pub ops_per_sec: f64,
    pub bytes_per_sec: f64,
    /// The second just sampled.
    pub second: Second,
    /// The latencies of the operations timed in that second, for percentiles other than the
    /// ones [`Second::latency`](crate::result::Second::latency) keeps.
    pub latency: SecondHistogram,
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("the workload is not valid: {0}")]
    Invalid(#[from] Invalid),
    #[error(transparent)]
    Confine(#[from] ConfineError),
    #[error(transparent)]
    Setup(#[from] SetupError),
    #[error("cannot drop the caches (/proc/sys/vm/drop_caches needs root): {0}")]
    DropCaches(std::io::Error),
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

    // The run directory, and the roots filesets name for themselves.
    let main_dir = RunDir::open(&opts.dir)?;
    let mut roots: Vec<RunDir> = Vec::new();
    let mut root_of = Vec::new();
    for fs in &workload.filesets {
        match &fs.root {
            None => root_of.push(None),
            Some(r) => {
                roots.push(RunDir::open(std::path::Path::new(r))?);
                root_of.push(Some(roots.len() - 1));
            }
        }
    }
    let dir_of = |k: usize| root_of[k].map_or(&main_dir, |r| &roots[r]);

    let mut tables = Vec::new();
    let mut setup = Vec::new();
    for k in 0..workload.filesets.len() {
        let (table, report) = FileTable::setup_for(dir_of(k), workload, k, seed)?;
        tables.push(table);
        setup.push(report);
    }
    let no_fileset = FileTable::placeholder(&main_dir)?;
    let table_index = |name: &str| {
        workload
            .filesets
            .iter()
            .position(|f| f.name == name)
            .expect("validated")
    };

    // Each script thread's own directory, cleared of an earlier run's leftovers.
    let mut bases: Vec<Vec<Option<OwnedFd>>> = Vec::new();
    for g in &workload.groups {
        let mut per_thread = Vec::new();
        for t in 0..g.threads {
            per_thread.push(match &g.script {
                Some(s) => Some(script_base(&main_dir, &s.base.replace("{thread}", &t.to_string()))?),
                None => None,
            });
        }
        bases.push(per_thread);
    }
    if opts.drop_caches {
        rustix::fs::sync();
        std::fs::write("/proc/sys/vm/drop_caches", "3").map_err(RunError::DropCaches)?;
    }

    let stop = &workload.stop;
    let total_threads = workload.total_threads();
    let shared = Shared {
        stop: AtomicBool::new(false),
        measuring: AtomicBool::new(stop.ramp.0.is_zero()),
        stonewall: stop.stonewall,
        continue_on_error: opts.continue_on_error,
        latency: !opts.no_latency,
        util: stop.util,
        util_reached: AtomicBool::new(false),
        barrier: Barrier::new(total_threads as usize + 1),
    };
    let live: Vec<LiveCounters> = (0..total_threads).map(|_| LiveCounters::new()).collect();
    let cursors: Vec<Vec<AtomicU64>> = workload
        .groups
        .iter()
        .map(|g| g.ops.iter().map(|_| AtomicU64::new(0)).collect())
        .collect();
    let share = |total: u64, idx: u64| total / total_threads + u64::from(idx < total % total_threads);
    let util = stop.util.map(|u| (tables[0].root(), u));

    let (done_tx, done_rx) = mpsc::channel::<()>();
    let mut series = Vec::new();
    let (outcomes, timing) = std::thread::scope(|s| {
        let mut handles = Vec::new();
        let mut global = 0u64;
        for (gi, (g, bases)) in workload.groups.iter().zip(bases).enumerate() {
            let mut group_tables: Vec<&FileTable> = g.fileset.0.iter().map(|n| &tables[table_index(n)]).collect();
            if group_tables.is_empty() {
                // A script group works in its own directories and needs no fileset.
                group_tables.push(&no_fileset);
            }
            for (t, base) in (0..g.threads).zip(bases) {
                let plan = ThreadPlan {
                    thread_in_group: t,
                    seed: seed ^ (global + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15),
                    ops_quota: stop.ops.map(|o| share(o, global)),
                    bytes_quota: stop.bytes.map(|b| share(b.0, global)),
                };
                let (shared, live, cursors, done) =
                    (&shared, &live[global as usize], &cursors[gi][..], done_tx.clone());
                let group_tables = group_tables.clone();
                let handle = std::thread::Builder::new()
                    .name(format!("{}-{t}", g.name))
                    .spawn_scoped(s, move || {
                        let outcome = match Worker::new(g, group_tables, base, shared, live, cursors, plan) {
                            Ok(w) => w.run(),
                            Err(e) => {
                                shared.barrier.wait();
                                shared.stop.store(true, Relaxed);
                                ThreadOutcome {
                                    stats: g.ops.iter().map(|_| OpStats::default()).collect(),
                                    fsyncs: OpStats::default(),
                                    steps: Vec::new(),
                                    first_error: Some((
                                        g.ops.first().map_or(OpKind::OpenClose, |o| o.op),
                                        e.to_string(),
                                        e.raw_os_error(),
                                    )),
                                    ended: Instant::now(),
                                    finished: false,
                                }
                            }
                        };
                        let _ = done.send(());
                        outcome
                    })
                    .expect("spawn a worker thread");
                handles.push((gi, t, handle));
                global += 1;
            }
        }
        drop(done_tx);
        let timing = monitor(
            workload,
            &shared,
            &live,
            &done_rx,
            total_threads,
            util,
            &mut series,
            progress,
        );
        let outcomes: Vec<(usize, u32, ThreadOutcome)> = handles
            .into_iter()
            .map(|(gi, t, h)| (gi, t, h.join().expect("worker thread")))
            .collect();
        (outcomes, timing)
    });

    let Timing {
        measure_start,
        cpu_start,
        stopped,
    } = timing;
    let mut end = outcomes
        .iter()
        .map(|o| o.2.ended)
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
    let secs = duration.as_secs_f64().max(1e-9);

    // Merge per operation type and label (per group too when there are several); script steps
    // per label.
    let mut merged = OpMerge::default();
    let several = workload.groups.len() > 1;
    let mut per_group: Vec<OpMerge> = workload.groups.iter().map(|_| OpMerge::default()).collect();
    let mut labels: Vec<(String, OpStats)> = Vec::new();
    let mut threads = Vec::new();
    for (gi, t, o) in &outcomes {
        let g = &workload.groups[*gi];
        let mut mine = OpStats::default();
        let mut add = |op: OpKind, label: Option<&str>, st: &OpStats| {
            merged.add(op, label, st);
            if several {
                per_group[*gi].add(op, label, st);
            }
            mine.merge(st);
        };
        for (spec, st) in g.ops.iter().zip(&o.stats) {
            add(spec.op, spec.label.as_deref(), st);
        }
        if o.fsyncs.count + o.fsyncs.errors > 0 {
            add(OpKind::Fsync, None, &o.fsyncs);
        }
        if let Some(script) = &g.script {
            for (name, st) in script.labels.iter().zip(&o.steps) {
                match labels.iter_mut().find(|l| &l.0 == name) {
                    Some(l) => l.1.merge(st),
                    None => labels.push((name.clone(), st.clone())),
                }
                mine.merge(st);
            }
        }
        threads.push(ThreadResult {
            group: g.name.clone(),
            thread: *t,
            ops: mine.count,
            bytes: mine.bytes,
            secs: o.ended.saturating_duration_since(measure_start).as_secs_f64(),
            finished: o.finished,
        });
    }
    let mut totals = Totals::default();
    for (kind, _, st) in &merged.0 {
        add_totals(&mut totals, st, kind.writes());
    }
    let ops = merged.results(secs);
    let groups = if several {
        workload
            .groups
            .iter()
            .zip(per_group)
            .map(|(g, m)| GroupResult {
                name: g.name.clone(),
                ops: m.results(secs),
            })
            .collect()
    } else {
        Vec::new()
    };
    let mut steps = Vec::new();
    for (name, st) in &labels {
        // A script's bytes are what its reads and writes moved.
        let writes = workload
            .groups
            .iter()
            .filter_map(|g| g.script.as_ref())
            .flat_map(|s| s.steps.iter().filter(|st| s.labels[st.label as usize] == *name))
            .any(|st| st.call.kind() == OpKind::Write);
        add_totals(&mut totals, st, writes);
        steps.push(StepResult {
            name: name.clone(),
            count: st.count,
            mismatches: st.mismatches,
            errors: st.errors,
            bytes: st.bytes,
            ops_per_sec: st.count as f64 / secs,
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
        .filter_map(|o| o.2.first_error.clone())
        .next()
        .map(|(op, message, errno)| FirstError {
            op,
            message,
            errno,
            total_errors: totals.errors.max(1),
        });
    let any_finished = outcomes.iter().any(|o| o.2.finished);
    let stopped_by = if first_error.is_some() && !opts.continue_on_error {
        StopReason::Error
    } else if shared.util_reached.load(Relaxed) {
        StopReason::Util
    } else if let Some(reason) = stopped {
        reason
    } else if stop.stonewall && any_finished {
        StopReason::Stonewall
    } else if stop.ops.is_some() && any_finished {
        StopReason::Ops
    } else if stop.bytes.is_some() && any_finished {
        StopReason::Bytes
    } else {
        StopReason::Done
    };

    if workload.cleanup {
        for fs in workload.filesets.iter().enumerate() {
            fileset::remove(dir_of(fs.0), fs.1)?;
        }
        for g in &workload.groups {
            if let Some(s) = &g.script {
                remove_script_bases(&main_dir, &s.base, g.threads)?;
            }
        }
    }

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
        groups,
        steps,
        threads,
        series,
        cpu,
        classic: None,
    })
}

/// Operation statistics merged per (operation type, label), as [`RunResult::ops`] lists them.
#[derive(Default)]
struct OpMerge(Vec<(OpKind, Option<String>, OpStats)>);

impl OpMerge {
    fn add(&mut self, op: OpKind, label: Option<&str>, st: &OpStats) {
        match self.0.iter_mut().find(|e| e.0 == op && e.1.as_deref() == label) {
            Some(e) => e.2.merge(st),
            None => self.0.push((op, label.map(str::to_string), st.clone())),
        }
    }

    /// In the order of [`OpKind::ALL`]; within a type the unlabelled entry first, then the
    /// labelled ones in the order they first appeared (the sort is stable).
    fn results(mut self, secs: f64) -> Vec<OpResult> {
        self.0.sort_by_key(|e| (e.0.index(), e.1.is_some()));
        self.0
            .into_iter()
            .map(|(op, label, st)| OpResult {
                op,
                label,
                count: st.count,
                errors: st.errors,
                skipped: st.skipped,
                bytes: st.bytes,
                transactions: st.transactions,
                ops_per_sec: st.count as f64 / secs,
                mib_per_sec: st.bytes as f64 / MIB / secs,
                latency: st.latency(),
                histogram: st.buckets(),
            })
            .collect()
    }
}

fn add_totals(totals: &mut Totals, st: &OpStats, writes: bool) {
    totals.ops += st.count;
    totals.errors += st.errors;
    totals.skipped += st.skipped;
    totals.transactions += st.transactions;
    if writes {
        totals.bytes_written += st.bytes;
    } else {
        totals.bytes_read += st.bytes;
    }
}

/// Makes a script thread's base directory, clearing what an earlier run of fslab left there
/// (dbench removes its client directories first too). A directory fslab did not make is refused.
fn script_base(run: &RunDir, rel: &str) -> Result<OwnedFd, RunError> {
    let (parent_rel, name) = rel.rsplit_once('/').unwrap_or((".", rel));
    let parent = if parent_rel == "." {
        run.open_dir_self()?
    } else {
        run.open_dir(parent_rel, true)?
    };
    let io = |e: std::io::Error| ConfineError::Io {
        root: run.root().to_string(),
        path: rel.to_string(),
        error: e,
    };
    if let Ok(existing) = crate::confine::open_beneath(parent.as_fd(), name) {
        let marked = rustix::fs::statat(&existing, marker::SCRIPT, rustix::fs::AtFlags::SYMLINK_NOFOLLOW).is_ok();
        let empty = rustix::fs::Dir::read_from(&existing)
            .map(|d| d.filter_map(Result::ok).count() <= 2)
            .unwrap_or(false);
        if !marked && !empty {
            return Err(SetupError::Foreign {
                fileset: "script".into(),
                path: format!("{}/{rel}", run.root()),
                entry: "(its contents)".into(),
            }
            .into());
        }
        crate::script::remove_tree(parent.as_fd(), name).map_err(io)?;
    }
    let base = run.open_dir(rel, true)?;
    crate::confine::open_file(
        base.as_fd(),
        marker::SCRIPT,
        rustix::fs::OFlags::WRONLY | rustix::fs::OFlags::CREATE,
        0o644,
    )
    .map_err(io)?;
    Ok(base)
}

/// Removes the script threads' base directories, then their parent if that is left empty.
fn remove_script_bases(run: &RunDir, base: &str, threads: u32) -> Result<(), RunError> {
    let io = |e: std::io::Error| ConfineError::Io {
        root: run.root().to_string(),
        path: base.to_string(),
        error: e,
    };
    for t in 0..threads {
        let rel = base.replace("{thread}", &t.to_string());
        let (parent_rel, name) = rel.rsplit_once('/').unwrap_or((".", rel.as_str()));
        let parent = if parent_rel == "." {
            run.open_dir_self()?
        } else {
            run.open_dir(parent_rel, false)?
        };
        crate::script::remove_tree(parent.as_fd(), name).map_err(io)?;
    }
    if let Some((parent_rel, _)) = base.rsplit_once('/') {
        if let Some((grand, last)) = parent_rel.rsplit_once('/').or(Some((".", parent_rel))) {
            let g = if grand == "." {
                run.open_dir_self()?
            } else {
                run.open_dir(grand, false)?
            };
            // Only if empty: rmdir refuses a directory with anything in it.
            let _ = rustix::fs::unlinkat(&g, last, rustix::fs::AtFlags::REMOVEDIR);
        }
    }
    Ok(())
}

struct Timing {
    measure_start: Instant,
    cpu_start: CpuSnapshot,
    /// Set when the monitor itself ended the run (time or utilisation).
    stopped: Option<StopReason>,
}

/// The monitor: releases the threads, ends the ramp, enforces the time and utilisation limits,
/// and samples the live counters once a second until every thread is done.
#[allow(clippy::too_many_arguments)]
fn monitor(
    workload: &Workload,
    shared: &Shared,
    live: &[LiveCounters],
    done: &mpsc::Receiver<()>,
    threads: u64,
    util: Option<(std::os::fd::BorrowedFd<'_>, f64)>,
    series: &mut Vec<Second>,
    progress: &mut dyn FnMut(&Progress),
) -> Timing {
    let ramp = workload.stop.ramp.0;
    let mut cpu_start = CpuSnapshot::take();
    // Read before the barrier: no thread starts until the monitor is at the barrier too, and a
    // thread with little to do may finish before the monitor reads the clock after it.
    let start = Instant::now();
    shared.barrier.wait();
    let mut measure_start = start;
    let ramp_end = (!ramp.is_zero()).then(|| start + ramp);
    let mut deadline = workload.stop.time.map(|t| start + ramp + t.0);
    let planned = workload.stop.time.map(|t| ramp + t.0);
    let mut stopped = None;
    let mut in_ramp = ramp_end.is_some();
    let mut last = [[0u64; OpKind::ALL.len()]; 2];
    let mut last_tick = start;
    let mut next_tick = start + Duration::from_secs(1);
    let mut running = threads;
    let scripted = workload.groups.iter().any(|g| g.script.is_some());
    let mut tally = LatencyTally::new(live.len());

    let mut sample = |now: Instant, last_tick: &mut Instant, in_ramp: bool, series: &mut Vec<Second>| {
        let mut cur = [[0u64; OpKind::ALL.len()]; 2];
        let mut max_ns = 0;
        for (t, l) in live.iter().enumerate() {
            for (k, (ops, bytes)) in l.ops.iter().zip(&l.bytes).enumerate() {
                cur[0][k] += ops.load(Relaxed);
                cur[1][k] += bytes.load(Relaxed);
            }
            max_ns = max_ns.max(l.max_ns.swap(0, Relaxed));
            tally.add(t, &l.latency);
        }
        let latency = tally.finish();
        let mut sec = Second {
            t: (now - start).as_secs_f64(),
            ramp: in_ramp,
            ops: 0,
            bytes_read: 0,
            bytes_written: 0,
            by_op: Vec::new(),
            max_latency_us: scripted.then_some(max_ns as f64 / 1000.0),
            latency: latency.summary(),
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
            second: sec.clone(),
            latency,
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
        if util.is_some() {
            // Filling to a utilisation is checked ten times a second.
            wake = wake.min(Instant::now() + Duration::from_millis(100));
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
            stopped = Some(StopReason::Time);
            shared.stop.store(true, Relaxed);
            deadline = None;
        }
        if let Some((fd, target)) = util {
            if !shared.stop.load(Relaxed) && utilisation(fd).is_some_and(|u| u >= target) {
                stopped = Some(StopReason::Util);
                shared.stop.store(true, Relaxed);
            }
        }
    }
    let now = Instant::now();
    // The last, partial second: the series then adds up to the totals.
    if now > last_tick {
        sample(now, &mut last_tick, in_ramp, series);
    }
    if in_ramp {
        // The run ended inside its ramp: nothing was measured after it.
        measure_start = now;
    }
    Timing {
        measure_start,
        cpu_start,
        stopped,
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
