//! Running a study's cells: each filesystem is made fresh as the study asks (per run, per cell or
//! once), each cell's runs execute in worker processes, and every step and run goes to the store
//! the moment it ends (the cell's status with it). Whatever a cell meets (a filesystem this
//! machine lacks, a rejected option, a run that fails or hangs), the study goes on with the next.
//!
//! A filesystem's life: wipe → its external log, if any (a second loop image or the named device,
//! wiped and prepared) → mkfs → mount (options read back) → fill / age → for each cell:
//! scheduler, its tunables and read-ahead → runs (the tool's untimed setup, caches dropped, optional warm-up,
//! measured run) → umount → fsck. On a `[device] dir` target (a filesystem already mounted,
//! perhaps shared by several hosts) it is only: the mounted type checked → mkdir of the runs'
//! own directory beneath it → runs → rmdir of that directory. Each step is timed with its CPU
//! split. Everything the runner does to the machine goes through [`Machine`].

use crate::machine::{Image, Machine};
use crate::matrix::{self, Cell, Form};
use crate::step::{report_json, timed, StepRecord};
use crate::study::{Adaptive, Filesystem, Fresh, Log, Study, Target};
use crate::worker::{Ended, Live, Watch};
use crate::LabError;
use fslab_classic::contract::{Call, Request, Role};
use fslab_classic::Outcome;
use fslab_engine::result::{rfc3339, Status};
use fslab_engine::Metric;
use fslab_store::{CellId, CellSpec, CellStatus, RunRecord, RunStatus, Store, StudyId};
use serde_json::json;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

/// How to run a study.
#[derive(Debug, Clone)]
pub struct Options {
    pub form: Form,
    /// Where loop images and mount points go (a directory of this study is made in it and
    /// removed at the end).
    pub scratch: PathBuf,
    /// Set when the user interrupts the study: the runner stops its worker, tears down and
    /// returns; `fslab study resume` goes on.
    pub stop: &'static AtomicBool,
}

/// What the runner tells its caller as it goes. Cells are named by their label.
#[derive(Debug, Clone)]
pub enum Event {
    Begin {
        cells: usize,
        runs_left: u64,
        estimate: Duration,
    },
    /// Cells that cannot run here, all for one reason (a filesystem the kernel lacks: all of
    /// its cells at once).
    Unsupported {
        cells: Vec<String>,
        reason: String,
    },
    /// A step of a cell's life begins: wipe, mkfs, mount, fill, age, setup, warm-up, run,
    /// cleanup, umount or fsck (the lab's own steps end with a `Step`, a run's with a `Run`).
    Stage {
        cell: String,
        stage: String,
    },
    Step {
        cell: String,
        step: StepRecord,
    },
    /// A second of the running worker's progress, as it reports it.
    Live {
        cell: String,
        live: Live,
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
pub struct Summary {
    pub runs: u64,
    pub ok: u64,
    pub failed: u64,
    pub hung: u64,
    pub unsupported_cells: u64,
    /// The user stopped it; `fslab study resume` goes on.
    pub interrupted: bool,
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
        mkfs_options: match &fs.log {
            None => fs.mkfs.clone(),
            Some(log) => format!("{} ({})", fs.mkfs, log.describe()).trim().to_string(),
        },
        mount_options: match &study.device.target {
            Target::Dir { path } => format!("existing directory {}", path.display()),
            _ => fs.mount.clone(),
        },
        scheduler: cell.scheduler.clone(),
        read_ahead_kb: cell.read_ahead_kb,
        fill_to: cell.fill_to,
        workload: w.name.clone(),
        tool: w.tool.key().to_string(),
        params: cell.options.iter().cloned().collect(),
        planned_repeats: matrix::repeats(study, form),
        label: cell.label.clone(),
        configuration: cell.configuration.clone(),
        axes: cell.axes.clone(),
    }
}

/// Where study `id` makes its loop images and mount points: a directory of its own beneath
/// `--scratch`, cleared when it starts and ends.
pub fn scratch_dir(opts: &Options, id: StudyId) -> PathBuf {
    opts.scratch.join(format!("fslab-study-{id}"))
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
    machine: &dyn Machine,
    store: &Store,
    study: &Study,
    id: StudyId,
    opts: &Options,
    on: &mut dyn FnMut(&Event),
) -> Result<Summary, LabError> {
    let cells = matrix::expand(study, opts.form);
    let repeats = matrix::repeats(study, opts.form);
    let stored = store.cells(id)?;
    let mut todo = Vec::new();
    // Cells this machine cannot run (a filesystem it cannot make, dbench without its
    // loadfile), with why: marked unsupported before anything runs, so that the runs counted,
    // and the time left, are only those that will run.
    let mut cannot = Vec::new();
    let mut checked = std::collections::BTreeMap::new();
    let mut made = std::collections::BTreeMap::new();
    let mut all: Vec<(Cell, CellId)> = Vec::new();
    for cell in cells.iter() {
        let cid = store.add_cell(id, &cell_spec(study, cell, opts.form))?;
        all.push((cell.clone(), cid));
        if stored
            .iter()
            .any(|c| c.id == cid && c.status == CellStatus::Unsupported)
        {
            continue;
        }
        let done = store.runs_done(cid)?;
        let missing: Vec<u32> = (0..repeats).filter(|r| !done.contains(r)).collect();
        if missing.is_empty() {
            continue;
        }
        let t = Todo {
            cell: cell.clone(),
            id: cid,
            repeats: missing,
        };
        // A filesystem this machine lacks is the reason its cells cannot run; otherwise what
        // the workload lacks is. On a `[device] dir` target the lab makes no filesystem: what
        // is mounted there is checked when the cell's directory is made.
        let on_dir = matches!(study.device.target, Target::Dir { .. });
        let fs = &study.filesystems[cell.filesystem];
        let lacks = made
            .entry(cell.filesystem)
            .or_insert_with(|| {
                (!on_dir)
                    .then(|| crate::lifecycle::filesystem_unsupported(fs, machine))
                    .flatten()
            })
            .clone();
        let reason = match lacks {
            Some(reason) => Some(reason),
            None => crate::lifecycle::workload_unsupported(study, cell, &mut checked)?,
        };
        match reason {
            Some(reason) => cannot.push((t, reason)),
            None => todo.push(t),
        }
    }
    let runs_left: u64 = todo
        .iter()
        .chain(cannot.iter().map(|(t, _)| t))
        .map(|t| t.repeats.len() as u64)
        .sum();
    on(&Event::Begin {
        cells: cells.len(),
        runs_left,
        estimate: matrix::estimate(study, opts.form, machine),
    });
    let scratch = scratch_dir(opts, id);
    machine.clear_leftovers(&scratch);
    std::fs::create_dir_all(&scratch).map_err(|e| LabError::io(format!("cannot make {}", scratch.display()), e))?;
    let labels = todo
        .iter()
        .chain(cannot.iter().map(|(t, _)| t))
        .map(|t| (t.id, t.cell.label.clone()))
        .collect();
    let mut lab = Lab {
        machine,
        store,
        study,
        labels,
        opts,
        scratch: scratch.clone(),
        summary: Summary::default(),
        done: 0,
        total: runs_left,
        started: Instant::now(),
        on,
        tree: None,
    };
    // One event per reason: the cells of a filesystem the kernel lacks are named together.
    let mut by_reason: Vec<(&String, Vec<&Todo>)> = Vec::new();
    for (t, reason) in &cannot {
        match by_reason.iter_mut().find(|(r, _)| *r == reason) {
            Some((_, cells)) => cells.push(t),
            None => by_reason.push((reason, vec![t])),
        }
    }
    for (reason, cells) in by_reason {
        lab.unsupported(&cells, reason)?;
    }
    let mut result = lab.run_all(&todo);
    if let (Ok(()), Some(adaptive), Form::Full) = (&result, study.adaptive, opts.form) {
        result = lab.adapt(&all, adaptive);
    }
    let summary = lab.summary.clone();
    machine.clear_leftovers(&scratch);
    result.map(|()| summary)
}

struct Lab<'a> {
    machine: &'a dyn Machine,
    store: &'a Store,
    study: &'a Study,
    /// Each cell's label, for events.
    labels: HashMap<CellId, String>,
    opts: &'a Options,
    scratch: PathBuf,
    summary: Summary,
    done: u64,
    total: u64,
    started: Instant,
    on: &'a mut dyn FnMut(&Event),
    /// The fill's tree, read (an archive) or generated once for every filesystem it fills.
    tree: Option<crate::fill::Tree>,
}

/// A filesystem made for some runs.
struct Instance {
    image: Option<Box<dyn Image>>,
    device: Option<PathBuf>,
    /// The loop image of its external log, when the lab made one.
    log_image: Option<Box<dyn Image>>,
    /// The device of its external log.
    log: Option<PathBuf>,
    mnt: PathBuf,
    effective_options: String,
    /// The scheduler and read-ahead of the current cell, as read back.
    settings: serde_json::Value,
    /// A run hung on it: it is detached and cannot be used again.
    dead: bool,
    /// On a `[device] dir` target, the filesystem mounted there (its type and source): `mnt` is
    /// then the directory the lab made beneath it for these runs.
    on_dir: Option<(String, String)>,
}

/// Why a filesystem could not be made ready.
enum NotMade {
    /// The machine cannot make it (a missing filesystem, a refused option): every cell on it is
    /// unsupported.
    Unsupported(String),
    /// It was made but could not be filled or aged: the runs meant for it fail with the reason,
    /// and the study goes on with the next filesystem.
    Failed(String),
}

impl Lab<'_> {
    fn run_all(&mut self, todo: &[Todo]) -> Result<(), LabError> {
        let study = self.study;
        for (fi, fs) in study.filesystems.iter().enumerate() {
            let mine: Vec<&Todo> = todo.iter().filter(|t| t.cell.filesystem == fi).collect();
            if mine.is_empty() {
                continue;
            }
            for batch in batches(study.fresh, &mine) {
                if self.interrupted() {
                    break;
                }
                if !self.run_batch(fs, &mine, batch)? {
                    break;
                }
            }
        }
        if self.interrupted() {
            self.summary.interrupted = true;
        }
        Ok(())
    }

    /// Runs a batch of runs that share filesystems: a fresh one whenever the last one died (a
    /// run hung on it). Returns false when the filesystem cannot be made here: its cells are
    /// then all unsupported.
    fn run_batch(&mut self, fs: &Filesystem, mine: &[&Todo], batch: Vec<(&Todo, u32)>) -> Result<bool, LabError> {
        let mut queue = batch.into_iter().peekable();
        while queue.peek().is_some() && !self.interrupted() {
            let (first, repeat) = *queue.peek().expect("peeked");
            let mut inst = match self.make(fs, first.id, first.cell.fill_to, repeat)? {
                Ok(inst) => inst,
                Err(NotMade::Unsupported(reason)) => {
                    self.unsupported(mine, &reason)?;
                    return Ok(false);
                }
                Err(NotMade::Failed(reason)) => {
                    for (t, repeat) in queue.by_ref() {
                        self.finish_run(t.id, &failed_run(repeat, &reason))?;
                    }
                    continue;
                }
            };
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
                if fs.warmup(self.study) && !warmed.contains(&t.id) {
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
        Ok(true)
    }

    /// The adaptive repeat: while a cell's headline figure varies more than the study allows,
    /// one more run of it on a fresh filesystem, up to its maximum and within the budget; then
    /// a `repeats` step on each cell says how many runs it took and why it stopped.
    fn adapt(&mut self, all: &[(Cell, CellId)], adaptive: Adaptive) -> Result<(), LabError> {
        let started = Instant::now();
        let over_budget = |elapsed: Duration| adaptive.budget.is_some_and(|b| elapsed >= b);
        let mut out_of_budget = false;
        loop {
            let mut ran = false;
            for (cell, id) in all {
                if self.interrupted() {
                    return Ok(());
                }
                let Judged::More { next, .. } = self.judge(*id, adaptive)? else {
                    continue;
                };
                if over_budget(started.elapsed()) {
                    out_of_budget = true;
                    break;
                }
                let fs = &self.study.filesystems[cell.filesystem];
                let todo = Todo {
                    cell: cell.clone(),
                    id: *id,
                    repeats: vec![next],
                };
                self.total += 1;
                self.labels.insert(*id, cell.label.clone());
                if !self.run_batch(fs, &[&todo], vec![(&todo, next)])? {
                    continue;
                }
                ran = true;
            }
            if !ran || out_of_budget {
                break;
            }
        }
        for (_, id) in all {
            let why = match self.judge(*id, adaptive)? {
                Judged::Settled(why) => why,
                Judged::More { cov, .. } if out_of_budget => format!(
                    "stopped: the study's budget for extra runs ({}) is spent; CoV {:.1}%",
                    fmt_duration(adaptive.budget.unwrap_or_default()),
                    cov * 100.0
                ),
                Judged::More { .. } | Judged::Unjudged => continue,
            };
            let rec = StepRecord {
                name: "repeats".to_string(),
                repeat: None,
                duration: Duration::ZERO,
                cpu: Default::default(),
                ok: true,
                detail: why,
            };
            self.store.record_step(*id, &rec)?;
        }
        Ok(())
    }

    /// Whether cell `id` needs another run under the adaptive repeat, and why not if not.
    fn judge(&self, id: CellId, adaptive: Adaptive) -> Result<Judged, LabError> {
        let runs: Vec<_> = self.store.runs_of_cell(id)?.into_iter().filter(|r| !r.warmup).collect();
        let n = runs.len() as u32;
        let next = runs.iter().map(|r| r.repeat + 1).max().unwrap_or(0);
        if n < self.study.repeat {
            // Unsupported, interrupted, or its filesystem could not be made: nothing to judge.
            return Ok(Judged::Unjudged);
        }
        if runs.iter().any(|r| r.status != RunStatus::Ok) {
            return Ok(Judged::Settled(format!("{n} runs, not all ended well: no more")));
        }
        let values: Vec<f64> = runs
            .iter()
            .filter_map(|r| r.metrics.iter().find(|m| m.headline).map(|m| m.value))
            .collect();
        let cov = cov_of(&values);
        let Some(cov) = cov else {
            return Ok(Judged::Settled(format!("{n} runs: no headline figure to judge")));
        };
        if cov <= adaptive.until_cov {
            return Ok(Judged::Settled(format!(
                "{n} runs: CoV {:.1}%, at or below {:.1}%",
                cov * 100.0,
                adaptive.until_cov * 100.0
            )));
        }
        if n >= adaptive.max {
            return Ok(Judged::Settled(format!(
                "{n} runs, the most allowed: CoV {:.1}%, above {:.1}%",
                cov * 100.0,
                adaptive.until_cov * 100.0
            )));
        }
        Ok(Judged::More { next, cov })
    }

    fn interrupted(&self) -> bool {
        self.opts.stop.load(Ordering::SeqCst)
    }

    /// Says that a step of `cell` begins.
    fn stage(&mut self, cell: CellId, stage: &str) {
        let cell = self.label(cell);
        (self.on)(&Event::Stage {
            cell,
            stage: stage.to_string(),
        });
    }

    fn step(&mut self, cell: CellId, mut rec: StepRecord, repeat: u32) -> Result<(), LabError> {
        if self.study.fresh == Fresh::Repeat || matches!(rec.name.as_str(), "scheduler" | "iosched" | "read_ahead") {
            rec.repeat = Some(repeat);
        }
        self.store.record_step(cell, &rec)?;
        let cell = self.label(cell);
        (self.on)(&Event::Step { cell, step: rec });
        Ok(())
    }

    fn unsupported(&mut self, cells: &[&Todo], reason: &str) -> Result<(), LabError> {
        let mut labels = Vec::with_capacity(cells.len());
        for t in cells {
            self.store
                .set_cell_status(t.id, CellStatus::Unsupported, Some(reason))?;
            self.summary.unsupported_cells += 1;
            self.total = self.total.saturating_sub(t.repeats.len() as u64);
            labels.push(self.label(t.id));
        }
        if !labels.is_empty() {
            (self.on)(&Event::Unsupported {
                cells: labels,
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
        if let Target::Dir { path } = &self.study.device.target {
            return self.make_on_dir(fs, path, cell, repeat);
        }
        let machine = self.machine;
        let n = std::fs::read_dir(&self.scratch).map_or(0, |d| d.count());
        let mnt = self.scratch.join(format!("mnt{n}"));
        std::fs::create_dir_all(&mnt).map_err(|e| LabError::io(format!("cannot make {}", mnt.display()), e))?;
        let mut inst = Instance {
            image: None,
            device: None,
            log_image: None,
            log: None,
            mnt,
            effective_options: String::new(),
            settings: json!({}),
            dead: false,
            on_dir: None,
        };
        let size = match (&self.study.device.target, self.opts.form) {
            (Target::Loop { size }, Form::Quick) => self.study.quick.loop_size.unwrap_or(*size),
            (Target::Loop { size }, Form::Full) => *size,
            (Target::Block { .. } | Target::Dir { .. }, _) => 0,
        };
        if fs.fs_type != "tmpfs" {
            let dev = match &self.study.device.target {
                Target::Loop { .. } => {
                    let img = machine.attach_image(&self.scratch, size)?;
                    let dev = img.device().to_path_buf();
                    inst.image = Some(img);
                    dev
                }
                Target::Block { path, .. } => path.clone(),
                Target::Dir { .. } => unreachable!("a dir target is made by make_on_dir"),
            };
            inst.device = Some(dev.clone());
            self.stage(cell, "wipe");
            let (rec, r) = timed("wipe", || machine.wipe(&dev), |_| dev.display().to_string());
            self.step(cell, rec, repeat)?;
            r?;
            let mut mkfs_options = fs.mkfs.clone();
            if let Some(log) = &fs.log {
                let logdev = match log {
                    Log::Loop { size } => {
                        let img = machine.attach_image(&self.scratch, *size)?;
                        let dev = img.device().to_path_buf();
                        inst.log_image = Some(img);
                        dev
                    }
                    Log::Block { path, .. } => path.clone(),
                };
                inst.log = Some(logdev.clone());
                self.stage(cell, "log");
                let (rec, r) = timed(
                    "log",
                    || {
                        machine.wipe(&logdev)?;
                        machine.mkfs_log(&logdev, &fs.fs_type, &fs.mkfs)?;
                        crate::filesystem::mkfs_options_with_log(&fs.fs_type, &fs.mkfs, &logdev)
                    },
                    |_| format!("{} on {}", log.describe(), logdev.display()),
                );
                self.step(cell, rec, repeat)?;
                match r {
                    Ok(options) => mkfs_options = options,
                    Err(e) => return Ok(Err(NotMade::Unsupported(format!("the external log: {e}")))),
                }
            }
            self.stage(cell, "mkfs");
            let (rec, r) = timed(
                "mkfs",
                || machine.mkfs(&dev, &fs.fs_type, &mkfs_options),
                |_| format!("mkfs -t {} {mkfs_options}", fs.fs_type).trim().to_string(),
            );
            self.step(cell, rec, repeat)?;
            if let Err(e) = r {
                return Ok(Err(NotMade::Unsupported(crate::lifecycle::mkfs_refused(&e))));
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
        if let Some(log) = &inst.log {
            options = crate::filesystem::mount_options_with_log(&fs.fs_type, &options, log);
        }
        let dev = inst.device.clone();
        self.stage(cell, "mount");
        let (rec, r) = timed(
            "mount",
            || machine.mount(dev.as_deref(), &inst.mnt, &fs.fs_type, &options),
            |effective| effective.clone(),
        );
        self.step(cell, rec, repeat)?;
        match r {
            Ok(effective) => inst.effective_options = effective,
            Err(e) => return Ok(Err(NotMade::Unsupported(crate::lifecycle::mount_refused(&options, &e)))),
        }
        if let (Some(spec), Some(to)) = (&self.study.fill, fill_to) {
            let spec = crate::fill::FillSpec { to, ..spec.clone() };
            self.stage(cell, "fill");
            if self.tree.is_none() {
                self.tree = Some(crate::fill::Tree::load(&spec.from, spec.seed)?);
            }
            let tree = self.tree.as_ref().expect("loaded above");
            let root = inst.mnt.clone();
            let (rec, r) = timed("fill", || machine.fill(&root, tree, &spec), report_json);
            self.step(cell, rec, repeat)?;
            if let Err(e) = r {
                self.unmake(fs, inst, cell, repeat)?;
                return Ok(Err(NotMade::Failed(format!("fill failed: {e}"))));
            }
        }
        if let Some(spec) = &self.study.age {
            let root = inst.mnt.clone();
            self.stage(cell, "age");
            let (rec, r) = timed("age", || machine.age(&root, spec), report_json);
            self.step(cell, rec, repeat)?;
            if let Err(e) = r {
                self.unmake(fs, inst, cell, repeat)?;
                return Ok(Err(NotMade::Failed(format!("ageing failed: {e}"))));
            }
        }
        Ok(Ok(inst))
    }

    /// On a `[device] dir` target: checks that the filesystem mounted there is the study's
    /// type, and makes a directory of these runs beneath it, `DIR/fslab-STUDY-CELL`. Nothing is
    /// formatted, mounted or tuned.
    fn make_on_dir(
        &mut self,
        fs: &Filesystem,
        dir: &Path,
        cell: CellId,
        repeat: u32,
    ) -> Result<Result<Instance, NotMade>, LabError> {
        let machine = self.machine;
        let mounted = match machine.mounted_at(dir) {
            Ok(m) => m,
            Err(e) => {
                return Ok(Err(NotMade::Unsupported(format!(
                    "[device] dir {}: {e}",
                    dir.display()
                ))))
            }
        };
        if let Some(reason) = dir_type_mismatch(dir, &fs.fs_type, &mounted.fs_type) {
            return Ok(Err(NotMade::Unsupported(reason)));
        }
        let mnt = dir.join(cell_dir_name(&self.study.name, cell));
        self.stage(cell, "mkdir");
        let (rec, r) = timed(
            "mkdir",
            || machine.make_dir(&mnt),
            |()| format!("{} on {} ({})", mnt.display(), mounted.source, mounted.fs_type),
        );
        self.step(cell, rec, repeat)?;
        if let Err(e) = r {
            return Ok(Err(NotMade::Failed(e.to_string())));
        }
        Ok(Ok(Instance {
            image: None,
            device: None,
            log_image: None,
            log: None,
            mnt,
            effective_options: mounted.effective_options(),
            settings: json!({}),
            dead: false,
            on_dir: Some((mounted.fs_type, mounted.source)),
        }))
    }

    /// The end of a filesystem: umount and fsck; a dead one is detached lazily and left to go.
    /// On a `[device] dir` target, the directory the lab made is removed, and nothing else.
    fn unmake(&mut self, fs: &Filesystem, mut inst: Instance, cell: CellId, repeat: u32) -> Result<(), LabError> {
        let machine = self.machine;
        if inst.on_dir.is_some() {
            let mnt = inst.mnt.clone();
            self.stage(cell, "rmdir");
            let (rec, _) = timed("rmdir", || machine.remove_dir(&mnt), |()| mnt.display().to_string());
            self.step(cell, rec, repeat)?;
            return Ok(());
        }
        if inst.dead {
            machine.umount_lazy(&inst.mnt);
            for img in [inst.image.take(), inst.log_image.take()].into_iter().flatten() {
                img.detach_later();
            }
            return Ok(());
        }
        let mnt = inst.mnt.clone();
        self.stage(cell, "umount");
        let (rec, r) = timed("umount", || machine.umount(&mnt), |_| String::new());
        self.step(cell, rec, repeat)?;
        if r.is_err() {
            machine.umount_lazy(&mnt);
        } else {
            let _ = std::fs::remove_dir(&mnt);
        }
        if let (true, Some(dev)) = (fs.fsck, &inst.device) {
            self.stage(cell, "fsck");
            let log = inst.log.as_deref();
            let (rec, _) = timed("fsck", || machine.fsck(dev, &fs.fs_type, log), |out| out.clone());
            self.step(cell, rec, repeat)?;
        }
        drop(inst.image.take());
        drop(inst.log_image.take());
        Ok(())
    }

    /// Sets the cell's scheduler, its tunables and read-ahead and reads them back; `None` when the device cannot
    /// take them (the cell is then unsupported).
    fn configure(&mut self, inst: &Instance, t: &Todo) -> Result<Option<serde_json::Value>, LabError> {
        let machine = self.machine;
        let mut env = json!({});
        let Some(dev) = &inst.device else {
            return Ok(Some(env));
        };
        let repeat = t.repeats[0];
        if let Some(s) = &t.cell.scheduler {
            let (rec, r) = timed("scheduler", || machine.set_scheduler(dev, s), |back| back.clone());
            self.step(t.id, rec, repeat)?;
            match r {
                Ok(back) => env["scheduler"] = json!(back),
                Err(e) => {
                    self.unsupported(&[t], &e.to_string())?;
                    return Ok(None);
                }
            }
        }
        let tunables = &self.study.device.iosched;
        if !tunables.is_empty() {
            let (rec, r) = timed(
                "iosched",
                || machine.set_iosched(dev, tunables),
                |back| {
                    back.iter()
                        .map(|(k, v)| format!("{k}={v}"))
                        .collect::<Vec<_>>()
                        .join(" ")
                },
            );
            self.step(t.id, rec, repeat)?;
            match r {
                Ok(back) => env["iosched"] = json!(back),
                Err(e) => {
                    self.unsupported(&[t], &e.to_string())?;
                    return Ok(None);
                }
            }
        }
        if let Some(kb) = t.cell.read_ahead_kb {
            let (rec, r) = timed(
                "read_ahead",
                || machine.set_read_ahead_kb(dev, kb),
                |back| back.to_string(),
            );
            self.step(t.id, rec, repeat)?;
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

    /// One run of a cell: its tool's calls in worker processes, recorded in the store as it ends.
    fn run_once(&mut self, inst: &mut Instance, t: &Todo, repeat: u32, warmup: bool) -> Result<(), LabError> {
        let study = self.study;
        let w = &study.workloads[t.cell.workload];
        let fs = &study.filesystems[t.cell.filesystem];
        // A warm-up run is there to warm the caches: they are dropped before it, and not again
        // between it and the measured runs.
        let drop_caches = study.drop_caches && (warmup || !fs.warmup(study));
        let options = t.cell.tool_options();
        let calls = w.tool.calls(&Request {
            main: w.main.as_deref(),
            options: &options,
            args: &w.args,
            dir: &inst.mnt,
            drop_caches,
        });
        let launch = t.cell.launch(study);
        let t0 = Instant::now();
        let mut record = RunRecord {
            repeat,
            warmup,
            status: RunStatus::Failed,
            error: None,
            started_at: rfc3339(SystemTime::now()),
            wall: Duration::ZERO,
            results: Vec::new(),
            figures: None,
            metrics: Vec::new(),
            report: None,
            environment: json!({
                "filesystem": fs.name,
                "type": fs.fs_type,
                "device": inst.device.as_ref().map(|d| d.display().to_string()),
                "mkfs": fs.mkfs,
                "log": inst.log.as_ref().map(|l| l.display().to_string()),
                "mount_options": inst.effective_options,
                "scheduler": t.cell.scheduler,
                "read_ahead_kb": t.cell.read_ahead_kb,
                "iosched": study.device.iosched,
                "read_back": inst.settings,
                "command": calls.iter().find(|c| c.role == Role::Measured).map(|c| match &launch {
                    Some(l) => l.command_line(&c.command_line()),
                    None => c.command_line(),
                }),
                "ranks": launch.as_ref().map(|l| l.ranks),
                "dir": inst.on_dir.as_ref().map(|_| inst.mnt.display().to_string()),
                "mounted_type": inst.on_dir.as_ref().map(|(t, _)| t),
                "mounted_source": inst.on_dir.as_ref().map(|(_, s)| s),
            }),
        };
        for call in &calls {
            let stage = match call.role {
                Role::Setup => "setup",
                Role::Measured if warmup => "warm-up",
                Role::Measured => "run",
                Role::Cleanup => "cleanup",
            };
            self.stage(t.id, stage);
            match self.call(t.id, w.tool, call, &inst.mnt, launch.as_ref())? {
                CallEnd::Done(None) => {}
                CallEnd::Done(Some(outcome)) => {
                    record.status = match outcome.status() {
                        Status::Failed => RunStatus::Failed,
                        Status::Ok => RunStatus::Ok,
                    };
                    record.error = outcome
                        .first_error()
                        .map(|e| format!("{} errors; the first: {}", e.total_errors, e.error.message));
                    record.metrics = outcome.metrics;
                    record.figures = outcome.figures;
                    record.report = Some(outcome.report).filter(|r| !r.is_empty());
                    record.results = outcome.phases.into_iter().map(|p| (p.name, p.result)).collect();
                }
                CallEnd::Failed(msg) => {
                    record.status = RunStatus::Failed;
                    record.error = Some(format!("{}: {msg}", role_name(call.role)));
                    if call.role != Role::Cleanup {
                        break;
                    }
                }
                CallEnd::Hung(msg) => {
                    record.status = RunStatus::Hung;
                    record.error = Some(msg);
                    inst.dead = true;
                    break;
                }
                CallEnd::Interrupted => {
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
        self.store.record_run(cell, record)?;
        if !warmup {
            self.done += 1;
            self.summary.runs += 1;
            match record.status {
                RunStatus::Ok => self.summary.ok += 1,
                RunStatus::Failed => self.summary.failed += 1,
                RunStatus::Hung => self.summary.hung += 1,
            }
        }
        let left = self.time_left();
        let cell = self.label(cell);
        (self.on)(&Event::Run {
            cell,
            repeat,
            warmup,
            status: record.status,
            headline: record.metrics.iter().find(|m| m.headline).cloned(),
            error: record.error.clone(),
            done: self.done,
            total: self.total,
            left,
        });
        Ok(())
    }

    /// One fslab command of a run in a worker process; a measured one's outcome.
    fn call(
        &mut self,
        cell: CellId,
        tool: fslab_classic::Tool,
        call: &Call,
        mnt: &Path,
        launch: Option<&crate::mpi::Launch>,
    ) -> Result<CallEnd, LabError> {
        let machine = self.machine;
        let timeout = self.study.timeout;
        let stop = self.opts.stop;
        let label = self.label(cell);
        let on = std::cell::RefCell::new(&mut self.on);
        let watch = Watch {
            timeout,
            stop: &|| stop.load(Ordering::SeqCst),
            // A worker blocked on a frozen filesystem dies once the filesystem thaws.
            unstick: &|| machine.thaw(mnt),
            progress: &|live| {
                (*on.borrow_mut())(&Event::Live {
                    cell: label.clone(),
                    live: live.clone(),
                })
            },
        };
        let measured = call.role == Role::Measured;
        // Every call of an MPI cell (sysbench's prepare and cleanup too) runs as the job, so
        // that each rank finds its own files.
        let ended = match launch {
            Some(l) => machine.run_job(l, &call.args, &watch)?,
            None => machine.run_worker(&call.args, &watch)?,
        };
        Ok(match ended {
            Ended::Interrupted => CallEnd::Interrupted,
            Ended::Exited { code, stdout, stderr } => match code {
                Some(0 | 1) if measured => match Outcome::from_json(&stdout) {
                    Ok(o) if o.tool == tool => CallEnd::Done(Some(o)),
                    Ok(o) => CallEnd::Failed(format!("the worker ran {} where the study names {tool}", o.tool)),
                    // A run that failed before it measured anything says why on stderr.
                    Err(_) if code == Some(1) && !stderr.is_empty() => CallEnd::Failed(format!("exit 1: {stderr}")),
                    Err(e) => CallEnd::Failed(format!("{e}; {stderr}")),
                },
                Some(0) => CallEnd::Done(None),
                Some(c) => CallEnd::Failed(format!("exit {c}: {stderr}")),
                None => CallEnd::Failed(format!("killed by a signal: {stderr}")),
            },
            Ended::Hung { killed, stderr } => CallEnd::Hung(if killed {
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

    fn label(&self, cell: CellId) -> String {
        self.labels.get(&cell).cloned().unwrap_or_default()
    }

    /// Time left, from the pace so far.
    fn time_left(&self) -> Duration {
        if self.done == 0 {
            return Duration::ZERO;
        }
        let per_run = self.started.elapsed() / self.done as u32;
        per_run.saturating_mul(self.total.saturating_sub(self.done).min(u32::MAX as u64) as u32)
    }
}

/// Which runs share a filesystem, in order: with `fresh = "study"`, those filled to one level;
/// with `"cell"`, a cell's repeats; with `"repeat"`, none.
fn batches<'t>(fresh: Fresh, mine: &[&'t Todo]) -> Vec<Vec<(&'t Todo, u32)>> {
    match fresh {
        Fresh::Study => {
            let mut levels: Vec<Option<f64>> = Vec::new();
            for t in mine {
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
    }
}

/// What the adaptive repeat makes of a cell's runs so far.
enum Judged {
    /// One more run, numbered `next`: the runs vary by `cov`.
    More { next: u32, cov: f64 },
    /// No more: why.
    Settled(String),
    /// Too few runs to judge (an unsupported cell, an interrupted study).
    Unjudged,
}

/// The coefficient of variation of `values` (sample standard deviation over the mean); none for
/// fewer than two values or a zero mean.
fn cov_of(values: &[f64]) -> Option<f64> {
    if values.len() < 2 {
        return None;
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean != 0.0).then(|| var.sqrt() / mean.abs())
}

/// How one of a run's worker processes ended.
enum CallEnd {
    /// It ended well; a measured call's outcome.
    Done(Option<Outcome>),
    Failed(String),
    Hung(String),
    Interrupted,
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::Setup => "setup",
        Role::Measured => "run",
        Role::Cleanup => "cleanup",
    }
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
        figures: None,
        metrics: Vec::new(),
        report: None,
        environment: json!({}),
    }
}

/// The directory of a cell's runs beneath a `[device] dir` target: `fslab-STUDY-CELL`, the
/// study's name kept to letters, digits, `-` and `_`.
pub fn cell_dir_name(study: &str, cell: CellId) -> String {
    let name: String = study
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    format!("fslab-{name}-{cell}")
}

/// Why a study whose filesystem is `wanted` cannot run on `dir`, where `mounted` is: `None` when
/// they are the same type.
pub fn dir_type_mismatch(dir: &Path, wanted: &str, mounted: &str) -> Option<String> {
    (wanted != mounted).then(|| {
        format!(
            "[device] dir {} is on a {mounted} filesystem, but the study's [[filesystem]] says type = \"{wanted}\"",
            dir.display()
        )
    })
}

fn fmt_duration(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 60 && s.is_multiple_of(60) {
        format!("{}m", s / 60)
    } else {
        format!("{}s", d.as_secs_f64())
    }
}
