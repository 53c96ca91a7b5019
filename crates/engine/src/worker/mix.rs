//! The weighted mix loop: operations chosen one at a time by weight (or by ratio), with the
//! group's delay and rate limit between them; and the [`Mix`] that chooses them.

use super::requests::Requests;
use super::tally::Slot;
use super::{Flow, Outcome, ThreadOutcome, Worker};
use crate::clock;
use crate::io::Tag;
use crate::result::Cause;
use crate::result::ThreadError;
use crate::space;
use crate::workload::{Group, Pick, QUEUE_FULL};
use rand::rngs::SmallRng;
use rand::RngExt;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

impl<'a> Worker<'a> {
    /// The weighted mix: one operation at a time, chosen by weight (or by ratio), until the run
    /// stops, the thread meets its quota or its streams end.
    pub(super) fn run_mix(mut self) -> ThreadOutcome {
        let rate = self.rate_interval();
        let mut next_due = Instant::now();
        let mut finished = false;
        let mut failed = false;
        while self.guard.before_op(&mut self.tally) {
            if self.await_arrival() == Flow::Stop {
                break;
            }
            if !self.claim_event() {
                finished = true;
                break;
            }
            let Some(i) = self.choose() else {
                finished = true;
                break;
            };
            if self.tables.len() > 1 {
                self.cur = self.rng.random_range(0..self.tables.len());
                self.table = self.tables[self.cur];
            }
            if let Some(file) = self.fsync_instead(i) {
                // The group's burst is under way: this event is one file's fsync.
                if self.sync_file(file, self.group.fsync_kind, true, true) == Flow::Stop {
                    failed = true;
                    break;
                }
                continue;
            }
            let Some((flow, op_bytes)) = self.mix_op(i) else {
                continue;
            };
            let kind = self.group.ops[i].op;
            if flow == Flow::Stop {
                failed = true;
                break;
            }
            if self.periodic_fsync(kind) == Flow::Stop {
                failed = true;
                break;
            }
            if let Some(target) = self.shared.util {
                if self.guard.ops().is_multiple_of(4)
                    && space::utilisation(self.table.root()).is_some_and(|u| u >= target)
                {
                    self.shared.util_reached.store(true, Relaxed);
                    self.guard.stop_all();
                    break;
                }
            }
            if self.guard.quota_met() {
                finished = true;
                break;
            }
            if !self.group.delay.0.is_zero() {
                std::thread::sleep(self.group.delay.0);
            }
            if let Some((per_op, per_byte)) = rate.filter(|_| self.arrivals.is_none()) {
                next_due += per_op + Duration::from_secs_f64(per_byte * op_bytes as f64);
                let now = Instant::now();
                if next_due > now {
                    std::thread::sleep(next_due - now);
                } else if now - next_due > Duration::from_secs(1) {
                    next_due = now; // do not burst to catch up after a stall
                }
            }
        }
        if !failed && self.sync_stopped_streams() == Flow::Stop {
            failed = true;
        }
        if self.group.fsync_end && !failed {
            // sysbench's end of test: every file fsynced, inside the measured time.
            self.fsync_all(false);
        }
        self.finish(finished)
    }

    /// With `shared_requests`, takes an operation of the group's budget once the ramp is over;
    /// false once it is spent.
    #[inline]
    fn claim_event(&self) -> bool {
        self.requests
            .as_ref()
            .is_none_or(|r| !self.guard.measuring() || r.claim())
    }

    /// The entry of the next operation ([`Mix::choose`]); by the group's counts with
    /// `shared_requests`.
    #[inline]
    fn choose(&mut self) -> Option<usize> {
        match self.group_ratio() {
            Some(r) => self.mix.furthest_behind(|i| r.done(i)),
            None => self.mix.choose(&mut self.rng),
        }
    }

    /// Counts one operation of entry `i` done, for the ratio pick: the thread's, and with
    /// `shared_requests` the group's.
    #[inline]
    pub(super) fn count_done(&mut self, i: usize) {
        self.mix.count_done(i);
        if let Some(r) = self.group_ratio() {
            r.count_done(i);
        }
    }

    /// The group's generator when it picks by ratio: only then are the group's counts kept (an
    /// atomic add every thread makes on one line).
    #[inline]
    fn group_ratio(&self) -> Option<&Requests<'a>> {
        self.requests.as_ref().filter(|_| self.mix.pick == Pick::Ratio)
    }

    /// With `shared_requests` and `fsync_every`: the file whose fsync is the group's next event
    /// in place of entry `i`'s request, when a burst is due or under way (the request is
    /// counted otherwise).
    #[inline]
    fn fsync_instead(&self, i: usize) -> Option<u64> {
        let (r, every) = (self.requests.as_ref()?, self.group.fsync_every?);
        let kind = self.group.ops[i].op;
        let files = self.table.static_len();
        if !kind.is_request() || files == 0 {
            return None;
        }
        r.fsync_instead(kind.writes(), every, files)
    }

    /// Operation `i` of the mix: run, counted and accounted, as what [`account`](Self::account)
    /// says and the bytes it moved; none when its stream has ended (it leaves the mix).
    pub(super) fn mix_op(&mut self, i: usize) -> Option<(Flow, u64)> {
        let kind = self.group.ops[i].op;
        if self.io.deferred {
            return self.deferred_mix_op(i);
        }
        let t0 = self.shared.latency.then(clock::now);
        let result = self.exec(i);
        if let Ok(Outcome::StreamEnded) = result {
            self.mix.retire(i);
            return None;
        }
        self.count_done(i);
        Some(self.account(Slot::Mix(i), kind, t0, result))
    }

    /// [`mix_op`](Self::mix_op) on a backend whose transfers complete later (libaio's). An
    /// operation counts as done for the ratio pick when its last transfer completes, as
    /// sysbench's async mode counts its reads and writes when `io_getevents()` reaps them; its
    /// latency runs until then too (fio's), or with `submit_latency` only through its call.
    #[inline(never)]
    fn deferred_mix_op(&mut self, i: usize) -> Option<(Flow, u64)> {
        let kind = self.group.ops[i].op;
        let t0 = self.shared.latency.then(clock::now);
        if let Some(tags) = self.io.backend.tags() {
            tags.next = Some(Tag {
                entry: i as u32,
                start: t0.unwrap_or(0),
            });
        }
        let result = self.exec(i);
        // An operation that submitted no transfer (a skip, a failure, another kind of
        // operation) is done now.
        let untransferred = self.io.backend.tags().is_some_and(|t| t.next.take().is_some());
        self.settle_reaped();
        if let Ok(Outcome::StreamEnded) = result {
            self.mix.retire(i);
            return None;
        }
        if untransferred {
            self.count_done(i);
        }
        let timed_now = untransferred || self.group.aio.submit_latency;
        Some(self.account(Slot::Mix(i), kind, t0.filter(|_| timed_now), result))
    }

    /// Counts the operations whose requests the backend has reaped as done and, unless the
    /// group times only the submission, records their latencies to now.
    pub(super) fn settle_reaped(&mut self) {
        let Some(tags) = self.io.backend.tags() else {
            return;
        };
        if tags.done.is_empty() {
            return;
        }
        let timed = self.shared.latency && !self.group.aio.submit_latency;
        let now = if timed { clock::now() } else { 0 };
        let group = self.requests.as_ref().filter(|_| self.mix.pick == Pick::Ratio);
        for t in tags.done.drain(..) {
            self.mix.count_done(t.entry as usize);
            if let Some(r) = group {
                r.count_done(t.entry as usize);
            }
            if timed {
                let ns = clock::between_ns(t.start, now);
                self.tally.stats[t.entry as usize].record_latency(ns);
                self.tally.live.latency.record(ns);
            }
        }
    }

    /// With `rate.arrivals = "poisson"`, takes the group's next arrival (an exponential gap
    /// after the last, at the group's rate) and waits for it, or, when it has come already,
    /// notes how long it has waited for this thread ([`Worker::account`] adds that to its
    /// latency): sysbench's event queue, taken by its threads as each becomes free. Stop when
    /// the run stops first.
    #[inline]
    pub(super) fn await_arrival(&mut self) -> Flow {
        if self.arrivals.is_none() {
            return Flow::Go;
        }
        self.await_poisson()
    }

    /// [`await_arrival`](Self::await_arrival) with Poisson arrivals, kept out of line so that
    /// the loop's test of `arrivals` stays one branch.
    #[inline(never)]
    fn await_poisson(&mut self) -> Flow {
        let (Some(next), Some(rate)) = (self.arrivals, self.group.rate) else {
            return Flow::Go;
        };
        let ops = rate.ops.unwrap_or(1);
        let mean_ns = 1e9 / ops as f64;
        let gap = (-mean_ns * (1.0 - self.rng.random::<f64>()).ln()) as u64;
        let mut cur = next.load(Relaxed);
        let due = loop {
            // The first arrival comes a gap after the first thread asks, as sysbench's
            // generator starts with the run.
            let due = if cur == 0 { clock::origin_ns() } else { cur } + gap;
            match next.compare_exchange_weak(cur, due, Relaxed, Relaxed) {
                Ok(_) => break due,
                Err(now) => cur = now,
            }
        };
        let now = clock::origin_ns();
        self.queued_ns = now.saturating_sub(due);
        if now >= due {
            // The operations that have arrived since this one, at the rate, wait too.
            let waiting = (now - due) as f64 / mean_ns;
            if let Some(queue) = rate.queue.filter(|&q| waiting > q as f64) {
                let kind = self.group.ops[0].op;
                let message = format!(
                    "{QUEUE_FULL} ({queue} operations): the threads cannot keep up with the rate of {ops} a second"
                );
                self.tally.first_error.get_or_insert(ThreadError {
                    cause: Some(Cause::QueueFull { queue }),
                    ..ThreadError::new(kind, message, None)
                });
                self.guard.stop_all();
                return Flow::Stop;
            }
            return Flow::Go;
        }
        // The thread is free before the operation comes: it starts it when it wakes, as a
        // sysbench thread takes an event when the generator, waking, queues it. Its time is
        // the operation's own, not the sleep's overshoot.
        loop {
            if self.guard.stopping() {
                return Flow::Stop;
            }
            let now = clock::origin_ns();
            if now >= due {
                return Flow::Go;
            }
            // In slices, so that the run's end is seen within 10 ms.
            std::thread::sleep(Duration::from_nanos((due - now).min(10_000_000)));
        }
    }

    /// (time per operation, seconds per byte) for the group's rate limit, per thread.
    fn rate_interval(&self) -> Option<(Duration, f64)> {
        let r = self.group.rate?;
        let threads = self.group.threads as f64;
        if let Some(ops) = r.ops {
            return Some((Duration::from_secs_f64(threads / ops as f64), 0.0));
        }
        r.bytes.map(|b| (Duration::ZERO, threads / b.0 as f64))
    }
}

/// The group's weighted mix as this thread works through it.
pub(super) struct Mix {
    /// How the next entry is chosen: at random by weight, or by ratio.
    pick: Pick,
    /// The weight of each entry; 0 once the entry is retired.
    weights: Vec<u32>,
    total_weight: u64,
    /// Operations done per entry, for `pick = "ratio"`.
    done: Vec<u64>,
}

impl Mix {
    pub fn new(group: &Group) -> Mix {
        Mix {
            pick: group.pick,
            weights: group.ops.iter().map(|o| o.weight).collect(),
            total_weight: group.ops.iter().map(|o| o.weight as u64).sum(),
            done: vec![0; group.ops.len()],
        }
    }

    /// The entry of the next operation: at random by weight, or with `pick = "ratio"` the
    /// one furthest behind its share of this thread's operations; none once every entry is
    /// retired.
    #[inline]
    pub fn choose(&self, rng: &mut SmallRng) -> Option<usize> {
        if self.weights.len() == 1 {
            return (self.total_weight > 0).then_some(0);
        }
        if self.pick == Pick::Ratio {
            return self.furthest_behind(|i| self.done[i]);
        }
        self.draw(rng)
    }

    /// The entry furthest behind its share of the operations `done` counts (the thread's, or
    /// with `shared_requests` the group's): the smallest (done + 1) / weight, the later one on
    /// a tie (so reads 3 : writes 2 reads while (reads+1)/(writes+1) < 1.5, as sysbench does).
    pub fn furthest_behind(&self, done: impl Fn(usize) -> u64) -> Option<usize> {
        let mut best: Option<(usize, u64, u64)> = None;
        for (i, &w) in self.weights.iter().enumerate() {
            if w == 0 {
                continue;
            }
            let (num, den) = (done(i) + 1, w as u64);
            if best.is_none_or(|(_, bn, bd)| num as u128 * bd as u128 <= bn as u128 * den as u128) {
                best = Some((i, num, den));
            }
        }
        best.map(|b| b.0)
    }

    /// An entry drawn at random by weight.
    fn draw(&self, rng: &mut SmallRng) -> Option<usize> {
        if self.total_weight == 0 {
            return None;
        }
        let mut draw = rng.random_range(0..self.total_weight);
        for (i, w) in self.weights.iter().enumerate() {
            if draw < *w as u64 {
                return Some(i);
            }
            draw -= *w as u64;
        }
        None
    }

    /// Counts one operation of entry `i` done.
    #[inline]
    pub fn count_done(&mut self, i: usize) {
        self.done[i] += 1;
    }

    /// Entry `i` is never chosen again (its stream ended).
    pub fn retire(&mut self, i: usize) {
        self.total_weight -= self.weights[i] as u64;
        self.weights[i] = 0;
    }
}
