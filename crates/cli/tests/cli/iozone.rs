//! `fslab iozone` from the outside: seed 004's options at a small size, --json, --explain, exit
//! codes and messages for bad options, and what is left on disk.

use crate::common::fslab_in;
use fslab_testkit::{entries, Run, Tmpfs};
use serde_json::Value;
use std::path::Path;

/// Runs `fslab iozone ARGS` in `cwd`.
fn iozone(cwd: &Path, args: &[&str]) -> Run {
    fslab_in(Some(cwd), &[], &[&["iozone"], args].concat())
}

#[test]
fn seed_004_options_run_in_the_current_directory_and_keep_the_files() {
    let tmp = tempfile::tempdir().unwrap();
    let args = "-i 0 -i 1 -i 2 -t 4 -s 256k -r 64k -e -C -R -w --pause 0";
    let r = iozone(tmp.path(), &args.split(' ').collect::<Vec<_>>());
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    for name in [
        "initial writers",
        "rewriters",
        "readers",
        "re-readers",
        "random readers",
        "random writers",
    ] {
        assert!(
            r.stdout
                .contains(&format!("\tChildren see throughput for  4 {name} \t= ")),
            "{name}:\n{}",
            r.stdout
        );
        assert!(r
            .stdout
            .contains(&format!("\tParent sees throughput for  4 {name} \t= ")));
    }
    assert_eq!(r.stdout.matches("\tChild[3] xfer count = ").count(), 6);
    assert_eq!(r.stdout.matches("\tMin xfer \t\t\t\t\t= ").count(), 6);
    assert!(r.stdout.contains("\"Record size = 64 kBytes \"\n"));
    assert!(r.stdout.contains("\n\"   Random write \" "));
    assert!(r.stdout.contains("\tInclude fsync in write timing\n"));
    assert!(r
        .stdout
        .contains("\tCommand line used: iozone -i 0 -i 1 -i 2 -t 4 -s 256k -r 64k -e -C -R -w\n"));
    // -w: the files stay, whole, beneath the current directory.
    let dir = tmp.path().join("iozone");
    assert_eq!(entries(tmp.path()), ["iozone"]);
    for n in 0..4 {
        let len = std::fs::metadata(dir.join(format!("iozone.DUMMY.{n}"))).unwrap().len();
        assert_eq!(len, 256 * 1024);
    }
}

#[test]
fn attached_values_and_json() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("run");
    std::fs::create_dir(&d).unwrap();
    let r = iozone(
        tmp.path(),
        &[
            "-i0",
            "-i1",
            "-t2",
            "-s128k",
            "-r16k",
            "-x",
            "--json",
            "--pause=0",
            "--dir",
            d.to_str().unwrap(),
        ],
    );
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    let v: Value =
        serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("not one JSON document ({e}):\n{}", r.stdout));
    assert_eq!(v["schema_version"], 2);
    assert_eq!(v["tool"], "iozone");
    let figures = &v["figures"];
    assert_eq!(figures["unit"], "kB");
    let subs = figures["subtests"].as_array().unwrap();
    let phases = v["phases"].as_array().unwrap();
    assert_eq!((subs.len(), phases.len()), (4, 4));
    for (k, (s, phase)) in subs.iter().zip(phases).enumerate() {
        let f = &s["figures"];
        assert_eq!(f["min_xfer"], 128.0);
        assert_eq!(phase["name"], s["name"]);
        // Each sub-test's Children see is a metric by its name, the first the headline.
        assert_eq!(v["metrics"][k]["name"], s["name"]);
        assert_eq!(v["metrics"][k]["value"], f["children_see"]);
        assert_eq!(v["metrics"][k]["headline"], k == 0);
        let threads = phase["result"]["threads"].as_array().unwrap();
        assert_eq!(threads.len(), 2);
        let sum: f64 = threads
            .iter()
            .map(|t| t["bytes"].as_f64().unwrap() / 1024.0 / t["secs"].as_f64().unwrap())
            .sum();
        assert!((sum - f["children_see"].as_f64().unwrap()).abs() < 1e-6 * sum);
    }
    assert_eq!(figures["report"][0][0], "Initial write");
    // Without -w the files are removed; nothing was written in the current directory.
    assert!(entries(&d).is_empty(), "{:?}", entries(&d));
    assert_eq!(entries(tmp.path()), ["run"]);
}

#[test]
fn bad_options_exit_2_naming_the_option_and_make_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    for (args, says) in [
        (vec!["-i", "0", "-t", "2", "-9"], "unknown option `-9`"),
        (vec!["-i", "0", "-t", "2", "--frob"], "unknown option `--frob`"),
        (
            vec!["-i", "0", "-t", "2", "-s", "12q"],
            "option -s: `12q` is not a size",
        ),
        (vec!["-i", "11", "-t", "2"], "option -i 11: pwritev/preadv"),
        (
            vec!["-i", "4", "-t", "2"],
            "option -i 4: record rewrite is not offered with -t",
        ),
        (vec!["-t", "1", "-F", "nodir/f"], "option -F: `nodir/f`: its directory"),
        (vec!["-t", "2", "-F", "a"], "-F names 1 file(s) but -t 2"),
        (
            vec!["-t", "2", "-F", "a", "/etc/iozone.x"],
            "option -F: `/etc/iozone.x` is not beneath",
        ),
        (vec!["-t", "1", "-F", "../up"], "option -F: `../up`"),
        (vec!["-t", "1", "-s", "4k", "-r", "64k"], "larger than the file size"),
    ] {
        let r = iozone(tmp.path(), &args);
        assert_eq!(r.code, 2, "{args:?}: stdout {} stderr {}", r.stdout, r.stderr);
        assert!(r.stderr.contains(says), "{args:?}: {}", r.stderr);
        assert!(r.stdout.is_empty(), "{args:?}: {}", r.stdout);
    }
    assert!(entries(tmp.path()).is_empty());
    let r = iozone(tmp.path(), &["-i", "0", "--dir", "/nonexistent/dir"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
}

#[test]
fn a_directory_fslab_did_not_make_is_left_alone() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join("iozone")).unwrap();
    std::fs::write(tmp.path().join("iozone/precious"), "keep me").unwrap();
    let r = iozone(tmp.path(), &["-i", "0", "-t", "2", "-s", "64k", "--pause", "0"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("precious"), "{}", r.stderr);
    assert_eq!(entries(&tmp.path().join("iozone")), ["precious"]);
}

#[test]
fn explain_prints_toml_and_runs_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let r = iozone(
        tmp.path(),
        &[
            "-i",
            "0",
            "-i",
            "2",
            "-t",
            "16",
            "-s",
            "2000m",
            "-r",
            "64k",
            "-e",
            "--explain",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout.matches("\n# ---- run ").count(), 4);
    assert!(r.stdout.contains("op = \"seqwrite\""));
    assert!(r.stdout.contains("sync = \"fsync\""));
    assert!(r.stdout.contains("stonewall = true"));
    assert!(r.stdout.contains("prefix = \"iozone.DUMMY.\""));
    assert!(entries(tmp.path()).is_empty());
}

#[test]
fn f_writes_exactly_the_files_named_among_the_users_own() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join("d")).unwrap();
    std::fs::write(tmp.path().join("d/mine"), "keep").unwrap();
    let r = iozone(
        tmp.path(),
        &[
            "-i", "0", "-i", "9", "-t", "2", "-s", "64k", "-r", "16k", "-w", "--pause", "0", "-F", "d/one", "two",
        ],
    );
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    assert!(
        r.stdout.contains("Children see throughput for  2 pwrite writers \t= "),
        "{}",
        r.stdout
    );
    assert_eq!(entries(tmp.path()), [".fslab-fileset", "d", "two"]);
    assert_eq!(entries(&tmp.path().join("d")), [".fslab-fileset", "mine", "one"]);
    for f in ["d/one", "two"] {
        assert_eq!(std::fs::metadata(tmp.path().join(f)).unwrap().len(), 64 * 1024, "{f}");
    }
    // Without -w the named files go at the end; the user's file and directory stay.
    let r = iozone(
        tmp.path(),
        &[
            "-i", "0", "-t", "2", "-s", "64k", "-r", "16k", "--pause", "0", "-F", "d/one", "two",
        ],
    );
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    assert_eq!(entries(tmp.path()), ["d"]);
    assert_eq!(entries(&tmp.path().join("d")), ["mine"]);
}

#[test]
fn help_prints_the_usage() {
    let tmp = tempfile::tempdir().unwrap();
    let r = iozone(tmp.path(), &["-h"]);
    assert_eq!(r.code, 0);
    assert!(r.stdout.starts_with("Usage: fslab iozone"));
}

#[test]
fn automatic_mode_prints_the_table() {
    let tmp = tempfile::tempdir().unwrap();
    let r = iozone(
        tmp.path(),
        &["-a", "-n", "64k", "-g", "128k", "-y", "32k", "-q", "64k", "-i", "0"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("\tAuto Mode\n"));
    assert!(
        r.stdout.contains("              kB  reclen    write  rewrite\n"),
        "{}",
        r.stdout
    );
    let rows: Vec<&str> = r
        .stdout
        .lines()
        .filter(|l| l.split_whitespace().count() == 4 && l.trim_start().starts_with(char::is_numeric))
        .collect();
    assert_eq!(rows.len(), 4, "{}", r.stdout);
    assert!(rows[0].starts_with("              64      32 "));
    assert!(rows[3].starts_with("             128      64 "));
    assert!(entries(tmp.path()).is_empty());
}

#[test]
#[ignore = "system tier: root, to mount a 256 KiB tmpfs to fill"]
fn a_run_that_meets_an_error_exits_1_and_says_why() {
    let fs = Tmpfs::mount("256k");
    let r = iozone(
        fs.path(),
        &["-i", "0", "-i", "1", "-t", "2", "-s", "1m", "-r", "64k", "--pause", "0"],
    );
    assert_eq!(r.code, 1, "stdout {} stderr {}", r.stdout, r.stderr);
    assert!(r.stderr.contains("No space left on device"), "{}", r.stderr);
    // The initial writers' block is printed; the runs after the failed one are not made.
    assert!(r.stdout.contains("initial writers"));
    assert!(!r.stdout.contains("rewriters"));
    assert!(!r.stdout.contains("iozone test complete."));
    // Without -w, what was written is removed.
    assert!(entries(fs.path()).is_empty(), "{:?}", entries(fs.path()));
}
