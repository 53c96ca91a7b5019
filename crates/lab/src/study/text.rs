//! The study file as written: the forms its TOML is read into before anything is checked (the
//! `Raw*` structs, one for each table), reading them from the text, and pointing an error at its
//! line and column. validate.rs turns the raw forms into a [`Study`](super::Study).

use super::{Fresh, StudyError};
use fslab_engine::workload::{locate, PathSeg};
use fslab_engine::{Bytes, Span};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Reads the text into its raw form. A TOML error, a missing or unknown key and a value of the
/// wrong type say where they are, as `file:line:column`.
pub(super) fn read(text: &str, file: &str) -> Result<RawStudy, StudyError> {
    toml::from_str(text).map_err(|e| match e.span() {
        Some(span) => {
            let before = &text[..span.start.min(text.len())];
            StudyError::At {
                file: file.to_string(),
                line: before.matches('\n').count() + 1,
                column: before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1,
                message: e.message().to_string(),
            }
        }
        None => StudyError::Whole {
            file: file.to_string(),
            message: e.message().to_string(),
        },
    })
}

/// An error about what `path` names in the text (a table, a key, an element of an array): at
/// its line and column when the text has it, else about the whole file.
pub(super) fn at(text: &str, file: &str, path: &[PathSeg], message: String) -> StudyError {
    match locate(text, path) {
        Some((line, column)) => StudyError::At {
            file: file.to_string(),
            line,
            column,
            message,
        },
        None => StudyError::Whole {
            file: file.to_string(),
            message,
        },
    }
}

/// The whole file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawStudy {
    pub(super) name: String,
    #[serde(default)]
    pub(super) description: String,
    /// `3`, or `{ min = 3, max = 10, until_cov = "3%", budget = "20m" }` (read by validate.rs,
    /// which names what is wrong with it).
    #[serde(default)]
    pub(super) repeat: Option<toml::Value>,
    #[serde(default)]
    pub(super) timeout: Option<Span>,
    #[serde(default)]
    pub(super) fresh: Option<Fresh>,
    #[serde(default = "yes")]
    pub(super) drop_caches: bool,
    #[serde(default)]
    pub(super) warmup: bool,
    #[serde(default)]
    pub(super) device: Option<RawDevice>,
    #[serde(default)]
    pub(super) filesystem: Vec<RawFilesystem>,
    #[serde(default)]
    pub(super) workload: Vec<toml::Table>,
    #[serde(default)]
    pub(super) exclude: Vec<toml::Table>,
    #[serde(default)]
    pub(super) fill: Option<RawFill>,
    #[serde(default)]
    pub(super) age: Option<RawAge>,
    #[serde(default)]
    pub(super) quick: Option<RawQuick>,
}

/// `[device]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawDevice {
    #[serde(default, rename = "loop")]
    pub(super) loop_: Option<RawLoop>,
    #[serde(default)]
    pub(super) block: Option<PathBuf>,
    #[serde(default)]
    pub(super) destroy: Option<PathBuf>,
    /// An existing directory on a filesystem already mounted (a shared one): the lab makes,
    /// formats and mounts nothing there.
    #[serde(default)]
    pub(super) dir: Option<PathBuf>,
    #[serde(default)]
    pub(super) scheduler: Option<OneOrMany<String>>,
    #[serde(default)]
    pub(super) read_ahead_kb: Option<OneOrMany<u64>>,
    /// The scheduler's tunables, `{ front_merges = 0, write_expire = 500 }` (checked in
    /// validate.rs).
    #[serde(default)]
    pub(super) iosched: Option<toml::Table>,
}

/// `[device] loop = { ... }`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLoop {
    pub(super) size: Bytes,
}

/// One `[[filesystem]]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawFilesystem {
    pub(super) name: Option<String>,
    #[serde(rename = "type")]
    pub(super) fs_type: String,
    #[serde(default)]
    pub(super) mkfs: String,
    #[serde(default)]
    pub(super) mount: String,
    #[serde(default)]
    pub(super) fsck: bool,
    #[serde(default)]
    pub(super) scheduler: Option<OneOrMany<String>>,
    #[serde(default)]
    pub(super) warmup: Option<bool>,
    #[serde(default)]
    pub(super) log: Option<RawLog>,
}

/// `[[filesystem]] log = { size = "64m" }` or `{ block = "/dev/sdb2", destroy = "/dev/sdb2" }`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLog {
    #[serde(default)]
    pub(super) size: Option<Bytes>,
    #[serde(default)]
    pub(super) block: Option<PathBuf>,
    #[serde(default)]
    pub(super) destroy: Option<PathBuf>,
}

/// `[fill]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawFill {
    pub(super) to: OneOrMany<String>,
    #[serde(default = "synthetic")]
    pub(super) from: String,
    #[serde(default = "one")]
    pub(super) parallel: u32,
    #[serde(default)]
    pub(super) layout: Vec<u32>,
    #[serde(default)]
    pub(super) seed: Option<u64>,
}

/// `[age]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawAge {
    pub(super) to: String,
    #[serde(default = "churn")]
    pub(super) churn: f64,
    #[serde(default)]
    pub(super) seed: Option<u64>,
    #[serde(default)]
    pub(super) sizes: Option<fslab_engine::workload::SizeDist>,
    #[serde(default)]
    pub(super) delete: Option<String>,
}

/// `[quick]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawQuick {
    #[serde(default = "one")]
    pub(super) repeat: u32,
    #[serde(default)]
    pub(super) time: Option<Span>,
    #[serde(default)]
    pub(super) loop_size: Option<Bytes>,
    #[serde(default)]
    pub(super) fill_to: Option<String>,
    #[serde(default)]
    pub(super) workload: BTreeMap<String, toml::Table>,
}

/// A setting written as one value or as a list of them.
#[derive(Deserialize)]
#[serde(untagged)]
pub(super) enum OneOrMany<T> {
    One(T),
    Many(Vec<T>),
}

impl<T> OneOrMany<T> {
    pub(super) fn into_vec(self) -> Vec<T> {
        match self {
            OneOrMany::One(t) => vec![t],
            OneOrMany::Many(v) => v,
        }
    }
}

fn one() -> u32 {
    1
}
fn yes() -> bool {
    true
}
fn churn() -> f64 {
    1.0
}
fn synthetic() -> String {
    "synthetic:kernel-tree".to_string()
}
