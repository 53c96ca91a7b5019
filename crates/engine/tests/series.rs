//! The per-second series and the streams' file handling.

mod common;

use common::{run_ok, tempdir, workload};
use fslab_engine::workload::OpKind;

#[test]
fn the_series_adds_up_to_the_totals() {
    let dir = tempdir();
    let w = workload(
        r#"
name = "series"
[stop]
time = "1s"
[[fileset]]
name = "data"
files = 2
dirs = 0
size = "256k"
[[group]]
name = "readers"
threads = 2
fileset = "data"
[[group.op]]
op = "read"
size = "4k"
"#,
    );
    let r = run_ok(&w, dir.path());
    let series_ops: u64 = r.series.iter().map(|s| s.ops).sum();
    let series_bytes: u64 = r.series.iter().map(|s| s.bytes_read).sum();
    assert_eq!(series_ops, r.totals.ops, "every operation shows in some second");
    assert_eq!(series_bytes, r.totals.bytes_read);
    assert!(
        r.series.last().unwrap().t < 1.2,
        "the last sample is the partial second at the end"
    );
}

#[test]
fn an_own_seqwrite_empties_its_file_before_writing_it() {
    let dir = tempdir();
    let w = workload(
        r#"
name = "seqwrite"
[stop]
ops = 1
[[fileset]]
name = "data"
files = 1
dirs = 0
size = "1m"
[[group]]
name = "writer"
fileset = "data"
[[group.op]]
op = "seqwrite"
bs = "4k"
"#,
    );
    let r = run_ok(&w, dir.path());
    assert_eq!(
        r.ops.iter().find(|o| o.op == OpKind::SeqWrite).map(|o| o.count),
        Some(1)
    );
    let len = std::fs::metadata(dir.path().join("data/f0")).unwrap().len();
    assert_eq!(len, 4096, "the 1 MiB file was emptied, then one block was written");
}

#[test]
fn own_scope_reads_keep_each_thread_on_its_own_file() {
    let dir = tempdir();
    // With this seed file 0 is 4 KiB and file 1 is 1 MiB: a 64 KiB read moves 4 KiB on the first
    // and 64 KiB on the second, so each thread's bytes show which file it read.
    let w = workload(
        r#"
name = "own"
seed = 3
[stop]
ops = 20
[[fileset]]
name = "data"
files = 2
dirs = 0
size = { table = [["4k", 1], ["1m", 1]] }
[[group]]
name = "readers"
threads = 2
fileset = "data"
[[group.op]]
op = "read"
size = "64k"
bs = "4k"
scope = "own"
"#,
    );
    let r = run_ok(&w, dir.path());
    let size = |f: &str| std::fs::metadata(dir.path().join("data").join(f)).unwrap().len();
    assert_eq!(
        (size("f0"), size("f1")),
        (4096, 1 << 20),
        "the seed gives the files different sizes"
    );
    let bytes: Vec<(u32, u64)> = r.threads.iter().map(|t| (t.thread, t.bytes)).collect();
    assert_eq!(bytes, vec![(0, 10 * 4096), (1, 10 * 65536)]);
}
