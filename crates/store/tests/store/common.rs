//! What the store's tests share: studies, cells, steps and runs built around a real engine
//! result (testkit's `tiny_result`).

use fslab_engine::cpu::CpuUsage;
use fslab_engine::RunResult;
use fslab_store::{CellId, CellSpec, Metric, NewStudy, RunRecord, RunStatus, StepRecord, Store, StudyId};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A store in a new file beneath `dir`.
pub fn store_in(dir: &Path) -> (Store, PathBuf) {
    let path = dir.join("fslab.db");
    let store = Store::open(&path).unwrap_or_else(|e| panic!("{e}"));
    (store, path)
}

/// A new store holding one study ("s") with one cell ("c": ext4, one thread).
pub struct OneCell {
    pub store: Store,
    pub path: PathBuf,
    pub study: StudyId,
    pub cell: CellId,
}

pub fn one_cell(dir: &Path) -> OneCell {
    let (store, path) = store_in(dir);
    let study = store.create_study(&new_study("s", 2)).unwrap();
    let cell = store.add_cell(study, &cell("c", 0, "ext4", 1)).unwrap();
    OneCell {
        store,
        path,
        study,
        cell,
    }
}

pub fn new_study(name: &str, planned_runs: u64) -> NewStudy {
    NewStudy {
        name: name.to_string(),
        file: format!("/studies/{name}.toml"),
        text: format!("name = \"{name}\"\nrepeat = 2\n"),
        started_at: "2026-03-01T10:00:00Z".to_string(),
        testbed: serde_json::json!({ "cpu": "Test CPU", "cpus": 2, "kernel": "6.1.0" }),
        planned_runs,
        form: "full".to_string(),
    }
}

pub fn cell(key: &str, ordinal: u32, filesystem: &str, threads: u32) -> CellSpec {
    CellSpec {
        key: key.to_string(),
        ordinal,
        filesystem: filesystem.to_string(),
        fs_type: filesystem.split('-').next().unwrap_or(filesystem).to_string(),
        mkfs_options: "-O flex_bg".to_string(),
        mount_options: "noatime".to_string(),
        scheduler: Some("mq-deadline".to_string()),
        read_ahead_kb: Some(128),
        fill_to: Some(0.4),
        workload: "reads".to_string(),
        tool: "run".to_string(),
        params: [("threads".to_string(), threads.to_string())].into(),
        planned_repeats: 2,
        label: format!("{filesystem} mq-deadline reads threads={threads}"),
        configuration: format!("{filesystem} mq-deadline"),
        axes: vec![("threads".to_string(), threads.to_string())],
    }
}

pub fn step(name: &str, repeat: Option<u32>, millis: u64) -> StepRecord {
    StepRecord {
        name: name.to_string(),
        repeat,
        duration: Duration::from_millis(millis),
        cpu: CpuUsage {
            user: 1.5,
            system: 20.25,
            iowait: 8.0,
            idle: 70.25,
            voluntary_ctx_switches: 12,
            ..Default::default()
        },
        ok: true,
        detail: format!("{name} ran"),
    }
}

pub fn metric(name: &str, value: f64) -> Metric {
    Metric::new(name, value, "MiB/s")
}

/// A measured, successful run of `repeat` with `result` as its "run" phase and one metric.
pub fn ok_run(repeat: u32, result: &RunResult, mib_per_sec: f64) -> RunRecord {
    RunRecord {
        repeat,
        warmup: false,
        status: RunStatus::Ok,
        error: None,
        started_at: format!("2026-03-01T10:0{repeat}:00Z"),
        wall: Duration::from_millis(1500 + u64::from(repeat)),
        results: vec![("run".to_string(), result.clone())],
        figures: Some(serde_json::json!({ "throughput_mb_per_sec": mib_per_sec })),
        metrics: vec![metric("throughput", mib_per_sec).headline()],
        report: Some(format!("Throughput {mib_per_sec} MB/sec\n")),
        environment: serde_json::json!({ "mount": "rw,noatime", "scheduler": "mq-deadline" }),
    }
}

/// A hung run: no result, no metric.
pub fn hung_run(repeat: u32) -> RunRecord {
    RunRecord {
        repeat,
        warmup: false,
        status: RunStatus::Hung,
        error: Some("no progress for 15m; killed".to_string()),
        started_at: "2026-03-01T11:00:00Z".to_string(),
        wall: Duration::from_secs(900),
        results: Vec::new(),
        figures: None,
        metrics: Vec::new(),
        report: None,
        environment: serde_json::json!({}),
    }
}

/// Rows in each table of the schema, by name: what a failed or refused write must not change.
pub fn row_counts(path: &Path) -> Vec<(String, i64)> {
    let conn = rusqlite::Connection::open(path).expect("open the store with rusqlite");
    [
        "studies",
        "cells",
        "steps",
        "runs",
        "results",
        "ops",
        "histograms",
        "series",
        "cpu",
        "metrics",
    ]
    .iter()
    .map(|table| {
        let n = conn
            .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
            .expect(table);
        (table.to_string(), n)
    })
    .collect()
}

/// One count from an SQL query against the file, as a sqlite3 user would run it.
pub fn count(path: &Path, sql: &str) -> i64 {
    let conn = rusqlite::Connection::open(path).expect("open the store with rusqlite");
    conn.query_row(sql, [], |r| r.get(0))
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}
