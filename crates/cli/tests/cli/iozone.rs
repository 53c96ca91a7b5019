//! `fslab iozone` from the outside: seed 004's options at a small size, --json, --explain, exit
//! codes and messages for bad options, and what is left on disk.

use crate::common::{fslab_in, strace_fslab};
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
        // IOzone's spacing: `for  4` or `for 4`, one tab before `=` or two (readers).
        let (n, gap) = match name {
            "initial writers" | "rewriters" => (" 4", " \t"),
            "readers" => (" 4", " \t\t"),
            _ => ("4", " \t"),
        };
        assert!(
            r.stdout
                .contains(&format!("\tChildren see throughput for {n} {name}{gap}= ")),
            "{name}:\n{}",
            r.stdout
        );
        assert!(r
            .stdout
            .contains(&format!("\tParent sees throughput for {n} {name}{gap}= ")));
    }
    assert_eq!(r.stdout.matches("\tChild[3] xfer count = ").count(), 6);
    assert_eq!(r.stdout.matches("\tMin xfer \t\t\t\t\t= ").count(), 6);
    assert!(r.stdout.contains("\"Record size = 64 kBytes \"\n"));
    assert!(r.stdout.contains("\n\"   Random write \" "));
    assert!(r.stdout.contains("\tInclude fsync in write timing\n"));
    assert!(r
        .stdout
        .contains("\tCommand line used: iozone -i 0 -i 1 -i 2 -t 4 -s 256k -r 64k -e -C -R -w\n"));
    assert!(r.stdout.starts_with("\tIozone: Performance Test of File I/O\n"));
    assert!(r.stdout.contains("\tTime Resolution = 0.000001 seconds.\n"));
    // -w: the files stay, whole, in the current directory, as IOzone's.
    assert_eq!(
        entries(tmp.path()),
        [
            ".fslab-fileset",
            "iozone.DUMMY.0",
            "iozone.DUMMY.1",
            "iozone.DUMMY.2",
            "iozone.DUMMY.3"
        ]
    );
    for n in 0..4 {
        let len = std::fs::metadata(tmp.path().join(format!("iozone.DUMMY.{n}")))
            .unwrap()
            .len();
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
        // Each child's kB ÷ its own time less IOzone's clock resolution (a microsecond).
        let sum: f64 = threads
            .iter()
            .map(|t| t["bytes"].as_f64().unwrap() / 1024.0 / (t["secs"].as_f64().unwrap() - 1e-6).max(1e-6))
            .sum();
        assert!((sum - f["children_see"].as_f64().unwrap()).abs() < 1e-6 * sum);
    }
    assert_eq!(figures["report"][0][0], "Initial write");
    // Without -w the files are removed; nothing was written in the current directory.
    assert!(entries(&d).is_empty(), "{:?}", entries(&d));
    assert_eq!(entries(tmp.path()), ["run"]);
}

#[test]
fn a_range_of_children_runs_every_sub_test_for_each_number_in_turn() {
    let tmp = tempfile::tempdir().unwrap();
    let args = [
        "-l", "1", "-u", "3", "-i", "0", "-i", "1", "-s", "128k", "-r", "64k", "-R", "--pause", "0",
    ];
    let r = iozone(tmp.path(), &args);
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    let s = &r.stdout;
    // IOzone 3.487's text: the range, then the first number; each number's blocks after a line
    // saying what each child writes.
    assert!(
        s.contains("\tMin process = 1 \n\tMax process = 3 \n\tThroughput test with 1 process\n"),
        "{s}"
    );
    assert_eq!(
        s.matches("\tEach process writes a 128 kByte file in 64 kByte records\n")
            .count(),
        3
    );
    let blocks: Vec<&str> = s
        .lines()
        .filter_map(|l| l.strip_prefix("\tChildren see throughput for "))
        .map(|l| l.split(" \t").next().unwrap().trim_start())
        .collect();
    let want = [1, 2, 3]
        .iter()
        .flat_map(|n| ["initial writers", "rewriters", "readers", "re-readers"].map(|t| format!("{n} {t}")));
    assert_eq!(blocks, want.collect::<Vec<_>>(), "{s}");
    assert!(
        s.contains("\n\n\tEach process writes"),
        "the numbers are apart as in IOzone:\n{s}"
    );
    // -R: a column per number of children.
    let row = s
        .lines()
        .find(|l| l.starts_with("\"  Initial write \""))
        .expect("the report's first row");
    assert_eq!(row.split_whitespace().count(), 4 + 3, "{row}");

    let mut json = args.to_vec();
    json.push("--json");
    let r = iozone(tmp.path(), &json);
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["figures"]["children"], serde_json::json!([1, 2, 3]));
    let subs = v["figures"]["subtests"].as_array().unwrap();
    assert_eq!(subs.len(), 12);
    for (k, sub) in subs.iter().enumerate() {
        let n = k as u64 / 4 + 1;
        assert_eq!(sub["children"], n);
        assert!(
            sub["name"].as_str().unwrap().starts_with(&format!("{n} ")),
            "{}",
            sub["name"]
        );
        assert_eq!(v["phases"][k]["result"]["threads"].as_array().unwrap().len() as u64, n);
        assert_eq!(v["metrics"][k]["name"], sub["name"]);
    }
    assert_eq!(v["figures"]["report"][3][1].as_array().unwrap().len(), 3);
    // Each number's last run removed its files.
    assert!(entries(tmp.path()).is_empty(), "{:?}", entries(tmp.path()));
}

#[test]
fn cpu_utilization_is_reported_per_block_child_and_report() {
    let tmp = tempfile::tempdir().unwrap();
    let r = iozone(
        tmp.path(),
        &[
            "-i", "0", "-i", "1", "-t", "2", "-s", "4m", "-r", "64k", "-+u", "-C", "-R", "--pause", "0",
        ],
    );
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    let s = &r.stdout;
    assert!(s.contains("\tCPU utilization Resolution = 0.000 seconds.\n\tCPU utilization Excel chart enabled\n"));
    // A CPU line after each block's Min xfer, then a blank line and the children's lines, which
    // end with their wall time, CPU time and percentage.
    let cpu_lines: Vec<&str> = s
        .lines()
        .filter(|l| l.starts_with("\tCPU ") && l.contains("Wall time"))
        .collect();
    assert_eq!(cpu_lines.len(), 4, "{s}");
    assert!(
        cpu_lines[0].starts_with("\tCPU Utilization: Wall time "),
        "{}",
        cpu_lines[0]
    );
    for line in &cpu_lines {
        let percent: f64 = line
            .rsplit_once("CPU utilization")
            .unwrap()
            .1
            .trim_end_matches('%')
            .trim()
            .parse()
            .unwrap();
        // Two processes working: some CPU, at most two CPUs' worth.
        assert!(percent > 0.0 && percent <= 201.0, "{line}");
    }
    assert_eq!(s.matches("%\n\n\tChild[0] xfer count = ").count(), 4, "{s}");
    let children: Vec<&str> = s.lines().filter(|l| l.starts_with("\tChild[")).collect();
    assert_eq!(children.len(), 8);
    assert!(
        children
            .iter()
            .all(|l| l.contains(", wall=") && l.contains(", cpu=") && l.contains(", %=")),
        "{children:?}"
    );
    let report = s
        .split("\"CPU utilization report Y-axis is type of test X-axis is number of processes\"\n")
        .nth(1);
    let report = report.unwrap_or_else(|| panic!("no CPU report:\n{s}"));
    assert!(
        report.starts_with("\"Record size = 64 kBytes \"\n\"Output is in CPU%\"\n\n\"  Initial write \" "),
        "{report}"
    );

    // --json: the CPU times behind them; the children's summed over the longest wall time.
    let r = iozone(
        tmp.path(),
        &[
            "-i", "0", "-t", "2", "-s", "4m", "-r", "64k", "-+u", "--json", "--pause", "0",
        ],
    );
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let f = &v["figures"]["subtests"][0]["figures"];
    let kids = f["per_child"].as_array().unwrap();
    let sum: f64 = kids.iter().map(|c| c["cpu"]["cpu_secs"].as_f64().unwrap()).sum();
    assert!(
        sum > 0.0 && (f["cpu"]["cpu_secs"].as_f64().unwrap() - sum).abs() < 1e-9,
        "{f}"
    );
    let longest = kids
        .iter()
        .map(|c| c["cpu"]["wall_secs"].as_f64().unwrap())
        .fold(0.0, f64::max);
    assert_eq!(f["cpu"]["wall_secs"].as_f64().unwrap(), longest);

    // Automatic mode: a CPU report per test after the others.
    let r = iozone(
        tmp.path(),
        &["-a", "-n", "64k", "-g", "128k", "-q", "8k", "-i", "0", "-+u", "-R"],
    );
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    for title in ["Writer", "Re-writer"] {
        let head = format!(
            "\n\"{title} CPU utilization report (Zero values should be ignored)\"\n        \"4\"  \"8\"\n\"64\"  "
        );
        assert!(r.stdout.contains(&head), "no {title} CPU report:\n{}", r.stdout);
    }
    assert!(r.stdout.find("\"Re-writer report\"") < r.stdout.find("\"Writer CPU utilization report"));
    assert!(entries(tmp.path()).is_empty(), "{:?}", entries(tmp.path()));
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
            "-i 4 (record rewrite) runs only without -t: nothing is left to run",
        ),
        (vec!["-t", "1", "-F", "nodir/f"], "option -F: `nodir/f`: its directory"),
        (vec!["-t", "2", "-F", "a"], "-F names 1 file(s) but -t 2"),
        (
            vec!["-t", "2", "-F", "a", "/etc/iozone.x"],
            "option -F: `/etc/iozone.x` is not beneath",
        ),
        (vec!["-t", "1", "-F", "../up"], "option -F: `../up`"),
        (vec!["-t", "1", "-s", "4k", "-r", "64k"], "larger than the file size"),
        (
            vec!["-l", "3", "-u", "2"],
            "option -u: the most children (2) is below the fewest (-l 3)",
        ),
        (vec!["-t", "2", "-u", "4"], "options -l/-u and -t cannot be combined"),
        (vec!["-u", "3", "-F", "a", "b"], "-F names 2 file(s) but -u 3"),
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
fn a_file_fslab_did_not_make_is_left_alone() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("iozone.DUMMY.1"), "keep me").unwrap();
    std::fs::write(tmp.path().join("precious"), "keep me too").unwrap();
    let r = iozone(tmp.path(), &["-i", "0", "-t", "2", "-s", "64k", "--pause", "0"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("iozone.DUMMY.1"), "{}", r.stderr);
    assert_eq!(entries(tmp.path()), ["iozone.DUMMY.1", "precious"]);
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("iozone.DUMMY.1")).unwrap(),
        "keep me"
    );
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
    assert!(r.stdout.contains("engine = \"seek\""));
    assert!(r.stdout.contains("stonewall = true"));
    assert!(r.stdout.contains("raise_before_sync = true"));
    assert!(r.stdout.contains("prefix = \"iozone.DUMMY.\""));
    // The deliberate differences from IOzone come first, as comments.
    assert!(
        r.stdout
            .starts_with("# fslab iozone makes IOzone 3.487's system calls for each test.")
            && r.stdout.contains("# - -c: the close stays after the timing"),
        "{}",
        r.stdout
    );
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
        r.stdout.contains("Children see throughput for 2 pwrite writers \t= "),
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
    // IOzone's whole header whatever runs, and the tests that did not run left blank.
    assert!(
        r.stdout.contains("              kB  reclen    write  rewrite    read    reread    read     write     read   rewrite      read   fwrite frewrite    fread  freread\n"),
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
    assert!(rows.iter().all(|r| r.len() == 142), "{rows:?}");
    assert!(r.stdout.contains("\n\niozone test complete.\n"), "{}", r.stdout);
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

/// The calls `fslab iozone ARGS` makes in `cwd` on the children's files (iozone.DUMMY.N),
/// traced with strace: (call, count), with `sync` counted apart; and the opens of those files.
fn traced(cwd: &Path, args: &[&str]) -> (std::collections::BTreeMap<String, usize>, Vec<String>) {
    let (calls, opens, _) = traced_on(cwd, args, "iozone.DUMMY.");
    (calls, opens)
}

/// For a test that traces fslab iozone: strace must be there, and an empty run directory (kept
/// while the returned TempDir lives) whose parent takes strace's log.
fn strace_dir() -> (tempfile::TempDir, std::path::PathBuf) {
    fslab_testkit::require_tool("strace", "strace");
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path().join("run");
    std::fs::create_dir(&cwd).unwrap();
    (tmp, cwd)
}

/// The calls of kinds `trace` that `fslab iozone ARGS` makes in `cwd`, whole (a call strace
/// split around another thread's is joined again), in order.
fn strace_iozone(cwd: &Path, trace: &str, args: &[&str]) -> Vec<String> {
    let args: Vec<&str> = std::iter::once("iozone").chain(args.iter().copied()).collect();
    strace_fslab(Some(cwd), &cwd.join("..").join("strace.log"), trace, &args)
        .into_iter()
        .map(|(_, call)| call)
        .collect()
}

/// As [`traced`], on the files whose names start with `file`; also the calls on them in order,
/// by name (`openat` for an open).
fn traced_on(
    cwd: &Path,
    args: &[&str],
    file: &str,
) -> (std::collections::BTreeMap<String, usize>, Vec<String>, Vec<String>) {
    let args: Vec<&str> = std::iter::once("iozone").chain(args.iter().copied()).collect();
    let trace = "openat,close,read,write,pread64,pwrite64,lseek,fsync,sync,syncfs";
    let whole = strace_fslab(Some(cwd), &cwd.join("..").join("strace.log"), trace, &args);
    // The descriptors open on the children's files, by process (each child has its own table).
    let mut fds = std::collections::BTreeSet::new();
    let mut opens = Vec::new();
    let mut order = Vec::new();
    let mut calls = std::collections::BTreeMap::new();
    let result = |c: &str| {
        c.rsplit_once("= ")
            .and_then(|r| r.1.split(' ').next()?.parse::<i32>().ok())
    };
    for (pid, call) in &whole {
        let Some((name, rest)) = call.split_once('(') else {
            continue;
        };
        let fd = rest.split([',', ')']).next().and_then(|f| f.trim().parse::<i32>().ok());
        let fd = fd.map(|fd| (pid, fd));
        match name {
            "openat" => {
                let Some(new) = result(call) else { continue };
                if call.contains(&format!("\"{file}")) {
                    opens.push(call.clone());
                    order.push(name.to_string());
                    fds.insert((pid, new));
                } else {
                    fds.remove(&(pid, new));
                }
            }
            "close" if fd.is_some_and(|fd| fds.remove(&fd)) => order.push(name.to_string()),
            "close" => {}
            "sync" | "syncfs" => *calls.entry(name.to_string()).or_insert(0) += 1,
            _ if fd.is_some_and(|fd| fds.contains(&fd)) => {
                *calls.entry(name.to_string()).or_insert(0) += 1;
                order.push(name.to_string());
            }
            _ => {}
        }
    }
    (calls, opens, order)
}

#[test]
#[ignore = "system tier: needs strace"]
fn automatic_mode_makes_iozones_calls_and_primes_its_readers() {
    let (_tmp, cwd) = strace_dir();
    // IOzone 3.487's one process, 4 records of 64 kB: each test opens iozone.tmp and fsyncs it
    // before its clock; the readers (read_perf_test) then read one record and seek back to 0,
    // untimed; the records; and an fsync before close.
    let (calls, _, order) = traced_on(&cwd, &["-s", "256k", "-r", "64k", "-i", "0", "-i", "1"], "iozone.tmp");
    assert_eq!(order, automatic_calls(true), "{calls:?}");
    // IOzone's begin() calls sync() twice before each file and record size, and nothing else
    // syncs: not the setup, not between the tests.
    assert_eq!(calls.get("sync"), Some(&2), "{calls:?}");
    assert_eq!(calls.get("syncfs"), None, "{calls:?}");
}

/// IOzone 3.487's one process makes its file as write_perf_test() does: first its sanity check
/// (`open(O_CREAT|O_WRONLY, 0)`, `stat`, `ftruncate(0)`, `close`, `stat`, `unlink`), then
/// `creat(0640)` and `close`, then the open the test writes through. Traced from IOzone 3.487:
/// the same calls in that order, without fslab's `O_EXCL|O_NOFOLLOW|O_CLOEXEC`.
#[test]
#[ignore = "system tier: needs strace"]
fn one_process_makes_its_file_after_iozones_sanity_check() {
    let (_tmp, cwd) = strace_dir();
    let calls = strace_iozone(
        &cwd,
        "openat,newfstatat,statx,ftruncate,close,unlink,unlinkat",
        &["-s", "64k", "-r", "64k", "-i", "0", "-i", "1"],
    );
    let name = "\"iozone.tmp\"";
    let first = calls
        .iter()
        .position(|c| c.starts_with("openat(") && c.contains(name))
        .expect("an open");
    let writer = calls
        .iter()
        .position(|c| c.starts_with("openat(") && c.contains(name) && c.contains("O_RDWR"))
        .expect("the writer's open");
    // The calls on the file until the writer opens it, each by its name or its descriptor.
    let mut fd = String::new();
    let mut seen = Vec::new();
    for c in &calls[first..=writer] {
        let on_fd =
            !fd.is_empty() && (c.starts_with(&format!("ftruncate({fd},")) || c.starts_with(&format!("close({fd})")));
        if c.contains(name) || on_fd {
            if c.starts_with("openat(") {
                fd = c.rsplit("= ").next().unwrap().trim().to_string();
            }
            if c.starts_with("close(") {
                fd.clear();
            }
            seen.push(c.split_whitespace().collect::<Vec<_>>().join(" "));
        }
    }
    let kinds: Vec<&str> = seen.iter().map(|c| c.split('(').next().unwrap()).collect();
    let stat = if kinds.contains(&"statx") {
        "statx"
    } else {
        "newfstatat"
    };
    assert_eq!(
        kinds,
        [
            "openat",
            "newfstatat",
            "ftruncate",
            "close",
            "newfstatat",
            "unlinkat",
            "openat",
            "close",
            "openat"
        ]
        .map(|k| if k == "newfstatat" { stat } else { k }),
        "{seen:#?}"
    );
    assert!(
        seen[0].contains("O_WRONLY|O_CREAT") && !seen[0].contains("O_TRUNC") && seen[0].contains(", 000) ="),
        "the sanity check's open: {}",
        seen[0]
    );
    assert!(seen[2].ends_with(", 0) = 0"), "{}", seen[2]);
    assert!(
        seen[6].contains("O_WRONLY|O_CREAT") && seen[6].contains("O_TRUNC") && seen[6].contains(", 0640)"),
        "creat(0640): {}",
        seen[6]
    );
    assert!(!seen[8].contains("O_CREAT"), "{}", seen[8]);
}

/// Automatic mode keeps its file from one test to the next, and fslab checks the kept file
/// before each: with a `statx()` that asks for no timestamps, since a `stat()` would have the
/// kernel mark the file's change time as seen and the next write stamp it anew, inside the
/// timing, where IOzone makes no such check. IOzone's own `stat()`s (its sanity check) stay.
#[test]
#[ignore = "system tier: needs strace"]
fn a_kept_file_is_checked_without_asking_for_its_times() {
    let (_tmp, cwd) = strace_dir();
    let args = [
        "-a", "-n", "64k", "-g", "64k", "-y", "64k", "-q", "64k", "-i", "0", "-i", "1",
    ];
    let calls = strace_iozone(&cwd, "newfstatat,statx", &args);
    let on_file: Vec<&String> = calls.iter().filter(|c| c.contains("\"iozone.tmp\"")).collect();
    let stats = on_file.iter().filter(|c| c.starts_with("newfstatat(")).count();
    assert_eq!(stats, 2, "only the sanity check's stat()s: {on_file:#?}");
    // The rewrite, the read and the re-read find the file kept, each after a check of it.
    let found: Vec<&&String> = on_file
        .iter()
        .filter(|c| c.starts_with("statx(") && c.contains("stx_size=65536"))
        .collect();
    assert!(found.len() >= 3, "{on_file:#?}");
    for c in on_file.iter().filter(|c| c.starts_with("statx(")) {
        let mask = c.split(", ").nth(3).unwrap_or_default();
        assert!(
            mask.contains("STATX_SIZE") && !mask.contains("TIME") && !mask.contains("BASIC_STATS"),
            "{c}"
        );
    }
}

#[test]
#[ignore = "system tier: needs strace"]
fn o_opens_o_sync_where_iozone_does() {
    let (_tmp, cwd) = strace_dir();
    let (_, opens, _) = traced_on(
        &cwd,
        &["-s", "256k", "-r", "64k", "-i", "0", "-i", "1", "-i", "2", "-o"],
        "iozone.tmp",
    );
    // The measurements' opens, in order (the setup's O_EXCL one aside): write and rewrite
    // (write_perf_test, O_RDWR|O_SYNC), read and re-read (read_perf_test: O_RDONLY, without
    // O_SYNC unless -+r), random read and random write (random_perf_test: O_RDWR|O_SYNC|O_CREAT
    // both).
    let opens: Vec<&String> = opens.iter().filter(|o| !o.contains("O_EXCL")).collect();
    let flags: Vec<(bool, bool, bool)> = opens
        .iter()
        .map(|o| (o.contains("O_RDWR"), o.contains("O_SYNC"), o.contains("O_CREAT")))
        .collect();
    let want = [
        (true, true, false),
        (true, true, false),
        (false, false, false),
        (false, false, false),
        (true, true, true),
        (true, true, true),
    ];
    assert_eq!(flags, want, "{opens:#?}");
}

/// The calls on `iozone.tmp` of automatic mode's `-s 256k -r 64k -i 0 -i 1` (write, rewrite,
/// read, re-read of 4 records), with or without the fsync before each close: each test opens
/// the file and fsyncs it before its clock; the readers first read one record and seek back.
/// The setup makes the file first, as IOzone's write_perf_test() does: its sanity check (open,
/// close, unlink), then creat() and close.
fn automatic_calls(close_fsync: bool) -> Vec<String> {
    let sync: &[&str] = if close_fsync { &["fsync"] } else { &[] };
    let writer = [
        &["openat", "fsync", "write", "write", "write", "write"][..],
        sync,
        &["close"],
    ]
    .concat();
    let reader = [
        &["openat", "fsync", "read", "lseek", "read", "read", "read", "read"][..],
        sync,
        &["close"],
    ]
    .concat();
    [
        &["openat", "close", "openat", "close"][..],
        &writer,
        &writer,
        &reader,
        &reader,
    ]
    .concat()
    .into_iter()
    .map(String::from)
    .collect()
}

/// What a traced call returned, as a number (`-1` for a failure, whose errno follows it).
fn returned(call: &str) -> Option<i64> {
    call.rsplit("= ")
        .next()
        .and_then(|r| r.split(' ').next()?.trim().parse().ok())
}

/// The stride read (`-i 5`) walks the file as IOzone 3.487's read_stride_perf_test does: record
/// 0, then `-j` records on each time, starting again one record further in when the next
/// would reach the last record. The records below are what IOzone read under strace for these
/// options (64 records, stride 4).
#[test]
#[ignore = "system tier: needs strace"]
fn the_stride_read_walks_the_records_as_iozone_does() {
    let (_tmp, cwd) = strace_dir();
    let calls = strace_iozone(
        &cwd,
        "openat,read,lseek",
        &["-s", "256k", "-r", "4k", "-i", "0", "-i", "5", "-j", "4"],
    );
    // The records the stride reader's descriptor (the last read-only open of the file) reads.
    let opened = calls
        .iter()
        .rposition(|c| c.contains("\"iozone.tmp\", O_RDONLY"))
        .expect("the stride reader's open");
    let fd = returned(&calls[opened]).expect("a descriptor");
    let on_fd = format!("({fd}, ");
    let mut pos = 0;
    let mut records = Vec::new();
    for c in calls[opened + 1..].iter().filter(|c| c.contains(&on_fd)) {
        match (c.split('(').next(), returned(c)) {
            (Some("lseek"), Some(to)) => pos = to,
            (Some("read"), Some(n)) if n > 0 => {
                records.push(pos / 4096);
                pos += n;
            }
            _ => {}
        }
    }
    let iozone: Vec<i64> = [
        (0..=60).step_by(4).collect::<Vec<_>>(),
        (1..=61).step_by(4).collect(),
        (2..=58).step_by(4).collect(),
        (3..=59).step_by(4).collect(),
        vec![4, 8],
    ]
    .concat();
    assert_eq!(records, iozone);
}

/// The backward read (`-i 3`) makes IOzone 3.487's calls, seen under strace for the same
/// options: `lseek(-1 record, SEEK_END)`, then each record read and `lseek(-2 records,
/// SEEK_CUR)` back to the one before it, the last of which fails before the start of the file.
/// One process reads backward twice, each time on a descriptor of its own; a throughput child
/// once.
#[test]
#[ignore = "system tier: needs strace"]
fn the_backward_read_seeks_as_iozone_does() {
    let once = [
        "lseek -16384 SEEK_END = 49152",
        "read 16384 = 16384",
        "lseek -32768 SEEK_CUR = 32768",
        "read 16384 = 16384",
        "lseek -32768 SEEK_CUR = 16384",
        "read 16384 = 16384",
        "lseek -32768 SEEK_CUR = 0",
        "read 16384 = 16384",
        "lseek -32768 SEEK_CUR = -1 EINVAL (Invalid argument)",
    ];
    for (args, file, passes) in [
        (&["-s", "64k", "-r", "16k", "-i", "0", "-i", "3"][..], "iozone.tmp", 2),
        (
            &["-t", "1", "-s", "64k", "-r", "16k", "-i", "0", "-i", "3"][..],
            "iozone.DUMMY.0",
            1,
        ),
    ] {
        let (_tmp, cwd) = strace_dir();
        let args: Vec<&str> = std::iter::once("iozone").chain(args.iter().copied()).collect();
        let calls = strace_fslab(
            Some(&cwd),
            &cwd.join("..").join("strace.log"),
            "openat,read,lseek",
            &args,
        );
        // The calls on each read-only descriptor of the file, by the process that opened it, in
        // order, without the data.
        let mut seen = Vec::new();
        for (k, (pid, c)) in calls.iter().enumerate() {
            if !c.contains(&format!("\"{file}\", O_RDONLY")) {
                continue;
            }
            let on_fd = format!("({}, ", returned(c).expect("a descriptor"));
            let mut pass = Vec::new();
            let same = |(p, _): &&(String, String)| p == pid;
            for (_, c) in calls[k + 1..]
                .iter()
                .filter(same)
                .take_while(|(_, c)| !c.starts_with("openat("))
            {
                if !c.contains(&on_fd) {
                    continue;
                }
                // strace pads the result (`lseek(3, ...)     = 0`); a read's data holds no `, `.
                let (name, rest) = c.split_once('(').unwrap();
                let result = c.rsplit_once("= ").unwrap().1.trim();
                pass.push(match name {
                    "lseek" => {
                        let args: Vec<&str> = rest.split_once(')').unwrap().0.split(", ").collect();
                        format!("lseek {} {} = {result}", args[1], args[2])
                    }
                    _ => {
                        let count = rest.rsplit_once(", ").unwrap().1.split(')').next().unwrap();
                        format!("{name} {count} = {result}")
                    }
                });
            }
            seen.push(pass);
        }
        assert_eq!(seen, vec![once.to_vec(); passes], "{args:?}");
    }
}

/// The record rewrite (`-i 4`) writes record 0 again and again as IOzone 3.487's
/// rewriterec_perf_test does, seen under strace for the same options: after the fsync before
/// its clock, `write()` then `lseek(0, SEEK_SET)` per record, then its fsync and close.
#[test]
#[ignore = "system tier: needs strace"]
fn the_record_rewrite_seeks_back_after_each_write_as_iozone_does() {
    let (_tmp, cwd) = strace_dir();
    let calls = strace_iozone(
        &cwd,
        "openat,write,lseek,fsync,close",
        &["-s", "64k", "-r", "16k", "-i", "0", "-i", "4"],
    );
    let opened = calls
        .iter()
        .rposition(|c| c.contains("\"iozone.tmp\", O_"))
        .expect("the record rewrite's open");
    let fd = returned(&calls[opened]).expect("a descriptor");
    let seen: Vec<String> = calls[opened + 1..]
        .iter()
        .filter(|c| c.contains(&format!("({fd}, ")) || c.contains(&format!("({fd})")))
        .map(|c| {
            let name = c.split('(').next().unwrap();
            let result = c.rsplit_once("= ").unwrap().1.trim();
            match name {
                "lseek" => format!(
                    "lseek {} = {result}",
                    c.split(", ")
                        .skip(1)
                        .collect::<Vec<_>>()
                        .join(" ")
                        .split(')')
                        .next()
                        .unwrap()
                ),
                "write" => format!(
                    "write {} = {result}",
                    c.rsplit_once(", ").unwrap().1.split(')').next().unwrap()
                ),
                _ => format!("{name} = {result}"),
            }
        })
        .take_while(|c| !c.starts_with("close"))
        .collect();
    let mut want = vec!["fsync = 0".to_string()];
    for _ in 0..4 {
        want.push("write 16384 = 16384".into());
        want.push("lseek 0 SEEK_SET = 0".into());
    }
    want.push("fsync = 0".into());
    assert_eq!(seen, want);
}

/// IOzone's single process seeks to its records in the order its children do (the same
/// shuffle, made again for each test): the random reader's 64 lseeks, then the random writer's.
#[test]
#[ignore = "system tier: needs strace"]
fn the_single_process_random_tests_seek_in_iozone_s_order() {
    let (_tmp, cwd) = strace_dir();
    let calls = strace_iozone(&cwd, "lseek", &["-s", "256k", "-r", "4k", "-i", "0", "-i", "2"]);
    let records: Vec<u64> = calls
        .iter()
        .filter(|c| c.contains("SEEK_SET"))
        .map(|c| {
            c.split(", ")
                .nth(1)
                .and_then(|o| o.parse::<u64>().ok())
                .expect("an offset")
                / 4096
        })
        .collect();
    let order = &records[records.len().saturating_sub(128)..];
    assert_eq!(order[..64], order[64..], "{records:?}");
    assert_eq!(order[..8], [1, 55, 28, 7, 18, 58, 39, 3], "{records:?}");
}

/// `-c` puts the close inside the timing, and IOzone 3.487 then makes no fsync before it (its
/// `if(!include_close)` block): the automatic-mode process keeps only its fsync after the open,
/// and throughput mode's children make none at all without `-e`.
#[test]
#[ignore = "system tier: needs strace"]
fn c_leaves_out_the_fsync_before_close() {
    let (_tmp, cwd) = strace_dir();
    let (calls, _, order) = traced_on(
        &cwd,
        &["-s", "256k", "-r", "64k", "-i", "0", "-i", "1", "-c"],
        "iozone.tmp",
    );
    assert_eq!(order, automatic_calls(false), "{calls:?}");
    let (_tmp, cwd) = strace_dir();
    let (calls, _) = traced(
        &cwd,
        &["-t", "2", "-s", "256k", "-r", "64k", "-i", "0", "-i", "1", "-c", "-x"],
    );
    assert_eq!(calls.get("fsync"), None, "{calls:?}");
    assert_eq!(
        calls.get("write"),
        Some(&16),
        "two children, two tests, 4 records each: {calls:?}"
    );
}

#[test]
#[ignore = "system tier: needs strace"]
fn automatic_mode_adds_few_calls_of_its_own_between_measurements() {
    let (_tmp, cwd) = strace_dir();
    // 4 sizes of file (64k to 512k), one record size, 4 tests (write, rewrite, read, reread): 16
    // measurements, each an engine run.
    let args = "-a -n 64k -g 512k -y 64k -q 64k -i 0 -i 1";
    let calls = strace_iozone(
        &cwd,
        "openat,openat2,read,newfstatat,statx,mmap,munmap",
        &args.split(' ').collect::<Vec<_>>(),
    );
    let count = |pred: &dyn Fn(&str) -> bool| calls.iter().filter(|c| pred(c)).count();
    let measurements = 4 * 4;
    // No memory is mapped or unmapped from the first run's start to the last's: a run whose
    // threads share its state through a mapping, made and dropped each time, slows the next
    // run's cached reads. (The process unmaps its signal stack as it exits, after them.)
    let runs = |c: &&String| c.starts_with("openat2(");
    let first_run = calls.iter().position(|c| runs(&c)).expect("a run");
    let last_run = calls.iter().rposition(|c| runs(&c)).expect("a run");
    let mappings: Vec<&String> = calls[first_run..last_run]
        .iter()
        .filter(|c| c.starts_with("mmap(") || c.starts_with("munmap("))
        .collect();
    assert!(mappings.is_empty(), "{mappings:#?}");
    // No machine CPU split of runs of a few records: /proc/stat is not read.
    assert_eq!(count(&|c| c.contains("/proc/stat")), 0, "{calls:#?}");
    // Each measurement opens the run directory and the fileset (two openat2) and reads the
    // fileset's marker (one read: the expected text and a byte more); the last also removes the
    // files, reading the marker once more.
    assert_eq!(
        count(&|c| c.starts_with("openat2(")),
        2 * measurements + 1,
        "{calls:#?}"
    );
    let marker = count(&|c| c.contains(".fslab-fileset\", O_RDONLY"));
    assert_eq!(marker, measurements + 1, "{calls:#?}");
    // Each stats the file once to keep it, each new size once more to clear the last, and
    // IOzone's sanity check twice as each size's file is made.
    let stats = count(&|c| (c.starts_with("newfstatat(") || c.starts_with("statx(")) && c.contains("\"iozone.tmp\""));
    assert_eq!(stats, measurements + 3 + 1 + 2 * 4, "{calls:#?}");
}

#[test]
#[ignore = "system tier: needs strace"]
fn automatic_mode_measures_on_the_only_thread_and_throughput_children_are_processes() {
    let (_tmp, cwd) = strace_dir();
    let threads_made = |args: &str| strace_iozone(&cwd, "clone,clone3", &args.split(' ').collect::<Vec<_>>());
    // As IOzone's one process: no thread beside the one that measures, which would make the
    // kernel count references on the descriptor of every read and write.
    for args in ["-a -n 64k -g 128k -i 0 -i 1", "-s 64k -r 4k -i 0 -i 1 -i 2"] {
        let calls = threads_made(args);
        assert!(calls.is_empty(), "{args}: {calls:#?}");
    }
    // Throughput mode's children are processes, as IOzone's (a clone without CLONE_THREAD each);
    // with -T they are threads of one process.
    let processes = |calls: &[String]| calls.iter().filter(|c| !c.contains("CLONE_THREAD")).count();
    // Writers and rewriters: two sub-tests of two children.
    let calls = threads_made("-i 0 -t 2 -s 64k -r 64k --pause 0");
    assert_eq!(processes(&calls), 2 * 2, "a process per child per sub-test: {calls:#?}");
    let calls = threads_made("-i 0 -t 2 -s 64k -r 64k --pause 0 -T");
    assert_eq!(processes(&calls), 0, "{calls:#?}");
    assert!(calls.len() >= 2 * 2, "a thread per child per sub-test: {calls:#?}");
}

#[test]
#[ignore = "system tier: needs strace"]
fn a_throughput_test_ends_as_iozones_its_files_unlinked_then_two_syncs() {
    let (_tmp, cwd) = strace_dir();
    let args = ["-i", "0", "-t", "2", "-s", "64k", "-r", "64k", "--pause", "0"];
    let calls = strace_iozone(&cwd, "unlink,unlinkat,sync,syncfs", &args);
    // The sync()s, and the unlinks of the children's files that removed them.
    let seen: Vec<String> = calls
        .iter()
        .filter_map(|c| match c.split_once('(')?.0 {
            "sync" | "syncfs" => Some(c.split_once('(')?.0.to_string()),
            _ if c.contains("\"iozone.DUMMY.") && c.ends_with("= 0") => {
                Some(format!("unlink {}", c.split('"').nth(1)?))
            }
            _ => None,
        })
        .collect();
    // IOzone 3.487: sync() after each sub-test (initial writers, rewriters), the cleanup's
    // unlinks, then sync(), a pause, sync(). The setup does not sync.
    let want = [
        "sync",
        "sync",
        "unlink iozone.DUMMY.0",
        "unlink iozone.DUMMY.1",
        "sync",
        "sync",
    ];
    assert_eq!(seen, want, "{calls:#?}");
    assert!(!cwd.join("iozone.DUMMY.0").exists());
}

#[test]
#[ignore = "system tier: needs strace"]
fn each_sub_test_makes_iozones_calls_per_record() {
    let (_tmp, cwd) = strace_dir();
    // 2 children, 4 records of 64 kB each, no stonewall: every child does all its records.
    let args = "-i 0 -i 1 -i 2 -t 2 -s 256k -r 64k -e -x -w --pause 0";
    let (calls, opens) = traced(&cwd, &args.split(' ').collect::<Vec<_>>());
    let n = |k: &str| calls.get(k).copied().unwrap_or(0);
    // Per child and sub-test (6 sub-tests): write/read() per record, lseek() before each random
    // record, -e's fsync and the fsync before close; IOzone's sync() after each sub-test.
    assert_eq!(
        n("write"),
        2 * 4 * 3,
        "initial writers, rewriters, random writers: {calls:?}"
    );
    assert_eq!(n("read"), 2 * 4 * 3, "readers, re-readers, random readers: {calls:?}");
    assert_eq!(n("lseek"), 2 * 4 * 2, "random readers and writers: {calls:?}");
    assert_eq!((n("pread64"), n("pwrite64")), (0, 0), "{calls:?}");
    assert_eq!(n("fsync"), 2 * 2 * 6, "{calls:?}");
    // After each sub-test, and once more at the end; the setup does not sync.
    assert_eq!(n("sync"), 6 + 1, "{calls:?}");
    assert_eq!(n("syncfs"), 0, "{calls:?}");
    // Each child opens its own file once per sub-test, by its name in the run directory: the
    // initial writers make theirs as they open them, O_RDWR|O_CREAT, 0640, as IOzone's do, and
    // the random writers open theirs the same way; the others read-only to read, read-write to
    // rewrite.
    let (made, opened): (Vec<_>, Vec<_>) = opens.iter().partition(|o| o.contains("O_CREAT"));
    assert_eq!(made.len(), 2 * 2, "{opens:#?}");
    assert!(
        made.iter()
            .all(|o| o.contains("O_RDWR|O_CREAT") && o.contains(", 0640") && !o.contains("O_EXCL")),
        "{made:#?}"
    );
    // The initial writers' opens are the first two, the random writers' the last two.
    let creating: Vec<bool> = opens.iter().map(|o| o.contains("O_CREAT")).collect();
    assert_eq!(&creating[..2], [true; 2], "{opens:#?}");
    assert_eq!(&creating[creating.len() - 2..], [true; 2], "{opens:#?}");
    assert_eq!(opened.len(), 2 * 4, "{opens:#?}");
    assert_eq!(opened.iter().filter(|o| o.contains("O_RDONLY")).count(), 2 * 3);
    assert!(made.iter().all(|o| !o.contains('/')), "{made:#?}");
    assert!(opened.iter().all(|o| !o.contains('/')), "{opened:#?}");
    // The files are IOzone's: iozone.DUMMY.N in the current directory, mode 0640, holding its
    // data: 8 bytes of `m` at the start of every 4 KiB, zeros elsewhere, as the random writers
    // left them; child 0's record of IOzone's buffer is the one its parent prepaged, with an
    // `m` at every 32nd byte as well.
    for (k, per_page) in [(0, 135), (1, 8)] {
        let meta = std::fs::metadata(cwd.join(format!("iozone.DUMMY.{k}"))).unwrap();
        assert_eq!(meta.len(), 256 * 1024);
        let data = std::fs::read(cwd.join(format!("iozone.DUMMY.{k}"))).unwrap();
        assert!(
            data.chunks(4096).all(|p| &p[..8] == b"mmmmmmmm"),
            "iozone.DUMMY.{k} does not hold IOzone's data"
        );
        assert_eq!(
            m_per_page(&cwd.join(format!("iozone.DUMMY.{k}"))),
            vec![per_page; 64],
            "iozone.DUMMY.{k}"
        );
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o777,
            0o640 & !umask()
        );
    }
}

/// What a child did with its file between one open and its close, as strace saw it.
#[derive(Debug, Clone, Default)]
struct Session {
    file: String,
    reads: usize,
    writes: usize,
    /// The offsets of its lseeks, in records of 4 KiB.
    seeks: Vec<u64>,
    /// Its ftruncate() calls.
    truncates: usize,
    /// Whether its open carried O_CREAT.
    creates: bool,
}

/// `fslab iozone ARGS` in `cwd` under strace: each open of a child's file (iozone.DUMMY.N) and
/// what was done on it until its close, in the order of the opens. Each child is a process of
/// its own and opens its file once per sub-test.
fn sessions(cwd: &Path, args: &str) -> Vec<Session> {
    let args: Vec<&str> = std::iter::once("iozone").chain(args.split(' ')).collect();
    let log = cwd.join("..").join("strace.log");
    let calls = strace_fslab(Some(cwd), &log, "openat,read,write,lseek,close,ftruncate", &args);
    let mut open: std::collections::BTreeMap<&str, (String, usize)> = Default::default();
    let mut sessions: Vec<Session> = Vec::new();
    for (pid, call) in &calls {
        let Some((name, rest)) = call.split_once('(') else {
            continue;
        };
        if name == "openat" && call.contains("\"iozone.DUMMY.") {
            let file = rest.split('"').nth(1).unwrap().to_string();
            let fd = call.rsplit_once("= ").unwrap().1.to_string();
            open.insert(pid, (fd, sessions.len()));
            sessions.push(Session {
                file,
                creates: call.contains("O_CREAT"),
                ..Session::default()
            });
            continue;
        }
        let Some((fd, k)) = open.get(pid.as_str()).cloned() else {
            continue;
        };
        let (call_fd, rest) = rest.split_once([',', ')']).unwrap_or((rest, ""));
        if call_fd != fd {
            continue;
        }
        match name {
            "read" => sessions[k].reads += 1,
            "write" => sessions[k].writes += 1,
            "lseek" => {
                let offset: u64 = rest.trim().split(',').next().unwrap().parse().unwrap();
                sessions[k].seeks.push(offset / 4096);
            }
            "ftruncate" => sessions[k].truncates += 1,
            "close" => {
                open.remove(pid.as_str());
            }
            _ => {}
        }
    }
    sessions
}

#[test]
#[ignore = "system tier: needs strace"]
fn random_children_visit_each_record_once() {
    let (_tmp, cwd) = strace_dir();
    // 2 children, 64 records of 4 kB each, no stonewall: IOzone's random readers and writers
    // shuffle their record numbers and seek to each once.
    let all = sessions(&cwd, "-i 0 -i 2 -t 2 -s 256k -r 4k -x -w --pause 0");
    // The setup's opens (no seeks), then initial writers and rewriters (sequential: no seeks),
    // then random readers and random writers: 2 children each, 64 seeks apiece, every one in
    // the order IOzone 3.487's children seek in under strace for these options (its Mersenne
    // Twister with its fixed key shuffles the records the same way every time).
    let iozone: Vec<u64> = vec![
        1, 55, 28, 7, 18, 58, 39, 3, 22, 0, 34, 10, 19, 13, 26, 21, 42, 41, 47, 16, 23, 15, 31, 9, 24, 33, 25, 40, 56,
        14, 52, 35, 36, 54, 12, 50, 60, 5, 8, 57, 17, 32, 49, 38, 62, 44, 4, 48, 29, 45, 53, 37, 20, 46, 43, 61, 63,
        30, 11, 59, 27, 51, 6, 2,
    ];
    let seeking: Vec<&Session> = all.iter().filter(|c| !c.seeks.is_empty()).collect();
    assert_eq!(seeking.len(), 2 * 2, "{all:#?}");
    for child in seeking {
        assert_eq!(child.seeks, iozone, "{child:?}");
    }
}

#[test]
#[ignore = "system tier: needs strace"]
fn mixed_workload_children_either_read_or_write_their_own_file() {
    let (_tmp, cwd) = strace_dir();
    // 4 children: as IOzone's thread_mix_test, children 0 and 2 read, 1 and 3 write, each its
    // own file (child k's iozone.DUMMY.k) from start to end, no child both.
    let all = sessions(&cwd, "-i 0 -i 8 -t 4 -s 64k -r 4k -x -w --pause 0");
    let sessions: Vec<(String, usize, usize, bool)> = all
        .iter()
        .map(|c| (c.file.clone(), c.reads, c.writes, c.creates))
        .collect();
    // The last four opens are the mixed workload's children (after the setup's, the writers'
    // and the rewriters'); the writers open their files O_CREAT, as IOzone's random writers.
    let mut mixed: Vec<(String, usize, usize, bool)> = sessions[sessions.len() - 4..].to_vec();
    mixed.sort();
    assert_eq!(
        mixed,
        vec![
            ("iozone.DUMMY.0".into(), 16, 0, false),
            ("iozone.DUMMY.1".into(), 0, 16, true),
            ("iozone.DUMMY.2".into(), 16, 0, false),
            ("iozone.DUMMY.3".into(), 0, 16, true),
        ],
        "{sessions:#?}"
    );
}

#[test]
#[ignore = "system tier: needs strace"]
fn sequential_mixed_workload_children_read_or_write_their_files_in_order() {
    let (_tmp, cwd) = strace_dir();
    // -+B -+K 1 on 3 children: as IOzone's thread_mix_test, child 0 reads its file from start to
    // end (thread_read_test), 1 and 2 write theirs (thread_write_test): 16 calls of one record
    // each, no lseek, no child both. The writers write over their files; with -+F they empty
    // them first (IOzone's O_TRUNC, fslab's ftruncate before the clock).
    for (plus_f, truncates) in [("", 0), (" -+F", 1)] {
        let args = format!("-i 0 -i 8 -t 3 -s 64k -r 4k -x -w --pause 0 -+B -+K 1{plus_f}");
        let all = sessions(&cwd, &args);
        // The initial writers (the first three to write) open the files the setup has just
        // made, and truncate nothing, as IOzone's open theirs O_CREAT.
        let initial: Vec<&Session> = all.iter().filter(|c| c.writes > 0).take(3).collect();
        assert_eq!(initial.len(), 3, "{args}: {all:#?}");
        assert!(initial.iter().all(|c| c.truncates == 0), "{args}: {initial:#?}");
        // The last three opens are the mixed workload's children.
        let mut mixed: Vec<(String, usize, usize, usize, usize, bool)> = all[all.len() - 3..]
            .iter()
            .map(|c| (c.file.clone(), c.reads, c.writes, c.seeks.len(), c.truncates, c.creates))
            .collect();
        mixed.sort();
        assert_eq!(
            mixed,
            vec![
                ("iozone.DUMMY.0".into(), 16, 0, 0, 0, false),
                ("iozone.DUMMY.1".into(), 0, 16, 0, truncates, true),
                ("iozone.DUMMY.2".into(), 0, 16, 0, truncates, true),
            ],
            "{args}: {all:#?}"
        );
        for k in 0..3 {
            let len = std::fs::metadata(cwd.join(format!("iozone.DUMMY.{k}"))).unwrap().len();
            assert_eq!(len, 64 << 10, "{args}: iozone.DUMMY.{k} is whole");
        }
    }
}

/// The process's umask (the files' mode is 0640 less it, as IOzone's).
fn umask() -> u32 {
    let text = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = text.lines().find(|l| l.starts_with("Umask:")).unwrap();
    u32::from_str_radix(line.split_whitespace().nth(1).unwrap(), 8).unwrap()
}

/// Bytes of `m` in each 4 KiB of `path`, which holds nothing else but zeros.
fn m_per_page(path: &Path) -> Vec<usize> {
    let bytes = std::fs::read(path).unwrap();
    assert!(bytes.iter().all(|&b| b == 0 || b == b'm'), "{}", path.display());
    bytes
        .chunks(4096)
        .map(|p| p.iter().filter(|&&b| b == b'm').count())
        .collect()
}

/// IOzone 3.487's throughput parent prepages the first record of its buffer (an `m` at every
/// 32nd byte) once it has forked the initial writers, and the child processes forked after it
/// write that buffer: rewriters from its start, random and pwrite writers from record
/// `child % (1 MiB / record)`. IOzone's `-w` files, checked against IOzone 3.487 (`-t 3 -s 64k
/// -r 16k -x -w`): 135 bytes of `m` in each 4 KiB where a prepaged record was written last, 8
/// (fill_buffer()'s) elsewhere. Threads (`-T`) have buffers of their own, and write the 8.
#[test]
fn children_forked_after_the_prepage_write_its_pattern_as_iozones_do() {
    for (tests, threads, want) in [
        ("-i 0", false, [135, 135, 135]),
        ("-i 0", true, [8, 8, 8]),
        ("-i 0 -+n", false, [8, 8, 8]),
        ("-i 0 -i 2", false, [135, 8, 8]),
        ("-i 0 -i 9", false, [135, 8, 8]),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let mut args: Vec<&str> = tests.split(' ').collect();
        args.extend(["-t", "3", "-s", "64k", "-r", "16k", "-x", "-w", "--pause", "0"]);
        if threads {
            args.push("-T");
        }
        let r = iozone(tmp.path(), &args);
        assert_eq!(r.code, 0, "stderr: {}", r.stderr);
        for (n, per_page) in want.into_iter().enumerate() {
            let pages = m_per_page(&tmp.path().join(format!("iozone.DUMMY.{n}")));
            assert_eq!(pages, vec![per_page; 16], "{tests} -T {threads}, file {n}");
        }
    }
    // With -F naming files in two directories in turn, the record is still the child's: in
    // 512 KiB records, two to the buffer, children 0 and 2 write the prepaged one.
    let tmp = tempfile::tempdir().unwrap();
    for d in ["a", "b"] {
        std::fs::create_dir(tmp.path().join(d)).unwrap();
    }
    let files = ["a/f0", "b/f1", "a/f2", "b/f3"];
    let mut args = vec![
        "-i", "0", "-i", "2", "-t", "4", "-s", "1m", "-r", "512k", "-x", "-w", "--pause", "0", "-F",
    ];
    args.extend(files);
    let r = iozone(tmp.path(), &args);
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    for (file, per_page) in files.into_iter().zip([135, 8, 135, 8]) {
        assert_eq!(m_per_page(&tmp.path().join(file)), vec![per_page; 256], "-F, {file}");
    }
}

/// IOzone 3.487's children make their own files, all at once: each initial writer opens its
/// file `O_RDWR|O_CREAT, 0640` before the parent lets it go, and the parent makes none. So do
/// fslab's: the setup leaves the files to them.
#[test]
#[ignore = "system tier: needs strace"]
fn throughput_children_make_their_own_files_as_iozone_does() {
    let (_tmp, cwd) = strace_dir();
    let args = [
        "iozone", "-i", "0", "-t", "3", "-s", "64k", "-r", "16k", "-x", "-w", "--pause", "0",
    ];
    let calls = strace_fslab(
        Some(&cwd),
        &cwd.join("..").join("strace.log"),
        "openat,creat,mknodat",
        &args,
    );
    let parent = &calls.first().expect("a call").0;
    let on_files: Vec<&(String, String)> = calls.iter().filter(|(_, c)| c.contains("\"iozone.DUMMY.")).collect();
    // The initial writers' opens, then the rewriters'.
    assert_eq!(
        on_files.len(),
        6,
        "one open per child and sub-test, no other: {on_files:#?}"
    );
    let (made, rewritten) = on_files.split_at(3);
    assert!(rewritten.iter().all(|(_, c)| !c.contains("O_CREAT")), "{rewritten:#?}");
    let mut makers = std::collections::BTreeSet::new();
    for (pid, c) in made {
        assert!(
            c.contains("O_RDWR|O_CREAT") && c.contains(", 0640") && !c.contains("O_EXCL") && !c.contains("O_TRUNC"),
            "{c}"
        );
        assert_ne!(pid, parent, "made by the parent: {c}");
        makers.insert(pid);
    }
    assert_eq!(makers.len(), 3, "each child makes its own: {made:#?}");
    for n in 0..3 {
        let meta = std::fs::metadata(cwd.join(format!("iozone.DUMMY.{n}"))).unwrap();
        assert_eq!(meta.len(), 64 * 1024);
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o777,
            0o640 & !umask()
        );
    }
}

/// IOzone 3.487's initial writers open their files `O_RDWR|O_CREAT`, no `O_TRUNC`: run again
/// where `-w` left the files, they write over them. fslab keeps the files its marker names and
/// writes over them too: the same opens, and no unlink, no new file, no truncate.
#[test]
#[ignore = "system tier: needs strace"]
fn initial_writers_write_over_the_files_a_w_run_left() {
    let (_tmp, cwd) = strace_dir();
    let args = [
        "-i", "0", "-+n", "-t", "2", "-s", "64k", "-r", "16k", "-x", "-w", "--pause", "0",
    ];
    let r = iozone(&cwd, &args);
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    // A file made again would have another inode number.
    let ino = |n: u32| {
        std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(cwd.join(format!("iozone.DUMMY.{n}"))).unwrap())
    };
    let before = [ino(0), ino(1)];
    let calls = strace_iozone(&cwd, "openat,unlink,unlinkat,ftruncate,truncate", &args);
    let on_files: Vec<&String> = calls.iter().filter(|c| c.contains("iozone.DUMMY.")).collect();
    assert_eq!(on_files.len(), 2, "{on_files:#?}");
    assert!(
        on_files
            .iter()
            .all(|c| c.contains("O_RDWR|O_CREAT") && !c.contains("O_EXCL") && !c.contains("O_TRUNC")),
        "{on_files:#?}"
    );
    assert!(calls.iter().all(|c| !c.contains("truncate(")), "{calls:#?}");
    assert_eq!([ino(0), ino(1)], before, "the files were made again");
    for n in 0..2 {
        assert_eq!(m_per_page(&cwd.join(format!("iozone.DUMMY.{n}"))), vec![8; 16]);
    }
}
