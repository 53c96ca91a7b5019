//! `fslab report` and `fslab compare` from the outside: formats, files, exit codes and messages,
//! on the stores testkit's `studies` builds through the store's API for the report's own tests.

use crate::common::{fslab, s};
// The report's stored studies: one with a hung and an unsupported cell, and planted differences
// for comparisons.
use fslab_testkit::studies;

#[test]
fn report_prints_tables_and_writes_each_format() {
    let dir = tempfile::tempdir().unwrap();
    let (_store, id, db) = studies::study_store(dir.path());
    let id = id.to_string();

    let text = fslab(&["report", &id, "--db", s(&db)]);
    assert_eq!(text.code, 0, "{}", text.stderr);
    assert!(text.stdout.contains("100.00 ± 4.968 (n=3, 2.00×)"), "{}", text.stdout);
    let found = text.stdout.find("== what the study found ==").expect("the findings");
    assert!(
        found < text.stdout.find("== dbench (dbench) ==").unwrap(),
        "the answer comes first:\n{}",
        text.stdout
    );
    assert!(
        text.stdout
            .contains("clients=1: xfs leads (200.00 MB/sec); ext4 2.00× worse (p < 0.001)"),
        "{}",
        text.stdout
    );
    assert!(text.stdout.contains(studies::HUNG_REASON), "{}", text.stdout);

    let by_name = fslab(&["report", "report <test>", "--db", s(&db)]);
    assert_eq!(by_name.stdout, text.stdout, "a study is found by its name too");

    let md = fslab(&["report", &id, "--db", s(&db), "--format", "md"]);
    assert!(md.stdout.starts_with("# report <test>\n"), "{}", md.stdout);
    let csv = fslab(&["report", &id, "--db", s(&db), "--format", "csv"]);
    assert_eq!(csv.stdout.lines().count(), 21, "a header and 20 rows:\n{}", csv.stdout);
    let json = fslab(&["report", &id, "--db", s(&db), "--format", "json"]);
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).expect("one JSON document");
    assert_eq!(doc["schema_version"], 2);

    let html = dir.path().join("out.html");
    let run = fslab(&["report", &id, "--db", s(&db), "--html", s(&html)]);
    assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{}", run.stderr);
    assert!(run.stderr.contains(s(&html)), "{}", run.stderr);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>") && page.contains("<svg"));
}

#[test]
fn report_names_what_it_cannot_find() {
    let dir = tempfile::tempdir().unwrap();
    let (_store, _, db) = studies::study_store(dir.path());
    let run = fslab(&["report", "nosuch", "--db", s(&db)]);
    assert_eq!(run.code, 2);
    assert_eq!(
        run.stderr.trim(),
        format!("fslab: no study `nosuch` in {}", db.display())
    );

    let missing = dir.path().join("none.db");
    let run = fslab(&["report", "1", "--db", s(&missing)]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("no results store at"), "{}", run.stderr);
    assert!(!missing.exists(), "a report must not create a store");

    let run = fslab(&["report", "1", "--db", s(&db), "--format", "pdf"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("invalid value 'pdf'"), "{}", run.stderr);
}

#[test]
fn compare_marks_the_planted_regression_and_not_the_noise() {
    let dir = tempfile::tempdir().unwrap();
    let (_store, db) = studies::planted_store(dir.path());
    let run = fslab(&["compare", "before", "after", "--db", s(&db)]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let line = |name: &str| {
        run.stdout
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no {name} line:\n{}", run.stdout))
    };
    assert!(line("ext4 steady").contains("-20.0% *"), "{}", run.stdout);
    assert!(line("ext4 noisy").contains("+2.0%"), "{}", run.stdout);
    assert!(!line("ext4 noisy").contains('*'), "{}", run.stdout);

    let json = fslab(&["compare", "before", "after", "--db", s(&db), "--json"]);
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).expect("one JSON document");
    assert_eq!(doc["schema_version"], 2);
    let verdicts: Vec<&str> = doc["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(verdicts, ["worse", "no_significant_change"]);
}

#[test]
fn fail_above_exits_non_zero_on_a_significant_regression() {
    let dir = tempfile::tempdir().unwrap();
    let (_store, db) = studies::planted_store(dir.path());
    let run = fslab(&["compare", "before", "after", "--db", s(&db), "--fail-above", "5%"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(
        run.stderr.trim(),
        "fslab: 1 figure(s) significantly worse by more than 5%: ext4 steady MiB/s -20.0%"
    );
    assert!(run.stdout.contains("WORSE"), "the comparison is printed all the same");

    let run = fslab(&["compare", "before", "after", "--db", s(&db), "--fail-above", "25"]);
    assert_eq!(run.code, 0, "a 20% regression is under 25%: {}", run.stderr);

    // The other way round, the change is an improvement.
    let run = fslab(&["compare", "after", "before", "--db", s(&db), "--fail-above", "5%"]);
    assert_eq!(run.code, 0, "{}", run.stderr);

    let run = fslab(&[
        "compare",
        "configs:ext4",
        "configs:xfs",
        "--db",
        s(&db),
        "--fail-above",
        "5%",
    ]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("steady MiB/s -20.0%"), "{}", run.stderr);
}

#[test]
fn fail_above_exits_4_when_nothing_could_be_tested() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("single.db");
    let store = fslab_store::Store::open(&db).unwrap();
    // Two studies of one run each: no t-test is possible.
    for (name, value) in [("one", 100.0), ("two", 50.0)] {
        let study = store
            .create_study(&fslab_store::NewStudy {
                name: name.to_string(),
                file: format!("/{name}.toml"),
                text: String::new(),
                started_at: "2026-03-01T10:00:00Z".to_string(),
                testbed: serde_json::json!({}),
                planned_runs: 1,
                form: "full".to_string(),
            })
            .unwrap();
        let mut spec = studies::spec("ext4", "steady", "run", "", 0);
        spec.planned_repeats = 1;
        let cell = store.add_cell(study, &spec).unwrap();
        let run = fslab_store::RunRecord {
            repeat: 0,
            warmup: false,
            status: fslab_store::RunStatus::Ok,
            error: None,
            started_at: "2026-03-01T10:00:00Z".to_string(),
            wall: std::time::Duration::from_secs(1),
            results: Vec::new(),
            figures: None,
            metrics: vec![fslab_engine::Metric::new("MiB/s", value, "MiB/s").headline()],
            report: None,
            environment: serde_json::json!({}),
        };
        store.record_run(cell, &run).unwrap();
    }
    let run = fslab(&["compare", "one", "two", "--db", s(&db), "--fail-above", "5%"]);
    assert_eq!(run.code, 4, "{}", run.stderr);
    assert!(run.stderr.contains("nothing could be tested"), "{}", run.stderr);
    assert!(run.stdout.contains("not tested: needs 2 runs a side"), "{}", run.stdout);
}

#[test]
fn compare_refuses_what_it_cannot_compare() {
    let dir = tempfile::tempdir().unwrap();
    let (_store, db) = studies::planted_store(dir.path());
    let run = fslab(&["compare", "configs:ext4", "configs:zfs", "--db", s(&db)]);
    assert_eq!(run.code, 2);
    assert_eq!(
        run.stderr.trim(),
        "fslab: study `configs` has no configuration `zfs`; its configurations are: ext4, xfs"
    );
    let run = fslab(&["compare", "before", "before", "--db", s(&db)]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("name two studies"), "{}", run.stderr);
    let run = fslab(&["compare", "before", "after", "--db", s(&db), "--fail-above", "five"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("`five` is not a percentage"), "{}", run.stderr);
}
