//! One worker thread: picks operations from its group's weighted mix and runs them against the
//! group's fileset until the run stops, recording what each did into its own statistics.

use crate::clock;
use crate::confine;
use crate::fileset::{file_name, FileTable, NameBuf, Picked};
use crate::histogram::OpStats;
use crate::io::{self, Backend, Dir, IoBuffers, Moved, OpenFile, UringBackend, Xfer};
use crate::live_latency::LiveLatency;
use crate::script::{Call, Expect, Replayer};
use crate::space;
use crate::workload::{EngineKind, Group, OSync, OpKind, OpSpec, OpenMode, Pick, Scope, SyncKind};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rustix::fs::{AtFlags, Mode, OFlags};
use std::collections::HashMap;
use std::io as stdio;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Barrier;
use std::time::{Duration, Instant};

/// State every thread of a run shares.
pub(crate) struct Shared {
    pub stop: AtomicBool,
    /// Set when the ramp is over: threads then reset their statistics and start counting.
    pub measuring: AtomicBool,
    pub stonewall: bool,
    pub continue_on_error: bool,
    /// Time every operation into the histograms (off only to measure what timing costs).
    pub latency: bool,
    /// stop.util: the fraction at which the filesystem of the first fileset is full enough.
    /// Workers check it themselves every few operations, since a fast writer overshoots any
    /// check the monitor makes ten times a second.
    pub util: Option<f64>,
    /// A worker saw the filesystem reach `util`.
    pub util_reached: AtomicBool,
    pub barrier: Barrier,
}

/// Counters the monitor thread reads once a second: operations and bytes per operation type,
/// and the latency buckets of the timed ones. Only the owning thread writes them (plain
/// stores), so they cost no locked instruction.
#[repr(align(128))]
pub(crate) struct LiveCounters {
    pub ops: [AtomicU64; OpKind::ALL.len()],
    pub bytes: [AtomicU64; OpKind::ALL.len()],
    /// The longest script step since the monitor last looked (dbench's per-second latency).
    pub max_ns: AtomicU64,
    pub latency: LiveLatency,
}

impl LiveCounters {
    pub fn new() -> LiveCounters {
        LiveCounters {
            ops: Default::default(),
            bytes: Default::default(),
            max_ns: AtomicU64::new(0),
            latency: LiveLatency::new(),
        }
    }

    #[inline]
    fn add(&self, kind: OpKind, bytes: u64) {
        let i = kind.index();
        self.ops[i].store(self.ops[i].load(Relaxed) + 1, Relaxed);
        if bytes > 0 {
            self.bytes[i].store(self.bytes[i].load(Relaxed) + bytes, Relaxed);
        }
    }
}

/// What one thread is asked to do.
pub(crate) struct ThreadPlan {
    pub thread_in_group: u32,
    pub seed: u64,
    pub ops_quota: Option<u64>,
    pub bytes_quota: Option<u64>,
}

/// What one thread did, handed back when it ends.
pub(crate) struct ThreadOutcome {
    /// Statistics per entry of the group's mix, counted since the ramp ended.
    pub stats: Vec<OpStats>,
    /// fsyncs of sysbench's periodic bursts and of the end of the run.
    pub fsyncs: OpStats,
    /// Statistics per label of the group's script.
    pub steps: Vec<OpStats>,
    pub first_error: Option<(OpKind, String, Option<i32>)>,
    pub ended: Instant,
    /// The thread ran out of work on its own (streams ended or its quota was met).
    pub finished: bool,
}

/// The outcome of one operation.
enum Outcome {
    Done {
        bytes: u64,
        transactions: u64,
    },
    /// Nothing to work on: no file left to read, no directory left to remove.
    Skipped,
    /// A stream reached its end and does not wrap.
    StreamEnded,
}

/// Which statistics an operation is recorded into.
#[derive(Clone, Copy)]
enum Slot {
    Mix(usize),
    Fsync,
    Step(usize),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Flow {
    Go,
    Stop,
}

impl Outcome {
    /// A metadata operation done: no bytes, one transaction.
    const META: Outcome = Outcome::Done {
        bytes: 0,
        transactions: 1,
    };
}

struct Stream {
    file: u64,
    block: u64,
    pass: u64,
}

/// Open files a thread keeps between operations (OpenMode::Keep), by file id: every file a
/// thread touches stays open, up to [`FD_CACHE`], as fio and sysbench keep theirs. The file of
/// the last operation is found without hashing.
struct FdCache {
    entries: Vec<(u64, OpenFile)>,
    index: HashMap<u64, usize>,
    last: usize,
}

/// Open files per thread at most; past it, the oldest entry makes room.
const FD_CACHE: usize = 4096;

/// The pipelined io_uring loop opens every file of its fileset up front; past this many files a
/// group runs one operation at a time instead.
const PIPELINE_MAX_FILES: u64 = 1024;

impl FdCache {
    fn new() -> FdCache {
        FdCache {
            entries: Vec::new(),
            index: HashMap::new(),
            last: 0,
        }
    }

    fn find(&mut self, id: u64) -> Option<usize> {
        if self.entries.get(self.last).is_some_and(|e| e.0 == id) {
            return Some(self.last);
        }
        let i = *self.index.get(&id)?;
        self.last = i;
        Some(i)
    }

    fn insert(&mut self, id: u64, f: OpenFile) -> usize {
        if self.entries.len() >= FD_CACHE {
            self.remove_at(0);
        }
        self.index.insert(id, self.entries.len());
        self.entries.push((id, f));
        self.last = self.entries.len() - 1;
        self.last
    }

    fn evict(&mut self, id: u64) {
        if let Some(&i) = self.index.get(&id) {
            self.remove_at(i);
        }
    }

    fn remove_at(&mut self, i: usize) {
        let (gone, _) = self.entries.swap_remove(i);
        self.index.remove(&gone);
        if let Some(moved) = self.entries.get(i) {
            self.index.insert(moved.0, i);
        }
        self.last = 0;
    }
}

pub(crate) struct Worker<'a> {
    group: &'a Group,
    /// The fileset of the current operation: one of `tables`, picked per operation.
    table: &'a FileTable,
    tables: Vec<&'a FileTable>,
    cur: usize,
    shared: &'a Shared,
    live: &'a LiveCounters,
    /// One shared cursor per entry of the mix (used by shared streams).
    cursors: &'a [AtomicU64],
    plan: ThreadPlan,
    rng: SmallRng,
    backend: Box<dyn Backend>,
    bufs: IoBuffers,
    xfers: Vec<Xfer>,
    cache: FdCache,
    stats: Vec<OpStats>,
    fsyncs: OpStats,
    steps: Vec<OpStats>,
    /// Operations done per entry of the mix, for `pick = "ratio"`.
    done: Vec<u64>,
    /// Operations and bytes since the ramp ended, against the quotas.
    ops_done: u64,
    bytes_done: u64,
    /// Read and write requests, and whether a write dirtied the files since the last fsync
    /// burst (sysbench's fsync_every).
    requests: u64,
    dirty: bool,
    /// This thread's base directory, for script groups.
    base: Option<std::os::fd::OwnedFd>,
    weights: Vec<u32>,
    total_weight: u64,
    streams: Vec<Option<Stream>>,
    base_flags: OFlags,
    keep_flags: OFlags,
    first_error: Option<(OpKind, String, Option<i32>)>,
}

impl<'a> Worker<'a> {
    pub fn new(
        group: &'a Group,
        tables: Vec<&'a FileTable>,
        base: Option<std::os::fd::OwnedFd>,
        shared: &'a Shared,
        live: &'a LiveCounters,
        cursors: &'a [AtomicU64],
        plan: ThreadPlan,
    ) -> stdio::Result<Worker<'a>> {
        let backend = io::backend(group.engine, group.iodepth)?;
        let max_bs = group.ops.iter().map(|o| o.block_size()).max().unwrap_or(4096) as usize;
        let slots = if group.engine == EngineKind::IoUring {
            group.iodepth as usize
        } else {
            1
        };
        let bufs = IoBuffers::new(max_bs, slots, plan.seed);
        let mut base_flags = OFlags::CLOEXEC | OFlags::NOFOLLOW;
        if group.direct {
            base_flags |= OFlags::DIRECT;
        }
        base_flags |= match group.osync {
            OSync::None => OFlags::empty(),
            OSync::Sync => OFlags::SYNC,
            OSync::Dsync => OFlags::DSYNC,
        };
        let writes = group.ops.iter().any(|o| o.op.writes() || o.op == OpKind::Truncate);
        let keep_flags = base_flags | if writes { OFlags::RDWR } else { OFlags::RDONLY };
        let steps = group.script.as_ref().map_or(0, |s| s.labels.len());
        Ok(Worker {
            group,
            table: tables[0],
            tables,
            cur: 0,
            shared,
            live,
            cursors,
            rng: SmallRng::seed_from_u64(plan.seed),
            plan,
            backend,
            bufs,
            xfers: Vec::with_capacity(256),
            cache: FdCache::new(),
            stats: group.ops.iter().map(|_| OpStats::default()).collect(),
            fsyncs: OpStats::default(),
            steps: (0..steps).map(|_| OpStats::default()).collect(),
            done: vec![0; group.ops.len()],
            ops_done: 0,
            bytes_done: 0,
            requests: 0,
            dirty: false,
            base,
            weights: group.ops.iter().map(|o| o.weight).collect(),
            total_weight: group.ops.iter().map(|o| o.weight as u64).sum(),
            streams: group.ops.iter().map(|_| None).collect(),
            base_flags,
            keep_flags,
            first_error: None,
        })
    }

    /// Runs until the run stops or this thread runs out of work.
    pub fn run(mut self) -> ThreadOutcome {
        let prepared = self.prepare_streams();
        self.shared.barrier.wait();
        if let Err(e) = prepared {
            self.first_error = Some((OpKind::SeqWrite, e.to_string(), errno_of(&e)));
            self.shared.stop.store(true, Relaxed);
            return self.finish(false);
        }
        if self.group.script.is_some() {
            return self.run_script();
        }
        if self.pipelined() {
            return self.run_pipelined();
        }
        let mut measuring = self.shared.measuring.load(Relaxed);
        let rate = self.rate_interval();
        let mut next_due = Instant::now();
        let mut finished = false;
        let mut failed = false;
        while !self.shared.stop.load(Relaxed) {
            if !measuring && self.shared.measuring.load(Relaxed) {
                measuring = true;
                self.reset();
            }
            let Some(i) = self.choose() else {
                finished = true;
                break;
            };
            if self.tables.len() > 1 {
                self.cur = self.rng.gen_range(0..self.tables.len());
                self.table = self.tables[self.cur];
            }
            let kind = self.group.ops[i].op;
            let t0 = self.shared.latency.then(clock::now);
            let result = self.exec(i);
            if let Ok(Outcome::StreamEnded) = result {
                self.total_weight -= self.weights[i] as u64;
                self.weights[i] = 0;
                continue;
            }
            self.done[i] += 1;
            let (flow, op_bytes) = self.account(Slot::Mix(i), kind, t0, result);
            if flow == Flow::Stop {
                failed = true;
                break;
            }
            if self.periodic_fsync(kind) == Flow::Stop {
                failed = true;
                break;
            }
            if let Some(target) = self.shared.util {
                if self.ops_done.is_multiple_of(4) && space::utilisation(self.table.root()).is_some_and(|u| u >= target)
                {
                    self.shared.util_reached.store(true, Relaxed);
                    self.shared.stop.store(true, Relaxed);
                    break;
                }
            }
            if self.quota_met() {
                finished = true;
                break;
            }
            if !self.group.delay.0.is_zero() {
                std::thread::sleep(self.group.delay.0);
            }
            if let Some((per_op, per_byte)) = rate {
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

    /// Before the clock starts, empties the file of each of this thread's own seqwrite streams,
    /// as IOzone opens its writers' files with O_TRUNC before timing them.
    fn prepare_streams(&mut self) -> stdio::Result<()> {
        let files = self.table.static_len();
        for (i, spec) in self.group.ops.iter().enumerate() {
            if spec.op != OpKind::SeqWrite || spec.scope == Some(Scope::Shared) || files == 0 {
                continue;
            }
            let file = self.plan.thread_in_group as u64 % files;
            let r = self.with_file(file, Dir::Write, |_, f, _, _| rustix::fs::ftruncate(&f.fd, 0));
            r.and_then(|r| r.map_err(stdio::Error::from))
                .map_err(|e| self.annotate(file, "seqwrite", e))?;
            self.table.release(file, Some(0));
            self.streams[i] = Some(Stream {
                file,
                block: 0,
                pass: 0,
            });
        }
        Ok(())
    }

    /// A thread's own writing stream with `sync` that the run stopped before the end of its file
    /// (IOzone's stonewall), even before its first block, syncs that file now, before the
    /// thread's time is taken: the sync falls where the stream stopped writing, as IOzone's -e
    /// fsyncs a stonewalled child's file. Counted as an `fsync`.
    fn sync_stopped_streams(&mut self) -> Flow {
        let files = self.table.static_len();
        for i in 0..self.group.ops.len() {
            let spec = &self.group.ops[i];
            let own_writer = spec.scope.unwrap_or_default() == Scope::Own && spec.op.is_stream() && spec.op.writes();
            let Some(kind) = spec.sync.filter(|_| own_writer && files > 0) else {
                continue;
            };
            let (file, block) = self.streams[i]
                .as_ref()
                .map_or((self.plan.thread_in_group as u64 % files, 0), |s| (s.file, s.block));
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
    fn sync_file(&mut self, id: u64, kind: SyncKind, timed: bool, counted: bool) -> Flow {
        let t0 = (timed && self.shared.latency).then(clock::now);
        let r = self
            .with_file(id, Dir::Write, |backend, file, _, _| backend.sync(file, kind))
            .and_then(|r| r)
            .map(|()| Outcome::META)
            .map_err(|e| self.annotate(id, "fsync", e));
        let before = self.ops_done;
        let (flow, _) = self.account(Slot::Fsync, OpKind::Fsync, t0, r);
        if !counted {
            self.ops_done = before;
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
            let id = self.plan.thread_in_group as u64 % files;
            id..id + 1
        } else {
            0..files
        }
    }

    /// Clears what was counted during the ramp.
    fn reset(&mut self) {
        self.stats.iter_mut().for_each(OpStats::reset);
        self.steps.iter_mut().for_each(OpStats::reset);
        self.fsyncs.reset();
        (self.ops_done, self.bytes_done) = (0, 0);
    }

    /// Records what an operation did; says whether the thread must stop, and the bytes moved.
    fn account(&mut self, slot: Slot, kind: OpKind, t0: Option<u64>, result: stdio::Result<Outcome>) -> (Flow, u64) {
        let stats = match slot {
            Slot::Mix(i) => &mut self.stats[i],
            Slot::Fsync => &mut self.fsyncs,
            Slot::Step(l) => &mut self.steps[l],
        };
        self.ops_done += 1;
        match result {
            Ok(Outcome::Done { bytes, transactions }) => {
                match t0 {
                    Some(t0) => {
                        let ns = clock::since_ns(t0);
                        stats.record(ns, bytes, transactions);
                        self.live.latency.record(ns);
                    }
                    None => stats.count_only(bytes, transactions),
                }
                self.live.add(kind, bytes);
                self.bytes_done += bytes;
                (Flow::Go, bytes)
            }
            Ok(Outcome::Skipped) | Ok(Outcome::StreamEnded) => {
                stats.skipped += 1;
                (Flow::Go, 0)
            }
            Err(e) => {
                stats.errors += 1;
                if self.first_error.is_none() {
                    self.first_error = Some((kind, e.to_string(), errno_of(&e)));
                }
                if self.shared.continue_on_error {
                    (Flow::Go, 0)
                } else {
                    self.shared.stop.store(true, Relaxed);
                    (Flow::Stop, 0)
                }
            }
        }
    }

    /// sysbench's periodic fsync: after every `fsync_every` read and write requests, when a
    /// write dirtied the files, an fsync of every file of the fileset.
    fn periodic_fsync(&mut self, kind: OpKind) -> Flow {
        let Some(every) = self.group.fsync_every else {
            return Flow::Go;
        };
        if !matches!(
            kind,
            OpKind::Read | OpKind::Write | OpKind::SeqRead | OpKind::SeqWrite | OpKind::Rewrite
        ) {
            return Flow::Go;
        }
        self.requests += 1;
        self.dirty |= kind.writes();
        if self.dirty && self.requests.is_multiple_of(every) {
            self.dirty = false;
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
    fn fsync_all(&mut self, burst: bool) -> Flow {
        let kind = self.group.fsync_kind;
        for id in self.sync_ids() {
            if burst && (self.shared.stop.load(Relaxed) || self.quota_met()) {
                break;
            }
            if self.sync_file(id, kind, burst, burst) == Flow::Stop {
                return Flow::Stop;
            }
        }
        Flow::Go
    }

    /// This thread has done its share of the run's operations or bytes.
    fn quota_met(&self) -> bool {
        self.plan.ops_quota.is_some_and(|q| self.ops_done >= q)
            || self.plan.bytes_quota.is_some_and(|q| self.bytes_done >= q)
    }

    fn finish(self, finished: bool) -> ThreadOutcome {
        if finished && self.shared.stonewall {
            self.shared.stop.store(true, Relaxed);
        }
        ThreadOutcome {
            stats: self.stats,
            fsyncs: self.fsyncs,
            steps: self.steps,
            first_error: self.first_error,
            ended: Instant::now(),
            finished,
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

    fn choose(&mut self) -> Option<usize> {
        if self.total_weight == 0 {
            return None;
        }
        if self.weights.len() == 1 {
            return Some(0);
        }
        if self.group.pick == Pick::Ratio {
            // The entry furthest behind its share: the smallest (done + 1) / weight, the later
            // one on a tie (so reads 3 : writes 2 reads while (reads+1)/(writes+1) < 1.5, as
            // sysbench does).
            let mut best: Option<(usize, u64, u64)> = None;
            for (i, &w) in self.weights.iter().enumerate() {
                if w == 0 {
                    continue;
                }
                let (num, den) = (self.done[i] + 1, w as u64);
                if best.is_none_or(|(_, bn, bd)| num as u128 * bd as u128 <= bn as u128 * den as u128) {
                    best = Some((i, num, den));
                }
            }
            return best.map(|b| b.0);
        }
        let mut pick = self.rng.gen_range(0..self.total_weight);
        for (i, w) in self.weights.iter().enumerate() {
            if pick < *w as u64 {
                return Some(i);
            }
            pick -= *w as u64;
        }
        None
    }

    fn exec(&mut self, i: usize) -> stdio::Result<Outcome> {
        let spec = &self.group.ops[i];
        match spec.op {
            OpKind::Read | OpKind::Write => self.ranged(i),
            OpKind::ReadAll | OpKind::WriteAll => self.whole(i),
            OpKind::Append => self.append(i),
            OpKind::Create => self.create(i),
            OpKind::Delete => self.delete(),
            OpKind::Stat => self.stat(),
            OpKind::OpenClose => self.open_close(),
            OpKind::Mkdir => self.mkdir(),
            OpKind::Rmdir => self.rmdir(),
            OpKind::Rename => self.rename(),
            OpKind::Readdir => self.readdir(),
            OpKind::Truncate => self.truncate(i),
            OpKind::SeqRead | OpKind::SeqWrite | OpKind::Rewrite => self.stream(i),
            OpKind::Fsync => self.fsync_one(),
            OpKind::MetaOp => self.metaop(),
        }
    }

    fn annotate(&self, id: u64, what: &str, e: stdio::Error) -> stdio::Error {
        let errno = errno_of(&e);
        stdio::Error::new(
            e.kind(),
            Annotated {
                errno,
                message: format!("{what} {}: {e}", self.table.describe(id)),
            },
        )
    }

    fn open(&self, id: u64, flags: OFlags) -> stdio::Result<OpenFile> {
        let mut b: NameBuf = [0; 64];
        let name = self.table.name(id, &mut b);
        rustix::fs::openat(self.table.dir_of(id), name, flags, Mode::from_raw_mode(0o644))
            .map(OpenFile::new)
            .map_err(|e| {
                if e == rustix::io::Errno::LOOP {
                    stdio::Error::new(
                        stdio::ErrorKind::PermissionDenied,
                        "is a symlink; fslab does not follow symlinks",
                    )
                } else {
                    e.into()
                }
            })
    }

    /// Runs `f` on file `id`, open for reading and writing as the group needs: from the cache
    /// when files stay open, or opened and closed around it.
    fn with_file<T>(
        &mut self,
        id: u64,
        dir: Dir,
        f: impl FnOnce(&mut dyn Backend, &mut OpenFile, &mut IoBuffers, &[Xfer]) -> T,
    ) -> stdio::Result<T> {
        match self.group.open {
            OpenMode::Keep => {
                let key = (self.cur as u64) << 48 | id;
                let slot = match self.cache.find(key) {
                    Some(s) => s,
                    None => {
                        let file = self.open(id, self.keep_flags)?;
                        self.cache.insert(key, file)
                    }
                };
                let file = &mut self.cache.entries[slot].1;
                Ok(f(self.backend.as_mut(), file, &mut self.bufs, &self.xfers))
            }
            OpenMode::PerOp => {
                let access = match (dir, self.group.engine) {
                    (Dir::Read, _) => OFlags::RDONLY,
                    // A mapping needs a readable descriptor even to write.
                    (Dir::Write, EngineKind::Mmap) => OFlags::RDWR,
                    (Dir::Write, _) => OFlags::WRONLY,
                };
                let mut file = self.open(id, self.base_flags | access)?;
                Ok(f(self.backend.as_mut(), &mut file, &mut self.bufs, &self.xfers))
            }
        }
    }

    /// Moves the transfers in `self.xfers` on file `id`, then syncs if the op asks.
    fn move_blocks(&mut self, id: u64, dir: Dir, sync: Option<SyncKind>) -> stdio::Result<Moved> {
        let (moved, result) = self.with_file(id, dir, |backend, file, bufs, xfers| {
            let (moved, mut result) = backend.transfer(file, dir, xfers, bufs);
            if let (Ok(()), Some(kind)) = (&result, sync) {
                result = backend.sync(file, kind);
            }
            (moved, result)
        })?;
        result.map(|()| moved)
    }

    /// read and write: `size` bytes in `bs` blocks, in `seeks` runs at random offsets, with
    /// `skip` bytes left between blocks. A write never goes past the end of the file.
    fn ranged(&mut self, i: usize) -> stdio::Result<Outcome> {
        let spec = &self.group.ops[i];
        let own = spec.scope == Some(Scope::Own) && self.table.static_len() > 0;
        let picked = if own {
            // The thread's own file, as IOzone's children each work on theirs.
            let id = self.plan.thread_in_group as u64 % self.table.static_len();
            Some(Picked {
                id,
                size: self.table.static_size(id),
            })
        } else {
            self.table.pick(&mut self.rng)
        };
        let Some(Picked { id, size: fsize }) = picked else {
            return Ok(Outcome::Skipped);
        };
        let dir = if spec.op == OpKind::Read { Dir::Read } else { Dir::Write };
        let bs = spec.block_size();
        let want = spec.size.map_or(bs, |s| s.0).min(fsize);
        if want == 0 {
            // An empty file has nothing to read or overwrite.
            self.table.release(id, None);
            return Ok(Outcome::Skipped);
        }
        let skip = spec.skip.map_or(0, |s| s.0);
        let align = spec.align.map_or(bs, |a| a.0).max(1);
        let blocks = want.div_ceil(bs);
        let seeks = spec.seeks.unwrap_or(1).max(1) as u64;
        let per_run = blocks.div_ceil(seeks).max(1);
        self.xfers.clear();
        let mut left = want;
        while left > 0 {
            let run_blocks = per_run.min(left.div_ceil(bs));
            let run_bytes = (run_blocks * bs).min(left);
            let span = run_bytes + (run_blocks - 1) * skip;
            let room = fsize.saturating_sub(span);
            let offset = if room == 0 {
                0
            } else {
                self.rng.gen_range(0..=room / align) * align
            };
            let mut off = offset;
            let mut run_left = run_bytes;
            while run_left > 0 && off < fsize {
                let len = bs.min(run_left).min(fsize - off);
                self.xfers.push(Xfer {
                    offset: off,
                    len: len as u32,
                });
                run_left -= len;
                left -= len;
                off += len + skip;
            }
            if run_left > 0 {
                break;
            }
        }
        let result = self.move_blocks(id, dir, spec.sync);
        self.table.release(id, None);
        let moved = result.map_err(|e| self.annotate(id, spec.op.name(), e))?;
        Ok(Outcome::Done {
            bytes: moved.bytes,
            transactions: transactions(dir, &moved, &self.xfers, bs),
        })
    }

    /// Fills `self.xfers` with `[from, to)` in blocks of `bs`.
    fn sequential(&mut self, from: u64, to: u64, bs: u64) {
        self.xfers.clear();
        let mut off = from;
        while off < to {
            let len = bs.min(to - off);
            self.xfers.push(Xfer {
                offset: off,
                len: len as u32,
            });
            off += len;
        }
    }

    /// readall and writeall: the whole file.
    fn whole(&mut self, i: usize) -> stdio::Result<Outcome> {
        let Some(Picked { id, size }) = self.table.pick(&mut self.rng) else {
            return Ok(Outcome::Skipped);
        };
        let spec = &self.group.ops[i];
        let dir = if spec.op == OpKind::ReadAll {
            Dir::Read
        } else {
            Dir::Write
        };
        let bs = spec.block_size();
        self.sequential(0, size, bs);
        let result = self.move_blocks(id, dir, spec.sync);
        self.table.release(id, None);
        let moved = result.map_err(|e| self.annotate(id, spec.op.name(), e))?;
        Ok(Outcome::Done {
            bytes: moved.bytes,
            transactions: transactions(dir, &moved, &self.xfers, bs),
        })
    }

    /// append: `size` bytes at the end, through an O_APPEND descriptor.
    fn append(&mut self, i: usize) -> stdio::Result<Outcome> {
        let Some(Picked { id, size }) = self.table.pick(&mut self.rng) else {
            return Ok(Outcome::Skipped);
        };
        let spec = &self.group.ops[i];
        let bs = spec.block_size();
        let want = spec.size.map_or(bs, |s| s.0);
        let result = (|| {
            let mut file = self.open(id, self.base_flags | OFlags::WRONLY | OFlags::APPEND)?;
            let mut moved = Moved::default();
            let mut left = want;
            while left > 0 {
                let len = bs.min(left) as usize;
                let n = rustix::io::write(&file.fd, self.bufs.slot(0, len))?;
                moved.add(len as u32, n);
                left -= n as u64;
            }
            if let Some(kind) = spec.sync {
                self.backend.sync(&mut file, kind)?;
            }
            Ok::<_, stdio::Error>(moved)
        })();
        let grown = result.as_ref().map_or(0, |m| m.bytes);
        self.table.release(id, Some(size + grown));
        let moved = result.map_err(|e| self.annotate(id, "append", e))?;
        Ok(Outcome::Done {
            bytes: moved.bytes,
            transactions: moved.calls,
        })
    }

    /// create: a new file at a size drawn from the fileset, written in `bs` blocks.
    fn create(&mut self, i: usize) -> stdio::Result<Outcome> {
        let spec = &self.group.ops[i];
        let id = self.table.new_id();
        let size = self.table.spec.size.sample(&mut self.rng);
        self.sequential(0, size, spec.block_size());
        let flags = self.base_flags | OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL;
        let result = (|| {
            let mut file = self.open(id, flags)?;
            let (moved, r) = self
                .backend
                .transfer(&mut file, Dir::Write, &self.xfers, &mut self.bufs);
            r?;
            if let Some(kind) = spec.sync {
                self.backend.sync(&mut file, kind)?;
            }
            Ok::<_, stdio::Error>(moved)
        })();
        let moved = result.map_err(|e| self.annotate(id, "create", e))?;
        self.table.insert(id, moved.bytes);
        Ok(Outcome::Done {
            bytes: moved.bytes,
            transactions: moved.calls,
        })
    }

    fn delete(&mut self) -> stdio::Result<Outcome> {
        let Some(Picked { id, size }) = self.table.take(&mut self.rng) else {
            return Ok(Outcome::Skipped);
        };
        self.cache.evict((self.cur as u64) << 48 | id);
        let mut b: NameBuf = [0; 64];
        match rustix::fs::unlinkat(self.table.dir_of(id), self.table.name(id, &mut b), AtFlags::empty()) {
            Ok(()) => Ok(Outcome::META),
            Err(e) => {
                self.table.insert(id, size);
                Err(self.annotate(id, "delete", e.into()))
            }
        }
    }

    fn stat(&mut self) -> stdio::Result<Outcome> {
        let Some(Picked { id, .. }) = self.table.pick(&mut self.rng) else {
            return Ok(Outcome::Skipped);
        };
        let mut b: NameBuf = [0; 64];
        let r = rustix::fs::statat(
            self.table.dir_of(id),
            self.table.name(id, &mut b),
            AtFlags::SYMLINK_NOFOLLOW,
        );
        self.table.release(id, None);
        r.map_err(|e| self.annotate(id, "stat", e.into()))?;
        Ok(Outcome::META)
    }

    fn open_close(&mut self) -> stdio::Result<Outcome> {
        let Some(Picked { id, .. }) = self.table.pick(&mut self.rng) else {
            return Ok(Outcome::Skipped);
        };
        let r = self.open(id, self.base_flags | OFlags::RDONLY);
        self.table.release(id, None);
        drop(r.map_err(|e| self.annotate(id, "open", e))?);
        Ok(Outcome::META)
    }

    fn meta_dir(&self) -> stdio::Result<BorrowedFd<'a>> {
        self.table
            .meta()
            .ok_or_else(|| stdio::Error::other("the fileset has no meta directory"))
    }

    fn mkdir(&mut self) -> stdio::Result<Outcome> {
        let meta = self.meta_dir()?;
        let id = self.table.new_dir_id();
        let mut b: NameBuf = [0; 64];
        rustix::fs::mkdirat(meta, file_name("m", id, &mut b), Mode::from_raw_mode(0o755))
            .map_err(|e| stdio::Error::new(stdio::Error::from(e).kind(), format!("mkdir meta/m{id}: {e}")))?;
        self.table.made_dir(id);
        Ok(Outcome::META)
    }

    fn rmdir(&mut self) -> stdio::Result<Outcome> {
        let meta = self.meta_dir()?;
        let Some(id) = self.table.take_dir(&mut self.rng) else {
            return Ok(Outcome::Skipped);
        };
        let mut b: NameBuf = [0; 64];
        rustix::fs::unlinkat(meta, file_name("m", id, &mut b), AtFlags::REMOVEDIR)
            .map_err(|e| stdio::Error::new(stdio::Error::from(e).kind(), format!("rmdir meta/m{id}: {e}")))?;
        Ok(Outcome::META)
    }

    /// rename: a file gets a new name, possibly in another directory of the fileset.
    fn rename(&mut self) -> stdio::Result<Outcome> {
        let Some(Picked { id, size }) = self.table.take(&mut self.rng) else {
            return Ok(Outcome::Skipped);
        };
        self.cache.evict((self.cur as u64) << 48 | id);
        let to = self.table.new_id();
        let (mut a, mut b): (NameBuf, NameBuf) = ([0; 64], [0; 64]);
        let r = rustix::fs::renameat(
            self.table.dir_of(id),
            self.table.name(id, &mut a),
            self.table.dir_of(to),
            self.table.name(to, &mut b),
        );
        match r {
            Ok(()) => {
                self.table.insert(to, size);
                Ok(Outcome::META)
            }
            Err(e) => {
                self.table.insert(id, size);
                Err(self.annotate(id, "rename", e.into()))
            }
        }
    }

    /// readdir: lists one of the fileset's directories.
    fn readdir(&mut self) -> stdio::Result<Outcome> {
        let k = self.rng.gen_range(0..self.table.dir_count());
        let dir = self.table.dir(k);
        let fd = confine::reopen_dir(dir)?;
        let mut entries = 0u64;
        for e in rustix::fs::Dir::new(fd)? {
            e?;
            entries += 1;
        }
        std::hint::black_box(entries);
        Ok(Outcome::META)
    }

    /// fsync: one file of the fileset.
    fn fsync_one(&mut self) -> stdio::Result<Outcome> {
        let Some(Picked { id, .. }) = self.table.pick(&mut self.rng) else {
            return Ok(Outcome::Skipped);
        };
        let r = self.with_file(id, Dir::Write, |backend, file, _, _| {
            backend.sync(file, SyncKind::Fsync)
        });
        self.table.release(id, None);
        r.and_then(|r| r).map_err(|e| self.annotate(id, "fsync", e))?;
        Ok(Outcome::META)
    }

    /// FFSB's metaop, in the fileset's meta directory: two directories made, the first removed,
    /// the second renamed. One transaction, as FFSB counts it.
    fn metaop(&mut self) -> stdio::Result<Outcome> {
        let meta = self.meta_dir()?;
        let (a, b, c) = (
            self.table.new_dir_id(),
            self.table.new_dir_id(),
            self.table.new_dir_id(),
        );
        let (mut na, mut nb, mut nc): (NameBuf, NameBuf, NameBuf) = ([0; 64], [0; 64], [0; 64]);
        let (na, nb, nc) = (
            file_name("m", a, &mut na),
            file_name("m", b, &mut nb),
            file_name("m", c, &mut nc),
        );
        let fail = |what: &str, e: rustix::io::Errno| {
            stdio::Error::new(stdio::Error::from(e).kind(), format!("metaop: {what}: {e}"))
        };
        rustix::fs::mkdirat(meta, na, Mode::from_raw_mode(0o755)).map_err(|e| fail("mkdir", e))?;
        rustix::fs::mkdirat(meta, nb, Mode::from_raw_mode(0o755)).map_err(|e| fail("mkdir", e))?;
        rustix::fs::unlinkat(meta, na, AtFlags::REMOVEDIR).map_err(|e| fail("rmdir", e))?;
        rustix::fs::renameat(meta, nb, meta, nc).map_err(|e| fail("rename", e))?;
        self.table.made_dir(c);
        Ok(Outcome::META)
    }

    /// truncate: sets a file's size to `size`, or to one drawn from the fileset.
    fn truncate(&mut self, i: usize) -> stdio::Result<Outcome> {
        let Some(Picked { id, .. }) = self.table.pick(&mut self.rng) else {
            return Ok(Outcome::Skipped);
        };
        let to = match self.group.ops[i].size {
            Some(s) => s.0,
            None => self.table.spec.size.sample(&mut self.rng),
        };
        let r = self.with_file(id, Dir::Write, |_, file, _, _| rustix::fs::ftruncate(&file.fd, to));
        let ok = matches!(r, Ok(Ok(())));
        self.table.release(id, ok.then_some(to));
        r.and_then(|r| r.map_err(stdio::Error::from))
            .map_err(|e| self.annotate(id, "truncate", e))?;
        Ok(Outcome::META)
    }

    /// seqread, seqwrite, rewrite: one block per operation at the stream's cursor. A thread's own
    /// stream runs over file (thread mod files); a shared stream runs over the whole fileset with
    /// one cursor for the group. A thread's own seqwrite file was emptied before the clock started.
    fn stream(&mut self, i: usize) -> stdio::Result<Outcome> {
        let spec: &OpSpec = &self.group.ops[i];
        let kind = spec.op;
        let bs = spec.block_size();
        let wrap = spec.wrap.unwrap_or(false);
        let files = self.table.static_len();
        if files == 0 {
            return Ok(Outcome::StreamEnded);
        }
        let file_len = |t: &FileTable, f: u64| {
            if kind == OpKind::SeqWrite {
                t.spec.size.max()
            } else {
                t.static_size(f)
            }
        };
        let reverse = spec.reverse == Some(true);
        // The block to move, and whether it is the file's last (where a stream's `sync` falls,
        // as IOzone's -e fsyncs each file).
        let (file, offset, len, last) = match spec.scope.unwrap_or_default() {
            Scope::Own => {
                let first = self.plan.thread_in_group as u64 % files;
                let s = self.streams[i].get_or_insert(Stream {
                    file: first,
                    block: 0,
                    pass: 0,
                });
                let flen = file_len(self.table, s.file);
                if s.block * bs >= flen {
                    if !wrap || flen == 0 {
                        return Ok(Outcome::StreamEnded);
                    }
                    s.block = 0;
                    s.pass += 1;
                }
                let (start, end) = if reverse {
                    let end = flen - s.block * bs;
                    (end.saturating_sub(bs), end)
                } else {
                    (s.block * bs, (s.block * bs + bs).min(flen))
                };
                s.block += 1;
                (s.file, start, end - start, s.block * bs >= flen)
            }
            Scope::Shared => {
                let flen = file_len(self.table, 0);
                let per_file = flen.div_ceil(bs);
                if per_file == 0 {
                    return Ok(Outcome::StreamEnded);
                }
                let blk = self.cursors[i].fetch_add(1, Relaxed);
                let pass = blk / (per_file * files);
                if pass > 0 && !wrap {
                    return Ok(Outcome::StreamEnded);
                }
                let within = blk % (per_file * files);
                let off = (within % per_file) * bs;
                (
                    within / per_file,
                    off,
                    bs.min(flen - off),
                    within % per_file == per_file - 1,
                )
            }
        };
        let dir = if kind == OpKind::SeqRead { Dir::Read } else { Dir::Write };
        self.xfers.clear();
        self.xfers.push(Xfer {
            offset,
            len: len as u32,
        });
        let sync = if last { spec.sync } else { None };
        let moved = self
            .move_blocks(file, dir, sync)
            .map_err(|e| self.annotate(file, kind.name(), e))?;
        if dir == Dir::Write && offset + moved.bytes > self.table.static_size(file) {
            self.table.release(file, Some(offset + moved.bytes));
        }
        if dir == Dir::Read && moved.bytes == 0 {
            // The file is shorter than it was: treat it as the end of this file's stream.
            if let Some(s) = self.streams[i].as_mut() {
                s.block = u64::MAX / bs;
            }
        }
        Ok(Outcome::Done {
            bytes: moved.bytes,
            transactions: transactions(dir, &moved, &self.xfers, bs),
        })
    }

    /// Replays the group's script from its start, again and again, until the run stops. A step
    /// whose outcome differs from the one the script expects is counted as a mismatch and the
    /// replay goes on (dbench kills its client); an error the storage itself reports (no space,
    /// I/O error, read-only) is a real error.
    fn run_script(mut self) -> ThreadOutcome {
        let group = self.group;
        let script = group.script.as_ref().expect("a script group");
        let Some(base) = self.base.take() else {
            self.first_error = Some((OpKind::OpenClose, "the script's base directory is missing".into(), None));
            self.shared.stop.store(true, Relaxed);
            return self.finish(false);
        };
        let mut replay = Replayer::new(
            script,
            base,
            self.base_flags & (OFlags::DIRECT | OFlags::SYNC | OFlags::DSYNC),
        );
        let mut measuring = self.shared.measuring.load(Relaxed);
        let mut finished = false;
        'passes: loop {
            let pass_start = Instant::now();
            for step in &script.steps {
                if self.shared.stop.load(Relaxed) {
                    break 'passes;
                }
                if !measuring && self.shared.measuring.load(Relaxed) {
                    measuring = true;
                    self.reset();
                }
                if let (true, Some(at)) = (script.paced, step.at) {
                    let due = pass_start + Duration::from_secs_f64(at);
                    let now = Instant::now();
                    if due > now {
                        std::thread::sleep(due - now);
                    }
                }
                let kind = step.call.kind();
                let label = step.label as usize;
                let t0 = self.shared.latency.then(clock::now);
                let result = replay.call(&step.call);
                let mismatch = matches!((&result, step.expect), (Ok(_), Expect::Fail) | (Err(_), Expect::Ok));
                let outcome = match result {
                    Err(e) if step.expect == Expect::Ok && is_hard(&e) => Err(stdio::Error::new(
                        e.kind(),
                        Annotated {
                            errno: errno_of(&e),
                            message: format!("{} {}: {e}", script.labels[label], describe_call(&step.call)),
                        },
                    )),
                    Ok(bytes) => Ok(Outcome::Done { bytes, transactions: 1 }),
                    Err(_) => Ok(Outcome::META),
                };
                if mismatch {
                    self.steps[label].mismatches += 1;
                }
                let (flow, _) = self.account(Slot::Step(label), kind, t0, outcome);
                if flow == Flow::Stop {
                    break 'passes;
                }
                if let Some(t0) = t0 {
                    self.live.max_ns.fetch_max(clock::since_ns(t0), Relaxed);
                }
                if self.plan.ops_quota.is_some_and(|q| self.ops_done >= q)
                    || self.plan.bytes_quota.is_some_and(|q| self.bytes_done >= q)
                {
                    finished = true;
                    break 'passes;
                }
            }
            replay.close_all();
        }
        self.finish(finished)
    }

    /// A group whose every operation is one block read or written at a random offset of a file
    /// kept open, on io_uring with iodepth > 1, runs its operations concurrently, as fio does.
    fn pipelined(&self) -> bool {
        let g = self.group;
        g.engine == EngineKind::IoUring
            && g.iodepth > 1
            && g.open == OpenMode::Keep
            && self.tables.len() == 1
            && self.table.is_static()
            && self.table.static_len() <= PIPELINE_MAX_FILES
            && g.pick == Pick::Random
            && g.fsync_every.is_none()
            && !g.fsync_end
            && g.delay.0.is_zero()
            && g.rate.is_none()
            && g.ops.iter().all(|o| {
                matches!(o.op, OpKind::Read | OpKind::Write)
                    && o.sync.is_none()
                    && o.skip.is_none()
                    && o.size.is_none_or(|s| s.0 == o.block_size())
            })
    }

    /// The pipelined loop: keeps `iodepth` single-block operations in flight, each timed from
    /// its submission to its completion.
    fn run_pipelined(mut self) -> ThreadOutcome {
        let depth = self.group.iodepth as usize;
        let mut ring = match UringBackend::new(self.group.iodepth) {
            Ok(r) => r,
            Err(e) => {
                self.first_error = Some((self.group.ops[0].op, e.to_string(), e.raw_os_error()));
                self.shared.stop.store(true, Relaxed);
                return self.finish(false);
            }
        };
        ring.register(&self.bufs);
        // Open every file of the fileset once.
        let files = self.table.static_len();
        let mut fds = Vec::new();
        for id in 0..files {
            match self.open(id, self.keep_flags) {
                Ok(f) => fds.push(f),
                Err(e) => {
                    self.first_error = Some((self.group.ops[0].op, self.annotate(id, "open", e).to_string(), None));
                    self.shared.stop.store(true, Relaxed);
                    return self.finish(false);
                }
            }
        }
        // Per slot: (entry of the mix, start time).
        let timed = self.shared.latency;
        let mut slots: Vec<(usize, u64)> = vec![(0, 0); depth];
        let mut free: Vec<usize> = (0..depth).rev().collect();
        let mut measuring = self.shared.measuring.load(Relaxed);
        // Operations and bytes issued and completed since the ramp ended, against the quotas.
        let (mut issued, mut issued_bytes) = (0u64, 0u64);
        let (mut ops_done, mut bytes_done) = (0u64, 0u64);
        let mut finished = false;
        let mut stopping = false;
        loop {
            stopping |= self.shared.stop.load(Relaxed);
            if !measuring && self.shared.measuring.load(Relaxed) {
                measuring = true;
                self.stats.iter_mut().for_each(OpStats::reset);
                (issued, issued_bytes, ops_done, bytes_done) = (0, 0, 0, 0);
            }
            let (ops_quota, bytes_quota) = (self.plan.ops_quota, self.plan.bytes_quota);
            let quota_left =
                |ops: u64, bytes: u64| ops_quota.is_none_or(|q| ops < q) && bytes_quota.is_none_or(|q| bytes < q);
            while !stopping && !free.is_empty() && quota_left(issued, issued_bytes) {
                let i = self.choose().unwrap_or(0);
                let spec = &self.group.ops[i];
                let id = if fds.len() == 1 {
                    0
                } else {
                    self.rng.gen_range(0..fds.len())
                };
                let fsize = self.table.static_size(id as u64);
                let bs = spec.block_size().min(fsize.max(1));
                let align = spec.align.map_or(bs, |a| a.0).max(1);
                let room = fsize.saturating_sub(bs);
                let offset = if room == 0 {
                    0
                } else {
                    self.rng.gen_range(0..=room / align) * align
                };
                let slot = free.pop().expect("a free slot");
                let dir = if spec.op == OpKind::Read { Dir::Read } else { Dir::Write };
                slots[slot] = (i, if timed { clock::now() } else { 0 });
                ring.push(
                    fds[id].fd.as_raw_fd(),
                    dir,
                    Xfer { offset, len: bs as u32 },
                    &self.bufs,
                    slot,
                );
                issued += 1;
                issued_bytes += bs;
            }
            let inflight = depth - free.len();
            if inflight == 0 {
                finished = !stopping;
                break;
            }
            if let Err(e) = ring.submit_and_wait(1) {
                self.first_error
                    .get_or_insert((self.group.ops[0].op, e.to_string(), e.raw_os_error()));
                self.shared.stop.store(true, Relaxed);
                break;
            }
            let now = if timed { clock::now() } else { 0 };
            let mut failed = None;
            ring.reap(|tag, res| {
                let slot = tag as usize;
                let (i, start) = slots[slot];
                free.push(slot);
                if res < 0 {
                    self.stats[i].errors += 1;
                    failed.get_or_insert((i, -res));
                    return;
                }
                let kind = self.group.ops[i].op;
                if timed {
                    let ns = clock::between_ns(start, now);
                    self.stats[i].record(ns, res as u64, 1);
                    self.live.latency.record(ns);
                } else {
                    self.stats[i].count_only(res as u64, 1);
                }
                self.live.add(kind, res as u64);
                ops_done += 1;
                bytes_done += res as u64;
            });
            if let Some((i, errno)) = failed {
                let kind = self.group.ops[i].op;
                let e = stdio::Error::from_raw_os_error(errno);
                self.first_error
                    .get_or_insert((kind, format!("{kind}: {e}"), Some(errno)));
                if !self.shared.continue_on_error {
                    self.shared.stop.store(true, Relaxed);
                    stopping = true;
                }
            }
            if !quota_left(ops_done, bytes_done) {
                stopping = true;
            }
        }
        self.finish(finished)
    }
}

/// FFSB's transactions: every write call counts; a read counts only when it moved a whole
/// block of `bs` (so a short read at the end of a file is none).
fn transactions(dir: Dir, moved: &Moved, xfers: &[Xfer], bs: u64) -> u64 {
    match dir {
        Dir::Read => {
            let short = xfers
                .iter()
                .take(moved.calls as usize)
                .filter(|x| (x.len as u64) < bs)
                .count() as u64;
            moved.whole_calls.saturating_sub(short)
        }
        Dir::Write => moved.calls,
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

/// An error with the operation and file it happened to, keeping the OS error number.
#[derive(Debug)]
struct Annotated {
    errno: Option<i32>,
    message: String,
}

impl std::fmt::Display for Annotated {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Annotated {}

/// The OS error number of `e`, also through an [`Annotated`] wrapper.
fn errno_of(e: &stdio::Error) -> Option<i32> {
    e.raw_os_error()
        .or_else(|| e.get_ref()?.downcast_ref::<Annotated>()?.errno)
}
