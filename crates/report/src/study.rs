//! A study as a report reads it: its configurations (the columns of its tables), its workloads
//! with their rows (the values of the parameters that vary: threads, clients), and each cell's
//! measured repeats summed up: every headline figure, the CPU split, latency per operation and
//! the per-second series of one run.

use crate::error::{ReportError, Result};
use crate::stats::{self, Summary};
use fslab_store::{CellRow, CellStatus, Metric, RunRow, RunStatus, SeriesPoint, StepRow, Store, StudyRow};
use serde::Serialize;
use std::collections::BTreeMap;

/// Everything a report shows of one study.
#[derive(Debug, Clone)]
pub struct StudyData {
    pub study: StudyRow,
    /// The columns of the tables: filesystem configurations, with the scheduler, read-ahead and
    /// fill level when the study varies them.
    pub configurations: Vec<Configuration>,
    pub workloads: Vec<Workload>,
    pub cells: Vec<Cell>,
}

/// One filesystem configuration of a study.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Configuration {
    /// As the tables name it: `xfs`, or `xfs mq-deadline ra=0K` when the study varies those.
    pub label: String,
    pub filesystem: String,
    pub fs_type: String,
    pub mkfs_options: String,
    pub mount_options: String,
    pub scheduler: Option<String>,
    pub read_ahead_kb: Option<u64>,
    /// The utilisation the filesystem was filled to; `None`: not filled.
    pub fill_to: Option<f64>,
}

/// One workload of a study and its rows.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Workload {
    pub name: String,
    pub tool: String,
    /// The parameters whose value differs between the workload's cells: the axes of its rows.
    pub axes: Vec<String>,
    /// The rows in matrix order, each the values of [`Workload::axes`].
    pub rows: Vec<Row>,
}

/// A row of a workload's tables: one combination of the varying parameters.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Row {
    /// `clients=4 threads=16`, or the workload's name when nothing varies.
    pub label: String,
    /// The axes' values, in the order of [`Workload::axes`].
    pub values: Vec<String>,
}

/// One cell: a configuration running one row of one workload.
#[derive(Debug, Clone)]
pub struct Cell {
    pub row: CellRow,
    /// Indexes into [`StudyData::configurations`], [`StudyData::workloads`] and that workload's rows.
    pub configuration: usize,
    pub workload: usize,
    pub row_index: usize,
    /// The measured runs (warm-ups left out), whatever their status.
    pub runs: Vec<RunRow>,
    /// Each figure over the runs that ended well, in the order the runs give them (the headline
    /// first).
    pub metrics: Vec<MetricStats>,
    /// The mean CPU split of the runs that ended well; a run of several results (IOzone's
    /// sub-tests) counts each result's split by its measured time.
    pub cpu: Option<CpuSplit>,
    /// When the runs have several results: the mean CPU split of each result over the runs that
    /// ended well, named by its phase (IOzone's `initial writers`, `readers`...), in run order.
    /// Each sub-test has its own figure, so it has its own split (seed 004 draws one per figure).
    pub cpu_by_phase: Vec<(String, CpuSplit)>,
    /// The 99th percentile latency of all operations of each run that ended well, microseconds.
    pub p99_us: Option<Summary>,
    /// Latency percentiles of each operation type, pooled over the runs that ended well.
    pub latency: Vec<OpLatency>,
    /// The median, 99th and 99.9th percentile latency of each operation type in each run that
    /// ended well, as figures over the runs (CSV's latency columns, `compare`'s latency lines).
    pub latency_runs: Vec<LatencyFigure>,
    /// The per-second series of the first run that ended well.
    pub series: Vec<SeriesPoint>,
    /// With `stop.steady`: when each run that ended well levelled off, in seconds after its
    /// ramp (none for a run that never did); empty without a steady condition.
    pub steady: Vec<Option<f64>>,
    pub steps: Vec<StepRow>,
}

/// One figure of a cell over its repeats.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct MetricStats {
    pub name: String,
    pub unit: String,
    pub higher_is_better: bool,
    /// One value per run that ended well, in repeat order.
    pub values: Vec<f64>,
    pub summary: Summary,
}

/// The CPU split over a run, in percent, as sar groups it: user (with nice), system (with irq
/// and softirq), iowait, and the rest (idle and steal).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct CpuSplit {
    pub user: f64,
    pub system: f64,
    pub iowait: f64,
    pub idle: f64,
}

impl CpuSplit {
    pub const PARTS: [&'static str; 4] = ["user", "system", "iowait", "idle"];

    pub fn of(c: &fslab_engine::cpu::CpuUsage) -> CpuSplit {
        CpuSplit {
            user: c.user + c.nice,
            system: c.system + c.irq + c.softirq,
            iowait: c.iowait,
            idle: c.idle + c.steal,
        }
    }

    pub fn parts(&self) -> [f64; 4] {
        [self.user, self.system, self.iowait, self.idle]
    }

    /// The mean split of several.
    pub fn mean(splits: &[CpuSplit]) -> Option<CpuSplit> {
        let equal: Vec<(CpuSplit, f64)> = splits.iter().map(|s| (*s, 1.0)).collect();
        CpuSplit::weighted(&equal)
    }

    /// The mean split of several, each counted `weight` times (its share of the time).
    fn weighted(splits: &[(CpuSplit, f64)]) -> Option<CpuSplit> {
        let total: f64 = splits.iter().map(|(_, w)| w).sum();
        if splits.is_empty() || total <= 0.0 {
            return None;
        }
        let avg = |f: fn(&CpuSplit) -> f64| splits.iter().map(|(s, w)| f(s) * w).sum::<f64>() / total;
        Some(CpuSplit {
            user: avg(|c| c.user),
            system: avg(|c| c.system),
            iowait: avg(|c| c.iowait),
            idle: avg(|c| c.idle),
        })
    }

    /// The split of a whole run over its results, each weighted by its measured time (evenly
    /// when none was timed).
    fn of_run(results: &[(String, fslab_engine::RunResult)]) -> Option<CpuSplit> {
        let timed = results.iter().any(|(_, r)| !r.duration.is_zero());
        let splits: Vec<(CpuSplit, f64)> = results
            .iter()
            .map(|(_, r)| {
                let weight = if timed { r.duration.as_secs_f64() } else { 1.0 };
                (CpuSplit::of(&r.cpu), weight)
            })
            .collect();
        CpuSplit::weighted(&splits)
    }
}

/// Latency of one operation type, pooled over a cell's runs, microseconds.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct OpLatency {
    pub op: String,
    pub count: u64,
    pub p50_us: f64,
    pub p90_us: f64,
    pub p99_us: f64,
    pub p99_9_us: f64,
    pub max_us: f64,
}

/// An operation type and one of its percentiles (`read`, `p99`).
type LatencyKey = (String, &'static str);

/// One percentile of one operation type's latency, run by run.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct LatencyFigure {
    /// `read`, or a script's step (`NTCreateX`).
    pub op: String,
    /// `p50`, `p99` or `p99.9`.
    pub quantile: &'static str,
    /// Microseconds, per run that ended well: (the run's id, its value).
    pub values: Vec<(i64, f64)>,
    pub summary: Summary,
}

impl LatencyFigure {
    /// The percentiles kept per run.
    pub const QUANTILES: [(&'static str, f64); 3] = [("p50", 0.5), ("p99", 0.99), ("p99.9", 0.999)];

    /// As tables and CSV name it: `read latency p99`.
    pub fn name(&self) -> String {
        format!("{} latency {}", self.op, self.quantile)
    }

    /// Its unit.
    pub const UNIT: &'static str = "us";
}

/// Why a cell has no figures to show.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Missing {
    /// `unsupported`, `failed`, `hung` or `pending`.
    pub status: String,
    pub reason: String,
}

impl StudyData {
    /// Reads the study `key` (an id, or the newest study of that name) from `store`.
    pub fn load_key(store: &Store, key: &str) -> Result<StudyData> {
        let study = store.study(key)?.ok_or_else(|| ReportError::NoStudy {
            key: key.to_string(),
            db: store.path().to_path_buf(),
        })?;
        StudyData::load(store, study)
    }

    /// Reads everything a report shows of `study` from `store`.
    pub fn load(store: &Store, study: StudyRow) -> Result<StudyData> {
        let rows = store.cells(study.id)?;
        let mut runs = store.runs(study.id)?;
        let mut steps = store.steps(study.id)?;
        let configurations = configurations(&rows);
        let workloads = workloads(&rows);
        let mut cells = Vec::with_capacity(rows.len());
        for row in rows {
            let mine: Vec<RunRow> = take(&mut runs, |r| r.cell_id == row.id && !r.warmup);
            let my_steps = take(&mut steps, |s| s.cell_id == row.id);
            let (configuration, workload, row_index) = place(&configurations, &workloads, &row);
            cells.push(Cell::load(
                store,
                row,
                configuration,
                workload,
                row_index,
                mine,
                my_steps,
            )?);
        }
        Ok(StudyData {
            study,
            configurations,
            workloads,
            cells,
        })
    }

    /// The cell of `configuration` in row `row` of workload `workload`, if the matrix has it.
    pub fn cell(&self, workload: usize, row: usize, configuration: usize) -> Option<&Cell> {
        self.cells
            .iter()
            .find(|c| c.workload == workload && c.row_index == row && c.configuration == configuration)
    }

    /// The cells that have nothing to show, with why.
    pub fn missing(&self) -> Vec<(&Cell, Missing)> {
        self.cells.iter().filter_map(|c| c.missing().map(|m| (c, m))).collect()
    }

    /// Runs that did not end well, in cells that still have figures from other runs.
    pub fn troubled_runs(&self) -> Vec<(&Cell, &RunRow)> {
        self.cells
            .iter()
            .filter(|c| c.missing().is_none())
            .flat_map(|c| c.runs.iter().filter(|r| r.status != RunStatus::Ok).map(move |r| (c, r)))
            .collect()
    }

    /// Every cell without figures and every run that did not end well, with its reason: the
    /// report's list of failures.
    pub fn failures(&self) -> Vec<Failure> {
        let mut out: Vec<Failure> = self
            .missing()
            .into_iter()
            .map(|(c, m)| Failure {
                cell: self.cell_label(c),
                what: m.status,
                reason: m.reason,
            })
            .collect();
        for (c, r) in self.troubled_runs() {
            out.push(Failure {
                cell: self.cell_label(c),
                what: format!("run {} {}", r.repeat + 1, r.status),
                reason: r.error.clone().unwrap_or_else(|| "no error recorded".into()),
            });
        }
        out
    }

    /// [`failures`](Self::failures) as people read them: cells that failed alike (every cell of
    /// a filesystem the kernel lacks) in one entry, named by the first and how many more.
    pub fn failures_grouped(&self) -> Vec<Failure> {
        let mut groups: Vec<(Failure, usize)> = Vec::new();
        for f in self.failures() {
            match groups
                .iter_mut()
                .find(|(g, _)| g.what == f.what && g.reason == f.reason)
            {
                Some((_, more)) => *more += 1,
                None => groups.push((f, 0)),
            }
        }
        groups
            .into_iter()
            .map(|(mut f, more)| {
                match more {
                    0 => {}
                    1 => f.cell.push_str(" and 1 more cell"),
                    n => f.cell.push_str(&format!(" and {n} more cells")),
                }
                f
            })
            .collect()
    }

    /// The test bed as label and value lines: CPU, memory, kernel, devices, tool versions.
    pub fn testbed_lines(&self) -> Vec<(String, String)> {
        let serde_json::Value::Object(fields) = &self.study.testbed else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for (key, value) in fields {
            match value {
                serde_json::Value::Array(items) => {
                    out.extend(items.iter().map(|item| (key.clone(), json_item(item))));
                }
                // The study's `[device] dir` target: the directory, then what is mounted there.
                v @ serde_json::Value::Object(_) => out.push((key.clone(), json_item(v))),
                v => out.push((key.clone(), json_scalar(key, v))),
            }
        }
        out
    }

    /// One line about the study: its status, when it ran, how many runs it has.
    pub fn overview(&self) -> String {
        let s = &self.study;
        let runs: Vec<&RunRow> = self.cells.iter().flat_map(|c| &c.runs).collect();
        let ok = runs.iter().filter(|r| r.status == RunStatus::Ok).count();
        let finished = s
            .finished_at
            .as_deref()
            .map(|f| format!(", finished {f}"))
            .unwrap_or_default();
        format!(
            "study {} `{}`: {}, started {}{finished}; {} cells, {} of {} planned runs recorded, {ok} ended well",
            s.id,
            s.name,
            s.status,
            s.started_at,
            self.cells.len(),
            runs.len(),
            s.planned_runs
        )
    }

    /// The cell as a reader names it: `ext4 dbench clients=4` (the lab's label, stored with it).
    pub fn cell_label(&self, cell: &Cell) -> String {
        cell.row.spec.label.clone()
    }
}

/// A cell without figures, or a run that did not end well.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Failure {
    /// `ext4 dbench clients=4`.
    pub cell: String,
    /// `hung`, `unsupported`, `run 2 failed`...
    pub what: String,
    pub reason: String,
}

/// A JSON value as text; a `*_bytes` figure in GiB or MiB.
fn json_scalar(key: &str, v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Number(n) if key.ends_with("_bytes") => bytes(n.as_f64().unwrap_or(0.0)),
        serde_json::Value::Null => "-".to_string(),
        other => other.to_string(),
    }
}

fn bytes(b: f64) -> String {
    const MIB: f64 = 1024.0 * 1024.0;
    if b >= 1024.0 * MIB {
        format!("{:.1} GiB", b / 1024.0 / MIB)
    } else {
        format!("{:.1} MiB", b / MIB)
    }
}

/// An object of a test bed's list (a device, a tool) as one line: its name (path, tool...), then
/// the others (`mkfs.xfs: mkfs.xfs version 6.1.0`; `/dev/sdb: model X, size_bytes 8.0 GiB`).
fn json_item(item: &serde_json::Value) -> String {
    let serde_json::Value::Object(fields) = item else {
        return json_scalar("", item);
    };
    let Some(name_key) = ["path", "tool", "name", "device", "dir"]
        .into_iter()
        .find(|k| fields.contains_key(*k))
        .or(fields.keys().next().map(String::as_str))
    else {
        return String::new();
    };
    let first = &fields[name_key];
    let rest: Vec<(&String, &serde_json::Value)> =
        fields.iter().filter(|(k, v)| *k != name_key && !v.is_null()).collect();
    let rest_text = if rest.len() == 1 {
        json_scalar(rest[0].0, rest[0].1)
    } else {
        rest.iter()
            .map(|(k, v)| format!("{k} {}", json_scalar(k, v)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!("{}: {rest_text}", json_scalar("", first))
}

/// Where a cell stands: its configuration, its workload and its row in that workload.
fn place(configurations: &[Configuration], workloads: &[Workload], cell: &CellRow) -> (usize, usize, usize) {
    let configuration = configurations
        .iter()
        .position(|c| c.label == cell.spec.configuration)
        .expect("every cell's configuration is listed");
    let workload = workloads
        .iter()
        .position(|w| w.name == cell.spec.workload)
        .expect("every cell's workload is listed");
    let label = row_label(&workloads[workload], cell);
    let row = workloads[workload]
        .rows
        .iter()
        .position(|r| r.label == label)
        .expect("every cell's row is listed");
    (configuration, workload, row)
}

/// Removes and returns the items of `items` that `keep` selects.
fn take<T>(items: &mut Vec<T>, keep: impl Fn(&T) -> bool) -> Vec<T> {
    let (mine, rest) = std::mem::take(items).into_iter().partition(|i| keep(i));
    *items = rest;
    mine
}

/// The configurations of the cells, in order of first appearance, as the lab named them
/// (`xfs`, `xfs 40% full`, `xfs mq-deadline`).
fn configurations(cells: &[CellRow]) -> Vec<Configuration> {
    let mut out: Vec<Configuration> = Vec::new();
    for c in cells {
        if out.iter().any(|o| o.label == c.spec.configuration) {
            continue;
        }
        let s = &c.spec;
        out.push(Configuration {
            label: s.configuration.clone(),
            filesystem: s.filesystem.clone(),
            fs_type: s.fs_type.clone(),
            mkfs_options: s.mkfs_options.clone(),
            mount_options: s.mount_options.clone(),
            scheduler: s.scheduler.clone(),
            read_ahead_kb: s.read_ahead_kb,
            fill_to: s.fill_to,
        });
    }
    out
}

/// A fill level as people write it: 0.4 → `40%`, 0.125 → `12.5%`.
pub fn fill_percent(level: f64) -> String {
    format!("{}%", (level * 1000.0).round() / 10.0)
}

/// The workloads of the cells in order of first appearance, each with the options that vary
/// across the study (as the lab named them for each cell) and its rows.
fn workloads(cells: &[CellRow]) -> Vec<Workload> {
    let mut out: Vec<Workload> = Vec::new();
    for c in cells {
        let w = match out.iter_mut().find(|w| w.name == c.spec.workload) {
            Some(w) => w,
            None => {
                out.push(Workload {
                    name: c.spec.workload.clone(),
                    tool: c.spec.tool.clone(),
                    axes: c.spec.axes.iter().map(|(k, _)| k.clone()).collect(),
                    rows: Vec::new(),
                });
                out.last_mut().expect("pushed")
            }
        };
        let label = row_label(w, c);
        if w.rows.iter().all(|r| r.label != label) {
            let values = w.axes.iter().map(|a| param(c, a)).collect();
            w.rows.push(Row { label, values });
        }
    }
    out
}

/// A cell's value of the axis `name`.
fn param(cell: &CellRow, name: &str) -> String {
    cell.spec
        .axes
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.clone())
        .unwrap_or_else(|| "-".to_string())
}

fn row_label(w: &Workload, cell: &CellRow) -> String {
    if w.axes.is_empty() {
        return w.name.clone();
    }
    w.axes
        .iter()
        .map(|a| format!("{a}={}", param(cell, a)))
        .collect::<Vec<_>>()
        .join(" ")
}

impl Cell {
    fn load(
        store: &Store,
        row: CellRow,
        configuration: usize,
        workload: usize,
        row_index: usize,
        runs: Vec<RunRow>,
        steps: Vec<StepRow>,
    ) -> Result<Cell> {
        let ok: Vec<&RunRow> = runs.iter().filter(|r| r.status == RunStatus::Ok).collect();
        let metrics = metric_stats(&ok);
        let mut cpus = Vec::new();
        let mut by_phase: Vec<(String, Vec<CpuSplit>)> = Vec::new();
        let mut per_op: BTreeMap<String, Vec<(u64, u64)>> = BTreeMap::new();
        let mut p99s = Vec::new();
        let mut series = Vec::new();
        let mut per_run: Vec<(LatencyKey, Vec<(i64, f64)>)> = Vec::new();
        let mut steady = Vec::new();
        for run in &ok {
            let results = store.result(run.id)?;
            let main = results.iter().find(|(p, _)| p == "run").or(results.first());
            if let Some(s) = main.and_then(|(_, r)| r.steady) {
                steady.push(s.at_s);
            }
            if results.len() > 1 {
                cpus.extend(CpuSplit::of_run(&results));
                for (phase, r) in &results {
                    push_to(&mut by_phase, phase.clone(), CpuSplit::of(&r.cpu));
                }
            } else {
                cpus.extend(run.cpu.as_ref().map(CpuSplit::of));
            }
            let histograms: Vec<(String, &[(u64, u64)])> = results.iter().flat_map(|(_, r)| histograms(r)).collect();
            let all = stats::merge_buckets(histograms.iter().map(|(_, h)| *h));
            if let Some(p99) = stats::bucket_quantile(&all, 0.99) {
                p99s.push(p99 as f64 / 1000.0);
            }
            for (name, h) in &histograms {
                for (q, at) in LatencyFigure::QUANTILES {
                    if let Some(ns) = stats::bucket_quantile(h, at) {
                        push_to(&mut per_run, (name.clone(), q), (run.id, ns as f64 / 1000.0));
                    }
                }
            }
            for (name, h) in histograms {
                let merged = per_op.entry(name).or_default();
                *merged = stats::merge_buckets([merged.as_slice(), h]);
            }
            if series.is_empty() {
                if let Some((phase, _)) = results.iter().find(|(p, _)| p == "run").or(results.first()) {
                    series = store.series(run.id, phase)?;
                }
            }
        }
        Ok(Cell {
            row,
            configuration,
            workload,
            row_index,
            metrics,
            cpu: CpuSplit::mean(&cpus),
            cpu_by_phase: by_phase
                .into_iter()
                .filter_map(|(phase, splits)| Some((phase, CpuSplit::mean(&splits)?)))
                .collect(),
            p99_us: Summary::of(&p99s),
            latency: per_op.into_iter().filter_map(|(op, h)| op_latency(op, &h)).collect(),
            latency_runs: per_run
                .into_iter()
                .filter_map(|((op, quantile), values)| {
                    let summary = Summary::of(&values.iter().map(|(_, v)| *v).collect::<Vec<_>>())?;
                    Some(LatencyFigure {
                        op,
                        quantile,
                        values,
                        summary,
                    })
                })
                .collect(),
            series,
            steady,
            steps,
            runs,
        })
    }

    /// The runs that ended well.
    pub fn ok_runs(&self) -> impl Iterator<Item = &RunRow> {
        self.runs.iter().filter(|r| r.status == RunStatus::Ok)
    }

    /// The figure named `name`, if the cell's runs gave it.
    pub fn metric(&self, name: &str) -> Option<&MetricStats> {
        self.metrics.iter().find(|m| m.name == name)
    }

    /// Why the cell has no figures, when it has none: the cell's status and reason, or its runs'
    /// errors.
    pub fn missing(&self) -> Option<Missing> {
        if self.ok_runs().next().is_some() {
            return None;
        }
        let run_error = self.runs.iter().find(|r| r.status != RunStatus::Ok);
        let (status, fallback) = match (self.row.status, run_error) {
            (CellStatus::Done | CellStatus::Pending, Some(r)) => (r.status.as_str(), r.error.clone()),
            (CellStatus::Pending, None) => ("pending", Some("not run yet: the study was interrupted".into())),
            (CellStatus::Done, None) => ("failed", Some("no run was recorded".into())),
            (status, r) => (status.as_str(), r.and_then(|r| r.error.clone())),
        };
        let reason = self
            .row
            .reason
            .clone()
            .or(fallback)
            .unwrap_or_else(|| "no reason recorded".into());
        Some(Missing {
            status: status.to_string(),
            reason,
        })
    }

    /// What a reader should know of a cell that has figures: runs that failed or hung, a cell
    /// marked hung or failed after some runs ended well.
    pub fn troubles(&self) -> Vec<String> {
        let mut out = Vec::new();
        let bad: Vec<&RunRow> = self.runs.iter().filter(|r| r.status != RunStatus::Ok).collect();
        if !bad.is_empty() && self.missing().is_none() {
            for r in &bad {
                out.push(format!(
                    "run {} {}: {}",
                    r.repeat + 1,
                    r.status,
                    r.error.as_deref().unwrap_or("no error recorded")
                ));
            }
        }
        if matches!(self.row.status, CellStatus::Hung | CellStatus::Failed) && bad.is_empty() {
            out.push(format!(
                "cell {}: {}",
                self.row.status,
                self.row.reason.as_deref().unwrap_or("no reason recorded")
            ));
        }
        out
    }
}

/// Adds `item` to the list of `key` in `lists`, which keeps the keys in order of first appearance.
fn push_to<K: PartialEq, T>(lists: &mut Vec<(K, Vec<T>)>, key: K, item: T) {
    match lists.iter_mut().find(|(k, _)| *k == key) {
        Some((_, items)) => items.push(item),
        None => lists.push((key, vec![item])),
    }
}

/// The latency histogram of each operation type of a result, by name: the engine's operations
/// (read, write, create...) and a script's steps (dbench's NTCreateX, ReadX...), which are the
/// operations its users know.
fn histograms(r: &fslab_engine::RunResult) -> Vec<(String, &[(u64, u64)])> {
    let ops = r.ops.iter().map(|o| (o.op.name().to_string(), o.histogram.as_slice()));
    let steps = r.steps.iter().map(|s| (s.name.clone(), s.histogram.as_slice()));
    ops.chain(steps).filter(|(_, h)| !h.is_empty()).collect()
}

/// Each figure over `runs`: the headline first, then the others in the order of first
/// appearance.
fn metric_stats(runs: &[&RunRow]) -> Vec<MetricStats> {
    let mut order: Vec<&Metric> = Vec::new();
    for m in runs.iter().flat_map(|r| &r.metrics) {
        if order.iter().all(|o| o.name != m.name) {
            order.push(m);
        }
    }
    order.sort_by_key(|m| !m.headline);
    order
        .into_iter()
        .filter_map(|m| {
            let values: Vec<f64> = runs
                .iter()
                .filter_map(|r| r.metrics.iter().find(|x| x.name == m.name).map(|x| x.value))
                .collect();
            Some(MetricStats {
                name: m.name.clone(),
                unit: m.unit.clone(),
                higher_is_better: m.higher_is_better,
                summary: Summary::of(&values)?,
                values,
            })
        })
        .collect()
}

fn op_latency(op: String, buckets: &[(u64, u64)]) -> Option<OpLatency> {
    let q = |q: f64| stats::bucket_quantile(buckets, q).map(|ns| ns as f64 / 1000.0);
    Some(OpLatency {
        op,
        count: buckets.iter().map(|(_, c)| c).sum(),
        p50_us: q(0.5)?,
        p90_us: q(0.9)?,
        p99_us: q(0.99)?,
        p99_9_us: q(0.999)?,
        max_us: q(1.0)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dir_target_in_the_test_bed_reads_as_one_line() {
        let target = serde_json::json!({
            "dir": "/mnt/shared/fslab",
            "mounted_type": "nfs4",
            "source": "server:/export",
            "mount_point": "/mnt/shared",
            "options": "rw,relatime,vers=4.2",
        });
        assert_eq!(
            json_item(&target),
            "/mnt/shared/fslab: mount_point /mnt/shared, mounted_type nfs4, options rw,relatime,vers=4.2, source server:/export"
        );
    }
}
