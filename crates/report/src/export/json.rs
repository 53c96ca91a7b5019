//! The aggregated report as one JSON document: the study, what it found (each headline figure's
//! verdicts, row by row), its test bed and configurations, for each workload its tables (means,
//! confidence intervals, runs, each value's standing against the best, notes) and its cells
//! (every run's values, the CPU split and each sub-test's, latency per operation), then the lab's
//! steps and the failures. Its layout is [`ReportDocument`]; `fslab schema report` prints its
//! JSON Schema.

use crate::findings::{self, Findings};
use crate::stats::Summary;
use crate::study::{Cell, Configuration, CpuSplit, Failure, MetricStats, Missing, OpLatency, StudyData, Workload};
use crate::table::{self, Table};
use schemars::JsonSchema;
use serde::Serialize;
use std::collections::BTreeMap;

/// Version of this document's layout; raised when a field changes meaning or goes away.
pub const SCHEMA_VERSION: u32 = 2;

/// `fslab report --format json`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ReportDocument {
    pub schema_version: u32,
    pub study: StudyInfo,
    /// What the study found: each workload's headline figure, row by row.
    pub findings: Findings,
    /// The test bed, as `fslab info --json` shows it.
    pub testbed: serde_json::Value,
    pub configurations: Vec<Configuration>,
    pub workloads: Vec<WorkloadReport>,
    /// The lab's steps: their durations per configuration, then their CPU split.
    pub steps: Vec<Table>,
    /// Every cell without figures and every run that did not end well, with its reason.
    pub failures: Vec<Failure>,
}

/// The study as recorded.
#[derive(Debug, Serialize, JsonSchema)]
pub struct StudyInfo {
    pub id: i64,
    pub name: String,
    /// The study file.
    pub file: String,
    /// `running`, `complete` or `interrupted`.
    pub status: String,
    /// RFC 3339.
    pub started_at: String,
    pub finished_at: Option<String>,
    pub planned_runs: u64,
    /// `full` or `quick`.
    pub form: String,
    /// The study file as written.
    pub text: String,
}

/// One workload: its rows, its tables, its cells.
#[derive(Debug, Serialize, JsonSchema)]
pub struct WorkloadReport {
    pub workload: Workload,
    pub tables: Vec<Table>,
    pub cells: Vec<CellReport>,
}

/// One cell's figures over its runs.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CellReport {
    /// The cell's label: `ext4 dbench clients=4`.
    pub cell: String,
    pub key: String,
    pub configuration: String,
    pub row: String,
    /// Every option's value.
    pub params: BTreeMap<String, String>,
    /// `pending`, `done`, `unsupported`, `failed` or `hung`.
    pub status: String,
    pub missing: Option<Missing>,
    pub troubles: Vec<String>,
    /// Measured runs recorded, and of them the ones that ended well.
    pub runs: usize,
    pub runs_ok: usize,
    pub metrics: Vec<MetricStats>,
    pub cpu_pct: Option<CpuSplit>,
    pub cpu_pct_by_phase: Vec<PhaseCpu>,
    /// The 99th percentile latency of all operations, per run, in microseconds.
    pub latency_p99_us: Option<Summary>,
    pub latency: Vec<OpLatency>,
}

/// One sub-test's CPU split (IOzone's `readers`...).
#[derive(Debug, Serialize, JsonSchema)]
pub struct PhaseCpu {
    pub phase: String,
    pub cpu_pct: CpuSplit,
}

/// The document of `data`.
pub fn document(data: &StudyData) -> ReportDocument {
    let s = &data.study;
    ReportDocument {
        schema_version: SCHEMA_VERSION,
        study: StudyInfo {
            id: s.id,
            name: s.name.clone(),
            file: s.file.clone(),
            status: s.status.as_str().to_string(),
            started_at: s.started_at.clone(),
            finished_at: s.finished_at.clone(),
            planned_runs: s.planned_runs,
            form: s.form.clone(),
            text: s.text.clone(),
        },
        findings: findings::of(data),
        testbed: s.testbed.clone(),
        configurations: data.configurations.clone(),
        workloads: (0..data.workloads.len())
            .map(|w| WorkloadReport {
                workload: data.workloads[w].clone(),
                tables: table::workload_tables(data, w),
                cells: data
                    .cells
                    .iter()
                    .filter(|c| c.workload == w)
                    .map(|c| cell(data, c))
                    .collect(),
            })
            .collect(),
        steps: table::steps_tables(data),
        failures: data.failures(),
    }
}

/// The document as text.
pub fn report(data: &StudyData) -> String {
    let mut text = serde_json::to_string_pretty(&document(data)).expect("the report serialises");
    text.push('\n');
    text
}

/// The JSON Schema of the document (docs/schema/report.schema.json).
pub fn schema() -> String {
    let mut text = serde_json::to_string_pretty(&schemars::schema_for!(ReportDocument)).expect("a schema serialises");
    text.push('\n');
    text
}

fn cell(data: &StudyData, c: &Cell) -> CellReport {
    CellReport {
        cell: data.cell_label(c),
        key: c.row.spec.key.clone(),
        configuration: data.configurations[c.configuration].label.clone(),
        row: data.workloads[c.workload].rows[c.row_index].label.clone(),
        params: c.row.spec.params.clone(),
        status: c.row.status.as_str().to_string(),
        missing: c.missing(),
        troubles: c.troubles(),
        runs: c.runs.len(),
        runs_ok: c.ok_runs().count(),
        metrics: c.metrics.clone(),
        cpu_pct: c.cpu,
        cpu_pct_by_phase: c
            .cpu_by_phase
            .iter()
            .map(|(phase, cpu)| PhaseCpu {
                phase: phase.clone(),
                cpu_pct: *cpu,
            })
            .collect(),
        latency_p99_us: c.p99_us.clone(),
        latency: c.latency.clone(),
    }
}
