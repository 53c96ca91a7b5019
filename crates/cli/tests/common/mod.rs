//! Running the `fslab` binary from the tests, with a time limit so a hang fails the test.

#![allow(dead_code)]

pub mod lab;

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// Longer than any command of the tests should take.
pub const HANG: Duration = Duration::from_secs(60);

/// What a run of `fslab` did.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `fslab ARGS` (in `cwd` when given, with extra environment), killing it and failing the
/// test if it does not end within [`HANG`].
pub fn fslab_in(cwd: Option<&Path>, env: &[(&str, &Path)], args: &[&str]) -> Run {
    fslab_within(cwd, env, args, HANG)
}

/// [`fslab_in`] with its own time limit, for commands that take longer than [`HANG`] (a study).
pub fn fslab_within(cwd: Option<&Path>, env: &[(&str, &Path)], args: &[&str], limit: Duration) -> Run {
    let child = fslab_command(cwd, env, args).spawn().expect("start fslab");
    finish(child, args, limit)
}

/// The command `fslab ARGS` with its output captured, for a test that starts it itself (in the
/// background, or as another user) and then calls [`finish`].
pub fn fslab_command(cwd: Option<&Path>, env: &[(&str, &Path)], args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_fslab"));
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(dir) = cwd {
        cmd.current_dir(dir);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

/// Waits for a started `fslab ARGS`, killing it and failing the test if it does not end within
/// `limit`.
pub fn finish(child: Child, args: &[&str], limit: Duration) -> Run {
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let out: Output = match rx.recv_timeout(limit) {
        Ok(o) => o.expect("wait for fslab"),
        Err(_) => {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            panic!("fslab {args:?} did not end within {limit:?}");
        }
    };
    Run {
        code: out
            .status
            .code()
            .unwrap_or_else(|| panic!("fslab {args:?} was killed: {}", out.status)),
        stdout: String::from_utf8(out.stdout).expect("utf-8 stdout"),
        stderr: String::from_utf8(out.stderr).expect("utf-8 stderr"),
    }
}

/// The names in `dir`, sorted.
pub fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}
