//! What the engine's tests share: loading a workload from TOML text, running it with a guard
//! against hangs, and looking at what it left on disk.

use fslab_engine::result::{OpResult, RunResult};
use fslab_engine::workload::OpKind;
use fslab_engine::{RunError, RunOptions, Workload};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A run that takes longer than this is taken to hang: the test fails instead of waiting forever.
pub const HANG: Duration = Duration::from_secs(10);

/// Parses and validates `text`, failing the test with the loader's message when it is refused.
pub fn workload(text: &str) -> Workload {
    Workload::from_toml(text, "test.toml").unwrap_or_else(|e| panic!("the test workload is refused: {e}\n{text}"))
}

/// Runs `w` in `dir`; a run that does not end within [`HANG`] fails the test.
pub fn try_run(w: &Workload, dir: &Path) -> Result<RunResult, RunError> {
    try_run_opts(
        w,
        RunOptions {
            dir: dir.to_path_buf(),
            ..RunOptions::default()
        },
    )
}

pub fn try_run_opts(w: &Workload, opts: RunOptions) -> Result<RunResult, RunError> {
    fslab_testkit::run_within(w, opts, HANG)
}

/// Runs `w` in `dir` and expects it to succeed without errors.
pub fn run_ok(w: &Workload, dir: &Path) -> RunResult {
    let r = try_run(w, dir).unwrap_or_else(|e| panic!("the run failed: {e}"));
    assert!(
        r.first_error.is_none(),
        "the run met an error: {:?}",
        r.first_error.as_ref().map(|e| &e.error.message)
    );
    r
}

/// The result line of operation `kind`; fails the test when the run did not do it.
pub fn op(r: &RunResult, kind: OpKind) -> &OpResult {
    r.ops
        .iter()
        .find(|o| o.op == kind)
        .unwrap_or_else(|| panic!("the result has no `{kind}` entry; it has {:?}", ops_of(r)))
}

pub fn ops_of(r: &RunResult) -> Vec<(OpKind, u64)> {
    r.ops.iter().map(|o| (o.op, o.count)).collect()
}

/// (count, errors, skipped, bytes, transactions) of every operation type that ran.
pub fn counts(r: &RunResult) -> Vec<(OpKind, u64, u64, u64, u64, u64)> {
    r.ops
        .iter()
        .map(|o| (o.op, o.count, o.errors, o.skipped, o.bytes, o.transactions))
        .collect()
}

/// Data files (`f<digits>`) anywhere beneath `dir`, with their sizes, sorted by path.
pub fn data_files(dir: &Path) -> Vec<(PathBuf, u64)> {
    let mut out = Vec::new();
    walk(dir, &mut out);
    out.sort();
    out
}

fn walk(dir: &Path, out: &mut Vec<(PathBuf, u64)>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries {
        let e = e.expect("a directory entry");
        let meta = std::fs::symlink_metadata(e.path()).expect("metadata");
        let name = e.file_name().to_string_lossy().into_owned();
        if meta.is_dir() {
            walk(&e.path(), out);
        } else if meta.is_file() && is_data_name(&name) {
            out.push((e.path(), meta.len()));
        }
    }
}

fn is_data_name(name: &str) -> bool {
    name.len() > 1 && name.starts_with('f') && name[1..].bytes().all(|b| b.is_ascii_digit())
}

/// Every entry beneath `dir` (relative paths), for checking a directory was left untouched.
pub fn tree(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    fn go(base: &Path, dir: &Path, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for e in entries.flatten() {
            let p = e.path();
            out.push(p.strip_prefix(base).unwrap().display().to_string());
            if std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_dir()) {
                go(base, &p, out);
            }
        }
    }
    go(dir, dir, &mut out);
    out.sort();
    out
}
