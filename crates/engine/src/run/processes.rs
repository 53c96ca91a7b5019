//! Workers as processes (`Workload::processes`). Each is forked from the calling thread once the
//! filesets are set up, runs its worker on its only thread, and hands back what it measured
//! through a pipe when it ends. What the workers share (the start line, the stop flag, the
//! streams' cursors, the live counters) is in shared memory ([`Shm`](crate::shm::Shm)), so the
//! monitor watches and stops processes as it does threads. A process dies with the thread that
//! forked it (`PR_SET_PDEATHSIG`), so none outlives a run that was killed.

use crate::calls::CallTimes;
use crate::histogram::OpStats;
use crate::result::ThreadError;
use crate::worker::{Shared, ThreadOutcome};
use crate::workload::Workload;
use rustix::event::{poll, PollFd, PollFlags};
use rustix::fd::OwnedFd;
use rustix::process::{Pid, WaitOptions, WaitStatus};
use serde::{Deserialize, Serialize};
use std::io::{self, Write};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A worker process: where it stands in the workload, and the pipe it hands its figures back on.
pub(super) struct Child {
    group: usize,
    thread: u32,
    pid: Pid,
    figures: OwnedFd,
}

/// Forks a process that runs `work` and hands back what it returns. `epoch`, taken before any
/// fork, is the instant its times are sent relative to.
pub(super) fn fork(
    group: usize,
    thread: u32,
    epoch: Instant,
    work: impl FnOnce() -> ThreadOutcome,
) -> io::Result<Child> {
    let (read, write) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
    let parent = rustix::process::getpid();
    // SAFETY: the child runs the worker alone and leaves with _exit, never returning into the
    // parent's frames. The worker takes no lock another thread of the parent might have held at
    // the fork but the allocator's, which glibc's fork makes safe (a panic's message would take
    // stderr's, which only a thread printing at that instant holds).
    match unsafe { libc::fork() } {
        -1 => Err(io::Error::last_os_error()),
        0 => {
            drop(read);
            be_the_child(parent, write, epoch, work)
        }
        pid => Ok(Child {
            group,
            thread,
            pid: Pid::from_raw(pid).expect("fork gives the parent a positive pid"),
            figures: read,
        }),
    }
}

fn be_the_child(parent: Pid, figures: OwnedFd, epoch: Instant, work: impl FnOnce() -> ThreadOutcome) -> ! {
    let alone = rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL)).is_ok()
        && rustix::process::getppid() == Some(parent);
    let code = if !alone {
        // The parent was gone before the child could tie its life to it.
        1
    } else {
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)) {
            Ok(outcome) => {
                let wire = serde_json::to_vec(&Wire::from_outcome(outcome, epoch)).expect("plain data");
                match std::fs::File::from(figures).write_all(&wire) {
                    Ok(()) => 0,
                    Err(_) => 2,
                }
            }
            Err(_) => 101,
        }
    };
    // SAFETY: ends this process at once: no destructor or exit handler of the parent's copied
    // state runs twice.
    unsafe { libc::_exit(code) }
}

/// Waits for every child: reads what each hands back and reaps it, telling `done` as each ends.
/// A child that ends without its figures (killed, or its worker panicked) stops the run, and its
/// outcome is an error that says how it ended.
pub(super) fn reap(
    children: Vec<Child>,
    epoch: Instant,
    workload: &Workload,
    shared: &Shared,
    done: &mpsc::Sender<()>,
) -> Vec<(usize, u32, ThreadOutcome)> {
    let mut got: Vec<Vec<u8>> = children.iter().map(|_| Vec::new()).collect();
    let mut outcomes: Vec<Option<ThreadOutcome>> = children.iter().map(|_| None).collect();
    let mut open: Vec<usize> = (0..children.len()).collect();
    let mut chunk = vec![0u8; 64 * 1024];
    while !open.is_empty() {
        let mut fds: Vec<PollFd> = open
            .iter()
            .map(|&i| PollFd::new(&children[i].figures, PollFlags::IN))
            .collect();
        // Should poll itself fail, every read below blocks until its child has something.
        let polled = poll(&mut fds, None);
        let ready: Vec<bool> = fds.iter().map(|f| polled.is_err() || !f.revents().is_empty()).collect();
        drop(fds);
        let mut still = Vec::new();
        for (&i, ready) in open.iter().zip(ready) {
            if !ready {
                still.push(i);
                continue;
            }
            match rustix::io::read(&children[i].figures, &mut chunk) {
                Ok(n) if n > 0 => {
                    got[i].extend_from_slice(&chunk[..n]);
                    still.push(i);
                }
                Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) => still.push(i),
                // The end of the pipe: the child has ended (or is ending).
                _ => {
                    outcomes[i] = Some(ended(&children[i], &got[i], epoch, workload, shared));
                    let _ = done.send(());
                }
            }
        }
        open = still;
    }
    children
        .iter()
        .zip(outcomes)
        .map(|(c, o)| (c.group, c.thread, o.expect("every child was reaped")))
        .collect()
}

/// Reaps a child whose pipe has closed and reads its figures, or says why it has none.
fn ended(child: &Child, got: &[u8], epoch: Instant, workload: &Workload, shared: &Shared) -> ThreadOutcome {
    let status = loop {
        match rustix::process::waitpid(Some(child.pid), WaitOptions::empty()) {
            Err(rustix::io::Errno::INTR) => continue,
            other => break other,
        }
    };
    let figures = match status {
        Ok(Some((_, s))) if s.exit_status() == Some(0) => serde_json::from_slice::<Wire>(got)
            .map(|w| w.into_outcome(epoch))
            .map_err(|e| format!("handed back figures that do not read ({e})")),
        Ok(Some((_, s))) => Err(how_it_ended(s)),
        Ok(None) => Err("could not be waited for".to_string()),
        Err(e) => Err(format!("could not be waited for ({e})")),
    };
    figures.unwrap_or_else(|why| {
        shared.stop.store(true, Relaxed);
        let g = &workload.groups[child.group];
        let message = format!(
            "worker process {} ({}-{}) {why}",
            child.pid.as_raw_nonzero(),
            g.name,
            child.thread
        );
        ThreadOutcome::failed(g, message, None)
    })
}

fn how_it_ended(s: WaitStatus) -> String {
    match (s.exit_status(), s.terminating_signal()) {
        (_, Some(signal)) => format!("was killed by signal {signal}"),
        (Some(101), _) => "stopped on an internal error (its message is above)".to_string(),
        (Some(code), _) => format!("exited with status {code} before handing back its figures"),
        _ => "ended before handing back its figures".to_string(),
    }
}

/// A [`ThreadOutcome`] as a child hands it back, its times relative to the epoch.
#[derive(Serialize, Deserialize)]
struct Wire {
    stats: Vec<OpStats>,
    fsyncs: OpStats,
    steps: Vec<OpStats>,
    first_error: Option<ThreadError>,
    ended: Duration,
    finished: bool,
    started: Option<Duration>,
    counted_end: Option<Duration>,
    process_cpu: Option<Duration>,
    calls: Option<CallTimes>,
}

impl Wire {
    fn from_outcome(o: ThreadOutcome, epoch: Instant) -> Wire {
        let since = |t: Instant| t.saturating_duration_since(epoch);
        Wire {
            stats: o.stats,
            fsyncs: o.fsyncs,
            steps: o.steps,
            first_error: o.first_error,
            ended: since(o.ended),
            finished: o.finished,
            started: o.started.map(since),
            counted_end: o.counted_end.map(since),
            process_cpu: o.process_cpu,
            calls: o.calls,
        }
    }

    fn into_outcome(self, epoch: Instant) -> ThreadOutcome {
        ThreadOutcome {
            stats: self.stats,
            fsyncs: self.fsyncs,
            steps: self.steps,
            first_error: self.first_error,
            ended: epoch + self.ended,
            finished: self.finished,
            started: self.started.map(|d| epoch + d),
            counted_end: self.counted_end.map(|d| epoch + d),
            process_cpu: self.process_cpu,
            calls: self.calls,
        }
    }
}
