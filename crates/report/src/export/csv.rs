//! The raw figures as CSV, one row per measured run, for a spreadsheet or pandas: the cell's
//! configuration and parameters (one `param_NAME` column per parameter), the run's status and
//! error, its CPU split and one column per figure (`NAME (UNIT)`, or `NAME` when it names its unit). A cell without runs
//! (unsupported, or not run yet) has one row with its status and reason and empty figures.

use crate::error::Result;
use crate::study::{Cell, CpuSplit, StudyData};
use crate::table::figure_name;
use fslab_store::RunRow;

const FIXED: [&str; 16] = [
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
    let mut w = ::csv::Writer::from_writer(Vec::new());
    let mut header: Vec<String> = FIXED.iter().map(|s| s.to_string()).collect();
    header.extend(["error", "wall_s"].map(String::from));
    header.extend(CpuSplit::PARTS.iter().map(|p| format!("cpu_{p}_pct")));
    header.extend(params.iter().map(|p| format!("param_{p}")));
    header.extend(figures.iter().cloned());
    w.write_record(&header)?;
    for cell in &data.cells {
        if cell.runs.is_empty() {
            w.write_record(record(data, cell, None, &params, &figures))?;
        }
        for run in &cell.runs {
            w.write_record(record(data, cell, Some(run), &params, &figures))?;
        }
    }
    let bytes = w.into_inner().map_err(|e| ::csv::Error::from(e.into_error()))?;
    Ok(String::from_utf8(bytes).expect("the CSV is made of UTF-8 strings"))
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
