//! Opening a store: new files, existing files, files from a newer fslab, and what survives a
//! crash.

use crate::common::*;
use fslab_store::{Store, StoreError, SCHEMA_VERSION};
use fslab_testkit::{tiny_result, TINY_OPS};
use std::path::Path;
use std::process::Command;

fn pragma(path: &Path, name: &str) -> String {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.pragma_query_value(None, name, |r| r.get::<_, rusqlite::types::Value>(0))
        .map(|v| match v {
            rusqlite::types::Value::Integer(i) => i.to_string(),
            rusqlite::types::Value::Text(t) => t,
            other => format!("{other:?}"),
        })
        .unwrap()
}

#[test]
fn a_new_store_gets_its_directories_its_schema_and_wal() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a/b/c/results.db");
    let store = Store::open(&path).unwrap();
    assert!(path.is_file(), "the database file is created");
    assert_eq!(store.path(), path);
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    assert_eq!(store.migrations_applied(), SCHEMA_VERSION);
    assert_eq!(
        pragma(&path, "journal_mode"),
        "wal",
        "WAL is a property of the file, seen by any reader"
    );
    assert_eq!(pragma(&path, "user_version"), SCHEMA_VERSION.to_string());
    // Foreign keys are a setting of each connection: the cascade test in round_trip.rs shows the
    // store's own connection enforces them.
}

#[test]
fn reopening_keeps_everything_and_applies_no_migration() {
    let dir = tempfile::tempdir().unwrap();
    let result = tiny_result();
    let (path, study, cell_id) = {
        let (store, path) = store_in(dir.path());
        let study = store.create_study(&new_study("kept", 2)).unwrap();
        let c = store.add_cell(study, &cell("c", 0, "btrfs", 8)).unwrap();
        store.record_step(c, &step("mkfs", None, 300)).unwrap();
        store.record_run(c, &ok_run(1, &result, 42.0)).unwrap();
        (path, study, c)
    };
    let before = row_counts(&path);
    let store = Store::open(&path).unwrap();
    assert_eq!(
        store.migrations_applied(),
        0,
        "an up-to-date store is not migrated again"
    );
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    assert_eq!(row_counts(&path), before);
    assert_eq!(store.study("kept").unwrap().map(|s| s.id), Some(study));
    assert_eq!(store.runs_done(cell_id).unwrap(), [1]);
    assert_eq!(
        store.runs(study).unwrap()[0].metrics,
        [metric("throughput", 42.0).headline()]
    );
    assert_eq!(store.steps(study).unwrap()[0].step, step("mkfs", None, 300));
}

#[test]
fn a_store_from_a_newer_fslab_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("future.db");
    let newer = SCHEMA_VERSION + 1;
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch("CREATE TABLE from_the_future (x INTEGER)").unwrap();
        conn.pragma_update(None, "user_version", newer).unwrap();
    }
    let e = Store::open(&path).err().expect("a newer schema must be refused");
    assert!(matches!(e, StoreError::TooNew { found, supported, .. } if found == newer && supported == SCHEMA_VERSION));
    let text = e.to_string();
    assert!(text.starts_with(&format!("{}: ", path.display())), "{text}");
    assert!(text.contains(&format!("schema version {newer}")), "{text}");
    assert!(text.contains(&format!("up to {SCHEMA_VERSION}")), "{text}");
    assert!(text.contains("--db"), "{text}");
    assert_eq!(pragma(&path, "user_version"), newer.to_string());
    assert_eq!(
        count(&path, "SELECT count(*) FROM sqlite_schema WHERE name = 'studies'"),
        0,
        "nothing of this fslab's schema was added"
    );
}

#[test]
fn a_file_that_is_not_a_database_is_refused_with_its_name() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.txt");
    std::fs::write(&path, "these are not the results you are looking for\n".repeat(100)).unwrap();
    let e = Store::open(&path).err().expect("a text file is not a store");
    assert!(e.to_string().contains(&path.display().to_string()), "{e}");
}

const CHILD: &str = "FSLAB_STORE_TEST_CRASH_DB";

/// The lab records a run and dies at once (no destructor, no checkpoint): the run is there when
/// the store is opened again. The test runs itself as the child that dies.
#[test]
fn a_run_survives_the_process_dying_right_after_recording_it() {
    if let Some(db) = std::env::var_os(CHILD) {
        let store = Store::open(&db).unwrap();
        let study = store.create_study(&new_study("crash", 2)).unwrap();
        let c = store.add_cell(study, &cell("c", 0, "ext4", 1)).unwrap();
        store.record_run(c, &ok_run(1, &tiny_result(), 7.0)).unwrap();
        std::process::abort();
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("crash.db");
    // libtest names the test by its path in the test binary, without the binary's own name.
    let module = module_path!().split_once("::").map_or("", |(_, m)| m);
    let name = format!("{module}::a_run_survives_the_process_dying_right_after_recording_it");
    let status = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", &name, "--nocapture"])
        .env(CHILD, &db)
        .status()
        .unwrap();
    assert!(!status.success(), "the child was meant to abort: {status}");
    assert!(
        dir.path().join("crash.db-wal").exists(),
        "the child died with its write-ahead log open"
    );
    let store = Store::open(&db).unwrap();
    let study = store
        .study("crash")
        .unwrap()
        .expect("the study written before the crash");
    let runs = store.runs(study.id).unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].metrics, [metric("throughput", 7.0).headline()]);
    assert_eq!(store.result(runs[0].id).unwrap()[0].1.totals.ops, TINY_OPS);
}

#[test]
fn a_version_1_store_is_brought_forward_and_its_cells_read_as_unfilled() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v1.db");
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(fslab_store::schema::MIGRATIONS[0]).unwrap();
        conn.pragma_update(None, "user_version", 1).unwrap();
        conn.execute_batch(
            "INSERT INTO studies (name, file, text, started_at, testbed, planned_runs) \
             VALUES ('old', 'old.toml', '', '2026-01-01T00:00:00Z', '{}', 1); \
             INSERT INTO cells (study_id, key, ordinal, filesystem, fs_type, mkfs_options, mount_options, \
             workload, tool, params, planned_repeats) \
             VALUES (1, 'ext4|dbench', 0, 'ext4', 'ext4', '', '', 'dbench', 'dbench', '{}', 1);",
        )
        .unwrap();
    }
    let store = Store::open(&path).unwrap();
    assert_eq!(store.migrations_applied(), SCHEMA_VERSION - 1);
    assert_eq!(pragma(&path, "user_version"), SCHEMA_VERSION.to_string());
    let study = store.study("old").unwrap().expect("the old study is there");
    let cells = store.cells(study.id).unwrap();
    assert_eq!(cells.len(), 1);
    assert_eq!(
        (cells[0].spec.key.as_str(), cells[0].spec.fill_to),
        ("ext4|dbench", None)
    );
    // The new column takes a level.
    let mut spec = cells[0].spec.clone();
    spec.key = "ext4|fill=40%|dbench".to_string();
    spec.fill_to = Some(0.4);
    let id = store.add_cell(study.id, &spec).unwrap();
    let back = store.cells(study.id).unwrap();
    assert_eq!(back.iter().find(|c| c.id == id).unwrap().spec.fill_to, Some(0.4));
}
