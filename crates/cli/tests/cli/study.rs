//! `fslab study` for real: studies that format, mount and run on loop devices, read back through
//! the store (the lab issue's list of tests). They need root, loop devices and the mkfs tools, and
//! fail naming what is missing.
//!
//! Each test works in its own temporary directory, which holds its study file, its store (`--db`)
//! and its scratch (`--scratch`: the lab's loop images and mount points), so tests running side by
//! side never share a device or a mount, and "nothing left behind" means nothing under that
//! directory. Whatever a failing test leaves there is released when it ends.

use crate::common::{finish, fslab_command, fslab_without, refs};
use crate::lab::{Lab, STUDY_LIMIT};
use fslab_engine::result::{Status, StopReason};
use fslab_store::{CellRow, CellStatus, RunRow, RunStatus, StepRow, Store, StudyRow, StudyStatus};
use fslab_testkit::{program, require_root, require_tool, Run};
use std::os::unix::fs::{FileExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------------
// The tests

/// ext4, xfs and btrfs, two thread counts, two repeats: 6 cells, 12 runs.
const THREE_FILESYSTEMS: &str = r#"
name = "three filesystems"
repeat = 2
timeout = "1m"

[device]
loop = { size = "320M" }   # xfs needs 300M

[[filesystem]]
type = "ext4"

[[filesystem]]
type = "xfs"

[[filesystem]]
type = "btrfs"

[[workload]]
name = "rw"
run = { op = "randwrite", bs = "4k", size = "8m", time = "1s" }
vary = { threads = [1, 2] }
"#;

#[test]
#[ignore = "system tier: root, loop devices, mkfs.ext4, mkfs.xfs, mkfs.btrfs"]
fn a_study_over_three_filesystems_stores_every_run() {
    require_root();
    require_tool("mkfs.ext4", "e2fsprogs");
    require_tool("mkfs.xfs", "xfsprogs");
    require_tool("mkfs.btrfs", "btrfs-progs");
    let lab = Lab::new(THREE_FILESYSTEMS);
    let run = lab.run_study(&[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let store = lab.store();
    let study = complete_study(&store, 12);
    let cells = store.cells(study.id).expect("cells");
    let runs = store.runs(study.id).expect("runs");
    let steps = store.steps(study.id).expect("steps");
    assert_eq!(cells.len(), 6, "{cells:#?}");
    assert_eq!(runs.len(), 12, "{runs:#?}");
    for fs in ["ext4", "xfs", "btrfs"] {
        for threads in ["1", "2"] {
            let c = cells
                .iter()
                .find(|c| c.spec.filesystem == fs && c.spec.params.get("threads").map(String::as_str) == Some(threads))
                .unwrap_or_else(|| panic!("no cell {fs} threads={threads}: {cells:#?}"));
            assert_eq!(c.status, CellStatus::Done, "{}: {:?}", c.spec.key, c.reason);
            let mine = runs_of(&runs, c);
            assert_eq!(repeats_of(&mine), [0, 1], "{}: each repeat once", c.spec.key);
            for r in mine {
                check_stored_run(&store, c, r, threads, &steps);
            }
            // fresh = "repeat" (the default): a filesystem made, mounted and unmounted per run.
            for step in ["wipe", "mkfs", "mount", "umount"] {
                let made: Vec<&StepRow> = steps_of(&steps, c, step);
                assert!(
                    made.iter().all(|s| s.step.ok),
                    "{}: {step} failed: {made:#?}",
                    c.spec.key
                );
                let mut at: Vec<Option<u32>> = made.iter().map(|s| s.step.repeat).collect();
                at.sort();
                assert_eq!(at, [Some(0), Some(1)], "{}: one {step} per repeat", c.spec.key);
            }
        }
    }
    let show = lab.fslab(&["study", "show", "1"]);
    assert_eq!(show.code, 0, "{}", show.stderr);
    for fs in ["ext4", "xfs", "btrfs"] {
        for threads in [1, 2] {
            let label = format!("{fs} rw threads={threads} ");
            let line = line_with(&show.stdout, &label);
            assert!(line.contains(" done ") && line.contains("2/2"), "{line}");
            assert!(line.contains("MiB/s"), "no headline figure: {line}");
        }
    }
    let list = lab.fslab(&["study", "list"]);
    assert_eq!(list.code, 0, "{}", list.stderr);
    let line = line_with(&list.stdout, "three filesystems");
    assert!(line.contains("complete") && line.contains("12/12"), "{line}");
    lab.assert_clean();
}

/// One stored run of `cell`: ok, with its figures, the engine result of the cell's thread count,
/// and the mount options read back from the kernel, as the mount step of its repeat recorded them.
fn check_stored_run(store: &Store, cell: &CellRow, run: &RunRow, threads: &str, steps: &[StepRow]) {
    let key = &cell.spec.key;
    assert_eq!(run.status, RunStatus::Ok, "{key}: {:?}", run.error);
    let throughput = run.metrics.iter().find(|m| m.name == "throughput");
    assert!(throughput.is_some_and(|m| m.value > 0.0), "{key}: {:?}", run.metrics);
    let results = store.result(run.id).expect("the run's result");
    let [(phase, result)] = results.as_slice() else {
        panic!("{key}: one engine result expected, got {}", results.len())
    };
    assert_eq!(phase, "run");
    assert_eq!(result.workload.groups[0].threads.to_string(), threads, "{key}");
    assert!(result.totals.bytes_written > 0, "{key}: nothing written");
    let options = run.environment["mount_options"].as_str().unwrap_or_default();
    assert!(options.starts_with("rw"), "{key}: mount options {:?}", run.environment);
    let mount = steps_of(steps, cell, "mount")
        .into_iter()
        .find(|s| s.step.repeat == Some(run.repeat))
        .unwrap_or_else(|| panic!("{key}: no mount step for repeat {}", run.repeat));
    assert_eq!(options, mount.step.detail, "{key}: the options the kernel reported");
}

/// A run that writes for 20 s under a 4 s timeout, then a short one.
const HUNG: &str = r#"
name = "hung"
timeout = "4s"
drop_caches = false

[device]
loop = { size = "128M" }

[[filesystem]]
type = "ext4"

[[workload]]
name = "stuck"
run = { op = "write", bs = "1m", size = "32m", time = "20s" }

[[workload]]
name = "after"
run = { op = "randwrite", bs = "4k", size = "4m", time = "1s" }
"#;

#[test]
#[ignore = "system tier: root, loop devices, mkfs.ext4, fsfreeze"]
fn a_run_on_a_frozen_filesystem_hangs_and_the_study_goes_on() {
    require_root();
    require_tool("mkfs.ext4", "e2fsprogs");
    require_tool("fsfreeze", "util-linux");
    let lab = Lab::new(HUNG);
    let args = lab.run_args(&[]);
    let child = start(&args);
    let mnt = wait_for("the study's first filesystem mounted", Duration::from_secs(60), || {
        lab.mounts().into_iter().next()
    });
    wait_for("the worker writing", Duration::from_secs(10), || {
        (bytes_under(&mnt) > 0).then_some(())
    });
    // The writer now blocks in the kernel, where SIGKILL cannot reach it: the lab must thaw it.
    let frozen = Command::new("fsfreeze")
        .arg("-f")
        .arg(&mnt)
        .output()
        .expect("run fsfreeze");
    assert!(frozen.status.success(), "fsfreeze -f {}: {frozen:?}", mnt.display());
    let run = finish(child, &refs(&args), STUDY_LIMIT);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let store = lab.store();
    let study = complete_study(&store, 2);
    let (cells, runs) = (store.cells(study.id).unwrap(), store.runs(study.id).unwrap());
    let stuck = cell(&cells, "ext4", "stuck");
    assert_eq!(stuck.status, CellStatus::Hung, "{stuck:?}");
    let reason = stuck.reason.as_deref().unwrap_or_default();
    // Killed once the lab thawed the filesystem it was blocked on.
    assert!(
        reason.contains("hung: no result after 4s; the worker was killed"),
        "{reason}"
    );
    let [hung] = runs_of(&runs, stuck)[..] else {
        panic!("{runs:#?}")
    };
    assert_eq!(hung.status, RunStatus::Hung);
    let after = cell(&cells, "ext4", "after");
    assert_eq!(after.status, CellStatus::Done, "{after:?}");
    let [ok] = runs_of(&runs, after)[..] else {
        panic!("{runs:#?}")
    };
    assert_eq!(ok.status, RunStatus::Ok, "{:?}", ok.error);
    let steps = store.steps(study.id).unwrap();
    for step in ["mkfs", "mount", "umount"] {
        let made = steps_of(&steps, after, step);
        assert!(
            made.len() == 1 && made[0].step.ok,
            "`after` needs its own {step}: {made:#?}"
        );
    }
    lab.assert_clean();
}

/// Ctrl-C while the worker is blocked on a frozen filesystem: the lab thaws what it mounted so
/// that the worker dies, unmounts and detaches it, and exits 130 leaving nothing behind (as the
/// hung-run path does).
#[test]
#[ignore = "system tier: root, loop devices, mkfs.ext4, fsfreeze"]
fn ctrl_c_on_a_frozen_filesystem_thaws_it_and_leaves_nothing_behind() {
    require_root();
    require_tool("mkfs.ext4", "e2fsprogs");
    require_tool("fsfreeze", "util-linux");
    let lab = Lab::new(&HUNG.replace("timeout = \"4s\"", "timeout = \"10m\""));
    let args = lab.run_args(&[]);
    let child = start(&args);
    let mnt = wait_for("the study's first filesystem mounted", Duration::from_secs(60), || {
        lab.mounts().into_iter().next()
    });
    wait_for("the worker writing", Duration::from_secs(10), || {
        (bytes_under(&mnt) > 0).then_some(())
    });
    let frozen = Command::new("fsfreeze")
        .arg("-f")
        .arg(&mnt)
        .output()
        .expect("run fsfreeze");
    assert!(frozen.status.success(), "fsfreeze -f {}: {frozen:?}", mnt.display());
    let pid = rustix::process::Pid::from_child(&child);
    rustix::process::kill_process(pid, rustix::process::Signal::INT).expect("SIGINT to fslab");
    let run = finish(child, &refs(&args), STUDY_LIMIT);
    assert_eq!(run.code, 130, "{}", run.stderr);
    lab.assert_clean();
    let store = lab.store();
    let study = store.study("hung").unwrap().expect("the study");
    assert_eq!(study.status, StudyStatus::Interrupted);
    assert!(
        store.runs(study.id).unwrap().is_empty(),
        "the interrupted run is not recorded"
    );
}

/// Six one-second runs on ext4.
const SIX_RUNS: &str = r#"
name = "killed"
repeat = 3
drop_caches = false

[device]
loop = { size = "64M" }

[[filesystem]]
type = "ext4"

[[workload]]
name = "rw"
run = { op = "randwrite", bs = "4k", size = "4m", time = "1s" }
vary = { threads = [1, 2] }
"#;

#[test]
#[ignore = "system tier: root, loop devices, mkfs.ext4"]
fn resume_after_kill_9_runs_exactly_the_missing_runs() {
    require_root();
    require_tool("mkfs.ext4", "e2fsprogs");
    let lab = Lab::new(SIX_RUNS);
    let mut child = start(&lab.run_args(&[]));
    let before: Vec<RunRow> = {
        let db = wait_for("the store", Duration::from_secs(30), || {
            lab.db().exists().then(|| lab.store())
        });
        wait_for("the first run in the store", Duration::from_secs(60), || {
            let runs = db.runs(1).expect("runs");
            (!runs.is_empty()).then_some(runs)
        })
    };
    child.kill().expect("kill -9 fslab study run");
    child.wait().expect("reap fslab");
    assert!(before.len() < 6, "the study ended before it was killed: {before:#?}");
    let root = lab.root.display().to_string();
    let resumed = lab.fslab(&["study", "resume", "1", "--scratch", &root]);
    assert_eq!(resumed.code, 0, "{}", resumed.stderr);
    let store = lab.store();
    let study = complete_study(&store, 6);
    let (cells, runs) = (store.cells(study.id).unwrap(), store.runs(study.id).unwrap());
    assert_eq!(cells.len(), 2);
    assert_eq!(runs.len(), 6, "{runs:#?}");
    for c in &cells {
        assert_eq!(c.status, CellStatus::Done, "{c:?}");
        let mine = runs_of(&runs, c);
        assert_eq!(repeats_of(&mine), [0, 1, 2], "{}: each repeat exactly once", c.spec.key);
        assert!(mine.iter().all(|r| r.status == RunStatus::Ok), "{mine:#?}");
    }
    for r in &before {
        assert!(
            runs.iter().any(|s| s.id == r.id),
            "run {} from before the kill was lost",
            r.id
        );
    }
    lab.assert_clean();
}

/// SIGKILL cannot be caught, so the lab cannot stop its worker: the kernel must (the worker's
/// parent-death signal). Otherwise the worker would go on loading a filesystem nobody measures.
#[test]
#[ignore = "system tier: root, loop devices, mkfs.ext4"]
fn a_worker_dies_with_its_lab_killed_with_9_and_the_study_shows_interrupted() {
    require_root();
    require_tool("mkfs.ext4", "e2fsprogs");
    // Runs of half a minute: the test kills the lab during the first.
    let lab = Lab::new(&SIX_RUNS.replace(r#"time = "1s""#, r#"time = "30s""#));
    let mut child = start(&lab.run_args(&[]));
    let fslab = child.id() as i32;
    // The worker is `fslab TOOL ... --json`; the lab's mkfs, mount and losetup name the lab's
    // directory too, and come and go.
    let is_worker = |pid: i32| {
        std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| {
            let args: Vec<String> = c
                .split(|&b| b == 0)
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect();
            args.first().is_some_and(|a| a.ends_with("fslab")) && args.iter().any(|a| a == "--json")
        })
    };
    let worker = wait_for("the worker to start", Duration::from_secs(60), || {
        lab.processes().into_iter().find(|&p| p != fslab && is_worker(p))
    });
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        lab.processes().contains(&worker),
        "the worker ended before the test killed its lab"
    );
    child.kill().expect("kill -9 fslab study run");
    child.wait().expect("reap fslab");
    wait_for("the worker to die with its lab", Duration::from_secs(3), || {
        (!lab.processes().contains(&worker)).then_some(())
    });
    let list = lab.fslab(&["study", "list"]);
    assert_eq!(list.code, 0, "{}", list.stderr);
    let row = line_with(&list.stdout, " killed ");
    assert!(
        row.contains("interrupted"),
        "a dead runner's study is shown as interrupted: {row}"
    );
}

/// ext4 on 32M, a workload writing 64M, then one that fits.
const ENOSPC: &str = r#"
name = "enospc"
drop_caches = false

[device]
loop = { size = "32M" }

[[filesystem]]
type = "ext4"

[[workload]]
name = "overflow"
run = { op = "write", bs = "1m", size = "64m", time = "2s" }

[[workload]]
name = "fits"
run = { op = "randwrite", bs = "4k", size = "4m", time = "1s" }
"#;

#[test]
#[ignore = "system tier: root, loop devices, mkfs.ext4, drop_caches"]
fn a_full_filesystem_fails_its_run_and_the_study_goes_on() {
    require_root();
    require_tool("mkfs.ext4", "e2fsprogs");
    let lab = Lab::new(ENOSPC);
    let run = lab.run_study(&[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let store = lab.store();
    let study = complete_study(&store, 2);
    let (cells, runs) = (store.cells(study.id).unwrap(), store.runs(study.id).unwrap());
    let overflow = cell(&cells, "ext4", "overflow");
    assert_eq!(overflow.status, CellStatus::Failed, "{overflow:?}");
    let reason = overflow.reason.as_deref().unwrap_or_default();
    assert!(reason.contains("No space left on device"), "{reason}");
    let [failed] = runs_of(&runs, overflow)[..] else {
        panic!("{runs:#?}")
    };
    assert_eq!(failed.status, RunStatus::Failed);
    assert!(
        failed.error.as_deref().unwrap_or_default().contains("No space left"),
        "{failed:?}"
    );
    let results = store.result(failed.id).expect("the failed run's result");
    let result = &results[0].1;
    assert_eq!((result.status, result.stopped_by), (Status::Failed, StopReason::Error));
    let written = result.totals.bytes_written;
    assert!(
        written > 0 && written < 32 << 20,
        "{written} bytes written on a 32M filesystem"
    );
    let fits = cell(&cells, "ext4", "fits");
    assert_eq!(fits.status, CellStatus::Done, "{fits:?}");
    assert!(runs_of(&runs, fits).iter().all(|r| r.status == RunStatus::Ok));
    lab.assert_clean();
}

/// The empty and the filled filesystem side by side, each made once (`fresh = "study"`), with a
/// warm-up run before each cell (the caches dropped before it, not after).
const EMPTY_AND_FILLED: &str = r#"
name = "empty and filled"
fresh = "study"
drop_caches = true

[device]
loop = { size = "64M" }

[[filesystem]]
type = "ext4"
warmup = true

[fill]
to = ["empty", "20%"]

[[workload]]
name = "small"
run = { op = "randwrite", bs = "4k", size = "2m", time = "1s" }
vary = { threads = [1, 2] }
"#;

#[test]
#[ignore = "system tier: root, loop devices, mkfs.ext4"]
fn the_fill_level_is_an_axis_with_a_filesystem_per_level() {
    require_root();
    require_tool("mkfs.ext4", "e2fsprogs");
    let lab = Lab::new(EMPTY_AND_FILLED);
    let run = lab.run_study(&[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let store = lab.store();
    let study = complete_study(&store, 4);
    let (cells, runs, steps) = (
        store.cells(study.id).unwrap(),
        store.runs(study.id).unwrap(),
        store.steps(study.id).unwrap(),
    );
    let levels: Vec<(&str, Option<f64>)> = cells.iter().map(|c| (c.spec.key.as_str(), c.spec.fill_to)).collect();
    assert_eq!(
        levels,
        [
            (
                "ext4|fill=empty|small|bs=4k|op=randwrite|size=2m|time=1s|threads=1",
                None
            ),
            (
                "ext4|fill=empty|small|bs=4k|op=randwrite|size=2m|time=1s|threads=2",
                None
            ),
            (
                "ext4|fill=20%|small|bs=4k|op=randwrite|size=2m|time=1s|threads=1",
                Some(0.2)
            ),
            (
                "ext4|fill=20%|small|bs=4k|op=randwrite|size=2m|time=1s|threads=2",
                Some(0.2)
            ),
        ]
    );
    let named = |name: &str| -> Vec<usize> { cells.iter().map(|c| steps_of(&steps, c, name).len()).collect() };
    assert_eq!(
        named("mkfs"),
        [1, 0, 1, 0],
        "one filesystem per level, made for its first cell"
    );
    assert_eq!(named("fill"), [0, 0, 1, 0], "only the filled filesystem is filled");
    // The fill step's detail is its report, in JSON: it reached the level asked.
    let detail = &steps_of(&steps, &cells[2], "fill")[0].step.detail;
    let report: serde_json::Value =
        serde_json::from_str(detail).unwrap_or_else(|e| panic!("the fill step's detail is not JSON ({e}): {detail}"));
    let after = report["util_after"]
        .as_f64()
        .unwrap_or_else(|| panic!("no util_after in the fill step: {detail}"));
    assert!(
        (0.2..0.5).contains(&after),
        "filled to {after}, past 20% by less than a check interval: {detail}"
    );
    for c in &cells {
        assert_eq!(c.status, CellStatus::Done, "{}: {:?}", c.spec.key, c.reason);
        assert_eq!(repeats_of(&runs_of(&runs, c)), [0], "{}", c.spec.key);
        let warmups = runs.iter().filter(|r| r.cell_id == c.id && r.warmup).count();
        assert_eq!(warmups, 1, "{}: the filesystem asks for a warm-up run", c.spec.key);
        for r in runs.iter().filter(|r| r.cell_id == c.id) {
            let command = r.environment["command"].as_str().unwrap_or_default();
            assert_eq!(
                command.contains("--drop-caches"),
                r.warmup,
                "{}: caches dropped before the warm-up only: {command}",
                c.spec.key
            );
        }
    }
    lab.assert_clean();
}

/// A filesystem that cannot be filled (mounted read-only), then one that can.
const UNFILLABLE: &str = r#"
name = "unfillable"
drop_caches = false
repeat = 2

[device]
loop = { size = "64M" }

[[filesystem]]
name = "ext4-ro"
type = "ext4"
mount = "ro"

[[filesystem]]
type = "ext4"

[fill]
to = "10%"

[[workload]]
name = "small"
run = { op = "randwrite", bs = "4k", size = "2m", time = "1s" }
"#;

#[test]
#[ignore = "system tier: root, loop devices, mkfs.ext4"]
fn a_fill_that_fails_fails_its_runs_and_the_study_goes_on() {
    require_root();
    require_tool("mkfs.ext4", "e2fsprogs");
    let lab = Lab::new(UNFILLABLE);
    let run = lab.run_study(&[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let store = lab.store();
    let study = complete_study(&store, 4);
    let (cells, runs) = (store.cells(study.id).unwrap(), store.runs(study.id).unwrap());
    let ro = cell(&cells, "ext4-ro", "small");
    assert_eq!(ro.status, CellStatus::Failed, "{ro:?}");
    let reason = ro.reason.as_deref().unwrap_or_default();
    assert!(
        reason.starts_with("fill failed: ") && reason.contains("Read-only file system"),
        "{reason}"
    );
    let failed = runs_of(&runs, ro);
    assert_eq!(repeats_of(&failed), [0, 1], "each planned run is recorded, failed");
    assert!(failed
        .iter()
        .all(|r| r.status == RunStatus::Failed && r.error.as_deref() == Some(reason)));
    let good = cell(&cells, "ext4", "small");
    assert_eq!(good.status, CellStatus::Done, "{good:?}");
    assert_eq!(repeats_of(&runs_of(&runs, good)), [0, 1]);
    assert!(
        run.stderr.contains("fill failed") || run.stdout.contains("fill failed"),
        "the failure is said as it happens:\n{}{}",
        run.stdout,
        run.stderr
    );
    lab.assert_clean();
}

/// A mount option ext4 rejects, a filesystem this machine lacks, then one that works.
const UNSUPPORTED: &str = r#"
name = "unsupported"
drop_caches = false

[device]
loop = { size = "64M" }

[[filesystem]]
name = "ext4-bad"
type = "ext4"
mount = "data=nonsense"

[[filesystem]]
type = "jfs"

[[filesystem]]
type = "ext4"

[[workload]]
name = "small"
run = { op = "randwrite", bs = "4k", size = "4m", time = "1s" }
"#;

#[test]
#[ignore = "system tier: root, loop devices, mkfs.ext4"]
fn a_rejected_mount_option_and_a_missing_filesystem_are_unsupported_cells() {
    require_root();
    require_tool("mkfs.ext4", "e2fsprogs");
    let jfs = std::fs::read_to_string("/proc/filesystems")
        .unwrap_or_default()
        .contains("jfs");
    assert!(
        !(jfs && program("mkfs.jfs").is_some()),
        "this test needs a machine without jfs (it stands for a filesystem the machine lacks), \
         but the kernel has jfs and mkfs.jfs is installed"
    );
    let lab = Lab::new(UNSUPPORTED);
    let run = lab.run_study(&[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let store = lab.store();
    let study = complete_study(&store, 3);
    let (cells, runs) = (store.cells(study.id).unwrap(), store.runs(study.id).unwrap());
    let bad = cell(&cells, "ext4-bad", "small");
    assert_eq!(bad.status, CellStatus::Unsupported, "{bad:?}");
    let reason = bad.reason.as_deref().unwrap_or_default();
    assert!(reason.contains("mount -o data=nonsense failed"), "{reason}");
    let steps = store.steps(study.id).unwrap();
    let mount = steps_of(&steps, bad, "mount");
    assert!(
        mount.len() == 1 && !mount[0].step.ok,
        "one failed mount step: {mount:#?}"
    );
    let jfs = cell(&cells, "jfs", "small");
    assert_eq!(jfs.status, CellStatus::Unsupported, "{jfs:?}");
    let reason = jfs.reason.as_deref().unwrap_or_default();
    assert!(
        reason.contains("jfs kernel module") || reason.contains("jfsutils"),
        "the reason names the module or the package: {reason}"
    );
    assert!(
        runs_of(&runs, bad).is_empty() && runs_of(&runs, jfs).is_empty(),
        "{runs:#?}"
    );
    let ext4 = cell(&cells, "ext4", "small");
    assert_eq!(ext4.status, CellStatus::Done, "{ext4:?}");
    assert_eq!(runs_of(&runs, ext4).len(), 1);
    assert_eq!(runs.len(), 1, "{runs:#?}");
    lab.assert_clean();
}

/// Written at offset 0 of the test's own device, which ext4 leaves alone: still there afterwards
/// means nothing wrote over the start of the device.
const MARKER: &[u8] = b"fslab study test: do not format";

#[test]
#[ignore = "system tier: root, loop devices, mkfs.ext4, losetup, blkid"]
fn a_block_device_is_refused_unless_named_confirmed_and_unmounted() {
    require_root();
    require_tool("mkfs.ext4", "e2fsprogs");
    require_tool("losetup", "mount");
    require_tool("blkid", "util-linux");
    require_tool("mount", "mount");
    let lab = Lab::new("");
    let dev = lab.own_device();
    let uuid = uuid_of(&dev);
    let cases: [(Option<&str>, &[&str], &str); 2] = [
        (None, &["--yes"], "the study does not name it for destruction"),
        (Some(dev.as_str()), &[], "destruction not confirmed: pass --yes"),
    ];
    for (destroy, flags, rule) in cases {
        lab.write_study(&block_study(&dev, destroy));
        let run = lab.run_study(flags);
        assert_refused(&lab, &run, &dev, rule);
        assert_untouched(&dev, &uuid);
    }
    let mnt = lab.root.join("mounted");
    std::fs::create_dir(&mnt).unwrap();
    let mount = Command::new("mount").arg(&dev).arg(&mnt).output().expect("run mount");
    assert!(mount.status.success(), "mount {dev}: {mount:?}");
    lab.write_study(&block_study(&dev, Some(&dev)));
    let run = lab.run_study(&["--yes"]);
    assert_refused(&lab, &run, &dev, &format!("mounted at {}", mnt.display()));
    assert_untouched(&dev, &uuid);
    assert_eq!(lab.mounts(), [mnt], "the device is still mounted where the test put it");
}

/// A block-device study killed with -9 leaves its own mount of the device behind: `resume --yes`
/// recognises it (beneath the scratch directory the store recorded) and clears it, where it
/// used to refuse the device as mounted.
#[test]
#[ignore = "system tier: root, loop devices, mkfs.ext4, losetup"]
fn a_block_device_study_killed_with_9_resumes_over_its_own_leftover_mount() {
    require_root();
    require_tool("mkfs.ext4", "e2fsprogs");
    require_tool("losetup", "mount");
    let lab = Lab::new("");
    let dev = lab.own_device();
    let text = block_study(&dev, Some(&dev))
        .replace("time = \"1s\"", "time = \"2s\"")
        .replace(
            "name = \"block\"\n",
            "name = \"block\"\nrepeat = 2\ndrop_caches = false\n",
        );
    lab.write_study(&text);
    let mut child = start(&lab.run_args(&["--yes"]));
    let mnt = wait_for("the device mounted", Duration::from_secs(60), || {
        lab.mounts().into_iter().next()
    });
    child.kill().expect("kill -9 fslab study run");
    child.wait().expect("reap fslab");
    // The orphaned worker ends with its two-second run; the mount stays.
    wait_for("the orphaned worker gone", Duration::from_secs(60), || {
        lab.processes().is_empty().then_some(())
    });
    assert_eq!(lab.mounts(), [mnt], "fslab's own mount is left behind");
    let root = lab.root.display().to_string();
    let resumed = lab.fslab(&["study", "resume", "1", "--yes", "--scratch", &root]);
    assert_eq!(resumed.code, 0, "{}", resumed.stderr);
    let store = lab.store();
    let study = complete_study(&store, 2);
    let runs = store.runs(study.id).unwrap();
    assert_eq!(runs.len(), 2, "{runs:#?}");
    assert!(runs.iter().all(|r| r.status == RunStatus::Ok), "{runs:#?}");
    assert_eq!(lab.mounts(), Vec::<std::path::PathBuf>::new(), "left mounted");
}

/// A study on the block device `dev`, naming `destroy` for destruction.
fn block_study(dev: &str, destroy: Option<&str>) -> String {
    let destroy = destroy.map(|d| format!("destroy = \"{d}\"\n")).unwrap_or_default();
    format!(
        "name = \"block\"\n\n[device]\nblock = \"{dev}\"\n{destroy}\n[[filesystem]]\ntype = \"ext4\"\n\n\
         [[workload]]\nrun = {{ op = \"randwrite\", bs = \"4k\", size = \"4m\", time = \"1s\" }}\n"
    )
}

fn assert_refused(lab: &Lab, run: &Run, dev: &str, rule: &str) {
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains(&format!("refusing {dev}: {rule}")),
        "{}",
        run.stderr
    );
    assert!(!lab.db().exists(), "a refused study created the store");
}

/// The device still starts with the marker and still holds the test's filesystem.
fn assert_untouched(dev: &str, uuid: &str) {
    let mut start = vec![0; MARKER.len()];
    std::fs::File::open(dev).unwrap().read_exact_at(&mut start, 0).unwrap();
    assert_eq!(start, MARKER, "{dev} was written over");
    assert_eq!(uuid_of(dev), uuid, "{dev} was formatted");
}

/// The UUID of the filesystem on `dev`, probed from the device itself (not blkid's cache).
fn uuid_of(dev: &str) -> String {
    let out = Command::new("blkid")
        .args(["-p", "-o", "value", "-s", "UUID", dev])
        .output()
        .expect("run blkid");
    let uuid = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(!uuid.is_empty(), "blkid -p {dev} finds no filesystem: {out:?}");
    uuid
}

/// Each malformed study, the line (or workload) its error must name, and what it must say.
const MALFORMED: [(&str, &str, &str); 5] = [
    (
        "name = \"bad\"\ndescription = \"an unknown key on line 7\"\nrepeat = 1\ntimeout = \"1m\"\n\
         fresh = \"cell\"\ndrop_caches = false\ncolour = \"red\"\n\n[[filesystem]]\ntype = \"ext4\"\n\n\
         [[workload]]\nrun = { op = \"randwrite\" }\n",
        ":7:1: ",
        "unknown field `colour`",
    ),
    (
        "name = \"bad\"\nfresh = \"always\"\n[[filesystem]]\ntype = \"ext4\"\n[[workload]]\nrun = { op = \"randwrite\" }\n",
        ":2:9: ",
        "unknown variant `always`, expected one of `repeat`, `cell`, `study`",
    ),
    (
        "name = \"bad\"\n[[filesystem]]\ntype = \"ext4\"\n[[workload]]\nrun = { op = \"randwrite\" }\n\
         dbench = { clients = 1 }\n",
        ":6:10: ",
        "a workload runs one tool, but this one names run and dbench",
    ),
    (
        "name = \"bad\"\n[[filesystem]]\ntype = \"ext4\"\n[[workload]]\nffsb = \"profiles/nowhere.ffsb\"\n",
        ":5:8: ",
        "profiles/nowhere.ffsb does not exist",
    ),
    (
        "name = \"bad\"\n[[filesystem]]\ntype = \"ext4\"\n[[workload]]\nname = \"sb\"\n\
         sysbench = { file-test-mode = \"sideways\", time = 1 }\n",
        ": workload `sb` ",
        "`sideways` is not a test mode",
    ),
];

#[test]
fn a_malformed_study_names_its_line_and_creates_nothing() {
    let lab = Lab::new("");
    let file = lab.study_file().display().to_string();
    for (text, at, says) in MALFORMED {
        lab.write_study(text);
        let run = lab.run_study(&[]);
        assert_eq!(run.code, 2, "{text}\n{}", run.stderr);
        let first = run.stderr.lines().next().unwrap_or_default();
        assert!(
            first.starts_with(&format!("fslab: {file}{at}")),
            "expected `{file}{at}`: {first}"
        );
        assert!(first.contains(says), "expected `{says}`: {first}");
        assert_eq!(fslab_testkit::entries(&lab.root), ["study.toml"], "{text}");
    }
    lab.assert_clean();
}

#[test]
fn a_dry_run_prints_the_matrix_and_an_estimate_without_root() {
    let lab = Lab::new(THREE_FILESYSTEMS);
    // As root, run it as nobody, who may read the study but write nothing here.
    std::fs::set_permissions(&lab.root, std::fs::Permissions::from_mode(0o755)).unwrap();
    let args = lab.run_args(&["--dry-run"]);
    let mut cmd = fslab_command(None, &[], &refs(&args));
    if rustix::process::geteuid().is_root() {
        cmd.uid(65534).gid(65534);
    }
    let child = cmd
        .spawn()
        .expect("start fslab as nobody (the binary must be readable by all)");
    let run = finish(child, &refs(&args), STUDY_LIMIT);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let mut lines = run.stdout.lines();
    let head = lines.next().unwrap_or_default();
    assert!(head.ends_with("6 cells × 2 repeats = 12 runs"), "{head}");
    let can = lines.next().unwrap_or_default();
    assert!(can.starts_with("6 of 6 cells can run on this machine, about "), "{can}");
    let estimate = can.rsplit("about ").next().unwrap_or_default();
    assert!(
        estimate.starts_with(|c: char| c.is_ascii_digit()),
        "no estimate: {head}"
    );
    let cells: Vec<&str> = lines.filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(cells.len(), 6, "{}", run.stdout);
    for (i, fs) in ["ext4", "ext4", "xfs", "xfs", "btrfs", "btrfs"].iter().enumerate() {
        let words: Vec<&str> = cells[i].split_whitespace().collect();
        assert_eq!(words[..3], [(i + 1).to_string().as_str(), *fs, "rw"], "{}", cells[i]);
        let threads = format!("threads={}", i % 2 + 1);
        assert!(words.contains(&threads.as_str()), "{}", cells[i]);
    }
    assert_eq!(fslab_testkit::entries(&lab.root), ["study.toml"]);
    lab.assert_clean();
}

/// ext4 and xfs, a native workload and dbench with its default loadfile: 4 cells.
const TWO_FILESYSTEMS_AND_DBENCH: &str = r#"
name = "fresh machine"
repeat = 1
timeout = "1m"

[device]
loop = { size = "320M" }

[[filesystem]]
type = "ext4"

[[filesystem]]
type = "xfs"

[[workload]]
name = "rw"
run = { op = "randwrite", bs = "4k", size = "8m", time = "1s" }

[[workload]]
name = "dbench"
dbench = { clients = 1, time = 1 }
"#;

#[test]
#[ignore = "system tier: root, unshare, loop devices, mkfs.ext4, dbench's loadfile to hide"]
fn a_machine_without_xfsprogs_or_dbench_runs_what_it_can_and_says_what_to_install() {
    require_root();
    require_tool("unshare", "util-linux");
    require_tool("mkfs.xfs", "xfsprogs");
    let mkfs_xfs = program("mkfs.xfs").expect("mkfs.xfs (xfsprogs)");
    let mkfs_ext4 = program("mkfs.ext4").expect("mkfs.ext4 (e2fsprogs)");
    let lab = Lab::new(TWO_FILESYSTEMS_AND_DBENCH);
    let hide = ["/usr/share/dbench", mkfs_xfs.to_str().unwrap()];

    // The preflight marks each cell and estimates the runnable ones only.
    let dry = fslab_without(&hide, &lab.run_args(&["--dry-run"]));
    assert_eq!(dry.code, 0, "{}", dry.stderr);
    assert!(
        dry.stdout.contains("1 of 4 cells can run on this machine"),
        "{}",
        dry.stdout
    );
    assert!(
        line_with(&dry.stdout, "ext4 rw").contains("op=randwrite"),
        "{}",
        dry.stdout
    );
    for cell in ["ext4 dbench", "xfs rw", "xfs dbench"] {
        assert!(line_with(&dry.stdout, cell).contains("unsupported ["), "{}", dry.stdout);
    }
    assert!(dry.stdout.contains("apt-get install dbench"), "{}", dry.stdout);
    assert!(dry.stdout.contains("apt-get install xfsprogs"), "{}", dry.stdout);
    assert!(!lab.db().exists(), "a dry run made a store");

    // The study runs the one cell it can, records why the others cannot run, and succeeds.
    let run = fslab_without(&hide, &lab.run_args(&[]));
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("1 ok, 0 failed, 0 hung; 3 cells unsupported"),
        "{}",
        run.stderr
    );
    let store = lab.store();
    let cells = store.cells(1).unwrap();
    let status = |fs: &str, w: &str| {
        let c = cell(&cells, fs, w);
        (c.status, c.reason.clone().unwrap_or_default())
    };
    assert_eq!(status("ext4", "rw").0, CellStatus::Done);
    let (st, why) = status("ext4", "dbench");
    assert_eq!(st, CellStatus::Unsupported);
    assert!(why.contains("/usr/share/dbench/client.txt does not exist"), "{why}");
    assert!(why.contains("apt-get install dbench"), "{why}");
    for w in ["rw", "dbench"] {
        let (st, why) = status("xfs", w);
        assert_eq!(st, CellStatus::Unsupported, "xfs {w}");
        assert!(
            why.contains("mkfs.xfs is not installed: apt-get install xfsprogs"),
            "{why}"
        );
    }
    lab.assert_clean();

    // With no mkfs at all, nothing can run: the dry run and the run say so, exit 3, and the run
    // creates no store.
    let none = Lab::new(TWO_FILESYSTEMS_AND_DBENCH);
    let hide = [hide[0], hide[1], mkfs_ext4.to_str().unwrap()];
    let dry = fslab_without(&hide, &none.run_args(&["--dry-run"]));
    assert_eq!(dry.code, 3, "{}", dry.stderr);
    assert!(
        dry.stdout.contains("0 of 4 cells can run on this machine"),
        "{}",
        dry.stdout
    );
    let run = fslab_without(&hide, &none.run_args(&[]));
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("no cell of study `fresh machine` (full form) can run on this machine"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("apt-get install e2fsprogs"), "{}", run.stderr);
    assert!(!none.db().exists(), "a study that cannot run made a store");
    none.assert_clean();
}

// ---------------------------------------------------------------------------------------------
// The test's own loop device

impl Lab {
    /// A loop device of the test's own, on a sparse file here, holding an ext4 filesystem the
    /// test made, with [`MARKER`] at its first byte.
    fn own_device(&self) -> String {
        let image = self.root.join("device.img");
        std::fs::File::create(&image).unwrap().set_len(64 << 20).unwrap();
        // Another test may take the free device losetup found first: ask again.
        let dev = (0..5)
            .find_map(|_| {
                let out = Command::new("losetup")
                    .arg("--find")
                    .arg("--show")
                    .arg(&image)
                    .output()
                    .ok()?;
                out.status
                    .success()
                    .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
            })
            .expect("losetup --find --show: no free loop device");
        let mkfs = Command::new("mkfs.ext4")
            .args(["-q", "-F", &dev])
            .output()
            .expect("run mkfs.ext4");
        assert!(mkfs.status.success(), "mkfs.ext4 {dev}: {mkfs:?}");
        let file = std::fs::OpenOptions::new().write(true).open(&dev).unwrap();
        file.write_all_at(MARKER, 0).unwrap();
        file.sync_all().unwrap();
        dev
    }
}

// ---------------------------------------------------------------------------------------------
// Helpers

/// Starts `fslab ARGS` in the background.
fn start(args: &[String]) -> std::process::Child {
    fslab_command(None, &[], &refs(args)).spawn().expect("start fslab")
}

/// Polls `probe` until it gives a value, failing the test after `limit`.
fn wait_for<T>(what: &str, limit: Duration, mut probe: impl FnMut() -> Option<T>) -> T {
    let t0 = Instant::now();
    loop {
        if let Some(v) = probe() {
            return v;
        }
        assert!(t0.elapsed() < limit, "gave up waiting for {what} after {limit:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Bytes in the regular files beneath `dir`.
fn bytes_under(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    entries
        .flatten()
        .filter_map(|e| Some((e.path(), e.file_type().ok()?)))
        .map(|(p, t)| {
            if t.is_dir() {
                bytes_under(&p)
            } else if t.is_file() {
                p.metadata().map_or(0, |m| m.len())
            } else {
                0
            }
        })
        .sum()
}

/// Study 1 of the store: complete, planning `planned` runs.
fn complete_study(store: &Store, planned: u64) -> StudyRow {
    let study = store.study("1").expect("read the store").expect("study 1 in the store");
    assert_eq!(study.status, StudyStatus::Complete);
    assert_eq!(study.planned_runs, planned);
    study
}

fn cell<'a>(cells: &'a [CellRow], filesystem: &str, workload: &str) -> &'a CellRow {
    cells
        .iter()
        .find(|c| c.spec.filesystem == filesystem && c.spec.workload == workload)
        .unwrap_or_else(|| panic!("no cell {filesystem} {workload}: {cells:#?}"))
}

/// The measured runs of `cell`.
fn runs_of<'a>(runs: &'a [RunRow], cell: &CellRow) -> Vec<&'a RunRow> {
    runs.iter().filter(|r| r.cell_id == cell.id && !r.warmup).collect()
}

fn repeats_of(runs: &[&RunRow]) -> Vec<u32> {
    let mut repeats: Vec<u32> = runs.iter().map(|r| r.repeat).collect();
    repeats.sort();
    repeats
}

fn steps_of<'a>(steps: &'a [StepRow], cell: &CellRow, name: &str) -> Vec<&'a StepRow> {
    steps
        .iter()
        .filter(|s| s.cell_id == cell.id && s.step.name == name)
        .collect()
}

/// The line of `text` that contains `needle`.
fn line_with<'a>(text: &'a str, needle: &str) -> &'a str {
    text.lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with `{needle}` in:\n{text}"))
}

/// A study on `[device] dir`: a tmpfs mounted by the test stands for a shared filesystem. The lab
/// must run in a directory of its own beneath the named one, record the mounted type, and leave
/// everything else there as it was.
const ON_A_SHARED_DIR: &str = r#"
name = "on a shared dir"
repeat = 2
timeout = "1m"
drop_caches = false

[device]
dir = "SHARED"

[[filesystem]]
type = "tmpfs"

[[workload]]
name = "rw"
run = { op = "randwrite", bs = "4k", size = "1m", time = "1s" }
"#;

#[test]
#[ignore = "system tier: root, a tmpfs to stand for a shared mount"]
fn a_study_on_a_dir_target_runs_beneath_it_records_its_mounted_type_and_touches_nothing_else() {
    require_root();
    let shared = fslab_testkit::Tmpfs::mount("64m");
    let target = shared.path().join("x");
    std::fs::create_dir(&target).unwrap();
    std::fs::write(shared.path().join("sentinel"), "beside").unwrap();
    std::fs::write(target.join("sentinel"), "within").unwrap();
    let lab = Lab::new(&ON_A_SHARED_DIR.replace("SHARED", &target.display().to_string()));
    let run = lab.run_study(&[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);

    let store = lab.store();
    let study = complete_study(&store, 2);
    let runs = store.runs(study.id).unwrap();
    assert_eq!(runs.len(), 2, "{runs:#?}");
    for r in &runs {
        assert_eq!(r.status, RunStatus::Ok, "{:?}", r.error);
        assert_eq!(r.environment["mounted_type"], "tmpfs", "{}", r.environment);
        assert_eq!(r.environment["mounted_source"], "fslab-test", "{}", r.environment);
        let dir = r.environment["dir"].as_str().unwrap();
        assert!(
            dir.starts_with(&format!("{}/fslab-on-a-shared-dir-", target.display())),
            "{dir}"
        );
    }
    assert_eq!(study.testbed["target"]["mounted_type"], "tmpfs", "{}", study.testbed);
    assert_eq!(study.testbed["target"]["dir"], target.display().to_string());
    let steps: Vec<String> = store
        .steps(study.id)
        .unwrap()
        .into_iter()
        .map(|s| s.step.name)
        .collect();
    assert_eq!(
        steps,
        ["mkdir", "rmdir", "mkdir", "rmdir"],
        "fresh = \"repeat\": a directory per run"
    );
    let cells = store.cells(study.id).unwrap();
    assert_eq!(cells[0].spec.fs_type, "tmpfs");

    // The lab's directories are gone, and what was there is as it was.
    assert_eq!(fslab_testkit::entries(&target), ["sentinel"]);
    assert_eq!(fslab_testkit::entries(shared.path()), ["sentinel", "x"]);
    assert_eq!(std::fs::read_to_string(target.join("sentinel")).unwrap(), "within");
    assert_eq!(
        std::fs::read_to_string(shared.path().join("sentinel")).unwrap(),
        "beside"
    );

    // A study that says another type than what is mounted there runs nothing.
    let other = Lab::new(
        &ON_A_SHARED_DIR
            .replace("SHARED", &target.display().to_string())
            .replace("type = \"tmpfs\"", "type = \"nfs4\""),
    );
    let refused = other.run_study(&[]);
    assert_ne!(refused.code, 0);
    assert!(
        refused
            .stderr
            .contains("is on a tmpfs filesystem, but the study's [[filesystem]] says type = \"nfs4\""),
        "{}",
        refused.stderr
    );
    assert_eq!(fslab_testkit::entries(&target), ["sentinel"]);
    lab.assert_clean();
    drop(shared);
}
