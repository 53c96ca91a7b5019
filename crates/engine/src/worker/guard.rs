//! The run's stop conditions as one thread sees them: the stop flag, the end of the ramp (when
//! what the thread counted so far is thrown away) and the thread's share of `stop.ops` and
//! `stop.bytes`. Every loop asks its guard whether to go on before it starts more operations.

use super::tally::Tally;
use super::Shared;
use std::sync::atomic::Ordering::Relaxed;

pub(super) struct Guard<'a> {
    shared: &'a Shared,
    /// The thread has seen the ramp end (or the run has none).
    measuring: bool,
    /// This thread's share of the run's `stop.ops` and `stop.bytes`; `u64::MAX` when the run
    /// sets none, since no thread gets that far.
    ops_quota: u64,
    bytes_quota: u64,
    /// Operations and bytes since the ramp ended, against the quotas.
    ops: u64,
    bytes: u64,
}

impl<'a> Guard<'a> {
    pub fn new(shared: &'a Shared, ops_quota: Option<u64>, bytes_quota: Option<u64>) -> Guard<'a> {
        Guard {
            shared,
            measuring: shared.measuring.load(Relaxed),
            ops_quota: ops_quota.unwrap_or(u64::MAX),
            bytes_quota: bytes_quota.unwrap_or(u64::MAX),
            ops: 0,
            bytes: 0,
        }
    }

    /// Asked before each operation: false once the run is stopping. When the ramp has just
    /// ended, it first forgets what was counted during it (see [`check_ramp`](Self::check_ramp)).
    #[inline]
    pub fn before_op(&mut self, tally: &mut Tally) -> bool {
        if self.stopping() {
            return false;
        }
        self.check_ramp(tally);
        true
    }

    /// The thread counts what it does: the ramp has ended, or the run has none.
    #[inline]
    pub fn measuring(&self) -> bool {
        self.measuring
    }

    /// The monitor or some thread has stopped the run.
    #[inline]
    pub fn stopping(&self) -> bool {
        self.shared.stop.load(Relaxed) || self.shared.interrupt.as_ref().is_some_and(|i| i.load(Relaxed))
    }

    /// Stops every thread of the run.
    pub fn stop_all(&self) {
        self.shared.stop.store(true, Relaxed);
    }

    /// When the ramp has just ended, clears what the thread counted during it, in `tally` and
    /// against the quotas, and says so.
    #[inline]
    pub fn check_ramp(&mut self, tally: &mut Tally) -> bool {
        if self.measuring || !self.shared.measuring.load(Relaxed) {
            return false;
        }
        self.measuring = true;
        tally.reset();
        (self.ops, self.bytes) = (0, 0);
        true
    }

    /// Counts `ops` operations that moved `bytes` bytes toward the quotas.
    #[inline]
    pub fn count(&mut self, ops: u64, bytes: u64) {
        self.ops += ops;
        self.bytes += bytes;
    }

    /// Takes the last operation counted back out of the quota: one that must not count (the
    /// fsyncs of a thread's end).
    pub fn uncount_op(&mut self) {
        self.ops -= 1;
    }

    /// Operations counted since the ramp ended.
    #[inline]
    pub fn ops(&self) -> u64 {
        self.ops
    }

    /// This thread has done its share of the run's operations or bytes.
    #[inline]
    pub fn quota_met(&self) -> bool {
        !self.within_quota(self.ops, self.bytes)
    }

    /// `ops` operations and `bytes` bytes fall short of this thread's share. The pipelined loop
    /// asks this of what it has issued, ahead of what has completed.
    #[inline]
    pub fn within_quota(&self, ops: u64, bytes: u64) -> bool {
        ops < self.ops_quota && bytes < self.bytes_quota
    }
}
