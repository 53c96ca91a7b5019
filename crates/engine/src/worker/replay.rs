//! The script loop: each thread replays its group's script from the start, again and again,
//! counting every step under its label.

use super::error::Annotated;
use super::tally::Slot;
use super::{Flow, Outcome, ThreadOutcome, Worker};
use crate::clock;
use crate::script::{Call, Expect, Replayer};
use crate::workload::OpKind;
use rustix::fs::OFlags;
use std::io as stdio;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

impl<'a> Worker<'a> {
    /// Replays the group's script from its start, again and again, until the run stops. A step
    /// whose outcome differs from the one the script expects is counted as a mismatch and the
    /// replay goes on (dbench kills its client); an error the storage itself reports (no space,
    /// I/O error, read-only) is a real error.
    pub(super) fn run_script(mut self) -> ThreadOutcome {
        let group = self.group;
        let script = group.script.as_ref().expect("a script group");
        let Some(base) = self.base.take() else {
            return self.fail(OpKind::OpenClose, "the script's base directory is missing".into(), None);
        };
        let mut replay = Replayer::with_base(
            script,
            base,
            self.io.base_flags & (OFlags::DIRECT | OFlags::SYNC | OFlags::DSYNC),
        );
        let mut finished = false;
        'passes: loop {
            let pass_start = Instant::now();
            for step in &script.steps {
                if !self.guard.before_op(&mut self.tally) {
                    break 'passes;
                }
                if let (true, Some(at)) = (script.paced, step.at) {
                    let due = pass_start + Duration::from_secs_f64(at);
                    let now = Instant::now();
                    if due > now {
                        std::thread::sleep(due - now);
                    }
                }
                let Some(kind) = step.call.kind() else {
                    // A sleep: no operation, so no step is counted; its time is the longest
                    // wait between two steps' starts when it is, as dbench's max_latency.
                    if let Call::Sleep { usec } = step.call {
                        let t0 = self.shared.latency.then(clock::now);
                        self.pause(Duration::from_micros(usec));
                        if let Some(t0) = t0 {
                            self.tally.live.max_ns.fetch_max(clock::since_ns(t0), Relaxed);
                        }
                        let sleeps = &self.tally.live.sleeps;
                        sleeps.store(sleeps.load(Relaxed) + 1, Relaxed);
                    }
                    continue;
                };
                let label = step.label as usize;
                let t0 = self.shared.latency.then(clock::now);
                let result = replay.call_expecting(&step.call, step.expect);
                let mismatch = matches!((&result, step.expect), (Ok(_), Expect::Fail) | (Err(_), Expect::Ok));
                let outcome = match result {
                    Err(e) if step.expect == Expect::Ok && is_hard(&e) => {
                        Err(Annotated::wrap(e, &script.labels[label], describe_call(&step.call)))
                    }
                    Ok(bytes) => Ok(Outcome::Done { bytes, transactions: 1 }),
                    Err(_) => Ok(Outcome::META),
                };
                if mismatch {
                    self.tally.steps[label].mismatches += 1;
                }
                let (flow, _) = self.account(Slot::Step(label), kind, t0, outcome);
                if flow == Flow::Stop {
                    break 'passes;
                }
                if let Some(t0) = t0 {
                    self.tally.live.max_ns.fetch_max(clock::since_ns(t0), Relaxed);
                }
                if self.guard.quota_met() {
                    finished = true;
                    break 'passes;
                }
            }
            replay.close_all();
        }
        self.finish(finished)
    }
}

impl Worker<'_> {
    /// Sleeps for `span`, in slices of at most 10 ms so that a stop (the run's end, a signal)
    /// is seen within one; the loop's next `before_op` then ends the replay.
    fn pause(&self, span: Duration) {
        let slice = Duration::from_millis(10);
        // A span past what the clock holds sleeps until the stop.
        let end = Instant::now().checked_add(span);
        loop {
            let now = Instant::now();
            if end.is_some_and(|end| now >= end) || self.guard.stopping() {
                return;
            }
            std::thread::sleep(end.map_or(slice, |end| (end - now).min(slice)));
        }
    }
}

/// Errors the storage reports about itself, which no script expects: out of space or quota, an
/// I/O error, a read-only filesystem.
fn is_hard(e: &stdio::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::ENOSPC | libc::EIO | libc::EROFS | libc::EDQUOT)
    )
}

fn describe_call(call: &Call) -> String {
    match call.paths().as_slice() {
        [] => String::new(),
        paths => paths.join(" -> "),
    }
}
