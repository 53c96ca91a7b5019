//! The example queries of crates/store/README.md, run against a real store as a sqlite3 user
//! would run them: each must work and give the figures that were stored.

use crate::common::*;
use fslab_store::CellStatus;
use fslab_testkit::{tiny_result, TINY_OPS};
use rusqlite::types::ValueRef;
use std::path::Path;

/// The ```sql blocks of the README, in order.
fn readme_queries() -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut queries = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        match (&mut current, line.trim_end()) {
            (None, "```sql") => current = Some(String::new()),
            (Some(q), "```") => {
                queries.push(std::mem::take(q));
                current = None;
            }
            (Some(q), l) => {
                q.push_str(l);
                q.push('\n');
            }
            (None, _) => {}
        }
    }
    assert!(current.is_none(), "README.md ends inside a ```sql block");
    queries
}

/// Every row of `sql`, each value as text (NULL as "NULL").
fn rows(conn: &rusqlite::Connection, sql: &str) -> Vec<Vec<String>> {
    let mut stmt = conn
        .prepare(sql)
        .unwrap_or_else(|e| panic!("the README's query fails: {e}\n{sql}"));
    let columns = stmt.column_count();
    let mut rows = stmt.query([]).unwrap();
    let mut out = Vec::new();
    while let Some(row) = rows.next().unwrap_or_else(|e| panic!("{e}\n{sql}")) {
        let text = (0..columns)
            .map(|i| match row.get_ref(i).unwrap() {
                ValueRef::Null => "NULL".to_string(),
                ValueRef::Integer(n) => n.to_string(),
                ValueRef::Real(x) => x.to_string(),
                ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
                ValueRef::Blob(b) => format!("<{} bytes>", b.len()),
            })
            .collect();
        out.push(text);
    }
    out
}

fn strings(row: &[&str]) -> Vec<String> {
    row.iter().map(|s| s.to_string()).collect()
}

#[test]
fn the_readme_example_queries_run_and_give_the_stored_figures() {
    let dir = tempfile::tempdir().unwrap();
    let (store, path) = store_in(dir.path());
    let result = tiny_result();

    // An older study the queries must leave out, then the study they look at.
    let old = store.create_study(&new_study("old", 1)).unwrap();
    let old_cell = store.add_cell(old, &cell("x", 0, "ext4", 1)).unwrap();
    store.record_run(old_cell, &ok_run(1, &result, 999.0)).unwrap();

    let study = store.create_study(&new_study("readme", 6)).unwrap();
    let ext4_2 = store.add_cell(study, &cell("ext4/2", 0, "ext4", 2)).unwrap();
    let ext4_16 = store.add_cell(study, &cell("ext4/16", 1, "ext4", 16)).unwrap();
    let jfs = store.add_cell(study, &cell("jfs/2", 2, "jfs", 2)).unwrap();
    store.record_run(ext4_2, &ok_run(1, &result, 100.0)).unwrap();
    store.record_run(ext4_2, &ok_run(2, &result, 110.0)).unwrap();
    store.record_run(ext4_16, &ok_run(1, &result, 300.0)).unwrap();
    let mut warmup = ok_run(2, &result, 1.0);
    warmup.warmup = true;
    store.record_run(ext4_16, &warmup).unwrap();
    store.record_step(ext4_2, &step("mkfs", None, 200)).unwrap();
    store.record_step(ext4_16, &step("mkfs", None, 400)).unwrap();
    store.record_step(ext4_2, &step("fsck", Some(1), 50)).unwrap();
    store
        .set_cell_status(
            jfs,
            CellStatus::Unsupported,
            Some("mkfs.jfs not found: apt install jfsutils"),
        )
        .unwrap();

    let queries = readme_queries();
    assert!(
        queries.len() >= 3,
        "the README must show at least 3 example queries, it has {}",
        queries.len()
    );
    let conn = rusqlite::Connection::open(&path).unwrap();
    let results: Vec<_> = queries.iter().map(|q| rows(&conn, q)).collect();
    for (q, r) in queries.iter().zip(&results) {
        assert!(
            !r.is_empty(),
            "the README's query returns no row against a populated store:\n{q}"
        );
    }

    // 1: figures by filesystem and threads, warm-ups and the older study left out.
    assert_eq!(
        results[0],
        [
            strings(&["ext4", "2", "throughput", "MiB/s", "2", "105", "100", "110"]),
            strings(&["ext4", "16", "throughput", "MiB/s", "1", "300", "300", "300"]),
        ]
    );
    // 2: read latency per cell; the ops are the repeats' reads added up.
    let read = result
        .ops
        .iter()
        .find(|o| o.op.name() == "read")
        .expect("the tiny workload reads");
    let ops: Vec<_> = results[1]
        .iter()
        .map(|r| (r[0].as_str(), r[3].as_str(), r[4].clone()))
        .collect();
    assert_eq!(
        ops,
        [
            ("ext4", "read", (2 * read.count).to_string()),
            ("ext4", "read", read.count.to_string())
        ]
    );
    // 3: step times by filesystem.
    assert_eq!(
        results[2],
        [
            strings(&["ext4", "fsck", "1", "0.05", "0.05"]),
            strings(&["ext4", "mkfs", "2", "0.3", "0.4"])
        ]
    );
    // 4: the unsupported cell and its reason.
    assert_eq!(
        results[3],
        [strings(&[
            &study.to_string(),
            "readme",
            "jfs/2",
            "unsupported",
            "mkfs.jfs not found: apt install jfsutils"
        ])]
    );
    // 5: each thread of the newest run, from the JSON.
    let threads: u64 = results[4].iter().map(|r| r[2].parse::<u64>().unwrap()).sum();
    assert_eq!((results[4].len(), threads), (result.threads.len(), TINY_OPS));
    // 6: each cell's headline by its label.
    assert_eq!(
        results[5],
        [
            strings(&["ext4 mq-deadline reads threads=2", "throughput", "MiB/s", "2", "105"]),
            strings(&["ext4 mq-deadline reads threads=16", "throughput", "MiB/s", "1", "300"]),
        ]
    );
}
