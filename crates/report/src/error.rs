//! The report's errors: each names the study, configuration or file it is about.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error(transparent)]
    Store(#[from] fslab_store::StoreError),

    #[error("no study `{key}` in {}", db.display())]
    NoStudy { key: String, db: PathBuf },

    #[error("study `{study}` has no configuration `{name}`; its configurations are: {}", available.join(", "))]
    NoConfiguration {
        study: String,
        name: String,
        available: Vec<String>,
    },

    #[error("{0}")]
    Compare(String),

    #[error("drawing the chart `{chart}`: {message}")]
    Chart { chart: String, message: String },

    #[error("writing {}: {source}", path.display())]
    Write { path: PathBuf, source: std::io::Error },

    #[error("writing CSV: {0}")]
    Csv(#[from] csv::Error),
}

pub type Result<T, E = ReportError> = std::result::Result<T, E>;
