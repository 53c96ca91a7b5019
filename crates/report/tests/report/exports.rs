//! A table and each export (terminal text, Markdown, CSV, JSON, HTML) of a stored study with a
//! hung cell, an unsupported one and a failed run (see `fslab_testkit::studies` for its figures).
//!
//! The confidence intervals below were computed with SciPy 1.17.1:
//! `scipy.stats.t.ppf(0.975, n - 1) * numpy.std(x, ddof=1) / sqrt(n)`.

use fslab_report::export::{self, Format};
use fslab_report::table::{self, Table, TableCell};
use fslab_report::verdict::Standing;
use fslab_report::StudyData;
use fslab_testkit::studies::{study_store, FAILED_RUN, HUNG_REASON, UNSUPPORTED_REASON};
use serde_json::Value;

/// Half-widths of the 95% intervals of [100, 102, 98], [200, 204, 196], [300, 310, 290].
const CI_EXT4_1: f64 = 4.9682754235006605;
const CI_XFS_1: f64 = 9.936550847001321;
const CI_XFS_4: f64 = 24.8413771175033;

fn study() -> (tempfile::TempDir, StudyData) {
    let dir = tempfile::tempdir().unwrap();
    let (store, id, _) = study_store(dir.path());
    let data = StudyData::load_key(&store, &id.to_string()).unwrap_or_else(|e| panic!("{e}"));
    (dir, data)
}

/// A value's mean, confidence interval, how many times worse than the best it really is (1 for
/// the best; none without a verdict) and warnings.
fn value(t: &Table, row: usize, col: usize) -> (f64, Option<f64>, Option<f64>, Vec<String>) {
    match &t.rows[row].cells[col] {
        TableCell::Value {
            summary,
            standing,
            warnings,
        } => {
            let times = match standing {
                Some(Standing::Best) => Some(1.0),
                Some(Standing::Worse { times, .. }) => Some(*times),
                _ => None,
            };
            (summary.mean, summary.ci_half_width(), times, warnings.clone())
        }
        other => panic!("{} row {row} column {col}: not a value: {other:?}", t.title),
    }
}

fn missing(t: &Table, row: usize, col: usize) -> (String, String) {
    match &t.rows[row].cells[col] {
        TableCell::Missing { status, reason } => (status.clone(), reason.clone()),
        other => panic!("{} row {row} column {col}: not missing: {other:?}", t.title),
    }
}

fn close(what: &str, got: f64, want: f64) {
    assert!(
        (got - want).abs() < 1e-9 * want.abs().max(1.0),
        "{what}: got {got}, want {want}"
    );
}

#[test]
fn the_table_puts_configurations_side_by_side_with_the_missing_cells_and_their_reasons() {
    let (_dir, data) = study();
    assert_eq!(
        data.workloads.iter().map(|w| w.name.as_str()).collect::<Vec<_>>(),
        ["dbench", "seqwrite"]
    );
    let tables = table::workload_tables(&data, 0);
    let titles: Vec<&str> = tables.iter().map(|t| t.title.as_str()).collect();
    assert_eq!(
        titles,
        [
            "dbench: Throughput (MB/sec)",
            "dbench: ops/s",
            "dbench: latency p99, all operations (us)",
            "dbench: CPU split (%)",
            "dbench: max latency (ms)"
        ]
    );
    assert_eq!(tables.iter().filter(|t| t.primary).count(), 4);
    let t = &tables[0];
    assert_eq!(t.corner, "clients", "only the parameter that varies is an axis");
    assert_eq!(t.columns, ["ext4", "xfs", "jfs"]);
    assert_eq!(t.rows.iter().map(|r| r.label.as_str()).collect::<Vec<_>>(), ["1", "4"]);

    let (mean, ci, times, warnings) = value(t, 0, 0);
    close("ext4 1 mean", mean, 100.0);
    close("ext4 1 ci", ci.unwrap(), CI_EXT4_1);
    close("ext4 1 times the best", times.unwrap(), 2.0);
    assert!(warnings.is_empty(), "{warnings:?}");
    let (mean, ci, times, _) = value(t, 0, 1);
    close("xfs 1 mean", mean, 200.0);
    close("xfs 1 ci", ci.unwrap(), CI_XFS_1);
    close("xfs 1 times the best", times.unwrap(), 1.0);
    let (mean, ci, _, _) = value(t, 1, 1);
    close("xfs 4 mean", mean, 300.0);
    close("xfs 4 ci", ci.unwrap(), CI_XFS_4);

    assert_eq!(
        missing(t, 0, 2),
        ("unsupported".to_string(), UNSUPPORTED_REASON.to_string())
    );
    assert_eq!(missing(t, 1, 0), ("hung".to_string(), HUNG_REASON.to_string()));
    assert!(
        t.notes.contains(&format!("ext4 clients=4: hung: {HUNG_REASON}")),
        "{:?}",
        t.notes
    );
    // jfs is unsupported in every row: one note says so for the column, not one a row.
    assert!(
        t.notes.contains(&format!("jfs: unsupported: {UNSUPPORTED_REASON}")),
        "{:?}",
        t.notes
    );
    assert_eq!(
        t.notes.iter().filter(|n| n.starts_with("jfs")).count(),
        1,
        "{:?}",
        t.notes
    );

    // Less is better for max latency (1000 / throughput): xfs is the best, ext4 twice as slow.
    let latency = &tables[4];
    assert!(!latency.higher_is_better);
    close("max latency ext4", value(latency, 0, 0).2.unwrap(), 2.0);
    close("max latency xfs", value(latency, 0, 1).2.unwrap(), 1.0);

    let cpu = &tables[3];
    assert_eq!(cpu.parts, ["user", "system", "iowait", "idle"]);
    assert_eq!(
        cpu.rows[0].cells[0],
        TableCell::Split {
            parts: vec![10.0, 30.0, 20.0, 40.0]
        }
    );
}

#[test]
fn a_failed_run_is_a_warning_on_a_cell_that_still_has_figures() {
    let (_dir, data) = study();
    let t = &table::workload_tables(&data, 1)[0];
    assert_eq!((t.title.as_str(), t.corner.as_str()), ("seqwrite: MiB/s", "workload"));
    let (mean, ci, times, warnings) = value(t, 0, 1);
    close("xfs mean over its 3 good runs", mean, 60.0);
    close("xfs ci", ci.unwrap(), 0.0);
    assert_eq!(warnings, [format!("run 4 failed: {FAILED_RUN}")]);
    // ext4's 50, 55, 45 against xfs's 60, 60, 60: 1.2 times lower, but Welch's p is 0.074 with
    // 2 degrees of freedom: no verdict either way, both tied.
    assert_eq!(times, None, "xfs is not called best");
    assert_eq!(value(t, 0, 0).2, None, "ext4 is not called 1.2x worse");
    let TableCell::Value {
        standing: Some(Standing::Tied { p: Some(p) }),
        ..
    } = &t.rows[0].cells[0]
    else {
        panic!("{:?}", t.rows[0].cells[0])
    };
    assert!((p - 0.0742).abs() < 0.001, "{p}");
}

#[test]
fn the_lab_steps_table_times_each_step_per_configuration() {
    let (_dir, data) = study();
    let steps = table::steps_tables(&data);
    let t = &steps[0];
    assert_eq!(
        t.rows.iter().map(|r| r.label.as_str()).collect::<Vec<_>>(),
        ["mkfs (ms)", "mount (ms)"],
        "steps under a second read in milliseconds"
    );
    close("ext4 mkfs", value(t, 0, 0).0, 400.0);
    close("ext4 mkfs is 4x xfs's", value(t, 0, 0).2.unwrap(), 4.0);
    assert_eq!(
        value(t, 1, 0).2,
        None,
        "no verdict on mounts: they are not what a study compares"
    );
    assert_eq!(t.rows[0].cells[2], TableCell::Absent, "jfs's mkfs failed: no duration");
    assert!(
        t.notes
            .iter()
            .any(|n| n == "jfs seqwrite: mkfs failed: mkfs.jfs: command not found"),
        "{:?}",
        t.notes
    );
    // The split of the step's time, in percent.
    let TableCell::Split { parts } = &steps[1].rows[0].cells[0] else {
        panic!("{:?}", steps[1].rows[0].cells[0])
    };
    for (got, want) in parts.iter().zip([5.0, 45.0, 25.0, 25.0]) {
        close("mkfs split", *got, want);
    }
}

#[test]
fn terminal_text_shows_each_table_and_every_failure_once() {
    let (_dir, data) = study();
    let text = export::render(&data, Format::Text { width: 200 }).unwrap();
    assert!(text.starts_with("study 1 `report <test>`: complete"), "{text}");
    assert!(text.contains("\n== dbench (dbench) ==\n"), "{text}");
    let row = text
        .lines()
        .find(|l| l.trim_start().starts_with("1 "))
        .expect("the clients=1 row");
    let cells: Vec<&str> = row.split("  ").map(str::trim).filter(|c| !c.is_empty()).collect();
    assert_eq!(
        cells,
        [
            "1",
            "100.00 ± 4.968 (n=3, 2.00×)",
            "200.00 ± 9.937 (n=3, best)",
            "unsupported"
        ],
        "{text}"
    );
    assert_eq!(
        text.matches(&format!("! ext4 clients=4: hung: {HUNG_REASON}")).count(),
        1,
        "{text}"
    );
    let failures = text.split("== failures ==\n").nth(1).expect("a failures section");
    assert_eq!(
        failures.lines().collect::<Vec<_>>(),
        [
            format!("ext4 dbench clients=4: hung: {HUNG_REASON}"),
            // jfs's three cells, unsupported for one reason, in one line (the JSON lists each).
            format!("jfs dbench clients=1 and 2 more cells: unsupported: {UNSUPPORTED_REASON}"),
            format!("xfs seqwrite: run 4 failed: {FAILED_RUN}"),
        ]
    );
    assert!(
        !text.contains("max latency"),
        "the terminal shows the primary tables only"
    );
}

#[test]
fn markdown_has_every_table_as_a_pipe_table() {
    let (_dir, data) = study();
    let md = export::render(&data, Format::Markdown).unwrap();
    assert!(md.starts_with("# report <test>\n"), "{md}");
    let table = md
        .split("### Throughput (MB/sec)\n\n")
        .nth(1)
        .expect("the headline table")
        .lines()
        .take(4)
        .collect::<Vec<_>>();
    assert_eq!(
        table,
        [
            "| clients | ext4 | xfs | jfs |",
            "|---|---:|---:|---:|",
            "| 1 | 100.00 ± 4.968 (n=3, 2.00×) | 200.00 ± 9.937 (n=3, best) | unsupported |",
            "| 4 | hung | 300.00 ± 24.841 (n=3) | unsupported |",
        ]
    );
    assert!(
        md.contains("### max latency (ms)"),
        "Markdown has the other figures too"
    );
    assert!(md.contains("- memory_bytes: 8.0 GiB"), "{md}");
    assert!(
        md.contains(&format!("- **xfs seqwrite**: run 4 failed: {FAILED_RUN}")),
        "{md}"
    );
}

#[test]
fn csv_has_one_row_per_run_and_one_per_cell_without_runs() {
    let (_dir, data) = study();
    let text = export::render(&data, Format::Csv).unwrap();
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("no {name} in {header:?}"))
    };
    let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
    // 15 good runs, 1 hung, 1 failed, and the 3 unsupported cells without runs.
    assert_eq!(rows.len(), 20, "{text}");
    let of = |status: &str| rows.iter().filter(|r| &r[col("run_status")] == status).count();
    assert_eq!((of("ok"), of("hung"), of("failed"), of("")), (15, 1, 1, 3));
    let hung = rows.iter().find(|r| &r[col("run_status")] == "hung").unwrap();
    assert_eq!(
        (
            &hung[col("configuration")],
            &hung[col("param_clients")],
            &hung[col("error")]
        ),
        ("ext4", "4", HUNG_REASON)
    );
    let unsupported = rows.iter().find(|r| &r[col("cell_status")] == "unsupported").unwrap();
    assert_eq!(&unsupported[col("cell_reason")], UNSUPPORTED_REASON);
    let throughput: Vec<&str> = rows
        .iter()
        .filter(|r| &r[col("configuration")] == "ext4" && &r[col("param_clients")] == "1")
        .map(|r| &r[col("Throughput (MB/sec)")])
        .collect();
    assert_eq!(throughput, ["100", "102", "98"]);
    assert!(header.contains(&"MiB/s".to_string()) && header.contains(&"cpu_iowait_pct".to_string()));
}

#[test]
fn json_is_one_document_with_the_aggregates() {
    let (_dir, data) = study();
    let doc: Value = serde_json::from_str(&export::render(&data, Format::Json).unwrap()).expect("valid JSON");
    assert_eq!(doc["schema_version"], 2);
    assert_eq!(doc["study"]["name"], "report <test>");
    let headline = &doc["workloads"][0]["tables"][0];
    assert_eq!(headline["figure"], "Throughput (MB/sec)");
    let ext4 = &headline["rows"][0]["cells"][0];
    assert_eq!(
        (ext4["kind"].as_str(), ext4["summary"]["n"].as_u64()),
        (Some("value"), Some(3))
    );
    close("json mean", ext4["summary"]["mean"].as_f64().unwrap(), 100.0);
    assert_eq!(ext4["standing"]["verdict"], "worse");
    close("json times the best", ext4["standing"]["times"].as_f64().unwrap(), 2.0);
    let found = &doc["findings"]["figures"][0];
    assert_eq!(found["title"], "dbench: Throughput (MB/sec)");
    assert!(
        found["rows"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("xfs leads (200.00 MB/sec); ext4 2.00× worse (p < 0.001)"),
        "{found}"
    );
    let hung = &headline["rows"][1]["cells"][0];
    assert_eq!(
        (hung["kind"].as_str(), hung["status"].as_str()),
        (Some("missing"), Some("hung"))
    );
    let cells = doc["workloads"][0]["cells"].as_array().unwrap();
    let ext4_cell = cells.iter().find(|c| c["cell"] == "ext4 dbench clients=1").unwrap();
    assert_eq!(
        ext4_cell["metrics"][0]["values"],
        serde_json::json!([100.0, 102.0, 98.0])
    );
    assert_eq!(ext4_cell["runs_ok"], 3);
    let failures = doc["failures"].as_array().unwrap();
    assert_eq!(failures.len(), 5);
    assert!(failures
        .iter()
        .any(|f| f["what"] == "unsupported" && f["reason"] == UNSUPPORTED_REASON));
}

#[test]
fn html_is_one_self_contained_file_with_a_chart_for_each_view() {
    let (_dir, data) = study();
    let html = export::html::page(&data).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>") && html.trim_end().ends_with("</html>"));
    for forbidden in ["<link", "src=\"http", "url(", "@import"] {
        assert!(!html.contains(forbidden), "the page fetches something: {forbidden}");
    }
    assert!(
        html.contains("<title>fslab: report &lt;test&gt;</title>"),
        "names are escaped"
    );
    let kinds: Vec<&str> = html
        .split("<figure class=\"chart")
        .skip(1)
        .map(|f| f.split("data-chart=\"").nth(1).unwrap().split('"').next().unwrap())
        .collect();
    // dbench: bars, lines (1 and 4 clients), CPU, then series and latency for each row
    // (ext4 with 4 clients hung: only xfs), then bars of its other figure (max latency);
    // seqwrite: bars, CPU, series, latency; the lab's steps: bars and CPU.
    assert_eq!(
        kinds,
        [
            "bars", "lines", "cpu", "series", "latency", "series", "latency", "bars", "bars", "cpu", "series",
            "latency", "bars", "cpu"
        ]
    );
    let folded = html.split("<summary>Every other figure</summary>").nth(1).unwrap();
    let folded = folded.split("</details>").next().unwrap();
    assert!(
        folded.contains("data-title=\"dbench: max latency (ms)\""),
        "the other figure's chart is beside its table"
    );
    assert_eq!(html.matches("<svg").count(), kinds.len());
    assert!(
        html.contains(&format!("title=\"{HUNG_REASON}\">hung</td>")),
        "the reason is on the cell"
    );
    assert!(html.contains("<section id=\"failures\">"));
    assert!(html.contains(&format!("{}</li>", html_escape(FAILED_RUN))));
    assert!(
        html.contains("name = &quot;report &lt;test&gt;&quot;"),
        "the study file, escaped"
    );
}

fn html_escape(s: &str) -> String {
    fslab_report::export::html::escape(s)
}
