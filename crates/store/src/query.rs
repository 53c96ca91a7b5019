//! Reading: what `fslab study list/show`, resume and the reports need.

use crate::columns::{cpu_from_row, duration, from_json, real, status, CPU_COLUMNS, CPU_COLUMN_COUNT};
use crate::error::Result;
use crate::model::{
    CellId, CellRow, CellSpec, CellStatus, Metric, RunId, RunRow, RunStatus, SeriesPoint, StepRecord, StepRow, StudyId,
    StudyRow, StudyStatus, StudySummary,
};
use crate::store::Store;
use fslab_engine::result::SecondLatency;
use fslab_engine::RunResult;
use rusqlite::OptionalExtension;
use std::collections::HashMap;

const STUDY_COLUMNS: &str = "id, name, file, text, started_at, finished_at, status, testbed, planned_runs, form";

impl Store {
    /// The study `key` names: a numeric id, or a name (the newest study with that name).
    pub fn study(&self, key: &str) -> Result<Option<StudyRow>> {
        if let Ok(id) = key.parse::<StudyId>() {
            if let Some(study) = self.study_where("id = ?1", &id)? {
                return Ok(Some(study));
            }
        }
        self.study_where("name = ?1 ORDER BY id DESC LIMIT 1", &key)
    }

    fn study_where(&self, condition: &str, value: &dyn rusqlite::ToSql) -> Result<Option<StudyRow>> {
        let sql = format!("SELECT {STUDY_COLUMNS} FROM studies WHERE {condition}");
        let raw = self
            .conn
            .query_row(&sql, [value], |row| {
                Ok((
                    StudyRow {
                        id: row.get(0)?,
                        name: row.get(1)?,
                        file: row.get(2)?,
                        text: row.get(3)?,
                        started_at: row.get(4)?,
                        finished_at: row.get(5)?,
                        status: StudyStatus::Running,
                        testbed: serde_json::Value::Null,
                        planned_runs: row.get(8)?,
                        form: row.get(9)?,
                    },
                    row.get::<_, String>(6)?,
                    row.get::<_, String>(7)?,
                ))
            })
            .optional()?;
        let Some((mut study, status_text, testbed)) = raw else {
            return Ok(None);
        };
        study.status = status(&status_text, StudyStatus::from_text, "studies", "status")?;
        study.testbed = from_json(&testbed, "studies.testbed")?;
        Ok(Some(study))
    }

    /// Every study, oldest first, with its progress and troubles counted.
    pub fn list_studies(&self) -> Result<Vec<StudySummary>> {
        let mut stmt = self.conn.prepare(
            "SELECT s.id, s.name, s.started_at, s.status, s.planned_runs, \
                (SELECT count(*) FROM cells c WHERE c.study_id = s.id), \
                (SELECT count(*) FROM runs r JOIN cells c ON c.id = r.cell_id \
                    WHERE c.study_id = s.id AND r.warmup = 0), \
                (SELECT count(*) FROM runs r JOIN cells c ON c.id = r.cell_id \
                    WHERE c.study_id = s.id AND r.warmup = 0 AND r.status = 'ok'), \
                (SELECT count(*) FROM cells c WHERE c.study_id = s.id AND c.status = 'unsupported'), \
                (SELECT count(*) FROM cells c WHERE c.study_id = s.id AND c.status = 'failed'), \
                (SELECT count(*) FROM cells c WHERE c.study_id = s.id AND c.status = 'hung') \
             FROM studies s ORDER BY s.id",
        )?;
        let rows = stmt.query_map([], |row| {
            let summary = StudySummary {
                id: row.get(0)?,
                name: row.get(1)?,
                started_at: row.get(2)?,
                status: StudyStatus::Running,
                planned_runs: row.get(4)?,
                cells: row.get(5)?,
                runs_done: row.get(6)?,
                runs_ok: row.get(7)?,
                unsupported_cells: row.get(8)?,
                failed_cells: row.get(9)?,
                hung_cells: row.get(10)?,
            };
            Ok((summary, row.get::<_, String>(3)?))
        })?;
        rows.map(|row| {
            let (mut summary, status_text) = row?;
            summary.status = status(&status_text, StudyStatus::from_text, "studies", "status")?;
            Ok(summary)
        })
        .collect()
    }

    /// A study's cells in matrix order.
    pub fn cells(&self, study: StudyId) -> Result<Vec<CellRow>> {
        let mut stmt = self.conn.prepare(
            "SELECT id, study_id, key, ordinal, filesystem, fs_type, mkfs_options, mount_options, scheduler, \
             read_ahead_kb, workload, tool, params, planned_repeats, status, reason, fill_to, label, \
             configuration, axes \
             FROM cells WHERE study_id = ?1 ORDER BY ordinal, id",
        )?;
        let rows = stmt.query_map([study], |row| {
            let cell = CellRow {
                id: row.get(0)?,
                study_id: row.get(1)?,
                spec: CellSpec {
                    key: row.get(2)?,
                    ordinal: row.get(3)?,
                    filesystem: row.get(4)?,
                    fs_type: row.get(5)?,
                    mkfs_options: row.get(6)?,
                    mount_options: row.get(7)?,
                    scheduler: row.get(8)?,
                    read_ahead_kb: row.get(9)?,
                    fill_to: row.get(16)?,
                    workload: row.get(10)?,
                    tool: row.get(11)?,
                    params: Default::default(),
                    planned_repeats: row.get(13)?,
                    label: row.get(17)?,
                    configuration: row.get(18)?,
                    axes: Vec::new(),
                },
                status: CellStatus::Pending,
                reason: row.get(15)?,
            };
            Ok((
                cell,
                row.get::<_, String>(12)?,
                row.get::<_, String>(14)?,
                row.get::<_, String>(19)?,
            ))
        })?;
        rows.map(|row| {
            let (mut cell, params, status_text, axes) = row?;
            cell.spec.params = from_json(&params, "cells.params")?;
            cell.spec.axes = from_json(&axes, "cells.axes")?;
            cell.status = status(&status_text, CellStatus::from_text, "cells", "status")?;
            Ok(cell)
        })
        .collect()
    }

    /// The repeat numbers of a cell's measured runs already recorded (ok, failed or hung), in
    /// order: what a resumed study does not run again.
    pub fn runs_done(&self, cell: CellId) -> Result<Vec<u32>> {
        let mut stmt = self
            .conn
            .prepare("SELECT repeat FROM runs WHERE cell_id = ?1 AND warmup = 0 ORDER BY repeat")?;
        let repeats = stmt
            .query_map([cell], |row| row.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(repeats)
    }

    /// Every run of a study, warm-ups included (marked), in matrix order then by repeat, with
    /// their metrics and the CPU split of their "run" phase (or first phase).
    pub fn runs(&self, study: StudyId) -> Result<Vec<RunRow>> {
        self.runs_where(Scope::Study(study))
    }

    /// Every run of one cell, warm-ups included (marked), by repeat, as [`Store::runs`] gives
    /// them.
    pub fn runs_of_cell(&self, cell: CellId) -> Result<Vec<RunRow>> {
        self.runs_where(Scope::Cell(cell))
    }

    fn runs_where(&self, scope: Scope) -> Result<Vec<RunRow>> {
        let (condition, id) = scope.condition();
        let mut metrics = self.metrics_where(scope)?;
        let sql = format!(
            "SELECT r.id, r.cell_id, r.repeat, r.warmup, r.status, r.error, r.started_at, r.wall_s, r.figures, \
                r.environment, cpu.result_id, {cpu} \
             FROM runs r JOIN cells c ON c.id = r.cell_id \
             LEFT JOIN cpu ON cpu.result_id = \
                (SELECT id FROM results WHERE run_id = r.id ORDER BY phase <> 'run', ordinal LIMIT 1) \
             WHERE {condition} ORDER BY c.ordinal, r.cell_id, r.repeat, r.warmup DESC, r.id",
            cpu = qualified("cpu", CPU_COLUMNS)
        );
        let mut stmt = self.conn.prepare(&sql)?;
        debug_assert_eq!(stmt.column_count(), 11 + CPU_COLUMN_COUNT);
        let rows = stmt.query_map([id], |row| {
            let has_cpu = row.get::<_, Option<i64>>(10)?.is_some();
            let cpu = if has_cpu { Some(cpu_from_row(row, 11)?) } else { None };
            let raw = RawRun {
                id: row.get(0)?,
                cell_id: row.get(1)?,
                repeat: row.get(2)?,
                warmup: row.get(3)?,
                status: row.get(4)?,
                error: row.get(5)?,
                started_at: row.get(6)?,
                wall_s: row.get(7)?,
                figures: row.get(8)?,
                environment: row.get(9)?,
                cpu,
            };
            Ok(raw)
        })?;
        rows.map(|raw| {
            let raw = raw?;
            let metrics = metrics.remove(&raw.id).unwrap_or_default();
            raw.into_row(metrics)
        })
        .collect()
    }

    /// The metrics of every run in `scope`, by run.
    fn metrics_where(&self, scope: Scope) -> Result<HashMap<RunId, Vec<Metric>>> {
        let (condition, id) = scope.condition();
        let mut stmt = self.conn.prepare(&format!(
            "SELECT m.run_id, m.name, m.value, m.unit, m.higher_is_better, m.headline \
             FROM metrics m JOIN runs r ON r.id = m.run_id JOIN cells c ON c.id = r.cell_id \
             WHERE {condition} ORDER BY m.run_id, m.rowid"
        ))?;
        let mut by_run: HashMap<RunId, Vec<Metric>> = HashMap::new();
        let rows = stmt.query_map([id], |row| {
            let metric = Metric {
                name: row.get(1)?,
                value: real(row, 2)?,
                unit: row.get(3)?,
                higher_is_better: row.get(4)?,
                headline: row.get(5)?,
            };
            Ok((row.get::<_, RunId>(0)?, metric))
        })?;
        for row in rows {
            let (run, metric) = row?;
            by_run.entry(run).or_default().push(metric);
        }
        Ok(by_run)
    }

    /// Every step of a study's cells, in matrix order then in the order they were recorded.
    pub fn steps(&self, study: StudyId) -> Result<Vec<StepRow>> {
        let sql = format!(
            "SELECT s.id, s.cell_id, s.repeat, s.name, s.duration_s, s.ok, s.detail, {cpu} \
             FROM steps s JOIN cells c ON c.id = s.cell_id WHERE c.study_id = ?1 ORDER BY c.ordinal, c.id, s.id",
            cpu = qualified("s", CPU_COLUMNS)
        );
        let mut stmt = self.conn.prepare(&sql)?;
        let rows = stmt.query_map([study], |row| {
            let step = StepRecord {
                name: row.get(3)?,
                repeat: row.get(2)?,
                duration: Default::default(),
                cpu: cpu_from_row(row, 7)?,
                ok: row.get(5)?,
                detail: row.get(6)?,
            };
            Ok((
                StepRow {
                    id: row.get(0)?,
                    cell_id: row.get(1)?,
                    step,
                },
                row.get::<_, f64>(4)?,
            ))
        })?;
        rows.map(|row| {
            let (mut step, secs) = row?;
            step.step.duration = duration(secs, "steps", "duration_s")?;
            Ok(step)
        })
        .collect()
    }

    /// The engine results of a run, by phase, in the order they were recorded; empty for a run
    /// without results (a hung one) or an unknown run.
    pub fn result(&self, run: RunId) -> Result<Vec<(String, RunResult)>> {
        let mut stmt = self
            .conn
            .prepare("SELECT phase, json FROM results WHERE run_id = ?1 ORDER BY ordinal")?;
        let rows = stmt.query_map([run], |row| Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?)))?;
        rows.map(|row| {
            let (phase, json) = row?;
            let result = from_json(&json, &format!("results.json of run {run}, phase {phase:?}"))?;
            Ok((phase, result))
        })
        .collect()
    }

    /// The per-second series of one phase of a run ("run" for most tools), ramp seconds included
    /// and marked.
    pub fn series(&self, run: RunId, phase: &str) -> Result<Vec<SeriesPoint>> {
        let mut stmt = self.conn.prepare(
            "SELECT s.t, s.ramp, s.ops, s.bytes_read, s.bytes_written, s.max_latency_us, s.by_op, s.timed_ops, \
                s.mean_us, s.p50_us, s.p90_us, s.p95_us, s.p99_us, s.max_us \
             FROM series s JOIN results res ON res.id = s.result_id \
             WHERE res.run_id = ?1 AND res.phase = ?2 ORDER BY s.seq",
        )?;
        let rows = stmt.query_map((run, phase), |row| {
            let point = SeriesPoint {
                t: row.get(0)?,
                ramp: row.get(1)?,
                ops: row.get(2)?,
                bytes_read: row.get(3)?,
                bytes_written: row.get(4)?,
                max_latency_us: row.get(5)?,
                latency: second_latency(row, 7)?,
                by_op: Default::default(),
            };
            Ok((point, row.get::<_, String>(6)?))
        })?;
        rows.map(|row| {
            let (mut point, by_op) = row?;
            point.by_op = from_json(&by_op, "series.by_op")?;
            Ok(point)
        })
        .collect()
    }
}

/// Whose runs a query reads: a study's or one cell's.
#[derive(Clone, Copy)]
enum Scope {
    Study(StudyId),
    Cell(CellId),
}

impl Scope {
    /// The condition on the cells table `c` and its parameter.
    fn condition(self) -> (&'static str, i64) {
        match self {
            Scope::Study(id) => ("c.study_id = ?1", id),
            Scope::Cell(id) => ("c.id = ?1", id),
        }
    }
}

/// A run row as read, before its text columns are parsed.
struct RawRun {
    id: RunId,
    cell_id: CellId,
    repeat: u32,
    warmup: bool,
    status: String,
    error: Option<String>,
    started_at: String,
    wall_s: f64,
    figures: Option<String>,
    environment: String,
    cpu: Option<fslab_engine::cpu::CpuUsage>,
}

impl RawRun {
    fn into_row(self, metrics: Vec<Metric>) -> Result<RunRow> {
        Ok(RunRow {
            id: self.id,
            cell_id: self.cell_id,
            repeat: self.repeat,
            warmup: self.warmup,
            status: status(&self.status, RunStatus::from_text, "runs", "status")?,
            error: self.error,
            started_at: self.started_at,
            wall: duration(self.wall_s, "runs", "wall_s")?,
            metrics,
            cpu: self.cpu,
            figures: self.figures.map(|c| from_json(&c, "runs.figures")).transpose()?,
            environment: from_json(&self.environment, "runs.environment")?,
        })
    }
}

/// A second's latency from its columns starting at `at` (timed_ops first); none when the second
/// timed nothing.
fn second_latency(row: &rusqlite::Row, at: usize) -> rusqlite::Result<Option<SecondLatency>> {
    let Some(ops) = row.get::<_, Option<u64>>(at)? else {
        return Ok(None);
    };
    Ok(Some(SecondLatency {
        ops,
        mean_us: real(row, at + 1)?,
        p50_us: real(row, at + 2)?,
        p90_us: real(row, at + 3)?,
        p95_us: real(row, at + 4)?,
        p99_us: real(row, at + 5)?,
        max_us: real(row, at + 6)?,
    }))
}

/// `columns` (comma-separated) each prefixed with `table.`.
fn qualified(table: &str, columns: &str) -> String {
    columns
        .split(',')
        .map(|c| format!("{table}.{}", c.trim()))
        .collect::<Vec<_>>()
        .join(", ")
}
