//! The raw figures as CSV, one row per measured run, for a spreadsheet or pandas: the cell's
//! configuration and parameters (one `param_NAME` column per parameter), the run's status and
//! error, its CPU split and one column per figure (`NAME (UNIT)`, or `NAME` when it names its unit). A cell without runs
//! (unsupported, or not run yet) has one row with its status and reason and empty figures.
//! Then each operation's latency (median, 99th and 99.9th percentile, microseconds) in each
//! run: `read latency p99 (us)`. `headline` names the cell's headline figure and `verdict` says how the cell stands on it
//! against the best of its row (`best`, `≈ best`, `2.10×`, empty without a verdict).

use crate::error::Result;
use crate::study::{Cell, CpuSplit, LatencyFigure, StudyData};
use crate::table::figure_name;
use fslab_store::RunRow;

const FIXED: [&str; 18] = [
    "study_id",
    "study",
    "configuration",
    "filesystem",
    "fs_type",
    "mkfs_options",
    "mount_options",
    "scheduler",
    "read_ahead_kb",
    "fill_to",
    "workload",
    "tool",
    "cell_status",
    "cell_reason",
    "headline",
    "verdict",
    "repeat",
    "run_status",
];

pub fn report(data: &StudyData) -> Result<String> {
    let params = names(data.cells.iter().flat_map(|c| c.row.spec.params.keys().cloned()));
    let figures = names(
        data.cells
            .iter()
            .flat_map(|c| c.runs.iter().flat_map(|r| &r.metrics))
            .map(|m| figure_name(&m.name, &m.unit)),
    );
    let latencies = names(
        data.cells
            .iter()
            .flat_map(|c| c.latency_runs.iter().map(LatencyFigure::name)),
    );
    let verdicts = verdicts(data);
    let mut w = ::csv::Writer::from_writer(Vec::new());
    let mut header: Vec<String> = FIXED.iter().map(|s| s.to_string()).collect();
    header.extend(["error", "wall_s"].map(String::from));
    header.extend(CpuSplit::PARTS.iter().map(|p| format!("cpu_{p}_pct")));
    header.extend(params.iter().map(|p| format!("param_{p}")));
    header.extend(figures.iter().cloned());
    header.extend(latencies.iter().map(|l| figure_name(l, LatencyFigure::UNIT)));
    w.write_record(&header)?;
    for cell in &data.cells {
        let verdict = verdicts.iter().find(|(c, _, _)| std::ptr::eq(*c, cell));
        let (headline, standing) = verdict.map(|(_, h, s)| (h.as_str(), s.as_str())).unwrap_or_default();
        let mut with = |run: Option<&RunRow>| {
            let mut r = record(data, cell, run, &params, &figures);
            r.extend(latencies.iter().map(|name| {
                let figure = cell.latency_runs.iter().find(|l| l.name() == *name);
                let value = figure.and_then(|l| l.values.iter().find(|(id, _)| Some(*id) == run.map(|r| r.id)));
                value.map(|(_, v)| v.to_string()).unwrap_or_default()
            }));
            r[FIXED.iter().position(|c| *c == "headline").expect("a column")] = headline.to_string();
            r[FIXED.iter().position(|c| *c == "verdict").expect("a column")] = standing.to_string();
            w.write_record(r)
        };
        if cell.runs.is_empty() {
            with(None)?;
        }
        for run in &cell.runs {
            with(Some(run))?;
        }
    }
    let bytes = w.into_inner().map_err(|e| ::csv::Error::from(e.into_error()))?;
    Ok(String::from_utf8(bytes).expect("the CSV is made of UTF-8 strings"))
}

/// Each cell's headline figure and its standing on it (as the report's tables give it).
fn verdicts(data: &StudyData) -> Vec<(&Cell, String, String)> {
    let mut out = Vec::new();
    for w in 0..data.workloads.len() {
        let tables = crate::table::workload_tables(data, w);
        let Some(t) = tables.iter().find(|t| t.parts.is_empty()) else {
            continue;
        };
        for cell in data.cells.iter().filter(|c| c.workload == w) {
            let standing = match &t.rows[cell.row_index].cells[cell.configuration] {
                crate::table::TableCell::Value { standing, .. } => standing.map(|s| s.text()).unwrap_or_default(),
                _ => String::new(),
            };
            out.push((cell, t.figure.clone(), standing));
        }
    }
    out
}

/// Distinct names in order of first appearance.
fn names(all: impl Iterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for n in all {
        if !out.contains(&n) {
            out.push(n);
        }
    }
    out
}

fn record(data: &StudyData, cell: &Cell, run: Option<&RunRow>, params: &[String], figures: &[String]) -> Vec<String> {
    let s = &cell.row.spec;
    let opt = |v: Option<String>| v.unwrap_or_default();
    let mut out = vec![
        data.study.id.to_string(),
        data.study.name.clone(),
        data.configurations[cell.configuration].label.clone(),
        s.filesystem.clone(),
        s.fs_type.clone(),
        s.mkfs_options.clone(),
        s.mount_options.clone(),
        opt(s.scheduler.clone()),
        opt(s.read_ahead_kb.map(|k| k.to_string())),
        opt(s.fill_to.map(|f| f.to_string())),
        s.workload.clone(),
        s.tool.clone(),
        cell.row.status.to_string(),
        opt(cell.row.reason.clone()),
        String::new(),
        String::new(),
        opt(run.map(|r| r.repeat.to_string())),
        opt(run.map(|r| r.status.to_string())),
        opt(run.and_then(|r| r.error.clone())),
        opt(run.map(|r| r.wall.as_secs_f64().to_string())),
    ];
    let cpu = run.and_then(|r| r.cpu.as_ref()).map(CpuSplit::of);
    out.extend((0..CpuSplit::PARTS.len()).map(|i| opt(cpu.map(|c| c.parts()[i].to_string()))));
    out.extend(params.iter().map(|p| opt(s.params.get(p).cloned())));
    out.extend(figures.iter().map(|f| {
        opt(run.and_then(|r| {
            r.metrics
                .iter()
                .find(|m| figure_name(&m.name, &m.unit) == *f)
                .map(|m| m.value.to_string())
        }))
    }));
    out
}
