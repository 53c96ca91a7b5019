//! `fslab sysbench` from the outside: prepare, run and cleanup with sysbench's syntax, the text
//! sysbench prints, `--json`, `--explain`, the old option spellings, and the exit codes of bad
//! input.

mod common;

use common::{fslab_in, Run};
use serde_json::Value;
use std::path::Path;

type Out = Run;

/// Runs `fslab sysbench ARGS` in `cwd`.
fn sysbench(cwd: &Path, args: &[&str]) -> Out {
    fslab_in(Some(cwd), &[], &[&["sysbench"], args].concat())
}

fn ok(cwd: &Path, args: &[&str]) -> Out {
    let out = sysbench(cwd, args);
    assert_eq!(out.code, 0, "fslab sysbench {args:?}: {}{}", out.stdout, out.stderr);
    out
}

fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().expect("a temporary directory")
}

const SET: [&str; 3] = ["fileio", "--file-num=4", "--file-total-size=1M"];

fn with(extra: &[&'static str]) -> Vec<&'static str> {
    let mut a = SET.to_vec();
    a.extend(extra);
    a
}

#[test]
fn prepare_run_cleanup_in_the_current_directory() {
    let d = tempdir();
    let out = ok(d.path(), &with(&["prepare"]));
    assert!(out
        .stdout
        .contains("\n4 files, 256Kb each, 1Mb total\nCreating files for the test...\n"));
    assert!(out
        .stdout
        .contains("Creating file test_file.3\n1048576 bytes written in "));
    for i in 0..4 {
        let f = d.path().join(format!("sysbench/test_file.{i}"));
        assert_eq!(
            std::fs::metadata(&f).map(|m| m.len()).ok(),
            Some(262144),
            "{}",
            f.display()
        );
    }

    let out = ok(
        d.path(),
        &with(&[
            "--file-test-mode=rndrw",
            "--events=500",
            "--time=0",
            "--threads=2",
            "run",
        ]),
    );
    let s = &out.stdout;
    for line in [
        "\nRunning the test with following options:\nNumber of threads: 2\n",
        "\n4 files, 256KiB each\n1MiB total file size\nBlock size 16KiB\nNumber of IO requests: 500\n",
        "\nDoing random r/w test\nInitializing worker threads...\n\nThreads started!\n\n\nFile operations:\n    reads/s: ",
        "\nGeneral statistics:\n    total time:                          ",
        "\n    total number of events:              500\n",
        "\n         95th percentile:   ",
        "\nThreads fairness:\n    events (avg/stddev):           250.0000/0.00\n",
    ] {
        assert!(s.contains(line), "no {line:?} in:\n{s}");
    }
    assert!(s.ends_with("\n\n"));

    let out = ok(d.path(), &["fileio", "cleanup"]);
    assert!(out.stdout.ends_with("\nRemoving test files...\n"));
    assert!(!d.path().join("sysbench").exists());
}

#[test]
fn json_is_one_document_with_sysbenchs_figures() {
    let d = tempdir();
    ok(d.path(), &with(&["--dir", ".", "prepare", "--json"]));
    let out = ok(
        d.path(),
        &with(&[
            "--file-test-mode=rndwr",
            "--file-fsync-freq=5",
            "--events=27",
            "--time=0",
            "--json",
            "run",
        ]),
    );
    let v: Value = serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}:\n{}", out.stdout));
    assert_eq!(v["schema_version"], 1);
    let c = &v["classic"];
    // Three rounds of 5 writes and a burst of 4 fsyncs (one per file) make the 27 events; then
    // the 4 end fsyncs, counted in fsyncs but not in events.
    let (writes, fsyncs, events) = (c["writes"].as_u64(), c["fsyncs"].as_u64(), c["events"].as_u64());
    assert_eq!((writes, fsyncs, events), (Some(15), Some(16), Some(27)));
    assert_eq!(c["end_fsyncs"], 4);
    assert!(c["latency_ms"]["percentile_value"].is_number());
}

#[test]
fn explain_prints_the_workload_and_runs_nothing() {
    let d = tempdir();
    let out = ok(d.path(), &with(&["--file-test-mode=seqrewr", "--explain", "run"]));
    for part in [
        "prefix = \"test_file.\"",
        "files = 4",
        "op = \"rewrite\"",
        "scope = \"shared\"",
        "wrap = true",
    ] {
        assert!(out.stdout.contains(part), "no {part} in:\n{}", out.stdout);
    }
    assert!(!d.path().join("sysbench").exists());
}

#[test]
fn the_old_spellings_work_on_the_command_line() {
    let d = tempdir();
    ok(
        d.path(),
        &["--test=fileio", "--file-num=4", "--file-total-size=1M", "prepare"],
    );
    let out = ok(
        d.path(),
        &[
            "--test=fileio",
            "--num-threads=2",
            "--max-time=0",
            "--max-requests=200",
            "--file-num=4",
            "--file-total-size=1M",
            "--file-test-mode=rndrd",
            "run",
        ],
    );
    assert!(out.stdout.contains("Number of threads: 2\n"));
    assert!(out.stdout.contains("    total number of events:              200\n"));
}

#[test]
fn bad_options_name_the_option_exit_2_and_make_nothing() {
    let d = tempdir();
    for (args, says) in [
        (
            with(&["--threads=abc", "prepare"]),
            "--threads: `abc` is not a whole number",
        ),
        (with(&["--file-io-mode=fast", "prepare"]), "--file-io-mode: `fast`"),
        (
            with(&["--no-such-option=1", "prepare"]),
            "--no-such-option: unknown option",
        ),
        (with(&["--file-test-mode=rndrd", "--time=0", "run"]), "--time:"),
        (with(&["run"]), "--file-test-mode: missing"),
        (vec!["oltp", "run"], "fileio test only"),
    ] {
        let out = sysbench(d.path(), &args);
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains(says), "{args:?}: {}", out.stderr);
        assert!(out.stdout.is_empty(), "{args:?} printed {}", out.stdout);
    }
    assert_eq!(
        std::fs::read_dir(d.path()).unwrap().count(),
        0,
        "bad input created something"
    );
}

#[test]
fn run_without_prepare_exits_2_and_says_to_prepare() {
    let d = tempdir();
    let out = sysbench(d.path(), &with(&["--file-test-mode=rndrd", "run"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("sysbench/test_file.0"), "{}", out.stderr);
    assert!(
        out.stderr.contains("--file-num=4 --file-total-size=1m prepare"),
        "{}",
        out.stderr
    );
    assert!(!d.path().join("sysbench").exists());
}

#[test]
fn report_interval_prints_one_line_per_interval() {
    let d = tempdir();
    ok(d.path(), &with(&["prepare"]));
    let out = ok(
        d.path(),
        &with(&["--file-test-mode=rndrd", "--time=3", "--report-interval=1", "run"]),
    );
    let lines: Vec<&str> = out.stdout.lines().filter(|l| l.starts_with("[ ")).collect();
    // As sysbench: [ 1s ] and [ 2s ], none at the end of the run.
    assert_eq!(lines.len(), 2, "{}", out.stdout);
    assert!(lines[0].starts_with("[ 1s ] reads: "), "{}", lines[0]);
    assert!(lines[1].contains(" MiB/s writes: 0.00 MiB/s fsyncs: 0.00/s latency (ms,95%): "));
}

#[test]
fn help_lists_the_options() {
    let d = tempdir();
    for args in [vec!["fileio", "help"], vec!["--help"]] {
        let out = ok(d.path(), &args);
        assert!(out.stdout.contains("--file-test-mode=STRING"), "{}", out.stdout);
    }
}
