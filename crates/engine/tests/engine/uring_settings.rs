//! `[group.uring]`: how an io_uring group sets up and drives its rings. Each setting survives a
//! trip through TOML, is refused where it cannot apply, leaves the counts of a run as they are,
//! and reaches the kernel (seen with strace, which decodes io_uring_setup and io_uring_register).

use crate::common::{self, op, run_ok, workload};
use fslab_engine::io::{punted_plan, AUTO_SPIN, YIELDING_SPIN};
use fslab_engine::io::{IoBuffers, UringBackend};
use fslab_engine::workload::{OpKind, Taskrun, UringOpts};
use fslab_engine::{RunOptions, Span, Workload};
use fslab_testkit::tempdir;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// A seeded run of `ops` single-block operations on two files of 1 MiB at iodepth 8; `uring` is
/// the text of its `[group.uring]` table and `mix` its operations.
fn uring_run(ops: u64, uring: &str, mix: &str) -> String {
    format!(
        r#"
name = "uring"
seed = 7
stop = {{ ops = {ops} }}

[[fileset]]
name = "data"
files = 2
dirs = 0
size = "1m"

[[group]]
name = "g"
fileset = "data"
engine = "io_uring"
iodepth = 8

[group.uring]
{uring}

{mix}
"#
    )
}

const READS: &str = r#"
[[group.op]]
op = "read"
size = "4k"
bs = "4k"
"#;

const READS_AND_WRITES: &str = r#"
[[group.op]]
op = "read"
weight = 3
size = "4k"
bs = "4k"

[[group.op]]
op = "write"
size = "4k"
bs = "4k"
"#;

const EVERY_SETTING: &str = r#"
registerfiles = true
fixedbufs = false
taskrun = "coop"
force_async = true
iowq_workers = 2
batch_submit = 4
batch_complete = 2
spin = "50us"
spin_yield = false
"#;

#[test]
fn every_setting_survives_a_trip_through_toml() {
    let w = workload(&uring_run(100, EVERY_SETTING, READS));
    let u = w.groups[0].uring;
    assert_eq!(
        u,
        UringOpts {
            registerfiles: true,
            fixedbufs: Some(false),
            taskrun: Taskrun::Coop,
            force_async: Some(true),
            iowq_workers: 2,
            batch_submit: Some(4),
            batch_complete: 2,
            spin: Some(Span(Duration::from_micros(50))),
            spin_yield: Some(false),
            sqpoll: false,
            hipri: false,
        }
    );
    let text = w.to_toml();
    assert!(text.contains("[group.uring]"), "{text}");
    let back = Workload::from_toml(&text, "explained.toml").unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(back, w, "changed through to_toml:\n{text}");

    for extra in ["sqpoll = true", "hipri = true"] {
        let w = workload(&uring_run(100, extra, READS).replace("iodepth = 8", "iodepth = 8\ndirect = true"));
        let text = w.to_toml();
        assert_eq!(Workload::from_toml(&text, "explained.toml").unwrap(), w, "{text}");
    }
}

#[test]
fn the_defaults_are_left_out_of_the_explained_form() {
    let w = workload(&uring_run(100, "", READS));
    assert_eq!(w.groups[0].uring, UringOpts::default());
    let text = w.to_toml();
    assert!(!text.contains("uring]"), "{text}");
}

#[test]
fn settings_that_cannot_apply_are_refused() {
    let refused = |text: String, what: &str| {
        let e = Workload::from_toml(&text, "w.toml").expect_err(what);
        e.to_string()
    };
    let e = refused(
        uring_run(10, "registerfiles = true", READS).replace("engine = \"io_uring\"\niodepth = 8\n", ""),
        "uring settings on the sync engine",
    );
    assert!(e.contains("needs engine = \"io_uring\""), "{e}");
    let e = refused(
        uring_run(10, "batch_complete = 9", READS),
        "batch_complete above iodepth",
    );
    assert!(e.contains("batch_complete"), "{e}");
    let e = refused(uring_run(10, "batch_complete = 0", READS), "batch_complete 0");
    assert!(e.contains("batch_complete"), "{e}");
    let e = refused(uring_run(10, "batch_submit = 9", READS), "batch_submit above iodepth");
    assert!(e.contains("batch_submit"), "{e}");
    let e = refused(uring_run(10, "hipri = true", READS), "hipri without O_DIRECT");
    assert!(e.contains("direct"), "{e}");
    let e = refused(
        uring_run(10, "sqpoll = true\ntaskrun = \"coop\"", READS),
        "sqpoll with taskrun",
    );
    assert!(e.contains("sqpoll"), "{e}");
    let e = refused(uring_run(10, "force_async = \"auto\"", READS), "force_async is a bool");
    assert!(
        e.starts_with("w.toml:19:"),
        "the error points at force_async's line: {e}"
    );
    let e = refused(uring_run(10, "unknown = 1", READS), "an unknown key");
    assert!(e.contains("unknown"), "{e}");
}

/// The same seeded workload moves the same operations and bytes whatever its ring settings.
#[test]
fn ring_settings_leave_the_counts_as_they_are() {
    let counts = |uring: &str| {
        let dir = tempdir();
        let r = run_ok(&workload(&uring_run(400, uring, READS_AND_WRITES)), dir.path());
        let (rd, wr) = (op(&r, OpKind::Read), op(&r, OpKind::Write));
        assert_eq!(rd.count + wr.count, 400, "with `{uring}`");
        assert_eq!((rd.errors, wr.errors), (0, 0), "with `{uring}`");
        assert_eq!(rd.bytes, rd.count * 4096, "with `{uring}`");
        assert_eq!(wr.bytes, wr.count * 4096, "with `{uring}`");
        for (path, size) in common::data_files(dir.path()) {
            assert_eq!(size, 1 << 20, "{} changed size with `{uring}`", path.display());
        }
        (rd.count, wr.count)
    };
    let plain = counts("");
    for uring in [
        EVERY_SETTING,
        "taskrun = \"signal\"",
        "taskrun = \"defer\"\nbatch_complete = 8",
        "force_async = false\nregisterfiles = true",
        "batch_submit = 1",
        "sqpoll = true",
    ] {
        assert_eq!(counts(uring), plain, "(reads, writes) with `{uring}` vs the defaults");
    }
}

#[test]
fn iodepth_1_runs_with_every_setting() {
    let text = uring_run(200, "registerfiles = true\nforce_async = true", READS).replace("iodepth = 8", "iodepth = 1");
    let r = run_ok(&workload(&text), tempdir().path());
    let rd = op(&r, OpKind::Read);
    assert_eq!((rd.count, rd.errors, rd.bytes), (200, 0, 200 * 4096));
}

// ---- what reaches the kernel: strace of a child that runs the workload -----------------------

const CHILD_WORKLOAD: &str = "FSLAB_URING_TEST_WORKLOAD";
const CHILD_DIR: &str = "FSLAB_URING_TEST_DIR";

/// Not a test of its own: the body of the child the strace tests start (this same test binary,
/// asked to run only this function). It runs the workload its environment names.
#[test]
#[ignore = "run by the strace tests in a child process"]
fn child_runs_the_workload_of_its_environment() {
    let (Ok(text), Ok(dir)) = (std::env::var(CHILD_WORKLOAD), std::env::var(CHILD_DIR)) else {
        return;
    };
    let r = fslab_engine::run(
        &workload(&text),
        &RunOptions {
            dir: PathBuf::from(dir),
            ..RunOptions::default()
        },
        &mut |_| {},
    )
    .expect("the child's run");
    assert!(r.first_error.is_none(), "{:?}", r.first_error);
}

/// The io_uring_setup and io_uring_register calls of a run of `uring`, as strace prints them.
fn ring_calls(uring: &str) -> Vec<String> {
    let dir = tempdir();
    let calls = traced(
        &uring_run(200, uring, READS),
        dir.path(),
        "io_uring_setup,io_uring_register",
    );
    assert!(
        calls.iter().any(|l| l.contains("io_uring_setup(")),
        "no ring was set up:\n{}",
        calls.join("\n")
    );
    calls
}

/// The calls of kinds `trace` (names, comma-separated) that a child running workload `text` in
/// `dir` makes, as strace prints them.
fn traced(text: &str, dir: &Path, trace: &str) -> Vec<String> {
    let out_dir = tempdir();
    let trace_file = out_dir.path().join("trace");
    let run = dir.join("run");
    std::fs::create_dir_all(&run).unwrap();
    let exe = std::env::current_exe().expect("the test binary");
    let out = Command::new("strace")
        .args(["-f", "-qq", "-e", &format!("trace={trace}"), "-o"])
        .arg(&trace_file)
        .arg(&exe)
        .args([
            "--exact",
            "uring_settings::child_runs_the_workload_of_its_environment",
            "--ignored",
            "--test-threads=1",
        ])
        .env(CHILD_WORKLOAD, text)
        .env(CHILD_DIR, &run)
        .output()
        .unwrap_or_else(|e| panic!("cannot run strace ({e}); this test needs it installed"));
    assert!(
        out.status.success(),
        "the traced child failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&trace_file).expect("strace's output");
    text.lines()
        .filter(|l| trace.split(',').any(|name| l.contains(name)))
        .map(|l| l.to_string())
        .collect()
}

/// The flags of the ring(s) set up, as strace writes them (names, with a hex rest).
fn setup_flags(calls: &[String]) -> Vec<String> {
    calls
        .iter()
        .filter(|l| l.contains("io_uring_setup("))
        .map(|l| {
            let s = &l[l.find("flags=").expect("flags") + 6..];
            s[..s.find(',').unwrap()].to_string()
        })
        .collect()
}

/// IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN, as strace 6.1 prints them (it does
/// not know their names); later versions name them.
fn has_defer(flags: &str) -> bool {
    flags.contains("0x3000") || (flags.contains("SINGLE_ISSUER") && flags.contains("DEFER_TASKRUN"))
}

#[test]
#[ignore = "system tier: strace"]
fn the_default_ring_defers_its_task_work_as_fio_does() {
    let calls = ring_calls("");
    for f in setup_flags(&calls) {
        assert!(f.contains("COOP_TASKRUN") && has_defer(&f), "setup flags {f}");
    }
    let regs = calls
        .iter()
        .filter(|l| l.contains("io_uring_register("))
        .cloned()
        .collect::<Vec<_>>();
    assert!(
        regs.iter().any(|l| l.contains("IORING_REGISTER_BUFFERS")),
        "fixed buffers: {regs:?}"
    );
    assert!(!regs.iter().any(|l| l.contains("IORING_REGISTER_FILES")), "{regs:?}");
    assert!(!regs.iter().any(|l| l.contains("IOWQ_MAX_WORKERS")), "{regs:?}");
}

#[test]
#[ignore = "system tier: strace"]
fn ring_settings_reach_the_kernel() {
    let calls = ring_calls("registerfiles = true\nfixedbufs = false\ntaskrun = \"coop\"\niowq_workers = 2");
    for f in setup_flags(&calls) {
        assert!(f.contains("COOP_TASKRUN") && !has_defer(&f), "setup flags {f}");
    }
    let regs: Vec<&String> = calls.iter().filter(|l| l.contains("io_uring_register(")).collect();
    assert!(
        regs.iter()
            .any(|l| l.contains("IORING_REGISTER_FILES") && l.ends_with("= 0")),
        "the two files registered: {regs:?}"
    );
    assert!(
        regs.iter()
            .any(|l| l.contains("IORING_REGISTER_IOWQ_MAX_WORKERS, [[IO_WQ_BOUND]=2, [IO_WQ_UNBOUND]=0]")),
        "the io-wq limit: {regs:?}"
    );
    assert!(
        !regs.iter().any(|l| l.contains("IORING_REGISTER_BUFFERS")),
        "no fixed buffers: {regs:?}"
    );

    let calls = ring_calls("taskrun = \"signal\"");
    for f in setup_flags(&calls) {
        assert!(!f.contains("COOP_TASKRUN") && !has_defer(&f), "setup flags {f}");
    }
    let calls = ring_calls("sqpoll = true");
    for f in setup_flags(&calls) {
        assert!(f.contains("IORING_SETUP_SQPOLL") && !has_defer(&f), "setup flags {f}");
    }
}

// ---- without force_async: async where the kernel would punt every transfer anyway ------------

/// A directory on a filesystem mounted for the test (tmpfs, or ext4 on a loop device).
struct Mount {
    _tmp: tempfile::TempDir,
    mnt: PathBuf,
    dev: Option<String>,
}

fn tool(cmd: &mut Command) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {:?}: {e}", cmd.get_program()));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

impl Mount {
    fn new(fs: &str) -> Mount {
        let uid = tool(Command::new("id").arg("-u"));
        assert_eq!(uid, "0", "mounting a {fs} needs root; this test runs as uid {uid}");
        let tmp = tempdir();
        let mnt = tmp.path().join("mnt");
        std::fs::create_dir(&mnt).unwrap();
        let dev = if fs == "tmpfs" {
            tool(
                Command::new("mount")
                    .args(["-t", "tmpfs", "-o", "size=64m", "fslab-test"])
                    .arg(&mnt),
            );
            None
        } else {
            let img = tmp.path().join("fs.img");
            std::fs::File::create(&img).unwrap().set_len(64 << 20).unwrap();
            tool(Command::new("mkfs.ext4").args(["-q", "-F"]).arg(&img));
            let dev = tool(Command::new("losetup").args(["--find", "--show"]).arg(&img));
            tool(Command::new("mount").arg(&dev).arg(&mnt));
            Some(dev)
        };
        Mount { _tmp: tmp, mnt, dev }
    }

    fn path(&self) -> &Path {
        &self.mnt
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.mnt).status();
        if let Some(dev) = &self.dev {
            let _ = Command::new("losetup").args(["-d", dev]).status();
        }
    }
}

/// What a ring of iodepth 4 with force_async `mode` settles on for a file of `dir`, the ring of
/// one of `threads` threads: whether it marks transfers async, whether it then registers its
/// buffers (without `fixedbufs`), how long it spins before it sleeps (µs), and whether its spin
/// yields the processor between checks.
fn settled(dir: &Path, mode: Option<bool>, direct: bool, threads: u32) -> (bool, bool, u64, bool) {
    settled_at(dir, mode, direct, threads, 4)
}

/// The same for a ring of iodepth `depth`.
fn settled_at(dir: &Path, mode: Option<bool>, direct: bool, threads: u32, depth: u32) -> (bool, bool, u64, bool) {
    let opts = UringOpts {
        force_async: mode,
        ..UringOpts::default()
    };
    settled_with(dir, &opts, direct, threads, depth)
}

/// The same for a ring set up as `opts` says.
fn settled_with(dir: &Path, opts: &UringOpts, direct: bool, threads: u32, depth: u32) -> (bool, bool, u64, bool) {
    let path = dir.join("f");
    std::fs::write(&path, vec![7u8; 64 << 10]).unwrap();
    let mut open = std::fs::OpenOptions::new();
    open.read(true);
    if direct {
        use std::os::unix::fs::OpenOptionsExt;
        open.custom_flags(libc::O_DIRECT);
    }
    let file = open.open(&path).unwrap();
    let mut ring = UringBackend::new(depth, opts).expect("a ring").for_threads(threads);
    let bufs = IoBuffers::new(4096, 4, 1);
    ring.settle(file.as_raw_fd(), &bufs);
    ring.register(&bufs);
    (
        ring.forces_async(),
        ring.fixed_buffers(),
        ring.spin_ns() / 1000,
        ring.spin_yields(),
    )
}

/// The automatic spins, in µs: without yielding, and yielding.
fn spins() -> (u64, u64) {
    (AUTO_SPIN.as_micros() as u64, YIELDING_SPIN.as_micros() as u64)
}

fn cpus() -> u32 {
    std::thread::available_parallelism().map_or(1, |n| n.get() as u32)
}

/// A tmpfs where the ring of a lone thread spins: the test needs two processors or more (one
/// for the thread, one for its io-wq worker) and says so.
fn spinning_tmpfs() -> Mount {
    let tmpfs = Mount::new("tmpfs");
    assert!(
        cpus() >= 2,
        "this test needs 2 processors or more, for a lone thread on tmpfs to spin"
    );
    tmpfs
}

#[test]
#[ignore = "system tier: root, mount, a loop device, mkfs.ext4"]
fn tmpfs_rings_follow_the_punted_plan_and_ext4_ones_go_inline_spinning_yielding() {
    let tmpfs = spinning_tmpfs();
    let (plain, yielding) = spins();
    for threads in [1, 2, cpus(), cpus() + 1] {
        let plan = punted_plan(cpus(), threads);
        let is_async = plan.mark_async;
        for depth in [1, 4] {
            // A processor of its own: a spin without yielding. Marked async among threads that
            // share the processors with their workers: a yielding spin, from iodepth 2 on.
            let (spin, yields) = match (plan.spin, depth) {
                (true, _) => (plain, false),
                (false, 1) => (0, true),
                (false, _) => (yielding, true),
            };
            assert_eq!(
                settled_at(tmpfs.path(), None, false, threads, depth),
                (is_async, !is_async, spin, yields),
                "tmpfs has no FMODE_NOWAIT; iodepth {depth}, {threads} threads on {} processors: {plan:?}",
                cpus()
            );
        }
    }
    assert_eq!(
        settled(tmpfs.path(), Some(false), false, 1),
        (false, true, plain, false),
        "not async, one worker: the lone thread spins without yielding"
    );
    assert_eq!(
        settled(tmpfs.path(), Some(true), false, 1),
        (true, false, 0, true),
        "forced async, up to the kernel's many workers: no processor left to spin on"
    );
    // ext4 reads go inline, and a device completes them: the thread spins yielding at every
    // iodepth, whatever the processors, unless its transfers are forced async.
    let ext4 = Mount::new("ext4");
    for direct in [true, false] {
        for threads in [1, cpus(), cpus() + 1] {
            for depth in [1, 4, 32, 128] {
                assert_eq!(
                    settled_at(ext4.path(), None, direct, threads, depth),
                    (false, true, yielding, true),
                    "ext4, O_DIRECT {direct}, iodepth {depth}, {threads} threads on {} processors",
                    cpus()
                );
            }
        }
    }
    assert_eq!(
        settled(ext4.path(), Some(true), true, 1),
        (true, false, 0, true),
        "forced async: io-wq workers take the spare processors"
    );
    // What is given stands.
    let given = UringOpts {
        spin: Some(Span(Duration::from_micros(7))),
        spin_yield: Some(false),
        ..UringOpts::default()
    };
    assert_eq!(settled_with(ext4.path(), &given, true, 1, 1), (false, true, 7, false));
    let given = UringOpts {
        spin_yield: Some(true),
        ..UringOpts::default()
    };
    assert!(
        settled_with(tmpfs.path(), &given, false, 1, 1).3,
        "tmpfs, spin_yield = true"
    );
}

/// How many transfers each io_uring_enter of 200 reads at iodepth 8 on `dir` submitted (its
/// `to_submit`), the enters that submitted nothing left out.
fn submitted_per_enter(dir: &Path, uring: &str, direct: bool) -> Vec<u32> {
    let mut text = uring_run(200, uring, READS);
    if direct {
        text = text.replace("iodepth = 8", "iodepth = 8\ndirect = true");
    }
    let calls = traced(&text, dir, "io_uring_enter");
    let counts: Vec<u32> = calls
        .iter()
        .filter_map(|l| l.split("io_uring_enter(").nth(1))
        .map(|args| {
            let n = args.split(", ").nth(1).expect("io_uring_enter's to_submit");
            n.parse().unwrap_or_else(|e| panic!("to_submit `{n}`: {e}"))
        })
        .filter(|&n| n > 0)
        .collect();
    assert_eq!(counts.iter().sum::<u32>(), 200, "every read submitted once: {calls:?}");
    counts
}

#[test]
#[ignore = "system tier: root, mount, a loop device, mkfs.ext4, strace"]
fn inline_transfers_are_submitted_one_at_a_time_and_async_ones_together() {
    let ext4 = Mount::new("ext4");
    let each = submitted_per_enter(ext4.path(), "", true);
    assert!(each.iter().all(|&n| n == 1), "ext4 O_DIRECT, one per enter: {each:?}");
    let batched = submitted_per_enter(ext4.path(), "batch_submit = 0", true);
    assert_eq!(batched[0], 8, "batch_submit = 0 fills all 8 slots first: {batched:?}");
    let tmpfs = Mount::new("tmpfs");
    let async_ = submitted_per_enter(tmpfs.path(), "force_async = true", false);
    assert_eq!(async_[0], 8, "async fills all 8 slots first: {async_:?}");
    let fours = submitted_per_enter(tmpfs.path(), "force_async = true\nbatch_submit = 4", false);
    assert!(
        fours.iter().all(|&n| n <= 4) && fours[0] == 4,
        "at most 4 per enter: {fours:?}"
    );
}

#[test]
#[ignore = "system tier: root, mount, strace"]
fn a_punted_ring_limits_its_async_workers_as_planned() {
    let tmpfs = spinning_tmpfs();
    let plan = punted_plan(cpus(), 1);
    let calls = traced(&uring_run(200, "", READS), tmpfs.path(), "io_uring_register");
    let limits: Vec<&String> = calls.iter().filter(|l| l.contains("IOWQ_MAX_WORKERS")).collect();
    if plan.mark_async && plan.async_workers > 0 {
        let want = format!(
            "IORING_REGISTER_IOWQ_MAX_WORKERS, [[IO_WQ_BOUND]={}, [IO_WQ_UNBOUND]=0]",
            plan.async_workers
        );
        assert!(
            limits.len() == 1 && limits[0].contains(&want) && limits[0].ends_with("= 0"),
            "{want}: {calls:?}"
        );
    } else {
        assert!(limits.is_empty(), "{plan:?} on {} processors: {calls:?}", cpus());
    }
    let calls = traced(
        &uring_run(200, "force_async = true\niowq_workers = 3", READS),
        tmpfs.path(),
        "io_uring_register",
    );
    let limits: Vec<&String> = calls.iter().filter(|l| l.contains("IOWQ_MAX_WORKERS")).collect();
    assert!(
        limits.len() == 1 && limits[0].contains("[IO_WQ_BOUND]=3,"),
        "iowq_workers given: only its limit: {limits:?}"
    );
}

/// The io_uring_enter calls of 200 reads at iodepth 8 on `dir`, as (to_submit, min_complete).
fn enters(dir: &Path, uring: &str) -> Vec<(u32, u32)> {
    traced(&uring_run(200, uring, READS), dir, "io_uring_enter")
        .iter()
        .filter_map(|l| l.split("io_uring_enter(").nth(1))
        .map(|args| {
            let n: Vec<u32> = args.split(", ").skip(1).take(2).map(|n| n.parse().unwrap()).collect();
            (n[0], n[1])
        })
        .collect()
}

#[test]
#[ignore = "system tier: root, mount, a loop device, mkfs.ext4, strace"]
fn a_spinning_thread_checks_for_completions_before_it_sleeps() {
    let tmpfs = spinning_tmpfs();
    let checks = |e: &[(u32, u32)]| e.iter().filter(|&&c| c == (0, 0)).count();
    let sleeps = |e: &[(u32, u32)]| e.iter().filter(|c| c.1 > 0).count();
    // A spin longer than the run: every wait is checks, none asleep.
    let long = enters(tmpfs.path(), "force_async = false\nspin = \"10s\"");
    assert!(checks(&long) > 0 && sleeps(&long) == 0, "spin 10s: {long:?}");
    // No spin: no check, only submissions and sleeps. Whether it sleeps at all depends on the
    // io-wq workers: under strace every call is slow, and they may have finished each read
    // before the thread looks (CI once saw 200 submissions that each found a completion).
    let none = enters(tmpfs.path(), "force_async = false\nspin = \"0s\"");
    assert!(checks(&none) == 0, "spin 0s: {none:?}");
    // Unless told, a lone thread spins on tmpfs when the plan leaves it a processor (under
    // strace each check outlasts the spin, so a check comes before each sleep).
    let auto = enters(tmpfs.path(), "");
    assert_eq!(checks(&auto) > 0, punted_plan(cpus(), 1).spin, "tmpfs: {auto:?}");
}

/// Writes and fsyncs, half of each: an io-wq worker runs each fsync, which waits for ext4's
/// journal and the device, long enough for waits to check many times.
const WRITES_AND_FSYNCS: &str = r#"
[[group.op]]
op = "write"
size = "4k"
bs = "4k"

[[group.op]]
op = "fsync"
"#;

/// The sched_yield calls of 100 writes and fsyncs at iodepth 1 on `dir`, and the io_uring_enter
/// checks (nothing submitted or waited for) among them.
fn yields_and_checks(dir: &Path, uring: &str) -> (usize, usize) {
    let text = uring_run(100, uring, WRITES_AND_FSYNCS).replace("iodepth = 8", "iodepth = 1");
    let calls = traced(&text, dir, "io_uring_enter,sched_yield");
    let yields = calls.iter().filter(|l| l.contains("sched_yield(")).count();
    let checks = calls
        .iter()
        .filter(|l| l.contains("io_uring_enter(") && l.contains(", 0, 0, "))
        .count();
    (yields, checks)
}

#[test]
#[ignore = "system tier: root, mount, a loop device, mkfs.ext4, strace"]
fn a_yielding_spin_gives_the_processor_up_between_its_checks() {
    let ext4 = Mount::new("ext4");
    // Each wait is a submission, then checks until one finds the completion: a yield follows
    // every one of them but that last, so there are as many yields as checks.
    let (yields, checks) = yields_and_checks(ext4.path(), "spin = \"10s\"\nspin_yield = true");
    assert!(
        yields == checks && checks > 0,
        "spin_yield = true: {yields} yields, {checks} checks"
    );
    let (yields, checks) = yields_and_checks(ext4.path(), "spin = \"10s\"\nspin_yield = false");
    assert!(
        yields == 0 && checks > 0,
        "spin_yield = false: {yields} yields, {checks} checks"
    );
    // Unless told, a thread that waits for what a device completes yields.
    let (yields, checks) = yields_and_checks(ext4.path(), "spin = \"10s\"");
    assert!(yields == checks && checks > 0, "ext4: {yields} yields, {checks} checks");
}

// ---- order = "sequential": the files in the order they were made -----------------------------
// (Not an io_uring setting; its tests live here for now.)

fn ordered(op: &str, files: u64, ops: u64, order: &str) -> Workload {
    workload(&ordered_text(op, files, ops, order))
}

fn ordered_text(op: &str, files: u64, ops: u64, order: &str) -> String {
    format!(
        r#"
name = "ordered"
seed = 3
stop = {{ ops = {ops} }}

[[fileset]]
name = "t"
files = {files}
dirs = 0
size = 0

[[group]]
name = "g"
fileset = "t"

[[group.op]]
op = "{op}"
{order}
"#
    )
}

/// The names of the data files left beneath `dir`, sorted by number.
fn left(dir: &Path) -> Vec<u64> {
    let mut ids: Vec<u64> = common::data_files(dir)
        .iter()
        .map(|(p, _)| p.file_name().unwrap().to_str().unwrap()[1..].parse().unwrap())
        .collect();
    ids.sort();
    ids
}

#[test]
fn sequential_delete_takes_the_oldest_files_first() {
    let dir = tempdir();
    let r = run_ok(&ordered("delete", 10, 6, "order = \"sequential\""), dir.path());
    assert_eq!(op(&r, OpKind::Delete).count, 6);
    assert_eq!(left(dir.path()), vec![6, 7, 8, 9]);

    let dir = tempdir();
    run_ok(&ordered("delete", 10, 6, ""), dir.path());
    let random = left(dir.path());
    assert_eq!(random.len(), 4);
    assert_ne!(random, vec![6, 7, 8, 9], "seed 3 deletes some other files at random");
}

#[test]
#[ignore = "system tier: strace"]
fn sequential_stat_goes_through_the_files_in_order_and_starts_over() {
    // strace shows the names stat'ed: f0 .. f4, then f0 .. f2 again.
    let dir = tempdir();
    let run = dir.path().join("run");
    std::fs::create_dir(&run).unwrap();
    let trace = dir.path().join("trace");
    let text = ordered("stat", 5, 8, "order = \"sequential\"").to_toml();
    let out = Command::new("strace")
        .args(["-f", "-qq", "-e", "trace=newfstatat", "-o"])
        .arg(&trace)
        .arg(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "uring_settings::child_runs_the_workload_of_its_environment",
            "--ignored",
            "--test-threads=1",
        ])
        .env(CHILD_WORKLOAD, text)
        .env(CHILD_DIR, &run)
        .output()
        .expect("strace");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let names: Vec<String> = std::fs::read_to_string(&trace)
        .unwrap()
        .lines()
        .filter_map(|l| {
            let q = l.find(", \"f")? + 3;
            let end = q + l[q..].find('"')?;
            Some(l[q..end].to_string())
        })
        .collect();
    assert_eq!(names, ["f0", "f1", "f2", "f3", "f4", "f0", "f1", "f2"], "{names:?}");
}

#[test]
fn order_applies_to_stat_delete_and_open_close_only() {
    for op in ["stat", "delete", "open_close"] {
        let w = ordered(op, 4, 4, "order = \"sequential\"");
        let text = w.to_toml();
        assert!(text.contains("order = \"sequential\""), "{text}");
        assert_eq!(Workload::from_toml(&text, "back.toml").unwrap(), w);
    }
    for op in ["readdir", "create"] {
        let e = Workload::from_toml(&ordered_text(op, 4, 4, "order = \"sequential\""), "w.toml")
            .expect_err("order on an op that picks no file");
        assert!(e.to_string().contains("`order` does not apply"), "{e}");
    }
}

#[test]
fn file_names_are_the_prefix_and_the_id_in_decimal() {
    use fslab_engine::fileset::{file_name, NameBuf, NAME_LEN};
    for (prefix, id, want) in [
        ("f", 0, "f0"),
        ("f", 9, "f9"),
        ("f", 10, "f10"),
        ("f", 12345, "f12345"),
        ("test_file.", 7, "test_file.7"),
        ("f", u64::MAX, "f18446744073709551615"),
        ("f", 1_000_000, "f1000000"),
    ] {
        let mut b: NameBuf = [0xff; NAME_LEN];
        assert_eq!(file_name(prefix, id, &mut b).to_str().unwrap(), want);
    }
}

/// With `reuse_names` (FFSB's file list), a create takes the name of the oldest file deleted
/// before it; without, a name never used. Creates and deletes in order alternate (`pick =
/// "ratio"`): create, delete f0, create, delete f1, create, delete f2.
#[test]
fn a_create_takes_the_oldest_deleted_name_when_names_are_reused() {
    let text = ordered_text("create", 5, 6, "").replace(
        "name = \"g\"\nfileset = \"t\"\n",
        "name = \"g\"\nfileset = \"t\"\npick = \"ratio\"\n[[group.op]]\nop = \"delete\"\norder = \"sequential\"\n",
    );
    let mut w = workload(&text);
    let dir = tempdir();
    run_ok(&w, dir.path());
    assert_eq!(left(dir.path()), vec![3, 4, 5, 6, 7], "f5, f6, f7: new names");

    w.filesets[0].reuse_names = true;
    let dir = tempdir();
    let r = run_ok(&w, dir.path());
    assert_eq!(op(&r, OpKind::Create).count, 3);
    assert_eq!(op(&r, OpKind::Delete).count, 3);
    // f5 while no file was deleted yet, then f0 and f1 again.
    assert_eq!(left(dir.path()), vec![0, 1, 3, 4, 5]);
}
