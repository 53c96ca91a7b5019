//! The worker process: each phase of a run is a separate `fslab` process, in its own process
//! group, watched by the lab. A run that outlives its timeout is declared hung: its process group
//! is killed, and if it does not die (a process blocked in the kernel, on a frozen or broken
//! filesystem, cannot) the lab stops waiting for it and goes on.
//!
//! While it runs, a worker reports the engine's once-a-second progress as lines on its stderr
//! ([`Live::line`], asked for by [`PROGRESS_ENV`]); the watchdog hands each one to
//! [`Watch::progress`] and keeps them out of the diagnostics it collects.

use std::io::{BufRead, BufReader, Read};
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
    /// Called with each second of the worker's progress, as it reports it.
    pub progress: &'a dyn Fn(&Live),
}

/// Set in a worker's environment: the front-end then writes its progress on stderr, one
/// [`Live::line`] a second (the command line, stored with the run, stays the user's).
pub const PROGRESS_ENV: &str = "FSLAB_PROGRESS";

/// What starts a progress line on a worker's stderr.
const PROGRESS_MARK: &str = "fslab-progress ";

/// One second of a running worker's progress: the engine's figures for the second just sampled.
#[derive(Debug, Clone, PartialEq)]
pub struct Live {
    /// The phase of the tool's plan running (a workload's name, sysbench's `run`...).
    pub phase: String,
    pub elapsed: Duration,
    /// Ramp plus measured time, when the phase is time-bound.
    pub planned: Option<Duration>,
    pub in_ramp: bool,
    pub bytes_per_sec: f64,
    pub ops_per_sec: f64,
    /// Before its first second, while the worker lays out its files: how far it has got.
    pub laid_out: Option<LaidOut>,
}

/// How far a worker has laid out the files its run needs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LaidOut {
    pub files: u64,
    pub planned_files: u64,
    pub bytes: u64,
    pub planned_bytes: u64,
}

impl LaidOut {
    /// What a progress bar says of it.
    pub fn text(&self) -> String {
        if self.files >= self.planned_files {
            return format!("laid out {} files; syncing them", self.planned_files);
        }
        let mib = |b: u64| b as f64 / 1048576.0;
        let data = match self.planned_bytes {
            0 => String::new(),
            of => format!(", {:.0} of {:.0} MiB", mib(self.bytes), mib(of)),
        };
        format!("laying out files: {} of {}{data}", self.files, self.planned_files)
    }
}

impl Live {
    /// The line a worker writes on stderr (with its newline).
    pub fn line(&self) -> String {
        let doc = serde_json::json!({
            "phase": self.phase,
            "elapsed": self.elapsed.as_secs_f64(),
            "planned": self.planned.map(|d| d.as_secs_f64()),
            "ramp": self.in_ramp,
            "bytes_per_sec": self.bytes_per_sec,
            "ops_per_sec": self.ops_per_sec,
            "laid_out": self.laid_out.map(|l| [l.files, l.planned_files, l.bytes, l.planned_bytes]),
        });
        format!("{PROGRESS_MARK}{doc}\n")
    }

    /// A progress line read back; none for any other line.
    pub fn parse(line: &str) -> Option<Live> {
        let doc: serde_json::Value = serde_json::from_str(line.strip_prefix(PROGRESS_MARK)?).ok()?;
        let secs = |v: &serde_json::Value| {
            v.as_f64()
                .filter(|s| s.is_finite() && *s >= 0.0)
                .map(Duration::from_secs_f64)
        };
        Some(Live {
            phase: doc["phase"].as_str()?.to_string(),
            elapsed: secs(&doc["elapsed"])?,
            planned: secs(&doc["planned"]),
            in_ramp: doc["ramp"].as_bool().unwrap_or(false),
            bytes_per_sec: doc["bytes_per_sec"].as_f64()?,
            ops_per_sec: doc["ops_per_sec"].as_f64()?,
            laid_out: match doc["laid_out"]
                .as_array()
                .map(|a| a.iter().map(|v| v.as_u64()).collect::<Option<Vec<_>>>())
            {
                Some(Some(v)) if v.len() == 4 => Some(LaidOut {
                    files: v[0],
                    planned_files: v[1],
                    bytes: v[2],
                    planned_bytes: v[3],
                }),
                _ => None,
            },
        })
    }
}

/// Runs `exe args...` (the fslab binary) under the watchdog.
pub fn run_phase(exe: &Path, args: &[String], watch: &Watch) -> std::io::Result<Ended> {
    run_process(exe, args, watch, false)
}

/// Runs `mpirun args...` (a job of fslab ranks, `crate::mpi`) under the watchdog. mpirun puts
/// each rank in a process group of its own and leaves them running when it is killed with
/// SIGKILL: the watchdog first sends its group SIGTERM, on which mpirun kills the ranks and
/// exits, and only then SIGKILL.
pub fn run_mpirun(mpirun: &Path, args: &[String], watch: &Watch) -> std::io::Result<Ended> {
    run_process(mpirun, args, watch, true)
}

fn run_process(exe: &Path, args: &[String], watch: &Watch, term_first: bool) -> std::io::Result<Ended> {
    let kill_group = |child: &mut Child| {
        if term_first && terminate_group(child) {
            return true;
        }
        kill_group(child)
    };
    let timeout = watch.timeout;
    let stop = watch.stop;
    let mut command = Command::new(exe);
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env(PROGRESS_ENV, "1")
        .process_group(0);
    // mpirun, told with SIGTERM, takes its ranks with it; with SIGKILL it would leave them.
    die_with_this_process(&mut command, if term_first { libc::SIGTERM } else { libc::SIGKILL });
    let mut child = command.spawn()?;
    // Read both pipes on their own threads, so a chatty worker never blocks on a full pipe.
    let stdout = drain(child.stdout.take().expect("piped"));
    let (live, progress) = std::sync::mpsc::channel();
    let stderr = drain_lines(child.stderr.take().expect("piped"), live);
    let deadline = Instant::now() + timeout;
    loop {
        for p in progress.try_iter() {
            (watch.progress)(&p);
        }
        if let Some(status) = child.try_wait()? {
            let stderr = stderr.join().unwrap_or_default();
            // The stderr reader has ended: every progress line is in the channel.
            for p in progress.try_iter() {
                (watch.progress)(&p);
            }
            return Ok(Ended::Exited {
                code: status.code(),
                stdout: stdout.join().unwrap_or_default(),
                stderr: tail(&stderr),
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
fn die_with_this_process(command: &mut Command, signal: i32) {
    let lab = std::process::id();
    // SAFETY: between fork and exec only async-signal-safe calls are made: prctl(2), getppid(2).
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, signal) != 0 {
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

/// Reads a worker's stderr line by line: progress lines go to `live` as they come, the rest is
/// kept.
fn drain_lines(r: impl Read + Send + 'static, live: std::sync::mpsc::Sender<Live>) -> JoinHandle<String> {
    std::thread::spawn(move || {
        let mut kept = String::new();
        let mut r = BufReader::new(r);
        let mut buf = Vec::new();
        while matches!(r.read_until(b'\n', &mut buf), Ok(n) if n > 0) {
            let line = String::from_utf8_lossy(&buf);
            match Live::parse(line.trim_end()) {
                Some(p) => {
                    let _ = live.send(p);
                }
                None => kept.push_str(&line),
            }
            buf.clear();
        }
        kept
    })
}

/// SIGTERM to the worker's whole process group; whether it died within the grace period.
fn terminate_group(child: &mut Child) -> bool {
    let pgid = child.id() as i32;
    // SAFETY: kill(2) with a negative pid signals the process group the worker leads.
    unsafe {
        libc::kill(-pgid, libc::SIGTERM);
    }
    wait_for(child, KILL_GRACE)
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
            progress: &|_| {},
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
    fn progress_lines_reach_the_watch_and_stay_out_of_the_diagnostics() {
        let second = Live {
            phase: "run".into(),
            elapsed: Duration::from_secs(2),
            planned: Some(Duration::from_secs(4)),
            in_ramp: false,
            bytes_per_sec: 1048576.0 * 3.5,
            ops_per_sec: 896.0,
            laid_out: None,
        };
        let script = format!(
            "test \"${PROGRESS_ENV}\" = 1 || exit 9; printf '%s' '{}' >&2; echo oops >&2",
            second.line()
        );
        let seen = std::sync::Mutex::new(Vec::new());
        let w = Watch {
            progress: &|p| seen.lock().unwrap().push(p.clone()),
            ..watch(Duration::from_secs(10))
        };
        let ended = run_phase(Path::new("/bin/sh"), &["-c".to_string(), script], &w).unwrap();
        let Ended::Exited { code, stderr, .. } = ended else {
            panic!("{ended:?}")
        };
        assert_eq!(code, Some(0), "the worker's environment lacks {PROGRESS_ENV}");
        assert_eq!(stderr, "oops");
        assert_eq!(*seen.lock().unwrap(), std::slice::from_ref(&second));
        assert_eq!(Live::parse(second.line().trim_end()), Some(second.clone()));
        assert_eq!(Live::parse("fslab: note: something"), None);
        let layout = Live {
            phase: "layout".into(),
            laid_out: Some(LaidOut {
                files: 3,
                planned_files: 16,
                bytes: 13 << 20,
                planned_bytes: 64 << 20,
            }),
            ..second
        };
        assert_eq!(Live::parse(layout.line().trim_end()), Some(layout.clone()));
        assert_eq!(
            layout.laid_out.unwrap().text(),
            "laying out files: 3 of 16, 13 of 64 MiB"
        );
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

    #[test]
    #[ignore = "system tier: needs mpirun (openmpi-bin)"]
    fn a_job_past_its_timeout_is_killed_with_its_ranks() {
        let mpirun = crate::tool::find_program("mpirun")
            .expect("this test needs mpirun, which is not installed: apt-get install openmpi-bin");
        // mpirun puts each rank in a process group of its own: SIGKILL to mpirun's would leave
        // them running. A duration no other process sleeps names them.
        let marker = format!("{}.{}", 40 + std::process::id() % 50, std::process::id() % 997);
        let args: Vec<String> = ["--oversubscribe", "--allow-run-as-root", "-np", "2", "sleep", &marker]
            .map(String::from)
            .to_vec();
        let ended = run_mpirun(&mpirun, &args, &watch(Duration::from_millis(1500))).unwrap();
        assert!(matches!(ended, Ended::Hung { killed: true, .. }), "{ended:?}");
        let sleeping = || {
            std::fs::read_dir("/proc")
                .unwrap()
                .flatten()
                .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
                .filter(|c| c == format!("sleep\0{marker}\0").as_bytes())
                .count()
        };
        let t0 = Instant::now();
        while sleeping() > 0 && t0.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(100));
        }
        assert_eq!(sleeping(), 0, "the job's ranks outlived it");
    }
}
