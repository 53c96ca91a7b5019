//! Running a plan in FFSB's order: age each filesystem that asks for it, set the filesets up
//! (untimed), run the callout, then the timed benchmark whose time includes the final `sync()`.

use super::compile::{AgingPlan, Plan};
use fslab_engine::confine::{ConfineError, RunDir};
use fslab_engine::fileset::{self, FileTable, SetupError, SetupReport};
use fslab_engine::result::Status;
use fslab_engine::run::utilisation;
use fslab_engine::workload::SetupCalls;
use fslab_engine::{Bytes, Progress, RunError, RunOptions, RunResult, Workload};
use std::hash::{BuildHasher, Hasher};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

/// What is running when progress is reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Aging filesystem `n`.
    Aging(usize),
    Benchmark,
}

/// One filesystem's aging.
#[derive(Debug, Clone)]
pub struct AgingOutcome {
    pub fs: usize,
    pub root: PathBuf,
    pub desired_util: f64,
    pub from_util: f64,
    pub to_util: f64,
    pub secs: f64,
    /// The aging run; none when the filesystem was already full enough.
    pub result: Option<RunResult>,
}

/// What running a plan produced.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub aging: Vec<AgingOutcome>,
    /// Filesets set up before the benchmark (with time=0, or to run a callout in between).
    pub setup: Vec<SetupReport>,
    /// FFSB's "fs setup took": aging and fileset setup, until the benchmark starts.
    pub setup_secs: f64,
    /// The callout's exit code (FFSB goes on whatever it is).
    pub callout_status: Option<i32>,
    /// The benchmark; none with time=0.
    pub result: Option<RunResult>,
    /// Each filesystem's utilisation (0 to 1) before anything was made: FFSB 5.x's
    /// `current utilization`.
    pub start_util: Vec<f64>,
    /// The benchmark workload as run: its seed, init_util turned into a size.
    pub workload: Workload,
}

#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// A directory the profile or --dir names is missing.
    #[error("{0}")]
    Location(String),
    /// The system lacks something the run needs.
    #[error("{0}")]
    Environment(String),
    #[error("the callout `{command}` could not start: {error}")]
    Callout { command: String, error: std::io::Error },
    #[error("aging filesystem {fs} failed: {message}")]
    Aging { fs: usize, message: String },
    #[error(transparent)]
    Engine(#[from] RunError),
    /// The benchmark run failed (with a job of several ranks: here or on another rank).
    #[error(transparent)]
    Job(crate::contract::Error),
    #[error(transparent)]
    Setup(#[from] SetupError),
    #[error(transparent)]
    Confine(#[from] ConfineError),
}

/// Checks, before anything is made, that every directory the run needs is there.
pub fn preflight(plan: &Plan) -> Result<(), ExecError> {
    for (i, root) in plan.roots.iter().enumerate() {
        // With --dir and several filesystems, fslab makes DIR/fs<i> in DIR.
        let must_exist = if plan.make_roots {
            root.parent().unwrap_or(root)
        } else {
            root.as_path()
        };
        if !must_exist.is_dir() {
            let whose = if plan.make_roots {
                "--dir".to_string()
            } else {
                format!("the location of filesystem {i}")
            };
            return Err(ExecError::Location(format!(
                "{whose}: {} is not a directory",
                must_exist.display()
            )));
        }
    }
    Ok(())
}

/// Runs the plan; `progress` hears from each engine run once a second; `interrupt`, once set,
/// stops the engine run under way (its figures are then partial).
///
/// With a job of several ranks (`crate::job`), `plan` is this rank's ([`Plan::for_rank`]): its
/// locations are `LOCATION/rank.N`; the benchmark run is the job's (a common start, one merged
/// result), the aging and setup each rank's own.
pub fn execute(
    plan: &Plan,
    job: &crate::job::Job,
    interrupt: Option<Arc<AtomicBool>>,
    progress: &mut dyn FnMut(Phase, &Progress),
) -> Result<Outcome, ExecError> {
    preflight(plan)?;
    if plan.make_roots {
        for root in &plan.roots {
            std::fs::create_dir_all(root)
                .map_err(|e| ExecError::Environment(format!("cannot make {}: {e}", root.display())))?;
        }
    }
    let started = Instant::now();
    let mut workload = plan.workload.clone();
    let seed = workload.seed.unwrap_or_else(random_seed);
    workload.seed = Some(seed);

    let start_util = plan
        .roots
        .iter()
        .map(|root| RunDir::open(root).ok().and_then(|d| utilisation(d.fd())).unwrap_or(0.0))
        .collect();
    let mut aging = Vec::new();
    for a in &plan.aging {
        aging.push(age(plan, a, &workload, seed, interrupt.clone(), progress)?);
    }
    for (k, util) in plan.init_util.iter().enumerate() {
        if let Some(util) = util {
            size_to_util(&plan.roots[k], &mut workload, k, *util)?;
        }
    }

    let mut outcome = Outcome {
        aging,
        setup: Vec::new(),
        setup_secs: 0.0,
        callout_status: None,
        result: None,
        start_util,
        workload: workload.clone(),
    };
    if plan.time == 0 || plan.callout.is_some() {
        // FFSB's sync() comes after the setup only when a benchmark follows, and before the
        // callout: it is made here, not by the setup.
        let mut unsynced = workload.clone();
        for fs in &mut unsynced.filesets {
            fs.setup_calls = SetupCalls::Ffsb { sync: false };
        }
        outcome.setup = set_up(plan, &unsynced, seed)?;
        if plan.time == 0 {
            outcome.setup_secs = started.elapsed().as_secs_f64();
            return Ok(outcome);
        }
        crate::sync();
        if let Some(command) = &plan.callout {
            outcome.callout_status = callout(command)?;
        }
        // The files are there: the run keeps them, and syncs no more.
        workload.filesets = unsynced.filesets;
        for fs in &mut workload.filesets {
            fs.reuse = true;
        }
    }
    let before = started.elapsed().as_secs_f64();
    // The job's directory: job::run runs each rank in its rank.N beneath it, this plan's
    // first location.
    let dir = match job.ranks.size() {
        1 => plan.roots[0].clone(),
        _ => plan.roots[0].parent().unwrap_or(&plan.roots[0]).to_path_buf(),
    };
    let opts = RunOptions {
        dir,
        drop_caches: plan.drop_caches,
        interrupt,
        ..RunOptions::default()
    };
    let result = crate::job::run(job, &workload, opts, &mut |p: &Progress| progress(Phase::Benchmark, p))
        .map_err(ExecError::Job)?;
    outcome.setup_secs = before + result.setup.iter().map(|s| s.duration.as_secs_f64()).sum::<f64>();
    outcome.result = Some(result);
    Ok(outcome)
}

/// A seed from the process's random hasher keys (the classic crate has no generator of its own).
fn random_seed() -> u64 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(Instant::now().elapsed().as_nanos());
    h.finish()
}

/// FFSB's aging: remove the old data, then run the aging threadgroup until the filesystem is
/// `desired_util` full (unless it already is).
fn age(
    plan: &Plan,
    a: &AgingPlan,
    bench: &Workload,
    seed: u64,
    interrupt: Option<Arc<AtomicBool>>,
    progress: &mut dyn FnMut(Phase, &Progress),
) -> Result<AgingOutcome, ExecError> {
    let root = &plan.roots[a.fs];
    let dir = RunDir::open(root)?;
    // FFSB starts with `rm -rf data meta` (its aging files live in data/ too): no file of an
    // earlier run counts toward the target.
    fileset::remove(&dir, &bench.filesets[a.fs])?;
    for fill in &a.workload.filesets {
        fileset::remove(&dir, fill)?;
    }
    let from = utilisation(dir.fd()).unwrap_or(0.0);
    let t = Instant::now();
    let mut outcome = AgingOutcome {
        fs: a.fs,
        root: root.clone(),
        desired_util: a.desired_util,
        from_util: from,
        to_util: from,
        secs: 0.0,
        result: None,
    };
    if from >= a.desired_util {
        return Ok(outcome);
    }
    let mut workload = a.workload.clone();
    workload.seed = Some(seed ^ 0xa9e5_u64.wrapping_mul(a.fs as u64 + 1));
    let opts = RunOptions {
        dir: root.clone(),
        interrupt,
        ..RunOptions::default()
    };
    let result = fslab_engine::run(&workload, &opts, &mut |p: &Progress| progress(Phase::Aging(a.fs), p))?;
    if result.status == Status::Failed {
        let message = result
            .first_error
            .as_ref()
            .map_or_else(|| "an operation failed".to_string(), |e| e.error.message.clone());
        return Err(ExecError::Aging { fs: a.fs, message });
    }
    outcome.to_util = utilisation(dir.fd()).unwrap_or(from);
    outcome.secs = t.elapsed().as_secs_f64();
    outcome.result = Some(result);
    Ok(outcome)
}

/// `init_util`: makes files until the filesystem is `util` full, by turning the space missing
/// into a total size of files.
fn size_to_util(root: &Path, workload: &mut Workload, k: usize, util: f64) -> Result<(), ExecError> {
    let dir = RunDir::open(root)?;
    let fs = &mut workload.filesets[k];
    if !fs.reuse {
        // The old files are about to go: they must not count.
        fileset::remove(&dir, fs)?;
    }
    let (total, used) = filesystem_size(root)?;
    let want = (util * total as f64) as u64;
    fs.files = 0;
    fs.until_bytes = (want > used).then(|| Bytes(want - used));
    Ok(())
}

/// (size, used) of the filesystem holding `path`, in bytes.
fn filesystem_size(path: &Path) -> Result<(u64, u64), ExecError> {
    fslab_engine::run::fs_space(path).map_err(|e| {
        ExecError::Environment(format!(
            "init_util needs the size of the filesystem at {}: {e}",
            path.display()
        ))
    })
}

/// Sets the filesets up as the engine would (same seeds, so a run with `reuse` keeps them).
fn set_up(plan: &Plan, workload: &Workload, seed: u64) -> Result<Vec<SetupReport>, ExecError> {
    let mut reports = Vec::new();
    for k in 0..workload.filesets.len() {
        let dir = RunDir::open(&plan.roots[k])?;
        let (_table, report) = FileTable::setup_for(&dir, workload, k, seed)?;
        reports.push(report);
    }
    Ok(reports)
}

/// Runs the callout with `sh -c`, its output on stderr (stdout may carry JSON). FFSB only stops
/// when the command cannot start.
fn callout(command: &str) -> Result<Option<i32>, ExecError> {
    let status = Command::new("sh")
        .arg("-c")
        .arg(command)
        .stdin(Stdio::null())
        .stdout(Stdio::from(std::io::stderr()))
        .status()
        .map_err(|error| ExecError::Callout {
            command: command.to_string(),
            error,
        })?;
    Ok(status.code())
}
