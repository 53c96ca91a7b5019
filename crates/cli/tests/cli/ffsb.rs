//! `fslab ffsb` from the outside: the seed profiles, --explain, --json, FFSB's printed figures,
//! bad profiles (line numbers, exit 2, nothing created).

use crate::common::{fslab, refs, s};
use fslab_engine::Workload;
use fslab_testkit::{entries, require_tool, tempdir};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn profile(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../profiles").join(name)
}

/// Seed 002's profile with fewer files and threads, written to `dir`.
fn small_profile(dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(profile("smallfile.ffsb"))
        .unwrap()
        .replace("num_files=5000", "num_files=30")
        .replace("num_dirs=1000", "num_dirs=5")
        .replace("num_threads=128", "num_threads=2");
    let path = dir.join("small.ffsb");
    std::fs::write(&path, text).unwrap();
    path
}

/// `fslab ffsb`'s arguments for the profile `text`, written to `dir/p.ffsb`, run in a new
/// directory `dir/run`.
fn ffsb_args(dir: &Path, text: &str) -> Vec<String> {
    let profile = dir.join("p.ffsb");
    std::fs::write(&profile, text).unwrap();
    let run_dir = dir.join("run");
    std::fs::create_dir(&run_dir).unwrap();
    ["ffsb", s(&profile), "--dir", s(&run_dir)].map(String::from).to_vec()
}

#[test]
fn explain_prints_the_seed_profiles_as_native_workloads() {
    for name in ["large-seqwrite.ffsb", "smallfile.ffsb"] {
        let path = profile(name);
        let r = fslab(&["ffsb", s(&path), "--explain"]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let w = Workload::from_toml(&r.stdout, name).unwrap_or_else(|e| panic!("{e}\n{}", r.stdout));
        assert_eq!(w.filesets[0].root.as_deref(), Some("/mnt/test/"));
        // The deliberate differences from FFSB come first, as comments.
        assert!(
            r.stdout
                .starts_with("# fslab ffsb makes FFSB's system calls for each operation")
                && r.stdout
                    .contains("# - a file's directory is drawn from a hash of its number"),
            "{}",
            r.stdout
        );
        assert_eq!(
            w.stop.time.map(|t| t.0),
            Some(Duration::from_secs(if name.starts_with("large") { 300 } else { 1800 }))
        );
    }
    // --time and --dir change what would run.
    let dir = tempdir();
    let path = profile("smallfile.ffsb");
    let r = fslab(&["ffsb", s(&path), "--explain", "--time", "2", "--dir", s(dir.path())]);
    let w = Workload::from_toml(&r.stdout, "explain").unwrap();
    assert_eq!(w.stop.time.map(|t| t.0), Some(Duration::from_secs(2)));
    assert_eq!(w.filesets[0].root.as_deref(), Some(s(dir.path())));
    assert!(entries(dir.path()).is_empty(), "--explain creates nothing");
}

#[test]
fn a_run_prints_what_ffsb_prints() {
    let dir = tempdir();
    let path = small_profile(dir.path());
    let run_dir = dir.path().join("run");
    std::fs::create_dir(&run_dir).unwrap();
    // FFSB 5.x's positional time.
    let r = fslab(&["ffsb", s(&path), "1", "--dir", s(&run_dir)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let out = &r.stdout;
    // FFSB 5.2.1's layout, line for line, then fslab's extras.
    assert_in_order(
        out,
        &[
            "FFSB version 5.2.1 started\n\nbenchmark time = 1\nThreadGroup 0\n================\n\t num_threads      = ",
            "\t op weights\n",
            "\t               create = ",
            "FileSystem ",
            "\t aging is off\n\t current utilization = ",
            "creating new fileset ",
            "fs setup took ",
            "Syncing()...0 sec\nStarting Actual Benchmark At: ",
            "\n\nSyncing()...",
            "FFSB benchmark finished   at: ",
            "\n\nResults:\nBenchmark took ",
            " sec\n\nTotal Results\n===============\n",
            "             readall : ",
            "               write : ",
            "              create : ",
            " Transactions per Second\n\n\n",
            "% User   Time\n",
            "% System Time\n",
            "% CPU Utilization\n",
            "\n--- fslab ---\n",
            "(5.x grammar)",
            "latency per operation",
            "cpu, all CPUs (/proc/stat): user ",
        ],
    );
    assert!(out.contains(" ops (") && out.ends_with('\n'), "{out}");
    assert!(
        !out.contains("Op Name   Transactions"),
        "6.0's table for a 5.x profile:\n{out}"
    );
    // Benchmark took X sec, with X at least the time asked for.
    let took: f64 = out
        .split("Benchmark took ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|x| x.parse().ok())
        .unwrap_or_else(|| panic!("{out}"));
    assert!(took >= 1.0, "{took}");
    // FFSB's data: zeros (its buffers are zeroed when allocated and never filled), in the files
    // the setup wrote and in what the run wrote and created.
    let mut bytes = 0;
    for d in std::fs::read_dir(run_dir.join("data")).unwrap() {
        let d = d.unwrap().path();
        if !d.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(&d).unwrap() {
            let f = f.unwrap().path();
            let data = std::fs::read(&f).unwrap();
            assert!(
                data.iter().all(|&b| b == 0),
                "{} holds other bytes than zeros",
                f.display()
            );
            bytes += data.len();
        }
    }
    assert!(bytes > 0, "no data written under {}", run_dir.display());
}

/// The lines of `out` in order, each found after the one before (a fragment, not a whole line).
fn assert_in_order(out: &str, fragments: &[&str]) {
    let mut from = 0;
    for f in fragments {
        let at = out[from..]
            .find(f)
            .unwrap_or_else(|| panic!("no `{f}` after byte {from} in:\n{out}"));
        from += at + f.len();
    }
}

#[test]
fn a_6_0_profile_prints_what_ffsb_6_0_prints() {
    let dir = tempdir();
    // FFSB 6.0's grammar (its `stat` and `writeall`, `size_weight`), one threadgroup; --dir
    // (ffsb_args) replaces the location.
    let text = "time=1\n\n[filesystem]\n\tlocation=/unused\n\tnum_files=20\n\tnum_dirs=2\n\
                \tsize_weight 4k 3\n\tsize_weight 16k 1\n[end]\n\n[threadgroup]\n\tnum_threads=2\n\
                \tread_weight=2\n\tstat_weight=1\n\twriteall_weight=1\n\tread_size=4096\n\
                \tread_blocksize=4096\n\twrite_blocksize=4096\n[end]\n";
    let r = fslab(&refs(&ffsb_args(dir.path(), text)));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let out = &r.stdout;
    // FFSB 6.0's main(), ffsb_tg.c and ffsb_fs.c, line for line, numbers aside.
    assert_in_order(
        out,
        &[
            "FFSB version 6.0-RC1 started\n\nbenchmark time = 1\nThreadGroup 0\n================\n\t num_threads      = 2\n",
            "\t op weights\n\t                 read = 2 (50.00%)\n",
            "\t                 stat = 1 (25.00%)\n\t             writeall = 1 (25.00%)\n",
            "\t         append_fsync = 0 (0.00%)\n\t\n",
            "FileSystem ",
            "\t Fileset weight:\n\t\t         4096 (   4KB) -> 3 (75.00%)\n\t\t        16384 (  16KB) -> 1 (25.00%)\n",
            "\t aging is off\n\t current utilization = ",
            "%\n\t\n",
            "creating new fileset ",
            "fs setup took ",
            "Syncing()...0 sec\nStarting Actual Benchmark At: ",
            "\n\nSyncing()...",
            "FFSB benchmark finished   at: ",
            "\n\nResults:\nBenchmark took ",
            " sec\n\nTotal Results\n===============\n             Op Name   Transactions",
            " Transactions per Second\n",
            // One threadgroup: its table, a blank line, then two more before the CPU times.
            "\n\n\n\n",
            "% User   Time\n",
            "% CPU Utilization\n\n--- fslab ---\nFFSB profile ",
            "(6.0 grammar)",
        ],
    );
    assert!(
        !out.contains("min file size"),
        "size_weight replaces min and max:\n{out}"
    );
}

#[test]
fn json_carries_ffsb_s_figures_and_its_headline() {
    let dir = tempdir();
    let path = small_profile(dir.path());
    let run_dir = dir.path().join("run");
    std::fs::create_dir(&run_dir).unwrap();
    let r = fslab(&["ffsb", s(&path), "--time", "1", "--dir", s(&run_dir), "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}:\n{}", r.stdout));
    assert_eq!(v["schema_version"], 2);
    assert_eq!(v["tool"], "ffsb");
    let result = &v["phases"][0]["result"];
    assert_eq!(result["status"], "ok");
    let c = &v["figures"];
    assert_eq!((c["tool"].as_str(), c["grammar"].as_str()), (Some("ffsb"), Some("5.x")));
    let ops: Vec<&str> = c["total"]["ops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["op"].as_str().unwrap())
        .collect();
    assert_eq!(ops, vec!["readall", "write", "create"]);
    let tps = c["total"]["transactions_per_sec"].as_f64().unwrap();
    let runtime = c["runtime_secs"].as_f64().unwrap();
    let trans = c["total"]["transactions"].as_u64().unwrap();
    assert!((tps - trans as f64 / runtime).abs() < 1e-6);
    assert_eq!(result["duration_s"].as_f64(), Some(runtime));
    assert_eq!(v["metrics"][0]["name"], "Transactions/s");
    assert_eq!(v["metrics"][0]["value"].as_f64(), Some(tps));
    assert!(c["cpu_utilization_pct"].as_f64().is_some());
    assert!(c["total"]["read_throughput"].as_str().unwrap().ends_with("B/sec"));
}

#[test]
fn an_unknown_option_names_its_line_and_suggests_and_creates_nothing() {
    let dir = tempdir();
    let text = std::fs::read_to_string(profile("smallfile.ffsb"))
        .unwrap()
        .replace("num_threads=128", "num_thread=128");
    let path = dir.path().join("typo.ffsb");
    std::fs::write(&path, text).unwrap();
    let run_dir = dir.path().join("run");
    std::fs::create_dir(&run_dir).unwrap();
    let r = fslab(&["ffsb", s(&path), "--time", "1", "--dir", s(&run_dir)]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    let want = format!(
        "{}:15: unknown option `num_thread` in [threadgroup] (did you mean `num_threads`?)",
        path.display()
    );
    assert!(r.stderr.contains(&want), "{}", r.stderr);
    assert!(r.stdout.is_empty());
    assert!(entries(&run_dir).is_empty(), "nothing is created for a bad profile");
}

#[test]
fn bad_values_and_locations_are_input_errors() {
    let dir = tempdir();
    let write = |name: &str, text: String| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let seed = std::fs::read_to_string(profile("smallfile.ffsb")).unwrap();
    // A malformed value, with its line.
    let p = write("value.ffsb", seed.replace("num_files=5000", "num_files=5k"));
    let r = fslab(&["ffsb", s(&p)]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("value.ffsb:8: `num_files=5k`: 5.x profiles take plain byte counts"),
        "{}",
        r.stderr
    );
    // A relative location, and one that climbs with `..`.
    let p = write("relative.ffsb", seed.replace("/mnt/test/", "mnt/test"));
    let r = fslab(&["ffsb", s(&p), "--explain"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("relative.ffsb:7: location `mnt/test` is relative"),
        "{}",
        r.stderr
    );
    let p = write("dotdot.ffsb", seed.replace("/mnt/test/", "/tmp/../etc"));
    let r = fslab(&["ffsb", s(&p), "--explain"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("dotdot.ffsb:7: location `/tmp/../etc` contains `..`"),
        "{}",
        r.stderr
    );
    // A location that does not exist.
    let missing = dir.path().join("missing");
    let p = write("missing.ffsb", seed.replace("/mnt/test/", s(&missing)));
    let r = fslab(&["ffsb", s(&p), "1"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("is not a directory"), "{}", r.stderr);
    assert!(!missing.exists());
    // The time given twice.
    let r = fslab(&["ffsb", s(&p), "1", "--time", "2"]);
    assert_eq!(r.code, 2);
}

#[test]
fn time_zero_builds_the_fileset_and_says_so() {
    let dir = tempdir();
    let path = small_profile(dir.path());
    let run_dir = dir.path().join("run");
    std::fs::create_dir(&run_dir).unwrap();
    let r = fslab(&["ffsb", s(&path), "--time", "0", "--dir", s(&run_dir)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("Only creating the fileset, not running benchmark."),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("Setup complete, exiting"), "{}", r.stdout);
    assert!(
        r.stdout.contains("setup fs0 ") && r.stdout.contains(": 30 files, "),
        "{}",
        r.stdout
    );
    // 5 directories, the marker, and the files placed in data/ itself (one in six, as FFSB
    // draws a file's directory among num_dirs + 1).
    let data = entries(&run_dir.join("data"));
    let dirs: Vec<&String> = data.iter().filter(|e| e.starts_with("datadir")).collect();
    assert_eq!(dirs, ["datadir0", "datadir1", "datadir2", "datadir3", "datadir4"]);
    assert!(data.contains(&".fslab-fileset".to_string()), "{data:?}");
    let here = data.iter().filter(|e| e.starts_with("datafile")).count();
    assert_eq!(here + 6, data.len(), "{data:?}");
    let inside: usize = dirs.iter().map(|d| entries(&run_dir.join("data").join(d)).len()).sum();
    assert_eq!(here + inside, 30, "{data:?}");
    // FFSB's fs setup makes meta/ beside data/ whether or not metaop runs.
    assert_eq!(entries(&run_dir), ["data", "meta"]);
    assert!(entries(&run_dir.join("meta")).is_empty());
}

#[test]
fn explain_output_is_a_workload_fslab_run_accepts_and_runs() {
    // The seed profiles as quoted: `fslab run --explain` takes the TOML and gives it back.
    let dir = tempdir();
    for name in ["large-seqwrite.ffsb", "smallfile.ffsb"] {
        let r = fslab(&["ffsb", s(&profile(name)), "--explain"]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let toml = dir.path().join(format!("{name}.toml"));
        std::fs::write(&toml, &r.stdout).unwrap();
        let again = fslab(&["run", s(&toml), "--explain"]);
        assert_eq!(
            again.code, 0,
            "fslab run refuses the explained {name}: {}",
            again.stderr
        );
        assert_eq!(
            Workload::from_toml(&again.stdout, "again").unwrap(),
            Workload::from_toml(&r.stdout, "first").unwrap()
        );
    }
    // Scaled down, it runs, and fslab's summary names each FFSB operation in its label column.
    let path = small_profile(dir.path());
    let run_dir = dir.path().join("run");
    std::fs::create_dir(&run_dir).unwrap();
    let r = fslab(&["ffsb", s(&path), "--explain", "--time", "1", "--dir", s(&run_dir)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let toml = dir.path().join("small.toml");
    std::fs::write(&toml, &r.stdout).unwrap();
    let run = fslab(&["run", s(&toml)]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let cells: Vec<Vec<&str>> = run.stdout.lines().map(|l| l.split_whitespace().collect()).collect();
    assert!(
        cells.iter().any(|c| c.starts_with(&["op", "label", "ops"])),
        "no label column in:\n{}",
        run.stdout
    );
    for (op, label) in [("readall", "readall"), ("write", "write"), ("create", "create")] {
        assert!(
            cells.iter().any(|c| c.starts_with(&[op, label])),
            "no `{op} {label}` row in:\n{}",
            run.stdout
        );
    }
}

/// The calls strace saw on each descriptor a data file got, from its open to its close:
/// `["openat", "newfstatat", "lseek", "read=4096", ..., "close"]` (stat by name is listed where it
/// happened, between the open and the close). Each thread writes its own log (`-ff`).
fn per_open_calls(args: &[&str], logs: &Path, opened: &str) -> Vec<Vec<String>> {
    std::fs::create_dir(logs).unwrap();
    let status = std::process::Command::new("strace")
        .args([
            "-ff",
            "-qq",
            "-s",
            "64",
            "-e",
            "trace=openat,newfstatat,stat,lseek,read,close",
            "-o",
        ])
        .arg(logs.join("t"))
        .arg(env!("CARGO_BIN_EXE_fslab"))
        .args(args)
        .stdout(std::process::Stdio::null())
        .status()
        .expect("this test needs strace to see the operations' calls (apt-get install strace)");
    assert!(status.success(), "strace fslab {args:?}: {status}");
    let mut ops = Vec::new();
    for log in std::fs::read_dir(logs).unwrap() {
        let text = std::fs::read_to_string(log.unwrap().path()).unwrap();
        let mut open: Option<(String, Vec<String>)> = None;
        for l in text.lines() {
            let name = l.split('(').next().unwrap_or("");
            let ret = l.rsplit("= ").next().unwrap_or("").trim().to_string();
            if name == "openat" && l.contains(opened) && l.contains("O_RDONLY") && !l.contains("O_DIRECTORY") {
                open = Some((ret, vec!["openat".to_string()]));
                continue;
            }
            let Some((fd, calls)) = open.as_mut() else { continue };
            let on_fd = l
                .split_once('(')
                .is_some_and(|(_, r)| r.starts_with(&format!("{fd},")) || r.starts_with(&format!("{fd})")));
            match name {
                "newfstatat" | "stat" if l.contains(opened) => calls.push("stat".into()),
                "lseek" if on_fd && l.contains("SEEK_CUR") => {
                    let by = l.split(", ").nth(1).unwrap_or_default();
                    calls.push(format!("lseek+{by}"));
                }
                "lseek" if on_fd => calls.push("lseek".into()),
                "read" if on_fd => calls.push(format!("read={ret}")),
                "close" if on_fd => {
                    calls.push("close".into());
                    ops.push(open.take().unwrap().1);
                }
                _ => {}
            }
        }
    }
    ops
}

/// FFSB's read (fileops.c, ffsb_readfile): open, stat() by name, one lseek() to a random offset,
/// then read() calls of read_blocksize, close; never one pread.
#[test]
#[ignore = "system tier: strace"]
fn the_read_op_makes_ffsb_s_stat_lseek_and_read_calls() {
    require_tool("strace", "strace");
    let dir = tempdir();
    // Files of 32 KiB, reads of 16 KiB in 4 KiB blocks: every read seeks (the range is 16 KiB).
    let args = ffsb_args(
        dir.path(),
        "time=1\n[filesystem]\nlocation=/unused\nnum_files=4\nnum_dirs=1\nmin_filesize=32k\nmax_filesize=32k\n[end]\n\
         [threadgroup]\nnum_threads=1\nread_weight=1\nread_size=16k\nread_blocksize=4k\n[end]\n",
    );
    let ops = per_open_calls(&refs(&args), &dir.path().join("strace.log"), "\"datafile");
    assert!(ops.len() > 10, "too few reads seen: {ops:?}");
    let want = [
        "openat",
        "stat",
        "lseek",
        "read=4096",
        "read=4096",
        "read=4096",
        "read=4096",
        "close",
    ];
    for calls in &ops {
        assert_eq!(calls, &want, "one read op's calls");
    }
}

/// FFSB's read_skip reads (fileops.c, ffsb_readfile) start at the head of the file and skip
/// read_skipsize with `lseek(SEEK_CUR)` after every whole block, the last one too; a last part
/// of a block is read without a seek after it.
#[test]
#[ignore = "system tier: strace"]
fn skip_reads_start_at_the_head_and_seek_on_from_where_they_are() {
    require_tool("strace", "strace");
    for (read_size, tail) in [("10000", &["read=1808"][..]), ("8192", &[][..])] {
        let dir = tempdir();
        let args = ffsb_args(
            dir.path(),
            &format!(
                "time=1\n[filesystem]\nlocation=/unused\nnum_files=4\nnum_dirs=1\nmin_filesize=64k\n\
                 max_filesize=64k\n[end]\n[threadgroup]\nnum_threads=1\nread_weight=1\nread_size={read_size}\n\
                 read_blocksize=4k\nread_skip=1\nread_skipsize=4k\n[end]\n"
            ),
        );
        let ops = per_open_calls(&refs(&args), &dir.path().join("strace.log"), "\"datafile");
        assert!(ops.len() > 10, "too few reads seen: {ops:?}");
        let mut want = vec!["openat", "stat", "read=4096", "lseek+4096", "read=4096", "lseek+4096"];
        want.extend(tail);
        want.push("close");
        for calls in &ops {
            assert_eq!(calls, &want, "read_size {read_size}: one read op's calls");
        }
    }
}

/// FFSB's create op opens with `open(O_CREAT | O_RDWR | O_TRUNC, S_IRWXU)` (fh.c's
/// fhopencreate()); FFSB makes every file that way, and every directory with `mkdir(S_IRWXU)`
/// (the data directory, its datadirs, the meta directory and metaop's): all are 0700.
#[test]
#[ignore = "system tier: strace"]
fn creates_open_as_ffsb_s_and_every_file_and_directory_is_0700() {
    use std::os::unix::fs::PermissionsExt;
    require_tool("strace", "strace");
    let dir = tempdir();
    let args = ffsb_args(
        dir.path(),
        "time=1\n[filesystem]\nlocation=/unused\nnum_files=6\nnum_dirs=2\nmin_filesize=8k\nmax_filesize=8k\n[end]\n\
         [threadgroup]\nnum_threads=1\ncreate_weight=1\nmetaop_weight=1\nwrite_blocksize=4k\n[end]\n",
    );
    let log = dir.path().join("strace.log");
    let calls = crate::common::strace_fslab(None, &log, "openat,mkdir,mkdirat", &refs(&args));
    // The create op's files: datafile6 on (the setup's own calls make 0 to 5).
    let number = |c: &str| -> Option<u64> {
        let n = &c[c.find("\"datafile")? + 9..];
        n[..n.find('"')?].parse().ok()
    };
    let creates: Vec<&String> = calls
        .iter()
        .map(|(_, c)| c)
        .filter(|c| c.starts_with("openat(") && c.contains("O_CREAT") && number(c).is_some_and(|n| n >= 6))
        .collect();
    assert!(!creates.is_empty(), "no create op seen: {calls:?}");
    for c in &creates {
        assert!(
            c.contains("O_RDWR|O_CREAT|O_TRUNC") && !c.contains("O_EXCL") && c.contains(", 0700)"),
            "{c}"
        );
    }
    let mkdirs: Vec<&String> = calls
        .iter()
        .map(|(_, c)| c)
        .filter(|c| c.starts_with("mkdir"))
        .collect();
    assert!(mkdirs.iter().any(|c| c.contains("\"data\"")), "{mkdirs:?}");
    assert!(mkdirs.iter().any(|c| c.contains("\"datadir1\"")), "{mkdirs:?}");
    assert!(mkdirs.iter().any(|c| c.contains("\"meta\"")), "{mkdirs:?}");
    for c in &mkdirs {
        assert!(c.contains(", 0700)"), "{c}");
    }

    let data = dir.path().join("run/data");
    let mut seen = 0;
    for path in [
        data.clone(),
        data.join("datadir0"),
        data.join("datadir1"),
        dir.path().join("run/meta"),
    ]
    .into_iter()
    .chain(
        entries(&data.join("datadir0"))
            .iter()
            .map(|n| data.join("datadir0").join(n)),
    ) {
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o7777;
        // The test's umask may take bits away, never add them.
        assert_eq!(mode & !0o700, 0, "{}: {mode:o}", path.display());
        assert_eq!(mode & 0o700, 0o700, "{}: {mode:o}", path.display());
        seen += 1;
    }
    assert!(seen > 4, "no data files in data/datadir0");
}

/// FFSB 6.0's createdir (metaops.c, filelist.c's add_dir()): `mkdir(data/datadir<N>, 0700)`, N
/// counting on from num_dirs. A kept fileset (`reuse=1`) with such directories is made again,
/// since this run's would collide with them. (With no create in the run, they stay empty.)
#[test]
#[ignore = "system tier: strace"]
fn createdir_adds_datadirs_numbered_on_from_num_dirs() {
    require_tool("strace", "strace");
    let dir = tempdir();
    let args = ffsb_args(
        dir.path(),
        "time=1\n[filesystem]\nlocation=/unused\nnum_files=4\nnum_dirs=2\nmin_filesize=4k\nmax_filesize=4k\nreuse=1\n[end]\n\
         [threadgroup]\nnum_threads=1\ncreatedir_weight=1\nop_delay=10\n[end]\n",
    );
    for _ in 0..2 {
        let calls = crate::common::strace_fslab(None, &dir.path().join("strace.log"), "mkdir,mkdirat", &refs(&args));
        let made: Vec<String> = calls
            .iter()
            .map(|(_, c)| c)
            .filter(|c| c.contains("\"datadir") && c.ends_with("= 0"))
            .map(|c| c.split('"').nth(1).unwrap().to_string())
            .collect();
        assert!(made.len() > 4, "{calls:#?}");
        let want: Vec<String> = (0..made.len()).map(|n| format!("datadir{n}")).collect();
        assert_eq!(made, want, "the setup's two, then createdir's from 2 on");
        let data = dir.path().join("run/data");
        let on_disk = entries(&data).into_iter().filter(|n| n.starts_with("datadir")).count();
        assert_eq!(on_disk, made.len());
        assert!(entries(&data.join(format!("datadir{}", made.len() - 1))).is_empty());
    }
}

/// A profile whose one thread adds directories and creates files in the proportion 1 to 4.
const CREATEDIR_AND_CREATE: &str = "time=1\n[filesystem]\nlocation=/unused\nnum_files=4\nnum_dirs=2\n\
     min_filesize=4k\nmax_filesize=4k\n[end]\n[threadgroup]\nnum_threads=1\ncreatedir_weight=1\n\
     create_weight=4\nwrite_size=4k\nwrite_blocksize=4k\nop_delay=1\n[end]\n";

/// The directories createdir added in `data`: the numbers of its `datadir<N>` from 2 on.
fn added_dirs(data: &Path) -> Vec<u64> {
    let mut added: Vec<u64> = entries(data)
        .iter()
        .filter_map(|n| n.strip_prefix("datadir")?.parse().ok())
        .filter(|&n| n >= 2)
        .collect();
    added.sort_unstable();
    added
}

/// FFSB 6.0 prints `dirnum: N` as createdir adds each directory (filelist.c's add_dir()), and a
/// file a later create makes goes into a directory drawn among all there are then, the added
/// ones included (add_file()'s `getrandom(rd, numsubdirs + 1)`).
#[test]
fn createdir_prints_each_directory_and_later_creates_fill_them() {
    let dir = tempdir();
    let args = ffsb_args(dir.path(), CREATEDIR_AND_CREATE);
    let r = fslab(&refs(&args));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let data = dir.path().join("run/data");
    let added = added_dirs(&data);
    assert!(added.len() > 5, "createdir added only {added:?}");
    assert_eq!(added, (2..2 + added.len() as u64).collect::<Vec<_>>());
    let lines: Vec<&str> = r.stdout.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.starts_with("Starting Actual Benchmark At"))
        .unwrap();
    let printed: Vec<String> = lines[start + 2..]
        .iter()
        .take_while(|l| l.starts_with("dirnum: "))
        .map(|l| l.to_string())
        .collect();
    let want: Vec<String> = added.iter().map(|n| format!("dirnum: {n}")).collect();
    assert_eq!(printed, want, "{}", r.stdout);
    assert!(lines[start + 2 + want.len()].starts_with("Syncing()"), "{}", r.stdout);
    // Every file the run made is somewhere: data/, its two directories or the added ones; and
    // the added ones hold some.
    let files_in = |d: &Path| entries(d).iter().filter(|n| n.starts_with("datafile")).count();
    let in_added: usize = added.iter().map(|n| files_in(&data.join(format!("datadir{n}")))).sum();
    let in_first = files_in(&data) + files_in(&data.join("datadir0")) + files_in(&data.join("datadir1"));
    let creates = r
        .stdout
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("create :")?
                .split_whitespace()
                .next()?
                .parse::<usize>()
                .ok()
        })
        .unwrap_or_else(|| panic!("no create line: {}", r.stdout));
    assert_eq!(in_added + in_first, 4 + creates, "{}", r.stdout);
    assert!(in_added > 0, "no file in an added directory: {added:?}");
}

/// The same run under strace: a create opens `datadir<N>/<name>` from `data/` only once the
/// mkdir of `datadir<N>` has returned.
#[test]
#[ignore = "system tier: strace"]
fn a_create_uses_an_added_directory_only_once_it_is_made() {
    require_tool("strace", "strace");
    let dir = tempdir();
    let args = ffsb_args(dir.path(), CREATEDIR_AND_CREATE);
    let calls = crate::common::strace_fslab(None, &dir.path().join("strace.log"), "mkdirat,openat", &refs(&args));
    let mut made = 2;
    let mut in_added = 0;
    for (_, c) in &calls {
        let Some(name) = c.split('"').nth(1) else { continue };
        if c.starts_with("mkdirat(") && c.ends_with("= 0") {
            if let Some(n) = name.strip_prefix("datadir").and_then(|n| n.parse::<u64>().ok()) {
                if n >= 2 {
                    assert_eq!(n, made, "{c}");
                    made += 1;
                }
            }
        } else if c.starts_with("openat(") && c.contains("O_CREAT") {
            if let Some((d, _)) = name.split_once('/') {
                let n: u64 = d
                    .strip_prefix("datadir")
                    .and_then(|n| n.parse().ok())
                    .unwrap_or_else(|| panic!("{c}"));
                assert!((2..made).contains(&n), "a create in {d} before its mkdir: {c}");
                in_added += 1;
            }
        }
    }
    assert!(
        made > 5 && in_added > 0,
        "{made} directories, {in_added} creates in added ones"
    );
}

/// FFSB's metaop (metaops.c, filelist.c): two mkdirs, an rmdir of a live directory and a rename
/// of one, which appends `a`. Names are `metafile<N>`; an rmdir'd entry, with its name as it was,
/// is made again by the next mkdir, the first removed first; a new number only when none waits.
/// The trace is checked against that model, call by call.
#[test]
#[ignore = "system tier: strace"]
fn metaop_names_renames_and_takes_removed_names_again_as_ffsb() {
    require_tool("strace", "strace");
    let dir = tempdir();
    let args = ffsb_args(
        dir.path(),
        "time=1\n[filesystem]\nlocation=/unused\nnum_files=2\nnum_dirs=1\nmin_filesize=4k\nmax_filesize=4k\n[end]\n\
         [threadgroup]\nnum_threads=1\nmetaop_weight=1\n[end]\n",
    );
    let log = dir.path().join("strace.log");
    let calls = crate::common::strace_fslab(None, &log, "mkdirat,unlinkat,renameat,renameat2", &refs(&args));
    let quoted = |c: &str| -> Vec<String> { c.split('"').skip(1).step_by(2).map(String::from).collect() };
    let (mut live, mut holes) = (std::collections::HashSet::new(), std::collections::VecDeque::new());
    let (mut numbers, mut counts) = (0u64, [0u64; 3]);
    for (_, c) in calls.iter().filter(|(_, c)| c.contains("\"metafile")) {
        assert!(c.ends_with("= 0"), "{c}");
        let names = quoted(c);
        if c.starts_with("mkdirat(") {
            let want = holes.pop_front().unwrap_or_else(|| {
                numbers += 1;
                format!("metafile{}", numbers - 1)
            });
            assert_eq!(names[0], want, "{c}");
            assert!(c.contains(", 0700)"), "{c}");
            live.insert(want);
            counts[0] += 1;
        } else if c.starts_with("unlinkat(") {
            assert!(c.contains("AT_REMOVEDIR"), "{c}");
            assert!(live.remove(&names[0]), "rmdir of a directory not there: {c}");
            holes.push_back(names[0].clone());
            counts[1] += 1;
        } else {
            assert_eq!(names[1], format!("{}a", names[0]), "{c}");
            assert!(live.remove(&names[0]), "rename of a directory not there: {c}");
            live.insert(names[1].clone());
            counts[2] += 1;
        }
    }
    assert!(counts[1] > 50, "too few metaops to see anything: {counts:?}");
    assert!(counts[0] == 2 * counts[1] && counts[1] == counts[2], "{counts:?}");
    assert!(numbers < counts[0], "no removed name was made again: {counts:?}");
    // What is left on disk is what the model says is live, in meta/ beside data/ (FFSB's
    // fs->meta).
    assert!(!dir.path().join("run/data/meta").exists());
    let meta = dir.path().join("run/meta");
    let mut on_disk: Vec<String> = entries(&meta).into_iter().collect();
    let mut model: Vec<String> = live.into_iter().collect();
    on_disk.sort();
    model.sort();
    assert_eq!(on_disk, model);
    // A second run in the same directory clears what the first left (its names are fslab's).
    let again = fslab(&refs(&args));
    assert_eq!(again.code, 0, "{}{}", again.stdout, again.stderr);
    let left = entries(&meta);
    assert!(
        !left.is_empty() && left.iter().all(|n| n.starts_with("metafile")),
        "{left:?}"
    );
    // Something fslab did not make there stops the run, and nothing is removed.
    std::fs::create_dir(meta.join("mine")).unwrap();
    let refused = fslab(&refs(&args));
    assert_ne!(refused.code, 0, "{}{}", refused.stdout, refused.stderr);
    assert!(
        refused.stderr.contains("meta") && refused.stderr.contains("mine"),
        "{}",
        refused.stderr
    );
    let mut kept = entries(&meta);
    kept.sort();
    let mut want = left.clone();
    want.push("mine".to_string());
    want.sort();
    assert_eq!(kept, want);
}
/// With directio=1, FFSB 5.2.1's fhopencreate() opens without O_DIRECT and 6.0's with it; every
/// other open of the run has it. (The setup's never do: see the next test.) (On a tmpfs, which
/// takes O_DIRECT.)
#[test]
#[ignore = "system tier: needs root (a tmpfs) and strace"]
fn a_5x_profile_creates_without_o_direct_and_a_6_0_one_with_it() {
    require_tool("strace", "strace");
    // Room for a second of creates of 16 KiB files (a few thousand).
    let fs = fslab_testkit::Tmpfs::mount("1g");
    let v5 = "num_filesystems=1\nnum_threadgroups=1\ndirectio=1\ntime=1\n\
              [filesystem0]\nlocation=/unused\nnum_files=4\nnum_dirs=1\nmin_filesize=16384\nmax_filesize=16384\n[end0]\n\
              [threadgroup0]\nnum_threads=1\ncreate_weight=1\nread_weight=1\nread_size=4096\nread_blocksize=4096\n\
              write_blocksize=4096\n[end0]\n";
    let v6 = "time=1\ndirectio=1\n[filesystem]\nlocation=/unused\nnum_files=4\nnum_dirs=1\nmin_filesize=16k\nmax_filesize=16k\n[end]\n\
              [threadgroup]\nnum_threads=1\ncreate_weight=1\nread_weight=1\nread_size=4096\nread_blocksize=4096\n\
              write_blocksize=4096\n[end]\n";
    for (text, create_direct) in [(v5, false), (v6, true)] {
        let dir = fs.path().join(if create_direct { "v6" } else { "v5" });
        std::fs::create_dir(&dir).unwrap();
        let args = ffsb_args(&dir, text);
        let calls = crate::common::strace_fslab(None, &dir.join("strace.log"), "openat", &refs(&args));
        let of_data = |c: &&String| c.contains("\"datafile") && !c.contains("= -1");
        // Past the setup's four files, the run's: creates, and reads (O_RDONLY).
        let run: Vec<&String> = calls
            .iter()
            .map(|(_, c)| c)
            .filter(of_data)
            .skip(4)
            .filter(|c| c.contains("O_TRUNC") || c.contains("O_RDONLY"))
            .collect();
        let creates: Vec<&&String> = run.iter().filter(|c| c.contains("O_TRUNC")).collect();
        let reads: Vec<&&String> = run.iter().filter(|c| c.contains("O_RDONLY")).collect();
        assert!(!creates.is_empty() && !reads.is_empty(), "{calls:#?}");
        for c in creates {
            assert_eq!(c.contains("O_DIRECT"), create_direct, "{c}");
        }
        for c in reads {
            assert!(c.contains("O_DIRECT"), "{c}");
        }
    }
}

/// FFSB's setup (`add_files()`): one file at a time, in order, each opened
/// `O_CREAT|O_RDWR|O_TRUNC` with mode 0700, never `O_DIRECT` (5.2.1 leaves it out, 6.0 turns
/// directio off for the setup), written in `create_blocksize` writes of zeros, the last one
/// shorter, and closed before the next is opened; then one sync. Aging's ten empty starting
/// files come from the same `add_files()`, with no sync after them. (On a tmpfs, which takes
/// O_DIRECT.)
#[test]
#[ignore = "system tier: needs root (a tmpfs) and strace"]
fn the_setup_makes_its_files_one_at_a_time_as_ffsb_s_add_files() {
    require_tool("strace", "strace");
    let fs = fslab_testkit::Tmpfs::mount("64m");
    let fsys =
        "location=/unused\nnum_files=3\nnum_dirs=0\nmin_filesize=10240\nmax_filesize=10240\ncreate_blocksize=4096\n";
    let tg = "num_threads=1\nread_weight=1\nread_size=4096\nread_blocksize=4096\n";
    let v5 = format!(
        "num_filesystems=1\nnum_threadgroups=1\ndirectio=1\ntime=1\n[filesystem0]\n{fsys}[end0]\n[threadgroup0]\n{tg}[end0]\n"
    );
    // 6.0, aged: the fill is made first, then aged to 1% of the tmpfs, then the data files.
    let ager = "[threadgroup]\nnum_threads=1\ncreate_weight=1\ndelete_weight=1\nwrite_blocksize=4096\n[end]\n";
    let v6 = format!(
        "time=1\ndirectio=1\n[filesystem]\n{fsys}agefs=1\ndesired_util=0.01\n{ager}[end]\n[threadgroup]\n{tg}[end]\n"
    );
    // The traces go elsewhere: the first run's, in the tmpfs, could take more than the 1% the
    // second ages it to, and the aging would then have nothing to do.
    let logs = tempdir();
    for (text, aged) in [(v5, false), (v6, true)] {
        let dir = fs.path().join(if aged { "v6" } else { "v5" });
        std::fs::create_dir(&dir).unwrap();
        let args = ffsb_args(&dir, &text);
        let calls = crate::common::strace_fslab(
            None,
            &logs.path().join(if aged { "v6.log" } else { "v5.log" }),
            "openat,write,close,sync,syncfs",
            &refs(&args),
        );
        let data = setup_calls(&calls, "datafile");
        let file = |n: u32| {
            [
                format!("open datafile{n}"),
                "write 4096".into(),
                "write 4096".into(),
                "write 2048".into(),
                "close".into(),
            ]
        };
        let want: Vec<String> = [file(0), file(1), file(2)]
            .concat()
            .into_iter()
            .chain(["sync".into()])
            .collect();
        assert_eq!(data, want, "{calls:#?}");
        let fill = setup_calls(&calls, "fillfile");
        // No sync between them and the aging run's first create.
        let want: Vec<String> = if aged {
            (0..10)
                .flat_map(|n| [format!("open fillfile{n}"), "close".into()])
                .collect()
        } else {
            Vec::new()
        };
        assert_eq!(fill, want, "{calls:#?}");
    }
}

/// FFSB's main() calls sync() once its filesystems are set up, before the callout and the
/// benchmark, whether their files were made or kept (`reuse=1`), and only when a benchmark
/// follows: `time=0` ends after the setup with no sync.
#[test]
#[ignore = "system tier: strace"]
fn ffsb_syncs_once_before_its_benchmark_and_not_for_a_setup_alone() {
    require_tool("strace", "strace");
    let dir = tempdir();
    let fsys = "location=/unused\nnum_files=3\nnum_dirs=0\nmin_filesize=4096\nmax_filesize=4096\nreuse=1\n";
    let profile = |time: u32| {
        format!("time={time}\n[filesystem]\n{fsys}[end]\n[threadgroup]\nnum_threads=1\nread_weight=1\nread_size=4096\nread_blocksize=4096\n[end]\n")
    };
    let args = ffsb_args(dir.path(), &profile(0));
    let syncs = |args: &[String]| {
        let calls = crate::common::strace_fslab(None, &dir.path().join("strace.log"), "sync,syncfs", &refs(args));
        calls
            .into_iter()
            .map(|(_, c)| c.split('(').next().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(syncs(&args), Vec::<String>::new(), "a setup alone");
    assert_eq!(
        entries(&dir.path().join("run/data")).len(),
        3 + 1,
        "the files and the marker"
    );
    // The files are kept (reuse=1): one sync() before the benchmark, one at its end.
    std::fs::write(dir.path().join("p.ffsb"), profile(1)).unwrap();
    assert_eq!(syncs(&args), ["sync", "sync"]);
    // With a callout, the first comes before it.
    let callout = profile(1).replace("time=1\n", "time=1\ncallout=true\n");
    std::fs::write(dir.path().join("p.ffsb"), callout).unwrap();
    assert_eq!(syncs(&args), ["sync", "sync"]);
}

/// The calls of a setup on the files named `prefix<N>`, from the first one's open to the sync
/// that follows or to the first open of such a file that is not FFSB's `add_files()` one (the
/// aging run's creates, with O_DIRECT): `open <name>`, `write <bytes>`, `close`, `sync` (or
/// `syncfs`, which FFSB does not call). Each file is opened while no other file of the setup is
/// open.
fn setup_calls(calls: &[(String, String)], prefix: &str) -> Vec<String> {
    let add_files =
        |c: &str| c.contains("O_RDWR|O_CREAT|O_EXCL|O_TRUNC") && c.contains(", 0700)") && !c.contains("O_DIRECT");
    let mut open_fd: Option<String> = None;
    let mut seen = Vec::new();
    for (_, c) in calls {
        let result = c.rsplit("= ").next().unwrap().trim();
        if c.starts_with("openat(") && c.contains(&format!("\"{prefix}")) {
            if !add_files(c) {
                assert!(
                    !seen.is_empty(),
                    "the setup's first file not opened as add_files() opens it: {c}"
                );
                break;
            }
            assert!(open_fd.is_none(), "a file opened before the last was closed: {c}");
            seen.push(format!("open {}", c.split('"').nth(1).unwrap()));
            open_fd = Some(result.to_string());
        } else if let Some(fd) = open_fd.clone() {
            if c.starts_with(&format!("write({fd},")) {
                assert!(c.contains("\"\\0\\0\\0"), "zeros: {c}");
                seen.push(format!("write {result}"));
            } else if c.starts_with(&format!("close({fd})")) {
                seen.push("close".into());
                open_fd = None;
            }
        } else if c.starts_with("sync(") && !seen.is_empty() {
            seen.push("sync".into());
            break;
        } else if c.starts_with("syncfs(") && !seen.is_empty() {
            seen.push("syncfs".into());
            break;
        }
    }
    seen
}

/// A 6.0 profile of two threadgroups, the first with `[stats]`.
const STATS_PROFILE: &str = "time=1\n\n[filesystem]\n\tlocation=/unused\n\tnum_files=40\n\tnum_dirs=2\n\
    \tmin_filesize=8k\n\tmax_filesize=16k\n[end]\n\n\
    [threadgroup]\n\tnum_threads=2\n\tread_weight=4\n\tread_size=8k\n\tread_blocksize=4k\n\tread_random=1\n\
    \tcreate_weight=2\n\twrite_blocksize=4k\n\tdelete_weight=1\n\tstat_weight=1\n\topen_close_weight=1\n\
    \t[stats]\n\t\tenable_stats=1\n\t\tenable_range=1\n\t\tignore=lseek\n\
    \t\tmsec_range 0.00 0.05\n\t\tmsec_range 0.05 1000.00\n\t[end]\n[end]\n\n\
    [threadgroup]\n\tnum_threads=1\n\tstat_weight=1\n[end]\n";

/// fslab ffsb on STATS_PROFILE in `dir`, with `extra` arguments: its output, once it has
/// succeeded.
fn stats_run(dir: &Path, extra: &[&str]) -> String {
    let mut args = ffsb_args(dir, STATS_PROFILE);
    args.extend(extra.iter().map(|a| a.to_string()));
    let r = fslab(&refs(&args));
    assert_eq!(r.code, 0, "{}", r.stderr);
    r.stdout
}

#[test]
fn stats_print_each_system_call_s_latency_after_its_threadgroup_s_table() {
    let dir = tempdir();
    let out = &stats_run(dir.path(), &[]);
    // ffsb_statsd_print(), after threadgroup 0's table and before threadgroup 1's; the ranges
    // last line first, as FFSB keeps them; lseek ignored, create never timed.
    assert_in_order(
        out,
        &[
            "ThreadGroup 0\n===============\n",
            " Transactions per Second\n",
            "\nSystem Call Latency statistics in millisecs\n=====\n\t\tMin\t\tAvg\t\tMax\t\tTotal Calls\n\
             \t\t========\t========\t========\t============\n[   open]\t0.0",
            "\n\t\t msec_range[0]\t0.050000 - 1000.000000 : ",
            "\n\t\t msec_range[1]\t0.000000 - 0.050000 : ",
            "\n\n[   read]\t",
            "\n\n[  write]\t",
            "\n\n[ unlink]\t",
            "\n\n[  close]\t",
            "\n\n[   stat]\t",
            "\n\nThreadGroup 1\n===============\n",
            "\nTotal Results\n",
        ],
    );
    assert_eq!(out.matches("System Call Latency").count(), 1, "{out}");
    assert!(!out.contains("[  lseek]") && !out.contains("[ create]"), "{out}");
}

#[test]
fn stats_count_each_call_ffsb_times_once() {
    let dir = tempdir();
    let out = stats_run(dir.path(), &["--json"]);
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}:\n{out}"));
    let f = &v["figures"];
    let stats = f["syscall_latency"].as_array().unwrap();
    assert_eq!(stats.len(), 1, "threadgroup 1 has no [stats]: {stats:?}");
    assert_eq!(stats[0]["threadgroup"], 0);
    let calls = |name: &str| {
        stats[0]["calls"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["call"] == name)
            .unwrap_or_else(|| panic!("no {name} in {stats:?}"))
            .clone()
    };
    let row = |name: &str, what: &str| {
        f["threadgroups"][0]["ops"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["op"] == name)
            .map_or(0, |o| o[what].as_u64().unwrap())
    };
    let n = |c: &Value| c["calls"].as_u64().unwrap();
    // read, create and open_close each open a file once and close it; stat and delete do not.
    let opened = row("read", "invocations") + row("create", "invocations") + row("open_close", "invocations");
    assert!(opened > 0);
    assert_eq!(n(&calls("open")), opened);
    assert_eq!(n(&calls("close")), opened);
    // A transaction is a block: one read() or write() each. The stat() before each read is
    // FFSB's size probe, which it does not time.
    assert_eq!(n(&calls("read")), row("read", "transactions"));
    assert_eq!(n(&calls("write")), row("create", "transactions"));
    assert_eq!(n(&calls("stat")), row("stat", "invocations"));
    assert_eq!(n(&calls("unlink")), row("delete", "invocations"));
    for c in stats[0]["calls"].as_array().unwrap() {
        let (min, avg, max) = (
            c["min_ms"].as_f64().unwrap(),
            c["avg_ms"].as_f64().unwrap(),
            c["max_ms"].as_f64().unwrap(),
        );
        assert!(0.0 < min && min <= avg && avg <= max, "{c}");
        let ranges = c["ranges"].as_array().unwrap();
        assert_eq!(ranges.len(), 2, "{c}");
        let in_ranges: u64 = ranges.iter().map(|r| r[2].as_u64().unwrap()).sum();
        // The two ranges cover 0 to 1 s: every call is in one.
        assert_eq!(in_ranges, n(c), "{c}");
    }
}

#[test]
fn stats_explain_as_call_latency_which_fslab_run_times() {
    let dir = tempdir();
    let explained = stats_run(dir.path(), &["--explain"]);
    let w = Workload::from_toml(&explained, "explained").unwrap();
    let timed: Vec<bool> = w.groups.iter().map(|g| g.call_latency).collect();
    assert_eq!(timed, vec![true, false], "only threadgroup 0 has [stats]");
    let toml = dir.path().join("stats.toml");
    std::fs::write(&toml, &explained).unwrap();
    let run = fslab(&["run", s(&toml), "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let v: Value = serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}:\n{}", run.stdout));
    let calls = v["phases"][0]["result"]["calls"].as_array().expect("the run's calls");
    let groups: Vec<&str> = calls.iter().map(|c| c["group"].as_str().unwrap()).collect();
    assert!(
        !groups.is_empty() && groups.iter().all(|g| *g == w.groups[0].name),
        "{calls:?}"
    );
    assert!(
        calls
            .iter()
            .any(|c| c["call"] == "open" && c["count"].as_u64() > Some(0)),
        "{calls:?}"
    );
}
