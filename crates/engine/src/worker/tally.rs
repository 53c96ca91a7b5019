//! What a thread counts: its statistics per entry of the mix, per label of its script and for
//! its extra fsyncs, the live counters the monitor reads once a second, and its first error.

use crate::histogram::OpStats;
use crate::live_latency::LiveLatency;
use crate::result::ThreadError;
use crate::workload::{Group, OpKind};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Counters the monitor thread reads once a second: operations and bytes per operation type,
/// and the latency buckets of the timed ones. Only the owning thread writes them (plain
/// stores), so they cost no locked instruction.
#[repr(align(128))]
pub(crate) struct LiveCounters {
    pub ops: [AtomicU64; OpKind::ALL.len()],
    pub bytes: [AtomicU64; OpKind::ALL.len()],
    /// The longest script step since the monitor last looked (dbench's per-second latency).
    pub max_ns: AtomicU64,
    /// Script sleeps done, which are no operation ([`crate::result::Second::sleeps`]).
    pub sleeps: AtomicU64,
    pub latency: LiveLatency,
}

impl LiveCounters {
    pub fn new() -> LiveCounters {
        LiveCounters {
            ops: Default::default(),
            bytes: Default::default(),
            max_ns: AtomicU64::new(0),
            sleeps: AtomicU64::new(0),
            latency: LiveLatency::new(),
        }
    }

    #[inline]
    pub fn add(&self, kind: OpKind, bytes: u64) {
        let i = kind.index();
        self.ops[i].store(self.ops[i].load(Relaxed) + 1, Relaxed);
        if bytes > 0 {
            self.bytes[i].store(self.bytes[i].load(Relaxed) + bytes, Relaxed);
        }
    }
}

pub(super) struct Tally<'a> {
    /// Statistics per entry of the group's mix, counted since the ramp ended.
    pub stats: Vec<OpStats>,
    /// fsyncs of sysbench's periodic bursts and end of test, and of IOzone's stopped streams.
    pub fsyncs: OpStats,
    /// Statistics per label of the group's script.
    pub steps: Vec<OpStats>,
    /// The counters the monitor reads once a second, ramp included.
    pub live: &'a LiveCounters,
    pub first_error: Option<ThreadError>,
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
        crate::calls::reset();
    }
}

/// Which statistics an operation is recorded into.
#[derive(Clone, Copy)]
pub(super) enum Slot {
    Mix(usize),
    Fsync,
    Step(usize),
}
