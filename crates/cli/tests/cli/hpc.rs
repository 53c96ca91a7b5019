//! `fslab ior` and `fslab mdtest` from the outside: their text and exit codes, and in the system
//! tier the calls of an IOR write phase and an mdtest file-creation phase under strace, which
//! must be IOR's and mdtest's (kinds, flags, sizes, counts).

use super::common::fslab;
use fslab_testkit::strace::whole_calls;
use std::path::Path;

#[test]
fn ior_and_mdtest_run_alone_and_say_what_is_wrong_with_their_options() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().to_str().unwrap();
    let r = fslab(&["ior", "-t", "4k", "-b", "16k", "-s", "2", "--dir", d]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .starts_with("IOR-4.0.0: MPI Coordinated Test of Parallel I/O\n"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("\nSummary of all tests:\n"));
    let r = fslab(&["mdtest", "-n", "3", "-d", "out", "--dir", d]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("SUMMARY rate: (of 1 iterations)"), "{}", r.stdout);
    let r = fslab(&["ior", "-t", "3k", "-b", "8k", "--dir", d]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("-b/-t: block size must be a multiple of transfer size"),
        "{}",
        r.stderr
    );
    let r = fslab(&["mdtest", "-n", "2", "-I", "1", "--dir", d]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("-n/-I"), "{}", r.stderr);
    for tool in ["ior", "mdtest"] {
        for h in ["-h", "--help"] {
            let r = fslab(&[tool, h]);
            assert_eq!(r.code, 0, "{tool} {h}: {}", r.stderr);
            assert!(r.stdout.starts_with(&format!("Usage: fslab {tool} ")), "{}", r.stdout);
        }
    }
    let r = fslab(&["ior", "--json", "-t", "4k", "-b", "8k", "--dir", d]);
    let o: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(o["tool"], "ior");
    assert_eq!(o["metrics"][0]["name"], "Max Write");
    assert!(
        fslab_testkit::entries(tmp.path()).is_empty(),
        "{:?}",
        fslab_testkit::entries(tmp.path())
    );
}

/// The calls `fslab ARGS --dir DIR` makes, traced: each whole call as strace writes it.
fn traced(dir: &Path, args: &[&str]) -> Vec<String> {
    fslab_testkit::require_tool("strace", "strace");
    let log = dir.join("strace.log");
    let status = std::process::Command::new("strace")
        .args(["-f", "-qq", "-o"])
        .arg(&log)
        .arg(env!("CARGO_BIN_EXE_fslab"))
        .args(args)
        .arg("--dir")
        .arg(dir.join("run"))
        .stdout(std::process::Stdio::null())
        .status()
        .expect("strace runs");
    assert!(status.success(), "fslab {args:?} under strace failed");
    let text = std::fs::read_to_string(&log).unwrap();
    whole_calls(&text).into_iter().map(|(_, c)| c).collect()
}

/// The descriptor a call returned (`... = 5`).
fn result(call: &str) -> String {
    call.rsplit("= ")
        .next()
        .unwrap_or("")
        .split_whitespace()
        .next()
        .unwrap_or("")
        .to_string()
}

/// The calls made on the descriptor `calls[at]` opened, from the open to its close (a rank
/// alone is one thread: nothing else runs in between).
fn on_open(calls: &[String], at: usize) -> Vec<&String> {
    let fd = result(&calls[at]);
    let mut v = Vec::new();
    for c in &calls[at + 1..] {
        let name = c.split('(').next().unwrap();
        if c.starts_with(&format!("{name}({fd},")) || c.starts_with(&format!("{name}({fd})")) {
            v.push(c);
            if name == "close" {
                break;
            }
        }
    }
    v
}

fn kinds(calls: &[&String]) -> Vec<String> {
    calls.iter().map(|c| c.split('(').next().unwrap().to_string()).collect()
}

#[test]
#[ignore = "system tier: needs root and strace"]
fn an_ior_write_phase_makes_ior_s_calls() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join("run")).unwrap();
    // 2 segments of 4 transfers of 64 KiB, -e: as IOR 4.0 under strace -f.
    let calls = traced(
        tmp.path(),
        &["ior", "-w", "-e", "-t", "64k", "-b", "256k", "-s", "2", "-o", "tf"],
    );
    let opens: Vec<usize> = (0..calls.len())
        .filter(|&i| calls[i].starts_with("openat(") && calls[i].contains("/run/tf\""))
        .collect();
    assert_eq!(opens.len(), 1, "{calls:#?}");
    assert!(
        calls[opens[0]].contains("O_RDWR|O_CREAT, 0664)"),
        "IOR's create: {}",
        calls[opens[0]]
    );
    let on = on_open(&calls, opens[0]);
    let mut want: Vec<&str> = ["lseek", "write"].repeat(8);
    want.extend(["fsync", "close"]);
    assert_eq!(kinds(&on), want, "{on:#?}");
    for k in 0..8 {
        assert!(
            on[2 * k].contains(&format!(", {}, SEEK_SET)", k * 65536)),
            "transfer {k}: {}",
            on[2 * k]
        );
        assert!(on[2 * k + 1].contains(", 65536) = 65536"), "{}", on[2 * k + 1]);
    }
    // Before: the check that it exists and the removal of an old one; after: stat, then the
    // removal (access, unlink).
    let path_calls: Vec<&str> = calls
        .iter()
        .filter(|c| c.contains("/run/tf\"") && !c.starts_with("openat("))
        .map(|c| c.split('(').next().unwrap())
        .collect();
    assert_eq!(
        path_calls,
        ["newfstatat", "access", "newfstatat", "access", "unlink"],
        "{calls:#?}"
    );
}

#[test]
#[ignore = "system tier: needs root and strace"]
fn an_mdtest_file_creation_phase_makes_mdtest_s_calls() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join("run")).unwrap();
    let calls = traced(tmp.path(), &["mdtest", "-F", "-C", "-n", "5", "-w", "10", "-d", "md"]);
    let mkdirs: Vec<&String> = calls.iter().filter(|c| c.starts_with("mkdir(")).collect();
    assert_eq!(mkdirs.len(), 3, "-d, test-dir.0-0, mdtest_tree.0: {mkdirs:#?}");
    assert!(mkdirs.iter().all(|m| m.contains(", 0775)")), "{mkdirs:#?}");
    assert!(mkdirs[2].contains("/md/test-dir.0-0/mdtest_tree.0/\""), "{}", mkdirs[2]);
    let opens: Vec<usize> = (0..calls.len())
        .filter(|&i| calls[i].starts_with("openat(") && calls[i].contains("/file.mdtest.0."))
        .collect();
    assert_eq!(opens.len(), 5, "{calls:#?}");
    for (i, &at) in opens.iter().enumerate() {
        let o = &calls[at];
        assert!(
            o.contains(&format!("mdtest_tree.0/file.mdtest.0.{i}\", O_RDWR|O_CREAT, 0664)")),
            "{o}"
        );
        let on = on_open(&calls, at);
        assert_eq!(kinds(&on), ["lseek", "write", "close"], "{on:#?}");
        assert!(
            on[0].contains(", 0, SEEK_SET)") && on[1].contains(", 10) = 10"),
            "{on:#?}"
        );
    }
    let removals = calls
        .iter()
        .filter(|c| c.starts_with("unlink(") || c.starts_with("rmdir("));
    assert_eq!(removals.count(), 0, "-C removes nothing");
}

#[test]
#[ignore = "system tier: needs root to drop the caches"]
fn drop_caches_runs_before_each_phase_as_root() {
    fslab_testkit::require_root();
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().to_str().unwrap();
    for args in [
        vec!["ior", "--drop-caches", "-t", "4k", "-b", "16k", "--dir", d],
        vec!["mdtest", "--drop-caches", "-n", "4", "-d", "out", "--dir", d],
    ] {
        let r = fslab(&args);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
    }
}
