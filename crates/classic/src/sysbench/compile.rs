//! sysbench's options as an engine workload: one fileset `test_file.0..N-1` and one group of
//! `--threads` threads doing the test mode's requests.
//!
//! - Sequential modes (seqwr, seqrewr, seqrd) share ONE cursor over the files in order, one
//!   request (block × `--file-merged-requests`) per event, starting again at file 0 after the
//!   last: sysbench 1.0.20 wraps around until the time or the events are used up.
//! - Every request lands in the first `--file-total-size ÷ --file-num` bytes of its file (the
//!   engine's `extent`), which need not be a whole number of blocks: sysbench's prepare writes
//!   whole blocks past it, and seqwr writes each file to it.
//! - Sequential requests walk each file to that size, the last one cut short there.
//! - Random modes read or write one block at an offset drawn over the files laid end to end,
//!   aligned to the block there, and cut short at the end of its file, as sysbench draws it
//!   (`file_get_rand_req()`): in every file but the first such an offset is off the block
//!   boundaries unless the file size is a whole number of blocks. rndrw picks by ratio: a read
//!   while (reads+1)/(writes+1) < `--file-rw-ratio`.
//! - All threads draw their events from one generator (`shared_requests`), as sysbench's do
//!   under its lock: `--events` is one budget, each event taken by the next free thread; the
//!   fsync bursts count every thread's requests; rndrw's ratio is the threads' reads and writes
//!   together.
//! - fsyncs: every `--file-fsync-freq` requests, when a write dirtied the files, every file is
//!   fsynced, each an event taken by the next thread that asks (a burst, cut short when
//!   `--events` runs out mid-way); each thread
//!   fsyncs every file at its end (`--file-fsync-end`; no events, not in the latency figures);
//!   `--file-fsync-all` fsyncs after each write instead of both. All of them call fdatasync()
//!   instead with `--file-fsync-mode=fdatasync`. The read modes never fsync.

use super::options::{IoMode, Options, TestMode};
use fslab_engine::workload::{
    AioOpts, Arrivals, Data, EngineKind, Fileset, Group, OSync, OpKind, OpSpec, OpenMode, Pick, Rate, Scope,
    SetupCalls, SizeDist, Stop,
};
use fslab_engine::{Bytes, Span, Workload};
use std::time::Duration;

/// The fileset's name.
pub const FILESET: &str = "sysbench";

/// The files: `<dir>/test_file.N`, in `--dir` itself as sysbench makes them in its current
/// directory, each of the size sysbench's prepare writes. seqwr starts from empty files
/// (sysbench deletes and recreates them); the other modes keep the prepared ones. They are
/// written with sysbench's calls: `--file-block-size` zero blocks (checked blocks with
/// `--validate`), one file at a time, each fsynced, mode 0600 ([`SetupCalls::SysbenchPrepare`]).
pub fn fileset(o: &Options) -> Fileset {
    let fresh = o.test_mode == Some(TestMode::SeqWr);
    Fileset {
        dir: Some(".".into()),
        prefix: "test_file.".into(),
        files: o.file_num,
        dirs: 0,
        // seqwr writes each file to sysbench's file size; prepare writes whole blocks.
        size: SizeDist::Fixed(Bytes(if fresh { o.file_size() } else { o.file_size_on_disk() })),
        prealloc: !fresh,
        reuse: !fresh,
        setup_bs: Some(Bytes(o.block_size)),
        data: data(o),
        setup_calls: SetupCalls::SysbenchPrepare {
            direct: o.extra_flags.direct,
            osync: osync(o),
        },
        ..Fileset::new(FILESET)
    }
}

/// The events sysbench's queue holds (`MAX_QUEUE_LEN`): more waiting stops the run.
const SYSBENCH_QUEUE: u64 = 131_072;

/// What sysbench writes: its buffer as it was allocated, zeroed; with `--validate`, each block
/// filled with random bytes, their CRC-32 and its offset (`file_fill_buffer`).
fn data(o: &Options) -> Data {
    if o.validate {
        Data::Checked
    } else {
        Data::Zeros
    }
}

/// `--file-extra-flags`' sync or dsync.
fn osync(o: &Options) -> OSync {
    if o.extra_flags.sync {
        OSync::Sync
    } else if o.extra_flags.dsync {
        OSync::Dsync
    } else {
        OSync::None
    }
}

/// The workload `run` runs (for `prepare` and `cleanup`, the one a `run` with the same options
/// would run).
pub fn workload(o: &Options) -> Workload {
    let mode = o.mode();
    let mut group = Group {
        threads: o.threads,
        fsync_every: o.periodic_fsync().then_some(o.fsync_freq),
        // sysbench's one generator under its lock: one budget of events, one count of
        // requests for the fsync bursts, one read/write ratio, for all threads.
        shared_requests: true,
        fsync_end: o.end_fsync(),
        fsync_kind: o.fsync_mode,
        engine: match o.io_mode {
            IoMode::Sync => EngineKind::Sync,
            IoMode::Async => EngineKind::Libaio,
            IoMode::Mmap => EngineKind::Mmap,
        },
        // sysbench's backlog: each event one io_submit(), an io_getevents() once it is full.
        iodepth: if o.io_mode == IoMode::Async { o.async_backlog } else { 1 },
        // sysbench reaps what has completed of its whole backlog once it is full, and times an
        // event's call (and that wait), not its request's completion.
        aio: if o.io_mode == IoMode::Async {
            AioOpts {
                reap_max: Some(o.async_backlog),
                submit_latency: true,
                ..AioOpts::default()
            }
        } else {
            AioOpts::default()
        },
        // sysbench's event generator: exponential gaps at the rate, for all threads, each
        // event's latency counted from its arrival.
        rate: (o.rate > 0).then_some(Rate {
            ops: Some(o.rate),
            bytes: None,
            arrivals: Arrivals::Poisson,
            queue: Some(SYSBENCH_QUEUE),
        }),
        direct: o.extra_flags.direct,
        osync: osync(o),
        // sb_open() opens every test file O_RDWR, in the read modes too, once before the
        // threads start (file_prepare()), and they all use those descriptors.
        rdwr: true,
        open: OpenMode::Shared,
        data: data(o),
        ..Group::new("fileio", FILESET)
    };
    let block = Bytes(o.block_size);
    // Every request lands in the first `--file-total-size ÷ --file-num` bytes of a file, the
    // files taken as laid end to end, as sysbench 1.0.20 places them.
    let extent = Some(Bytes(o.file_size()));
    // A sequential write with --file-fsync-all syncs its file after every request.
    let stream = |op: OpKind| OpSpec {
        bs: Some(Bytes(o.sequential_request())),
        extent,
        scope: Some(Scope::Shared),
        wrap: Some(true),
        sync: (op.writes() && o.fsync_all).then_some(o.fsync_mode),
        sync_each: (op.writes() && o.fsync_all).then_some(true),
        ..OpSpec::new(op)
    };
    let random = |op, weight| OpSpec {
        weight,
        size: Some(block),
        bs: Some(block),
        align: Some(block),
        extent,
        sync: (op == OpKind::Write && o.fsync_all).then_some(o.fsync_mode),
        ..OpSpec::new(op)
    };
    group.ops = match mode {
        TestMode::SeqWr => vec![stream(OpKind::SeqWrite)],
        TestMode::SeqRewr => vec![stream(OpKind::Rewrite)],
        TestMode::SeqRd => vec![stream(OpKind::SeqRead)],
        TestMode::RndRd => vec![random(OpKind::Read, 1)],
        TestMode::RndWr => vec![random(OpKind::Write, 1)],
        TestMode::RndRw => {
            let (reads, writes) = ratio_weights(o.rw_ratio);
            group.pick = Pick::Ratio;
            vec![random(OpKind::Read, reads), random(OpKind::Write, writes)]
        }
    };
    let mut w = Workload::new(&format!("sysbench-fileio-{}", mode.name()));
    w.description = format!(
        "sysbench 1.0.20 fileio --file-test-mode={} --file-num={} --file-total-size={} --file-block-size={} --threads={}",
        mode.name(),
        o.file_num,
        Bytes(o.total_size),
        Bytes(o.block_size),
        o.threads
    );
    w.seed = (o.rand_seed > 0).then_some(o.rand_seed);
    w.stop = Stop {
        time: (o.time > 0).then(|| Span(Duration::from_secs(o.time))),
        ops: (o.events > 0).then_some(o.events),
        ..Stop::default()
    };
    w.filesets = vec![fileset(o)];
    w.groups = vec![group];
    w
}

/// `--file-rw-ratio` as the integer weights of the engine's ratio pick: `1.5` → (3, 2), to a
/// thousandth, so that the engine reads while (reads+1)/(writes+1) < ratio, as sysbench does.
pub fn ratio_weights(ratio: f64) -> (u32, u32) {
    let reads = (ratio * 1000.0).round() as u64;
    let writes = 1000u64;
    let d = gcd(reads, writes).max(1);
    ((reads / d) as u32, (writes / d) as u32)
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fslab_engine::workload::SyncKind;

    fn opts(mode: TestMode) -> Options {
        Options {
            test_mode: Some(mode),
            file_num: 4,
            total_size: 64 << 20,
            ..Options::default()
        }
    }

    #[test]
    fn ratios_become_small_integer_weights() {
        assert_eq!(ratio_weights(1.5), (3, 2));
        assert_eq!(ratio_weights(2.0), (2, 1));
        assert_eq!(ratio_weights(1.0), (1, 1));
        assert_eq!(ratio_weights(0.333), (333, 1000));
        assert_eq!(ratio_weights(0.0), (0, 1));
    }

    #[test]
    fn every_mode_compiles_to_a_valid_workload() {
        for mode in TestMode::ALL {
            let w = workload(&opts(mode));
            w.validate().unwrap_or_else(|e| panic!("{}: {e}", mode.name()));
            let fs = &w.filesets[0];
            assert_eq!((fs.prefix.as_str(), fs.files, fs.dirs), ("test_file.", 4, 0));
            assert!(fs.in_run_dir(), "sysbench's files lie in --dir itself");
            assert_eq!(fs.size, SizeDist::Fixed(Bytes(16 << 20)));
            assert_eq!(fs.prealloc, mode != TestMode::SeqWr);
            let g = &w.groups[0];
            assert_eq!(g.fsync_end, mode.writes(), "{}", mode.name());
            assert_eq!(g.fsync_every, mode.writes().then_some(100), "{}", mode.name());
        }
    }

    #[test]
    fn sequential_modes_share_one_wrapping_cursor() {
        let o = Options {
            merged_requests: 4,
            ..opts(TestMode::SeqRewr)
        };
        let op = &workload(&o).groups[0].ops[0];
        assert_eq!(op.op, OpKind::Rewrite);
        assert_eq!(
            (op.scope, op.wrap, op.bs),
            (Some(Scope::Shared), Some(true), Some(Bytes(65536)))
        );
    }

    #[test]
    fn fsync_options_map_to_the_engine() {
        let o = Options {
            fsync_all: true,
            fsync_mode: SyncKind::Fdatasync,
            ..opts(TestMode::RndRw)
        };
        let g = &workload(&o).groups[0];
        assert_eq!((g.fsync_every, g.fsync_end, g.pick), (None, false, Pick::Ratio));
        assert_eq!(g.fsync_kind, SyncKind::Fdatasync);
        assert_eq!(g.ops[0].sync, None);
        assert_eq!(g.ops[1].sync, Some(SyncKind::Fdatasync));
        // The bursts and the end fsyncs follow --file-fsync-mode too.
        let o = Options {
            fsync_mode: SyncKind::Fdatasync,
            ..opts(TestMode::RndWr)
        };
        let g = &workload(&o).groups[0];
        assert_eq!(
            (g.fsync_every, g.fsync_end, g.fsync_kind),
            (Some(100), true, SyncKind::Fdatasync)
        );
        assert_eq!(workload(&opts(TestMode::RndWr)).groups[0].fsync_kind, SyncKind::Fsync);
        // A sequential write syncs after every request, with fsync() or fdatasync(), as
        // sysbench's file_execute_event() does; its files are opened without O_SYNC.
        for (mode, kind) in [
            (TestMode::SeqWr, SyncKind::Fsync),
            (TestMode::SeqRewr, SyncKind::Fdatasync),
        ] {
            let o = Options {
                fsync_all: true,
                fsync_mode: kind,
                ..opts(mode)
            };
            let g = &workload(&o).groups[0];
            assert_eq!(
                (g.ops[0].sync, g.ops[0].sync_each, g.osync),
                (Some(kind), Some(true), OSync::None)
            );
        }
        let o = Options {
            io_mode: IoMode::Async,
            ..opts(TestMode::RndWr)
        };
        let g = &workload(&o).groups[0];
        assert_eq!(
            (g.engine, g.iodepth, g.fsync_every),
            (EngineKind::Libaio, 128, Some(100))
        );
    }

    #[test]
    fn async_keeps_its_backlog_in_every_mode_on_libaio() {
        for mode in [TestMode::RndRd, TestMode::RndRw, TestMode::SeqRd, TestMode::SeqWr] {
            for freq in [0, 100] {
                let o = Options {
                    io_mode: IoMode::Async,
                    fsync_freq: freq,
                    async_backlog: 16,
                    ..opts(mode)
                };
                let g = &workload(&o).groups[0];
                assert_eq!((g.engine, g.iodepth), (EngineKind::Libaio, 16), "{}", mode.name());
            }
        }
    }

    #[test]
    fn time_and_events_both_stop_the_run() {
        let o = Options {
            time: 5,
            events: 1000,
            ..opts(TestMode::RndRd)
        };
        let w = workload(&o);
        assert_eq!(w.stop.time, Some(Span(Duration::from_secs(5))));
        assert_eq!(w.stop.ops, Some(1000));
    }
}
