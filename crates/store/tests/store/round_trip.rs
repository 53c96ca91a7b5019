//! A study goes in through the lab's calls and comes back out through the reports' ones, whole.

use crate::common::*;
use fslab_engine::RunResult;
use fslab_store::{CellStatus, RunRecord, RunStatus, Store, StoreError, StudyStatus};
use fslab_testkit::{tiny_result, TINY_OPS};
use std::time::Duration;

/// The JSON of a result: equal documents mean nothing was lost or changed.
fn json(r: &RunResult) -> serde_json::Value {
    serde_json::to_value(r).expect("a result serializes")
}

#[test]
fn a_study_with_cells_steps_and_runs_comes_back_as_it_went_in() {
    let dir = tempfile::tempdir().unwrap();
    let (store, path) = store_in(dir.path());
    let result = tiny_result();

    let study = store.create_study(&new_study("compare", 4)).unwrap();
    let ext4 = store
        .add_cell(study, &cell("ext4/reads/threads=2", 0, "ext4-flexbg", 2))
        .unwrap();
    let xfs = store
        .add_cell(study, &cell("xfs/reads/threads=2", 1, "xfs", 2))
        .unwrap();
    store.record_step(ext4, &step("mkfs", None, 250)).unwrap();
    store.record_step(ext4, &step("fsck", Some(1), 40)).unwrap();
    let mut warmup = ok_run(1, &result, 1.0);
    warmup.warmup = true;
    store.record_run(ext4, &warmup).unwrap();
    let first = store.record_run(ext4, &ok_run(1, &result, 100.0)).unwrap();
    store.record_run(ext4, &ok_run(2, &result, 110.0)).unwrap();
    let hung = store.record_run(xfs, &hung_run(1)).unwrap();
    store.set_cell_status(ext4, CellStatus::Done, None).unwrap();
    store
        .set_cell_status(xfs, CellStatus::Hung, Some("repeat 1 hung"))
        .unwrap();
    store.set_study_status(study, "complete").unwrap();

    let row = store.study(&study.to_string()).unwrap().expect("the study by id");
    assert_eq!(
        (row.name.as_str(), row.status, row.planned_runs),
        ("compare", StudyStatus::Complete, 4)
    );
    assert_eq!(row.testbed, new_study("compare", 4).testbed);
    assert_eq!(row.text, new_study("compare", 4).text);
    assert!(row.finished_at.is_some(), "a complete study has its finishing time");

    let cells = store.cells(study).unwrap();
    assert_eq!(cells.len(), 2);
    assert_eq!(cells[0].spec, cell("ext4/reads/threads=2", 0, "ext4-flexbg", 2));
    assert_eq!(
        (cells[1].status, cells[1].reason.as_deref()),
        (CellStatus::Hung, Some("repeat 1 hung"))
    );

    let steps = store.steps(study).unwrap();
    assert_eq!(steps.len(), 2);
    assert_eq!(steps[0].step, step("mkfs", None, 250));
    assert_eq!(steps[1].step, step("fsck", Some(1), 40));

    let runs = store.runs(study).unwrap();
    let shape: Vec<_> = runs.iter().map(|r| (r.cell_id, r.repeat, r.warmup, r.status)).collect();
    assert_eq!(
        shape,
        [
            (ext4, 1, true, RunStatus::Ok),
            (ext4, 1, false, RunStatus::Ok),
            (ext4, 2, false, RunStatus::Ok),
            (xfs, 1, false, RunStatus::Hung)
        ]
    );
    let measured = &runs[1];
    assert_eq!(measured.id, first);
    assert_eq!(measured.metrics, [metric("throughput", 100.0).headline()]);
    assert_eq!(measured.cpu.as_ref(), Some(&result.cpu));
    assert_eq!(measured.wall, Duration::from_millis(1501));
    assert_eq!(measured.figures, ok_run(1, &result, 100.0).figures);
    assert_eq!(measured.environment, ok_run(1, &result, 100.0).environment);
    assert_eq!(
        (runs[3].cpu.as_ref(), runs[3].metrics.len()),
        (None, 0),
        "a hung run measured nothing"
    );
    assert_eq!(runs[3].error.as_deref(), Some("no progress for 15m; killed"));

    let back = store.result(first).unwrap();
    assert_eq!(back.len(), 1);
    assert_eq!(back[0].0, "run");
    assert_eq!(json(&back[0].1), json(&result), "the full result reads back unchanged");
    assert!(store.result(hung).unwrap().is_empty());

    let series = store.series(first, "run").unwrap();
    assert_eq!(series.len(), result.series.len());
    let latencies: Vec<_> = series.iter().map(|s| s.latency).collect();
    let stored: Vec<_> = result.series.iter().map(|s| s.latency).collect();
    assert_eq!(latencies, stored, "the per-second latency reads back");
    let timed: u64 = series.iter().filter_map(|s| s.latency.map(|l| l.ops)).sum();
    assert_eq!(timed, TINY_OPS, "every operation was timed in some second");
    assert!(
        !series.is_empty(),
        "the engine samples at least the last, partial second"
    );
    assert_eq!(
        series.iter().map(|s| s.ops).sum::<u64>(),
        result.series.iter().map(|s| s.ops).sum::<u64>()
    );
    assert_eq!(
        series[0].by_op.get("read").copied(),
        result.series[0].by_op.first().map(|(_, n)| *n)
    );

    // The tables a sqlite3 user reads hold the same figures.
    let bucket_total: u64 = result.ops.iter().flat_map(|o| o.histogram.iter().map(|(_, n)| n)).sum();
    let buckets: usize = result.ops.iter().map(|o| o.histogram.len()).sum();
    let of_first = |sql: &str| count(&path, &sql.replace("RUN", &first.to_string()));
    assert_eq!(
        of_first("SELECT sum(count) FROM ops o JOIN results r ON r.id = o.result_id WHERE r.run_id = RUN"),
        40
    );
    assert_eq!(
        of_first("SELECT count(*) FROM ops o JOIN results r ON r.id = o.result_id WHERE r.run_id = RUN"),
        result.ops.len() as i64
    );
    assert_eq!(
        of_first("SELECT count(*) FROM histograms h JOIN results r ON r.id = h.result_id WHERE r.run_id = RUN"),
        buckets as i64
    );
    assert_eq!(
        of_first("SELECT sum(h.count) FROM histograms h JOIN results r ON r.id = h.result_id WHERE r.run_id = RUN"),
        bucket_total as i64
    );
    assert_eq!(bucket_total, TINY_OPS, "every timed operation is in a histogram bucket");
    assert_eq!(
        of_first("SELECT bytes_read FROM results WHERE run_id = RUN"),
        result.totals.bytes_read as i64
    );
    assert_eq!(count(&path, "SELECT count(*) FROM runs WHERE warmup = 1"), 1);
}

#[test]
fn a_study_is_found_by_id_or_by_name_and_the_newest_name_wins() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = store_in(dir.path());
    let old = store.create_study(&new_study("nightly", 1)).unwrap();
    let new = store.create_study(&new_study("nightly", 2)).unwrap();
    let other = store.create_study(&new_study("other", 3)).unwrap();
    assert_eq!(store.study("nightly").unwrap().map(|s| s.id), Some(new));
    assert_eq!(store.study(&old.to_string()).unwrap().map(|s| s.id), Some(old));
    assert_eq!(store.study("other").unwrap().map(|s| s.planned_runs), Some(3));
    assert_eq!(
        store.study(&other.to_string()).unwrap().map(|s| s.name),
        Some("other".to_string())
    );
    assert_eq!(store.study("missing").unwrap(), None);
    assert_eq!(store.study("999").unwrap(), None);
}

#[test]
fn list_studies_counts_runs_and_troubled_cells() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = store_in(dir.path());
    let result = tiny_result();
    let study = store.create_study(&new_study("mixed", 6)).unwrap();
    let cells: Vec<_> = (0..4)
        .map(|i| store.add_cell(study, &cell(&format!("c{i}"), i, "ext4", 1)).unwrap())
        .collect();
    store.record_run(cells[0], &ok_run(1, &result, 5.0)).unwrap();
    let mut failed = ok_run(2, &result, 0.0);
    failed.status = RunStatus::Failed;
    failed.error = Some("ENOSPC: No space left on device".into());
    store.record_run(cells[0], &failed).unwrap();
    store.record_run(cells[1], &hung_run(1)).unwrap();
    let mut warmup = ok_run(1, &result, 5.0);
    warmup.warmup = true;
    store.record_run(cells[2], &warmup).unwrap();
    store.set_cell_status(cells[1], CellStatus::Hung, Some("hung")).unwrap();
    store
        .set_cell_status(
            cells[2],
            CellStatus::Unsupported,
            Some("jfs: mkfs.jfs not found (apt install jfsutils)"),
        )
        .unwrap();
    store
        .set_cell_status(cells[3], CellStatus::Failed, Some("mount failed"))
        .unwrap();
    store.set_study_status(study, "interrupted").unwrap();

    let list = store.list_studies().unwrap();
    assert_eq!(list.len(), 1);
    let s = &list[0];
    assert_eq!(
        (s.id, s.name.as_str(), s.status),
        (study, "mixed", StudyStatus::Interrupted)
    );
    assert_eq!(
        (s.cells, s.runs_done, s.runs_ok, s.planned_runs),
        (4, 3, 1, 6),
        "warm-ups are not counted"
    );
    assert_eq!(
        (s.unsupported_cells, s.failed_cells, s.hung_cells),
        (1, 2, 1),
        "c0 failed by its failed run, c3 marked failed"
    );
}

#[test]
fn a_cell_s_status_follows_from_its_runs_as_each_is_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = store_in(dir.path());
    let result = tiny_result();
    let study = store.create_study(&new_study("statuses", 6)).unwrap();
    let status = |cell| {
        let row = store.cells(study).unwrap().into_iter().find(|c| c.id == cell).unwrap();
        (row.status, row.reason)
    };
    // Two repeats planned: pending after one, done after both.
    let done = store.add_cell(study, &cell("done", 0, "ext4", 1)).unwrap();
    store.record_run(done, &ok_run(0, &result, 5.0)).unwrap();
    assert_eq!(status(done), (CellStatus::Pending, None));
    store.record_run(done, &ok_run(1, &result, 5.0)).unwrap();
    assert_eq!(status(done), (CellStatus::Done, None));
    // A failed run makes the cell failed with its error, whatever comes after it.
    let failed = store.add_cell(study, &cell("failed", 1, "ext4", 1)).unwrap();
    let mut bad = ok_run(0, &result, 0.0);
    bad.status = RunStatus::Failed;
    bad.error = Some("ENOSPC".into());
    store.record_run(failed, &bad).unwrap();
    store.record_run(failed, &ok_run(1, &result, 5.0)).unwrap();
    assert_eq!(status(failed), (CellStatus::Failed, Some("ENOSPC".to_string())));
    // A hung warm-up hangs the cell, with its reason.
    let hung = store.add_cell(study, &cell("hung", 2, "ext4", 1)).unwrap();
    let mut warmup = hung_run(0);
    warmup.warmup = true;
    store.record_run(hung, &warmup).unwrap();
    assert_eq!(
        status(hung),
        (CellStatus::Hung, Some("no progress for 15m; killed".to_string()))
    );
    // An unsupported cell stays so.
    let unsupported = store.add_cell(study, &cell("unsupported", 3, "jfs", 1)).unwrap();
    store
        .set_cell_status(unsupported, CellStatus::Unsupported, Some("no jfs"))
        .unwrap();
    let mut warmup = ok_run(0, &result, 1.0);
    warmup.warmup = true;
    store.record_run(unsupported, &warmup).unwrap();
    assert_eq!(
        status(unsupported),
        (CellStatus::Unsupported, Some("no jfs".to_string()))
    );
}

#[test]
fn adding_a_cell_again_returns_the_same_id() {
    let dir = tempfile::tempdir().unwrap();
    let (store, path) = store_in(dir.path());
    let study = store.create_study(&new_study("s", 2)).unwrap();
    let other = store.create_study(&new_study("t", 2)).unwrap();
    let spec = cell("ext4/threads=4", 0, "ext4", 4);
    let id = store.add_cell(study, &spec).unwrap();
    assert_eq!(store.add_cell(study, &spec).unwrap(), id);
    let mut renumbered = spec.clone();
    renumbered.ordinal = 9;
    assert_eq!(
        store.add_cell(study, &renumbered).unwrap(),
        id,
        "the key alone identifies a cell"
    );
    assert_eq!(store.cells(study).unwrap().len(), 1);
    assert_ne!(
        store.add_cell(other, &spec).unwrap(),
        id,
        "keys are unique within a study, not across"
    );
    assert_eq!(count(&path, "SELECT count(*) FROM cells"), 2);
    assert!(matches!(store.add_cell(12345, &spec), Err(StoreError::NoStudy(12345))));
}

#[test]
fn runs_done_lists_the_measured_repeats_whatever_their_status() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = store_in(dir.path());
    let result = tiny_result();
    let study = store.create_study(&new_study("s", 4)).unwrap();
    let c = store.add_cell(study, &cell("c", 0, "xfs", 1)).unwrap();
    let other = store.add_cell(study, &cell("d", 1, "xfs", 1)).unwrap();
    assert!(store.runs_done(c).unwrap().is_empty());
    let mut warmup = ok_run(1, &result, 1.0);
    warmup.warmup = true;
    store.record_run(c, &warmup).unwrap();
    store.record_run(c, &warmup).unwrap();
    assert!(
        store.runs_done(c).unwrap().is_empty(),
        "warm-ups are not runs done, and may repeat"
    );
    store.record_run(c, &hung_run(3)).unwrap();
    store.record_run(c, &ok_run(1, &result, 1.0)).unwrap();
    let mut failed = ok_run(2, &result, 1.0);
    failed.status = RunStatus::Failed;
    store.record_run(c, &failed).unwrap();
    store.record_run(other, &ok_run(4, &result, 1.0)).unwrap();
    assert_eq!(store.runs_done(c).unwrap(), [1, 2, 3]);
    assert_eq!(store.runs_done(other).unwrap(), [4]);
}

/// A refused run leaves nothing behind: neither a second run of a repeat already recorded, nor a
/// run whose last rows (its metrics) or middle rows (a second "run" phase) break a constraint,
/// after its run, results, ops, histograms, series and cpu rows were written in the transaction.
#[test]
fn a_refused_run_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let OneCell {
        store, path, cell: c, ..
    } = one_cell(dir.path());
    let result = tiny_result();
    store.record_run(c, &ok_run(1, &result, 1.0)).unwrap();
    let before = row_counts(&path);
    let refused = |run: &RunRecord| {
        let e = store.record_run(c, run).expect_err("the run must be refused");
        assert_eq!(row_counts(&path), before, "the refused run ({e}) left rows behind");
        e.to_string()
    };

    let e = refused(&ok_run(1, &result, 2.0));
    assert_eq!(
        e,
        format!("cell {c} already has a measured run for repeat 1; a run is recorded once")
    );

    let mut twice_named = ok_run(2, &result, 1.0);
    twice_named.metrics.push(metric("throughput", 2.0));
    assert!(refused(&twice_named).contains("UNIQUE constraint failed: metrics"));

    let mut twice_phased = ok_run(2, &result, 1.0);
    twice_phased.results.push(("run".into(), result.clone()));
    assert!(refused(&twice_phased).contains("UNIQUE constraint failed: results"));

    // The repeat was not taken by the failed attempts: it records now.
    store.record_run(c, &ok_run(2, &result, 1.0)).unwrap();
    assert_eq!(store.runs_done(c).unwrap(), [1, 2]);
}

#[test]
fn deleting_a_study_removes_everything_it_holds_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let (store, path) = store_in(dir.path());
    let result = tiny_result();
    let fill = |name: &str| {
        let study = store.create_study(&new_study(name, 1)).unwrap();
        let c = store.add_cell(study, &cell("c", 0, "ext4", 1)).unwrap();
        store.record_step(c, &step("mkfs", None, 10)).unwrap();
        store.record_run(c, &ok_run(1, &result, 1.0)).unwrap();
        study
    };
    let kept = fill("kept");
    let empty = row_counts(&path);
    let gone = fill("gone");
    let full = row_counts(&path);
    store.delete_study(gone).unwrap();
    assert_eq!(row_counts(&path), empty);
    assert!(
        full.iter().zip(&empty).all(|(f, e)| f.1 > e.1),
        "every table had rows of the deleted study"
    );
    assert!(store.study("gone").unwrap().is_none());
    assert_eq!(store.runs(kept).unwrap().len(), 1);
    assert!(matches!(store.delete_study(gone), Err(StoreError::NoStudy(id)) if id == gone));
}

#[test]
fn statuses_and_ids_that_do_not_exist_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = store_in(dir.path());
    let study = store.create_study(&new_study("s", 1)).unwrap();
    let e = store.set_study_status(study, "finished").unwrap_err();
    assert_eq!(
        e.to_string(),
        "\"finished\" is not a study status: expected running, complete or interrupted"
    );
    assert!(matches!(
        store.set_study_status(777, "complete"),
        Err(StoreError::NoStudy(777))
    ));
    assert!(matches!(
        store.set_cell_status(888, CellStatus::Done, None),
        Err(StoreError::NoCell(888))
    ));
    let e = store.record_step(999, &step("mkfs", None, 1)).unwrap_err();
    assert_eq!(e.to_string(), "the results store has no cell with id 999");
    assert!(matches!(
        store.record_run(999, &hung_run(1)),
        Err(StoreError::NoCell(999))
    ));
}

#[test]
fn a_nan_figure_is_kept_as_null_and_read_back_as_nan() {
    let dir = tempfile::tempdir().unwrap();
    let OneCell {
        store,
        path,
        study,
        cell: c,
    } = one_cell(dir.path());
    let mut run = hung_run(1);
    run.metrics.push(metric("throughput", f64::NAN));
    store.record_run(c, &run).unwrap();
    assert_eq!(count(&path, "SELECT count(*) FROM metrics WHERE value IS NULL"), 1);
    assert!(store.runs(study).unwrap()[0].metrics[0].value.is_nan());
}

/// The lab writes while a report reads: two connections to one file.
#[test]
fn two_stores_on_one_file_see_each_others_writes() {
    let dir = tempfile::tempdir().unwrap();
    let (writer, path) = store_in(dir.path());
    let reader = Store::open(&path).unwrap();
    let study = writer.create_study(&new_study("shared", 1)).unwrap();
    assert_eq!(reader.study("shared").unwrap().map(|s| s.id), Some(study));
}
