//! Recording: studies, cells, steps and runs as the lab produces them. A run goes in whole, in one
//! transaction, or not at all.

use crate::columns::{cpu_values, to_json, CPU_COLUMNS};
use crate::error::{Result, StoreError};
use crate::model::{
    CellId, CellSpec, CellStatus, Claim, NewStudy, RunId, RunRecord, RunStatus, Runner, StepRecord, StudyId,
    StudyStatus,
};
use crate::store::Store;
use fslab_engine::result::{rfc3339, OpResult, Second};
use fslab_engine::RunResult;
use rusqlite::{Connection, OptionalExtension, ToSql, Transaction, TransactionBehavior};
use std::collections::BTreeMap;
use std::time::SystemTime;

impl Store {
    /// Records a study as it starts (status `running`).
    pub fn create_study(&self, study: &NewStudy) -> Result<StudyId> {
        let testbed = to_json(&study.testbed, "studies.testbed")?;
        insert(
            &self.conn,
            "studies",
            "name, file, text, started_at, testbed, planned_runs, form",
            &[
                &study.name,
                &study.file,
                &study.text,
                &study.started_at,
                &testbed,
                &study.planned_runs,
                &study.form,
            ],
        )
    }

    /// Sets a study's status: `running`, `complete` or `interrupted`. The last two also stamp its
    /// finishing time.
    pub fn set_study_status(&self, study: StudyId, status: &str) -> Result<()> {
        let status = StudyStatus::from_text(status).ok_or_else(|| StoreError::StudyStatus(status.to_string()))?;
        let finished_at = (status != StudyStatus::Running).then(now);
        let changed = self.conn.execute(
            "UPDATE studies SET status = ?2, finished_at = ?3 WHERE id = ?1",
            (study, status.as_str(), finished_at),
        )?;
        if changed == 0 {
            return Err(StoreError::NoStudy(study));
        }
        Ok(())
    }

    /// Adds a cell to a study, or returns the id of the study's cell with the same key: a resumed
    /// study adds its cells again and finds the ones it already has.
    pub fn add_cell(&self, study: StudyId, cell: &CellSpec) -> Result<CellId> {
        require_study(&self.conn, study)?;
        let params = to_json(&cell.params, "cells.params")?;
        let axes = to_json(&cell.axes, "cells.axes")?;
        self.conn.execute(
            "INSERT INTO cells (study_id, key, ordinal, filesystem, fs_type, mkfs_options, mount_options, scheduler, \
             read_ahead_kb, workload, tool, params, planned_repeats, fill_to, label, configuration, axes) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17) \
             ON CONFLICT (study_id, key) DO NOTHING",
            rusqlite::params![
                study,
                cell.key,
                cell.ordinal,
                cell.filesystem,
                cell.fs_type,
                cell.mkfs_options,
                cell.mount_options,
                cell.scheduler,
                cell.read_ahead_kb,
                cell.workload,
                cell.tool,
                params,
                cell.planned_repeats,
                cell.fill_to,
                cell.label,
                cell.configuration,
                axes,
            ],
        )?;
        let id = self.conn.query_row(
            "SELECT id FROM cells WHERE study_id = ?1 AND key = ?2",
            (study, &cell.key),
            |row| row.get(0),
        )?;
        Ok(id)
    }

    /// Sets a cell's status, with the reason when it is unsupported, failed or hung. A cell
    /// with runs gets its status from them as each is recorded ([`Store::record_run`]); this is
    /// for what no run says: a cell this machine cannot run.
    pub fn set_cell_status(&self, cell: CellId, status: CellStatus, reason: Option<&str>) -> Result<()> {
        let changed = self.conn.execute(
            "UPDATE cells SET status = ?2, reason = ?3 WHERE id = ?1",
            (cell, status.as_str(), reason),
        )?;
        if changed == 0 {
            return Err(StoreError::NoCell(cell));
        }
        Ok(())
    }

    /// Records one timed step of a cell (mkfs, mount, fill, fsck...).
    pub fn record_step(&self, cell: CellId, step: &StepRecord) -> Result<i64> {
        require_cell(&self.conn, cell)?;
        let duration = step.duration.as_secs_f64();
        let cpu = cpu_values(&step.cpu)?;
        let mut values: Vec<&dyn ToSql> = vec![&cell, &step.repeat, &step.name, &duration];
        values.extend(cpu.iter().map(|v| v as &dyn ToSql));
        values.extend([&step.ok as &dyn ToSql, &step.detail]);
        let columns = format!("cell_id, repeat, name, duration_s, {}, ok, detail", CPU_COLUMNS);
        insert(&self.conn, "steps", &columns, &values)
    }

    /// Records a run of a cell with everything it measured, and the cell's status that follows
    /// from its runs, in one transaction: if any part cannot be written, nothing of the run is.
    /// A cell's measured run of a given repeat is recorded once; a second one is refused with
    /// [`StoreError::RunExists`].
    pub fn record_run(&self, cell: CellId, run: &RunRecord) -> Result<RunId> {
        let tx = Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)?;
        require_cell(&tx, cell)?;
        if !run.warmup && measured_run_exists(&tx, cell, run.repeat)? {
            return Err(StoreError::RunExists {
                cell,
                repeat: run.repeat,
            });
        }
        let figures = run.figures.as_ref().map(|c| to_json(c, "runs.figures")).transpose()?;
        let environment = to_json(&run.environment, "runs.environment")?;
        let run_id = insert(
            &tx,
            "runs",
            "cell_id, repeat, warmup, status, error, started_at, wall_s, figures, report, environment, recorded_at",
            &[
                &cell,
                &run.repeat,
                &run.warmup,
                &run.status.as_str(),
                &run.error,
                &run.started_at,
                &run.wall.as_secs_f64(),
                &figures,
                &run.report,
                &environment,
                &now(),
            ],
        )?;
        for (ordinal, (phase, result)) in run.results.iter().enumerate() {
            insert_result(&tx, run_id, ordinal, phase, result)?;
        }
        for m in &run.metrics {
            insert(
                &tx,
                "metrics",
                "run_id, name, value, unit, higher_is_better, headline",
                &[&run_id, &m.name, &m.value, &m.unit, &m.higher_is_better, &m.headline],
            )?;
        }
        settle_cell(&tx, cell)?;
        tx.commit()?;
        Ok(run_id)
    }

    /// Marks `me` as the process running `study`, mounting what it makes beneath `scratch`,
    /// unless another live process runs it: then that one is returned and nothing changes.
    /// `alive` says whether a recorded runner still runs; one that died (killed, crashed) is
    /// replaced, and its scratch directory returned for clearing.
    pub fn claim_study(
        &self,
        study: StudyId,
        me: Runner,
        scratch: &str,
        alive: &dyn Fn(Runner) -> bool,
    ) -> Result<Claim> {
        let tx = Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)?;
        require_study(&tx, study)?;
        let holder = tx
            .query_row(
                "SELECT pid, started, scratch FROM runners WHERE study_id = ?1",
                [study],
                |row| {
                    Ok((
                        Runner {
                            pid: row.get(0)?,
                            started: row.get::<_, i64>(1)? as u64,
                        },
                        row.get::<_, String>(2)?,
                    ))
                },
            )
            .optional()?;
        let left = match holder {
            Some((h, _)) if h != me && alive(h) => return Ok(Claim::Busy(h)),
            Some((h, scratch)) if h != me => Some(scratch),
            _ => None,
        };
        let started = i64::try_from(me.started).map_err(|_| StoreError::TooLarge {
            what: "a process's start time",
            value: me.started,
        })?;
        tx.execute(
            "INSERT INTO runners (study_id, pid, started, scratch, since) VALUES (?1, ?2, ?3, ?4, ?5) \
             ON CONFLICT (study_id) DO UPDATE SET pid = ?2, started = ?3, scratch = ?4, since = ?5",
            (study, me.pid, started, scratch, now()),
        )?;
        tx.commit()?;
        Ok(Claim::Claimed { left })
    }

    /// Lets go of a study `me` runs (claimed with [`Store::claim_study`]).
    pub fn release_study(&self, study: StudyId, me: Runner) -> Result<()> {
        self.conn.execute(
            "DELETE FROM runners WHERE study_id = ?1 AND pid = ?2 AND started = ?3",
            (study, me.pid, me.started as i64),
        )?;
        Ok(())
    }

    /// The process recorded as running `study`, if any (it may have died since).
    pub fn runner(&self, study: StudyId) -> Result<Option<Runner>> {
        Ok(self
            .conn
            .query_row("SELECT pid, started FROM runners WHERE study_id = ?1", [study], |row| {
                Ok(Runner {
                    pid: row.get(0)?,
                    started: row.get::<_, i64>(1)? as u64,
                })
            })
            .optional()?)
    }

    /// Deletes a study with its cells, steps, runs and everything they measured.
    pub fn delete_study(&self, study: StudyId) -> Result<()> {
        if self.conn.execute("DELETE FROM studies WHERE id = ?1", [study])? == 0 {
            return Err(StoreError::NoStudy(study));
        }
        Ok(())
    }
}

/// One engine run of a run: its summary row, the full document, and its operations, histograms,
/// series and CPU split.
fn insert_result(tx: &Connection, run_id: RunId, ordinal: usize, phase: &str, r: &RunResult) -> Result<()> {
    let json = to_json(r, &format!("the {phase:?} result"))?;
    let status = serde_text(&r.status)?;
    let first_error = r
        .first_error
        .as_ref()
        .map(|e| format!("{}: {}", e.error.op.name(), e.error.message));
    let t = &r.totals;
    let result_id = insert(
        tx,
        "results",
        "run_id, phase, ordinal, status, stopped_by, first_error, started_at, seed, duration_s, ramp_s, total_ops, \
         total_errors, bytes_read, bytes_written, ops_per_sec, transactions_per_sec, read_mib_per_sec, \
         write_mib_per_sec, json",
        &[
            &run_id,
            &phase,
            &ordinal,
            &status,
            &r.stopped_by.to_string(),
            &first_error,
            &r.started_at,
            // Seeds use all 64 bits, past SQLite's signed integers: kept as decimal text.
            &r.seed.to_string(),
            &r.duration.as_secs_f64(),
            &r.ramp.as_secs_f64(),
            &t.ops,
            &t.errors,
            &t.bytes_read,
            &t.bytes_written,
            &t.ops_per_sec,
            &t.transactions_per_sec,
            &t.read_mib_per_sec,
            &t.write_mib_per_sec,
            &json,
        ],
    )?;
    for op in &r.ops {
        insert_op(tx, result_id, op)?;
    }
    for (seq, second) in r.series.iter().enumerate() {
        insert_second(tx, result_id, seq, second)?;
    }
    let cpu = cpu_values(&r.cpu)?;
    let mut values: Vec<&dyn ToSql> = vec![&result_id];
    values.extend(cpu.iter().map(|v| v as &dyn ToSql));
    insert(tx, "cpu", &format!("result_id, {}", CPU_COLUMNS), &values)?;
    Ok(())
}

fn insert_op(tx: &Connection, result_id: i64, op: &OpResult) -> Result<()> {
    let l = &op.latency;
    let name = op.op.name();
    let op_id = insert(
        tx,
        "ops",
        "result_id, op, label, count, errors, skipped, bytes, transactions, ops_per_sec, mib_per_sec, min_us, mean_us, \
         p50_us, p90_us, p95_us, p99_us, p99_9_us, p99_99_us, max_us",
        &[
            &result_id,
            &name,
            &op.label,
            &op.count,
            &op.errors,
            &op.skipped,
            &op.bytes,
            &op.transactions,
            &op.ops_per_sec,
            &op.mib_per_sec,
            &l.min_us,
            &l.mean_us,
            &l.p50_us,
            &l.p90_us,
            &l.p95_us,
            &l.p99_us,
            &l.p99_9_us,
            &l.p99_99_us,
            &l.max_us,
        ],
    )?;
    for (upper_ns, count) in &op.histogram {
        insert(
            tx,
            "histograms",
            "op_id, result_id, op, label, upper_ns, count",
            &[&op_id, &result_id, &name, &op.label, upper_ns, count],
        )?;
    }
    Ok(())
}

fn insert_second(tx: &Connection, result_id: i64, seq: usize, s: &Second) -> Result<()> {
    let by_op: BTreeMap<&str, u64> = s.by_op.iter().map(|(op, n)| (op.name(), *n)).collect();
    let by_op = to_json(&by_op, "series.by_op")?;
    let l = s.latency.as_ref();
    insert(
        tx,
        "series",
        "result_id, seq, t, ramp, ops, bytes_read, bytes_written, max_latency_us, timed_ops, mean_us, p50_us, \
         p90_us, p95_us, p99_us, max_us, by_op",
        &[
            &result_id,
            &seq,
            &s.t,
            &s.ramp,
            &s.ops,
            &s.bytes_read,
            &s.bytes_written,
            &s.max_latency_us,
            &l.map(|l| l.ops),
            &l.map(|l| l.mean_us),
            &l.map(|l| l.p50_us),
            &l.map(|l| l.p90_us),
            &l.map(|l| l.p95_us),
            &l.map(|l| l.p99_us),
            &l.map(|l| l.max_us),
            &by_op,
        ],
    )?;
    Ok(())
}

/// Inserts one row of `values` into `columns` of `table` and returns its rowid.
fn insert(conn: &Connection, table: &str, columns: &str, values: &[&dyn ToSql]) -> Result<i64> {
    let marks = vec!["?"; values.len()].join(", ");
    let sql = format!("INSERT INTO {table} ({columns}) VALUES ({marks})");
    conn.prepare_cached(&sql)?.execute(values)?;
    Ok(conn.last_insert_rowid())
}

/// Sets a cell's status from its runs: hung when a run (a warm-up too) hung, failed when one
/// failed, with that run's error as the reason; done when its planned measured runs are all in;
/// pending otherwise. An unsupported cell stays so.
fn settle_cell(conn: &Connection, cell: CellId) -> Result<()> {
    let worst = |status: RunStatus| -> Result<Option<Option<String>>> {
        Ok(conn
            .query_row(
                "SELECT error FROM runs WHERE cell_id = ?1 AND status = ?2 ORDER BY warmup, repeat, id LIMIT 1",
                (cell, status.as_str()),
                |row| row.get(0),
            )
            .optional()?)
    };
    let (measured, planned): (u32, u32) = conn.query_row(
        "SELECT (SELECT count(*) FROM runs WHERE cell_id = ?1 AND warmup = 0), planned_repeats \
         FROM cells WHERE id = ?1",
        [cell],
        |row| Ok((row.get(0)?, row.get(1)?)),
    )?;
    let (status, reason) = if let Some(reason) = worst(RunStatus::Hung)? {
        (CellStatus::Hung, reason)
    } else if let Some(reason) = worst(RunStatus::Failed)? {
        (CellStatus::Failed, reason)
    } else if measured >= planned {
        (CellStatus::Done, None)
    } else {
        (CellStatus::Pending, None)
    };
    conn.execute(
        "UPDATE cells SET status = ?2, reason = ?3 WHERE id = ?1 AND status <> 'unsupported'",
        (cell, status.as_str(), reason),
    )?;
    Ok(())
}

fn require_study(conn: &Connection, study: StudyId) -> Result<()> {
    let found = conn
        .query_row("SELECT 1 FROM studies WHERE id = ?1", [study], |_| Ok(()))
        .optional()?;
    found.ok_or(StoreError::NoStudy(study))
}

fn require_cell(conn: &Connection, cell: CellId) -> Result<()> {
    let found = conn
        .query_row("SELECT 1 FROM cells WHERE id = ?1", [cell], |_| Ok(()))
        .optional()?;
    found.ok_or(StoreError::NoCell(cell))
}

fn measured_run_exists(conn: &Connection, cell: CellId, repeat: u32) -> Result<bool> {
    let found = conn
        .query_row(
            "SELECT 1 FROM runs WHERE cell_id = ?1 AND repeat = ?2 AND warmup = 0",
            (cell, repeat),
            |_| Ok(()),
        )
        .optional()?;
    Ok(found.is_some())
}

/// The name serde gives a unit variant (an engine status: "ok", "failed").
fn serde_text<T: serde::Serialize>(value: &T) -> Result<String> {
    match serde_json::to_value(value).map_err(StoreError::json("a status"))? {
        serde_json::Value::String(s) => Ok(s),
        other => Ok(other.to_string()),
    }
}

fn now() -> String {
    rfc3339(SystemTime::now())
}
