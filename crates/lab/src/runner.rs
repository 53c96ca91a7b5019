//! A study's life: each filesystem is made fresh as the study asks (per run, per cell or once),
//! each cell's runs execute in worker processes, and every step and run goes to the store the
//! moment it ends. Whatever a cell meets (a filesystem this machine lacks, a rejected option, a
//! run that fails or hangs), the study goes on with the next one.
//!
//! A filesystem's life: wipe → mkfs → mount (options read back) → fill / age → for each cell:
//! scheduler and read-ahead → runs (setup, caches dropped, optional warm-up, measured run) →
//! umount → fsck. Each step is timed with its CPU split.

use crate::device::{self, LoopImage};
use crate::filesystem::{self, Support};
use crate::invoke::{self, Metric, Phase};
use crate::matrix::{self, Cell, Form};
use crate::step::{timed, StepRecord};
use crate::study::{Filesystem, Fresh, Study, Target};
use crate::worker::{run_phase, Ended, Watch};
use crate::{queue, LabError};
use fslab_engine::result::{rfc3339, Status};
use fslab_store::Store;
use fslab_store::{CellId, CellSpec, CellStatus, RunRecord, RunStatus, StudyId};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

/// How to run a study.
#[derive(Debug, Clone)]
pub struct Options {
    /// The fslab binary the workers run.
    pub exe: PathBuf,
    pub form: Form,
    /// The user confirmed that the study's `destroy` device may be formatted.
    pub yes: bool,
    /// Where loop images and mount points go (a directory of this study is made in it and
    /// removed at the end).
    pub scratch: PathBuf,
}

/// What the runner tells its caller as it goes.
#[derive(Debug, Clone)]
pub enum Event {
    Begin {
        cells: usize,
        runs_left: u64,
        estimate: Duration,
    },
    /// A cell that cannot run here, and why.
    Unsupported {
        cell: String,
        reason: String,
    },
    Step {
        cell: String,
        step: StepRecord,
    },
    Run {
        cell: String,
        repeat: u32,
        warmup: bool,
        status: RunStatus,
        headline: Option<Metric>,
        error: Option<String>,
        done: u64,
        total: u64,
        left: Duration,
    },
}

/// How a study (or this part of it) ended.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub runs: u64,
    pub ok: u64,
    pub failed: u64,
    pub hung: u64,
    pub unsupported_cells: u64,
    /// Ctrl-C or SIGTERM stopped it; `fslab study resume` goes on.
    pub interrupted: bool,
}

/// Set by SIGINT/SIGTERM: the runner stops its worker and tears down before it exits.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

fn catch_interrupts() {
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    unsafe {
        libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
    }
}

/// Checks that every cell's workload is valid, by asking each tool to check it (`--check`), before
/// anything is formatted: a bad profile or option is reported with the tool's own message
/// (file and line) and the study does not start.
pub fn preflight(study: &Study, form: Form, exe: &Path) -> Result<(), String> {
    let mut seen = std::collections::BTreeSet::new();
    let dir = std::env::temp_dir();
    for cell in matrix::expand(study, form) {
        let w = &study.workloads[cell.workload];
        for phase in invoke::phases(w, &cell.options, &dir, false) {
            if !phase.measured {
                continue;
            }
            let mut args: Vec<String> = phase.args.into_iter().filter(|a| a != "--json").collect();
            // sysbench's command word comes last; --check goes before it.
            let at = if w.tool == crate::study::Tool::Sysbench {
                args.len() - 1
            } else {
                args.len()
            };
            args.insert(at, "--check".to_string());
            if !seen.insert(args.clone()) {
                continue;
            }
            let out = std::process::Command::new(exe)
                .args(&args)
                .output()
                .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
            if !out.status.success() {
                return Err(format!(
                    "workload `{}` ({}): {}",
                    w.name,
                    cell.key,
                    String::from_utf8_lossy(&out.stderr)
                        .trim()
                        .trim_start_matches("fslab: ")
                ));
            }
        }
    }
    Ok(())
}

/// The store's description of a cell.
pub fn cell_spec(study: &Study, cell: &Cell, form: Form) -> CellSpec {
    let fs = &study.filesystems[cell.filesystem];
    let w = &study.workloads[cell.workload];
    CellSpec {
        key: cell.key.clone(),
        ordinal: cell.ordinal,
        filesystem: fs.name.clone(),
        fs_type: fs.fs_type.clone(),
        mkfs_options: fs.mkfs.clone(),
        mount_options: fs.mount.clone(),
        scheduler: cell.scheduler.clone(),
        read_ahead_kb: cell.read_ahead_kb,
        fill_to: cell.fill_to,
        workload: w.name.clone(),
        tool: w.tool.key().to_string(),
        params: cell.options.iter().cloned().collect(),
        planned_repeats: matrix::repeats(study, form),
    }
}

/// A cell with the runs it still needs.
struct Todo {
    cell: Cell,
    id: CellId,
    repeats: Vec<u32>,
}

/// Runs what the study still lacks in the store: everything for a new study, the missing runs
/// after an interruption.
pub fn run_study(
    store: &Store,
    study: &Study,
    id: StudyId,
    opts: &Options,
    on: &mut dyn FnMut(&Event),
) -> Result<Outcome, LabError> {
    if let Target::Block { path, destroy } = &study.device.target {
        device::check_block_device(path, destroy.as_deref(), opts.yes)?;
    }
    catch_interrupts();
    let cells = matrix::expand(study, opts.form);
    let repeats = matrix::repeats(study, opts.form);
    let stored = store.cells(id).map_err(store_error)?;
    let mut todo = Vec::new();
    for cell in cells.iter() {
        let cid = store
            .add_cell(id, &cell_spec(study, cell, opts.form))
            .map_err(store_error)?;
        if stored
            .iter()
            .any(|c| c.id == cid && c.status == CellStatus::Unsupported)
        {
            continue;
        }
        let done = store.runs_done(cid).map_err(store_error)?;
        let missing: Vec<u32> = (0..repeats).filter(|r| !done.contains(r)).collect();
        if !missing.is_empty() {
            todo.push(Todo {
                cell: cell.clone(),
                id: cid,
                repeats: missing,
            });
        }
    }
    let runs_left: u64 = todo.iter().map(|t| t.repeats.len() as u64).sum();
    on(&Event::Begin {
        cells: cells.len(),
        runs_left,
        estimate: matrix::estimate(study, opts.form),
    });
    let scratch = opts.scratch.join(format!("fslab-study-{id}"));
    clear_leftovers(&scratch);
    std::fs::create_dir_all(&scratch).map_err(|e| LabError::io(format!("cannot make {}", scratch.display()), e))?;
    let labels = todo.iter().map(|t| (t.id, t.cell.label(study))).collect();
    let mut lab = Lab {
        store,
        study,
        id,
        labels,
        opts,
        scratch: scratch.clone(),
        outcome: Outcome::default(),
        done: 0,
        total: runs_left,
        started: Instant::now(),
        on,
        tree: None,
    };
    let result = lab.run_all(todo);
    let outcome = lab.outcome.clone();
    clear_leftovers(&scratch);
    result.map(|()| outcome)
}

struct Lab<'a> {
    store: &'a Store,
    study: &'a Study,
    id: StudyId,
    /// Each cell's label, for events.
    labels: std::collections::HashMap<CellId, String>,
    opts: &'a Options,
    scratch: PathBuf,
    outcome: Outcome,
    done: u64,
    total: u64,
    started: Instant,
    on: &'a mut dyn FnMut(&Event),
    /// The fill's tree, read (an archive) or generated once for every filesystem it fills.
    tree: Option<crate::fill::Tree>,
}

/// A filesystem made for some runs.
struct Instance {
    image: Option<LoopImage>,
    device: Option<PathBuf>,
    mnt: PathBuf,
    effective_options: String,
    /// The scheduler and read-ahead of the current cell, as read back.
    settings: serde_json::Value,
    /// A run hung on it: it is detached and cannot be used again.
    dead: bool,
}

/// Why a filesystem could not be made: all the cells on it are unsupported.
struct Unsupported(String);

/// Why a filesystem could not be made ready.
enum NotMade {
    /// The machine cannot make it (a missing filesystem, a refused option): every cell on it is
    /// unsupported.
    Unsupported(Unsupported),
    /// It was made but could not be filled or aged: the runs meant for it fail with the reason,
    /// and the study goes on with the next filesystem.
    Failed(String),
}

impl From<Unsupported> for NotMade {
    fn from(u: Unsupported) -> NotMade {
        NotMade::Unsupported(u)
    }
}

impl Lab<'_> {
    fn run_all(&mut self, todo: Vec<Todo>) -> Result<(), LabError> {
        let study = self.study;
        for (fi, fs) in study.filesystems.iter().enumerate() {
            let mine: Vec<&Todo> = todo.iter().filter(|t| t.cell.filesystem == fi).collect();
            if mine.is_empty() {
                continue;
            }
            if let Err(e) = Support::check(&fs.fs_type) {
                self.unsupported(&mine, &e.to_string())?;
                continue;
            }
            // Which runs share a filesystem: with `fresh = "study"`, those filled to one level.
            let batches: Vec<Vec<(&Todo, u32)>> = match study.fresh {
                Fresh::Study => {
                    let mut levels: Vec<Option<f64>> = Vec::new();
                    for t in &mine {
                        if !levels.contains(&t.cell.fill_to) {
                            levels.push(t.cell.fill_to);
                        }
                    }
                    levels
                        .into_iter()
                        .map(|level| {
                            mine.iter()
                                .filter(|t| t.cell.fill_to == level)
                                .flat_map(|t| t.repeats.iter().map(move |r| (*t, *r)))
                                .collect()
                        })
                        .collect()
                }
                Fresh::Cell => mine
                    .iter()
                    .map(|t| t.repeats.iter().map(|r| (*t, *r)).collect())
                    .collect(),
                Fresh::Repeat => mine
                    .iter()
                    .flat_map(|t| t.repeats.iter().map(move |r| vec![(*t, *r)]))
                    .collect(),
            };
            let mut gave_up = false;
            for batch in batches {
                if gave_up || self.interrupted() {
                    break;
                }
                let mut queue = batch.into_iter().peekable();
                while queue.peek().is_some() && !self.interrupted() {
                    let (first, repeat) = *queue.peek().expect("peeked");
                    let inst = match self.make(fs, first.id, first.cell.fill_to, repeat)? {
                        Ok(inst) => inst,
                        Err(NotMade::Unsupported(Unsupported(reason))) => {
                            self.unsupported(&mine, &reason)?;
                            gave_up = true;
                            break;
                        }
                        Err(NotMade::Failed(reason)) => {
                            for (t, repeat) in queue.by_ref() {
                                self.finish_run(t.id, &failed_run(repeat, &reason))?;
                            }
                            continue;
                        }
                    };
                    let mut inst = inst;
                    let mut configured: Option<CellId> = None;
                    let mut warmed: Vec<CellId> = Vec::new();
                    while let Some((t, repeat)) = queue.next_if(|_| !inst.dead) {
                        if self.interrupted() {
                            break;
                        }
                        if configured != Some(t.id) {
                            match self.configure(&inst, t)? {
                                Some(settings) => {
                                    inst.settings = settings;
                                    configured = Some(t.id);
                                }
                                None => {
                                    // The device cannot take this cell's settings: skip its runs.
                                    while queue.next_if(|(u, _)| u.id == t.id).is_some() {}
                                    configured = None;
                                    continue;
                                }
                            }
                        }
                        if fs.warmup(study) && !warmed.contains(&t.id) {
                            warmed.push(t.id);
                            self.run_once(&mut inst, t, repeat, true)?;
                            if inst.dead {
                                break;
                            }
                        }
                        self.run_once(&mut inst, t, repeat, false)?;
                    }
                    self.unmake(fs, inst, first.id, repeat)?;
                }
            }
        }
        self.settle(&todo)?;
        if self.interrupted() {
            self.outcome.interrupted = true;
        }
        Ok(())
    }

    fn interrupted(&self) -> bool {
        INTERRUPTED.load(Ordering::SeqCst)
    }

    fn step(&mut self, cell: CellId, key: &str, mut rec: StepRecord, repeat: u32) -> Result<(), LabError> {
        if self.study.fresh == Fresh::Repeat || matches!(rec.name.as_str(), "scheduler" | "read_ahead") {
            rec.repeat = Some(repeat);
        }
        self.store.record_step(cell, &rec).map_err(store_error)?;
        (self.on)(&Event::Step {
            cell: key.to_string(),
            step: rec,
        });
        Ok(())
    }

    fn unsupported(&mut self, cells: &[&Todo], reason: &str) -> Result<(), LabError> {
        for t in cells {
            self.store
                .set_cell_status(t.id, CellStatus::Unsupported, Some(reason))
                .map_err(store_error)?;
            self.outcome.unsupported_cells += 1;
            self.total = self.total.saturating_sub(t.repeats.len() as u64);
            let cell = self.label(t.id);
            (self.on)(&Event::Unsupported {
                cell,
                reason: reason.to_string(),
            });
        }
        Ok(())
    }

    /// A fresh filesystem: loop image (or the named device), wipe, mkfs, mount, fill to
    /// `fill_to`, age.
    fn make(
        &mut self,
        fs: &Filesystem,
        cell: CellId,
        fill_to: Option<f64>,
        repeat: u32,
    ) -> Result<Result<Instance, NotMade>, LabError> {
        let key = self.label(cell);
        let n = std::fs::read_dir(&self.scratch).map_or(0, |d| d.count());
        let mnt = self.scratch.join(format!("mnt{n}"));
        std::fs::create_dir_all(&mnt).map_err(|e| LabError::io(format!("cannot make {}", mnt.display()), e))?;
        let mut inst = Instance {
            image: None,
            device: None,
            mnt,
            effective_options: String::new(),
            settings: json!({}),
            dead: false,
        };
        let size = match (&self.study.device.target, self.opts.form) {
            (Target::Loop { size }, Form::Quick) => self.study.quick.loop_size.unwrap_or(*size),
            (Target::Loop { size }, Form::Full) => *size,
            (Target::Block { .. }, _) => 0,
        };
        if fs.fs_type != "tmpfs" {
            let dev = match &self.study.device.target {
                Target::Loop { .. } => {
                    let img = LoopImage::create(&self.scratch, size)?;
                    let dev = img.device().to_path_buf();
                    inst.image = Some(img);
                    dev
                }
                Target::Block { path, .. } => path.clone(),
            };
            inst.device = Some(dev.clone());
            let (rec, r) = timed("wipe", || device::wipe(&dev), |_| dev.display().to_string());
            self.step(cell, &key, rec, repeat)?;
            r?;
            let (rec, r) = timed(
                "mkfs",
                || filesystem::mkfs(&dev, &fs.fs_type, &fs.mkfs),
                |_| format!("mkfs -t {} {}", fs.fs_type, fs.mkfs).trim().to_string(),
            );
            self.step(cell, &key, rec, repeat)?;
            if let Err(e) = r {
                return Ok(Err(Unsupported(format!("mkfs failed: {e}")).into()));
            }
        }
        let mut options = fs.mount.clone();
        if fs.fs_type == "tmpfs" && !options.split(',').any(|o| o.starts_with("size=")) {
            let size = if size == 0 { 1 << 30 } else { size };
            options = [options.as_str(), &format!("size={size}")]
                .iter()
                .filter(|s| !s.is_empty())
                .copied()
                .collect::<Vec<_>>()
                .join(",");
        }
        let dev = inst.device.clone();
        let (rec, r) = timed(
            "mount",
            || filesystem::mount(dev.as_deref(), &inst.mnt, &fs.fs_type, &options),
            |m| m.effective_options.clone(),
        );
        self.step(cell, &key, rec, repeat)?;
        match r {
            Ok(m) => inst.effective_options = m.effective_options,
            Err(e) => return Ok(Err(Unsupported(format!("mount -o {options} failed: {e}")).into())),
        }
        if let (Some(spec), Some(to)) = (&self.study.fill, fill_to) {
            let spec = crate::fill::FillSpec { to, ..spec.clone() };
            if self.tree.is_none() {
                self.tree = Some(crate::fill::Tree::load(&spec.from, spec.seed)?);
            }
            let tree = self.tree.as_ref().expect("loaded above");
            let root = inst.mnt.clone();
            let (rec, r) = timed(
                "fill",
                || crate::fill::fill_from(&root, tree, &spec),
                |f| format!("{f:?}"),
            );
            self.step(cell, &key, rec, repeat)?;
            if let Err(e) = r {
                self.unmake(fs, inst, cell, repeat)?;
                return Ok(Err(NotMade::Failed(format!("fill failed: {e}"))));
            }
        }
        if let Some(spec) = &self.study.age {
            let root = inst.mnt.clone();
            let (rec, r) = timed("age", || crate::age::age(&root, spec), |a| format!("{a:?}"));
            self.step(cell, &key, rec, repeat)?;
            if let Err(e) = r {
                self.unmake(fs, inst, cell, repeat)?;
                return Ok(Err(NotMade::Failed(format!("ageing failed: {e}"))));
            }
        }
        Ok(Ok(inst))
    }

    /// The end of a filesystem: umount and fsck; a dead one is detached lazily and left to go.
    fn unmake(&mut self, fs: &Filesystem, mut inst: Instance, cell: CellId, repeat: u32) -> Result<(), LabError> {
        let key = self.label(cell);
        if inst.dead {
            let _ = filesystem::umount_lazy(&inst.mnt);
            if let Some(img) = inst.image.take() {
                img.detach_later();
            }
            return Ok(());
        }
        let mnt = inst.mnt.clone();
        let (rec, r) = timed("umount", || filesystem::umount(&mnt), |_| String::new());
        self.step(cell, &key, rec, repeat)?;
        if r.is_err() {
            let _ = filesystem::umount_lazy(&mnt);
        } else {
            let _ = std::fs::remove_dir(&mnt);
        }
        if let (true, Some(dev)) = (fs.fsck, &inst.device) {
            let (rec, _) = timed("fsck", || filesystem::fsck(dev, &fs.fs_type), |out| out.clone());
            self.step(cell, &key, rec, repeat)?;
        }
        drop(inst.image.take());
        Ok(())
    }

    /// Sets the cell's scheduler and read-ahead and reads them back; `None` when the device cannot
    /// take them (the cell is then unsupported).
    fn configure(&mut self, inst: &Instance, t: &Todo) -> Result<Option<serde_json::Value>, LabError> {
        let mut env = json!({});
        let Some(dev) = &inst.device else {
            return Ok(Some(env));
        };
        let key = self.label(t.id);
        let repeat = t.repeats[0];
        if let Some(s) = &t.cell.scheduler {
            let (rec, r) = timed("scheduler", || queue::set_scheduler(dev, s), |back| back.clone());
            self.step(t.id, &key, rec, repeat)?;
            match r {
                Ok(back) => env["scheduler"] = json!(back),
                Err(e) => {
                    self.unsupported(&[t], &e.to_string())?;
                    return Ok(None);
                }
            }
        }
        if let Some(kb) = t.cell.read_ahead_kb {
            let (rec, r) = timed(
                "read_ahead",
                || queue::set_read_ahead_kb(dev, kb),
                |back| back.to_string(),
            );
            self.step(t.id, &key, rec, repeat)?;
            match r {
                Ok(back) => env["read_ahead_kb"] = json!(back),
                Err(e) => {
                    self.unsupported(&[t], &e.to_string())?;
                    return Ok(None);
                }
            }
        }
        Ok(Some(env))
    }

    /// One run of a cell: its phases in worker processes, recorded in the store as it ends.
    fn run_once(&mut self, inst: &mut Instance, t: &Todo, repeat: u32, warmup: bool) -> Result<(), LabError> {
        let study = self.study;
        let w = &study.workloads[t.cell.workload];
        let fs = &study.filesystems[t.cell.filesystem];
        // A warm-up run is there to warm the caches: they are dropped before it, and not again
        // between it and the measured runs.
        let drop = study.drop_caches && (warmup || !fs.warmup(study));
        let lab_drops = drop && invoke::lab_drops_caches(w.tool);
        let phases = invoke::phases(w, &t.cell.options, &inst.mnt, drop && !lab_drops);
        let started_at = rfc3339(SystemTime::now());
        let t0 = Instant::now();
        let mut record = RunRecord {
            repeat,
            warmup,
            status: RunStatus::Failed,
            error: None,
            started_at,
            wall: Duration::ZERO,
            results: Vec::new(),
            classic: None,
            metrics: Vec::new(),
            environment: json!({
                "filesystem": fs.name,
                "type": fs.fs_type,
                "device": inst.device.as_ref().map(|d| d.display().to_string()),
                "mkfs": fs.mkfs,
                "mount_options": inst.effective_options,
                "scheduler": t.cell.scheduler,
                "read_ahead_kb": t.cell.read_ahead_kb,
                "read_back": inst.settings,
                "command": phases.iter().find(|p| p.measured).map(|p| p.args.join(" ")),
            }),
        };
        for phase in &phases {
            if phase.measured && lab_drops {
                if let Err(e) = crate::caches::drop_caches() {
                    record.error = Some(e.to_string());
                    break;
                }
            }
            match self.phase(phase, &inst.mnt)? {
                PhaseEnd::Done(out) => {
                    if let Some(out) = out {
                        record.status = if out.results.iter().any(|(_, r)| r.status == Status::Failed) {
                            RunStatus::Failed
                        } else {
                            RunStatus::Ok
                        };
                        record.error = out
                            .results
                            .iter()
                            .find_map(|(_, r)| r.first_error.as_ref())
                            .map(|e| format!("{} errors; the first: {}", e.total_errors, e.message));
                        record.results = out.results;
                        record.classic = out.classic;
                        record.metrics = out.metrics;
                    }
                }
                PhaseEnd::Failed(msg) => {
                    record.status = RunStatus::Failed;
                    record.error = Some(format!("{}: {msg}", phase.name));
                    if phase.measured || phase.name == "setup" {
                        break;
                    }
                }
                PhaseEnd::Hung(msg) => {
                    record.status = RunStatus::Hung;
                    record.error = Some(msg);
                    inst.dead = true;
                    break;
                }
                PhaseEnd::Interrupted => {
                    // Not recorded: resume runs it again.
                    inst.dead = true;
                    return Ok(());
                }
            }
        }
        record.wall = t0.elapsed();
        self.finish_run(t.id, &record)
    }

    /// Stores a run the moment it ends, counts it and says so.
    fn finish_run(&mut self, cell: CellId, record: &RunRecord) -> Result<(), LabError> {
        let (repeat, warmup) = (record.repeat, record.warmup);
        self.store.record_run(cell, record).map_err(store_error)?;
        if !warmup {
            self.done += 1;
            self.outcome.runs += 1;
            match record.status {
                RunStatus::Ok => self.outcome.ok += 1,
                RunStatus::Failed => self.outcome.failed += 1,
                RunStatus::Hung => self.outcome.hung += 1,
            }
        }
        let left = self.time_left();
        let cell = self.label(cell);
        (self.on)(&Event::Run {
            cell,
            repeat,
            warmup,
            status: record.status,
            headline: record.metrics.first().cloned(),
            error: record.error.clone(),
            done: self.done,
            total: self.total,
            left,
        });
        Ok(())
    }

    fn phase(&mut self, phase: &Phase, mnt: &Path) -> Result<PhaseEnd, LabError> {
        let timeout = self.study.timeout;
        let watch = Watch {
            timeout,
            stop: &|| INTERRUPTED.load(Ordering::SeqCst),
            // A worker blocked on a frozen filesystem dies once the filesystem thaws.
            unstick: &|| {
                let _ = filesystem::thaw(mnt);
            },
        };
        let ended = run_phase(&self.opts.exe, &phase.args, &watch)
            .map_err(|e| LabError::io(format!("cannot start {}", self.opts.exe.display()), e))?;
        let tool = self
            .study
            .workloads
            .iter()
            .find(|w| phase.args.contains(&w.tool.key().to_string()));
        Ok(match ended {
            Ended::Interrupted => PhaseEnd::Interrupted,
            Ended::Exited { code, stdout, stderr } => match code {
                Some(0 | 1) if phase.measured => {
                    let tool = tool.map_or(crate::study::Tool::Run, |w| w.tool);
                    match invoke::parse_output(tool, &stdout) {
                        Ok(out) => PhaseEnd::Done(Some(out)),
                        Err(e) => PhaseEnd::Failed(format!("{e}; {stderr}")),
                    }
                }
                Some(0) => PhaseEnd::Done(None),
                Some(c) => PhaseEnd::Failed(format!("exit {c}: {stderr}")),
                None => PhaseEnd::Failed(format!("killed by a signal: {stderr}")),
            },
            Ended::Hung { killed, stderr } => PhaseEnd::Hung(if killed {
                format!(
                    "hung: no result after {}; the worker was killed{}",
                    fmt_duration(timeout),
                    if stderr.is_empty() {
                        String::new()
                    } else {
                        format!(" ({stderr})")
                    }
                )
            } else {
                format!(
                    "hung: no result after {}; the worker is blocked in the kernel and could not be killed; the filesystem was detached",
                    fmt_duration(timeout)
                )
            }),
        })
    }

    /// Each cell's status from its runs: hung if one hung, failed if one failed, done when all
    /// its runs are in.
    fn settle(&mut self, todo: &[Todo]) -> Result<(), LabError> {
        let runs = self.store.runs(self.id).map_err(store_error)?;
        let unsupported: Vec<CellId> = self
            .store
            .cells(self.id)
            .map_err(store_error)?
            .iter()
            .filter(|c| c.status == CellStatus::Unsupported)
            .map(|c| c.id)
            .collect();
        let repeats = matrix::repeats(self.study, self.opts.form) as usize;
        for t in todo.iter().filter(|t| !unsupported.contains(&t.id)) {
            let mine: Vec<_> = runs.iter().filter(|r| r.cell_id == t.id && !r.warmup).collect();
            let first = |s: RunStatus| mine.iter().find(|r| r.status == s).and_then(|r| r.error.clone());
            let (status, reason) = if mine.iter().any(|r| r.status == RunStatus::Hung) {
                (CellStatus::Hung, first(RunStatus::Hung))
            } else if mine.iter().any(|r| r.status == RunStatus::Failed) {
                (CellStatus::Failed, first(RunStatus::Failed))
            } else if mine.len() >= repeats {
                (CellStatus::Done, None)
            } else {
                (CellStatus::Pending, None)
            };
            self.store
                .set_cell_status(t.id, status, reason.as_deref())
                .map_err(store_error)?;
        }
        Ok(())
    }

    fn label(&self, cell: CellId) -> String {
        self.labels.get(&cell).cloned().unwrap_or_default()
    }

    /// Time left, from the pace so far.
    fn time_left(&self) -> Duration {
        if self.done == 0 {
            return Duration::ZERO;
        }
        let per_run = self.started.elapsed() / self.done as u32;
        per_run * self.total.saturating_sub(self.done) as u32
    }
}

enum PhaseEnd {
    Done(Option<invoke::Output>),
    Failed(String),
    Hung(String),
    Interrupted,
}

/// A run that could not happen: its filesystem could not be made ready.
fn failed_run(repeat: u32, reason: &str) -> RunRecord {
    RunRecord {
        repeat,
        warmup: false,
        status: RunStatus::Failed,
        error: Some(reason.to_string()),
        started_at: rfc3339(SystemTime::now()),
        wall: Duration::ZERO,
        results: Vec::new(),
        classic: None,
        metrics: Vec::new(),
        environment: json!({}),
    }
}

fn store_error(e: fslab_store::StoreError) -> LabError {
    LabError::io("the results store", std::io::Error::other(e.to_string()))
}

fn fmt_duration(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 60 && s.is_multiple_of(60) {
        format!("{}m", s / 60)
    } else {
        format!("{}s", d.as_secs_f64())
    }
}

/// Unmounts what an earlier, killed run of this study left mounted beneath `scratch`, detaches
/// its loop devices and removes the directory.
fn clear_leftovers(scratch: &Path) {
    if !scratch.exists() {
        return;
    }
    if let Ok(mounts) = filesystem::mountinfo::read() {
        let mut points: Vec<PathBuf> = mounts
            .into_iter()
            .map(|m| m.mount_point)
            .filter(|p| p.starts_with(scratch))
            .collect();
        // Innermost first.
        points.sort_by_key(|p| std::cmp::Reverse(p.components().count()));
        for p in points {
            let _ = filesystem::umount_lazy(&p);
        }
    }
    device::detach_images_under(scratch);
    let _ = std::fs::remove_dir_all(scratch);
}
