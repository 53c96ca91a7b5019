//! The study runner behind its seam, without root: a machine that makes no filesystem (its
//! "mount points" are plain directories) and runs each worker's fslab command in-process,
//! through the same front-end contract the real worker uses. What is checked: each cell stores
//! its own tool's figures, batching by `fresh`, unsupported filesystems and refused options,
//! failed and hung runs, and resume after an interruption.

use fslab_classic::{Context, Tool};
use fslab_lab::age::{AgeReport, AgeSpec};
use fslab_lab::filesystem::mountinfo::MountEntry;
use fslab_lab::fill::{FillReport, FillSpec, Tree};
use fslab_lab::lifecycle;
use fslab_lab::machine::{Image, Machine};
use fslab_lab::matrix::Form;
use fslab_lab::runner::{Event, Options, Summary};
use fslab_lab::study::Study;
use fslab_lab::worker::{Ended, Live, Watch};
use fslab_lab::LabError;
use fslab_store::{CellStatus, Claim, RunStatus, Runner, Store, StudyStatus};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Mutex;
use std::time::Duration;

/// A dbench loadfile of nine lines, small enough for a one-second run.
const LOAD: &str = r#"Deltree "\clients\client1" NT_STATUS_OK
Mkdir "\clients" NT_STATUS_OK
NTCreateX "\clients\client1\d" 0x1 0x2 1 NT_STATUS_OK
Close 1 NT_STATUS_OK
NTCreateX "\clients\client1\d\f.txt" 0x40 0x5 2 NT_STATUS_OK
WriteX 2 0 65536 65536 NT_STATUS_OK
ReadX 2 0 65536 65536 NT_STATUS_OK
QUERY_PATH_INFORMATION "\clients\client1\d\f.txt" 1004 NT_STATUS_OK
Close 2 NT_STATUS_OK
"#;

/// An FFSB 6.0 profile of a few small files.
const PROFILE: &str = "time=1\n\
[filesystem0]\n\tlocation=/unused\n\tnum_files=20\n\tnum_dirs=2\n\tmin_filesize=4k\n\tmax_filesize=4k\n[end0]\n\
[threadgroup0]\n\tnum_threads=1\n\tread_weight=1\n\tread_size=4k\n\tread_blocksize=4k\n[end0]\n";

/// A native workload of 40 reads.
const NATIVE: &str = r#"
name = "reads"
[stop]
ops = 40
[[fileset]]
name = "data"
files = 2
size = "64k"
[[group]]
name = "readers"
fileset = "data"
[[group.op]]
op = "read"
bs = "4k"
"#;

/// What a worker call does on the fake machine (which it may ask what it did before).
type Worker = dyn Fn(&Fake, &[String]) -> Ended + Sync;

/// A machine that formats nothing: it logs what it is asked, and runs each worker's command
/// in-process unless told to answer otherwise.
struct Fake {
    log: Mutex<Vec<String>>,
    /// Filesystem types this machine lacks.
    lacks: Vec<&'static str>,
    /// mkfs and mount options it refuses.
    refuses: Vec<&'static str>,
    /// The type of the filesystem mounted at a `[device] dir` target.
    mounted_type: &'static str,
    /// Whether fslab runs as root on it.
    root: bool,
    worker: Box<Worker>,
}

impl Fake {
    fn new() -> Fake {
        Fake {
            log: Mutex::new(Vec::new()),
            lacks: Vec::new(),
            refuses: Vec::new(),
            mounted_type: "nfs4",
            root: true,
            worker: Box::new(|_, args| in_process(args)),
        }
    }

    fn note(&self, what: String) {
        self.log.lock().unwrap().push(what);
    }

    /// The tool's failure when `options` hold one this machine refuses, as `command` would say it.
    fn refuse(&self, options: &str, command: String, status: &str, says: &str) -> Result<(), LabError> {
        match self.refuses.iter().find(|o| options.contains(*o)) {
            Some(o) => Err(LabError::Tool {
                command,
                status: status.into(),
                output: format!("{says} {o}"),
                kernel: None,
            }),
            None => Ok(()),
        }
    }

    /// The logged actions that start with `what`.
    fn count(&self, what: &str) -> usize {
        self.log.lock().unwrap().iter().filter(|l| l.starts_with(what)).count()
    }

    /// The type of the filesystem mounted last.
    fn mounted(&self) -> String {
        let log = self.log.lock().unwrap();
        let last = log.iter().rev().find_map(|l| l.strip_prefix("mount "));
        last.and_then(|l| l.split(' ').next()).unwrap_or_default().to_string()
    }

    /// What the last logged action starting with `what` was given.
    fn last(&self, what: &str) -> Option<String> {
        let log = self.log.lock().unwrap();
        log.iter().rev().find_map(|l| l.strip_prefix(what).map(String::from))
    }

    fn workers(&self) -> Vec<String> {
        let log = self.log.lock().unwrap();
        log.iter()
            .filter_map(|l| l.strip_prefix("worker ").map(String::from))
            .collect()
    }
}

struct FakeImage(PathBuf);

impl Image for FakeImage {
    fn device(&self) -> &Path {
        &self.0
    }

    fn detach_later(self: Box<Self>) {}
}

impl Machine for Fake {
    fn is_root(&self) -> bool {
        self.root
    }

    fn support(&self, fs_type: &str) -> Result<(), LabError> {
        if self.lacks.contains(&fs_type) {
            return Err(LabError::Unsupported {
                what: fs_type.to_string(),
                reason: format!("the fake machine has no {fs_type}"),
            });
        }
        Ok(())
    }

    fn attach_image(&self, _dir: &Path, size: u64) -> Result<Box<dyn Image>, LabError> {
        let n = self.count("attach");
        self.note(format!("attach {size}"));
        Ok(Box::new(FakeImage(PathBuf::from(format!("/dev/fake{n}")))))
    }

    fn wipe(&self, dev: &Path) -> Result<(), LabError> {
        self.note(format!("wipe {}", dev.display()));
        Ok(())
    }

    fn mkfs(&self, dev: &Path, fs_type: &str, options: &str) -> Result<String, LabError> {
        self.note(format!("mkfs {fs_type} {}", dev.display()));
        self.note(format!("options-of-mkfs {options}"));
        self.refuse(
            options,
            format!("mkfs.{fs_type} {options}"),
            "exit status: 1",
            "invalid option",
        )?;
        Ok(String::new())
    }

    fn mount(&self, _dev: Option<&Path>, mnt: &Path, fs_type: &str, options: &str) -> Result<String, LabError> {
        self.note(format!("mount {fs_type} {}", mnt.display()));
        self.note(format!("options-of-mount {options}"));
        self.refuse(
            options,
            format!("mount -t {fs_type} -o {options}"),
            "errno 22",
            "unknown option",
        )?;
        Ok(format!("rw,{options}"))
    }

    fn umount(&self, mnt: &Path) -> Result<(), LabError> {
        self.note(format!("umount {}", mnt.display()));
        Ok(())
    }

    fn umount_lazy(&self, mnt: &Path) {
        self.note(format!("umount -l {}", mnt.display()));
    }

    fn thaw(&self, _mnt: &Path) {}

    fn mkfs_log(&self, log: &Path, fs_type: &str, options: &str) -> Result<String, LabError> {
        self.note(format!("journal-device {fs_type} {} {options}", log.display()));
        Ok(String::new())
    }

    fn fsck(&self, _dev: &Path, fs_type: &str, log: Option<&Path>) -> Result<String, LabError> {
        match log {
            Some(log) => self.note(format!("fsck {fs_type} log {}", log.display())),
            None => self.note(format!("fsck {fs_type}")),
        }
        Ok("clean".into())
    }

    fn set_scheduler(&self, _dev: &Path, name: &str) -> Result<String, LabError> {
        self.note(format!("scheduler {name}"));
        match name {
            "kyber" | "none" | "mq-deadline" | "bfq" => Ok(name.to_string()),
            other => Err(LabError::Unsupported {
                what: format!("scheduler {other}"),
                reason: "the fake machine offers none, mq-deadline, kyber, bfq".into(),
            }),
        }
    }

    fn set_iosched(
        &self,
        _dev: &Path,
        tunables: &BTreeMap<String, String>,
    ) -> Result<BTreeMap<String, String>, LabError> {
        let asked: Vec<String> = tunables.iter().map(|(k, v)| format!("{k}={v}")).collect();
        self.note(format!("iosched {}", asked.join(" ")));
        // The scheduler set last, as the real queue would have it: mq-deadline's tunables.
        let scheduler = self.last("scheduler ").unwrap_or_default();
        let has: &[&str] = match scheduler.as_str() {
            "mq-deadline" => &[
                "fifo_batch",
                "front_merges",
                "read_expire",
                "write_expire",
                "writes_starved",
            ],
            _ => &[],
        };
        match tunables.keys().find(|k| !has.contains(&k.as_str())) {
            Some(k) => Err(LabError::Unsupported {
                what: format!("iosched tunable {k}"),
                reason: format!("the scheduler {scheduler} has no tunable {k}"),
            }),
            // The fake kernel reads a value back in its own form: with a newline, trimmed.
            None => Ok(tunables.clone()),
        }
    }

    fn set_read_ahead_kb(&self, _dev: &Path, kb: u64) -> Result<u64, LabError> {
        Ok(kb)
    }

    fn fill(&self, _root: &Path, _tree: &Tree, _spec: &FillSpec) -> Result<FillReport, LabError> {
        unimplemented!("no test here fills")
    }

    fn age(&self, _root: &Path, _spec: &AgeSpec) -> Result<AgeReport, LabError> {
        unimplemented!("no test here ages")
    }

    fn run_worker(&self, args: &[String], watch: &Watch) -> Result<Ended, LabError> {
        self.note(format!("worker {}", args.join(" ")));
        // A worker's first second, as a real one reports it on stderr.
        (watch.progress)(&first_second(&args[0]));
        Ok((self.worker)(self, args))
    }

    fn run_job(&self, launch: &fslab_lab::mpi::Launch, args: &[String], _: &Watch) -> Result<Ended, LabError> {
        self.note(format!("job of {} {}", launch.ranks, args.join(" ")));
        Ok(job_in_process(launch.ranks as usize, args))
    }

    fn clear_leftovers(&self, scratch: &Path) {
        self.note(format!("clear {}", scratch.display()));
        let _ = std::fs::remove_dir_all(scratch);
    }

    fn mounted_at(&self, dir: &Path) -> Result<MountEntry, LabError> {
        self.note(format!("mounted_at {}", dir.display()));
        Ok(MountEntry {
            number: "0:50".into(),
            mount_point: dir.parent().unwrap_or(dir).to_path_buf(),
            mount_options: "rw,relatime".into(),
            fs_type: self.mounted_type.into(),
            source: "server:/export".into(),
            super_options: "rw,vers=4.2".into(),
        })
    }

    // The directories are real ones, made and removed as the host does.
    fn make_dir(&self, path: &Path) -> Result<(), LabError> {
        self.note(format!("mkdir {}", path.display()));
        host().make_dir(path)
    }

    fn remove_dir(&self, path: &Path) -> Result<(), LabError> {
        self.note(format!("rmdir {}", path.display()));
        host().remove_dir(path)
    }
}

fn host() -> fslab_lab::machine::Host {
    fslab_lab::machine::Host {
        exe: "fslab".into(),
        mpi: false,
    }
}

/// The second of progress the fake machine's workers report, named by their tool.
fn first_second(tool: &str) -> Live {
    Live {
        phase: tool.to_string(),
        elapsed: Duration::from_secs(1),
        planned: Some(Duration::from_secs(3)),
        in_ramp: false,
        bytes_per_sec: 2.0 * 1048576.0,
        ops_per_sec: 512.0,
        laid_out: None,
    }
}

/// `fslab ARGS` as the worker process runs it, in this process: the front-end's outcome as
/// `--json` prints it, and the exit code the CLI gives it.
fn in_process(args: &[String]) -> Ended {
    let tool = Tool::from_key(&args[0]).expect("a tool's command");
    let (mut frontend, common) = match tool.parse(&args[1..]) {
        Ok(parsed) => parsed,
        Err(e) => return exited(2, "", &e.to_string()),
    };
    let mut out = |_: &str| {};
    let mut progress = |_: &str, _: &fslab_engine::Progress| {};
    let interrupt = std::sync::Arc::new(AtomicBool::new(false));
    let mut ctx = Context::new(&common, interrupt, &mut out, &mut progress);
    match frontend.execute(&mut ctx) {
        Ok(o) => {
            let code = if o.status() == fslab_engine::result::Status::Failed {
                1
            } else {
                0
            };
            let stdout = if common.json { o.to_json() } else { String::new() };
            exited(code, &stdout, "")
        }
        Err(e) => exited(1, "", &e.to_string()),
    }
}

/// `mpirun -np N fslab ARGS` in this process: N ranks as threads (`ranks::local`), each running
/// the command through the contract as a rank does; what rank 0 prints.
fn job_in_process(n: usize, args: &[String]) -> Ended {
    let tool = Tool::from_key(&args[0]).expect("a tool's command");
    let ranks: Vec<_> = fslab_classic::ranks::local(n)
        .into_iter()
        .map(|rank| {
            let args = args.to_vec();
            std::thread::spawn(move || {
                let (mut frontend, common) = tool.parse(&args[1..]).map_err(|e| e.to_string())?;
                let mut out = |_: &str| {};
                let mut progress = |_: &str, _: &fslab_engine::Progress| {};
                let interrupt = std::sync::Arc::new(AtomicBool::new(false));
                let mut ctx = Context::new(&common, interrupt, &mut out, &mut progress);
                ctx.ranks = rank;
                let o = fslab_classic::job::execute(frontend.as_mut(), &mut ctx).map_err(|e| e.to_string())?;
                Ok::<_, String>(if common.json { o.to_json() } else { String::new() })
            })
        })
        .collect();
    let mut printed: Vec<Result<String, String>> = ranks.into_iter().map(|h| h.join().expect("a rank")).collect();
    match printed.remove(0) {
        Ok(stdout) => exited(0, &stdout, ""),
        Err(e) => exited(1, "", &e),
    }
}

fn exited(code: i32, stdout: &str, stderr: &str) -> Ended {
    Ended::Exited {
        code: Some(code),
        stdout: stdout.to_string(),
        stderr: stderr.to_string(),
    }
}

/// A study file with its inputs, in a directory of its own.
struct Lab {
    dir: tempfile::TempDir,
    study: Study,
    store: Store,
}

impl Lab {
    fn new(text: &str) -> Lab {
        let dir = tempfile::tempdir().expect("a temporary directory");
        std::fs::write(dir.path().join("client.txt"), LOAD).unwrap();
        std::fs::write(dir.path().join("small.ffsb"), PROFILE).unwrap();
        std::fs::write(dir.path().join("reads.toml"), NATIVE).unwrap();
        std::fs::write(dir.path().join("hosts"), "localhost slots=4\n").unwrap();
        let text = text.replace("LOADFILE", &dir.path().join("client.txt").display().to_string());
        let study = Study::from_toml(&text, "study.toml", dir.path()).unwrap_or_else(|e| panic!("{e}"));
        let store = Store::open(dir.path().join("fslab.db")).unwrap();
        Lab { dir, study, store }
    }

    /// Records the study and runs it on `machine`, stopping when `stop` is set.
    fn run(&self, machine: &dyn Machine, stop: &'static AtomicBool) -> (i64, Summary, Vec<Event>) {
        let id = self
            .store
            .create_study(&fslab_store::NewStudy {
                name: self.study.name.clone(),
                file: "study.toml".into(),
                text: String::new(),
                started_at: "2026-11-25T00:00:00Z".into(),
                testbed: serde_json::json!({}),
                planned_runs: fslab_lab::matrix::planned_runs(&self.study, Form::Full),
                form: "full".into(),
            })
            .unwrap();
        let (summary, events) = self.resume(machine, id, stop);
        (id, summary, events)
    }

    /// Runs what study `id` lacks.
    fn resume(&self, machine: &dyn Machine, id: i64, stop: &'static AtomicBool) -> (Summary, Vec<Event>) {
        let opts = Options {
            form: Form::Full,
            scratch: self.dir.path().join("scratch"),
            stop,
        };
        let mut events = Vec::new();
        let summary = lifecycle::execute(machine, &self.store, &self.study, id, &opts, false, &mut |e| {
            events.push(e.clone())
        })
        .unwrap_or_else(|e| panic!("the study failed: {e}"));
        (summary, events)
    }

    /// Each cell's label with its status and reason.
    fn statuses(&self, id: i64) -> Vec<(String, CellStatus, Option<String>)> {
        let cells = self.store.cells(id).unwrap();
        cells.into_iter().map(|c| (c.spec.label, c.status, c.reason)).collect()
    }
}

fn never() -> &'static AtomicBool {
    Box::leak(Box::new(AtomicBool::new(false)))
}

/// All five tools, the native workload first: each cell's runs must carry its own tool's
/// figures, headline first.
const FIVE_TOOLS: &str = r#"
name = "five tools"
drop_caches = false
fresh = "cell"

[[filesystem]]
type = "ext4"

[[workload]]
name = "native"
run = { file = "reads.toml" }

[[workload]]
name = "ffsb"
ffsb = "small.ffsb"
vary = { time = 1 }

[[workload]]
name = "dbench"
dbench = { clients = [1, 2], time = 1, loadfile = "LOADFILE" }

[[workload]]
name = "sysbench"
sysbench = { file-test-mode = "rndrw", file-total-size = "1M", file-num = 2, events = 200, time = 0 }

[[workload]]
name = "iozone"
iozone = { threads = 2, size = "64k", record = "4k" }
args = "-i 0 -i 1 --pause 0"
"#;

#[test]
fn each_cell_stores_its_own_tool_s_figures_with_its_headline() {
    let lab = Lab::new(FIVE_TOOLS);
    let machine = Fake::new();
    let (id, summary, _) = lab.run(&machine, never());
    assert_eq!((summary.runs, summary.ok), (6, 6), "{summary:?}");
    let cells = lab.store.cells(id).unwrap();
    let runs = lab.store.runs(id).unwrap();
    let want: [(&str, &str, &str, &[&str]); 6] = [
        ("ext4 native", "run", "throughput", &["ops/s", "read MiB/s"]),
        ("ext4 ffsb", "ffsb", "Transactions/s", &["read MB/sec", "CPU %"]),
        (
            "ext4 dbench clients=1",
            "dbench",
            "Throughput",
            &["mean MB/sec", "max latency"],
        ),
        (
            "ext4 dbench clients=2",
            "dbench",
            "Throughput",
            &["mean MB/sec", "max latency"],
        ),
        (
            "ext4 sysbench",
            "sysbench",
            "throughput",
            &["reads/s", "writes/s", "fsyncs/s", "latency p95"],
        ),
        (
            "ext4 iozone",
            "iozone",
            "initial writers",
            &["rewriters", "readers", "re-readers"],
        ),
    ];
    for (cell, (label, tool, headline, others)) in cells.iter().zip(want) {
        assert_eq!((cell.spec.label.as_str(), cell.spec.tool.as_str()), (label, tool));
        assert_eq!(cell.status, CellStatus::Done, "{label}: {:?}", cell.reason);
        let run = runs.iter().find(|r| r.cell_id == cell.id).expect("a run");
        let names: Vec<&str> = run.metrics.iter().map(|m| m.name.as_str()).collect();
        let heads: Vec<&str> = run
            .metrics
            .iter()
            .filter(|m| m.headline)
            .map(|m| m.name.as_str())
            .collect();
        assert_eq!(heads, [headline], "{label}: {names:?}");
        for o in others {
            assert!(names.contains(o), "{label}: no `{o}` in {names:?}");
        }
        assert!(
            run.metrics.iter().all(|m| m.value.is_finite()),
            "{label}: {:?}",
            run.metrics
        );
        let figures = run.figures.as_ref();
        assert_eq!(figures.is_some(), tool != "run", "{label}: the tool's own figures");
    }
    // sysbench's figures are its own, not fslab's under its name: its reads/s and writes/s
    // are what its figures say.
    let sysbench = cells.iter().find(|c| c.spec.tool == "sysbench").unwrap();
    let run = runs.iter().find(|r| r.cell_id == sysbench.id).unwrap();
    let figures = run.figures.as_ref().unwrap();
    let metric = |n: &str| run.metrics.iter().find(|m| m.name == n).unwrap().value;
    assert_eq!(metric("reads/s"), figures["reads_per_sec"].as_f64().unwrap());
    assert_eq!(metric("fsyncs/s"), figures["fsyncs_per_sec"].as_f64().unwrap());
    // Every worker ran the study's own tool, with the options in its own syntax.
    let workers = machine.workers();
    let first_words: Vec<&str> = workers.iter().map(|w| w.split(' ').next().unwrap()).collect();
    assert_eq!(
        first_words,
        ["run", "ffsb", "dbench", "dbench", "sysbench", "sysbench", "sysbench", "iozone"]
    );
    assert!(workers[4].ends_with(" prepare") && workers[5].ends_with(" run") && workers[6].ends_with(" cleanup"));
}

#[test]
fn the_observer_sees_each_step_begin_and_the_worker_s_progress() {
    let lab = Lab::new(
        r#"
name = "steps"
drop_caches = false
fresh = "cell"
[[filesystem]]
type = "ext4"
fsck = true
warmup = true
[[workload]]
name = "sysbench"
sysbench = { file-test-mode = "rndrw", file-total-size = "1M", file-num = 2, events = 50, time = 0 }
"#,
    );
    let machine = Fake::new();
    let (_, summary, events) = lab.run(&machine, never());
    assert_eq!(summary.ok, 1, "{summary:?}");
    // Each step as it begins, and between them each worker's second of progress, all named by
    // the cell.
    let seen: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            Event::Stage { cell, stage } => Some(format!("{cell}: {stage}")),
            Event::Live { cell, live } => Some(format!("{cell}: live {}", live.phase)),
            _ => None,
        })
        .collect();
    let want = [
        "wipe",
        "mkfs",
        "mount", // the filesystem
        "setup",
        "live sysbench",
        "warm-up",
        "live sysbench",
        "cleanup",
        "live sysbench", // warm-up run
        "setup",
        "live sysbench",
        "run",
        "live sysbench",
        "cleanup",
        "live sysbench", // measured run
        "umount",
        "fsck",
    ]
    .map(|s| format!("ext4 sysbench: {s}"));
    assert_eq!(seen, want);
    let live = events.iter().find_map(|e| match e {
        Event::Live { live, .. } => Some(live.clone()),
        _ => None,
    });
    assert_eq!(live, Some(first_second("sysbench")));
}

const THREE_FILESYSTEMS: &str = r#"
name = "batches"
drop_caches = false
repeat = 2
fresh = "FRESH"

[[filesystem]]
type = "ext4"
fsck = true

[[filesystem]]
type = "xfs"

[[filesystem]]
type = "jfs"

[[workload]]
name = "native"
run = { file = "reads.toml", threads = [1, 2] }
"#;

#[test]
fn fresh_says_how_many_filesystems_are_made_and_a_missing_one_is_unsupported() {
    for (fresh, mkfs) in [("repeat", 8), ("cell", 4), ("study", 2)] {
        let lab = Lab::new(&THREE_FILESYSTEMS.replace("FRESH", fresh));
        let mut machine = Fake::new();
        machine.lacks = vec!["jfs"];
        let (id, summary, events) = lab.run(&machine, never());
        assert_eq!(machine.count("mkfs"), mkfs, "fresh = {fresh}");
        assert_eq!(machine.count("mount"), mkfs, "fresh = {fresh}");
        assert_eq!(machine.count("umount"), mkfs, "fresh = {fresh}");
        // ext4's fsck after each of its filesystems.
        assert_eq!(machine.count("fsck"), mkfs / 2, "fresh = {fresh}");
        assert_eq!((summary.runs, summary.ok, summary.unsupported_cells), (8, 8, 2));
        let statuses = lab.statuses(id);
        for (label, status, reason) in &statuses {
            if label.starts_with("jfs") {
                assert_eq!(*status, CellStatus::Unsupported);
                assert_eq!(reason.as_deref(), Some("jfs: the fake machine has no jfs"));
            } else {
                assert_eq!(*status, CellStatus::Done, "{label}");
            }
        }
        // Both jfs cells in one event: they are unsupported for one reason.
        let unsupported: Vec<&Vec<String>> = events
            .iter()
            .filter_map(|e| match e {
                Event::Unsupported { cells, .. } => Some(cells),
                _ => None,
            })
            .collect();
        assert_eq!(unsupported.len(), 1, "{unsupported:?}");
        assert_eq!(unsupported[0].len(), 2, "{unsupported:?}");
        assert!(unsupported[0].iter().all(|c| c.starts_with("jfs")), "{unsupported:?}");
        // jfs, last in the study, is found missing before anything runs: every run counted and
        // every time left is of the 8 runs that can run, not of 12.
        let first_run = events.iter().position(|e| matches!(e, Event::Run { .. })).unwrap();
        let last_unsupported = events
            .iter()
            .rposition(|e| matches!(e, Event::Unsupported { .. }))
            .unwrap();
        assert!(last_unsupported < first_run, "fresh = {fresh}: {events:#?}");
        for e in &events {
            if let Event::Run { total, .. } = e {
                assert_eq!(*total, 8, "fresh = {fresh}");
            }
        }
    }
}

#[test]
fn a_refused_mkfs_option_makes_that_filesystem_s_cells_unsupported_and_the_study_goes_on() {
    let text = THREE_FILESYSTEMS
        .replace("FRESH", "cell")
        .replace("type = \"xfs\"", "type = \"xfs\"\nmkfs = \"-m bogus=1\"");
    let lab = Lab::new(&text);
    let mut machine = Fake::new();
    machine.lacks = vec!["jfs"];
    machine.refuses = vec!["bogus"];
    let (id, summary, _) = lab.run(&machine, never());
    assert_eq!((summary.ok, summary.unsupported_cells), (4, 4));
    let xfs: Vec<_> = lab
        .statuses(id)
        .into_iter()
        .filter(|c| c.0.starts_with("xfs"))
        .collect();
    assert_eq!(xfs.len(), 2);
    for (_, status, reason) in xfs {
        assert_eq!(status, CellStatus::Unsupported);
        assert!(reason.unwrap().contains("mkfs failed: mkfs.xfs -m bogus=1 failed"));
    }
}

#[test]
fn failed_and_hung_runs_mark_their_cells_and_a_hung_run_s_filesystem_is_not_used_again() {
    let lab = Lab::new(
        &THREE_FILESYSTEMS
            .replace("FRESH", "cell")
            .replace("\n[[filesystem]]\ntype = \"jfs\"\n", ""),
    );
    let mut machine = Fake::new();
    machine.worker = Box::new(|fake: &Fake, args: &[String]| {
        let threads = args.iter().skip_while(|a| *a != "--threads").nth(1).map(String::as_str);
        match (fake.mounted().as_str(), threads) {
            ("xfs", Some("1")) => Ended::Hung {
                killed: true,
                stderr: String::new(),
            },
            (_, Some("2")) => exited(1, "", "fslab: cannot open the workload: No space left on device"),
            _ => in_process(args),
        }
    });
    let (id, summary, _) = lab.run(&machine, never());
    let statuses = lab.statuses(id);
    // Cells in order: ext4 threads=1, ext4 threads=2 (fails), xfs threads=1 (hangs), xfs
    // threads=2 (fails).
    assert_eq!(statuses[0].1, CellStatus::Done);
    assert_eq!(statuses[1].1, CellStatus::Failed);
    assert_eq!(
        statuses[1].2.as_deref(),
        Some("run: exit 1: fslab: cannot open the workload: No space left on device"),
        "a run that failed before it measured anything keeps the worker's own words"
    );
    assert_eq!(statuses[2].1, CellStatus::Hung);
    assert!(statuses[2]
        .2
        .as_deref()
        .unwrap()
        .starts_with("hung: no result after 15m"));
    assert_eq!(statuses[3].1, CellStatus::Failed);
    assert_eq!((summary.ok, summary.failed, summary.hung), (2, 4, 2));
    // Each hung filesystem was let go lazily and not used again: the hung cell's second repeat
    // got a fresh one. One filesystem per cell, and one more for the repeat after the hang.
    assert_eq!(machine.count("umount -l"), 2);
    assert_eq!(machine.count("mkfs"), 5);
}

#[test]
fn an_interrupted_study_resumes_with_only_the_runs_it_lacks() {
    let lab = Lab::new(
        &THREE_FILESYSTEMS
            .replace("FRESH", "repeat")
            .replace("\n[[filesystem]]\ntype = \"jfs\"\n", ""),
    );
    let stop: &'static AtomicBool = never();
    let mut machine = Fake::new();
    let calls = std::sync::atomic::AtomicUsize::new(0);
    let calls: &'static std::sync::atomic::AtomicUsize = Box::leak(Box::new(calls));
    // The user presses Ctrl-C during the third run: that run is not recorded.
    machine.worker = Box::new(move |_, args: &[String]| {
        if calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 2 {
            stop.store(true, std::sync::atomic::Ordering::SeqCst);
            return Ended::Interrupted;
        }
        in_process(args)
    });
    let (id, summary, _) = lab.run(&machine, stop);
    assert!(summary.interrupted);
    assert_eq!((summary.runs, summary.ok), (2, 2));
    let row = lab.store.study(&id.to_string()).unwrap().unwrap();
    assert_eq!(row.status.as_str(), "interrupted");
    assert_eq!(lab.store.runs(id).unwrap().len(), 2);
    // Resumed: the six runs it lacks, not the two it has.
    stop.store(false, std::sync::atomic::Ordering::SeqCst);
    let again = Fake::new();
    let (summary, _) = lab.resume(&again, id, stop);
    assert_eq!((summary.runs, summary.ok, summary.interrupted), (6, 6, false));
    assert_eq!(again.workers().len(), 6);
    let runs = lab.store.runs(id).unwrap();
    assert_eq!(runs.len(), 8);
    assert!(runs.iter().all(|r| r.status == RunStatus::Ok));
    assert!(lab.statuses(id).iter().all(|c| c.1 == CellStatus::Done));
    let row = lab.store.study(&id.to_string()).unwrap().unwrap();
    assert_eq!(row.status.as_str(), "complete");
    // A third resume has nothing to do.
    let idle = Fake::new();
    let (summary, _) = lab.resume(&idle, id, stop);
    assert_eq!(summary.runs, 0);
    assert_eq!(idle.count("mkfs"), 0);
}

/// A study another live process runs is refused before anything is touched, naming that
/// process; one whose recorded runner died is taken over, and let go of at the end.
#[test]
fn a_study_another_live_process_runs_is_refused_and_a_dead_runner_s_is_taken_over() {
    let lab = Lab::new(&THREE_FILESYSTEMS.replace("FRESH", "cell"));
    let id = lab
        .store
        .create_study(&fslab_store::NewStudy {
            name: lab.study.name.clone(),
            file: "study.toml".into(),
            text: String::new(),
            started_at: "2026-11-25T00:00:00Z".into(),
            testbed: serde_json::json!({}),
            planned_runs: fslab_lab::matrix::planned_runs(&lab.study, Form::Full),
            form: "full".into(),
        })
        .unwrap();
    // pid 1 lives as long as the machine does.
    let init = Runner {
        pid: 1,
        started: lifecycle::process_start(1).expect("pid 1's start time"),
    };
    assert!(lifecycle::runner_alive(init));
    assert_eq!(
        lab.store.claim_study(id, init, "/elsewhere", &|_| true).unwrap(),
        Claim::Claimed { left: None }
    );
    let opts = Options {
        form: Form::Full,
        scratch: lab.dir.path().join("scratch"),
        stop: never(),
    };
    let busy = Fake::new();
    let e = lifecycle::execute(&busy, &lab.store, &lab.study, id, &opts, false, &mut |_| {})
        .expect_err("the study is someone else's");
    assert_eq!(
        e.to_string(),
        format!("study {id} is being run by pid 1; wait for it to end, or stop it (kill 1) and resume")
    );
    assert_eq!(busy.log.lock().unwrap().len(), 0, "{:?}", busy.log.lock().unwrap());
    assert!(lab.store.runs(id).unwrap().is_empty());
    assert_eq!(lab.store.runner(id).unwrap(), Some(init));
    let running = lifecycle::status_now(&lab.store, id, StudyStatus::Running).unwrap();
    assert_eq!(running, StudyStatus::Running, "its runner lives");
    // The same pid with another start time is a process that died; its pid was given again.
    let dead = Runner {
        pid: 1,
        started: init.started + 1,
    };
    assert!(!lifecycle::runner_alive(dead));
    lab.store.release_study(id, init).unwrap();
    assert_eq!(
        lab.store
            .claim_study(id, dead, "/dead/fslab-study-9", &|_| true)
            .unwrap(),
        Claim::Claimed { left: None }
    );
    // A study recorded as running whose runner died is shown as interrupted: resumable.
    let shown = lifecycle::status_now(&lab.store, id, StudyStatus::Running).unwrap();
    assert_eq!(shown, StudyStatus::Interrupted);
    let complete = lifecycle::status_now(&lab.store, id, StudyStatus::Complete).unwrap();
    assert_eq!(complete, StudyStatus::Complete, "only a running status is checked");
    let machine = Fake::new();
    let (summary, _) = lab.resume(&machine, id, never());
    assert!(summary.runs > 0 && !summary.interrupted);
    assert_eq!(lab.store.runner(id).unwrap(), None, "let go of at the end");
    // What the dead runner may have left mounted, beneath the scratch recorded with it, is
    // cleared first of all, before any filesystem is made.
    let log = machine.log.lock().unwrap().clone();
    assert_eq!(log[0], "clear /dead/fslab-study-9", "{log:#?}");
    assert!(
        log[1].starts_with("clear ") && log[1].ends_with(&format!("fslab-study-{id}")),
        "{log:#?}"
    );
}

#[test]
fn a_scheduler_the_device_lacks_makes_only_its_cells_unsupported() {
    let lab = Lab::new(
        r#"
name = "schedulers"
drop_caches = false
fresh = "cell"
[device]
scheduler = ["none", "cfq-old"]
[[filesystem]]
type = "ext4"
[[workload]]
name = "native"
run = { file = "reads.toml" }
"#,
    );
    let machine = Fake::new();
    let (id, summary, _) = lab.run(&machine, never());
    assert_eq!((summary.ok, summary.unsupported_cells), (1, 1));
    let statuses = lab.statuses(id);
    assert_eq!(statuses[0].0, "ext4 none native");
    assert_eq!(statuses[0].1, CellStatus::Done);
    assert_eq!(statuses[1].0, "ext4 cfq-old native");
    assert_eq!(statuses[1].1, CellStatus::Unsupported);
    assert!(statuses[1].2.as_deref().unwrap().contains("the fake machine offers"));
}

#[test]
fn iosched_tunables_are_written_after_the_scheduler_and_stored_as_read_back() {
    let lab = Lab::new(
        r#"
name = "tunables"
drop_caches = false
fresh = "cell"
[device]
scheduler = ["mq-deadline", "none"]
iosched = { front_merges = 0, write_expire = 500, writes_starved = 1, read_expire = 500 }
[[filesystem]]
type = "ext4"
[[workload]]
name = "native"
run = { file = "reads.toml" }
"#,
    );
    let machine = Fake::new();
    let (id, summary, _) = lab.run(&machine, never());
    assert_eq!((summary.ok, summary.unsupported_cells), (1, 1));
    let log = machine.log.lock().unwrap().clone();
    let at = |what: &str| {
        log.iter()
            .position(|l| l == what)
            .unwrap_or_else(|| panic!("no `{what}` in {log:#?}"))
    };
    let tunables = "iosched front_merges=0 read_expire=500 write_expire=500 writes_starved=1";
    assert!(at("scheduler mq-deadline") < at(tunables), "{log:#?}");
    assert_eq!(machine.count("iosched"), 2, "once per cell: {log:#?}");

    let statuses = lab.statuses(id);
    assert_eq!(statuses[0].0, "ext4 mq-deadline native");
    assert_eq!(statuses[0].1, CellStatus::Done);
    // none has no tunables: its cell is unsupported, with why.
    assert_eq!(statuses[1].0, "ext4 none native");
    assert_eq!(statuses[1].1, CellStatus::Unsupported);
    let why = statuses[1].2.as_deref().unwrap();
    assert!(why.contains("the scheduler none has no tunable front_merges"), "{why}");
    assert_eq!(lab.store.runs(id).unwrap().len(), 1, "no run on the unsupported cell");

    // The run keeps the tunables asked and read back; the step says what was read back.
    let cell = lab.store.cells(id).unwrap()[0].id;
    let run = &lab.store.runs_of_cell(cell).unwrap()[0];
    let want =
        serde_json::json!({"front_merges": "0", "read_expire": "500", "write_expire": "500", "writes_starved": "1"});
    assert_eq!(run.environment["iosched"], want, "{}", run.environment);
    assert_eq!(run.environment["read_back"]["iosched"], want, "{}", run.environment);
    assert_eq!(run.environment["read_back"]["scheduler"], "mq-deadline");
    let steps = lab.store.steps(id).unwrap();
    let step = steps
        .iter()
        .find(|s| s.cell_id == cell && s.step.name == "iosched")
        .expect("an iosched step");
    assert!(step.step.ok);
    assert_eq!(
        step.step.detail,
        "front_merges=0 read_expire=500 write_expire=500 writes_starved=1"
    );
}

#[test]
fn preflight_names_the_workload_the_cell_and_the_tool_s_own_error() {
    let lab = Lab::new(&FIVE_TOOLS.replace("file-test-mode = \"rndrw\"", "file-test-mode = \"sideways\""));
    let e = lifecycle::preflight(&lab.study, Form::Full, &Fake::new()).unwrap_err();
    assert!(e.is_input());
    let text = e.to_string();
    assert!(text.starts_with("workload `sysbench` (ext4 sysbench): "), "{text}");
    assert!(text.contains("`sideways` is not a test mode"), "{text}");
    assert!(lifecycle::preflight(&Lab::new(FIVE_TOOLS).study, Form::Full, &Fake::new()).is_ok());
}

#[test]
fn preflight_marks_each_cell_the_machine_cannot_run_with_why() {
    let lab = Lab::new(&THREE_FILESYSTEMS.replace("FRESH", "cell"));
    let mut machine = Fake::new();
    machine.lacks = vec!["xfs"];
    let verdicts = lifecycle::preflight(&lab.study, Form::Full, &machine).unwrap();
    let cells = fslab_lab::matrix::expand(&lab.study, Form::Full);
    assert_eq!(verdicts.len(), cells.len());
    for (cell, verdict) in cells.iter().zip(&verdicts) {
        match lab.study.filesystems[cell.filesystem].fs_type.as_str() {
            "xfs" => assert!(verdict.as_deref().is_some_and(|r| r.contains("xfs")), "{verdict:?}"),
            _ => assert_eq!(verdict, &None, "{}", cell.label),
        }
    }
    machine.lacks = vec!["ext4", "xfs", "jfs"];
    let verdicts = lifecycle::preflight(&lab.study, Form::Full, &machine).unwrap();
    assert!(verdicts.iter().all(Option::is_some), "{verdicts:?}");
    let why = lifecycle::nothing_runs(&lab.study, Form::Full, &verdicts);
    assert!(why.contains("can run on this machine"), "{why}");
}

#[test]
fn the_dry_run_s_preflight_tries_each_filesystem_s_options_as_root_and_names_refusals() {
    let text = THREE_FILESYSTEMS
        .replace("FRESH", "cell")
        .replace("type = \"xfs\"", "type = \"xfs\"\nmkfs = \"-m bogus=1\"")
        .replace("fsck = true", "fsck = true\nmount = \"nomballoc\"");
    let lab = Lab::new(&text);
    let mut machine = Fake::new();
    machine.refuses = vec!["bogus=1", "nomballoc"];
    // The run's own preflight tries nothing: the run finds a refusal when it makes the filesystem.
    let verdicts = lifecycle::preflight(&lab.study, Form::Full, &machine).unwrap();
    assert!(verdicts.iter().all(Option::is_none), "{verdicts:?}");
    assert_eq!(machine.count("attach"), 0);
    let verdicts = lifecycle::preflight_with_trials(&lab.study, Form::Full, &machine, lab.dir.path()).unwrap();
    let cells = fslab_lab::matrix::expand(&lab.study, Form::Full);
    for (cell, verdict) in cells.iter().zip(&verdicts) {
        let verdict = verdict.as_deref();
        match lab.study.filesystems[cell.filesystem].fs_type.as_str() {
            "ext4" => assert!(
                verdict.is_some_and(
                    |r| r.starts_with("mount -o nomballoc failed: ") && r.contains("unknown option nomballoc")
                ),
                "{verdict:?}"
            ),
            "xfs" => assert!(
                verdict.is_some_and(|r| r.starts_with("mkfs failed: ") && r.contains("invalid option bogus=1")),
                "{verdict:?}"
            ),
            _ => assert_eq!(verdict, None, "{}", cell.label),
        }
    }
    // Each filesystem tried once (not once per cell), on an image of the study's size (4 GiB by
    // default); jfs's mount, the only one taken, undone.
    assert_eq!(machine.count("attach"), 3);
    assert_eq!(machine.count(&format!("attach {}", 4u64 << 30)), 3);
    assert_eq!(machine.count("mkfs"), 3);
    assert_eq!(machine.count("mount"), 2);
    assert_eq!(machine.count("umount"), 1);
    // The dry run's estimate leaves the refused cells out: only jfs's 2 cells are counted.
    let runnable: Vec<bool> = verdicts.iter().map(Option::is_none).collect();
    let all = fslab_lab::matrix::estimate_runnable(&lab.study, Form::Full, &vec![true; cells.len()]);
    let left = fslab_lab::matrix::estimate_runnable(&lab.study, Form::Full, &runnable);
    assert_eq!(left * 3, all);
    // Not root: nothing is tried, and nothing is refused before the run.
    let mut user = Fake::new();
    user.refuses = vec!["bogus=1", "nomballoc"];
    user.root = false;
    let verdicts = lifecycle::preflight_with_trials(&lab.study, Form::Full, &user, lab.dir.path()).unwrap();
    assert!(verdicts.iter().all(Option::is_none), "{verdicts:?}");
    assert_eq!(user.count("attach") + user.count("mkfs") + user.count("mount"), 0);
    // The trials' directories are gone.
    let left: Vec<String> = fslab_testkit::entries(lab.dir.path())
        .into_iter()
        .filter(|e| e.starts_with("fslab-trial-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn the_estimate_leaves_out_what_the_machine_lacks_and_never_overflows() {
    let lab = Lab::new(&THREE_FILESYSTEMS.replace("FRESH", "cell"));
    let mut machine = Fake::new();
    let all = fslab_lab::matrix::estimate(&lab.study, Form::Full, &machine);
    machine.lacks = vec!["jfs", "xfs"];
    let ext4_only = fslab_lab::matrix::estimate(&lab.study, Form::Full, &machine);
    assert_eq!(ext4_only * 3, all);
    let huge = Lab::new(
        r#"
name = "huge"
repeat = 5
[[filesystem]]
type = "ext4"
[[filesystem]]
type = "xfs"
[[workload]]
sysbench = { file-test-mode = "rndrd", time = 9223372036854775807 }
"#,
    );
    // A time no clock holds is no duration fslab takes: the estimate counts such a run as one
    // bounded by its requests (sysbench's guess: 10 s, after 4 s for its prepare of 2 GiB),
    // and never overflows adding them up.
    let estimate = fslab_lab::matrix::estimate(&huge.study, Form::Full, &Fake::new());
    assert_eq!(
        estimate,
        Duration::from_secs(2 * (5 * (10 + 4) + 5 * 3)),
        "{estimate:?}"
    );
}

/// A study of one cell whose worker reports the headline figures of `values`, one per run in
/// order (the last one again once they run out).
fn adaptive_lab(repeat: &str) -> Lab {
    Lab::new(&format!(
        r#"
name = "adaptive"
drop_caches = false
repeat = {repeat}
[[filesystem]]
type = "ext4"
[[workload]]
name = "native"
run = {{ file = "reads.toml" }}
"#
    ))
}

fn scripted(values: &'static [f64]) -> Fake {
    let mut machine = Fake::new();
    let calls: &'static std::sync::atomic::AtomicUsize = Box::leak(Box::new(std::sync::atomic::AtomicUsize::new(0)));
    machine.worker = Box::new(move |_, _| {
        let k = calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let mut o = fslab_classic::Outcome::new(Tool::Run);
        o.metrics = vec![fslab_engine::Metric::new("throughput", values[k.min(values.len() - 1)], "MiB/s").headline()];
        exited(0, &o.to_json(), "")
    });
    machine
}

/// The cell's measured runs and the reason its `repeats` step gives.
fn runs_and_reason(lab: &Lab, id: i64) -> (usize, String) {
    let runs = lab.store.runs(id).unwrap().into_iter().filter(|r| !r.warmup).count();
    let steps = lab.store.steps(id).unwrap();
    let why = steps
        .iter()
        .find(|s| s.step.name == "repeats")
        .map(|s| s.step.detail.clone())
        .unwrap_or_default();
    (runs, why)
}

#[test]
fn an_adaptive_repeat_adds_runs_until_the_variation_is_low_enough() {
    // 100, 120, 100: CoV 10.8%, above 10%; with one more 100, 9.5%: four runs.
    let lab = adaptive_lab(r#"{ min = 3, max = 10, until_cov = "10%" }"#);
    assert_eq!((lab.study.repeat, lab.study.adaptive.map(|a| a.max)), (3, Some(10)));
    let machine = scripted(&[100.0, 120.0, 100.0, 100.0]);
    let (id, summary, _) = lab.run(&machine, never());
    assert_eq!(summary.runs, 4, "{summary:?}");
    let (runs, why) = runs_and_reason(&lab, id);
    assert_eq!(runs, 4);
    assert_eq!(why, "4 runs: CoV 9.5%, at or below 10.0%");
    assert_eq!(lab.statuses(id)[0].1, CellStatus::Done);
    // Steady figures from the start: no extra run.
    let lab = adaptive_lab(r#"{ min = 3, max = 10, until_cov = "3%" }"#);
    let (id, _, _) = lab.run(&scripted(&[100.0, 101.0, 100.5]), never());
    assert_eq!(
        runs_and_reason(&lab, id),
        (3, "3 runs: CoV 0.5%, at or below 3.0%".to_string())
    );
}

#[test]
fn an_adaptive_repeat_stops_at_its_maximum() {
    let lab = adaptive_lab(r#"{ min = 2, max = 5, until_cov = "3%" }"#);
    let (id, summary, _) = lab.run(&scripted(&[100.0, 150.0, 100.0, 150.0, 100.0, 150.0]), never());
    assert_eq!(summary.runs, 5);
    let (runs, why) = runs_and_reason(&lab, id);
    assert_eq!(runs, 5);
    assert!(why.starts_with("5 runs, the most allowed: CoV "), "{why}");
}

#[test]
fn adaptive_repeats_are_refused_when_they_cannot_work() {
    let dir = tempfile::tempdir().unwrap();
    for (repeat, says) in [
        (r#"{ min = 1, max = 5, until_cov = "3%" }"#, "needs 2 runs at least"),
        (r#"{ min = 4, max = 3, until_cov = "3%" }"#, "max (3) is below min (4)"),
        (r#"{ max = 5 }"#, "needs until_cov"),
        (r#"{ max = 5, until_cov = "3" }"#, "must be above 0% and at most 100%"),
        (r#"{ max = 5, until_cov = "3%", budget = "0s" }"#, "a budget of 0"),
        (r#"{ max = 5, until_cov = "3%", runs = 4 }"#, "unknown key `runs`"),
        (r#""three""#, "repeat is a number of runs"),
        ("0", "repeat is a number of runs"),
    ] {
        let text = format!("name = \"a\"\nrepeat = {repeat}\n[[filesystem]]\ntype = \"ext4\"\n[[workload]]\nrun = {{ op = \"read\" }}\n");
        let e = Study::from_toml(&text, "a.toml", dir.path()).unwrap_err().to_string();
        assert!(e.starts_with("a.toml:2:"), "{repeat}: {e}");
        assert!(e.contains(says), "{repeat}: {e}");
    }
}

/// A native workload and sysbench as jobs of one, two and four ranks.
const RANKS: &str = r#"
name = "ranks"
drop_caches = false
fresh = "cell"
repeat = 2

[[filesystem]]
type = "ext4"

[[workload]]
name = "native"
run = { file = "reads.toml" }
mpi = { ranks = [1, 2, 4] }

[[workload]]
name = "sysbench"
sysbench = { file-test-mode = "seqwr", file-total-size = "256K", file-num = 2, events = 10, time = 0 }
mpi = { ranks = 2 }
"#;

#[test]
fn a_study_with_a_ranks_axis_has_a_cell_per_rank_count_and_a_run_per_cell_and_repeat() {
    let lab = Lab::new(RANKS);
    let cells = fslab_lab::matrix::expand(&lab.study, Form::Full);
    let labels: Vec<&str> = cells.iter().map(|c| c.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "ext4 native ranks=1",
            "ext4 native ranks=2",
            "ext4 native ranks=4",
            "ext4 sysbench"
        ],
        "one rank count is no axis"
    );
    let machine = Fake::new();
    let (id, summary, _) = lab.run(&machine, never());
    assert_eq!((summary.runs, summary.ok), (8, 8), "{summary:?}");
    // Every call of an MPI cell is a job (sysbench's prepare and cleanup too), and the tool
    // never sees the rank count.
    assert_eq!(machine.workers(), Vec::<String>::new(), "no call ran alone");
    for (ranks, jobs) in [(1, 2), (2, 2 + 2 * 3), (4, 2)] {
        assert_eq!(machine.count(&format!("job of {ranks} ")), jobs, "jobs of {ranks}");
    }
    let log = machine.log.lock().unwrap().clone();
    assert!(log.iter().all(|l| !l.contains("--ranks")), "{log:?}");
    let runs = lab.store.runs(id).unwrap();
    let stored = lab.store.cells(id).unwrap();
    for (cell, ranks) in stored.iter().zip([1u64, 2, 4, 2]) {
        assert_eq!(cell.status, CellStatus::Done, "{}: {:?}", cell.spec.label, cell.reason);
        let mine: Vec<_> = runs.iter().filter(|r| r.cell_id == cell.id).collect();
        assert_eq!(mine.len(), 2, "{}: one run per repeat", cell.spec.label);
        for r in mine {
            assert_eq!(r.environment["ranks"].as_u64(), Some(ranks));
            let command = r.environment["command"].as_str().unwrap();
            assert!(command.starts_with(&format!("mpirun -np {ranks} ")), "{command}");
        }
    }
    // The native workload reads 40 times on each rank: the job's run, 40 per rank.
    let native4 = runs.iter().find(|r| r.cell_id == stored[2].id).unwrap();
    let ops = native4.metrics.iter().find(|m| m.name == "ops/s").unwrap().value;
    assert!(ops > 0.0);
    let results = lab.store.result(native4.id).unwrap();
    assert_eq!(results[0].1.totals.ops, 4 * 40);
}

#[test]
fn mpi_cells_are_unsupported_where_the_machine_cannot_launch_them() {
    let lab = Lab::new(RANKS);
    let host = fslab_lab::machine::Host {
        exe: PathBuf::from("/nonexistent/fslab"),
        mpi: false,
    };
    let verdicts = lifecycle::preflight(&lab.study, Form::Full, &host).unwrap();
    for v in &verdicts {
        let v = v.as_deref().unwrap_or_default();
        assert!(v.contains("built without MPI") && v.contains("--features mpi"), "{v}");
    }
}

/// Seed 001's xfs with its log on a second device, ext4 with an external journal, and btrfs,
/// which has no log fslab can put elsewhere.
const EXTERNAL_LOGS: &str = r#"
name = "external logs"
drop_caches = false
fresh = "cell"
[device]
loop = { size = "1G" }
[[filesystem]]
type = "xfs"
mkfs = "-l size=64m,lazy-count=1 -d agcount=8"
mount = "noatime,logbufs=8"
fsck = true
log = { size = "64m" }
[[filesystem]]
type = "ext4"
fsck = true
log = { size = "32m" }
[[filesystem]]
type = "btrfs"
log = { size = "64m" }
[[workload]]
name = "native"
run = { file = "reads.toml" }
"#;

#[test]
fn an_external_log_is_made_beside_the_filesystem_named_to_mkfs_mount_and_fsck_and_stored() {
    let lab = Lab::new(EXTERNAL_LOGS);
    let machine = Fake::new();
    let verdicts = lifecycle::preflight(&lab.study, Form::Full, &machine).unwrap();
    assert_eq!(verdicts[..2], [None, None]);
    let why = verdicts[2].as_deref().unwrap_or_default();
    assert!(why.contains("fslab knows no external log for btrfs"), "{why}");

    let (id, summary, _) = lab.run(&machine, never());
    assert_eq!((summary.ok, summary.unsupported_cells), (2, 1));
    let log = machine.log.lock().unwrap().clone();
    let xfs_end = log.iter().position(|l| l.starts_with("fsck xfs")).unwrap();
    let xfs: Vec<&str> = log[..=xfs_end]
        .iter()
        .map(String::as_str)
        .filter(|l| !l.starts_with("worker") && !l.starts_with("clear"))
        .collect();
    assert_eq!(
        xfs[..7],
        [
            "attach 1073741824",
            "wipe /dev/fake0",
            "attach 67108864",
            "wipe /dev/fake1",
            "journal-device xfs /dev/fake1 -l size=64m,lazy-count=1 -d agcount=8",
            "mkfs xfs /dev/fake0",
            "options-of-mkfs -l size=64m,lazy-count=1 -d agcount=8 -l logdev=/dev/fake1",
        ],
        "{xfs:#?}"
    );
    assert!(xfs[7].starts_with("mount xfs "), "{xfs:#?}");
    assert_eq!(xfs[8], "options-of-mount noatime,logbufs=8,logdev=/dev/fake1");
    assert!(xfs[9].starts_with("umount "), "{xfs:#?}");
    assert_eq!(xfs[10], "fsck xfs log /dev/fake1");

    // ext4: a journal device of the block size mkfs is told, then -J device=.
    assert!(log.contains(&"attach 33554432".to_string()), "{log:#?}");
    assert!(log.contains(&"journal-device ext4 /dev/fake3 ".to_string()), "{log:#?}");
    assert!(
        log.contains(&"options-of-mkfs -b 4096 -J device=/dev/fake3".to_string()),
        "{log:#?}"
    );
    assert!(log.contains(&"options-of-mount ".to_string()), "{log:#?}");
    assert!(log.contains(&"fsck ext4 log /dev/fake3".to_string()), "{log:#?}");
    // btrfs: nothing made.
    assert_eq!(machine.count("mkfs btrfs"), 0);

    let cells = lab.store.cells(id).unwrap();
    assert_eq!(
        cells[0].spec.mkfs_options,
        "-l size=64m,lazy-count=1 -d agcount=8 (external log on a 64m loop image)"
    );
    assert_eq!(cells[1].spec.mkfs_options, "(external log on a 32m loop image)");
    assert_eq!(cells[2].status, CellStatus::Unsupported);
    let run = &lab.store.runs_of_cell(cells[0].id).unwrap()[0];
    assert_eq!(run.environment["log"], "/dev/fake1", "{}", run.environment);
    let steps = lab.store.steps(id).unwrap();
    let step = steps
        .iter()
        .find(|s| s.cell_id == cells[0].id && s.step.name == "log")
        .expect("a log step");
    assert_eq!(step.step.detail, "external log on a 64m loop image on /dev/fake1");
}

#[test]
fn a_log_on_a_block_device_is_refused_unless_named_for_destruction_and_confirmed() {
    let text = EXTERNAL_LOGS.replace(
        r#"log = { size = "64m" }
[[filesystem]]
type = "ext4""#,
        r#"log = { block = "/dev/fslab-no-such-log" }
[[filesystem]]
type = "ext4""#,
    );
    let lab = Lab::new(&text);
    let file = lab.dir.path().join("study.toml");
    std::fs::write(&file, &text).unwrap();
    let db = lab.dir.path().join("start.db");
    let e = match lifecycle::start(&Fake::new(), &db, &file, &lab.study, Form::Full, true) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("a log device not named for destruction was accepted"),
    };
    assert!(e.contains("/dev/fslab-no-such-log"), "{e}");
    assert!(e.contains("does not name it for destruction"), "{e}");
    assert!(!db.exists(), "nothing recorded");
}

#[test]
fn a_study_that_needs_root_says_why_and_records_nothing_when_fslab_is_not_root() {
    let shared = tempfile::tempdir().unwrap();
    let on_dir = ON_DIR.replace("SHARED", &shared.path().display().to_string());
    let cases = [
        (
            FIVE_TOOLS.to_string(),
            "a study formats and mounts filesystems on loop devices",
        ),
        (
            on_dir.replace("drop_caches = false", "drop_caches = true"),
            "this study drops the page cache before each run (drop_caches = true)",
        ),
    ];
    for (text, why) in cases {
        let lab = Lab::new(&text);
        let file = lab.dir.path().join("study.toml");
        std::fs::write(&file, &text).unwrap();
        let db = lab.dir.path().join("start.db");
        let machine = Fake {
            root: false,
            ..Fake::new()
        };
        let e = match lifecycle::start(&machine, &db, &file, &lab.study, Form::Full, true) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("started without root: {text}"),
        };
        assert_eq!(e, format!("{why}, which needs root: run it with sudo"));
        assert!(!db.exists(), "nothing recorded");
        // Only looked: which filesystem is mounted at the dir target.
        let log = machine.log.lock().unwrap().clone();
        assert!(
            log.iter().all(|l| l.starts_with("mounted_at ")),
            "nothing done: {log:?}"
        );
    }
}

/// This machine for real (loop images, mkfs, mount, fsck as root), but with each worker's
/// command run in this process, as the fake machine runs it: the lab's tests have no fslab
/// binary to start.
struct HostInProcess(fslab_lab::machine::Host);

impl Machine for HostInProcess {
    fn is_root(&self) -> bool {
        self.0.is_root()
    }
    fn support(&self, fs_type: &str) -> Result<(), LabError> {
        self.0.support(fs_type)
    }
    fn attach_image(&self, dir: &Path, size: u64) -> Result<Box<dyn Image>, LabError> {
        self.0.attach_image(dir, size)
    }
    fn wipe(&self, dev: &Path) -> Result<(), LabError> {
        self.0.wipe(dev)
    }
    fn mkfs(&self, dev: &Path, fs_type: &str, options: &str) -> Result<String, LabError> {
        self.0.mkfs(dev, fs_type, options)
    }
    fn mount(&self, dev: Option<&Path>, mnt: &Path, fs_type: &str, options: &str) -> Result<String, LabError> {
        self.0.mount(dev, mnt, fs_type, options)
    }
    fn umount(&self, mnt: &Path) -> Result<(), LabError> {
        self.0.umount(mnt)
    }
    fn umount_lazy(&self, mnt: &Path) {
        self.0.umount_lazy(mnt)
    }
    fn thaw(&self, mnt: &Path) {
        self.0.thaw(mnt)
    }
    fn mkfs_log(&self, log: &Path, fs_type: &str, options: &str) -> Result<String, LabError> {
        self.0.mkfs_log(log, fs_type, options)
    }
    fn fsck(&self, dev: &Path, fs_type: &str, log: Option<&Path>) -> Result<String, LabError> {
        self.0.fsck(dev, fs_type, log)
    }
    fn set_scheduler(&self, dev: &Path, name: &str) -> Result<String, LabError> {
        self.0.set_scheduler(dev, name)
    }
    fn set_iosched(
        &self,
        dev: &Path,
        tunables: &BTreeMap<String, String>,
    ) -> Result<BTreeMap<String, String>, LabError> {
        self.0.set_iosched(dev, tunables)
    }
    fn set_read_ahead_kb(&self, dev: &Path, kb: u64) -> Result<u64, LabError> {
        self.0.set_read_ahead_kb(dev, kb)
    }
    fn fill(&self, root: &Path, tree: &Tree, spec: &FillSpec) -> Result<FillReport, LabError> {
        self.0.fill(root, tree, spec)
    }
    fn age(&self, root: &Path, spec: &AgeSpec) -> Result<AgeReport, LabError> {
        self.0.age(root, spec)
    }
    fn run_worker(&self, args: &[String], _watch: &Watch) -> Result<Ended, LabError> {
        Ok(in_process(args))
    }
    fn clear_leftovers(&self, scratch: &Path) {
        self.0.clear_leftovers(scratch)
    }
}

/// The loop devices whose image lies beneath `dir`.
fn loops_under(dir: &Path) -> Vec<String> {
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    std::fs::read_dir("/sys/block")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let backing = std::fs::read_to_string(e.path().join("loop/backing_file")).ok()?;
            Path::new(backing.trim_end())
                .starts_with(&dir)
                .then(|| format!("{}: {}", e.file_name().to_string_lossy(), backing.trim_end()))
        })
        .collect()
}

#[test]
#[ignore = "system tier: root, loop devices, mkfs.xfs, mkfs.ext4, e2fsck, xfs_repair"]
fn ext4_and_xfs_with_an_external_log_mount_run_and_check_clean_and_leave_nothing() {
    fslab_testkit::require_root();
    for (tool, package) in [
        ("mkfs.xfs", "xfsprogs"),
        ("xfs_repair", "xfsprogs"),
        ("mkfs.ext4", "e2fsprogs"),
        ("mke2fs", "e2fsprogs"),
        ("e2fsck", "e2fsprogs"),
        ("wipefs", "util-linux"),
    ] {
        fslab_testkit::require_tool(tool, package);
    }
    let text = EXTERNAL_LOGS
        .replace("\n[[filesystem]]\ntype = \"btrfs\"\nlog = { size = \"64m\" }", "")
        .replace("size = \"1G\"", "size = \"512m\"");
    let lab = Lab::new(&text);
    assert_eq!(lab.study.filesystems.len(), 2);
    let machine = HostInProcess(fslab_lab::machine::Host {
        exe: PathBuf::from("/nonexistent/fslab"),
        mpi: false,
    });
    let (id, summary, _) = lab.run(&machine, never());
    assert_eq!((summary.ok, summary.runs), (2, 2), "{summary:?}");

    let cells = lab.store.cells(id).unwrap();
    let steps = lab.store.steps(id).unwrap();
    for cell in &cells {
        assert_eq!(cell.status, CellStatus::Done, "{}: {:?}", cell.spec.label, cell.reason);
        let step = |name: &str| {
            steps
                .iter()
                .find(|s| s.cell_id == cell.id && s.step.name == name)
                .unwrap_or_else(|| panic!("{}: no {name} step", cell.spec.label))
        };
        for name in ["log", "mkfs", "mount", "umount", "fsck"] {
            assert!(
                step(name).step.ok,
                "{} {name}: {}",
                cell.spec.label,
                step(name).step.detail
            );
        }
        let run = &lab.store.runs_of_cell(cell.id).unwrap()[0];
        assert_eq!(run.status, RunStatus::Ok, "{}: {:?}", cell.spec.label, run.error);
        let log = run.environment["log"].as_str().expect("the log's device");
        assert!(log.starts_with("/dev/loop"), "{log}");
        assert!(step("mkfs").step.detail.contains(log), "{}", step("mkfs").step.detail);
        match cell.spec.fs_type.as_str() {
            "xfs" => {
                // xfs reads back where its log is.
                let mount = &step("mount").step.detail;
                assert!(mount.contains(&format!("logdev={log}")), "{mount}");
                assert!(mount.contains("logbufs=8"), "{mount}");
            }
            _ => {
                let fsck = &step("fsck").step.detail;
                assert!(fsck.contains("Pass 5"), "{fsck}");
            }
        }
    }
    // Both images of each filesystem are detached and removed.
    assert_eq!(loops_under(lab.dir.path()), Vec::<String>::new());
    assert!(!lab
        .dir
        .path()
        .join("scratch")
        .join(format!("fslab-study-{id}"))
        .exists());
}

/// A study on a `[device] dir` target: the native workload as a job of two ranks over a
/// hostfile, and dbench alone.
const ON_DIR: &str = r#"
name = "on a shared dir"
drop_caches = false
fresh = "cell"
repeat = 2

[device]
dir = "SHARED"

[[filesystem]]
type = "nfs4"

[[workload]]
name = "native"
run = { file = "reads.toml" }
mpi = { ranks = 2, hostfile = "hosts" }

[[workload]]
name = "dbench"
dbench = { clients = 1, time = 1, loadfile = "LOADFILE" }
"#;

/// The files and directories directly in `dir`, sorted.
fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn on_a_dir_target_nothing_is_formatted_or_mounted_and_each_cell_runs_in_a_directory_the_lab_makes_and_removes() {
    let shared = tempfile::tempdir().unwrap();
    std::fs::write(shared.path().join("sentinel"), "not the lab's").unwrap();
    let lab = Lab::new(&ON_DIR.replace("SHARED", &shared.path().display().to_string()));
    // Not as root: a study that formats and mounts nothing needs no more than its user.
    let machine = Fake {
        root: false,
        ..Fake::new()
    };
    let (id, summary, _) = lab.run(&machine, never());
    assert_eq!((summary.runs, summary.ok), (4, 4), "{summary:?}");
    let log = machine.log.lock().unwrap().clone();
    for never in [
        "wipe",
        "mkfs",
        "mount ",
        "umount",
        "fsck",
        "scheduler",
        "read_ahead",
        "iosched",
        "attach",
    ] {
        assert!(!log.iter().any(|l| l.starts_with(never)), "{never} issued: {log:#?}");
    }
    let cells = lab.store.cells(id).unwrap();
    assert_eq!(cells.len(), 2);
    let made: Vec<String> = log
        .iter()
        .filter_map(|l| l.strip_prefix("mkdir ").map(String::from))
        .collect();
    let removed: Vec<String> = log
        .iter()
        .filter_map(|l| l.strip_prefix("rmdir ").map(String::from))
        .collect();
    let want: Vec<String> = cells
        .iter()
        .map(|c| {
            shared
                .path()
                .join(format!("fslab-on-a-shared-dir-{}", c.id))
                .display()
                .to_string()
        })
        .collect();
    assert_eq!(
        made, want,
        "fresh = \"cell\": one directory per cell, beneath the target"
    );
    assert_eq!(removed, want, "and each removed after its cell");
    // The job's ranks and the lone worker ran in the cell's directory, the same path on every host.
    let jobs: Vec<&String> = log.iter().filter(|l| l.starts_with("job of 2 ")).collect();
    assert_eq!(jobs.len(), 2, "{log:#?}");
    assert!(
        jobs.iter().all(|j| j.contains(&format!(" --dir {}", want[0]))),
        "{jobs:#?}"
    );
    let workers = machine.workers();
    assert!(
        !workers.is_empty() && workers.iter().all(|w| w.contains(&want[1])),
        "{workers:#?}"
    );
    assert_eq!(names_in(shared.path()), ["sentinel"], "nothing else left or touched");
    assert_eq!(
        std::fs::read_to_string(shared.path().join("sentinel")).unwrap(),
        "not the lab's"
    );

    let runs = lab.store.runs(id).unwrap();
    assert_eq!(runs.len(), 4);
    for r in &runs {
        assert_eq!(r.status, RunStatus::Ok);
        assert_eq!(r.environment["mounted_type"], "nfs4");
        assert_eq!(r.environment["mounted_source"], "server:/export");
        assert_eq!(r.environment["mount_options"], "rw,relatime,vers=4.2");
        assert_eq!(r.environment["device"], serde_json::Value::Null);
    }
    for c in &cells {
        assert_eq!(c.spec.fs_type, "nfs4");
        assert_eq!(c.spec.mkfs_options, "");
        assert_eq!(
            c.spec.mount_options,
            format!("existing directory {}", shared.path().display())
        );
    }
    let steps: Vec<String> = lab.store.steps(id).unwrap().into_iter().map(|s| s.step.name).collect();
    assert_eq!(steps, ["mkdir", "rmdir", "mkdir", "rmdir"]);
}

#[test]
fn on_a_dir_target_a_mounted_type_other_than_the_study_s_or_a_directory_already_there_runs_nothing() {
    let shared = tempfile::tempdir().unwrap();
    let lab = Lab::new(&ON_DIR.replace("SHARED", &shared.path().display().to_string()));
    let mut machine = Fake::new();
    machine.mounted_type = "tmpfs";
    let (id, summary, _) = lab.run(&machine, never());
    assert_eq!((summary.runs, summary.unsupported_cells), (0, 2), "{summary:?}");
    for (_, status, reason) in lab.statuses(id) {
        assert_eq!(status, CellStatus::Unsupported);
        let reason = reason.unwrap();
        assert!(
            reason.contains("is on a tmpfs filesystem, but the study's [[filesystem]] says type = \"nfs4\""),
            "{reason}"
        );
    }
    assert_eq!(machine.count("mkdir"), 0);
    assert_eq!(names_in(shared.path()), Vec::<String>::new());
    // The verdict comes before anything runs, in preflight, and the study is refused whole.
    let e = lifecycle::preflight(&lab.study, Form::Full, &machine).unwrap();
    assert!(
        e.iter().all(|v| v.as_deref().is_some_and(|v| v.contains("tmpfs"))),
        "{e:?}"
    );

    // A directory of the lab's name already there is not the lab's to use or remove.
    let lab = Lab::new(&ON_DIR.replace("SHARED", &shared.path().display().to_string()));
    let machine = Fake::new();
    let taken = shared.path().join("fslab-on-a-shared-dir-1");
    std::fs::create_dir(&taken).unwrap();
    std::fs::write(taken.join("theirs"), "x").unwrap();
    let (id, summary, _) = lab.run(&machine, never());
    assert_eq!(summary.ok, 2, "the other cell ran: {summary:?}");
    let runs = lab.store.runs(id).unwrap();
    let failed: Vec<_> = runs.iter().filter(|r| r.status == RunStatus::Failed).collect();
    assert_eq!(failed.len(), 2);
    for r in failed {
        let error = r.error.as_deref().unwrap();
        assert!(error.contains("already there"), "{error}");
    }
    assert_eq!(
        std::fs::read_to_string(taken.join("theirs")).unwrap(),
        "x",
        "left as it was"
    );
    assert_eq!(names_in(shared.path()), ["fslab-on-a-shared-dir-1"]);
}

#[test]
fn a_dir_target_that_is_missing_or_not_a_directory_is_refused_before_anything_runs() {
    let shared = tempfile::tempdir().unwrap();
    let file = shared.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    for (dir, says) in [
        (shared.path().join("missing"), "must be an existing directory"),
        (file, "not a directory"),
    ] {
        let lab = Lab::new(&ON_DIR.replace("SHARED", &dir.display().to_string()));
        let e = lifecycle::preflight(&lab.study, Form::Full, &Fake::new())
            .unwrap_err()
            .to_string();
        assert!(e.contains(&dir.display().to_string()) && e.contains(says), "{e}");
    }
}
