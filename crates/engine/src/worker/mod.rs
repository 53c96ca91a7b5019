//! One worker thread: runs its group's operations against the group's filesets until the run
//! stops, recording what each did into its own statistics.
//!
//! A thread runs one of four loops: `mix.rs` picks operations from the group's weighted mix one
//! at a time, `replay.rs` replays the group's script, `pipelined.rs` keeps many single-block
//! operations in flight on io_uring, and `child_end.rs` runs an IOzone child (the mix, or its
//! own stream alone without choosing, then the child's end). Each asks the same `Guard`
//! (`guard.rs`) whether the run goes on and whether the ramp has ended, and counts into the same
//! `Tally` (`tally.rs`). The operations themselves are in `ops.rs`, `stream.rs` and `fsync.rs`.

mod child_end;
mod deck;
mod error;
mod fd_cache;
mod fsync;
mod gate;
mod guard;
mod mix;
mod ops;
mod pipelined;
mod replay;
pub(crate) mod requests;
mod stream;
mod tally;

use crate::calls::{self, CallTimes};
use crate::clock;
use crate::fileset::FileTable;
use crate::histogram::OpStats;
use crate::io::{self, Backend, IoBuffers, SharedFile, Xfer};
use crate::workload::{ChildEnd, EngineKind, Group, OpKind, OpenMode};
use error::errno_of;
use fd_cache::FdCache;
use fsync::Burst;
use guard::Guard;
use mix::Mix;
use rand::rngs::SmallRng;
use rand::SeedableRng;
use requests::Requests;
use rustix::fs::OFlags;
use std::io as stdio;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::time::{Duration, Instant};
use stream::Streams;
use tally::{Slot, Tally};

use crate::result::ThreadError;
pub(crate) use gate::Gate;
pub(crate) use tally::LiveCounters;

/// State every thread of a run shares.
pub(crate) struct Shared {
    pub stop: AtomicBool,
    /// The caller's interruption, checked before every operation when no monitor checks it (a
    /// run on the calling thread, [`RunOptions::one_process`](crate::RunOptions::one_process)).
    pub interrupt: Option<std::sync::Arc<AtomicBool>>,
    /// Set when the ramp is over: threads then reset their statistics and start counting.
    pub measuring: AtomicBool,
    pub stonewall: bool,
    /// How each thread ends, as an IOzone child (`stop.child_end`).
    pub child_end: Option<ChildEnd>,
    pub continue_on_error: bool,
    /// Time every operation into the histograms (off only to measure what timing costs).
    pub latency: bool,
    /// Read the process's CPU time at each thread's start and end
    /// ([`RunOptions::process_cpu`](crate::RunOptions::process_cpu)).
    pub process_cpu: bool,
    /// stop.util: the fraction at which the filesystem of the first fileset is full enough.
    /// Workers check it themselves every few operations, since a fast writer overshoots any
    /// check the monitor makes ten times a second.
    pub util: Option<f64>,
    /// A worker saw the filesystem reach `util`.
    pub util_reached: AtomicBool,
    /// Where the threads and the monitor wait so that they start together.
    pub start: Gate,
}

/// What one thread is asked to do.
pub(crate) struct ThreadPlan {
    /// Its number among all the run's workers, in group order.
    pub worker: u64,
    pub thread_on_fileset: u64,
    pub seed: u64,
    pub ops_quota: Option<u64>,
    pub bytes_quota: Option<u64>,
    /// With the group's `shared_requests`: the group's share of `stop.ops`, which its threads
    /// claim an event at a time (their own `ops_quota` is then none).
    pub group_ops: Option<u64>,
}

/// What one thread did, handed back when it ends.
pub(crate) struct ThreadOutcome {
    /// Statistics per entry of the group's mix, counted since the ramp ended.
    pub stats: Vec<OpStats>,
    /// fsyncs of sysbench's periodic bursts and of the end of the run.
    pub fsyncs: OpStats,
    /// Statistics per label of the group's script.
    pub steps: Vec<OpStats>,
    pub first_error: Option<ThreadError>,
    pub ended: Instant,
    /// The thread ran out of work on its own (streams ended or its quota was met).
    pub finished: bool,
    /// With `stop.child_end`: when the thread itself started (after the start line) and when it
    /// took its figures; its time runs between the two instead of from the run's start to
    /// `ended`.
    pub started: Option<Instant>,
    pub counted_end: Option<Instant>,
    /// With [`Shared::process_cpu`]: the CPU time the process used from this thread's start to
    /// its end (or to `counted_end`).
    pub process_cpu: Option<Duration>,
    /// With the group's `call_latency`: its system calls, timed one by one.
    pub calls: Option<CallTimes>,
}

impl ThreadOutcome {
    /// A worker of group `g` that did nothing and ended on `message` (it could not start, or its
    /// process died).
    pub fn failed(g: &Group, message: String, errno: Option<i32>) -> ThreadOutcome {
        ThreadOutcome {
            stats: g.ops.iter().map(|_| OpStats::default()).collect(),
            fsyncs: OpStats::default(),
            steps: Vec::new(),
            first_error: Some(ThreadError::new(
                g.ops.first().map_or(OpKind::OpenClose, |o| o.op),
                message,
                errno,
            )),
            calls: None,
            ended: Instant::now(),
            finished: false,
            started: None,
            counted_end: None,
            process_cpu: None,
        }
    }
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

impl Outcome {
    /// A metadata operation done: no bytes, one transaction.
    const META: Outcome = Outcome::Done {
        bytes: 0,
        transactions: 1,
    };
}

/// Whether a loop goes on after an operation, or stops because it failed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Flow {
    Go,
    Stop,
}

pub(crate) struct Worker<'a> {
    group: &'a Group,
    shared: &'a Shared,
    /// The fileset of the current operation: one of `tables`, picked per operation.
    table: &'a FileTable,
    tables: Vec<&'a FileTable>,
    /// With `open = "shared"`: the run's descriptor of each file of the group's fileset and,
    /// for the mmap engine, its mapping.
    opened: &'a [SharedFile],
    cur: usize,
    /// The thread's number among the threads of the groups on its filesets
    /// ([`Workload::thread_on_fileset`](crate::Workload::thread_on_fileset)): its own file is
    /// this modulo the files.
    thread_on_fileset: u64,
    rng: SmallRng,
    /// The shuffled offsets of the mix's entries that take `shuffle`.
    decks: deck::Decks,
    /// The run's stop, the end of its ramp and this thread's quotas.
    guard: Guard<'a>,
    /// What this thread counted.
    tally: Tally<'a>,
    io: Io,
    mix: Mix,
    streams: Streams<'a>,
    /// sysbench's periodic fsync (`fsync_every`).
    burst: Burst,
    /// The group's one request generator, with `shared_requests`.
    requests: Option<Requests<'a>>,
    /// This thread's base directory, for script groups.
    base: Option<crate::script::ScriptBase>,
    /// The process's CPU time as this thread started, with [`Shared::process_cpu`].
    cpu_start: Option<Duration>,
    /// With `rate.arrivals = "poisson"`: when the group's next operation arrives (nanoseconds
    /// on the run's clock, [`clock::origin_ns`]; 0 before the first), shared by its threads.
    arrivals: Option<&'a AtomicU64>,
    /// How long the current operation waited for this thread after it arrived: part of its
    /// latency.
    queued_ns: u64,
}

/// How a thread moves data: its backend and buffers, the transfers of the current operation,
/// the files it keeps open and the flags it opens files with.
struct Io {
    backend: Box<dyn Backend>,
    bufs: IoBuffers,
    /// The transfers of the current operation.
    xfers: Vec<Xfer>,
    /// Where the current read or write's runs start among `xfers` (lent to each operation and
    /// given back, so that no operation allocates).
    run_starts: Vec<usize>,
    cache: FdCache,
    /// Flags of every open: no symlink followed, and the group's O_DIRECT and O_SYNC.
    base_flags: OFlags,
    /// `base_flags` with the access the group's operations need, for the files kept open.
    keep_flags: OFlags,
    /// The backend's transfers complete after it returns (libaio's), and its
    /// [`Tags`](crate::io::Tags) say when an operation is done.
    deferred: bool,
    /// Whether a block can be one call on the kept descriptor ([`io::whole_block`]), without
    /// the backend and its batch of transfers, as an IOzone child's bare stream makes them
    /// (`run_bare_stream`): `Some(seek)` when the backend is the sync one (`pread()`/`pwrite()`)
    /// or, with `seek`, the seek one (`read()`/`write()`), files stay open, blocks are not
    /// checked and calls are not timed one by one.
    whole_blocks: Option<bool>,
}

impl Io {
    /// The I/O of the run's worker number `worker`.
    fn new(group: &Group, seed: u64, worker: u64) -> stdio::Result<Io> {
        let mut backend = io::backend(group)?;
        let deferred = backend.tags().is_some();
        let max_bs = group.ops.iter().map(|o| o.block_size()).max().unwrap_or(4096) as usize;
        let slots = if group.engine == EngineKind::IoUring {
            group.iodepth as usize
        } else {
            1
        };
        let base_flags = base_flags(group);
        let bufs = IoBuffers::with_data(max_bs, slots, group.data.for_worker(worker, max_bs as u64), seed);
        let plain = group.open == OpenMode::Keep && !bufs.checked() && !group.call_latency;
        let whole_blocks = match group.engine {
            EngineKind::Sync if plain => Some(false),
            EngineKind::Seek if plain => Some(true),
            _ => None,
        };
        Ok(Io {
            backend,
            bufs,
            xfers: Vec::with_capacity(256),
            run_starts: Vec::with_capacity(64),
            cache: FdCache::new(),
            base_flags,
            keep_flags: keep_flags(group),
            deferred,
            whole_blocks,
        })
    }
}

/// Flags of every open a group makes: no symlink followed, and its O_DIRECT and O_SYNC.
fn base_flags(group: &Group) -> OFlags {
    let mut flags = OFlags::CLOEXEC | OFlags::NOFOLLOW;
    if group.direct {
        flags |= OFlags::DIRECT;
    }
    flags | crate::io::osync_flags(group.osync)
}

/// The flags a group opens the files it keeps open with: [`base_flags`] and the access its
/// operations need.
pub(crate) fn keep_flags(group: &Group) -> OFlags {
    let writes = group.ops.iter().any(|o| o.op.writes() || o.op == OpKind::Truncate);
    base_flags(group)
        | if writes || group.rdwr {
            OFlags::RDWR
        } else {
            OFlags::RDONLY
        }
}

/// The files a group's threads work on: the tables of its filesets and, with `open =
/// "shared"`, the files the run opened (and mapped) for them all, file `id` at `opened[id]`.
#[derive(Clone)]
pub(crate) struct GroupFiles<'a> {
    pub tables: Vec<&'a FileTable>,
    pub opened: &'a [SharedFile],
}

impl<'a> Worker<'a> {
    pub fn new(
        group: &'a Group,
        files: GroupFiles<'a>,
        base: Option<crate::script::ScriptBase>,
        shared: &'a Shared,
        live: &'a LiveCounters,
        cursors: &'a [AtomicU64],
        plan: ThreadPlan,
    ) -> stdio::Result<Worker<'a>> {
        let io = Io::new(group, plan.seed, plan.worker)?;
        // The mix's cursors, the group's next arrival, then its request generator.
        let (cursors, rest) = cursors.split_at(group.ops.len());
        let (arrival, generator) = rest.split_at(1);
        let poisson = group
            .rate
            .is_some_and(|r| r.arrivals == crate::workload::Arrivals::Poisson);
        Ok(Worker {
            group,
            shared,
            table: files.tables[0],
            tables: files.tables,
            opened: files.opened,
            cur: 0,
            thread_on_fileset: plan.thread_on_fileset,
            rng: SmallRng::seed_from_u64(plan.seed),
            decks: deck::Decks::default(),
            guard: Guard::new(shared, plan.ops_quota, plan.bytes_quota),
            tally: Tally::new(group, live),
            io,
            mix: Mix::new(group),
            streams: Streams::new(group, cursors),
            burst: Burst::default(),
            requests: group
                .shared_requests
                .then(|| Requests::new(generator, group.ops.len(), plan.group_ops)),
            base,
            cpu_start: None,
            arrivals: arrival.first().filter(|_| poisson),
            queued_ns: 0,
        })
    }

    /// Runs until the run stops or this thread runs out of work.
    pub fn run(self) -> ThreadOutcome {
        let mut outcome = self.run_loop();
        outcome.calls = calls::finish();
        outcome
    }

    /// The thread's loop, from its start line to its end.
    fn run_loop(mut self) -> ThreadOutcome {
        // How the thread ends as an IOzone child: its group's way, else the run's.
        let child_end = self.shared.child_end.map(|end| self.group.child_end.unwrap_or(end));
        let mut prepared = self.prepare_streams();
        if let (Ok(()), Some(end)) = (&prepared, child_end) {
            prepared = self.open_own_file(end);
        }
        if !self.shared.start.wait() {
            // The run could not start all its threads: it does not start at all.
            return self.finish(false);
        }
        if self.shared.process_cpu {
            self.cpu_start = Some(crate::cpu::process_cpu_time());
        }
        if self.group.call_latency {
            calls::start();
        }
        if let Err(e) = prepared {
            return self.fail(OpKind::SeqWrite, e.to_string(), errno_of(&e));
        }
        if let Some(end) = child_end {
            if self.group.script.is_none() && !self.pipelined() {
                return self.run_child(end, Instant::now());
            }
        }
        if self.group.script.is_some() {
            return self.run_script();
        }
        if self.pipelined() {
            return self.run_pipelined();
        }
        self.run_mix()
    }

    /// Records what an operation did; says whether the thread must stop, and the bytes moved.
    fn account(&mut self, slot: Slot, kind: OpKind, t0: Option<u64>, result: stdio::Result<Outcome>) -> (Flow, u64) {
        let stats = match slot {
            Slot::Mix(i) => &mut self.tally.stats[i],
            Slot::Fsync => &mut self.tally.fsyncs,
            Slot::Step(l) => &mut self.tally.steps[l],
        };
        // The wait for a thread of the operation that arrived (Poisson arrivals), taken here
        // whatever the outcome, so that it never falls to the next operation.
        let queued = std::mem::take(&mut self.queued_ns);
        let (flow, bytes) = match result {
            Ok(Outcome::Done { bytes, transactions }) => {
                match t0 {
                    Some(t0) => {
                        let ns = clock::since_ns(t0) + queued;
                        stats.record(ns, bytes, transactions);
                        self.tally.live.latency.record(ns);
                    }
                    None => stats.count_only(bytes, transactions),
                }
                self.tally.live.add(kind, bytes);
                (Flow::Go, bytes)
            }
            Ok(Outcome::Skipped) | Ok(Outcome::StreamEnded) => {
                stats.skipped += 1;
                (Flow::Go, 0)
            }
            Err(e) => {
                stats.errors += 1;
                if self.tally.first_error.is_none() {
                    self.tally.first_error = Some(ThreadError::of(kind, &e));
                }
                if self.shared.continue_on_error {
                    (Flow::Go, 0)
                } else {
                    self.guard.stop_all();
                    (Flow::Stop, 0)
                }
            }
        };
        self.guard.count(1, bytes);
        (flow, bytes)
    }

    /// Ends a thread that cannot start its loop: records why and stops the run.
    fn fail(mut self, kind: OpKind, message: String, errno: Option<i32>) -> ThreadOutcome {
        self.tally.first_error = Some(ThreadError::new(kind, message, errno));
        self.guard.stop_all();
        self.finish(false)
    }

    fn finish(mut self, finished: bool) -> ThreadOutcome {
        // Transfers still in flight (libaio's) end inside the thread's time, and a failure
        // among them is the thread's error, as sysbench waits for its requests when it ends.
        if let Err(e) = self.io.backend.drain() {
            let kind = self.group.ops.first().map_or(OpKind::Read, |o| o.op);
            self.tally.first_error.get_or_insert_with(|| ThreadError::of(kind, &e));
            self.guard.stop_all();
        }
        self.settle_reaped();
        if finished && self.shared.stonewall {
            self.guard.stop_all();
        }
        let process_cpu = self.cpu_used();
        ThreadOutcome {
            stats: self.tally.stats,
            fsyncs: self.tally.fsyncs,
            steps: self.tally.steps,
            first_error: self.tally.first_error,
            calls: None,
            process_cpu,
            ended: Instant::now(),
            finished,
            started: None,
            counted_end: None,
        }
    }

    /// The process's CPU time since this thread started, when it is read.
    fn cpu_used(&self) -> Option<Duration> {
        self.cpu_start
            .map(|start| crate::cpu::process_cpu_time().saturating_sub(start))
    }
}
