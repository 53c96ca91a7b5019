//! fio's option names in `fslab run`: each alias compiles to the same workload as fslab's own
//! flag, and --numjobs gives each job a file of its own, named as fio names it.

use crate::common::{fslab, s};
use fslab_testkit::tempdir;

fn explain(args: &[&str]) -> String {
    let run = fslab(&[&["run"], args, &["--explain"]].concat());
    assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
    run.stdout
}

#[test]
fn fio_s_option_names_compile_to_the_same_workload_as_fslab_s() {
    for (fio, fslab_own) in [
        (&["--rw", "randread"][..], &["--op", "randread"][..]),
        (&["--readwrite=randwrite"], &["--op", "randwrite"]),
        (&["--op", "read", "--runtime", "30"], &["--op", "read", "--time", "30s"]),
        (
            &["--op", "read", "--time", "5s", "--ramp_time", "2"],
            &["--op", "read", "--time", "5s", "--ramp", "2s"],
        ),
        (
            &["--op", "read", "--runtime", "5", "--time_based"],
            &["--op", "read", "--time", "5s"],
        ),
        (
            &["--op", "read", "--ioengine", "psync"],
            &["--op", "read", "--engine", "sync"],
        ),
        (&["--op", "read", "--ioengine=pvsync"], &["--op", "read"]),
        (
            &["--op", "read", "--ioengine", "io_uring", "--iodepth", "8"],
            &["--op", "read", "--engine", "io_uring", "--iodepth", "8"],
        ),
        (
            &["--op", "read", "--ioengine", "libaio", "--iodepth", "8"],
            &["--op", "read", "--engine", "libaio", "--iodepth", "8"],
        ),
        (
            &["--op", "read", "--ioengine", "posixaio", "--iodepth", "8"],
            &["--op", "read", "--engine", "io_uring", "--iodepth", "8"],
        ),
        (&["--op", "read", "--direct=1"], &["--op", "read", "--direct"]),
        (&["--op", "read", "--direct=0"], &["--op", "read"]),
        (
            &["--op", "read", "--directory", "/tmp"],
            &["--op", "read", "--dir", "/tmp"],
        ),
    ] {
        assert_eq!(explain(fio), explain(fslab_own), "{fio:?} against {fslab_own:?}");
    }
    // posixaio says what it runs as.
    let run = fslab(&["run", "--op", "read", "--ioengine", "posixaio", "--explain"]);
    assert!(
        run.stderr.contains("--ioengine posixaio: fslab runs it as io_uring"),
        "{}",
        run.stderr
    );
    for (bad, says) in [
        (&["--op", "read", "--direct=2"][..], "`2` is not 0 or 1"),
        (
            &["--op", "read", "--numjobs", "2", "--threads", "2"],
            "cannot be used with",
        ),
        (
            &["--op", "read", "--numjobs", "2", "--nrfiles", "2"],
            "fslab gives each job one file",
        ),
        (&["--op", "read", "--filename", "a/b"], "a file name in --dir"),
    ] {
        let run = fslab(&[&["run"], bad, &["--explain"]].concat());
        assert_eq!(run.code, 2, "{bad:?}: {}", run.stderr);
        assert!(run.stderr.contains(says), "{bad:?}: {}", run.stderr);
    }
}

/// The regular files directly in `dir`, with their sizes.
fn files_in(dir: &std::path::Path) -> Vec<(String, u64)> {
    let mut files: Vec<(String, u64)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_file())
        .map(|e| (e.file_name().into_string().unwrap(), e.metadata().unwrap().len()))
        .filter(|(n, _)| !n.starts_with('.'))
        .collect();
    files.sort();
    files
}

#[test]
fn numjobs_gives_each_job_its_own_file_as_fio_does() {
    let run_in = |extra: &[&str]| {
        let dir = tempdir();
        let args = [
            &[
                "run",
                "--rw=randwrite",
                "--size",
                "1m",
                "--runtime",
                "1",
                "--directory",
                s(dir.path()),
            ][..],
            extra,
        ]
        .concat();
        let run = fslab(&args);
        assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
        (files_in(dir.path()), dir)
    };
    let (files, _d) = run_in(&["--numjobs", "3", "--name", "job"]);
    let mib = 1 << 20;
    assert_eq!(
        files,
        [
            ("job.0.0".to_string(), mib),
            ("job.1.0".to_string(), mib),
            ("job.2.0".to_string(), mib)
        ]
    );
    let (files, _d) = run_in(&["--numjobs", "3", "--filename", "shared"]);
    assert_eq!(files, [("shared".to_string(), mib)]);
    // fslab's own --threads share one fileset, beneath its own directory.
    let (files, d) = run_in(&["--threads", "3"]);
    assert!(files.is_empty(), "{files:?}");
    assert!(d.path().join("adhoc").is_dir());
}

/// fio's --fsync=N is the native workload's `fsync_every = N`, in both of clap's forms; 0 is
/// none, as in fio.
#[test]
fn fsync_is_the_workload_s_fsync_every() {
    let plain = explain(&["--op", "randwrite"]);
    let native = plain.replacen("fileset = \"adhoc\"\n", "fileset = \"adhoc\"\nfsync_every = 4\n", 1);
    assert_ne!(native, plain);
    let dir = tempdir();
    let file = dir.path().join("w.toml");
    std::fs::write(&file, &native).unwrap();
    assert_eq!(explain(&[s(&file)]), native);
    assert_eq!(explain(&["--op", "randwrite", "--fsync=4"]), native);
    assert_eq!(explain(&["--op", "randwrite", "--fsync", "4"]), native);
    assert_eq!(explain(&["--op", "randwrite", "--fsync=0"]), plain);
    // randrw counts its reads too, and says so.
    let run = fslab(&["run", "--op", "randrw", "--fsync", "8", "--explain"]);
    assert!(run.stderr.contains("fio counts only the writes"), "{}", run.stderr);
}

/// As fio: 16 writes with --fsync=4 make 3 fsyncs, one after each 4th write but the last (the
/// run ends there); fio 3.33 with the same options makes 3 as well.
#[test]
fn fsync_syncs_after_every_n_writes() {
    let dir = tempdir();
    let args = [
        "run",
        "--op",
        "randwrite",
        "--size",
        "64k",
        "--bs",
        "4k",
        "--fsync",
        "4",
        "--json",
        "--dir",
    ];
    let run = fslab(&[&args[..], &[s(dir.path())]].concat());
    assert_eq!(run.code, 0, "{}", run.stderr);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let count = |op: &str| {
        v["phases"][0]["result"]["ops"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["op"] == op)
            .map_or(0, |o| o["count"].as_u64().unwrap())
    };
    assert_eq!((count("write"), count("fsync")), (16, 3), "{}", run.stdout);
}

/// `--processes` makes each job a process, as fio's are without --thread: the workload says so,
/// and each job's figures come back from its process.
#[test]
fn processes_runs_each_job_as_a_process_and_counts_its_work() {
    assert!(explain(&["--op", "read", "--processes"]).contains("processes = true"));
    assert!(!explain(&["--op", "read"]).contains("processes"));
    let dir = tempdir();
    let run = fslab(&[
        "run",
        "--rw=write",
        "--bs",
        "64k",
        "--size",
        "1m",
        "--numjobs",
        "2",
        "--processes",
        "--directory",
        s(dir.path()),
        "--json",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let out: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let result = &out["phases"][0]["result"];
    assert_eq!(result["workload"]["processes"], true);
    assert_eq!(result["totals"]["bytes_written"], 2 << 20, "{result}");
    let threads = result["threads"].as_array().unwrap();
    assert_eq!(threads.len(), 2);
    assert!(
        threads.iter().all(|t| t["ops"] == 16 && t["finished"] == true),
        "{threads:?}"
    );
    let mib = 1 << 20;
    assert_eq!(
        files_in(dir.path()),
        [("write.0.0".to_string(), mib), ("write.1.0".to_string(), mib)]
    );
}

#[test]
fn random_patterns_visit_each_block_once_per_pass_unless_norandommap() {
    // fio's random map is on by default: the workload shuffles its offsets (the deck is checked
    // under strace by run::shuffled_reads_visit_each_record_once_per_pass).
    for op in ["randread", "randwrite", "randrw"] {
        let text = explain(&["--op", op]);
        assert!(text.contains("shuffle = true"), "{op}: {text}");
        let text = explain(&["--op", op, "--norandommap"]);
        assert!(!text.contains("shuffle"), "{op} --norandommap: {text}");
    }
    assert!(!explain(&["--op", "read"]).contains("shuffle"));
}

/// `--ioengine libaio` makes fio's libaio calls with fio's defaults: an `io_submit()` of one
/// request at a time and, once `--iodepth` are in flight, an `io_getevents(1, 1)` for each next
/// one, so that the queue stays full; the last ones are reaped together before `io_destroy()`.
#[test]
#[ignore = "system tier: strace"]
fn libaio_submits_one_request_and_reaps_one_as_fio_does() {
    fslab_testkit::require_tool("strace", "strace");
    let d = tempdir();
    let dir = s(d.path());
    let args = [
        "run",
        "--op",
        "randread",
        "--bs",
        "4k",
        "--size",
        "64k",
        "--ioengine",
        "libaio",
        "--iodepth",
        "4",
        "--dir",
        dir,
    ];
    let calls = crate::common::strace_fslab(
        None,
        &d.path().join("strace.log"),
        "io_setup,io_submit,io_getevents,io_destroy,io_uring_setup,pread64",
        &args,
    );
    let names: Vec<&str> = calls
        .iter()
        .map(|(_, c)| c.split('(').next().unwrap_or_default())
        .collect();
    let count = |n: &str| names.iter().filter(|&&m| m == n).count();
    // 64 KiB in 4 KiB reads: 16 requests, none by pread or io_uring.
    assert_eq!(
        (count("io_setup"), count("io_submit"), count("io_destroy")),
        (1, 16, 1),
        "{calls:#?}"
    );
    let block_preads = calls
        .iter()
        .filter(|(_, c)| c.starts_with("pread64(") && c.contains(", 4096, "))
        .count();
    assert_eq!((block_preads, count("io_uring_setup")), (0, 0), "{calls:#?}");
    let reaps: Vec<String> = calls
        .iter()
        .filter(|(_, c)| c.starts_with("io_getevents("))
        .map(|(_, c)| c.split(", ").skip(1).take(2).collect::<Vec<_>>().join(","))
        .collect();
    let (last, steady) = reaps.split_last().expect("io_getevents calls");
    assert!(steady.len() >= 12 && steady.iter().all(|r| r == "1,1"), "{reaps:?}");
    assert!(last.starts_with("3,"), "the last three reaped together: {reaps:?}");
    let aio_calls: Vec<&&str> = names.iter().filter(|n| n.starts_with("io_")).collect();
    assert_eq!(aio_calls.last(), Some(&&"io_destroy"), "{calls:#?}");
}

/// fio's batch flags, in fio's spelling, shape libaio's calls as they shape fio's: with
/// `--iodepth_batch_submit 4 --iodepth_batch_complete_min 4` at iodepth 4, fio 3.33 makes four
/// `io_submit()`s of 4 requests, each followed by an `io_getevents(4, 4)`.
#[test]
#[ignore = "system tier: strace"]
fn libaio_submits_and_reaps_in_batches_as_fio_does() {
    fslab_testkit::require_tool("strace", "strace");
    let d = tempdir();
    let dir = s(d.path());
    let args = [
        "run",
        "--op",
        "randread",
        "--bs",
        "4k",
        "--size",
        "64k",
        "--ioengine",
        "libaio",
        "--iodepth",
        "4",
        "--iodepth_batch_submit",
        "4",
        "--iodepth_batch_complete_min",
        "4",
        "--dir",
        dir,
    ];
    let calls = crate::common::strace_fslab(None, &d.path().join("strace.log"), "io_submit,io_getevents", &args);
    let seen: Vec<String> = calls
        .iter()
        .map(|(_, c)| {
            let arg = |k: usize| c.split(", ").nth(k).unwrap_or_default().to_string();
            match c.split('(').next().unwrap_or_default() {
                "io_submit" => format!("submit {}", arg(1)),
                _ => format!("get {},{}", arg(1), arg(2)),
            }
        })
        .collect();
    let want: Vec<String> = (0..4)
        .flat_map(|_| ["submit 4".to_string(), "get 4,4".to_string()])
        .collect();
    assert_eq!(seen, want, "{calls:#?}");
}
