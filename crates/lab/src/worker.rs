//! The worker process: each phase of a run is a separate `fslab` process, in its own process
//! group, watched by the lab. A run that outlives its timeout is declared hung: its process group
//! is killed, and if it does not die (a process blocked in the kernel, on a frozen or broken
//! filesystem, cannot) the lab stops waiting for it and goes on.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How a phase ended.
#[derive(Debug)]
pub enum Ended {
    /// The process exited by itself: its exit code (None when a signal killed it), stdout and
    /// the last lines of stderr.
    Exited {
        code: Option<i32>,
        stdout: String,
        stderr: String,
    },
    /// It ran past the timeout. `killed`: it died after SIGKILL; otherwise it is still there,
    /// stuck in the kernel, and the lab has stopped waiting for it.
    Hung { killed: bool, stderr: String },
    /// `stop` asked to end it (the user interrupted the study); it was killed.
    Interrupted,
}

/// How long a killed worker gets to go before the lab gives up on it.
const KILL_GRACE: Duration = Duration::from_secs(5);

/// What the watchdog may do about a worker.
pub struct Watch<'a> {
    pub timeout: Duration,
    /// Asked twice a tenth of a second: end the worker now (the user interrupted the study).
    pub stop: &'a dyn Fn() -> bool,
    /// Called when a killed worker does not die (blocked in the kernel): whatever may release it
    /// (thawing a frozen filesystem); the watchdog then waits once more.
    pub unstick: &'a dyn Fn(),
}

/// Runs `exe args...` (the fslab binary) under the watchdog.
pub fn run_phase(exe: &Path, args: &[String], watch: &Watch) -> std::io::Result<Ended> {
    let timeout = watch.timeout;
    let stop = watch.stop;
    let mut command = Command::new(exe);
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    die_with_this_process(&mut command);
    let mut child = command.spawn()?;
    // Read both pipes on their own threads, so a chatty worker never blocks on a full pipe.
    let stdout = drain(child.stdout.take().expect("piped"));
    let stderr = drain(child.stderr.take().expect("piped"));
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Ended::Exited {
                code: status.code(),
                stdout: stdout.join().unwrap_or_default(),
                stderr: tail(&stderr.join().unwrap_or_default()),
            });
        }
        if stop() {
            // As for a hung run: a worker blocked in the kernel (on a frozen filesystem) dies
            // only once released, and the lab then unmounts and detaches what it made.
            if !kill_group(&mut child) {
                (watch.unstick)();
                wait_for(&mut child, KILL_GRACE);
            }
            return Ok(Ended::Interrupted);
        }
        if Instant::now() >= deadline {
            let mut killed = kill_group(&mut child);
            if !killed {
                (watch.unstick)();
                killed = wait_for(&mut child, KILL_GRACE);
            }
            // A stuck process still holds its pipes: only collect what has been read if it died.
            let stderr = if killed {
                tail(&stderr.join().unwrap_or_default())
            } else {
                String::new()
            };
            return Ok(Ended::Hung { killed, stderr });
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Makes the worker die when the lab does, however the lab ends (even by SIGKILL, which it
/// cannot catch): a worker left running would go on loading a filesystem nobody measures, and
/// hold its mount. The kernel sends the signal when the thread that spawned the worker exits;
/// the lab waits for its workers on that thread.
fn die_with_this_process(command: &mut Command) {
    let lab = std::process::id();
    // SAFETY: between fork and exec only async-signal-safe calls are made: prctl(2), getppid(2).
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The lab died between fork and prctl: nobody would be told.
            if libc::getppid() as u32 != lab {
                return Err(std::io::Error::other("the lab exited before its worker started"));
            }
            Ok(())
        });
    }
}

fn drain(mut r: impl Read + Send + 'static) -> JoinHandle<String> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = r.read_to_end(&mut buf);
        String::from_utf8_lossy(&buf).into_owned()
    })
}

/// SIGKILL to the worker's whole process group; whether it died within the grace period.
fn kill_group(child: &mut Child) -> bool {
    let pgid = child.id() as i32;
    // SAFETY: kill(2) with a negative pid signals the process group the worker leads.
    unsafe {
        libc::kill(-pgid, libc::SIGKILL);
    }
    wait_for(child, KILL_GRACE)
}

/// Whether the child ends within `grace`.
fn wait_for(child: &mut Child, grace: Duration) -> bool {
    let until = Instant::now() + grace;
    while Instant::now() < until {
        if let Ok(Some(_)) = child.try_wait() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

/// The last few lines of a worker's diagnostics, which say why it failed.
fn tail(s: &str) -> String {
    let lines: Vec<&str> = s.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(5)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn watch(timeout: Duration) -> Watch<'static> {
        Watch {
            timeout,
            stop: &|| false,
            unstick: &|| {},
        }
    }

    #[test]
    fn an_exited_worker_gives_its_code_and_output() {
        let args: Vec<String> = ["-c", "echo out; echo err >&2; exit 3"].map(String::from).to_vec();
        let Ended::Exited { code, stdout, stderr } =
            run_phase(Path::new("/bin/sh"), &args, &watch(Duration::from_secs(10))).unwrap()
        else {
            panic!("not hung")
        };
        assert_eq!(code, Some(3));
        assert_eq!(stdout, "out\n");
        assert_eq!(stderr, "err");
    }

    #[test]
    fn a_worker_past_its_timeout_is_killed_with_its_children() {
        // The shell's child (sleep) is in the same process group and must die too.
        let args: Vec<String> = ["-c", "sleep 30 & sleep 30; wait"].map(String::from).to_vec();
        let t0 = Instant::now();
        let ended = run_phase(Path::new("/bin/sh"), &args, &watch(Duration::from_millis(300))).unwrap();
        assert!(matches!(ended, Ended::Hung { killed: true, .. }), "{ended:?}");
        assert!(t0.elapsed() < Duration::from_secs(5), "took {:?}", t0.elapsed());
    }
}
