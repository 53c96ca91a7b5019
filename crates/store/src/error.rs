//! The store's errors. Each names the database file or the record it is about, so that the CLI
//! can print it as it is.

use crate::model::{CellId, StudyId};
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot create the directory {} for the results store: {source}", path.display())]
    CreateDir { path: PathBuf, source: std::io::Error },

    #[error("cannot open the results store {}: {source}", path.display())]
    Open { path: PathBuf, source: rusqlite::Error },

    #[error(
        "{}: the results store has schema version {found}, but this fslab knows versions up to {supported}; \
         use a newer fslab, or another database with --db",
        path.display()
    )]
    TooNew { path: PathBuf, found: u32, supported: u32 },

    #[error(
        "{}: the file is empty, not a results store; remove it to start a new store there, \
         or pass another --db",
        path.display()
    )]
    Empty { path: PathBuf },

    #[error(
        "{}: the results store is damaged (SQLite's quick_check: {detail}); nothing was written to it. \
         Keep a copy, then recover what it holds with `sqlite3 FILE .recover`, or use another --db",
        path.display()
    )]
    Corrupt { path: PathBuf, detail: String },

    #[error(
        "{}: the results store has schema version {found} and must be brought to version {wanted} \
         before it can be read, which needs writing to it: {source}",
        path.display()
    )]
    ReadOnlyOld {
        path: PathBuf,
        found: u32,
        wanted: u32,
        source: Box<StoreError>,
    },

    #[error("{}: migrating the results store to schema version {version} failed: {source}", path.display())]
    Migration {
        path: PathBuf,
        version: u32,
        source: rusqlite::Error,
    },

    #[error(
        "{}: SQLite cannot use write-ahead logging here (journal mode stays {mode:?}); \
         keep the results store on a local filesystem",
        path.display()
    )]
    NoWal { path: PathBuf, mode: String },

    #[error("no place for the results store: none of FSLAB_DB, XDG_DATA_HOME and HOME is set; pass --db FILE")]
    NoDefaultPath,

    #[error("results store: {0}")]
    Sqlite(#[from] rusqlite::Error),

    #[error("results store: the JSON of {what}: {source}")]
    Json { what: String, source: serde_json::Error },

    #[error("the results store has no study with id {0}")]
    NoStudy(StudyId),

    #[error("the results store has no cell with id {0}")]
    NoCell(CellId),

    #[error("cell {cell} already has a measured run for repeat {repeat}; a run is recorded once")]
    RunExists { cell: CellId, repeat: u32 },

    #[error("results store: {what} = {value} is past the largest integer SQLite holds (2^63 - 1)")]
    TooLarge { what: &'static str, value: u64 },

    #[error("{0:?} is not a study status: expected running, complete or interrupted")]
    StudyStatus(String),

    #[error("results store: {table}.{column} holds {value:?}, which this fslab does not understand")]
    BadValue {
        table: &'static str,
        column: &'static str,
        value: String,
    },
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

impl StoreError {
    /// A JSON (de)serialization error about `what` (a table's column, a record).
    pub(crate) fn json(what: impl Into<String>) -> impl FnOnce(serde_json::Error) -> StoreError {
        let what = what.into();
        move |source| StoreError::Json { what, source }
    }
}
