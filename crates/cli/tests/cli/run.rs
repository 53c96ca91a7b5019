//! `fslab run` from the outside: exit codes, what goes to stdout and stderr, --json, --explain,
//! errors during a run, and the temporary run directory.

use crate::common::{fslab, fslab_in, s, strace_fslab};
use fslab_engine::Workload;
use fslab_testkit::{entries, tempdir, Run, Tmpfs};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// What `fslab run --json` printed, read back.
trait Outcome {
    fn outcome(&self) -> Value;
    fn json(&self) -> Value;
}

impl Outcome for Run {
    /// The outcome `--json` printed.
    fn outcome(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not one JSON document ({e}):\n{}", self.stdout))
    }

    /// The engine's result of the outcome's one phase.
    fn json(&self) -> Value {
        let v = self.outcome();
        assert_eq!(v["phases"].as_array().map(Vec::len), Some(1), "one phase in {v}");
        v["phases"][0]["result"].clone()
    }
}

fn fslab_env(args: &[&str], env: &[(&str, &Path)]) -> Run {
    fslab_in(None, env, args)
}

const READS: &str = r#"name = "reads"
seed = 42

[stop]
ops = 20

[[fileset]]
name = "data"
files = 2
size = "256k"

[[group]]
name = "readers"
fileset = "data"

[[group.op]]
op = "read"
size = "8k"
bs = "4k"
"#;

fn write_file(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn workloads_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../workloads")
}

#[test]
fn json_prints_one_json_document_and_nothing_else() {
    let tmp = tempdir();
    let file = write_file(tmp.path(), "reads.toml", READS);
    let dir = tmp.path().join("run");
    std::fs::create_dir(&dir).unwrap();
    let r = fslab(&["run", s(&file), "--dir", s(&dir), "--json"]);
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    let o = r.outcome();
    assert_eq!(o["schema_version"], 2, "schema_version in {o}");
    assert_eq!(o["tool"], "run");
    assert_eq!(o["phases"][0]["name"], "run");
    assert_eq!(o["metrics"][0]["name"], "throughput");
    assert_eq!(o["metrics"][0]["headline"], true);
    let v = r.json();
    assert_eq!(v["status"], "ok");
    assert_eq!(v["stopped_by"], "ops");
    assert_eq!(v["totals"]["ops"], 20);
    assert_eq!(v["totals"]["bytes_read"], 20 * 8192);
    assert_eq!(v["ops"][0]["op"], "read");
    assert_eq!(v["ops"][0]["count"], 20);
    // It is an Outcome, whole, with the RunResult in it.
    let back = fslab_classic::Outcome::from_json(&r.stdout).expect("the JSON is an Outcome");
    assert_eq!(back.phases[0].result.totals.ops, 20);
    assert_eq!(back.phases[0].result.seed, 42);
    assert_eq!(
        r.stdout.trim_end().lines().last(),
        Some("}"),
        "anything after the JSON document?"
    );
    assert!(r.stdout.starts_with('{'), "anything before the JSON document?");
}

/// `--explain` of `args` printed as TOML, loaded back.
fn explained(args: &[&str]) -> (Workload, String) {
    let r = fslab(args);
    assert_eq!(r.code, 0, "fslab {args:?}: {}", r.stderr);
    let w = Workload::from_toml(&r.stdout, "explained.toml")
        .unwrap_or_else(|e| panic!("the explained workload is refused: {e}\n{}", r.stdout));
    (w, r.stdout)
}

#[test]
fn explain_of_every_shipped_workload_parses_back_into_the_same_workload() {
    let mut seen = 0;
    for entry in std::fs::read_dir(workloads_dir()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        let dir = tempdir();
        let (w, text) = explained(&["run", s(&path), "--explain", "--dir", s(dir.path())]);
        let want = Workload::from_file(&path).unwrap();
        assert_eq!(w, want, "{} explained as:\n{text}", path.display());
        assert_eq!(
            entries(dir.path()),
            Vec::<String>::new(),
            "--explain made files in --dir"
        );
        seen += 1;
    }
    assert!(seen >= 5);
}

#[test]
fn explain_shows_the_overrides() {
    let tmp = tempdir();
    let file = write_file(tmp.path(), "reads.toml", READS);
    let (w, text) = explained(&[
        "run",
        s(&file),
        "--explain",
        "--time",
        "3s",
        "--ramp",
        "500ms",
        "--seed",
        "5",
    ]);
    let mut want = Workload::from_file(&file).unwrap();
    want.stop.time = Some("3s".parse().unwrap());
    want.stop.ramp = "500ms".parse().unwrap();
    want.seed = Some(5);
    assert_eq!(w, want, "explained as:\n{text}");
}

#[test]
fn explain_of_an_ad_hoc_run_is_the_workload_that_runs() {
    let args = [
        "run",
        "--op",
        "randrw",
        "--bs",
        "8k",
        "--size",
        "1m",
        "--threads",
        "2",
        "--rwmixread",
        "75",
        "--seed",
        "3",
    ];
    let (w, text) = explained(&[&args[..], &["--explain"]].concat());
    // The printed TOML is the workload's own form.
    assert_eq!(w.to_toml(), text);
    assert_eq!(w.seed, Some(3));
    assert_eq!(w.total_threads(), 2);
    assert_eq!(w.filesets.len(), 1);
    assert_eq!(w.filesets[0].size.max(), 1 << 20);
    let ops: Vec<_> = w.groups[0]
        .ops
        .iter()
        .map(|o| (o.op.name(), o.weight, o.block_size()))
        .collect();
    assert_eq!(ops, vec![("read", 75, 8192), ("write", 25, 8192)]);
    // And it is what the run reports it ran.
    let dir = tempdir();
    let r = fslab(&[&args[..], &["--json", "--dir", s(dir.path())]].concat());
    assert_eq!(r.code, 0, "{}", r.stderr);
    let ran: Workload = serde_json::from_value(r.json()["workload"].clone()).expect("the run's workload");
    assert_eq!(ran, w, "--explain printed:\n{text}");
}

#[test]
fn the_io_uring_wait_flags_reach_the_workload_and_need_io_uring() {
    let ring = ["run", "--op", "randread", "--engine", "io_uring", "--iodepth", "4"];
    let (w, text) = explained(&[&ring[..], &["--spin", "30us", "--spin-yield", "false", "--explain"]].concat());
    let u = w.groups[0].uring;
    assert_eq!(
        (u.spin.map(|s| s.get()), u.spin_yield),
        (Some(std::time::Duration::from_micros(30)), Some(false)),
        "{text}"
    );
    let (w, _) = explained(&[&ring[..], &["--explain"]].concat());
    assert_eq!((w.groups[0].uring.spin, w.groups[0].uring.spin_yield), (None, None));
    let r = fslab(&["run", "--op", "randread", "--spin-yield", "true", "--explain"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("[group.uring] needs engine = \"io_uring\""),
        "{}",
        r.stderr
    );
}

#[test]
fn explain_of_a_sequential_ad_hoc_run_parses_back() {
    let (w, text) = explained(&[
        "run",
        "--op",
        "write",
        "--bs",
        "64k",
        "--size",
        "4m",
        "--threads",
        "3",
        "--time",
        "2s",
        "--explain",
    ]);
    assert_eq!(w.to_toml(), text);
    assert_eq!(w.stop.time, Some("2s".parse().unwrap()));
    assert_eq!(w.groups[0].ops[0].op.name(), "seqwrite");
}

fn malformed_exits_2(text: &str, line: usize, column: usize, says: &str) {
    let tmp = tempdir();
    let file = write_file(tmp.path(), "bad.toml", text);
    let dir = tmp.path().join("run");
    std::fs::create_dir(&dir).unwrap();
    let r = fslab(&["run", s(&file), "--dir", s(&dir), "--json"]);
    assert_eq!(r.code, 2, "a malformed workload: stderr {}", r.stderr);
    let at = format!("{}:{line}:{column}", file.display());
    assert!(r.stderr.contains(&at), "stderr should name `{at}`: {}", r.stderr);
    assert!(r.stderr.contains(says), "stderr should say `{says}`: {}", r.stderr);
    assert_eq!(r.stdout, "", "nothing on stdout");
    assert_eq!(
        entries(&dir),
        Vec::<String>::new(),
        "a refused workload made files in --dir"
    );
}

#[test]
fn a_toml_syntax_error_exits_2_with_its_place() {
    malformed_exits_2(&READS.replace("files = 2", "files = = 2"), 9, 9, "expected");
}

#[test]
fn an_unknown_field_exits_2_with_its_place() {
    malformed_exits_2(
        &READS.replace("name = \"readers\"", "name = \"readers\"\nthredas = 4"),
        14,
        1,
        "thredas",
    );
}

#[test]
fn an_invalid_workload_exits_2_with_its_place() {
    malformed_exits_2(
        &READS.replace("fileset = \"data\"", "fileset = \"nope\""),
        14,
        11,
        "no fileset is named `nope`",
    );
}

#[test]
fn usage_errors_exit_2() {
    let r = fslab(&["run"]);
    assert_eq!(r.code, 2, "no workload and no --op: {}", r.stderr);
    assert!(r.stderr.contains("--op"), "{}", r.stderr);
    let tmp = tempdir();
    let file = write_file(tmp.path(), "reads.toml", READS);
    let r = fslab(&["run", s(&file), "--op", "randread"]);
    assert_eq!(r.code, 2, "a file and --op: {}", r.stderr);
    let r = fslab(&["run", "--op", "randread", "--bs", "4q"]);
    assert_eq!(r.code, 2, "a bad size: {}", r.stderr);
    let r = fslab(&["run", s(&tmp.path().join("missing.toml"))]);
    assert_eq!(r.code, 2, "a missing workload file: {}", r.stderr);
    assert!(r.stderr.contains("missing.toml"), "{}", r.stderr);
}

#[test]
fn a_run_directory_reached_through_a_symlink_out_is_refused_with_exit_2() {
    let tmp = tempdir();
    let outside = tempdir();
    let file = write_file(tmp.path(), "reads.toml", READS);
    let dir = tmp.path().join("run");
    std::fs::create_dir(&dir).unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.join("data")).unwrap();
    let r = fslab(&["run", s(&file), "--dir", s(&dir)]);
    assert!(
        r.stderr.contains("leads out of the run directory"),
        "stderr: {}",
        r.stderr
    );
    assert_eq!(entries(outside.path()), Vec::<String>::new());
    assert_eq!(r.code, 2, "a refused path is bad input: stderr {}", r.stderr);
}

/// Creates files of 400k on a 1m filesystem: the third cannot be written.
fn filler(stop: &str) -> String {
    format!(
        r#"name = "filler"
seed = 1

[stop]
{stop}

[[fileset]]
name = "data"
files = 0
size = "400k"

[[group]]
name = "g"
fileset = "data"

[[group.op]]
op = "create"
bs = "64k"
"#
    )
}

/// The files the setup of a fileset of `files` empty files over `dirs` directories creates, from
/// strace: per directory descriptor, the threads that made its files and the ids in the order
/// they were made.
fn setup_creates(files: u32, dirs: u32) -> std::collections::BTreeMap<String, (Vec<String>, Vec<u64>)> {
    let tmp = tempdir();
    let work = tmp.path().join("w");
    std::fs::create_dir(&work).unwrap();
    let text = format!(
        "name = \"setup\"\nseed = 1\n[stop]\nops = 1\n[[fileset]]\nname = \"data\"\nfiles = {files}\n\
         dirs = {dirs}\nsize = 0\n[[group]]\nname = \"g\"\nfileset = \"data\"\n[[group.op]]\nop = \"stat\"\n"
    );
    let w = write_file(tmp.path(), "w.toml", &text);
    let calls = strace_fslab(
        None,
        &tmp.path().join("strace.log"),
        "openat",
        &["run", s(&w), "--dir", s(&work)],
    );
    let mut by_dir = std::collections::BTreeMap::<String, (Vec<String>, Vec<u64>)>::new();
    for (tid, call) in calls {
        let Some(args) = call.strip_prefix("openat(").filter(|_| call.contains("O_EXCL")) else {
            continue;
        };
        let (dir, rest) = args.split_once(", \"").unwrap();
        let Some(id) = rest
            .strip_prefix('f')
            .and_then(|r| r.split('"').next()?.parse::<u64>().ok())
        else {
            continue;
        };
        let (tids, ids) = by_dir.entry(dir.to_string()).or_default();
        if !tids.contains(&tid) {
            tids.push(tid);
        }
        ids.push(id);
    }
    by_dir
}

#[test]
#[ignore = "system tier: strace"]
fn empty_files_are_made_by_one_thread_per_directory_in_order() {
    fslab_testkit::require_tool("strace", "strace");
    // One directory: one thread makes every file, f0 first.
    let one = setup_creates(60, 0);
    assert_eq!(one.len(), 1, "{one:?}");
    let (tids, ids) = one.values().next().unwrap();
    assert_eq!(tids.len(), 1, "threads creating in one directory: {tids:?}");
    assert_eq!(*ids, (0..60).collect::<Vec<u64>>());
    // Three directories: file k in directory k % 3, each directory's files made in order by
    // one thread.
    let three = setup_creates(60, 3);
    assert_eq!(three.len(), 3, "{three:?}");
    let mut firsts = Vec::new();
    for (dir, (tids, ids)) in &three {
        assert_eq!(tids.len(), 1, "directory {dir} had its files made by {tids:?}");
        let k = ids[0];
        assert_eq!(*ids, (k..60).step_by(3).collect::<Vec<u64>>(), "directory {dir}");
        firsts.push(k);
    }
    firsts.sort();
    assert_eq!(firsts, vec![0, 1, 2]);
}

/// The offsets, in records of 4 KiB, of the `pread64` calls of a run of 128 one-record reads of
/// one 256 KiB file (64 records), with `shuffle` as given.
fn read_offsets(shuffle: bool) -> Vec<u64> {
    let tmp = tempdir();
    let work = tmp.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let text = format!(
        "name = \"r\"\nseed = 5\nstop = {{ ops = 128 }}\n[[fileset]]\nname = \"data\"\nfiles = 1\n\
         size = \"256k\"\n[[group]]\nname = \"g\"\nfileset = \"data\"\n[[group.op]]\nop = \"read\"\n\
         bs = \"4k\"\nshuffle = {shuffle}\n"
    );
    let w = write_file(tmp.path(), "w.toml", &text);
    let calls = strace_fslab(
        None,
        &tmp.path().join("strace.log"),
        "pread64",
        &["run", s(&w), "--dir", s(&work)],
    );
    // The reads of the file: a record each (the loader's reads of libraries are not).
    calls
        .iter()
        .filter(|(_, call)| call.contains(", 4096, "))
        .map(|(_, call)| {
            let offset = call
                .rsplit_once(", ")
                .and_then(|(_, o)| o.split(')').next()?.parse::<u64>().ok());
            let offset = offset.unwrap_or_else(|| panic!("no offset in {call}"));
            assert_eq!(offset % 4096, 0, "{call}");
            offset / 4096
        })
        .collect()
}

#[test]
#[ignore = "system tier: strace"]
fn shuffled_reads_visit_each_record_once_per_pass() {
    fslab_testkit::require_tool("strace", "strace");
    let offsets = read_offsets(true);
    assert_eq!(offsets.len(), 128, "{offsets:?}");
    for (pass, records) in offsets.chunks(64).enumerate() {
        let mut sorted = records.to_vec();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..64).collect::<Vec<u64>>(), "pass {pass}: {records:?}");
    }
    assert_ne!(offsets[..64], offsets[64..], "each pass is shuffled anew");
    // Drawn one by one, 64 reads of 64 records repeat some (all distinct: p < 1e-26).
    let drawn = read_offsets(false);
    assert_eq!(drawn.len(), 128);
    let distinct: std::collections::BTreeSet<u64> = drawn[..64].iter().copied().collect();
    assert!(distinct.len() < 64, "{drawn:?}");
}

#[test]
#[ignore = "system tier: root, to mount a 1 MiB tmpfs to fill"]
fn a_setup_that_fills_the_filesystem_removes_what_it_made_and_the_next_run_goes_on() {
    let fs = Tmpfs::mount("1m");
    let tmp = tempdir();
    let set = |files: u32, size: &str| {
        format!(
            "name = \"setup\"\nseed = 1\n[stop]\nops = 1\n[[fileset]]\nname = \"data\"\nfiles = {files}\n\
             dirs = 0\nsize = \"{size}\"\n[[group]]\nname = \"g\"\nfileset = \"data\"\n[[group.op]]\nop = \"stat\"\n"
        )
    };
    std::fs::write(fs.path().join("notes.txt"), "the user's").unwrap();
    // Four files of 400 kB do not fit 1 MiB: the setup fails on the third.
    let big = write_file(tmp.path(), "big.toml", &set(4, "400k"));
    let r = fslab(&["run", s(&big), "--dir", s(fs.path())]);
    assert_eq!(r.code, 1, "stderr: {}", r.stderr);
    assert!(r.stderr.contains("No space left on device"), "{}", r.stderr);
    // What it made is gone, nothing else: no file without the marker that says it is fslab's.
    assert!(
        entries(&fs.path().join("data")).is_empty(),
        "{:?}",
        entries(&fs.path().join("data"))
    );
    assert_eq!(
        std::fs::read_to_string(fs.path().join("notes.txt")).unwrap(),
        "the user's"
    );
    // So the next run sets its fileset up instead of refusing files fslab "did not make".
    let small = write_file(tmp.path(), "small.toml", &set(2, "100k"));
    let r = fslab(&["run", s(&small), "--dir", s(fs.path())]);
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
}

#[test]
#[ignore = "system tier: root, to mount a 1 MiB tmpfs to fill"]
fn a_run_that_fills_the_filesystem_exits_1_and_names_its_first_error() {
    let fs = Tmpfs::mount("1m");
    let tmp = tempdir();
    let file = write_file(tmp.path(), "filler.toml", &filler("ops = 10"));
    let r = fslab(&["run", s(&file), "--dir", s(fs.path()), "--json"]);
    assert_eq!(r.code, 1, "stderr: {}", r.stderr);
    assert!(
        r.stderr.contains("No space left on device"),
        "stderr names the error: {}",
        r.stderr
    );
    assert!(
        r.stderr.contains("1 error(s)"),
        "stderr counts the errors: {}",
        r.stderr
    );
    let v = r.json();
    assert_eq!(v["status"], "failed");
    assert_eq!(v["stopped_by"], "error");
    let e = &v["first_error"];
    assert_eq!(e["op"], "create", "{e}");
    assert!(
        e["message"]
            .as_str()
            .is_some_and(|m| m.contains("No space left on device")),
        "{e}"
    );
    assert_eq!(e["total_errors"], 1, "{e}");
    assert_eq!(v["ops"][0]["errors"], 1);
    assert!(
        v["ops"][0]["count"].as_u64().is_some_and(|c| (1..10).contains(&c)),
        "{}",
        v["ops"][0]
    );
}

#[test]
#[ignore = "system tier: root, to mount a 1 MiB tmpfs to fill"]
fn the_first_error_carries_its_errno() {
    let fs = Tmpfs::mount("1m");
    let tmp = tempdir();
    let file = write_file(tmp.path(), "filler.toml", &filler("ops = 10"));
    let r = fslab(&["run", s(&file), "--dir", s(fs.path()), "--json"]);
    assert_eq!(r.code, 1, "stderr: {}", r.stderr);
    let e = &r.json()["first_error"];
    assert_eq!(e["errno"], 28, "the errno of ENOSPC: {e}");
}

#[test]
#[ignore = "system tier: root, to mount a 1 MiB tmpfs to fill"]
fn continue_on_error_goes_on_counting_errors() {
    let fs = Tmpfs::mount("1m");
    let tmp = tempdir();
    let file = write_file(tmp.path(), "filler.toml", &filler("time = \"1s\""));
    let r = fslab(&["run", s(&file), "--dir", s(fs.path()), "--json", "--continue-on-error"]);
    assert_eq!(r.code, 1, "a run with errors fails: {}", r.stderr);
    let v = r.json();
    assert_eq!(v["stopped_by"], "time", "the errors did not stop the run");
    let errors = v["totals"]["errors"].as_u64().unwrap();
    assert!(errors > 1, "only {errors} error counted");
    assert_eq!(v["ops"][0]["errors"], errors);
    assert_eq!(v["first_error"]["total_errors"], errors);
    assert!(
        r.stderr.contains(&format!("{errors} error(s)")),
        "stderr counts {errors} errors: {}",
        r.stderr
    );
    assert!(r.stderr.contains("No space left on device"), "{}", r.stderr);
}

#[test]
fn without_dir_the_run_happens_in_a_temporary_directory_that_is_removed() {
    let tmp = tempdir();
    let env = [("TMPDIR", tmp.path())];
    let adhoc = [
        "run",
        "--op",
        "randread",
        "--bs",
        "4k",
        "--size",
        "1m",
        "--threads",
        "1",
    ];
    let r = fslab_env(&adhoc, &env);
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    // 1m of 4k random reads: 256 operations.
    assert!(
        r.stdout
            .lines()
            .any(|l| l.split_whitespace().take(2).eq(["read", "256"])),
        "the summary has no `read 256` row:\n{}",
        r.stdout
    );
    assert!(r.stdout.contains("total: 256 ops"), "{}", r.stdout);
    assert_eq!(
        entries(tmp.path()),
        Vec::<String>::new(),
        "the temporary run directory was left behind"
    );

    let r = fslab_env(&[&adhoc[..], &["--json"]].concat(), &env);
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    let v = r.json();
    let dir = PathBuf::from(v["dir"].as_str().unwrap());
    assert!(
        dir.starts_with(tmp.path()),
        "the run ran in {} instead of beneath $TMPDIR",
        dir.display()
    );
    assert!(!dir.exists(), "{} was not removed", dir.display());
    assert_eq!(v["totals"]["bytes_read"], 1 << 20);
    assert_eq!(entries(tmp.path()), Vec::<String>::new());
}

/// A study's worker (FSLAB_PROGRESS set, --json) reports each second's progress on stderr, as
/// lines the lab reads back, and only the outcome on stdout.
#[test]
fn a_study_s_worker_reports_its_progress_on_stderr() {
    let dir = tempdir();
    let args = [
        "run", "--op", "randread", "--size", "1m", "--time", "2s", "--json", "--dir",
    ];
    let run = fslab_env(
        &[&args[..], &[s(dir.path())]].concat(),
        &[("FSLAB_PROGRESS", Path::new("1"))],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let lines: Vec<fslab_lab::worker::Live> = run.stderr.lines().filter_map(fslab_lab::worker::Live::parse).collect();
    // Before the run, it may say how far it has laid out its one file of 1 MiB.
    let (layout, seconds): (Vec<_>, Vec<_>) = lines.into_iter().partition(|l| l.phase == "layout");
    assert!(
        layout.iter().all(|l| l
            .laid_out
            .is_some_and(|d| d.planned_files == 1 && d.planned_bytes == 1 << 20)),
        "{layout:?}"
    );
    assert!(!seconds.is_empty(), "no progress line in {:?}", run.stderr);
    assert!(seconds.iter().all(|l| l.laid_out.is_none()), "{seconds:?}");
    assert!(
        seconds
            .iter()
            .all(|l| l.phase == "run" && l.planned == Some(std::time::Duration::from_secs(2))),
        "{seconds:?}"
    );
    assert!(seconds.iter().any(|l| l.ops_per_sec > 0.0), "{seconds:?}");
    let _ = run.outcome();
    // Without it, nothing of the kind.
    let run = fslab(&[&args[..], &[s(dir.path())]].concat());
    assert!(!run.stderr.contains("fslab-progress"), "{}", run.stderr);
}
