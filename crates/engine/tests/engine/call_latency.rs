//! `call_latency`: each system call a group's operations make, timed apart per kind (FFSB 6.0's
//! `[stats]`): one entry per call made, none for the calls of the fileset's setup or of a group
//! that does not ask.

use crate::common::{run_ok, workload};
use fslab_engine::calls::Call;
use fslab_engine::result::{CallResult, OpResult, RunResult};
use fslab_engine::workload::OpKind;
use fslab_engine::Workload;
use fslab_testkit::tempdir;

const MIX: &str = r#"
name = "calls"
seed = 3
stop = { ops = 600 }

[[fileset]]
name = "fs"
files = 16
size = "16k"

[[group]]
name = "timed"
fileset = "fs"
engine = "seek"
open = "per_op"
call_latency = true

[[group.op]]
op = "read"
bs = "4k"
size = "16k"
weight = 2

[[group.op]]
op = "write"
bs = "4k"
size = "8k"
sync = "fsync"

[[group.op]]
op = "stat"

[[group.op]]
op = "open_close"

[[group.op]]
op = "create"
bs = "4k"

[[group.op]]
op = "delete"

[[group]]
name = "untimed"
fileset = "fs"
open = "per_op"

[[group.op]]
op = "stat"

[[group.op]]
op = "open_close"
"#;

fn calls<'a>(r: &'a RunResult, group: &str, call: Call) -> Option<&'a CallResult> {
    r.calls.iter().find(|c| c.group == group && c.call == call)
}

fn count(r: &RunResult, call: Call) -> u64 {
    calls(r, "timed", call).map_or(0, |c| c.count)
}

fn group_op(r: &RunResult, group: &str, kind: OpKind) -> OpResult {
    let g = r.groups.iter().find(|g| g.name == group).expect("the group's figures");
    g.ops
        .iter()
        .find(|o| o.op == kind)
        .cloned()
        .unwrap_or_else(|| panic!("{group} did no {kind}"))
}

#[test]
fn each_call_of_a_timed_group_is_counted_once_under_its_kind() {
    let r = run_ok(&workload(MIX), tempdir().path());
    let op = |kind| group_op(&r, "timed", kind);
    let (read, write, stat, oc, create, delete) = (
        op(OpKind::Read),
        op(OpKind::Write),
        op(OpKind::Stat),
        op(OpKind::OpenClose),
        op(OpKind::Create),
        op(OpKind::Delete),
    );
    // Every operation but stat and delete opens its file once and closes it once; the
    // fileset's setup, which opened and wrote all 16 files, is not counted.
    let opened = read.count + write.count + oc.count + create.count;
    assert_eq!(count(&r, Call::Open), opened, "{:?}", r.calls);
    assert_eq!(count(&r, Call::Close), opened);
    // Whole 4 KiB blocks: one read() or write() each.
    assert_eq!(count(&r, Call::Read) * 4096, read.bytes);
    assert_eq!(count(&r, Call::Write) * 4096, write.bytes + create.bytes);
    // The seek engine seeks to each random read and write's offset, never for a create.
    let lseeks = count(&r, Call::Lseek);
    assert!(
        lseeks >= read.count + write.count && lseeks <= (read.bytes + write.bytes) / 4096,
        "{lseeks} lseeks for {} reads and {} writes",
        read.count,
        write.count
    );
    assert_eq!(count(&r, Call::Stat), stat.count);
    assert_eq!(count(&r, Call::Unlink), delete.count);
    assert_eq!(count(&r, Call::Fsync), write.count);
    for c in r.calls.iter() {
        assert_eq!(c.group, "timed", "only the timed group's calls: {c:?}");
        let l = &c.latency;
        assert!(
            l.min_us > 0.0 && l.min_us <= l.mean_us && l.mean_us <= l.max_us,
            "{c:?}"
        );
        assert!(l.p50_us <= l.max_us * 1.01, "{c:?}");
        let in_histogram: u64 = c.histogram_ns.iter().map(|b| b.1).sum();
        assert_eq!(in_histogram, c.count, "{c:?}");
    }
    // The other group ran, untimed.
    assert!(group_op(&r, "untimed", OpKind::Stat).count > 0);
    // The figures come back whole from JSON, as the store and `fslab ffsb --json` keep them.
    let back: RunResult = serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
    assert_eq!(back.calls, r.calls);
}

#[test]
fn calls_are_timed_only_where_the_engine_makes_one_per_transfer() {
    for (engine, extra) in [("io_uring", ""), ("mmap", "")] {
        let text = MIX.replace("engine = \"seek\"", &format!("engine = \"{engine}\"{extra}"));
        let e = Workload::from_toml(&text, "w.toml").expect_err("refused");
        let e = e.to_string();
        assert!(
            e.contains("call_latency") && e.contains(&format!("the {engine} engine")),
            "{e}"
        );
    }
}

#[test]
fn the_ranks_of_a_job_add_their_calls_up() {
    let w = workload(MIX);
    let ranks = [run_ok(&w, tempdir().path()), run_ok(&w, tempdir().path())];
    let job = fslab_engine::run::merge_ranks(&ranks);
    assert_eq!(job.calls.len(), ranks[0].calls.len().max(ranks[1].calls.len()));
    for c in &job.calls {
        let parts: Vec<&CallResult> = ranks.iter().filter_map(|r| calls(r, &c.group, c.call)).collect();
        assert_eq!(c.count, parts.iter().map(|p| p.count).sum::<u64>(), "{c:?}");
        let min = parts.iter().map(|p| p.latency.min_us).fold(f64::INFINITY, f64::min);
        let max = parts.iter().map(|p| p.latency.max_us).fold(0.0, f64::max);
        assert_eq!((c.latency.min_us, c.latency.max_us), (min, max), "{c:?}");
        let mean = parts.iter().map(|p| p.latency.mean_us * p.count as f64).sum::<f64>() / c.count as f64;
        assert!((c.latency.mean_us - mean).abs() < 1e-9 * mean.max(1.0), "{c:?}");
        assert_eq!(c.histogram_ns.iter().map(|b| b.1).sum::<u64>(), c.count);
    }
}

#[test]
fn worker_processes_hand_their_calls_back() {
    // Processes share no file table: no create or delete.
    let text = MIX
        .replace("seed = 3\n", "seed = 3\nprocesses = true\n")
        .replace("op = \"create\"\nbs = \"4k\"", "op = \"stat\"")
        .replace("op = \"delete\"", "op = \"stat\"");
    let r = run_ok(&workload(&text), tempdir().path());
    let op = |kind| group_op(&r, "timed", kind);
    let opened = op(OpKind::Read).count + op(OpKind::Write).count + op(OpKind::OpenClose).count;
    assert!(opened > 0);
    assert_eq!(count(&r, Call::Open), opened, "{:?}", r.calls);
    assert_eq!(count(&r, Call::Stat), op(OpKind::Stat).count);
}
