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
