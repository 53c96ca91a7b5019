//! One workload across the ranks of a job ([`Ranks`]): under `mpirun`, or as threads in tests.
//!
//! Every front-end's engine run goes through [`run`]. Alone it is the engine's run. With
//! several ranks:
//!
//! - **Where**: each rank runs in its own subdirectory of the run directory, `DIR/rank.N`
//!   ([`rank_dir`]), made if missing; what the front-end lays out there is its own.
//! - **Start**: every rank does its untimed setup, then waits at a barrier
//!   ([`RunOptions::start_gate`]), just before its threads start: the measured phases start
//!   together, within the barrier's release skew (what each rank saw is kept,
//!   [`RankFigures::start_offset`]).
//! - **Stop**: a time bound ends together, as the ranks start together. A workload that
//!   stonewalls (stops at its first finisher) stops every rank when the first rank finishes:
//!   from the start, a helper thread per rank exchanges "done yet?" with the others every
//!   [`POLL`] (an all-gather of one byte, a collective every rank takes part in), and the first
//!   round in which any rank is done (its run is stopping, [`RunOptions::stopped`], seen by its
//!   engine within 10 ms) sets every rank's [`RunOptions::peer_stop`], which the engine checks
//!   every 10 ms. A rank so stops at most about `POLL` + one all-gather + 10 ms
//!   after the first finisher (plus the time its threads take to see the stop, as alone).
//!   A rank whose run fails before its start (its setup) still meets the others there, done:
//!   with a stonewall it stops them, and its error is the job's.
//! - **Result**: every rank's [`RunResult`] is gathered (as JSON, an all-gather) and merged
//!   ([`merge_ranks`]): counts and bytes summed, histograms added bucket by bucket, the
//!   per-second series summed second by second from the common start. Every rank returns the
//!   merged result, so the front-end's own report is the whole job's; only rank 0 prints it
//!   ([`Context::print`](crate::Context::print)). Each rank's figures and each host's CPU split
//!   are kept in the job's log, which [`finish`] puts in the [`Outcome`].

use crate::contract::{Context, Error, FrontEnd, Outcome};
use crate::ranks::Ranks;
use fslab_engine::cpu::CpuUsage;
use fslab_engine::run::{merge_ranks, StartGate};
use fslab_engine::{Progress, RunOptions, RunResult, Workload};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How often the ranks of a stonewalled run ask one another whether one is done.
pub const POLL: Duration = Duration::from_millis(10);

/// What one rank did over the job (its engine runs added up).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RankFigures {
    pub rank: usize,
    pub host: String,
    pub ops: u64,
    /// Bytes read and written.
    pub bytes: u64,
    /// Its measured time.
    #[serde(with = "fslab_engine::result::secs", rename = "duration_s")]
    #[schemars(with = "f64")]
    pub duration: Duration,
    /// When its measured phase started, after the earliest rank's (the largest over its engine
    /// runs). Read from each host's clock: across hosts it is only as good as their clocks'
    /// agreement.
    #[serde(with = "fslab_engine::result::secs", rename = "start_offset_s")]
    #[schemars(with = "f64")]
    pub start_offset: Duration,
}

/// One host of the job: its ranks, and its CPU split over the (last) engine run, as its first
/// rank measured it (the split is the machine's, the same for every rank on it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HostFigures {
    pub host: String,
    pub ranks: Vec<usize>,
    pub cpu: CpuUsage,
}

/// What the job's engine runs left for the outcome.
#[derive(Debug, Default)]
pub struct Log {
    pub ranks: Vec<RankFigures>,
    pub hosts: Vec<HostFigures>,
}

/// A front-end's job: its ranks, and the log its engine runs fill.
#[derive(Clone)]
pub struct Job {
    pub ranks: Arc<dyn Ranks>,
    pub log: Arc<Mutex<Log>>,
}

impl Job {
    pub fn alone() -> Job {
        Job::new(Arc::new(crate::ranks::Alone))
    }

    pub fn new(ranks: Arc<dyn Ranks>) -> Job {
        Job {
            ranks,
            log: Arc::default(),
        }
    }
}

/// This rank's directory beneath the job's `dir`: `dir` itself alone, `dir/rank.N` with
/// several ranks (made if missing).
pub fn rank_dir(ranks: &dyn Ranks, dir: &Path) -> Result<PathBuf, Error> {
    if ranks.size() == 1 {
        return Ok(dir.to_path_buf());
    }
    let mine = dir.join(format!("rank.{}", ranks.rank()));
    std::fs::create_dir_all(&mine).map_err(|e| Error::run(format!("cannot make {}: {e}", mine.display())))?;
    Ok(mine)
}

/// Runs `workload` with `opts` as this rank's share of the job (the module's doc says how);
/// `opts.dir` is the job's directory. Returns the whole job's result on every rank.
pub fn run(
    job: &Job,
    workload: &Workload,
    mut opts: RunOptions,
    progress: &mut dyn FnMut(&Progress),
) -> Result<RunResult, Error> {
    let ranks = job.ranks.clone();
    if ranks.size() == 1 {
        return Ok(fslab_engine::run(workload, &opts, progress)?);
    }
    let rank = ranks.rank();
    opts.dir = rank_dir(ranks.as_ref(), &opts.dir)?;
    // Each rank its own random stream, from the workload's seed when it names one.
    let mut mine = workload.clone();
    mine.seed = workload.seed.map(|s| s.wrapping_add(rank as u64));

    let stonewall = workload.stop.stonewall;
    let started: Arc<Mutex<Option<SystemTime>>> = Arc::default();
    let done = Arc::new(AtomicBool::new(false));
    let peer_stop = Arc::new(AtomicBool::new(false));
    let helper: Arc<Mutex<Option<std::thread::JoinHandle<()>>>> = Arc::default();
    let gate = {
        let (ranks, started, done, peer_stop, helper) = (
            ranks.clone(),
            started.clone(),
            done.clone(),
            peer_stop.clone(),
            helper.clone(),
        );
        move || {
            ranks.barrier();
            *started.lock().unwrap_or_else(|e| e.into_inner()) = Some(SystemTime::now());
            if stonewall {
                let (ranks, done, peer_stop) = (ranks.clone(), done.clone(), peer_stop.clone());
                let watch = std::thread::Builder::new()
                    .name("fslab-ranks".into())
                    .spawn(move || watch_peers(ranks.as_ref(), &done, &peer_stop))
                    .expect("a thread for the job's stonewall");
                *helper.lock().unwrap_or_else(|e| e.into_inner()) = Some(watch);
            }
        }
    };
    let gate = StartGate(Arc::new(gate));
    opts.start_gate = Some(gate.clone());
    if stonewall {
        opts.peer_stop = Some(peer_stop.clone());
        // Done for the others as soon as it stops (IOzone's children stopped by its stonewall
        // go on to finish their files, uncounted: the others need not wait for that).
        opts.stopped = Some(done.clone());
    }
    let result = fslab_engine::run(&mine, &opts, progress);
    if started.lock().unwrap_or_else(|e| e.into_inner()).is_none() {
        // Failed before the start: meet the others there all the same.
        (gate.0)();
    }
    done.store(true, Ordering::SeqCst);
    if let Some(watch) = helper.lock().unwrap_or_else(|e| e.into_inner()).take() {
        let _ = watch.join();
    }

    let start = started
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .map_or(0.0, |t| t.duration_since(UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64()));
    let (result, error) = match result {
        Ok(r) => (Some(r), None),
        Err(e) => (None, Some(Error::from(e))),
    };
    // A script's compiled steps (dbench's loadfile: hundreds of thousands) are the same on
    // every rank and need not travel: each rank puts its own back in the merged result.
    let own_workload = result.as_ref().map(|r| r.workload.clone());
    let share = Share {
        host: ranks.host(),
        start,
        result: result.map(|mut r| {
            for g in &mut r.workload.groups {
                if let Some(s) = &mut g.script {
                    s.steps.clear();
                }
            }
            r
        }),
        error: error.as_ref().map(|e| e.to_string()),
    };
    let all = ranks.all_gather(&serde_json::to_vec(&share).expect("a rank's share serialises"));
    if let Some(e) = error {
        return Err(e);
    }
    let shares = all
        .iter()
        .enumerate()
        .map(|(r, bytes)| {
            let s: Share = serde_json::from_slice(bytes)
                .map_err(|e| Error::run(format!("rank {r} sent a result this rank cannot read: {e}")))?;
            match (&s.result, &s.error) {
                (Some(_), _) => Ok(s),
                (None, e) => Err(Error::run(format!(
                    "rank {r} on {} failed: {}",
                    s.host,
                    e.as_deref().unwrap_or("no result")
                ))),
            }
        })
        .collect::<Result<Vec<Share>, Error>>()?;
    let results: Vec<RunResult> = shares.iter().filter_map(|s| s.result.clone()).collect();
    let mut merged = merge_ranks(&results);
    if let Some(mut w) = own_workload {
        w.seed = merged.workload.seed;
        merged.workload = w;
    }
    merged.dir = opts.dir.parent().unwrap_or(&opts.dir).display().to_string();
    job.log.lock().unwrap_or_else(|e| e.into_inner()).add(&shares, &results);
    Ok(merged)
}

/// What a rank sends the others after its run.
#[derive(Serialize, Deserialize)]
struct Share {
    host: String,
    /// When its measured phase started (seconds since the epoch, its host's clock).
    start: f64,
    result: Option<RunResult>,
    error: Option<String>,
}

/// Until every rank is done: every [`POLL`], tell the others whether this rank is done and hear
/// whether any is; once one is, stop this rank's run.
fn watch_peers(ranks: &dyn Ranks, done: &AtomicBool, peer_stop: &AtomicBool) {
    loop {
        let all = ranks.all_gather(&[u8::from(done.load(Ordering::SeqCst))]);
        let finished = all.iter().filter(|b| b.first() == Some(&1)).count();
        if finished > 0 {
            peer_stop.store(true, Ordering::SeqCst);
        }
        if finished == all.len() {
            return;
        }
        std::thread::sleep(POLL);
    }
}

impl Log {
    fn add(&mut self, shares: &[Share], results: &[RunResult]) {
        let first = shares.iter().map(|s| s.start).fold(f64::INFINITY, f64::min);
        for (rank, (s, r)) in shares.iter().zip(results).enumerate() {
            let offset = Duration::from_secs_f64((s.start - first).max(0.0));
            let bytes = r.totals.bytes_read + r.totals.bytes_written;
            match self.ranks.iter_mut().find(|f| f.rank == rank) {
                Some(f) => {
                    f.ops += r.totals.ops;
                    f.bytes += bytes;
                    f.duration += r.duration;
                    f.start_offset = f.start_offset.max(offset);
                }
                None => self.ranks.push(RankFigures {
                    rank,
                    host: s.host.clone(),
                    ops: r.totals.ops,
                    bytes,
                    duration: r.duration,
                    start_offset: offset,
                }),
            }
        }
        self.hosts.clear();
        for (rank, (s, r)) in shares.iter().zip(results).enumerate() {
            match self.hosts.iter_mut().find(|h| h.host == s.host) {
                Some(h) => h.ranks.push(rank),
                None => self.hosts.push(HostFigures {
                    host: s.host.clone(),
                    ranks: vec![rank],
                    cpu: r.cpu.clone(),
                }),
            }
        }
    }
}

/// Runs `frontend` as this rank's part of `ctx`'s job and returns the job's outcome, with each
/// rank's figures and each host's when there are several.
pub fn execute(frontend: &mut dyn FrontEnd, ctx: &mut Context) -> Result<Outcome, Error> {
    let mut outcome = frontend.execute(ctx)?;
    finish(ctx, &mut outcome);
    Ok(outcome)
}

/// Puts the job's log (each rank's figures, each host's) in `outcome`, with several ranks.
pub fn finish(ctx: &Context, outcome: &mut Outcome) {
    let mut log = ctx.job_log().lock().unwrap_or_else(|e| e.into_inner());
    // A front-end that runs its ranks itself (IOR, mdtest) leaves the log empty.
    if ctx.ranks.size() > 1 && !log.ranks.is_empty() {
        outcome.ranks = std::mem::take(&mut log.ranks);
        outcome.hosts = std::mem::take(&mut log.hosts);
    }
}
