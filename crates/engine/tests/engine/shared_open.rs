//! `open = "shared"`: the run opens every file of a group's fileset once, before its threads
//! start, and all of them work through those descriptors (sysbench's `file_prepare()`); the
//! system calls are checked under strace by the sysbench front-end's tests.

use crate::common::{op, run_ok, workload};
use fslab_engine::workload::OpKind;
use fslab_testkit::tempdir;

/// 4 threads (or processes) writing 4 files of 64 KiB through shared descriptors, then reading.
fn shared(processes: bool, extra: &str) -> String {
    format!(
        r#"
name = "shared"
processes = {processes}
[stop]
ops = 200
[[fileset]]
name = "data"
files = 4
dirs = 0
size = "64k"
[[group]]
name = "rw"
fileset = "data"
threads = 4
open = "shared"
{extra}
[[group.op]]
op = "write"
size = "4k"
[[group.op]]
op = "read"
size = "4k"
"#
    )
}

#[test]
fn threads_and_processes_work_through_the_runs_descriptors() {
    for processes in [false, true] {
        let dir = tempdir();
        let r = run_ok(&workload(&shared(processes, "")), dir.path());
        let (w, rd) = (op(&r, OpKind::Write), op(&r, OpKind::Read));
        assert_eq!(w.count + rd.count, 200, "processes = {processes}");
        assert_eq!(
            (w.bytes, rd.bytes),
            (w.count * 4096, rd.count * 4096),
            "processes = {processes}"
        );
        assert!(w.count > 0 && rd.count > 0, "processes = {processes}");
        assert_eq!(r.threads.len(), 4);
        assert!(r.threads.iter().all(|t| t.ops > 0), "{:?}", r.threads);
        for n in 0..4 {
            let len = std::fs::metadata(dir.path().join(format!("data/f{n}"))).map(|m| m.len());
            assert!(matches!(len, Ok(65536)), "data/f{n}: {len:?}");
        }
    }
}

#[test]
fn shared_descriptors_are_refused_where_threads_could_not_share_them() {
    for (extra, why) in [
        ("engine = \"seek\"", "the seek engine moves each descriptor's position"),
        (
            "[[group.op]]\nop = \"create\"",
            "no group may create, delete or rename its files",
        ),
        (
            "[[group.op]]\nop = \"stat\"",
            "takes reads, writes and fsyncs of the files it opened, not stat",
        ),
    ] {
        let text = shared(false, extra);
        let e = fslab_engine::Workload::from_toml(&text, "w.toml")
            .expect_err("refused")
            .to_string();
        assert!(e.starts_with("w.toml:") && e.contains(why), "{extra}: {e}");
    }
}
