//! The I/O backends (sync, io_uring, libaio, mmap) and O_DIRECT: the same seeded workload moves the same
//! operations and bytes whichever way the blocks travel.

use crate::common::{counts, data_files, op, run_ok, workload};
use fslab_engine::workload::OpKind;
use fslab_engine::Workload;
use fslab_testkit::{require_root, require_tool, tempdir};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A seeded random mix on two files of 256k; `group_extra` sets the engine and iodepth.
fn mixed(group_extra: &str, ops: &str) -> Workload {
    workload(&mixed_text(group_extra, ops))
}

/// The text of [`mixed`]'s workload, not yet checked.
fn mixed_text(group_extra: &str, ops: &str) -> String {
    format!(
        r#"
name = "mixed"
seed = 1234
stop = {{ ops = 300 }}

[[fileset]]
name = "data"
files = 2
dirs = 0
size = "256k"

[[group]]
name = "g"
fileset = "data"
{group_extra}

{ops}
"#
    )
}

const READ_WRITE: &str = r#"
[[group.op]]
op = "read"
weight = 2
size = "16k"
bs = "4k"

[[group.op]]
op = "write"
weight = 1
size = "8k"
bs = "4k"
"#;

const SINGLE_BLOCK_READS: &str = r#"
[[group.op]]
op = "read"
size = "4k"
bs = "4k"
"#;

fn check_against_sync(engine: &str, ops: &str) {
    let sync = run_ok(&mixed("", ops), tempdir().path());
    let dir = tempdir();
    let other = run_ok(&mixed(engine, ops), dir.path());
    assert_eq!(
        counts(&other),
        counts(&sync),
        "(op, count, errors, skipped, bytes, transactions) with `{engine}` vs sync"
    );
    assert_eq!(sync.totals.ops, 300);
    for (path, size) in data_files(dir.path()) {
        assert_eq!(size, 256 * 1024, "{} changed size with `{engine}`", path.display());
    }
}

#[test]
fn io_uring_at_depth_1_counts_like_sync() {
    check_against_sync("engine = \"io_uring\"", READ_WRITE);
}

#[test]
fn io_uring_at_depth_8_single_block_reads_count_like_sync() {
    check_against_sync("engine = \"io_uring\"\niodepth = 8", SINGLE_BLOCK_READS);
    let r = run_ok(
        &mixed("engine = \"io_uring\"\niodepth = 8", SINGLE_BLOCK_READS),
        tempdir().path(),
    );
    let rd = op(&r, OpKind::Read);
    assert_eq!((rd.count, rd.bytes, rd.transactions), (300, 300 * 4096, 300));
}

#[test]
fn io_uring_at_depth_8_multi_block_ops_count_like_sync() {
    check_against_sync("engine = \"io_uring\"\niodepth = 8", READ_WRITE);
}

#[test]
fn libaio_at_depth_8_counts_like_sync() {
    check_against_sync("engine = \"libaio\"\niodepth = 8", SINGLE_BLOCK_READS);
    check_against_sync("engine = \"libaio\"\niodepth = 8", READ_WRITE);
}

/// Every operation on libaio gets one latency: until its request is reaped (the last ones when
/// the thread drains its requests), or with `submit_latency` through its own call. Batched
/// submission and reaping change neither the counts nor that.
#[test]
fn libaio_times_every_operation_once() {
    for extra in [
        "",
        "[group.aio]\nsubmit_latency = true",
        "[group.aio]\nbatch_submit = 3\nbatch_complete = 2\nreap_max = 8",
        "[group.aio]\nbatch_submit = 0\nbatch_complete = 8",
    ] {
        let r = run_ok(
            &mixed(
                &format!("engine = \"libaio\"\niodepth = 8\n{extra}"),
                SINGLE_BLOCK_READS,
            ),
            tempdir().path(),
        );
        let rd = op(&r, OpKind::Read);
        let timed: u64 = rd.histogram.iter().map(|b| b.1).sum();
        assert_eq!((rd.count, rd.bytes, timed), (300, 300 * 4096, 300), "`{extra}`");
    }
}

/// `[group.aio]` belongs to libaio, and its batches fit the context.
#[test]
fn libaio_settings_out_of_range_are_refused_with_their_key() {
    let refused = |group: &str| {
        Workload::from_toml(&mixed_text(group, SINGLE_BLOCK_READS), "w.toml")
            .expect_err(group)
            .to_string()
    };
    let cases = [
        (
            "[group.aio]\nsubmit_latency = true",
            "[group.aio] needs engine = \"libaio\"",
        ),
        (
            "engine = \"libaio\"\niodepth = 4\n[group.aio]\nbatch_submit = 5",
            "batch_submit 5 is above iodepth 4",
        ),
        (
            "engine = \"libaio\"\niodepth = 4\n[group.aio]\nbatch_complete = 0",
            "batch_complete must be from 1 to iodepth (4)",
        ),
        (
            "engine = \"libaio\"\niodepth = 4\n[group.aio]\nbatch_complete = 2\nreap_max = 1",
            "reap_max must be from batch_complete (2) to iodepth (4)",
        ),
        (
            "engine = \"libaio\"\niodepth = 4\n[group.aio]\nreap_max = 5",
            "reap_max must be from batch_complete (1) to iodepth (4)",
        ),
    ];
    for (group, want) in cases {
        let e = refused(group);
        assert!(e.starts_with("w.toml:") && e.ends_with(want), "`{group}`: {e}");
    }
}

#[test]
fn mmap_reads_and_writes_count_like_sync() {
    check_against_sync("engine = \"mmap\"", READ_WRITE);
    let r = run_ok(&mixed("engine = \"mmap\"", READ_WRITE), tempdir().path());
    let (rd, wr) = (op(&r, OpKind::Read), op(&r, OpKind::Write));
    assert_eq!(rd.count + wr.count, 300);
    assert!(rd.count > 0 && wr.count > 0, "both kinds ran: {:?}", counts(&r));
    assert_eq!(rd.bytes, rd.count * 16 * 1024);
    assert_eq!(wr.bytes, wr.count * 8 * 1024);
}

#[test]
fn mmap_readall_of_an_odd_sized_file_counts_like_sync() {
    let w = |engine: &str| {
        workload(&format!(
            r#"
name = "readall"
seed = 77
stop = {{ ops = 6 }}

[[fileset]]
name = "data"
files = 3
dirs = 0
size = 10000

[[group]]
name = "g"
fileset = "data"
{engine}

[[group.op]]
op = "readall"
bs = "4k"
"#
        ))
    };
    let sync = run_ok(&w(""), tempdir().path());
    let mmap = run_ok(&w("engine = \"mmap\""), tempdir().path());
    assert_eq!(counts(&mmap), counts(&sync));
    assert_eq!(op(&mmap, OpKind::ReadAll).bytes, 6 * 10000);
}

#[test]
fn direct_io_refuses_a_block_size_that_is_not_a_multiple_of_512() {
    let text = r#"
name = "direct"
stop = { ops = 10 }

[[fileset]]
name = "data"
files = 1
size = "1m"

[[group]]
name = "g"
fileset = "data"
direct = true

[[group.op]]
op = "read"
bs = "1000"
"#;
    let e = Workload::from_toml(text, "direct.toml").expect_err("bs 1000 with O_DIRECT must be refused");
    let msg = e.to_string();
    assert!(msg.contains("O_DIRECT"), "the message names O_DIRECT: {msg}");
    assert!(msg.contains("512"), "the message names 512: {msg}");
    assert!(
        msg.starts_with("direct.toml:17:6:"),
        "the message points at the bs line: {msg}"
    );
}

/// A sparse ext4 image, attached to a loop device and mounted; unmounted and detached on drop.
/// Without root or e2fsprogs, the test fails saying so.
struct Ext4Mount {
    _tmp: tempfile::TempDir,
    mnt: PathBuf,
    dev: Option<String>,
    mounted: bool,
}

fn tool(cmd: &mut Command, what: &str) -> String {
    let out = cmd.output().unwrap_or_else(|e| {
        panic!(
            "{what}: cannot run {:?} ({e}); this test needs it installed",
            cmd.get_program()
        )
    });
    assert!(
        out.status.success(),
        "{what}: {:?} failed ({}): {}",
        cmd,
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

impl Ext4Mount {
    fn new() -> Ext4Mount {
        require_root();
        require_tool("mkfs.ext4", "e2fsprogs");
        require_tool("losetup", "mount");
        let tmp = tempdir();
        let img = tmp.path().join("fs.img");
        let mnt = tmp.path().join("mnt");
        std::fs::create_dir(&mnt).unwrap();
        std::fs::File::create(&img).unwrap().set_len(256 << 20).unwrap();
        let mut m = Ext4Mount {
            _tmp: tmp,
            mnt,
            dev: None,
            mounted: false,
        };
        tool(Command::new("mkfs.ext4").args(["-q", "-F"]).arg(&img), "mkfs.ext4");
        let dev = tool(Command::new("losetup").args(["--find", "--show"]).arg(&img), "losetup");
        m.dev = Some(dev.clone());
        tool(Command::new("mount").arg(&dev).arg(&m.mnt), "mount");
        m.mounted = true;
        m
    }

    fn path(&self) -> &Path {
        &self.mnt
    }
}

impl Drop for Ext4Mount {
    fn drop(&mut self) {
        if self.mounted {
            let _ = Command::new("umount").arg(&self.mnt).status();
        }
        if let Some(dev) = &self.dev {
            let _ = Command::new("losetup").args(["-d", dev]).status();
        }
    }
}

#[test]
#[ignore = "system tier: root, a loop device, mkfs.ext4"]
fn direct_io_on_ext4_reads_and_writes_without_errors() {
    let fs = Ext4Mount::new();
    // The sync engine, and libaio with its requests really in flight.
    for (k, engine) in ["", "engine = \"libaio\"\niodepth = 8"].iter().enumerate() {
        let run_dir = fs.path().join(format!("run{k}"));
        std::fs::create_dir(&run_dir).unwrap();
        let w = workload(&format!(
            r#"
name = "direct"
seed = 99
stop = {{ ops = 400 }}

[[fileset]]
name = "data"
files = 2
dirs = 0
size = "4m"

[[group]]
name = "g"
fileset = "data"
direct = true
{engine}

[[group.op]]
op = "read"
size = "4k"
bs = "4k"

[[group.op]]
op = "write"
size = "4k"
bs = "4k"
"#
        ));
        let r = run_ok(&w, &run_dir);
        let (rd, wr) = (op(&r, OpKind::Read), op(&r, OpKind::Write));
        assert_eq!(rd.count + wr.count, 400, "`{engine}`");
        assert!(rd.count > 0 && wr.count > 0, "both kinds ran: {:?}", counts(&r));
        assert_eq!((rd.errors, wr.errors), (0, 0), "`{engine}`");
        assert_eq!(rd.bytes, rd.count * 4096);
        assert_eq!(wr.bytes, wr.count * 4096);
        assert_eq!(r.totals.transactions, 400);
        for (path, size) in data_files(&run_dir) {
            assert_eq!(size, 4 << 20, "{} changed size with `{engine}`", path.display());
        }
    }
}

#[test]
#[ignore = "system tier: root, a loop device, mkfs.ext4"]
fn direct_io_on_ext4_with_io_uring_at_depth_8() {
    let fs = Ext4Mount::new();
    let w = workload(
        r#"
name = "direct-uring"
seed = 5
stop = { ops = 400 }

[[fileset]]
name = "data"
files = 1
dirs = 0
size = "4m"

[[group]]
name = "g"
fileset = "data"
direct = true
engine = "io_uring"
iodepth = 8

[[group.op]]
op = "read"
size = "4k"
bs = "4k"
"#,
    );
    let r = run_ok(&w, fs.path());
    let rd = op(&r, OpKind::Read);
    assert_eq!((rd.count, rd.errors, rd.bytes), (400, 0, 400 * 4096));
}
