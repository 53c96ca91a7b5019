//! A workload whose runs have several results (IOzone's sub-tests): besides the CPU split of
//! the whole run, the report has one per result, named after it and beside its figure, and the
//! HTML draws a stacked CPU chart for each (seed 004 shows a CPU chart for every IOzone figure).

use fslab_engine::cpu::CpuUsage;
use fslab_engine::RunResult;
use fslab_report::export::{self, Format};
use fslab_report::table::{self, Table, TableCell};
use fslab_report::StudyData;
use fslab_store::{CellStatus, NewStudy, RunRecord, RunStatus, Store};
use fslab_testkit::studies::{metric, real_result, spec};
use std::time::Duration;

const UNSUPPORTED: &str = "the kernel has no xfs: modprobe xfs";

/// ext4's two runs: per sub-test, its CPU split (user, system, iowait, idle) and measured time.
const RUNS: [[(&str, [f64; 4], u64); 2]; 2] = [
    [
        ("initial writers", [10.0, 50.0, 30.0, 10.0], 2),
        ("readers", [20.0, 20.0, 0.0, 60.0], 6),
    ],
    [
        ("initial writers", [30.0, 30.0, 10.0, 30.0], 2),
        ("readers", [0.0, 40.0, 20.0, 40.0], 2),
    ],
];

/// Each sub-test's mean over the two runs.
const INITIAL_WRITERS: [f64; 4] = [20.0, 40.0, 20.0, 20.0];
const READERS: [f64; 4] = [10.0, 30.0, 10.0, 50.0];
/// The whole runs' mean: run 1 weighs its sub-tests 2:6 (17.5/27.5/7.5/47.5), run 2 evenly
/// (15/35/15/35).
const WHOLE: [f64; 4] = [16.25, 31.25, 11.25, 41.25];

fn result(template: &RunResult, cpu: [f64; 4], secs: u64) -> RunResult {
    let mut r = template.clone();
    r.cpu = CpuUsage {
        user: cpu[0],
        system: cpu[1],
        iowait: cpu[2],
        idle: cpu[3],
        ..Default::default()
    };
    r.duration = Duration::from_secs(secs);
    r
}

/// A study of one IOzone workload on ext4 (two runs of two sub-tests) and xfs (unsupported).
fn study(dir: &std::path::Path) -> StudyData {
    let store = Store::open(dir.join("phases.db")).unwrap_or_else(|e| panic!("{e}"));
    let study = store
        .create_study(&NewStudy {
            name: "iozone phases".to_string(),
            file: "/studies/phases.toml".to_string(),
            text: "name = \"iozone phases\"\n".to_string(),
            started_at: "2026-03-01T10:00:00Z".to_string(),
            testbed: serde_json::json!({}),
            planned_runs: 4,
            form: "full".to_string(),
        })
        .unwrap();
    let template = real_result();
    let ext4 = store.add_cell(study, &spec("ext4", "iozone", "iozone", "", 0)).unwrap();
    for (repeat, run) in RUNS.iter().enumerate() {
        let record = RunRecord {
            repeat: repeat as u32,
            warmup: false,
            status: RunStatus::Ok,
            error: None,
            started_at: "2026-03-01T10:00:00Z".to_string(),
            wall: Duration::from_secs(10),
            results: run
                .iter()
                .map(|(phase, cpu, secs)| (phase.to_string(), result(&template, *cpu, *secs)))
                .collect(),
            figures: None,
            report: None,
            metrics: vec![
                metric("initial writers", 1000.0, "kB/sec", true),
                metric("readers", 3000.0, "kB/sec", true),
            ],
            environment: serde_json::json!({}),
        };
        store.record_run(ext4, &record).unwrap();
    }
    store.set_cell_status(ext4, CellStatus::Done, None).unwrap();
    let xfs = store.add_cell(study, &spec("xfs", "iozone", "iozone", "", 1)).unwrap();
    store
        .set_cell_status(xfs, CellStatus::Unsupported, Some(UNSUPPORTED))
        .unwrap();
    store.set_study_status(study, "complete").unwrap();
    StudyData::load_key(&store, &study.to_string()).unwrap_or_else(|e| panic!("{e}"))
}

fn split(t: &Table, col: usize) -> Vec<f64> {
    match &t.rows[0].cells[col] {
        TableCell::Split { parts } => parts.clone(),
        other => panic!("{} column {col}: not a split: {other:?}", t.title),
    }
}

fn close(what: &str, got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{what}: {got:?}");
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() < 1e-9, "{what}: got {got:?}, want {want:?}");
    }
}

#[test]
fn each_result_of_a_run_has_its_own_cpu_split_table_beside_its_figure() {
    let dir = tempfile::tempdir().unwrap();
    let data = study(dir.path());
    let tables = table::workload_tables(&data, 0);
    let titles: Vec<(&str, bool)> = tables.iter().map(|t| (t.title.as_str(), t.primary)).collect();
    assert_eq!(
        titles,
        [
            ("iozone: initial writers (kB/sec)", true),
            ("iozone: CPU split: initial writers (%)", true),
            ("iozone: latency p99, all operations (us)", true),
            ("iozone: CPU split (%)", true),
            ("iozone: readers (kB/sec)", false),
            ("iozone: CPU split: readers (%)", false),
        ]
    );
    let by_title = |title: &str| tables.iter().find(|t| t.title == title).unwrap();
    let writers = by_title("iozone: CPU split: initial writers (%)");
    assert_eq!(writers.parts, ["user", "system", "iowait", "idle"]);
    close("initial writers", &split(writers, 0), &INITIAL_WRITERS);
    close(
        "readers",
        &split(by_title("iozone: CPU split: readers (%)"), 0),
        &READERS,
    );
    close("the whole run", &split(by_title("iozone: CPU split (%)"), 0), &WHOLE);
    for t in tables.iter().filter(|t| !t.parts.is_empty()) {
        assert_eq!(
            t.rows[0].cells[1],
            TableCell::Missing {
                status: "unsupported".into(),
                reason: UNSUPPORTED.into()
            },
            "{}",
            t.title
        );
        assert!(
            t.notes.contains(&format!("xfs: unsupported: {UNSUPPORTED}")),
            "{:?}",
            t.notes
        );
    }
    let cell = &data.cells[0];
    assert_eq!(
        cell.cpu_by_phase.iter().map(|(p, _)| p.as_str()).collect::<Vec<_>>(),
        ["initial writers", "readers"]
    );
}

#[test]
fn the_exports_show_each_results_cpu_split_and_the_html_draws_each() {
    let dir = tempfile::tempdir().unwrap();
    let data = study(dir.path());
    let md = export::render(&data, Format::Markdown).unwrap();
    let readers = md
        .split("### CPU split: readers (%)\n\n")
        .nth(1)
        .expect("the readers' CPU split in Markdown")
        .lines()
        .take(3)
        .collect::<Vec<_>>();
    assert_eq!(
        readers,
        [
            "| workload | ext4 | xfs |",
            "|---|---:|---:|",
            "| iozone | 10/30/10/50 | unsupported |"
        ]
    );
    let text = export::render(&data, Format::Text { width: 200 }).unwrap();
    assert!(text.contains("CPU split: initial writers (%)"), "{text}");
    assert!(
        !text.contains("CPU split: readers"),
        "the terminal shows the primary tables only, as it does the readers' figure:\n{text}"
    );
    let json: serde_json::Value = serde_json::from_str(&export::render(&data, Format::Json).unwrap()).unwrap();
    let figures: Vec<&str> = json["workloads"][0]["tables"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["figure"].as_str())
        .collect();
    assert!(figures.contains(&"CPU split: readers (%)"), "{figures:?}");
    let cell = &json["workloads"][0]["cells"][0];
    assert_eq!(cell["cpu_pct_by_phase"][1]["phase"], "readers", "{cell}");
    assert_eq!(cell["cpu_pct_by_phase"][1]["cpu_pct"]["idle"], 50.0, "{cell}");

    let html = export::html::page(&data).unwrap();
    let cpu_charts: Vec<&str> = html
        .split("<figure class=\"chart")
        .skip(1)
        .filter(|f| f.contains("data-chart=\"cpu\""))
        .map(|f| f.split("data-title=\"").nth(1).unwrap().split('"').next().unwrap())
        .collect();
    assert_eq!(
        cpu_charts,
        [
            "iozone: CPU split: initial writers (%)",
            "iozone: CPU split (%)",
            "iozone: CPU split: readers (%)"
        ]
    );
}
