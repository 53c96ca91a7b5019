//! Running the `fslab` binary from the tests, with a time limit so that a hang fails the test:
//! testkit's `run_binary` with the path only the cli's tests know.

use fslab_testkit::Run;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// Longer than any command of the tests should take.
pub const HANG: Duration = Duration::from_secs(60);

/// The `fslab` binary cargo built for these tests.
fn binary() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_fslab"))
}

/// Runs `fslab ARGS`.
pub fn fslab(args: &[&str]) -> Run {
    fslab_in(None, &[], args)
}

/// Runs `fslab ARGS` (in `cwd` when given, with extra environment), killing it and failing the
/// test if it does not end within [`HANG`].
pub fn fslab_in(cwd: Option<&Path>, env: &[(&str, &Path)], args: &[&str]) -> Run {
    fslab_within(cwd, env, args, HANG)
}

/// [`fslab_in`] with its own time limit, for commands that take longer than [`HANG`] (a study).
pub fn fslab_within(cwd: Option<&Path>, env: &[(&str, &Path)], args: &[&str], limit: Duration) -> Run {
    fslab_testkit::run_binary(binary(), cwd, env, args, limit)
}

/// The command `fslab ARGS` with its output captured, for a test that starts it itself (in the
/// background, or as another user) and then calls [`finish`].
pub fn fslab_command(cwd: Option<&Path>, env: &[(&str, &Path)], args: &[&str]) -> Command {
    fslab_testkit::binary_command(binary(), cwd, env, args)
}

/// Waits for a started `fslab ARGS`, killing it and failing the test if it does not end within
/// `limit`.
pub fn finish(child: Child, args: &[&str], limit: Duration) -> Run {
    fslab_testkit::finish(child, "fslab", args, limit)
}

/// A path as a command-line argument.
pub fn s(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 path")
}

pub fn refs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

/// Runs `fslab ARGS` in a private mount namespace where each of `hide` is covered: a directory
/// by an empty tmpfs, a file by /dev/null (which is not an executable).
pub fn fslab_without(hide: &[&str], args: &[String]) -> Run {
    let mut script = String::from("set -e\n");
    for h in hide {
        if Path::new(h).is_dir() {
            script.push_str(&format!("mount -t tmpfs none {h}\n"));
        } else {
            script.push_str(&format!("mount --bind /dev/null {h}\n"));
        }
    }
    script.push_str("exec \"$@\"\n");
    let mut cmd = Command::new("unshare");
    cmd.args(["-m", "--propagation", "private", "sh", "-c", &script, "sh"])
        .arg(env!("CARGO_BIN_EXE_fslab"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = cmd.spawn().expect("start unshare (util-linux)");
    finish(child, &refs(args), HANG * 2)
}

/// The calls of kinds `trace` that `fslab ARGS` makes (in `cwd` when given), traced with
/// `strace -f`: each whole, with the thread that made it, in order. The log goes to `log`.
pub fn strace_fslab(cwd: Option<&Path>, log: &Path, trace: &str, args: &[&str]) -> Vec<(String, String)> {
    let mut cmd = Command::new("strace");
    cmd.args(["-f", "-qq", "-e", &format!("trace={trace}"), "-o"])
        .arg(log)
        .arg(binary())
        .args(args)
        .stdout(Stdio::null());
    if let Some(cwd) = cwd {
        cmd.current_dir(cwd);
    }
    let status = cmd
        .status()
        .expect("this test needs strace to see fslab's calls (apt-get install strace)");
    assert!(status.success(), "strace fslab {args:?}: {status}");
    fslab_testkit::strace::whole_calls(&std::fs::read_to_string(log).unwrap())
}
