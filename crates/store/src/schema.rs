//! The schema: the connection settings every store uses, and the numbered migrations that build
//! the tables. `PRAGMA user_version` holds the number of migrations applied.
//!
//! A migration, once released, is never edited: a change to the schema is a new migration at the
//! end of [`MIGRATIONS`], so that every older database is brought forward the same way.
//! crates/store/README.md documents every column; keep it in step.

use crate::error::{Result, StoreError};
use rusqlite::{Connection, TransactionBehavior};
use std::path::Path;
use std::time::Duration;

/// How long a writer waits for another (the lab and a report reading at the same time) before
/// giving up with "database is locked".
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Migration `i` brings the schema from version `i` to version `i + 1`.
pub const MIGRATIONS: &[&str] = &[V1, V2, V3, V4];

/// The schema version this fslab writes: the number of migrations.
pub const SCHEMA_VERSION: u32 = MIGRATIONS.len() as u32;

/// Version 4: the process running a study, so that a second `study run` or `resume` of it is
/// refused while the first lives; and where it mounts what it makes (its scratch directory), so
/// that whoever takes over from a process that died clears what it left mounted there.
const V4: &str = r#"
CREATE TABLE runners (
    study_id INTEGER PRIMARY KEY REFERENCES studies(id) ON DELETE CASCADE,
    pid      INTEGER NOT NULL,
    started  INTEGER NOT NULL,
    scratch  TEXT NOT NULL,
    since    TEXT NOT NULL
);
"#;

/// Version 3: a cell's names, made once by the lab and used by every reader (its label, its
/// configuration, the workload options that vary); which metric a run leads with; the tool's own
/// figures under their name, `figures` (was `classic`); the text the original tool printed.
/// Cells of older studies get names made of their columns: every option names their row.
const V3: &str = r#"
ALTER TABLE cells ADD COLUMN configuration TEXT NOT NULL DEFAULT '';
ALTER TABLE cells ADD COLUMN axes TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(axes));
ALTER TABLE cells ADD COLUMN label TEXT NOT NULL DEFAULT '';
UPDATE cells SET
    configuration = filesystem
        || coalesce(' ' || scheduler, '')
        || coalesce(' ra=' || read_ahead_kb || 'K', '')
        || coalesce(' ' || (round(fill_to * 1000) / 10) || '% full', ''),
    axes = (SELECT json_group_array(json_array(key, value)) FROM json_each(cells.params));
UPDATE cells SET label = configuration || ' ' || workload
    || coalesce((SELECT ' ' || group_concat(key || '=' || value, ' ') FROM json_each(cells.params)), '');
ALTER TABLE metrics ADD COLUMN headline INTEGER NOT NULL DEFAULT 0 CHECK (headline IN (0, 1));
UPDATE metrics SET headline = 1 WHERE rowid IN (SELECT min(rowid) FROM metrics GROUP BY run_id);
ALTER TABLE runs RENAME COLUMN classic TO figures;
ALTER TABLE runs ADD COLUMN report TEXT;
"#;

/// Version 2: the level a cell's filesystem is filled to, for studies that compare the empty
/// and the filled filesystem (seed 004).
const V2: &str = r#"
ALTER TABLE cells ADD COLUMN fill_to REAL CHECK (fill_to IS NULL OR (fill_to > 0 AND fill_to <= 1));
"#;

/// Version 1: studies, cells, steps, runs, results, ops, histograms, series, cpu, metrics.
const V1: &str = r#"
CREATE TABLE studies (
    id           INTEGER PRIMARY KEY,
    name         TEXT NOT NULL,
    file         TEXT NOT NULL,
    text         TEXT NOT NULL,
    started_at   TEXT NOT NULL,
    finished_at  TEXT,
    status       TEXT NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'complete', 'interrupted')),
    testbed      TEXT NOT NULL CHECK (json_valid(testbed)),
    planned_runs INTEGER NOT NULL CHECK (planned_runs >= 0),
    form         TEXT NOT NULL DEFAULT 'full' CHECK (form IN ('full', 'quick'))
);
CREATE INDEX studies_by_name ON studies (name);

CREATE TABLE cells (
    id              INTEGER PRIMARY KEY,
    study_id        INTEGER NOT NULL REFERENCES studies (id) ON DELETE CASCADE,
    key             TEXT NOT NULL,
    ordinal         INTEGER NOT NULL,
    filesystem      TEXT NOT NULL,
    fs_type         TEXT NOT NULL,
    mkfs_options    TEXT NOT NULL,
    mount_options   TEXT NOT NULL,
    scheduler       TEXT,
    read_ahead_kb   INTEGER,
    workload        TEXT NOT NULL,
    tool            TEXT NOT NULL,
    params          TEXT NOT NULL CHECK (json_valid(params)),
    planned_repeats INTEGER NOT NULL CHECK (planned_repeats >= 0),
    status          TEXT NOT NULL DEFAULT 'pending'
                    CHECK (status IN ('pending', 'done', 'unsupported', 'failed', 'hung')),
    reason          TEXT,
    UNIQUE (study_id, key)
);

CREATE TABLE steps (
    id                       INTEGER PRIMARY KEY,
    cell_id                  INTEGER NOT NULL REFERENCES cells (id) ON DELETE CASCADE,
    repeat                   INTEGER,
    name                     TEXT NOT NULL,
    duration_s               REAL NOT NULL,
    user_pct                 REAL,
    nice_pct                 REAL,
    system_pct               REAL,
    iowait_pct               REAL,
    irq_pct                  REAL,
    softirq_pct              REAL,
    steal_pct                REAL,
    idle_pct                 REAL,
    process_user_s           REAL,
    process_system_s         REAL,
    voluntary_ctx_switches   INTEGER NOT NULL,
    involuntary_ctx_switches INTEGER NOT NULL,
    ok                       INTEGER NOT NULL CHECK (ok IN (0, 1)),
    detail                   TEXT NOT NULL
);
CREATE INDEX steps_by_cell ON steps (cell_id);

CREATE TABLE runs (
    id          INTEGER PRIMARY KEY,
    cell_id     INTEGER NOT NULL REFERENCES cells (id) ON DELETE CASCADE,
    repeat      INTEGER NOT NULL,
    warmup      INTEGER NOT NULL CHECK (warmup IN (0, 1)),
    status      TEXT NOT NULL CHECK (status IN ('ok', 'failed', 'hung')),
    error       TEXT,
    started_at  TEXT NOT NULL,
    wall_s      REAL NOT NULL,
    classic     TEXT CHECK (classic IS NULL OR json_valid(classic)),
    environment TEXT NOT NULL CHECK (json_valid(environment)),
    recorded_at TEXT NOT NULL
);
CREATE INDEX runs_by_cell ON runs (cell_id);
-- A measured run is recorded once; warm-ups may repeat (a resumed cell warms up again).
CREATE UNIQUE INDEX runs_measured_once ON runs (cell_id, repeat) WHERE warmup = 0;

CREATE TABLE results (
    id                   INTEGER PRIMARY KEY,
    run_id               INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    phase                TEXT NOT NULL,
    ordinal              INTEGER NOT NULL,
    status               TEXT NOT NULL,
    stopped_by           TEXT NOT NULL,
    first_error          TEXT,
    started_at           TEXT NOT NULL,
    seed                 TEXT NOT NULL,
    duration_s           REAL NOT NULL,
    ramp_s               REAL NOT NULL,
    total_ops            INTEGER NOT NULL,
    total_errors         INTEGER NOT NULL,
    bytes_read           INTEGER NOT NULL,
    bytes_written        INTEGER NOT NULL,
    ops_per_sec          REAL,
    transactions_per_sec REAL,
    read_mib_per_sec     REAL,
    write_mib_per_sec    REAL,
    json                 TEXT NOT NULL CHECK (json_valid(json)),
    UNIQUE (run_id, phase)
);

CREATE TABLE ops (
    id           INTEGER PRIMARY KEY,
    result_id    INTEGER NOT NULL REFERENCES results (id) ON DELETE CASCADE,
    op           TEXT NOT NULL,
    label        TEXT,
    count        INTEGER NOT NULL,
    errors       INTEGER NOT NULL,
    skipped      INTEGER NOT NULL,
    bytes        INTEGER NOT NULL,
    transactions INTEGER NOT NULL,
    ops_per_sec  REAL,
    mib_per_sec  REAL,
    min_us       REAL,
    mean_us      REAL,
    p50_us       REAL,
    p90_us       REAL,
    p95_us       REAL,
    p99_us       REAL,
    p99_9_us     REAL,
    p99_99_us    REAL,
    max_us       REAL
);
CREATE INDEX ops_by_result ON ops (result_id);

CREATE TABLE histograms (
    op_id     INTEGER NOT NULL REFERENCES ops (id) ON DELETE CASCADE,
    result_id INTEGER NOT NULL REFERENCES results (id) ON DELETE CASCADE,
    op        TEXT NOT NULL,
    label     TEXT,
    upper_ns  INTEGER NOT NULL,
    count     INTEGER NOT NULL,
    PRIMARY KEY (op_id, upper_ns)
) WITHOUT ROWID;
CREATE INDEX histograms_by_result ON histograms (result_id);

CREATE TABLE series (
    result_id      INTEGER NOT NULL REFERENCES results (id) ON DELETE CASCADE,
    seq            INTEGER NOT NULL,
    t              REAL NOT NULL,
    ramp           INTEGER NOT NULL CHECK (ramp IN (0, 1)),
    ops            INTEGER NOT NULL,
    bytes_read     INTEGER NOT NULL,
    bytes_written  INTEGER NOT NULL,
    max_latency_us REAL,
    timed_ops      INTEGER,
    mean_us        REAL,
    p50_us         REAL,
    p90_us         REAL,
    p95_us         REAL,
    p99_us         REAL,
    max_us         REAL,
    by_op          TEXT NOT NULL CHECK (json_valid(by_op)),
    PRIMARY KEY (result_id, seq)
) WITHOUT ROWID;

CREATE TABLE cpu (
    result_id                INTEGER PRIMARY KEY REFERENCES results (id) ON DELETE CASCADE,
    user_pct                 REAL,
    nice_pct                 REAL,
    system_pct               REAL,
    iowait_pct               REAL,
    irq_pct                  REAL,
    softirq_pct              REAL,
    steal_pct                REAL,
    idle_pct                 REAL,
    process_user_s           REAL,
    process_system_s         REAL,
    voluntary_ctx_switches   INTEGER NOT NULL,
    involuntary_ctx_switches INTEGER NOT NULL
);

CREATE TABLE metrics (
    run_id           INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    name             TEXT NOT NULL,
    value            REAL,
    unit             TEXT NOT NULL,
    higher_is_better INTEGER NOT NULL CHECK (higher_is_better IN (0, 1)),
    PRIMARY KEY (run_id, name)
);
"#;

/// Settings every connection needs: foreign keys (for the cascades), a busy timeout, and
/// write-ahead logging with full sync, so that a committed run survives a crash of fslab or of
/// the machine and readers never block the writer.
pub(crate) fn configure(conn: &Connection, path: &Path) -> Result<()> {
    conn.busy_timeout(BUSY_TIMEOUT)?;
    conn.pragma_update(None, "foreign_keys", true)?;
    let mode: String = conn.pragma_update_and_check(None, "journal_mode", "wal", |row| row.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(StoreError::NoWal {
            path: path.to_path_buf(),
            mode,
        });
    }
    conn.pragma_update(None, "synchronous", "FULL")?;
    Ok(())
}

/// The schema version of the database.
pub(crate) fn version(conn: &Connection) -> rusqlite::Result<u32> {
    conn.pragma_query_value(None, "user_version", |row| row.get(0))
}

/// Applies the migrations the database lacks, each in its own transaction with its version
/// number, and returns how many it applied. A database newer than this fslab is refused
/// untouched. Two processes opening a new database at once are serialized by the immediate
/// transaction: the second sees the first one's version and applies nothing.
pub(crate) fn migrate(conn: &Connection, path: &Path) -> Result<u32> {
    let mut applied = 0;
    loop {
        let tx = rusqlite::Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
        let found = version(&tx)?;
        if found > SCHEMA_VERSION {
            return Err(StoreError::TooNew {
                path: path.to_path_buf(),
                found,
                supported: SCHEMA_VERSION,
            });
        }
        if found == SCHEMA_VERSION {
            return Ok(applied);
        }
        let next = found + 1;
        let failed = |source| StoreError::Migration {
            path: path.to_path_buf(),
            version: next,
            source,
        };
        tx.execute_batch(MIGRATIONS[found as usize]).map_err(failed)?;
        tx.pragma_update(None, "user_version", next).map_err(failed)?;
        tx.commit()?;
        applied += 1;
    }
}
