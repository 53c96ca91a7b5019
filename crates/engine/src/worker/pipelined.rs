//! The pipelined loop: on io_uring, a group of single-block reads and writes keeps `iodepth` of
//! them in flight, as fio does (at iodepth 1 too: it drives the ring with less around each
//! transfer than the mix loop does).

use super::{ThreadOutcome, Worker};
use crate::clock;
use crate::io::checked::{self, Claim};
use crate::io::{Dir, SyncBackend, Target, Xfer};
use crate::result::ThreadError;
use crate::workload::{EngineKind, OpKind, OpenMode, Pick, ShuffleOrder};
use rand::RngExt;
use std::io as stdio;
use std::os::fd::{AsRawFd, RawFd};

/// The pipelined io_uring loop opens every file of its fileset up front; past this many files a
/// group runs one operation at a time instead.
const PIPELINE_MAX_FILES: u64 = 1024;

impl<'a> Worker<'a> {
    /// A group whose every operation is one block read or written at a random offset of a random
    /// file kept open, on io_uring, runs its operations concurrently, as fio does.
    pub(super) fn pipelined(&self) -> bool {
        let g = self.group;
        g.engine == EngineKind::IoUring
            && g.open == OpenMode::Keep
            && self.tables.len() == 1
            && self.table.is_static()
            && self.table.static_len() <= PIPELINE_MAX_FILES
            && g.pick == Pick::Random
            && g.fsync_every.is_none()
            && !g.shared_requests
            && !g.fsync_end
            && g.delay.0.is_zero()
            && g.rate.is_none()
            && g.ops.iter().all(|o| {
                matches!(o.op, OpKind::Read | OpKind::Write)
                    && o.sync.is_none()
                    && o.skip.is_none()
                    && o.scope.is_none()
                    && o.extent.is_none()
                    && o.size.is_none_or(|s| s.0 == o.block_size())
            })
    }

    /// The pipelined loop: keeps `iodepth` single-block operations in flight, each timed from
    /// its submission to its completion. It submits `uring.batch_submit` transfers at a time (all
    /// it could queue when 0; when not set, one at a time where transfers are tried inline and all
    /// it could queue where they go to io-wq) and, unless completions are already there, waits for
    /// `uring.batch_complete` of them in one call.
    pub(super) fn run_pipelined(mut self) -> ThreadOutcome {
        let depth = self.group.iodepth as usize;
        let u = self.group.uring;
        // The operation an error outside any one transfer (the ring, an open) is counted under.
        let first_op = self.group.ops[0].op;
        // Open every file of the fileset once.
        let files = self.table.static_len();
        let mut fds = Vec::new();
        for id in 0..files {
            match self.open(id, self.io.keep_flags) {
                Ok(f) => fds.push(f),
                Err(e) => {
                    let message = self.annotate(id, "open", e).to_string();
                    return self.fail(first_op, message, None);
                }
            }
        }
        // The group's ring, taken out of the thread's I/O for the loop to drive directly.
        let mut backend = std::mem::replace(&mut self.io.backend, Box::new(SyncBackend));
        let Some(ring) = backend.as_uring() else {
            return self.fail(first_op, "the pipelined loop needs an io_uring ring".into(), None);
        };
        if let Some(f) = fds.first() {
            ring.settle(f.fd.as_raw_fd(), &self.io.bufs);
        }
        ring.register(&self.io.bufs);
        let raw: Vec<RawFd> = fds.iter().map(|f| f.fd.as_raw_fd()).collect();
        let targets: Vec<Target> = match ring.register_files(&raw) {
            Ok(true) => (0..raw.len() as u32).map(Target::Fixed).collect(),
            Ok(false) => raw.iter().map(|&fd| Target::Fd(fd)).collect(),
            Err(e) => {
                let message = format!("cannot register the files with the ring: {e}");
                return self.fail(first_op, message, e.raw_os_error());
            }
        };
        let batch_submit = match u.batch_submit {
            Some(0) => usize::MAX,
            Some(n) => n as usize,
            None if ring.forces_async() => usize::MAX,
            None => 1,
        };
        let batch_complete = u.batch_complete.max(1) as usize;
        // Per slot: (entry of the mix, start time); its transfer and file; with checked blocks,
        // its claim: another block is drawn where a claim is taken (`io/checked.rs`).
        let timed = self.shared.latency;
        let checked = self.io.bufs.checked();
        let mut slots: Vec<(usize, u64)> = vec![(0, 0); depth];
        let mut placed: Vec<(Xfer, u64, Option<Claim>)> =
            (0..depth).map(|_| (Xfer { offset: 0, len: 0 }, 0, None)).collect();
        let mut free: Vec<usize> = (0..depth).rev().collect();
        // Operations and bytes issued since the ramp ended: the guard counts those completed.
        let (mut issued, mut issued_bytes) = (0u64, 0u64);
        let mut finished = false;
        let mut stopping = false;
        let mut failure = None;
        loop {
            stopping |= self.guard.stopping();
            if self.guard.check_ramp(&mut self.tally) {
                (issued, issued_bytes) = (0, 0);
            }
            let mut queued = 0;
            let mut blocked = false;
            while !stopping && !free.is_empty() && self.guard.within_quota(issued, issued_bytes) {
                let i = self.mix.choose(&mut self.rng).unwrap_or(0);
                let spec = &self.group.ops[i];
                let id = if targets.len() == 1 {
                    0
                } else {
                    self.rng.random_range(0..targets.len())
                };
                let fsize = self.table.static_size(id as u64);
                let bs = spec.block_size().min(fsize.max(1));
                let align = spec.align.map_or(bs, |a| a.0).max(1);
                let room = fsize.saturating_sub(bs);
                let offset = if room == 0 {
                    0
                } else if spec.shuffle == Some(true) {
                    let slots = room / align + 1;
                    let iozone = spec.shuffle_order == Some(ShuffleOrder::Iozone);
                    self.decks.draw(i, id as u64, slots, iozone, &mut self.rng) * align
                } else {
                    self.rng.random_range(0..=room / align) * align
                };
                let claim = if checked {
                    match checked::try_claim(fds[id].ident, offset) {
                        Some(c) => Some(c),
                        None => {
                            blocked = true;
                            break;
                        }
                    }
                } else {
                    None
                };
                let slot = free.pop().expect("a free slot");
                let dir = if spec.op == OpKind::Read { Dir::Read } else { Dir::Write };
                let x = Xfer { offset, len: bs as u32 };
                if dir == Dir::Write {
                    self.io.bufs.stamp(slot, bs as usize, offset);
                }
                placed[slot] = (x, id as u64, claim);
                slots[slot] = (i, if timed { clock::now() } else { 0 });
                ring.push(targets[id], dir, x, &self.io.bufs, slot, slot as u64);
                issued += 1;
                issued_bytes += bs;
                queued += 1;
                if queued == batch_submit {
                    queued = 0;
                    if let Err(e) = ring.submit() {
                        failure = Some(e);
                        break;
                    }
                }
            }
            if let Some(e) = failure.take() {
                self.tally
                    .first_error
                    .get_or_insert_with(|| ThreadError::of(first_op, &e));
                self.guard.stop_all();
                break;
            }
            let inflight = depth - free.len();
            if inflight == 0 {
                if blocked && !stopping {
                    // Another thread holds the block drawn: draw again once it has moved.
                    std::thread::yield_now();
                    continue;
                }
                finished = !stopping;
                break;
            }
            // Completions already there (the last submission ran their task work, or the SQPOLL
            // thread posted them) are reaped without waiting; what is queued is submitted first.
            let waited = if ring.has_completions() {
                if queued > 0 || u.sqpoll {
                    ring.submit()
                } else {
                    Ok(())
                }
            } else {
                ring.submit_and_wait(batch_complete.min(inflight))
            };
            if let Err(e) = waited {
                self.tally
                    .first_error
                    .get_or_insert_with(|| ThreadError::of(first_op, &e));
                self.guard.stop_all();
                break;
            }
            let now = if timed { clock::now() } else { 0 };
            let mut failed = None;
            // What completed in this batch, counted toward the quotas once it is reaped.
            let (mut completed, mut completed_bytes) = (0u64, 0u64);
            let bufs = &self.io.bufs;
            ring.reap(|tag, res| {
                let slot = tag as usize;
                let (i, start) = slots[slot];
                free.push(slot);
                let (x, id, claim) = &mut placed[slot];
                let kind = self.group.ops[i].op;
                let unchecked = if res < 0 || kind != OpKind::Read || res as u32 != x.len {
                    Ok(())
                } else {
                    bufs.check(slot, res as usize, x.offset)
                };
                *claim = None;
                if res < 0 || unchecked.is_err() {
                    self.tally.stats[i].errors += 1;
                    let e = unchecked.err().unwrap_or_else(|| stdio::Error::from_raw_os_error(-res));
                    failed.get_or_insert((i, *id, e));
                    return;
                }
                if timed {
                    let ns = clock::between_ns(start, now);
                    self.tally.stats[i].record(ns, res as u64, 1);
                    self.tally.live.latency.record(ns);
                } else {
                    self.tally.stats[i].count_only(res as u64, 1);
                }
                self.tally.live.add(kind, res as u64);
                completed += 1;
                completed_bytes += res as u64;
            });
            self.guard.count(completed, completed_bytes);
            if let Some((i, id, e)) = failed {
                let kind = self.group.ops[i].op;
                let e = self.annotate(id, kind.name(), e);
                self.tally.first_error.get_or_insert_with(|| ThreadError::of(kind, &e));
                if !self.shared.continue_on_error {
                    self.guard.stop_all();
                    stopping = true;
                }
            }
            if self.guard.quota_met() {
                stopping = true;
            }
        }
        drop(fds);
        self.io.backend = backend;
        self.finish(finished)
    }
}
