//! A group's one request generator (`shared_requests`), as sysbench's threads draw their
//! events from one generator under a lock: one budget of events (`stop.ops`), one count of
//! requests for the periodic fsync (`fsync_every`), whose burst's fsyncs are events taken one at
//! a time by whichever thread asks next, and one count of reads and writes for the ratio pick.
//!
//! It lives in the group's shared counters (shared memory when workers are processes), after
//! the streams' cursors and the next arrival: the events claimed, the fsync state, and the
//! operations done per entry of the mix.

use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::{AcqRel, Relaxed};

/// The counters a group's generator takes beyond its streams' cursors and its next arrival.
pub(crate) fn slots(ops: usize) -> usize {
    2 + ops
}

/// The largest `fsync_every` and number of files the packed fsync state holds.
pub(crate) const MAX_EVERY: u64 = u32::MAX as u64;
pub(crate) const MAX_FILES: u64 = (1 << 31) - 1;

pub(super) struct Requests<'a> {
    /// Events claimed of `budget` since the ramp ended.
    claimed: &'a AtomicU64,
    /// The group's share of `stop.ops`: every thread's share, summed.
    budget: Option<u64>,
    /// sysbench's `req_performed % file_fsync_freq`, `is_dirty` and `fsynced_file`, packed so
    /// that one compare-and-swap moves them together, as sysbench's lock does.
    fsync: &'a AtomicU64,
    /// Operations done by all the group's threads, per entry of the mix.
    done: &'a [AtomicU64],
}

impl<'a> Requests<'a> {
    /// The generator in `counters` (see [`slots`]), for a mix of `ops` entries.
    pub fn new(counters: &'a [AtomicU64], ops: usize, budget: Option<u64>) -> Requests<'a> {
        let (fixed, done) = counters.split_at(2);
        Requests {
            claimed: &fixed[0],
            budget,
            fsync: &fixed[1],
            done: &done[..ops],
        }
    }

    /// Takes one event of the budget; false once it is spent.
    #[inline]
    pub fn claim(&self) -> bool {
        self.budget.is_none_or(|b| self.claimed.fetch_add(1, Relaxed) < b)
    }

    /// The next event, for a thread about to make a request that `writes` or not: the file to
    /// fsync instead when a burst is under way or falls due (every `every` requests once a
    /// write has dirtied the files, each of the `files` in turn, the burst over at the last),
    /// otherwise none, and the request is counted.
    #[inline]
    pub fn fsync_instead(&self, writes: bool, every: u64, files: u64) -> Option<u64> {
        let mut s = self.fsync.load(Relaxed);
        loop {
            let (phase, dirty, file) = unpack(s);
            let (next, fsync) = if dirty && phase == 0 {
                if file + 1 >= files {
                    (pack(0, false, 0), Some(file))
                } else {
                    (pack(0, true, file + 1), Some(file))
                }
            } else {
                (pack((phase + 1) % every, dirty || writes, file), None)
            };
            match self.fsync.compare_exchange_weak(s, next, AcqRel, Relaxed) {
                Ok(_) => return fsync,
                Err(now) => s = now,
            }
        }
    }

    /// Operations of entry `i` done by the group.
    #[inline]
    pub fn done(&self, i: usize) -> u64 {
        self.done[i].load(Relaxed)
    }

    #[inline]
    pub fn count_done(&self, i: usize) {
        self.done[i].fetch_add(1, Relaxed);
    }
}

/// Requests since the last burst (modulo `every`), whether a write dirtied the files, and the
/// next file of a burst.
fn pack(phase: u64, dirty: bool, file: u64) -> u64 {
    phase | u64::from(dirty) << 32 | file << 33
}

fn unpack(s: u64) -> (u64, bool, u64) {
    (s & 0xffff_ffff, s >> 32 & 1 == 1, s >> 33)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counters(ops: usize) -> Vec<AtomicU64> {
        (0..slots(ops)).map(|_| AtomicU64::new(0)).collect()
    }

    #[test]
    fn a_burst_comes_every_so_many_requests_once_dirty_one_file_per_event() {
        let c = counters(1);
        let r = Requests::new(&c, 1, None);
        // Reads never dirty the files: no burst.
        assert!((0..10).all(|_| r.fsync_instead(false, 3, 2).is_none()));
        // sysbench: the request that makes the count a multiple of 3 dirty is followed by a
        // burst of every file, one event each.
        let events: Vec<Option<u64>> = (0..12).map(|_| r.fsync_instead(true, 3, 2)).collect();
        // 10 reads leave the count at 1 (mod 3): two more requests, then the burst.
        assert_eq!(
            events,
            [
                None,
                None,
                Some(0),
                Some(1),
                None,
                None,
                None,
                Some(0),
                Some(1),
                None,
                None,
                None
            ]
        );
    }

    #[test]
    fn the_budget_is_claimed_one_event_at_a_time_by_every_thread() {
        let c = counters(2);
        let r = Requests::new(&c, 2, Some(5));
        let taken = std::thread::scope(|s| {
            let hs: Vec<_> = (0..4)
                .map(|_| s.spawn(|| std::iter::from_fn(|| r.claim().then_some(())).count()))
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).sum::<usize>()
        });
        assert_eq!(taken, 5);
        r.count_done(1);
        assert_eq!((r.done(0), r.done(1)), (0, 1));
    }

    #[test]
    fn threads_share_one_count_of_requests() {
        let c = counters(1);
        let r = Requests::new(&c, 1, None);
        // 4 threads, 1000 write events, a burst of 4 files every 10 requests: 10 + 4 events a
        // cycle, whoever takes them.
        let fsyncs = std::thread::scope(|s| {
            let hs: Vec<_> = (0..4)
                .map(|_| s.spawn(|| (0..250).filter(|_| r.fsync_instead(true, 10, 4).is_some()).count()))
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).sum::<usize>()
        });
        assert_eq!(fsyncs, 1000 / 14 * 4 + (1000usize % 14).saturating_sub(10));
    }
}
