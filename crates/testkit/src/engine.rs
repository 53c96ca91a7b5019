//! Tiny real engine runs, guarded against hangs.

use crate::within;
use fslab_engine::{RunError, RunOptions, RunResult, Workload};
use std::time::Duration;

/// Reads of two 64 KiB files by two threads, stopped at [`TINY_OPS`] operations: a real engine
/// run that ends at once.
pub const TINY_READS: &str = r#"
name = "tiny-reads"
seed = 7

[stop]
ops = 40

[[fileset]]
name = "data"
files = 2
dirs = 0
size = "64k"

[[group]]
name = "readers"
threads = 2
fileset = "data"

[[group.op]]
op = "read"
bs = "4k"
"#;

/// The operations [`TINY_READS`] stops at.
pub const TINY_OPS: u64 = 40;

/// Runs `w` with `opts`; a run that neither ends nor panics within `limit` fails the test rather
/// than hanging it.
pub fn run_within(w: &Workload, opts: RunOptions, limit: Duration) -> Result<RunResult, RunError> {
    let w = w.clone();
    within(limit, "the engine run", move || {
        fslab_engine::run(&w, &opts, &mut |_| {})
    })
}

/// A real result: [`TINY_READS`] run by the engine in a temporary directory, checked to have
/// stopped at [`TINY_OPS`]. A run that takes more than 30 s fails the test.
pub fn tiny_result() -> RunResult {
    let workload = Workload::from_toml(TINY_READS, "tiny.toml").unwrap_or_else(|e| panic!("{e}"));
    let dir = crate::tempdir();
    let opts = RunOptions {
        dir: dir.path().to_path_buf(),
        ..RunOptions::default()
    };
    let result =
        run_within(&workload, opts, Duration::from_secs(30)).unwrap_or_else(|e| panic!("the engine run failed: {e}"));
    assert_eq!(result.totals.ops, TINY_OPS, "the engine did not stop at stop.ops");
    result
}

/// Two threads each writing one of two 256 KiB files, 4 KiB at a time, from empty: what a job's
/// ranks each run in the tests that add up ranks' counts and bytes.
pub const TWO_WRITERS: &str = r#"
name = "writes"
seed = 5

[[fileset]]
name = "data"
files = 2
dirs = 0
size = "256k"
prealloc = false

[[group]]
name = "writers"
threads = 2
fileset = "data"

[[group.op]]
op = "seqwrite"
bs = "4k"
"#;

/// A stonewalled run of two streams: a short one, 16 reads of a 64 KiB file, whose group gets
/// `short_extra` (a `delay = "..."` line, say), and a long one that wraps around its 1 MiB file
/// and never ends by itself: only the stonewall (the short stream's end) stops the run.
pub fn short_and_long(short_extra: &str) -> String {
    format!(
        r#"
name = "stonewall"
seed = 1

[stop]
stonewall = true

[[fileset]]
name = "short"
files = 1
dirs = 0
size = "64k"

[[fileset]]
name = "long"
files = 1
dirs = 0
size = "1m"

[[group]]
name = "short"
fileset = "short"
{short_extra}

[[group.op]]
op = "seqread"
scope = "own"
bs = "4k"

[[group]]
name = "long"
fileset = "long"

[[group.op]]
op = "seqread"
scope = "own"
bs = "4k"
wrap = true
"#
    )
}
