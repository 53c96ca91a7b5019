//! The report's "planted store" fixtures, built through the store's own API, for the report's
//! tests and the `fslab report` and `fslab compare` tests of the cli.
//!
//! [`study_store`]: a stored study of ext4, xfs and jfs running dbench with 1 and 4 clients and
//! an FFSB sequential write, three repeats each, with figures chosen so that the expected
//! statistics can be worked out by hand. ext4 with 4 clients hung, jfs is unsupported, one of
//! xfs's seqwrite runs failed.
//!
//! [`planted_store`]: studies with planted differences for comparisons, whose p-values SciPy
//! worked out ([`P_STEADY`], [`P_NOISY`]).

use fslab_engine::cpu::CpuUsage;
use fslab_engine::result::Second;
use fslab_engine::RunResult;
use fslab_store::{CellSpec, CellStatus, Metric, NewStudy, RunRecord, RunStatus, StepRecord, Store, StudyId};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A real result from the engine ([`crate::tiny_result`]), given a known CPU split and six
/// seconds of series (the first one the ramp) at 100 MiB/s each.
pub fn real_result() -> RunResult {
    let mut result = crate::tiny_result();
    assert!(
        result.ops.iter().any(|o| !o.histogram.is_empty()),
        "the engine run has no latency histogram"
    );
    result.cpu = CpuUsage {
        user: 10.0,
        system: 30.0,
        iowait: 20.0,
        idle: 40.0,
        ..Default::default()
    };
    let template = result.series.first().cloned().unwrap_or(Second {
        t: 0.0,
        ramp: false,
        ops: 0,
        bytes_read: 0,
        bytes_written: 0,
        by_op: Vec::new(),
        max_latency_us: None,
        sleeps: 0,
        latency: None,
    });
    result.series = (1..=6)
        .map(|t| Second {
            t: t as f64,
            ramp: t == 1,
            ops: 1000,
            bytes_read: 100 << 20,
            bytes_written: 0,
            ..template.clone()
        })
        .collect();
    result
}

/// The figures of each cell's runs, by (filesystem, workload, clients): the headline first.
/// ext4 with 4 clients has none (it hung); jfs none (unsupported).
pub fn headline(filesystem: &str, workload: &str, clients: &str) -> Vec<f64> {
    match (filesystem, workload, clients) {
        ("ext4", "dbench", "1") => vec![100.0, 102.0, 98.0],
        ("xfs", "dbench", "1") => vec![200.0, 204.0, 196.0],
        ("xfs", "dbench", "4") => vec![300.0, 310.0, 290.0],
        ("ext4", "seqwrite", _) => vec![50.0, 55.0, 45.0],
        ("xfs", "seqwrite", _) => vec![60.0, 60.0, 60.0],
        _ => Vec::new(),
    }
}

pub const HUNG_REASON: &str = "no progress for 2m: killed at the timeout";
pub const UNSUPPORTED_REASON: &str = "mkfs.jfs: not found; install jfsutils (apt-get install jfsutils)";
pub const FAILED_RUN: &str = "write: No space left on device";

/// A store holding the study, in `dir`; returns it with the study's id and the file.
pub fn study_store(dir: &Path) -> (Store, StudyId, PathBuf) {
    let path = dir.join("fslab.db");
    let store = Store::open(&path).unwrap_or_else(|e| panic!("{e}"));
    let study = store
        .create_study(&NewStudy {
            name: "report <test>".to_string(),
            file: "/studies/report-test.toml".to_string(),
            text: "name = \"report <test>\"\nrepeat = 3\n\n[[filesystem]]\ntype = \"ext4\"\n".to_string(),
            started_at: "2026-03-01T10:00:00Z".to_string(),
            testbed: serde_json::json!({
                "cpu_model": "Test CPU",
                "cpus": 2,
                "memory_bytes": 8u64 << 30,
                "kernel": "6.1.0",
                "tools": [{ "tool": "mkfs.ext4", "version": "mke2fs 1.47.0" }],
            }),
            planned_runs: 27,
            form: "full".to_string(),
        })
        .unwrap();
    let result = real_result();
    let mut ordinal = 0;
    for fs in ["ext4", "xfs", "jfs"] {
        for (workload, tool, clients) in [
            ("dbench", "dbench", "1"),
            ("dbench", "dbench", "4"),
            ("seqwrite", "ffsb", ""),
        ] {
            let cell = store
                .add_cell(study, &spec(fs, workload, tool, clients, ordinal))
                .unwrap();
            ordinal += 1;
            record_cell(&store, cell, fs, workload, clients, &result);
        }
    }
    store.set_study_status(study, "complete").unwrap();
    (store, study, path)
}

pub fn spec(fs: &str, workload: &str, tool: &str, clients: &str, ordinal: u32) -> CellSpec {
    let mut params: std::collections::BTreeMap<String, String> = [("time".to_string(), "6".to_string())].into();
    if !clients.is_empty() {
        params.insert("clients".to_string(), clients.to_string());
    }
    let axes: Vec<(String, String)> = if clients.is_empty() {
        Vec::new()
    } else {
        vec![("clients".to_string(), clients.to_string())]
    };
    let row: Vec<String> = axes.iter().map(|(k, v)| format!(" {k}={v}")).collect();
    CellSpec {
        key: format!("{fs}|{workload}|{clients}"),
        ordinal,
        filesystem: fs.to_string(),
        fs_type: fs.to_string(),
        mkfs_options: String::new(),
        mount_options: "noatime".to_string(),
        scheduler: None,
        read_ahead_kb: None,
        fill_to: None,
        workload: workload.to_string(),
        tool: tool.to_string(),
        params,
        planned_repeats: 3,
        label: format!("{fs} {workload}{}", row.concat()),
        configuration: fs.to_string(),
        axes,
    }
}

fn record_cell(store: &Store, cell: i64, fs: &str, workload: &str, clients: &str, result: &RunResult) {
    if fs == "jfs" {
        store
            .record_step(cell, &step("mkfs", false, 5, "mkfs.jfs: command not found"))
            .unwrap();
        store
            .set_cell_status(cell, CellStatus::Unsupported, Some(UNSUPPORTED_REASON))
            .unwrap();
        return;
    }
    store
        .record_step(cell, &step("mkfs", true, if fs == "ext4" { 400 } else { 100 }, "mkfs"))
        .unwrap();
    store.record_step(cell, &step("mount", true, 20, "mount")).unwrap();
    if (fs, workload, clients) == ("ext4", "dbench", "4") {
        store.record_run(cell, &hung_run(0)).unwrap();
        store
            .set_cell_status(cell, CellStatus::Hung, Some(HUNG_REASON))
            .unwrap();
        return;
    }
    for (repeat, value) in headline(fs, workload, clients).into_iter().enumerate() {
        store
            .record_run(cell, &ok_run(repeat as u32, workload, value, result))
            .unwrap();
    }
    if (fs, workload) == ("xfs", "seqwrite") {
        store.record_run(cell, &failed_run(3)).unwrap();
    }
    store.set_cell_status(cell, CellStatus::Done, None).unwrap();
}

fn step(name: &str, ok: bool, millis: u64, detail: &str) -> StepRecord {
    StepRecord {
        name: name.to_string(),
        repeat: None,
        duration: Duration::from_millis(millis),
        cpu: CpuUsage {
            user: 5.0,
            system: 45.0,
            iowait: 25.0,
            idle: 25.0,
            ..Default::default()
        },
        ok,
        detail: detail.to_string(),
    }
}

pub fn metric(name: &str, value: f64, unit: &str, higher_is_better: bool) -> Metric {
    Metric {
        name: name.to_string(),
        value,
        unit: unit.to_string(),
        higher_is_better,
        headline: false,
    }
}

/// The figures of a run whose headline is `value`: dbench's Throughput (with max latency, lower
/// is better) or FFSB's MiB/s, then ops/s at ten times the headline.
fn metrics(workload: &str, value: f64) -> Vec<Metric> {
    if workload == "dbench" {
        vec![
            metric("Throughput", value, "MB/sec", true).headline(),
            metric("max latency", 1000.0 / value, "ms", false),
            metric("ops/s", value * 10.0, "ops/s", true),
        ]
    } else {
        vec![
            metric("MiB/s", value, "MiB/s", true).headline(),
            metric("ops/s", value * 10.0, "ops/s", true),
        ]
    }
}

fn ok_run(repeat: u32, workload: &str, value: f64, result: &RunResult) -> RunRecord {
    RunRecord {
        repeat,
        warmup: false,
        status: RunStatus::Ok,
        error: None,
        started_at: "2026-03-01T10:00:00Z".to_string(),
        wall: Duration::from_secs(8),
        results: vec![("run".to_string(), result.clone())],
        figures: None,
        report: None,
        metrics: metrics(workload, value),
        environment: serde_json::json!({}),
    }
}

fn hung_run(repeat: u32) -> RunRecord {
    RunRecord {
        repeat,
        warmup: false,
        status: RunStatus::Hung,
        error: Some(HUNG_REASON.to_string()),
        started_at: "2026-03-01T11:00:00Z".to_string(),
        wall: Duration::from_secs(120),
        results: Vec::new(),
        figures: None,
        report: None,
        metrics: Vec::new(),
        environment: serde_json::json!({}),
    }
}

fn failed_run(repeat: u32) -> RunRecord {
    RunRecord {
        status: RunStatus::Failed,
        error: Some(FAILED_RUN.to_string()),
        ..hung_run(repeat)
    }
}

/// Five runs of a baseline: steady (CoV under 1%) for `steady`, noisy (CoV 8%) for `noisy`.
pub const STEADY: [f64; 5] = [100.0, 101.0, 99.0, 100.5, 99.5];
pub const NOISY: [f64; 5] = [100.0, 110.0, 90.0, 105.0, 95.0];
/// The candidate's runs: STEADY 20% lower (a regression), NOISY 2% higher.
pub const STEADY_MINUS_20: [f64; 5] = [80.0, 80.8, 79.2, 80.4, 79.6];
pub const NOISY_PLUS_2: [f64; 5] = [102.0, 112.2, 91.8, 107.1, 96.9];
/// Welch's p-values of those two pairs, from scipy.stats.ttest_ind(a, b, equal_var=False)
/// (SciPy 1.17.1).
pub const P_STEADY: f64 = 1.7895208173473219e-10;
pub const P_NOISY: f64 = 0.7024464953818034;

/// A store with planted differences, in `dir`: studies `before` and `after` (ext4 running
/// workloads `steady` and `noisy`, `after` with the candidate's figures), and study `configs`
/// where ext4 has the baseline's figures and xfs the candidate's. Runs carry figures only.
pub fn planted_store(dir: &Path) -> (Store, PathBuf) {
    let path = dir.join("planted.db");
    let store = Store::open(&path).unwrap_or_else(|e| panic!("{e}"));
    let before = [("ext4", STEADY, NOISY)];
    let after = [("ext4", STEADY_MINUS_20, NOISY_PLUS_2)];
    let both = [("ext4", STEADY, NOISY), ("xfs", STEADY_MINUS_20, NOISY_PLUS_2)];
    for (name, configs) in [("before", &before[..]), ("after", &after[..]), ("configs", &both[..])] {
        planted_study(&store, name, configs);
    }
    (store, path)
}

fn planted_study(store: &Store, name: &str, configs: &[(&str, [f64; 5], [f64; 5])]) {
    let study = store
        .create_study(&NewStudy {
            name: name.to_string(),
            file: format!("/studies/{name}.toml"),
            text: format!("name = \"{name}\"\n"),
            started_at: "2026-03-01T10:00:00Z".to_string(),
            testbed: serde_json::json!({}),
            planned_runs: 10 * configs.len() as u64,
            form: "full".to_string(),
        })
        .unwrap();
    let mut ordinal = 0;
    for (fs, steady, noisy) in configs {
        for (workload, values) in [("steady", steady), ("noisy", noisy)] {
            let mut spec = spec(fs, workload, "native", "", ordinal);
            spec.planned_repeats = 5;
            ordinal += 1;
            let cell = store.add_cell(study, &spec).unwrap();
            for (repeat, value) in values.iter().enumerate() {
                let run = RunRecord {
                    status: RunStatus::Ok,
                    error: None,
                    metrics: vec![metric("MiB/s", *value, "MiB/s", true)],
                    ..hung_run(repeat as u32)
                };
                store.record_run(cell, &run).unwrap();
            }
            store.set_cell_status(cell, CellStatus::Done, None).unwrap();
        }
    }
    store.set_study_status(study, "complete").unwrap();
}
