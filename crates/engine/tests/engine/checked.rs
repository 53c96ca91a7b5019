//! `data = "checked"`, sysbench's `--validate`: every block written carries its CRC-32 and its
//! offset, every block read is checked. Threads racing on a few blocks must never see half of a
//! write; a changed byte or a moved block must fail the read, naming the file and the offset.

use crate::common::{counts, data_files, run_ok, try_run, workload};
use fslab_engine::io::checked::Mismatch;
use fslab_engine::result::Cause;
use fslab_engine::workload::OpKind;
use fslab_engine::Workload;
use fslab_testkit::tempdir;
use std::path::Path;

/// One file of 16 blocks of 4 KiB, read and written at random by four threads.
fn racing(engine: &str) -> String {
    format!(
        r#"name = "checked"
seed = 5
stop = {{ ops = 40000 }}

[[fileset]]
name = "fs"
files = 1
dirs = 0
size = "64k"
setup_bs = "4k"
data = "checked"

[[group]]
name = "g"
threads = 4
fileset = "fs"
data = "checked"
{engine}

[[group.op]]
op = "read"
bs = "4k"

[[group.op]]
op = "write"
bs = "4k"
"#
    )
}

/// Every 4 KiB block of `path`: its bytes' CRC-32, then its own offset, little-endian.
fn assert_blocks_check(path: &Path) {
    let data = std::fs::read(path).unwrap();
    assert_eq!(data.len() % 4096, 0);
    for (k, block) in data.chunks(4096).enumerate() {
        let crc = crc32fast::hash(&block[..4084]).to_le_bytes();
        assert_eq!(block[4084..4088], crc, "{} block {k}: checksum", path.display());
        assert_eq!(
            block[4088..],
            ((k * 4096) as u64).to_le_bytes(),
            "{} block {k}: offset",
            path.display()
        );
    }
}

#[test]
fn threads_racing_on_few_blocks_read_only_whole_blocks_with_every_engine() {
    for engine in [
        "engine = \"sync\"",
        "engine = \"seek\"",
        "engine = \"mmap\"",
        "engine = \"io_uring\"\niodepth = 8",
        "engine = \"libaio\"\niodepth = 8",
    ] {
        let w = workload(&racing(engine));
        let dir = tempdir();
        let r = run_ok(&w, dir.path());
        let c = counts(&r);
        let done: u64 = c.iter().map(|o| o.1).sum();
        assert_eq!(done, 40000, "{engine}: {c:?}");
        assert!(c.iter().all(|o| o.1 > 10000 && o.2 == 0), "{engine}: {c:?}");
        let files = data_files(dir.path());
        assert_eq!(files.len(), 1);
        assert_blocks_check(&files[0].0);
    }
}

const LAID_OUT: &str = r#"name = "layout"
stop = { ops = 1 }

[[fileset]]
name = "fs"
files = 1
dirs = 0
size = "16k"
setup_bs = "4k"
data = "checked"
reuse = true

[[group]]
name = "g"
fileset = "fs"

[[group.op]]
op = "stat"
"#;

/// Reads the file of [`LAID_OUT`] whole, checking its blocks: the first error's message, and
/// the mismatch its cause names, in `fs/f0`.
fn read_back(dir: &Path) -> Option<(String, Mismatch)> {
    let text = LAID_OUT
        .replace("op = \"stat\"", "op = \"readall\"\nbs = \"4k\"")
        .replace("fileset = \"fs\"\n", "fileset = \"fs\"\ndata = \"checked\"\n");
    let r = try_run(&workload(&text), dir).unwrap();
    assert!(counts(&r).iter().any(|o| o.0 == OpKind::ReadAll));
    r.first_error.map(|e| e.error).map(|e| match e.cause {
        Some(Cause::Mismatch { file, mismatch }) if file == "fs/f0" => (e.message, mismatch),
        other => panic!("a mismatch in fs/f0, not {other:?}: {}", e.message),
    })
}

#[test]
fn a_changed_byte_or_a_moved_block_fails_the_read_where_it_is() {
    let dir = tempdir();
    run_ok(&workload(LAID_OUT), dir.path());
    let path = data_files(dir.path())[0].0.clone();
    assert_blocks_check(&path);
    assert_eq!(read_back(dir.path()), None);
    let good = std::fs::read(&path).unwrap();

    let mut changed = good.clone();
    changed[5000] ^= 0x20;
    std::fs::write(&path, &changed).unwrap();
    let (e, found) = read_back(dir.path()).expect("a changed byte fails");
    assert!(
        e.contains("fs/f0: checksum mismatch in the block of 4096 bytes at offset 4096"),
        "{e}"
    );
    assert!(
        matches!(found, Mismatch::Checksum { len: 4096, offset: 4096, computed, stored } if computed != stored),
        "{found:?}"
    );

    // Blocks 1 and 2 swapped: each checks, but says it was written elsewhere.
    let mut moved = good.clone();
    moved[4096..8192].copy_from_slice(&good[8192..12288]);
    moved[8192..12288].copy_from_slice(&good[4096..8192]);
    std::fs::write(&path, &moved).unwrap();
    let (e, found) = read_back(dir.path()).expect("a moved block fails");
    assert!(
        e.contains("offset mismatch in the block of 4096 bytes at offset 4096: it says it was written at 8192"),
        "{e}"
    );
    assert_eq!(
        found,
        Mismatch::Offset {
            len: 4096,
            offset: 4096,
            stored: 8192
        }
    );
}

#[test]
fn checked_reads_of_blocks_written_otherwise_are_refused_before_the_run() {
    let refused = |text: String| Workload::from_toml(&text, "w.toml").expect_err("refused").to_string();
    let base = racing("engine = \"sync\"");
    let e = refused(base.replace("setup_bs = \"4k\"\ndata = \"checked\"", "setup_bs = \"4k\""));
    assert!(
        e.starts_with("w.toml:")
            && e.contains("fileset `fs` is written with random data, whose blocks carry no checksums"),
        "{e}"
    );
    let e = refused(base.replace("setup_bs = \"4k\"", "setup_bs = \"8k\""));
    assert!(
        e.contains("read checks blocks of 4k, but fileset `fs` is written in blocks of 8k"),
        "{e}"
    );
    let e = refused(base.replace("op = \"write\"", "op = \"append\""));
    assert!(e.contains("append leaves blocks without checksums"), "{e}");
    let e = refused(format!("processes = true\n{base}"));
    assert!(e.contains("leave out `processes`"), "{e}");
}
