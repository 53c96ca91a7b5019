//! What a newcomer reads first: every command's help describes every option and ends with real
//! examples; shell completions and man pages; and commands that print a document end quietly when
//! the reader closes the pipe.

use crate::common::{finish, fslab, fslab_command, fslab_in, HANG};
use std::process::Stdio;

/// fslab itself, and every command and subcommand, as its words.
const COMMANDS: &[&[&str]] = &[
    &[],
    &["run"],
    &["ffsb"],
    &["dbench"],
    &["doctor"],
    &["info"],
    &["study"],
    &["study", "run"],
    &["study", "resume"],
    &["study", "list"],
    &["study", "show"],
    &["report"],
    &["compare"],
    &["examples"],
    &["completions"],
    &["manpages"],
    &["schema"],
];

/// The lines of the help's last "Examples:" section.
fn examples(help: &str) -> Vec<&str> {
    let after = help.rsplit("Examples:\n").next().unwrap_or_default();
    if after.len() == help.len() {
        return Vec::new();
    }
    after.lines().take_while(|l| !l.trim().is_empty()).collect()
}

#[test]
fn every_command_s_help_describes_each_option_and_ends_with_examples() {
    // The top-level list names every command above (and `help`).
    let top = fslab(&["--help"]);
    assert_eq!(top.code, 0);
    for words in COMMANDS.iter().filter(|w| w.len() == 1) {
        assert!(
            top.stdout
                .lines()
                .any(|l| l.trim_start().starts_with(&format!("{} ", words[0]))),
            "{words:?} is not listed:\n{}",
            top.stdout
        );
    }
    for words in COMMANDS {
        let args = [*words, &["--help"]].concat();
        let run = fslab(&args);
        assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
        let ex = examples(&run.stdout);
        assert!(
            (2..=5).contains(&ex.len()),
            "{args:?}: {} examples:\n{}",
            ex.len(),
            run.stdout
        );
        for e in &ex {
            assert!(e.starts_with("  fslab "), "{args:?}: `{e}`");
        }
        // An option or argument line (indented 2 or 6, where wrapped descriptions go deeper):
        // the flag, then its description on the same line or, in clap's next-line layout, on
        // the next line, indented deeper.
        let lines: Vec<&str> = run.stdout.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let t = line.trim_start();
            let indent = line.len() - t.len();
            if (indent == 2 || indent == 6) && (t.starts_with('-') || t.starts_with('<') || t.starts_with('[')) {
                let same_line = t.split_once("  ").is_some_and(|(_, d)| !d.trim().is_empty());
                let next_line = lines.get(i + 1).is_some_and(|n| {
                    let nt = n.trim_start();
                    !nt.is_empty() && n.len() - nt.len() > indent + 2
                });
                assert!(
                    same_line || next_line,
                    "{args:?}: no description: `{line}`\n{}",
                    run.stdout
                );
            }
        }
    }
    // sysbench's and IOzone's own help texts, in their originals' layout, end with examples too.
    for args in [&["sysbench", "fileio", "help"][..], &["iozone", "-h"]] {
        let run = fslab(args);
        assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
        let ex = examples(&run.stdout);
        assert!((2..=5).contains(&ex.len()), "{args:?}:\n{}", run.stdout);
        assert!(
            ex.iter().all(|e| e.starts_with(&format!("  fslab {} ", args[0]))),
            "{ex:?}"
        );
    }
    let sysbench = fslab(&["sysbench", "fileio", "help"]);
    assert!(!sysbench.stdout.contains("/sysbench/"), "{}", sysbench.stdout);
}

#[test]
fn completions_are_scripts_the_shells_read() {
    let bash = fslab(&["completions", "bash"]);
    assert_eq!(bash.code, 0, "{}", bash.stderr);
    for word in ["_fslab()", "complete -F _fslab", "doctor", "study", "--dry-run"] {
        assert!(bash.stdout.contains(word), "no `{word}` in the bash completions");
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("fslab.bash");
    std::fs::write(&file, &bash.stdout).unwrap();
    let check = std::process::Command::new("bash")
        .arg("-n")
        .arg(&file)
        .output()
        .expect("run bash -n");
    assert!(
        check.status.success(),
        "bash -n: {}",
        String::from_utf8_lossy(&check.stderr)
    );
    for (shell, word) in [("zsh", "#compdef fslab"), ("fish", "complete -c fslab")] {
        let run = fslab(&["completions", shell]);
        assert_eq!(run.code, 0, "{shell}: {}", run.stderr);
        assert!(run.stdout.contains(word), "{shell}: no `{word}`");
    }
    let bad = fslab(&["completions", "tcsh"]);
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("invalid value 'tcsh'"), "{}", bad.stderr);
}

#[test]
fn manpages_are_written_for_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let man = dir.path().join("man1");
    let run = fslab_in(None, &[], &["manpages", man.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let mut pages: Vec<String> = std::fs::read_dir(&man)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    pages.sort();
    for page in [
        "fslab.1",
        "fslab-run.1",
        "fslab-study.1",
        "fslab-study-run.1",
        "fslab-report.1",
        "fslab-doctor.1",
    ] {
        assert!(pages.iter().any(|p| p == page), "no {page} in {pages:?}");
    }
    // Each written page is printed, one per line.
    assert_eq!(run.stdout.lines().count(), pages.len(), "{}", run.stdout);
    let study_run = std::fs::read_to_string(man.join("fslab-study-run.1")).unwrap();
    assert!(study_run.contains(".TH fslab-study-run"), "{study_run}");
    assert!(study_run.contains("dry\\-run"), "{study_run}");
}

#[test]
fn a_closed_pipe_ends_a_printed_document_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let man = dir.path().join("man");
    let man = man.to_str().unwrap();
    for args in [
        &["schema", "outcome"][..],
        &["completions", "bash"],
        &["doctor"],
        &["manpages", man],
        &["run", "--op", "read", "--size", "1m", "--explain"],
    ] {
        let mut cmd = fslab_command(None, &[], args);
        cmd.stdout(Stdio::piped());
        let mut child = cmd.spawn().expect("start fslab");
        // The reader goes away before fslab writes a byte.
        drop(child.stdout.take());
        let run = finish(child, args, HANG);
        assert!(!run.stderr.contains("panicked"), "{args:?}: {}", run.stderr);
        assert!(
            run.code == 0 || run.code == 141,
            "{args:?}: exit {}: {}",
            run.code,
            run.stderr
        );
    }
}

#[test]
fn the_readme_s_cargo_run_means_the_fslab_binary() {
    // `cargo run --release -- study run studies/quick.toml` needs exactly one binary among the
    // workspace's default members: the fuzzer's made it ambiguous once.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = std::process::Command::new(env!("CARGO"))
        .args(["metadata", "--no-deps", "--format-version", "1", "--offline"])
        .current_dir(&root)
        .output()
        .expect("run cargo metadata");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let defaults: Vec<&str> = meta["workspace_default_members"]
        .as_array()
        .expect("workspace_default_members (cargo 1.71 or later)")
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    let binaries: Vec<&str> = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| defaults.contains(&p["id"].as_str().unwrap()))
        .flat_map(|p| p["targets"].as_array().unwrap().iter())
        .filter(|t| t["kind"].as_array().unwrap().iter().any(|k| k == "bin"))
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(binaries, ["fslab"]);
}
