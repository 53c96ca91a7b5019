//! What can go wrong in the lab, in terms a user can act on.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum LabError {
    /// The machine cannot do this (a filesystem the kernel lacks, a missing mkfs tool, an option
    /// the kernel rejects): the cell is marked unsupported with this reason and the study goes on.
    #[error("{what}: {reason}")]
    Unsupported { what: String, reason: String },
    /// fslab will not touch this device, whatever the flags.
    #[error("refusing {device}: {reason}")]
    Refused { device: PathBuf, reason: String },
    /// An external tool failed; `output` is what it printed, `kernel` the last kernel log line.
    #[error("{command} failed ({status}): {output}{}", kernel.as_deref().map(|k| format!(" [kernel: {k}]")).unwrap_or_default())]
    Tool {
        command: String,
        status: String,
        output: String,
        kernel: Option<String>,
    },
    /// A program fslab needs is not installed.
    #[error("{tool} is not installed: {remedy}")]
    Missing { tool: String, remedy: String },
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
    /// A study that needs root, and why (`lifecycle::needs_root`).
    #[error("{0}, which needs root: run it with sudo")]
    NotRoot(String),
    /// A study file that cannot be used (`file:line:column: what is wrong`).
    #[error(transparent)]
    Study(#[from] crate::study::StudyError),
    /// A cell's workload that its tool refuses, found before anything is formatted.
    #[error("workload `{workload}` ({cell}): {error}")]
    Workload {
        workload: String,
        cell: String,
        error: fslab_classic::Error,
    },
    /// Every cell of the study lacks something on this machine (a filesystem, a tool's file).
    #[error("{0}")]
    NothingRuns(String),
    /// No study of that id or name in the store.
    #[error("{0}")]
    NoStudy(String),
    /// Another live process runs this study.
    #[error("study {study} is being run by pid {pid}; wait for it to end, or stop it (kill {pid}) and resume")]
    Busy { study: i64, pid: u32 },
    #[error(transparent)]
    Store(#[from] fslab_store::StoreError),
}

impl LabError {
    pub fn io(context: impl Into<String>, source: std::io::Error) -> LabError {
        LabError::Io {
            context: context.into(),
            source,
        }
    }

    /// Whether the fault is the user's input (a study, a workload, a device they may not name)
    /// rather than the machine's.
    pub fn is_input(&self) -> bool {
        match self {
            LabError::Refused { .. } | LabError::Study(_) | LabError::NoStudy(_) => true,
            LabError::Workload { error, .. } => error.kind == fslab_classic::ErrorKind::Input,
            _ => false,
        }
    }
}
