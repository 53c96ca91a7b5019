//! Running a workload, in four phases: set the filesets up, untimed (`prepare.rs`); start the
//! threads together (`spawn.rs`); watch them once a second and stop them (`monitor.rs`); and
//! gather what they measured into a [`RunResult`] (`merge.rs`).

mod merge;
mod monitor;
mod prepare;
mod processes;
mod ranks;
mod spawn;

use crate::confine::ConfineError;
use crate::cpu::{CpuSnapshot, CpuUsage};
use crate::fileset::SetupError;
use crate::live_latency::SecondHistogram;
use crate::result::{self, RunResult, Second, Status};
use crate::sysinfo::SystemInfo;
use crate::workload::{FinalSync, Invalid, Stop, Workload};
use prepare::Prepared;
use spawn::Ran;
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

/// How full a filesystem is, also at this path for the crates that name it here.
pub use crate::space::{fs_space, utilisation};
pub use ranks::merge_ranks;

#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// The run directory: every path the workload touches is beneath it.
    pub dir: PathBuf,
    /// Count errors and go on instead of stopping at the first one.
    pub continue_on_error: bool,
    /// Leave latency timing and histograms out (to measure what they cost, and for IOzone's
    /// automatic mode, whose figure is one loop timed as a whole).
    pub no_latency: bool,
    /// Make the run as a classic tool's single process makes one measurement (IOzone's
    /// automatic and single modes, which make hundreds of runs of a few milliseconds):
    /// - the machine's CPU split (`/proc/stat`) is left out, since so short a run spans too few
    ///   of the kernel's ticks to split; the process's own times are still taken;
    /// - a run of one thread that stops by its quotas alone (no time limit, ramp, utilisation
    ///   target or steady state) runs on the calling thread, with no monitor beside it, so that
    ///   the process has one thread while it measures, as the original's has. The kernel takes
    ///   a lighter path for each call on a descriptor of a single-threaded process (no
    ///   reference count, no lock on the file position): on tmpfs, a second thread merely
    ///   alive made 4 KiB reads of a cached file 15% slower. Such a run has no per-second
    ///   series and calls no progress; `interrupt` is checked before every operation.
    pub one_process: bool,
    /// Each thread reads its process's CPU time (`getrusage(RUSAGE_SELF)`) as it starts and as
    /// it ends (or takes its figures, as an IOzone child): [`ThreadResult::process_cpu_secs`].
    /// IOzone's `-+u`; off by default, since the two calls show under strace.
    ///
    /// [`ThreadResult::process_cpu_secs`]: crate::result::ThreadResult::process_cpu_secs
    pub process_cpu: bool,
    /// After the untimed setup, write dirty data back and drop the page cache, dentries and
    /// inodes (`/proc/sys/vm/drop_caches`, root only), so the measured phase starts cold.
    pub drop_caches: bool,
    /// Set by the caller (Ctrl-C, a closed output) to stop the run early: every thread stops
    /// within a tenth of a second and the result, partial, says it was interrupted.
    pub interrupt: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    /// Where the setup counts the files it lays out, for the caller to poll while it runs.
    pub layout: Option<std::sync::Arc<crate::fileset::Layout>>,
    /// Called once the untimed setup is done (and the caches dropped), just before the threads
    /// start: the ranks of a job wait there for one another, so that their measured phases
    /// start together.
    pub start_gate: Option<StartGate>,
    /// Set from outside to stop the run as a stonewall does: another rank of the job finished
    /// first. Checked every 10 ms; the result says `stonewall`.
    pub peer_stop: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    /// Set once the run is stopping (a stonewall, its time, a peer stop; seen within 10 ms) or
    /// its threads have all ended, before the result is put together: the other ranks of a
    /// stonewalled job stop then.
    pub stopped: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

/// What [`RunOptions::start_gate`] calls.
#[derive(Clone)]
pub struct StartGate(pub std::sync::Arc<dyn Fn() + Send + Sync>);

impl std::fmt::Debug for StartGate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StartGate")
    }
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
    /// The machine would not start as many workers (threads or processes) as the workload asks
    /// for.
    #[error(
        "the workload asks for {wanted} workers, but the machine would start only {started} {what} ({error}): \
         ask for fewer, or raise the limit (ulimit -u, /proc/sys/kernel/threads-max)"
    )]
    Workers {
        wanted: u64,
        started: u64,
        what: &'static str,
        error: std::io::Error,
    },
    #[error("cannot map the memory the workers share: {0}")]
    Shared(std::io::Error),
}

/// Runs `workload` in `opts.dir`; `progress` is called from this thread once a second.
pub fn run(workload: &Workload, opts: &RunOptions, progress: &mut dyn FnMut(&Progress)) -> Result<RunResult, RunError> {
    workload.validate()?;
    let started_at = result::rfc3339(SystemTime::now());
    // A drawn seed fits TOML's integers, so that the compiled workload in the result can be
    // written back as a workload file that reproduces the run.
    let seed = workload.seed.unwrap_or_else(|| rand::random::<u64>() >> 1);
    let mut compiled = workload.clone();
    compiled.seed = Some(seed);
    prepare::raise_open_file_limit();
    crate::clock::init();

    let prepared = Prepared::new(workload, &opts.dir, seed, opts.layout.as_deref())?;
    let bases = prepared.script_bases(workload)?;
    let opened = prepared.open_shared(workload)?;
    if opts.drop_caches {
        prepare::drop_caches()?;
    }
    if let Some(gate) = &opts.start_gate {
        (gate.0)();
    }

    let ran = spawn::run_threads(workload, opts, &prepared, bases, &opened, seed, progress)?;
    // Closed once every thread has ended, as sysbench's file_done() closes its files.
    opened.into_iter().for_each(crate::io::SharedFile::close_all);
    let measured = Measured::after(&workload.stop, &ran, !opts.one_process);
    let secs = measured.duration.as_secs_f64().max(1e-9);

    let merged = merge::merge(workload, &ran.outcomes, ran.timing.measure_start, secs);
    let first_error = merge::first_error(&ran.outcomes, merged.totals.errors);
    let failed = first_error.is_some() && !opts.continue_on_error;
    let stopped_by = merge::stop_reason(&workload.stop, failed, &ran);

    if workload.cleanup {
        prepared.clean_up(workload)?;
    }
    let mut setup = prepared.setup;
    for (report, table) in setup.iter_mut().zip(&prepared.tables) {
        report.dirs_added = table.dirs_added();
    }

    Ok(RunResult {
        schema_version: result::SCHEMA_VERSION,
        fslab_version: env!("CARGO_PKG_VERSION").to_string(),
        started_at,
        system: SystemInfo::this_machine(),
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
        duration: measured.duration,
        ramp: workload.stop.ramp.0,
        final_sync: measured.final_sync,
        totals: merged.totals,
        ops: merged.ops,
        groups: merged.groups,
        steps: merged.steps,
        calls: merged.calls,
        threads: merged.threads,
        series: ran.series,
        cpu: measured.cpu,
        steady: ran.timing.steady,
    })
}

/// The measured phase as it ended: its length, the final sync, and the CPU time over it.
struct Measured {
    /// From the end of the ramp to the last thread's stop, plus the final sync when it counts
    /// inside.
    duration: Duration,
    final_sync: Option<Duration>,
    cpu: CpuUsage,
}

impl Measured {
    /// Ends the measured phase once the threads have: the final sync where `stop` puts it
    /// (inside the measured time, or after the CPU time is taken), then the figures.
    fn after(stop: &Stop, ran: &Ran, machine_cpu: bool) -> Measured {
        let measure_start = ran.timing.measure_start;
        let mut end = ran
            .outcomes
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
        let cpu = CpuUsage::between(&ran.timing.cpu_start, &CpuSnapshot::take(machine_cpu));
        if stop.final_sync == FinalSync::Outside {
            let t = Instant::now();
            rustix::fs::sync();
            final_sync = Some(t.elapsed());
        }
        Measured {
            duration: end - measure_start,
            final_sync,
            cpu,
        }
    }
}
