//! The fast tier's share of fuzzing: every target's corpus replayed (the repository's files,
//! `crates/fuzz/corpus/`, the reproducers of what fuzzing found), then a few seconds of
//! mutations from a fixed seed. No input may panic, hang or break the memory budget.

use fslab_fuzz::{Ran, Session, TARGETS};
use std::time::Duration;

/// One test, so that the memory budget (one counter for the process) sees one input at a time.
#[test]
fn no_parser_panics_hangs_or_runs_out_of_memory() {
    let out = tempfile::tempdir().unwrap();
    fslab_fuzz::bound_memory(256 << 20, out.path());
    let dir = out.path().to_path_buf();
    let report = fslab_fuzz::guarded(Duration::from_secs(60), move || {
        let mut lines = Vec::new();
        for t in TARGETS {
            let (n, found) = fslab_fuzz::replay(t);
            assert!(n > 0, "the {} corpus is empty", t.name);
            for f in found {
                lines.push(format!("{}: {}", t.name, f.message));
            }
            let session = Session {
                seed: 12,
                time: Duration::from_millis(300),
                max_len: 4096,
                out: dir.clone(),
            };
            let s = fslab_fuzz::fuzz(t, &session);
            assert!(s.execs > 0, "{}: no input ran", t.name);
            for f in s.findings {
                lines.push(format!("{} (mutated, seed 12): {}", t.name, f.message));
            }
        }
        lines
    })
    .unwrap_or_else(|h| {
        panic!(
            "an input hung for {:?}: {:?}",
            h.after,
            String::from_utf8_lossy(&h.input)
        )
    });
    assert!(report.is_empty(), "panics:\n{}", report.join("\n"));
}

#[test]
fn a_panic_is_caught_and_reported_with_its_place() {
    let t: &'static fslab_fuzz::Target = Box::leak(Box::new(fslab_fuzz::Target {
        name: "boom",
        what: "panics on `!`",
        run: |b| {
            if b.contains(&b'!') {
                panic!("boom at {}", b.len());
            }
            "ok".into()
        },
        dict: &[],
        seeds: &[],
    }));
    assert_eq!(fslab_fuzz::exec(t, b"fine"), Ran::Returned("ok".into()));
    match fslab_fuzz::exec(t, b"bad!") {
        Ran::Panicked(m) => assert!(m.contains("tests/fuzz/main.rs") && m.ends_with("boom at 4"), "{m}"),
        other => panic!("{other:?}"),
    }
    // Fuzzing finds it and saves it.
    let out = tempfile::tempdir().unwrap();
    let session = Session {
        seed: 3,
        time: Duration::from_millis(200),
        max_len: 64,
        out: out.path().to_path_buf(),
    };
    let s = fslab_fuzz::fuzz(t, &session);
    assert_eq!(s.findings.len(), 1, "{:?}", s.findings);
    let saved = s.findings[0].saved.clone().expect("saved");
    assert!(std::fs::read(saved).unwrap().contains(&b'!'));
}

#[test]
fn a_hang_is_detected_and_its_input_returned() {
    let t: &'static fslab_fuzz::Target = Box::leak(Box::new(fslab_fuzz::Target {
        name: "sleepy",
        what: "hangs",
        run: |_| loop {
            std::thread::park();
        },
        dict: &[],
        seeds: &[],
    }));
    let hung =
        fslab_fuzz::guarded(Duration::from_millis(200), move || fslab_fuzz::exec(t, b"stuck")).expect_err("a hang");
    assert_eq!(hung.input, b"stuck");
    assert!(hung.after > Duration::from_millis(200));
}

/// An input that makes the heap grow past the budget ends the process with exit status 4 and
/// leaves the input in `memory.bin` (checked in a child process: the breach ends it).
#[test]
fn an_input_past_the_memory_budget_is_saved_and_ends_the_process() {
    if let Some(out) = std::env::var_os("FSLAB_FUZZ_MEMORY_CHILD") {
        let t: &'static fslab_fuzz::Target = Box::leak(Box::new(fslab_fuzz::Target {
            name: "greedy",
            what: "allocates a gigabyte",
            run: |b| {
                let v = vec![1u8; 1 << 30];
                format!("{}{}", v[b.len() % v.len()], v.len())
            },
            dict: &[],
            seeds: &[],
        }));
        fslab_fuzz::bound_memory(64 << 20, std::path::Path::new(&out));
        fslab_fuzz::exec(t, b"the greedy input");
        unreachable!("the budget ends the process");
    }
    let out = tempfile::tempdir().unwrap();
    let child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "an_input_past_the_memory_budget_is_saved_and_ends_the_process",
            "--nocapture",
        ])
        .env("FSLAB_FUZZ_MEMORY_CHILD", out.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&child.stderr);
    assert_eq!(child.status.code(), Some(fslab_fuzz::guard::EXIT_MEMORY), "{stderr}");
    assert!(
        stderr.contains("an input made the heap grow past its budget (an allocation of 1073741824 bytes)"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read(out.path().join("memory.bin")).unwrap(),
        b"the greedy input"
    );
}
