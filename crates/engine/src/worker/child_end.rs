//! The loop of a thread that ends as an IOzone 3.487 child does (`stop.child_end`): its own
//! clock, the stonewall raised before or after its fsync, a stopped writer that finishes its file
//! uncounted, and the fsync before close outside its figures. See [`ChildEnd`].

use super::stream;
use super::tally::Slot;
use super::{Flow, Outcome, ThreadOutcome, Worker};
use crate::clock;
use crate::io::{self, Dir};
use crate::workload::{ChildEnd, EngineKind, OpKind, OpenMode, Scope, SyncKind};
use std::time::Instant;

/// How a child's counted work ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ended {
    /// It did all its work.
    Finished,
    /// The stonewall (or the run) stopped it first.
    Stopped,
    /// An operation failed.
    Failed,
}

/// The steps a child takes once its counted work has ended, in order: what IOzone 3.487's
/// throughput children do after their loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// Raise the stonewall (with `stop.stonewall`): every other thread stops at its next
    /// operation.
    Raise,
    /// fsync the own file, timed (`-e`).
    Fsync,
    /// Take the figures: bytes so far and the time since the own start.
    Figures,
    /// Go on to the end of the work without counting it.
    FinishUncounted,
    /// fsync the own file, outside the figures.
    UntimedFsync,
}

/// A child's steps after its counted work, held without a heap allocation: they are worked out
/// inside the child's timed window, between its last call and its figures.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Steps {
    steps: [Step; 6],
    len: usize,
}

impl Steps {
    fn push(&mut self, step: Step) {
        self.steps[self.len] = step;
        self.len += 1;
    }
}

impl std::ops::Deref for Steps {
    type Target = [Step];
    fn deref(&self) -> &[Step] {
        &self.steps[..self.len]
    }
}

/// What a child does after its counted work ended as `ended`.
pub(crate) fn steps(end: &ChildEnd, ended: Ended) -> Steps {
    let mut s = Steps {
        steps: [Step::Raise; 6],
        len: 0,
    };
    match ended {
        Ended::Failed => return s,
        Ended::Finished => {
            if end.raise_before_sync {
                s.push(Step::Raise);
            }
            if end.fsync {
                s.push(Step::Fsync);
            }
            s.push(Step::Figures);
            if !end.raise_before_sync {
                s.push(Step::Raise);
            }
        }
        Ended::Stopped => {
            if end.fsync {
                s.push(Step::Fsync);
            }
            s.push(Step::Figures);
            if end.finish_uncounted {
                s.push(Step::FinishUncounted);
                if end.fsync {
                    s.push(Step::UntimedFsync);
                }
            }
        }
    }
    if end.close_fsync {
        s.push(Step::UntimedFsync);
    }
    s
}

impl<'a> Worker<'a> {
    /// The counted work, then the steps of [`steps`]. `started` is this thread's own start.
    pub(super) fn run_child(mut self, end: ChildEnd, started: Instant) -> ThreadOutcome {
        let mut ended = match self.lean_stream() {
            Some(i) => match self.bare_calls(i) {
                Some(seek) => self.run_bare_stream(i, seek),
                None => self.run_lean_stream(i),
            },
            None => self.run_child_mix(),
        };
        let mut counted_end = None;
        let mut counted_cpu = None;
        for &step in steps(&end, ended).iter() {
            let flow = match step {
                Step::Raise => {
                    if self.shared.stonewall {
                        self.guard.stop_all();
                    }
                    Flow::Go
                }
                Step::Fsync => self.own_fsync(true),
                Step::Figures => {
                    counted_end = Some(Instant::now());
                    counted_cpu = self.cpu_used();
                    Flow::Go
                }
                Step::FinishUncounted => self.finish_uncounted(),
                Step::UntimedFsync => self.own_fsync(false),
            };
            if flow == Flow::Stop {
                ended = Ended::Failed;
                break;
            }
        }
        let mut outcome = self.finish(false);
        outcome.finished = ended == Ended::Finished;
        outcome.started = Some(started);
        outcome.counted_end = counted_end;
        if counted_cpu.is_some() {
            outcome.process_cpu = counted_cpu;
        }
        outcome
    }

    /// The child's counted work, one operation of the mix at a time.
    fn run_child_mix(&mut self) -> Ended {
        while self.guard.before_op(&mut self.tally) {
            let Some(i) = self.mix.choose(&mut self.rng) else {
                return Ended::Finished;
            };
            let Some((flow, _)) = self.mix_op(i) else {
                continue;
            };
            if flow == Flow::Stop {
                return Ended::Failed;
            }
            if self.guard.quota_met() {
                return Ended::Finished;
            }
            self.delay();
        }
        Ended::Stopped
    }

    /// The entry of the mix when the child's work is its own stream through its own file and
    /// nothing else: one read or write after another, with nothing between them (no delay) on a
    /// file kept open. IOzone's loop is that, and fslab's own code around each call was then
    /// some 12% of a cached 4 KiB read's time.
    fn lean_stream(&self) -> Option<usize> {
        let g = self.group;
        let [spec] = &g.ops[..] else {
            return None;
        };
        let lean = matches!(spec.op, OpKind::SeqRead | OpKind::SeqWrite | OpKind::Rewrite)
            && spec.scope.unwrap_or_default() == Scope::Own
            && g.delay.0.is_zero()
            && matches!(g.engine, EngineKind::Sync | EngineKind::Seek)
            && g.open == OpenMode::Keep
            && self.tables.len() == 1
            && self.table.static_len() > 0;
        lean.then_some(0)
    }

    /// [`run_child_mix`](Self::run_child_mix) for the entry [`lean_stream`](Self::lean_stream)
    /// found: the stream's blocks one after another, without choosing an operation each time.
    fn run_lean_stream(&mut self, i: usize) -> Ended {
        let kind = self.group.ops[i].op;
        while self.guard.before_op(&mut self.tally) {
            let Some(block) = self.own_block(i) else {
                self.mix.retire(i);
                return Ended::Finished;
            };
            let t0 = self.shared.latency.then(clock::now);
            let outcome = self.stream_block(i, block);
            self.mix.count_done(i);
            if self.account(Slot::Mix(i), kind, t0, outcome).0 == Flow::Stop {
                return Ended::Failed;
            }
            if self.guard.quota_met() {
                return Ended::Finished;
            }
        }
        Ended::Stopped
    }

    /// Whether the lean stream `i` can run as [`run_bare_stream`](Self::run_bare_stream), and
    /// with which calls (`Io::whole_blocks`): it goes forward through its file once, no sync
    /// follows a block, and the ramp (which throws counts away) is over.
    fn bare_calls(&self, i: usize) -> Option<bool> {
        let spec = &self.group.ops[i];
        let bare = spec.stride.is_none()
            && spec.reverse != Some(true)
            && spec.wrap != Some(true)
            && spec.sync.is_none()
            && self.guard.measuring();
        self.io.whole_blocks.filter(|_| bare)
    }

    /// [`run_lean_stream`](Self::run_lean_stream) with nothing of fslab's between two calls but
    /// the stop flag and the operation's booking (`account`: its count or latency, the live
    /// counters, the quotas): the descriptor and the buffer found once, each block one call
    /// ([`io::whole_block`]), and the cursor and the file's size brought up to date once the loop
    /// ends. IOzone's loop is that. The general one
    /// took some 0.3 µs more than IOzone's for each 4 KiB record of a cached file, a third more
    /// time over 64 kB files. A block that fails is counted as the general loop counts it, which
    /// then goes on (with `continue_on_error`) from the next.
    fn run_bare_stream(&mut self, i: usize, seek: bool) -> Ended {
        let spec = &self.group.ops[i];
        let (kind, bs) = (spec.op, spec.block_size());
        let dir = if kind == OpKind::SeqRead { Dir::Read } else { Dir::Write };
        let Some(first) = self.own_block(i) else {
            self.mix.retire(i);
            return Ended::Finished;
        };
        let (file, mut offset) = (first.file, first.offset);
        let flen = stream::file_len(self.table, kind, file);
        // Where the last write ended; a read found the end of the file; the error that stopped
        // the loop.
        let (mut written_to, mut eof) = (None, false);
        let mut failure = None;
        let ended = match self.kept_open(file) {
            Err(e) => {
                failure = Some(e);
                Ended::Failed
            }
            Ok(slot) => loop {
                if self.guard.stopping() {
                    break Ended::Stopped;
                }
                if eof || offset >= flen {
                    self.mix.retire(i);
                    break Ended::Finished;
                }
                let len = bs.min(flen - offset);
                let buf = self.io.bufs.slot(0, len as usize);
                let t0 = self.shared.latency.then(clock::now);
                let (n, result) = io::whole_block(&mut self.io.cache.entries[slot].1, seek, dir, buf, offset);
                if let Err(e) = result {
                    failure = Some(e.into());
                    break Ended::Failed;
                }
                let n = n as u64;
                // What `ops::transactions` makes of the one transfer.
                let tx = match dir {
                    Dir::Write => 1,
                    Dir::Read => u64::from(n == len && len == bs),
                };
                self.mix.count_done(i);
                let done = Outcome::Done {
                    bytes: n,
                    transactions: tx,
                };
                self.account(Slot::Mix(i), kind, t0, Ok(done));
                match dir {
                    Dir::Write => written_to = Some(offset + n),
                    Dir::Read => eof = n == 0,
                }
                offset += bs;
                if self.guard.quota_met() {
                    break Ended::Finished;
                }
            },
        };
        if let Some(end) = written_to.filter(|&end| end > self.table.static_size(file)) {
            self.table.release(file, Some(end));
        }
        // The block that failed is done with, as the general loop's would be.
        let next = offset + if failure.is_some() { bs } else { 0 };
        let cursor = self.streams.own[i].as_mut().expect("own_block started the stream");
        cursor.block = if eof { u64::MAX / bs } else { next / bs };
        let Some(e) = failure else {
            return ended;
        };
        self.mix.count_done(i);
        let e = self.annotate(file, kind.name(), e);
        if self.account(Slot::Mix(i), kind, None, Err(e)).0 == Flow::Stop {
            return Ended::Failed;
        }
        if self.guard.quota_met() {
            return Ended::Finished;
        }
        self.run_lean_stream(i)
    }

    /// fsyncs this thread's own file, recorded as an `fsync` (timed when `timed`), not counted
    /// toward the ops quota.
    fn own_fsync(&mut self, timed: bool) -> Flow {
        let files = self.table.static_len();
        if files == 0 {
            return Flow::Go;
        }
        self.sync_file(self.thread_on_fileset % files, SyncKind::Fsync, timed, false)
    }

    /// Goes on with the mix until the thread's quota is met or its streams end, counting nothing
    /// in its statistics.
    fn finish_uncounted(&mut self) -> Flow {
        while !self.guard.quota_met() {
            let Some(i) = self.mix.choose(&mut self.rng) else {
                break;
            };
            match self.exec(i) {
                Ok(Outcome::StreamEnded) => self.mix.retire(i),
                Ok(Outcome::Done { bytes, .. }) => {
                    self.mix.count_done(i);
                    self.guard.count(1, bytes);
                    self.delay();
                }
                Ok(Outcome::Skipped) => self.guard.count(1, 0),
                Err(e) => {
                    let kind = self.group.ops[i].op;
                    return self.account(Slot::Mix(i), kind, None, Err(e)).0;
                }
            }
        }
        Flow::Go
    }

    /// The group's delay between operations.
    fn delay(&self) {
        if !self.group.delay.0.is_zero() {
            std::thread::sleep(self.group.delay.0);
        }
    }

    /// Opens this thread's own file before the start, as IOzone's children open theirs before
    /// the parent lets them go; there, uncounted, fsyncs it (`open_fsync`: IOzone's automatic
    /// mode fsyncs its file before its clock starts) and reads its first record and seeks back
    /// (`prime`: automatic mode's readers).
    pub(super) fn open_own_file(&mut self, end: ChildEnd) -> std::io::Result<()> {
        let files = self.table.static_len();
        if files == 0 || self.group.open != crate::workload::OpenMode::Keep {
            return Ok(());
        }
        let id = self.thread_on_fileset % files;
        let record = self
            .group
            .ops
            .first()
            .and_then(|o| o.bs.or(o.size))
            .map_or(0, |b| b.0 as usize);
        self.with_file(id, crate::io::Dir::Read, |backend, file, bufs, _| {
            if end.open_fsync {
                backend.sync(file, SyncKind::Fsync)?;
            }
            if end.prime && record > 0 {
                let len = record.min(bufs.slot_len());
                rustix::io::read(file.fd(), bufs.slot(0, len))?;
                rustix::fs::seek(file.fd(), rustix::fs::SeekFrom::Start(0))?;
            }
            Ok(())
        })
        .and_then(|r: std::io::Result<()>| r)
        .map_err(|e| self.annotate(id, "open", e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn end(fsync: bool, raise_before_sync: bool, finish_uncounted: bool) -> ChildEnd {
        ChildEnd {
            fsync,
            raise_before_sync,
            finish_uncounted,
            close_fsync: true,
            ..ChildEnd::default()
        }
    }

    #[test]
    fn an_initial_writer_that_finishes_raises_the_stonewall_before_its_fsync() {
        let writer = end(true, true, true);
        assert_eq!(
            *steps(&writer, Ended::Finished),
            [Step::Raise, Step::Fsync, Step::Figures, Step::UntimedFsync]
        );
    }

    #[test]
    fn a_rewriter_or_reader_that_finishes_raises_it_after_its_fsync_and_figures() {
        let rewriter = end(true, false, false);
        assert_eq!(
            *steps(&rewriter, Ended::Finished),
            [Step::Fsync, Step::Figures, Step::Raise, Step::UntimedFsync]
        );
    }

    #[test]
    fn a_stopped_writer_fsyncs_takes_its_figures_then_finishes_its_file_uncounted() {
        let writer = end(true, true, true);
        assert_eq!(
            *steps(&writer, Ended::Stopped),
            [
                Step::Fsync,
                Step::Figures,
                Step::FinishUncounted,
                Step::UntimedFsync,
                Step::UntimedFsync
            ]
        );
        let no_e = end(false, true, true);
        assert_eq!(
            *steps(&no_e, Ended::Stopped),
            [Step::Figures, Step::FinishUncounted, Step::UntimedFsync]
        );
    }

    #[test]
    fn a_stopped_reader_stops_where_it_is() {
        let reader = end(true, false, false);
        assert_eq!(
            *steps(&reader, Ended::Stopped),
            [Step::Fsync, Step::Figures, Step::UntimedFsync]
        );
        assert!(steps(&reader, Ended::Failed).is_empty());
    }
}
