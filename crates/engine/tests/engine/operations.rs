//! What each operation does to the files and what the result counts for it.

use crate::common::{counts, data_files, op, run_ok, workload};
use fslab_engine::workload::OpKind;
use fslab_testkit::tempdir;

#[test]
fn create_only_run_leaves_exactly_n_files_within_the_size_range() {
    const N: u64 = 25;
    let dir = tempdir();
    let w = workload(&format!(
        r#"
name = "creates"
seed = 11
stop = {{ ops = {N} }}

[[fileset]]
name = "fs"
files = 0
size = {{ min = "4k", max = "64k" }}

[[group]]
name = "g"
fileset = "fs"

[[group.op]]
op = "create"
"#
    ));
    let r = run_ok(&w, dir.path());
    let files = data_files(dir.path());
    assert_eq!(files.len() as u64, N, "files on disk: {files:?}");
    for (path, size) in &files {
        assert!(
            (4096..=65536).contains(size),
            "{} has {size} bytes, outside [4k, 64k]",
            path.display()
        );
        assert!(
            path.starts_with(dir.path().join("fs")),
            "{} is not in the fileset",
            path.display()
        );
    }
    let on_disk: u64 = files.iter().map(|f| f.1).sum();
    let c = op(&r, OpKind::Create);
    assert_eq!(c.count, N, "creates counted");
    assert_eq!(c.errors, 0);
    assert_eq!(c.bytes, on_disk, "bytes counted vs the sum of the sizes on disk");
    assert_eq!(r.totals.bytes_written, on_disk);
    assert_eq!(r.totals.ops, N);
    assert_eq!(r.ops.len(), 1, "only creates ran: {:?}", counts(&r));
}

#[test]
fn append_grows_a_file_by_exactly_the_write_size_per_op() {
    const K: u64 = 7;
    const S: u64 = 6 * 1024;
    let dir = tempdir();
    let w = workload(&format!(
        r#"
name = "appends"
seed = 3
stop = {{ ops = {K} }}

[[fileset]]
name = "log"
files = 1
dirs = 0
size = "100k"

[[group]]
name = "g"
fileset = "log"

[[group.op]]
op = "append"
size = "{S}"
bs = "4k"
"#
    ));
    let r = run_ok(&w, dir.path());
    let file = dir.path().join("log/f0");
    let len = std::fs::metadata(&file).expect("log/f0 is there").len();
    assert_eq!(
        len,
        100 * 1024 + K * S,
        "size of {} after {K} appends of {S}",
        file.display()
    );
    let a = op(&r, OpKind::Append);
    assert_eq!(a.count, K);
    assert_eq!(a.bytes, K * S);
    // 6k in 4k blocks: two write() calls per append.
    assert_eq!(a.transactions, K * 2);
    assert_eq!(data_files(dir.path()).len(), 1);
}

fn delete_workload(ops: u64) -> fslab_engine::Workload {
    workload(&format!(
        r#"
name = "deletes"
seed = 5
stop = {{ ops = {ops} }}

[[fileset]]
name = "fs"
files = 10
dirs = 3
size = "4k"

[[group]]
name = "g"
fileset = "fs"

[[group.op]]
op = "delete"
"#
    ))
}

#[test]
fn delete_removes_files() {
    let dir = tempdir();
    let r = run_ok(&delete_workload(4), dir.path());
    let d = op(&r, OpKind::Delete);
    assert_eq!((d.count, d.errors, d.skipped), (4, 0, 0));
    let left = data_files(dir.path());
    assert_eq!(left.len(), 6, "files left: {left:?}");
}

#[test]
fn deleting_more_files_than_there_are_skips_the_extra_ones() {
    let dir = tempdir();
    let r = run_ok(&delete_workload(15), dir.path());
    let d = op(&r, OpKind::Delete);
    assert_eq!(d.count, 10, "deletes done");
    assert_eq!(d.errors, 0, "a delete with nothing left is no error");
    assert_eq!(d.skipped, 5, "the 5 deletes beyond the 10 files are skipped");
    assert!(data_files(dir.path()).is_empty());
}

#[test]
fn read_counts_bytes_and_transactions_exactly() {
    const N: u64 = 50;
    let dir = tempdir();
    let w = workload(&format!(
        r#"
name = "reads"
seed = 9
stop = {{ ops = {N} }}

[[fileset]]
name = "data"
files = 1
dirs = 0
size = "1m"

[[group]]
name = "g"
fileset = "data"

[[group.op]]
op = "read"
size = "16k"
bs = "4k"
"#
    ));
    let r = run_ok(&w, dir.path());
    let rd = op(&r, OpKind::Read);
    assert_eq!(rd.count, N);
    assert_eq!(rd.bytes, N * 16384);
    assert_eq!(rd.transactions, N * 4);
    assert_eq!(r.totals.bytes_read, N * 16384);
    assert_eq!(r.totals.bytes_written, 0);
}

#[test]
fn readall_moves_the_whole_file_and_counts_only_whole_blocks() {
    const N: u64 = 3;
    let dir = tempdir();
    // 10000 bytes in 4k blocks: 4096 + 4096 + a short 1808.
    let w = workload(&format!(
        r#"
name = "readall"
seed = 9
stop = {{ ops = {N} }}

[[fileset]]
name = "data"
files = 1
dirs = 0
size = 10000

[[group]]
name = "g"
fileset = "data"

[[group.op]]
op = "readall"
bs = "4k"
"#
    ));
    let r = run_ok(&w, dir.path());
    assert_eq!(std::fs::metadata(dir.path().join("data/f0")).unwrap().len(), 10000);
    let rd = op(&r, OpKind::ReadAll);
    assert_eq!(rd.count, N);
    assert_eq!(rd.bytes, N * 10000, "each readall reads the file's 10000 bytes");
    assert_eq!(
        rd.transactions,
        N * 2,
        "only the two whole 4k blocks of each readall count"
    );
}

#[test]
fn write_never_grows_a_file() {
    let dir = tempdir();
    let w = workload(
        r#"
name = "writes"
seed = 21
stop = { ops = 40 }

[[fileset]]
name = "data"
files = 4
dirs = 2
size = "100k"

[[group]]
name = "g"
fileset = "data"

[[group.op]]
op = "write"
size = "64k"
bs = "4k"
"#,
    );
    let r = run_ok(&w, dir.path());
    let files = data_files(dir.path());
    assert_eq!(files.len(), 4);
    for (path, size) in &files {
        assert_eq!(*size, 100 * 1024, "{} changed size", path.display());
    }
    let wr = op(&r, OpKind::Write);
    assert_eq!(wr.count, 40);
    assert_eq!(wr.bytes, 40 * 64 * 1024);
    assert_eq!(wr.transactions, 40 * 16);
}

#[test]
fn write_larger_than_some_files_never_grows_them() {
    let dir = tempdir();
    let fileset = r#"
[[fileset]]
name = "data"
files = 8
dirs = 0
size = { min = "8k", max = "100k" }
reuse = true
"#;
    // A first run makes the fileset; the second keeps it (reuse) and writes 64k at a time, more
    // than some of the files hold.
    let make = workload(&format!(
        "name = \"make\"\nseed = 2\nstop = {{ ops = 1 }}\n{fileset}\n[[group]]\nname = \"g\"\nfileset = \"data\"\n[[group.op]]\nop = \"stat\"\n"
    ));
    run_ok(&make, dir.path());
    let before = data_files(dir.path());
    assert_eq!(before.len(), 8);
    assert!(
        before.iter().any(|f| f.1 < 64 * 1024),
        "the seed should give some files under 64k: {before:?}"
    );
    let w = workload(&format!(
        "name = \"writes\"\nseed = 2\nstop = {{ ops = 60 }}\n{fileset}\n[[group]]\nname = \"g\"\nfileset = \"data\"\n[[group.op]]\nop = \"write\"\nsize = \"64k\"\nbs = \"4k\"\n"
    ));
    let r = run_ok(&w, dir.path());
    assert!(r.setup[0].reused, "the second run should reuse the fileset");
    assert_eq!(data_files(dir.path()), before, "sizes after writes of 64k");
    assert_eq!(op(&r, OpKind::Write).count, 60);
}

/// Writes a 48 KiB file whole in 12 KiB calls with the group's `data`, and reads it back.
fn written_with(data: &str) -> Vec<u8> {
    let dir = tempdir();
    let w = workload(&format!(
        r#"
name = "data"
seed = 5
stop = {{ ops = 1 }}

[[fileset]]
name = "fs"
files = 1
dirs = 0
size = "48k"
prealloc = false

[[group]]
name = "g"
fileset = "fs"
{data}

[[group.op]]
op = "write"
size = "48k"
bs = "12k"
"#
    ));
    let r = run_ok(&w, dir.path());
    assert_eq!(op(&r, OpKind::Write).bytes, 48 * 1024);
    let files = data_files(dir.path());
    assert_eq!(files.len(), 1, "{files:?}");
    std::fs::read(&files[0].0).expect("read the file back")
}

#[test]
fn a_group_writes_the_data_it_names() {
    let iozone = written_with(r#"data = "iozone""#);
    assert_eq!(iozone.len(), 48 * 1024);
    for (k, page) in iozone.chunks(4096).enumerate() {
        assert_eq!(&page[..8], b"mmmmmmmm", "page {k} starts with IOzone's stamp");
        assert!(page[8..].iter().all(|&b| b == 0), "page {k} is zeros after its stamp");
    }

    let zeros = written_with(r#"data = "zeros""#);
    assert_eq!(zeros.len(), 48 * 1024);
    assert!(zeros.iter().all(|&b| b == 0), "zeros");

    // The default: pseudo-random bytes. The buffer is filled once: each 12 KiB call writes its
    // three pages, none like another.
    let random = written_with("");
    assert_eq!(random.len(), 48 * 1024);
    let zero_bytes = random.iter().filter(|&&b| b == 0).count();
    assert!(
        zero_bytes < random.len() / 64,
        "{zero_bytes} zero bytes of {}",
        random.len()
    );
    let pages: std::collections::HashSet<&[u8]> = random.chunks(4096).collect();
    assert_eq!(pages.len(), 3, "distinct pages in four writes of one 12 KiB buffer");
}

#[test]
fn a_fileset_is_written_with_its_data_and_kept_only_for_the_same_data() {
    let dir = tempdir();
    let text = |data: &str| {
        format!(
            r#"
name = "kept"
seed = 9
stop = {{ ops = 1 }}

[[fileset]]
name = "fs"
files = 3
dirs = 0
size = "20k"
reuse = true
{data}

[[group]]
name = "g"
fileset = "fs"

[[group.op]]
op = "stat"
"#
        )
    };
    let contents = || {
        let mut files = data_files(dir.path());
        files.sort();
        files.iter().map(|f| std::fs::read(&f.0).unwrap()).collect::<Vec<_>>()
    };
    let r = run_ok(&workload(&text(r#"data = "zeros""#)), dir.path());
    assert!(!r.setup[0].reused);
    let zeros = contents();
    assert_eq!(zeros.len(), 3);
    assert!(zeros.iter().all(|f| f.len() == 20 * 1024 && f.iter().all(|&b| b == 0)));
    // The same data: kept.
    let r = run_ok(&workload(&text(r#"data = "zeros""#)), dir.path());
    assert!(r.setup[0].reused, "files of the data asked for are kept");
    // Other data: written again.
    let r = run_ok(&workload(&text("")), dir.path());
    assert!(!r.setup[0].reused, "zeroed files kept for a fileset of random bytes");
    let random = contents();
    assert!(random
        .iter()
        .all(|f| f.iter().filter(|&&b| b == 0).count() < f.len() / 64));
}
