//! Running a program (the `fslab` binary, whose path only the cli's tests know, as
//! `env!("CARGO_BIN_EXE_fslab")`) with a time limit, so that a hang fails the test.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// What a run of a program did.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// The command `PROGRAM ARGS` (in `cwd` when given, with extra environment), its input empty and
/// its output captured, for a test that starts it itself (in the background, or as another user)
/// and then calls [`finish`].
pub fn binary_command(program: &Path, cwd: Option<&Path>, env: &[(&str, &Path)], args: &[&str]) -> Command {
    let mut cmd = Command::new(program);
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

/// Runs `PROGRAM ARGS` (see [`binary_command`]), killing it and failing the test if it does
/// not end within `limit`.
pub fn run_binary(program: &Path, cwd: Option<&Path>, env: &[(&str, &Path)], args: &[&str], limit: Duration) -> Run {
    let child = binary_command(program, cwd, env, args)
        .spawn()
        .unwrap_or_else(|e| panic!("start {}: {e}", program.display()));
    finish(child, &name(program), args, limit)
}

/// Waits for a started `NAME ARGS`, killing it and failing the test if it does not end within
/// `limit`, or if a signal ended it.
pub fn finish(child: Child, name: &str, args: &[&str], limit: Duration) -> Run {
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let out = match rx.recv_timeout(limit) {
        Ok(out) => out.unwrap_or_else(|e| panic!("wait for {name}: {e}")),
        Err(_) => {
            // SAFETY: kill has no memory preconditions; the child is not yet reaped, since its
            // waiter has not returned, so the pid is still its own.
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
            panic!("{name} {args:?} did not end within {limit:?}: killed");
        }
    };
    Run {
        code: out
            .status
            .code()
            .unwrap_or_else(|| panic!("{name} {args:?} was killed: {}", out.status)),
        stdout: String::from_utf8(out.stdout).unwrap_or_else(|e| panic!("{name}'s stdout is not UTF-8: {e}")),
        stderr: String::from_utf8(out.stderr).unwrap_or_else(|e| panic!("{name}'s stderr is not UTF-8: {e}")),
    }
}

fn name(program: &Path) -> String {
    program
        .file_name()
        .map_or_else(|| program.display().to_string(), |n| n.to_string_lossy().into_owned())
}
