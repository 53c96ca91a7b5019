//! The study's matrix: every combination of filesystem, scheduler, read-ahead, fill level,
//! workload and workload option values, less the excluded ones. Each combination is a cell; each cell is run
//! `repeat` times.

use crate::study::{Study, StudyWorkload};
use std::time::Duration;

/// One point of the matrix.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// Position in the study's order (filesystem, then scheduler, read-ahead, workload, options).
    pub ordinal: u32,
    /// Stable name of the cell, the same every time the study is expanded (resume finds its runs
    /// by it): `ext4|sched=bfq|ra=0|dbench|clients=4`.
    pub key: String,
    /// Index into `Study::filesystems`.
    pub filesystem: usize,
    pub scheduler: Option<String>,
    pub read_ahead_kb: Option<u64>,
    /// The utilisation the cell's filesystem is filled to before its runs (the quick form's
    /// `fill_to` applied); `None`: not filled.
    pub fill_to: Option<f64>,
    /// Index into `Study::workloads`.
    pub workload: usize,
    /// One value per workload option, in the workload's order.
    pub options: Vec<(String, String)>,
    /// The workload's options that vary across the study, with this cell's values: the row of
    /// its workload's tables (`clients=4`).
    pub axes: Vec<(String, String)>,
    /// The filesystem configuration, as the tables name their columns: the filesystem, with
    /// its scheduler, read-ahead and fill level when the study varies them
    /// (`xfs mq-deadline 40% full`).
    pub configuration: String,
    /// How people read the cell, everywhere (events, the store, reports, `study show`): its
    /// configuration, workload and row (`xfs mq-deadline 40% full dbench clients=4`).
    pub label: String,
}

impl Cell {
    /// The cell's options as its tool reads them: without the MPI rank count.
    pub fn tool_options(&self) -> Vec<(String, String)> {
        let mut options = self.options.clone();
        options.retain(|(k, _)| k != crate::mpi::RANKS);
        options
    }

    /// How a run of the cell is launched when its workload runs under MPI.
    pub fn launch(&self, study: &Study) -> Option<crate::mpi::Launch> {
        let mpi = study.workloads[self.workload].mpi.as_ref()?;
        let ranks = self
            .options
            .iter()
            .find(|(k, _)| k == crate::mpi::RANKS)
            .and_then(|(_, v)| v.parse().ok())?;
        Some(crate::mpi::Launch {
            ranks,
            hostfile: mpi.hostfile.clone(),
        })
    }
}

/// Which study to expand: the full one or its quick form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    Full,
    Quick,
}

impl Form {
    /// As the store keeps it: `full` or `quick`.
    pub fn name(self) -> &'static str {
        match self {
            Form::Full => "full",
            Form::Quick => "quick",
        }
    }

    /// The form the store names (`quick`; anything else is the full form).
    pub fn from_name(name: &str) -> Form {
        if name == "quick" {
            Form::Quick
        } else {
            Form::Full
        }
    }
}

/// The study's cells in order, with `--quick` applied when asked.
pub fn expand(study: &Study, form: Form) -> Vec<Cell> {
    let read_aheads: Vec<Option<u64>> = optional_axis(&study.device.read_ahead_kb);
    let fills = fill_levels(study, form);
    // The scheduler is an axis when the study compares several on any filesystem.
    let scheduler_axis = study.filesystems.iter().any(|fs| fs.schedulers(study).len() > 1);
    let mut cells = Vec::new();
    for (fi, fs) in study.filesystems.iter().enumerate() {
        let schedulers: Vec<Option<String>> = optional_axis(fs.schedulers(study));
        for sched in &schedulers {
            for ra in &read_aheads {
                for (fill_written, fill) in &fills {
                    // The level names the cell only when the study has several.
                    let fill_axis = (fills.len() > 1).then(|| fill_label(*fill));
                    let mut configuration = fs.name.clone();
                    if scheduler_axis {
                        configuration.push(' ');
                        configuration.push_str(sched.as_deref().unwrap_or("default"));
                    }
                    if read_aheads.len() > 1 {
                        match ra {
                            Some(kb) => configuration.push_str(&format!(" ra={kb}K")),
                            None => configuration.push_str(" ra=default"),
                        }
                    }
                    if fills.len() > 1 {
                        match fill {
                            Some(_) => configuration.push_str(&format!(" {} full", fill_label(*fill))),
                            None => configuration.push_str(" empty"),
                        }
                    }
                    for (wi, w) in study.workloads.iter().enumerate() {
                        let options = options_of(study, w, form);
                        for combo in product(&options) {
                            let axes: Vec<(String, String)> = combo
                                .iter()
                                .filter(|(k, _)| options.iter().any(|(o, vs)| o == k && vs.len() > 1))
                                .cloned()
                                .collect();
                            let mut label = format!("{configuration} {}", w.name);
                            for (k, v) in &axes {
                                label.push_str(&format!(" {k}={v}"));
                            }
                            let cell = Cell {
                                ordinal: 0,
                                key: key(&fs.name, sched, *ra, fill_axis.as_deref(), &w.name, &combo),
                                filesystem: fi,
                                scheduler: sched.clone(),
                                read_ahead_kb: *ra,
                                fill_to: *fill,
                                workload: wi,
                                options: combo,
                                axes,
                                configuration: configuration.clone(),
                                label,
                            };
                            if !excluded(study, &cell, fill_written) {
                                cells.push(cell);
                            }
                        }
                    }
                }
            }
        }
    }
    for (i, c) in cells.iter_mut().enumerate() {
        c.ordinal = i as u32;
    }
    cells
}

/// The number of runs a study plans: cells × repeats (warm-up runs are not counted).
pub fn planned_runs(study: &Study, form: Form) -> u64 {
    expand(study, form).len() as u64 * u64::from(repeats(study, form))
}

pub fn repeats(study: &Study, form: Form) -> u32 {
    match form {
        Form::Full => study.repeat,
        Form::Quick => study.quick.repeat,
    }
}

/// The fill levels of the cells, each as written (for exclude rules) and as filled: `[None]`
/// without `[fill]`; the quick form's `fill_to` replaces every level but "empty".
fn fill_levels(study: &Study, form: Form) -> Vec<(String, Option<f64>)> {
    if study.fill.is_none() {
        return vec![(fill_label(None), None)];
    }
    let mut levels: Vec<(String, Option<f64>)> = Vec::new();
    for &to in &study.fill_to {
        let written = (to > 0.0).then_some(to);
        let level = match (written, form, study.quick.fill_to) {
            (Some(_), Form::Quick, Some(quick)) => Some(quick),
            _ => written,
        };
        if !levels.iter().any(|l| l.1 == level) {
            levels.push((fill_label(written), level));
        }
    }
    levels
}

/// How a fill level reads in labels, keys and exclude rules: `empty`, `40%`.
pub fn fill_label(level: Option<f64>) -> String {
    match level {
        None => "empty".to_string(),
        Some(f) => format!("{}%", (f * 1000.0).round() / 10.0),
    }
}

fn optional_axis<T: Clone>(values: &[T]) -> Vec<Option<T>> {
    if values.is_empty() {
        vec![None]
    } else {
        values.iter().cloned().map(Some).collect()
    }
}

/// The workload's options for this form: the quick form replaces the options it names and caps
/// the run time.
fn options_of(study: &Study, w: &StudyWorkload, form: Form) -> Vec<(String, Vec<String>)> {
    let mut options = w.options.clone();
    // The rank counts of an MPI job: an axis like the tool's own options, which the runner
    // takes out before it asks the tool for its calls (Cell::tool_options).
    if let Some(mpi) = &w.mpi {
        options.push((
            crate::mpi::RANKS.to_string(),
            mpi.ranks.iter().map(u32::to_string).collect(),
        ));
    }
    if form == Form::Quick {
        if let Some(quick) = study.quick.options.get(&w.name) {
            for (k, v) in quick {
                match options.iter_mut().find(|(o, _)| o == k) {
                    Some(o) => o.1 = v.clone(),
                    None => options.push((k.clone(), v.clone())),
                }
            }
        }
        if let Some(time_key) = w.tool.time_option() {
            let cap = study.quick.time;
            match options.iter_mut().find(|(o, _)| o == time_key) {
                Some(o) => {
                    for v in &mut o.1 {
                        if fslab_classic::contract::seconds(v).is_none_or(|s| s > cap) {
                            *v = cap.as_secs().max(1).to_string();
                        }
                    }
                    o.1.dedup();
                }
                None => options.push((time_key.to_string(), vec![cap.as_secs().max(1).to_string()])),
            }
        }
    }
    options
}

/// Every combination of one value per option, in order (the last option varies fastest).
fn product(options: &[(String, Vec<String>)]) -> Vec<Vec<(String, String)>> {
    let mut out = vec![Vec::new()];
    for (k, vs) in options {
        out = out
            .into_iter()
            .flat_map(|prefix| {
                vs.iter().map(move |v| {
                    let mut p = prefix.clone();
                    p.push((k.clone(), v.clone()));
                    p
                })
            })
            .collect();
    }
    out
}

fn key(
    fs: &str,
    sched: &Option<String>,
    ra: Option<u64>,
    fill: Option<&str>,
    workload: &str,
    options: &[(String, String)],
) -> String {
    let mut k = fs.to_string();
    if let Some(s) = sched {
        k.push_str(&format!("|sched={s}"));
    }
    if let Some(r) = ra {
        k.push_str(&format!("|ra={r}"));
    }
    if let Some(f) = fill {
        k.push_str(&format!("|fill={f}"));
    }
    k.push('|');
    k.push_str(workload);
    for (o, v) in options {
        k.push_str(&format!("|{o}={v}"));
    }
    k
}

/// Whether an exclude rule drops this cell: every condition of the rule holds. A rule names the
/// fill level as the study writes it, in either form.
fn excluded(study: &Study, cell: &Cell, fill_written: &str) -> bool {
    let fs = &study.filesystems[cell.filesystem];
    let value = |axis: &str| -> Option<String> {
        match axis {
            "filesystem" => Some(fs.name.clone()),
            "type" => Some(fs.fs_type.clone()),
            "scheduler" => cell.scheduler.clone(),
            "read_ahead_kb" => cell.read_ahead_kb.map(|r| r.to_string()),
            "fill" => Some(fill_written.to_string()),
            "workload" => Some(study.workloads[cell.workload].name.clone()),
            other => cell.options.iter().find(|(k, _)| k == other).map(|(_, v)| v.clone()),
        }
    };
    study
        .exclude
        .iter()
        .any(|rule| rule.iter().all(|(k, v)| value(k).as_deref() == Some(v.as_str())))
}

/// A rough length of the whole study: each run's time (its `time` option, or a guess for
/// size-bound tools) plus the lab's own work per fresh filesystem. Cells on filesystems
/// `machine` cannot make take no time.
pub fn estimate(study: &Study, form: Form, machine: &dyn crate::machine::Machine) -> Duration {
    let runnable: Vec<bool> = expand(study, form)
        .iter()
        .map(|c| machine.support(&study.filesystems[c.filesystem].fs_type).is_ok())
        .collect();
    estimate_runnable(study, form, &runnable)
}

/// About how long one run of `cell` takes: its tool's estimate from the cell's workload
/// ([`Tool::expected_time`](fslab_classic::Tool::expected_time)).
pub fn expected_run(study: &Study, cell: &Cell) -> Duration {
    let w = &study.workloads[cell.workload];
    let options = cell.tool_options();
    let dir = std::env::temp_dir();
    w.tool.expected_time(&fslab_classic::contract::Request {
        main: w.main.as_deref(),
        options: &options,
        args: &w.args,
        dir: &dir,
        drop_caches: false,
    })
}

/// The estimate of [`estimate`] over the cells marked runnable (in [`expand`]'s order).
pub fn estimate_runnable(study: &Study, form: Form, runnable: &[bool]) -> Duration {
    let cells = expand(study, form);
    let per_fs = Duration::from_secs(3);
    let mut total = Duration::ZERO;
    for (c, _) in cells.iter().zip(runnable).filter(|(_, ok)| **ok) {
        let run = expected_run(study, c);
        let repeats = repeats(study, form);
        let fresh_filesystems = match study.fresh {
            crate::study::Fresh::Repeat => repeats,
            _ => 1,
        };
        // A warm-up run on each fresh filesystem of the cell.
        let warmups = u32::from(study.filesystems[c.filesystem].warmup(study)) * fresh_filesystems;
        total = total
            .saturating_add(run.saturating_mul(repeats.saturating_add(warmups)))
            .saturating_add(per_fs.saturating_mul(fresh_filesystems));
    }
    total
}
