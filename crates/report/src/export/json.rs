//! The aggregated report as one JSON document: the study, its test bed and configurations, and
//! what it found (each headline figure's verdicts, row by row), for each workload its tables
//! (means, confidence intervals, runs, each value's standing against the best, notes) and its
//! cells (every run's values, the CPU split and each sub-test's, latency per operation), then
//! the lab's steps and the failures.

use crate::study::{Cell, StudyData};
use crate::table;
use serde_json::{json, Value};

/// Version of this document's layout; raised when a field changes meaning or goes away.
pub const SCHEMA_VERSION: u32 = 2;

pub fn report(data: &StudyData) -> String {
    let s = &data.study;
    let workloads: Vec<Value> = (0..data.workloads.len())
        .map(|w| {
            let cells: Vec<Value> = data
                .cells
                .iter()
                .filter(|c| c.workload == w)
                .map(|c| cell(data, c))
                .collect();
            json!({
                "workload": data.workloads[w],
                "tables": table::workload_tables(data, w),
                "cells": cells,
            })
        })
        .collect();
    let doc = json!({
        "schema_version": SCHEMA_VERSION,
        "study": {
            "id": s.id,
            "name": s.name,
            "file": s.file,
            "status": s.status.as_str(),
            "started_at": s.started_at,
            "finished_at": s.finished_at,
            "planned_runs": s.planned_runs,
            "form": s.form,
            "text": s.text,
        },
        "findings": crate::findings::of(data),
        "testbed": s.testbed,
        "configurations": data.configurations,
        "workloads": workloads,
        "steps": table::steps_tables(data),
        "failures": data.failures(),
    });
    let mut text = serde_json::to_string_pretty(&doc).expect("the report serialises");
    text.push('\n');
    text
}

fn cell(data: &StudyData, c: &Cell) -> Value {
    json!({
        "cell": data.cell_label(c),
        "key": c.row.spec.key,
        "configuration": data.configurations[c.configuration].label,
        "row": data.workloads[c.workload].rows[c.row_index].label,
        "params": c.row.spec.params,
        "status": c.row.status.as_str(),
        "missing": c.missing(),
        "troubles": c.troubles(),
        "runs": c.runs.len(),
        "runs_ok": c.ok_runs().count(),
        "metrics": c.metrics,
        "cpu_pct": c.cpu,
        "cpu_pct_by_phase": c
            .cpu_by_phase
            .iter()
            .map(|(phase, cpu)| json!({ "phase": phase, "cpu_pct": cpu }))
            .collect::<Vec<_>>(),
        "latency_p99_us": c.p99_us,
        "latency": c.latency,
    })
}
