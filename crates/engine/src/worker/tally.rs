//! What a thread counts: its statistics per entry of the mix, per label of its script and for
//! its extra fsyncs, the live counters the monitor reads, and its first error; and how the
//! outcome of one operation is counted.

use super::ops::{errno_of, Outcome};
use super::{Flow, LiveCounters, Worker};
use crate::clock;
use crate::histogram::OpStats;
use crate::workload::{Group, OpKind};
use std::io as stdio;

pub(super) struct Tally<'a> {
    /// Statistics per entry of the group's mix, counted since the ramp ended.
    pub stats: Vec<OpStats>,
    /// fsyncs of sysbench's periodic bursts and end of test, and of IOzone's stopped streams.
    pub fsyncs: OpStats,
    /// Statistics per label of the group's script.
    pub steps: Vec<OpStats>,
    /// The counters the monitor reads once a second, ramp included.
    pub live: &'a LiveCounters,
    pub first_error: Option<(OpKind, String, Option<i32>)>,
}

impl<'a> Tally<'a> {
    pub fn new(group: &Group, live: &'a LiveCounters) -> Tally<'a> {
        let labels = group.script.as_ref().map_or(0, |s| s.labels.len());
        Tally {
            stats: group.ops.iter().map(|_| OpStats::default()).collect(),
            fsyncs: OpStats::default(),
            steps: (0..labels).map(|_| OpStats::default()).collect(),
            live,
            first_error: None,
        }
    }

    /// Clears what was counted during the ramp (the live counters go on: the monitor reports
    /// the ramp's seconds too).
    pub fn reset(&mut self) {
        self.stats.iter_mut().for_each(OpStats::reset);
        self.steps.iter_mut().for_each(OpStats::reset);
        self.fsyncs.reset();
    }
}

/// Which statistics an operation is recorded into.
#[derive(Clone, Copy)]
pub(super) enum Slot {
    Mix(usize),
    Fsync,
    Step(usize),
}

impl<'a> Worker<'a> {
    /// Records what an operation did; says whether the thread must stop, and the bytes moved.
    pub(super) fn account(
        &mut self,
        slot: Slot,
        kind: OpKind,
        t0: Option<u64>,
        result: stdio::Result<Outcome>,
    ) -> (Flow, u64) {
        let stats = match slot {
            Slot::Mix(i) => &mut self.tally.stats[i],
            Slot::Fsync => &mut self.tally.fsyncs,
            Slot::Step(l) => &mut self.tally.steps[l],
        };
        self.guard.count_op();
        match result {
            Ok(Outcome::Done { bytes, transactions }) => {
                match t0 {
                    Some(t0) => {
                        let ns = clock::since_ns(t0);
                        stats.record(ns, bytes, transactions);
                        self.tally.live.latency.record(ns);
                    }
                    None => stats.count_only(bytes, transactions),
                }
                self.tally.live.add(kind, bytes);
                self.guard.count_bytes(bytes);
                (Flow::Go, bytes)
            }
            Ok(Outcome::Skipped) | Ok(Outcome::StreamEnded) => {
                stats.skipped += 1;
                (Flow::Go, 0)
            }
            Err(e) => {
                stats.errors += 1;
                if self.tally.first_error.is_none() {
                    self.tally.first_error = Some((kind, e.to_string(), errno_of(&e)));
                }
                if self.shared.continue_on_error {
                    (Flow::Go, 0)
                } else {
                    self.guard.stop_all();
                    (Flow::Stop, 0)
                }
            }
        }
    }
}
