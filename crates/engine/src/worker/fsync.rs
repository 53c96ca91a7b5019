//! The fsyncs a thread makes besides its mix's own: sysbench's periodic and end-of-test
//! fsyncs, and IOzone's fsync of a stream the run stopped before its end.

use super::tally::Slot;
use super::{Flow, Outcome, Worker};
use crate::clock;
use crate::io::Dir;
use crate::workload::{OpKind, OpSpec, Scope, SyncKind};

impl<'a> Worker<'a> {
    /// A thread's own writing stream with `sync` that the run stopped before the end of its file
    /// (IOzone's stonewall), even before its first block, syncs that file now, before the
    /// thread's time is taken: the sync falls where the stream stopped writing, as IOzone's -e
    /// fsyncs a stonewalled child's file. Counted as an `fsync`.
    pub(super) fn sync_stopped_streams(&mut self) -> Flow {
        let files = self.table.static_len();
        for i in 0..self.group.ops.len() {
            let spec = &self.group.ops[i];
            let own_writer = spec.scope.unwrap_or_default() == Scope::Own && spec.op.is_stream() && spec.op.writes();
            let Some(kind) = spec.sync.filter(|_| own_writer && files > 0) else {
                continue;
            };
            let (file, block) = self.streams.own[i]
                .as_ref()
                .map_or((self.thread_on_fileset % files, 0), |s| (s.file, s.block));
            let end = if spec.op == OpKind::SeqWrite {
                self.table.spec.size.max()
            } else {
                self.table.static_size(file)
            };
            if block * spec.block_size() >= end {
                continue;
            }
            if self.sync_file(file, kind, true, false) == Flow::Stop {
                return Flow::Stop;
            }
        }
        Flow::Go
    }

    /// Syncs file `id` with `kind`, recorded as an `fsync`: timed when `timed`, and an operation
    /// toward the ops quota when `counted`.
    pub(super) fn sync_file(&mut self, id: u64, kind: SyncKind, timed: bool, counted: bool) -> Flow {
        let t0 = (timed && self.shared.latency).then(clock::now);
        let r = self
            .with_file(id, Dir::Write, |backend, file, _, _| backend.sync(file, kind))
            .and_then(|r| r)
            .map(|()| Outcome::META)
            .map_err(|e| self.annotate(id, "fsync", e));
        let (flow, _) = self.account(Slot::Fsync, OpKind::Fsync, t0, r);
        if !counted {
            self.guard.uncount_op();
        }
        flow
    }

    /// The files an fsync burst or the end fsync covers: the thread's own file when every
    /// operation of the group keeps to it (IOzone's children fsync their own file), otherwise
    /// every file of the fileset (sysbench).
    fn sync_ids(&self) -> std::ops::Range<u64> {
        let files = self.table.static_len();
        let own = |o: &OpSpec| match o.op {
            k if k.is_stream() => o.scope.unwrap_or_default() == Scope::Own,
            OpKind::Read | OpKind::Write => o.scope == Some(Scope::Own),
            _ => false,
        };
        if files > 0 && self.group.ops.iter().all(own) {
            let id = self.thread_on_fileset % files;
            id..id + 1
        } else {
            0..files
        }
    }

    /// sysbench's periodic fsync: after every `fsync_every` read and write requests, when a
    /// write dirtied the files, an fsync of every file of the fileset. With `shared_requests`
    /// the group's generator says when instead (`Worker::fsync_instead`).
    pub(super) fn periodic_fsync(&mut self, kind: OpKind) -> Flow {
        let Some(every) = self.group.fsync_every.filter(|_| self.requests.is_none()) else {
            return Flow::Go;
        };
        if self.burst.due(kind, every) {
            return self.fsync_all(true);
        }
        Flow::Go
    }

    /// Syncs the files of the current fileset that [`sync_ids`](Self::sync_ids) names with the
    /// group's `fsync_kind` (fsync or fdatasync), each counted as an `fsync` operation.
    ///
    /// `burst`: sysbench's periodic burst, whose every fsync is an event: timed, counted toward
    /// the ops quota, and the burst is cut short once the quota is met or the run stops, as
    /// sysbench stops between any two events. Otherwise the thread's end (sysbench's end
    /// fsyncs): every file, but neither timed nor counted toward the quota, since sysbench counts
    /// them in its fsyncs/s but not among its events nor in its latency figures.
    pub(super) fn fsync_all(&mut self, burst: bool) -> Flow {
        let kind = self.group.fsync_kind;
        for id in self.sync_ids() {
            // An fsync of a burst is an event of sysbench's: it waits for its arrival too.
            if burst && (self.guard.stopping() || self.guard.quota_met() || self.await_arrival() == Flow::Stop) {
                break;
            }
            if self.sync_file(id, kind, burst, burst) == Flow::Stop {
                return Flow::Stop;
            }
        }
        Flow::Go
    }
}

/// Where sysbench's periodic fsync stands: read and write requests so far, and whether a write
/// dirtied the files since the last burst.
#[derive(Default)]
pub(super) struct Burst {
    requests: u64,
    dirty: bool,
}

impl Burst {
    /// Counts an operation of `kind`; true when a burst falls due: every `every` read and write
    /// requests, when a write dirtied the files.
    #[inline]
    pub fn due(&mut self, kind: OpKind, every: u64) -> bool {
        if !kind.is_request() {
            return false;
        }
        self.requests += 1;
        self.dirty |= kind.writes();
        if self.dirty && self.requests.is_multiple_of(every) {
            self.dirty = false;
            return true;
        }
        false
    }
}
