//! What sysbench 1.0.20 prints, line for line: the prepare and cleanup lines, the options block
//! before a run, the `--report-interval` lines, and the final report, whose figures are computed
//! from the engine's result the way sysbench counts them:
//!
//! - events are the reads, the writes and the periodic fsyncs; the fsyncs each thread makes at
//!   its end are counted in `fsyncs/s` but are no events (and not in the latency figures), and
//!   with `--file-fsync-all` every write's fsync is counted in `fsyncs/s` as well;
//! - rates are per second of the total time, which runs to the end of the last thread's end
//!   fsyncs;
//! - MiB = 2^20 bytes; latencies in milliseconds over all events, and in each
//!   `--report-interval` line over the events of that interval.

use super::files::Prepared;
use super::format;
use super::histogram::{self, Slots};
use super::options::{ExtraFlags, IoMode, Options, TestMode};
use fslab_engine::fileset::SetupReport;
use fslab_engine::histogram::OpStats;
use fslab_engine::io::checked::Mismatch;
use fslab_engine::live_latency::SecondHistogram;
use fslab_engine::result::{Cause, FirstError, OpResult, Status, StopReason, ThreadError};
use fslab_engine::run::Progress;
use fslab_engine::workload::OpKind;
use fslab_engine::RunResult;
use serde::Serialize;
use std::fmt::Write;
use std::time::Duration;

const MIB: f64 = 1048576.0;

/// The first line, where sysbench names itself and its Lua.
pub fn banner() -> String {
    format!("fslab {} (sysbench 1.0.20 fileio)\n\n", env!("CARGO_PKG_VERSION"))
}

/// `--file-extra-flags` as sysbench prints them: `(none)`, `sync `, `dsync `, `directio`.
fn extra_flags(f: ExtraFlags) -> String {
    if f == ExtraFlags::default() {
        return "(none)".into();
    }
    let mut s = String::new();
    if f.sync {
        s.push_str("sync ");
    }
    if f.dsync {
        s.push_str("dsync ");
    }
    if f.direct {
        s.push_str("directio");
    }
    s
}

/// What `prepare` prints before it writes: the banner, the sizes in sysbench's Kb and Mb
/// (1024-based, rounded down), and the extra flags.
pub fn prepare_header(o: &Options) -> String {
    format!(
        "{}{} files, {}Kb each, {}Mb total\nCreating files for the test...\nExtra file open flags: {}\n",
        banner(),
        o.file_num,
        o.file_size() / 1024,
        o.file_size() * o.file_num / 1048576,
        extra_flags(o.extra_flags)
    )
}

/// What `prepare` prints once the files are written: one line per file, saying what sysbench
/// would have done to it from its size before (`Creating` from nothing, `Extending` a shorter
/// one, `Reusing` one long enough; [`super::files::prepare`]), then the bytes written and their
/// rate (or `No bytes written.` when the files were already there).
pub fn prepare_footer(o: &Options, prepared: &Prepared) -> String {
    let mut s = String::new();
    let setup = &prepared.setup;
    for (id, &before) in prepared.before.iter().enumerate() {
        let verb = match before {
            0 => "Creating file",
            b if b < o.file_size() => "Extending existing file",
            _ => "Reusing existing file",
        };
        let _ = writeln!(s, "{verb} test_file.{id}");
    }
    if setup.bytes == 0 {
        s.push_str("No bytes written.\n");
    } else {
        let secs = setup.duration.as_secs_f64();
        let _ = writeln!(
            s,
            "{} bytes written in {secs:.2} seconds ({:.2} MiB/sec).",
            setup.bytes,
            setup.bytes as f64 / MIB / secs.max(1e-9)
        );
    }
    s
}

/// What `prepare --json` carries under `classic`.
pub fn prepare_figures(o: &Options, setup: &SetupReport) -> serde_json::Value {
    let secs = setup.duration.as_secs_f64();
    serde_json::json!({
        "command": "prepare",
        "files": o.file_num,
        "file_size": o.file_size_on_disk(),
        "bytes_written": setup.bytes,
        "seconds": secs,
        "mib_per_sec": if setup.bytes == 0 { 0.0 } else { setup.bytes as f64 / MIB / secs.max(1e-9) },
        "reused": setup.reused,
        // A kept set written to: files made or written from their ends.
        "extended": setup.reused && setup.bytes > 0,
    })
}

/// What `cleanup` prints.
pub fn cleanup_text() -> String {
    format!("{}Removing test files...\n", banner())
}

fn mode_text(m: TestMode) -> &'static str {
    match m {
        TestMode::SeqWr => "sequential write (creation)",
        TestMode::SeqRewr => "sequential rewrite",
        TestMode::SeqRd => "sequential read",
        TestMode::RndRd => "random read",
        TestMode::RndWr => "random write",
        TestMode::RndRw => "random r/w",
    }
}

/// The options block sysbench prints before a run, down to `Threads started!`.
pub fn run_header(o: &Options) -> String {
    let mut s = banner();
    s.push_str("Running the test with following options:\n");
    let _ = writeln!(s, "Number of threads: {}", o.threads);
    if o.rate > 0 {
        let _ = writeln!(s, "Target transaction rate: {}/sec", o.rate);
    }
    if o.report_interval > 0 {
        let _ = writeln!(s, "Report intermediate results every {} second(s)", o.report_interval);
    }
    if o.validate {
        s.push_str("Validation checks: on.\n\n");
    }
    if o.rand_seed == 0 {
        s.push_str("Initializing random number generator from current time\n");
    } else {
        let _ = writeln!(s, "Initializing random number generator from seed ({}).", o.rand_seed);
    }
    s.push_str("\n\n");
    let _ = writeln!(s, "Extra file open flags: {}", extra_flags(o.extra_flags));
    let _ = writeln!(s, "{} files, {} each", o.file_num, format::size(o.file_size() as f64));
    let _ = writeln!(
        s,
        "{} total file size",
        format::size((o.file_size() * o.file_num) as f64)
    );
    let _ = writeln!(s, "Block size {}", format::size(o.block_size as f64));
    if o.merged_requests > 0 {
        let _ = writeln!(
            s,
            "Merging requests up to {} for sequential IO.",
            format::size(o.sequential_request() as f64)
        );
    }
    let mode = o.mode();
    if !mode.is_sequential() {
        let _ = writeln!(s, "Number of IO requests: {}", o.events);
        let _ = writeln!(s, "Read/Write ratio for combined random IO test: {:.2}", o.rw_ratio);
    }
    if o.fsync_all {
        s.push_str("Calling fsync() after each write operation.\n");
    } else {
        if o.fsync_freq > 0 {
            let _ = writeln!(
                s,
                "Periodic FSYNC enabled, calling fsync() each {} requests.",
                o.fsync_freq
            );
        }
        if o.fsync_end {
            s.push_str("Calling fsync() at the end of test, Enabled.\n");
        }
    }
    let _ = writeln!(
        s,
        "Using {} I/O mode",
        match o.io_mode {
            IoMode::Sync => "synchronous",
            IoMode::Async => "asynchronous",
            IoMode::Mmap => "fast mmaped",
        }
    );
    if o.validate {
        s.push_str("Using checksums validation.\n");
    }
    let _ = writeln!(s, "Doing {} test", mode_text(mode));
    s.push_str("Initializing worker threads...\n\nThreads started!\n\n");
    s
}

/// What sysbench prints in place of its report when requests fail: the `FATAL:` lines of the
/// first thread's failed request, then those of every other thread whose request failed before
/// it saw the run stop, as each sysbench thread prints its own (`sb_fileio.c`). `--rate`'s full
/// queue is said once, as sysbench's event generator says it (`sysbench.c`).
pub fn fatal(e: &FirstError) -> String {
    let queue_full = |t: &ThreadError| matches!(t.cause, Some(Cause::QueueFull { .. }));
    let others = e.others.iter().filter(|t| !queue_full(t));
    std::iter::once(&e.error).chain(others).map(fatal_one).collect()
}

/// One thread's `FATAL:` lines: for a block that fails `--validate`'s check, its three lines,
/// naming the test file's number and the block's offset; for the full queue, its line; for any
/// other failure, fslab's message.
fn fatal_one(e: &ThreadError) -> String {
    let (file, mismatch) = match &e.cause {
        Some(Cause::QueueFull { .. }) => {
            return "FATAL: The event queue is full. This means the worker threads are unable to keep up with the \
                    specified event generation rate\n"
                .into();
        }
        Some(Cause::Mismatch { file, mismatch }) => (file, mismatch),
        None => return format!("FATAL: {}\n", e.message),
    };
    // The test file's number: test_file.N.
    let Some(file) = file.rsplit_once("test_file.").and_then(|(_, n)| n.parse::<u64>().ok()) else {
        return format!("FATAL: {}\n", e.message);
    };
    let (found, offset) = match *mismatch {
        Mismatch::Checksum {
            offset,
            computed,
            stored,
            ..
        } => (
            format!(
                "FATAL: Checksum mismatch in block with offset: {offset}\nFATAL:     Calculated value: 0x{computed:x}    \
                 Stored value: 0x{stored:x}\n"
            ),
            offset,
        ),
        Mismatch::Offset { offset, stored, .. } => (
            format!("FATAL: Offset mismatch in block:\nFATAL:    Actual offset: {offset}    Stored offset: {stored}\n"),
            offset,
        ),
    };
    format!("{found}FATAL: Validation failed on file {file}, block offset {offset}, exiting...\n")
}

/// The `--report-interval` lines, from the engine's once-a-second samples:
/// `[ 2s ] reads: 1.00 MiB/s writes: 0.67 MiB/s fsyncs: 9.00/s latency (ms,95%): 0.367`, the
/// latency being the `--percentile` of the interval's events, in the steps of sysbench's
/// histogram (its first step, 0.001, when none was timed, as sysbench prints it).
#[derive(Debug, Clone)]
pub struct Intervals {
    every: u64,
    time: u64,
    percentile: u32,
    read: u64,
    written: u64,
    fsyncs: u64,
    latency: SecondHistogram,
    since: Duration,
}

impl Intervals {
    pub fn new(o: &Options) -> Intervals {
        Intervals {
            every: o.report_interval,
            time: o.time,
            percentile: o.percentile,
            read: 0,
            written: 0,
            fsyncs: 0,
            latency: SecondHistogram::default(),
            since: Duration::ZERO,
        }
    }

    /// Takes one second's sample; returns the line to print when an interval is complete. As
    /// sysbench, no line falls on the end of a time-bound run.
    pub fn tick(&mut self, p: &Progress) -> Option<String> {
        if self.every == 0 {
            return None;
        }
        self.read += p.second.bytes_read;
        self.written += p.second.bytes_written;
        self.fsyncs += p
            .second
            .by_op
            .iter()
            .filter(|(k, _)| *k == OpKind::Fsync)
            .map(|(_, n)| n)
            .sum::<u64>();
        self.latency.merge(&p.latency);
        let at = p.elapsed.as_secs_f64().round() as u64;
        if at == 0 || !at.is_multiple_of(self.every) {
            return None;
        }
        let span = (p.elapsed - self.since.min(p.elapsed)).as_secs_f64().max(1e-9);
        let latency_ns = self.latency.percentile_ns(self.percentile as f64).unwrap_or(0);
        let latency_ms = histogram::quantize(latency_ns as f64 / 1e6);
        let line = format!(
            "[ {at}s ] reads: {:.2} MiB/s writes: {:.2} MiB/s fsyncs: {:.2}/s latency (ms,{}%): {:.3}",
            self.read as f64 / MIB / span,
            self.written as f64 / MIB / span,
            self.fsyncs as f64 / span,
            self.percentile,
            latency_ms
        );
        (self.read, self.written, self.fsyncs, self.since) = (0, 0, 0, p.elapsed);
        self.latency = SecondHistogram::default();
        (self.time == 0 || at < self.time).then_some(line)
    }
}

/// What `--verbosity=4` adds after the interval lines: each thread's reason for stopping
/// (sysbench's logger folds the repeats into one line), then `Done.`.
pub fn info_ending(r: &RunResult) -> String {
    let why = match r.stopped_by {
        StopReason::Time => "Time limit exceeded, exiting...\n",
        StopReason::Ops => "Event limit exceeded, exiting...\n",
        _ => "",
    };
    let mut s = why.to_string();
    let threads = r.threads.len();
    if !why.is_empty() && threads > 1 {
        let _ = writeln!(s, "(last message repeated {} times)", threads - 1);
    }
    s.push_str("Done.\n\n");
    s
}

/// sysbench's figures of one run, as `--json` carries them under `classic`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Figures {
    pub reads: u64,
    pub writes: u64,
    /// Periodic and end fsyncs, and with `--file-fsync-all` one per write.
    pub fsyncs: u64,
    /// The fsyncs every thread made at its end (in `fsyncs`, not in `events`).
    pub end_fsyncs: u64,
    pub reads_per_sec: f64,
    pub writes_per_sec: f64,
    pub fsyncs_per_sec: f64,
    pub read_mib_per_sec: f64,
    pub written_mib_per_sec: f64,
    /// Seconds, to the end of the last thread's end fsyncs.
    pub total_time: f64,
    /// Reads, writes and periodic fsyncs.
    pub events: u64,
    pub latency_ms: LatencyMs,
    pub threads_fairness: Fairness,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LatencyMs {
    pub min: f64,
    pub avg: f64,
    pub max: f64,
    /// The percentile asked for (0: none).
    pub percentile: u32,
    pub percentile_value: Option<f64>,
    pub sum: f64,
    /// With `--histogram`: sysbench's non-empty slots, as (value in ms, events).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub histogram: Option<Vec<(f64, u64)>>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fairness {
    pub events_avg: f64,
    pub events_stddev: f64,
    /// Seconds each thread spent in its events: the thread's share of the latency sum.
    pub execution_time_avg: f64,
    pub execution_time_stddev: f64,
}

/// sysbench's figures from the engine's result of the workload compiled from `o`.
pub fn figures(r: &RunResult, o: &Options) -> Figures {
    let count = |kinds: &[OpKind]| -> (u64, u64) {
        r.ops
            .iter()
            .filter(|op| kinds.contains(&op.op))
            .fold((0, 0), |(n, b), op| (n + op.count, b + op.bytes))
    };
    let (reads, read_bytes) = count(&[OpKind::Read, OpKind::SeqRead]);
    let (writes, written_bytes) = count(&[OpKind::Write, OpKind::SeqWrite, OpKind::Rewrite]);
    let (fsync_ops, _) = count(&[OpKind::Fsync]);
    let threads = r.threads.len().max(1) as u64;
    // Each thread fsyncs every file at its end, unless the run failed.
    let end_per_thread = if o.end_fsync() && r.status == Status::Ok {
        o.file_num
    } else {
        0
    };
    let end_fsyncs = (end_per_thread * threads).min(fsync_ops);
    let fsyncs = fsync_ops + if o.fsync_all { writes } else { 0 };
    let events = reads + writes + fsync_ops - end_fsyncs;
    let secs = r.duration.as_secs_f64().max(1e-9);

    // Latency over the timed operations, the events: the engine counts the end fsyncs but does
    // not time them.
    let timed: Vec<(&OpResult, u64)> = r
        .ops
        .iter()
        .map(|op| (op, op.histogram.iter().map(|b| b.1).sum::<u64>()))
        .filter(|&(_, n)| n > 0)
        .collect();
    let n: u64 = timed.iter().map(|t| t.1).sum();
    let sum_us: f64 = timed.iter().map(|(op, k)| *k as f64 * op.latency.mean_us).sum();
    let min_us = timed.iter().map(|t| t.0.latency.min_us).fold(f64::INFINITY, f64::min);
    let max_us = timed.iter().map(|t| t.0.latency.max_us).fold(0.0, f64::max);
    let slots = slots(timed.iter().map(|t| t.0.histogram.as_slice()));
    let latency_ms = LatencyMs {
        min: if n == 0 { 0.0 } else { min_us / 1000.0 },
        avg: if n == 0 { 0.0 } else { sum_us / n as f64 / 1000.0 },
        max: max_us / 1000.0,
        percentile: o.percentile,
        percentile_value: (o.percentile > 0).then(|| slots.percentile_ms(o.percentile)),
        sum: sum_us / 1000.0,
        histogram: o.histogram.then(|| slots.rows()),
    };

    let per_thread: Vec<f64> = r
        .threads
        .iter()
        .map(|t| t.ops.saturating_sub(end_per_thread) as f64)
        .collect();
    let all: f64 = per_thread.iter().sum();
    let busy: Vec<f64> = per_thread
        .iter()
        .map(|e| if all > 0.0 { sum_us / 1e6 * e / all } else { 0.0 })
        .collect();
    let (events_avg, events_stddev) = mean_stddev(&per_thread);
    let (execution_time_avg, execution_time_stddev) = mean_stddev(&busy);
    Figures {
        reads,
        writes,
        fsyncs,
        end_fsyncs,
        reads_per_sec: reads as f64 / secs,
        writes_per_sec: writes as f64 / secs,
        fsyncs_per_sec: fsyncs as f64 / secs,
        read_mib_per_sec: read_bytes as f64 / MIB / secs,
        written_mib_per_sec: written_bytes as f64 / MIB / secs,
        total_time: r.duration.as_secs_f64(),
        events,
        latency_ms,
        threads_fairness: Fairness {
            events_avg,
            events_stddev,
            execution_time_avg,
            execution_time_stddev,
        },
    }
}

/// The events of all these operations' histograms (the engine's buckets) in sysbench's slots.
fn slots<'a>(histograms: impl Iterator<Item = &'a [(u64, u64)]>) -> Slots {
    let mut all = OpStats::default();
    for buckets in histograms {
        all.merge(&OpStats::from_buckets(buckets));
    }
    Slots::from_spans(&all.spans())
}

/// Mean and population standard deviation, as sysbench's fairness figures.
fn mean_stddev(xs: &[f64]) -> (f64, f64) {
    if xs.is_empty() {
        return (0.0, 0.0);
    }
    let mean = xs.iter().sum::<f64>() / xs.len() as f64;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / xs.len() as f64;
    (mean, var.sqrt())
}

/// The final report, from the blank line after the interval lines to the end, with
/// `--histogram`'s histogram before it.
pub fn summary(f: &Figures) -> String {
    let mut s = f
        .latency_ms
        .histogram
        .as_deref()
        .map(histogram::print)
        .unwrap_or_default();
    let _ = write!(
        s,
        "\nFile operations:\n    reads/s:                      {:.2}\n    writes/s:                     {:.2}\n    \
         fsyncs/s:                     {:.2}\n\n",
        f.reads_per_sec, f.writes_per_sec, f.fsyncs_per_sec
    );
    let _ = write!(
        s,
        "Throughput:\n    read, MiB/s:                  {:.2}\n    written, MiB/s:               {:.2}\n\n",
        f.read_mib_per_sec, f.written_mib_per_sec
    );
    let _ = write!(
        s,
        "General statistics:\n    total time:                          {:.4}s\n    \
         total number of events:              {}\n\n",
        f.total_time, f.events
    );
    let l = &f.latency_ms;
    s.push_str("Latency (ms):\n");
    let _ = writeln!(s, "         min:{:>40.2}", l.min);
    let _ = writeln!(s, "         avg:{:>40.2}", l.avg);
    let _ = writeln!(s, "         max:{:>40.2}", l.max);
    match l.percentile_value {
        Some(v) => {
            let _ = writeln!(s, "{:>11}th percentile:{v:>28.2}", l.percentile);
        }
        None => s.push_str("         percentile stats:               disabled\n"),
    }
    let _ = writeln!(s, "         sum:{:>40.2}\n", l.sum);
    let t = &f.threads_fairness;
    let _ = write!(
        s,
        "Threads fairness:\n    events (avg/stddev):           {:.4}/{:.2}\n    \
         execution time (avg/stddev):   {:.4}/{:.2}\n\n",
        t.events_avg, t.events_stddev, t.execution_time_avg, t.execution_time_stddev
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each thread whose request failed says so in its own lines, the first thread's first; a
    /// full queue is said once.
    #[test]
    fn fatal_prints_every_failed_thread_s_lines_and_a_full_queue_once() {
        let thread = |cause: Cause| ThreadError {
            op: OpKind::Read,
            message: "m".into(),
            errno: None,
            cause: Some(cause),
        };
        let mismatch = |file: &str, mismatch| Cause::Mismatch {
            file: format!("sysbench/{file}"),
            mismatch,
        };
        let checksum = Mismatch::Checksum {
            len: 16384,
            offset: 49152,
            computed: 0xab,
            stored: 0xcd,
        };
        let offset = Mismatch::Offset {
            len: 16384,
            offset: 16384,
            stored: 0,
        };
        let e = FirstError {
            error: thread(mismatch("test_file.2", checksum)),
            total_errors: 3,
            others: vec![
                thread(Cause::QueueFull { queue: 10 }),
                thread(mismatch("test_file.0", offset)),
            ],
        };
        assert_eq!(
            fatal(&e),
            "FATAL: Checksum mismatch in block with offset: 49152\n\
             FATAL:     Calculated value: 0xab    Stored value: 0xcd\n\
             FATAL: Validation failed on file 2, block offset 49152, exiting...\n\
             FATAL: Offset mismatch in block:\n\
             FATAL:    Actual offset: 16384    Stored offset: 0\n\
             FATAL: Validation failed on file 0, block offset 16384, exiting...\n"
        );
        let queue = FirstError {
            error: thread(Cause::QueueFull { queue: 10 }),
            total_errors: 2,
            others: vec![thread(Cause::QueueFull { queue: 10 })],
        };
        assert_eq!(fatal(&queue).matches("FATAL: The event queue is full").count(), 1);
    }

    fn rndrw() -> Options {
        Options {
            test_mode: Some(TestMode::RndRw),
            file_num: 4,
            total_size: 64 << 20,
            threads: 2,
            time: 2,
            report_interval: 1,
            ..Options::default()
        }
    }

    #[test]
    fn the_options_block_is_sysbenchs() {
        // Printed by sysbench 1.0.20 for these options (after its banner).
        let want = "\
Running the test with following options:
Number of threads: 2
Report intermediate results every 1 second(s)
Initializing random number generator from current time


Extra file open flags: (none)
4 files, 16MiB each
64MiB total file size
Block size 16KiB
Number of IO requests: 0
Read/Write ratio for combined random IO test: 1.50
Periodic FSYNC enabled, calling fsync() each 100 requests.
Calling fsync() at the end of test, Enabled.
Using synchronous I/O mode
Doing random r/w test
Initializing worker threads...

Threads started!

";
        assert_eq!(run_header(&rndrw()).strip_prefix(&banner()).unwrap(), want);
    }

    #[test]
    fn the_options_block_follows_the_options() {
        let o = Options {
            test_mode: Some(TestMode::SeqWr),
            extra_flags: ExtraFlags {
                sync: true,
                dsync: false,
                direct: true,
            },
            merged_requests: 4,
            fsync_all: true,
            io_mode: IoMode::Mmap,
            rand_seed: 42,
            report_interval: 0,
            ..rndrw()
        };
        let h = run_header(&o);
        assert!(h.contains("\nInitializing random number generator from seed (42).\n"));
        assert!(h.contains("\nExtra file open flags: sync directio\n"));
        assert!(h.contains("\nMerging requests up to 64KiB for sequential IO.\n"));
        assert!(h.contains("\nCalling fsync() after each write operation.\nUsing fast mmaped I/O mode\n"));
        assert!(h.contains("\nDoing sequential write (creation) test\n"));
        assert!(!h.contains("Number of IO requests"));
        assert!(!h.contains("Report intermediate"));
    }

    #[test]
    fn the_summary_has_sysbenchs_columns() {
        let f = Figures {
            reads: 1,
            writes: 1,
            fsyncs: 1,
            end_fsyncs: 0,
            reads_per_sec: 138103.92,
            writes_per_sec: 92069.28,
            fsyncs_per_sec: 9210.72,
            read_mib_per_sec: 2157.87,
            written_mib_per_sec: 1438.58,
            total_time: 2.004,
            events: 480178,
            latency_ms: LatencyMs {
                min: 0.0,
                avg: 0.01,
                max: 8.08,
                percentile: 95,
                percentile_value: Some(0.0),
                sum: 3687.47,
                histogram: None,
            },
            threads_fairness: Fairness {
                events_avg: 240089.0,
                events_stddev: 4334.0,
                execution_time_avg: 1.8437,
                execution_time_stddev: 0.02,
            },
        };
        // Printed by sysbench 1.0.20 for a run with these figures.
        let want = "
File operations:
    reads/s:                      138103.92
    writes/s:                     92069.28
    fsyncs/s:                     9210.72

Throughput:
    read, MiB/s:                  2157.87
    written, MiB/s:               1438.58

General statistics:
    total time:                          2.0040s
    total number of events:              480178

Latency (ms):
         min:                                    0.00
         avg:                                    0.01
         max:                                    8.08
         95th percentile:                        0.00
         sum:                                 3687.47

Threads fairness:
    events (avg/stddev):           240089.0000/4334.00
    execution time (avg/stddev):   1.8437/0.02

";
        assert_eq!(summary(&f), want);
        let off = Figures {
            latency_ms: LatencyMs {
                percentile: 0,
                percentile_value: None,
                ..f.latency_ms.clone()
            },
            ..f.clone()
        };
        assert!(summary(&off).contains("\n         percentile stats:               disabled\n"));
        let hundred = Figures {
            latency_ms: LatencyMs {
                percentile: 100,
                percentile_value: Some(21.11),
                ..f.latency_ms.clone()
            },
            ..f
        };
        assert!(summary(&hundred).contains("\n        100th percentile:                       21.11\n"));
    }

    #[test]
    fn prepare_prints_sysbenchs_sizes() {
        let o = Options {
            file_num: 3,
            total_size: 100 << 20,
            ..Options::default()
        };
        assert!(prepare_header(&o).ends_with(
            "3 files, 34133Kb each, 99Mb total\nCreating files for the test...\nExtra file open flags: (none)\n"
        ));
        let setup = SetupReport {
            fileset: "sysbench".into(),
            files: 3,
            bytes: 67108864,
            reused: false,
            duration: Duration::from_millis(500),
            dirs_added: 0,
        };
        let footer = prepare_footer(
            &o,
            &Prepared {
                setup: setup.clone(),
                before: vec![0; 3],
            },
        );
        assert!(footer.starts_with("Creating file test_file.0\nCreating file test_file.1\n"));
        assert!(footer.ends_with("\n67108864 bytes written in 0.50 seconds (128.00 MiB/sec).\n"));
        let again = prepare_footer(
            &o,
            &Prepared {
                setup: SetupReport {
                    bytes: 0,
                    reused: true,
                    ..setup.clone()
                },
                before: vec![o.file_size(); 3],
            },
        );
        assert!(again.ends_with("Reusing existing file test_file.2\nNo bytes written.\n"));
        // Each file says what was done to it: one made, one extended, one long enough.
        let extended = SetupReport {
            bytes: 1 << 20,
            reused: true,
            ..setup.clone()
        };
        let longer = prepare_footer(
            &o,
            &Prepared {
                setup: extended.clone(),
                before: vec![0, o.file_size() - 1, o.file_size() + 1],
            },
        );
        assert!(longer.starts_with(
            "Creating file test_file.0\nExtending existing file test_file.1\nReusing existing file test_file.2\n\
             1048576 bytes written in 0.50 seconds"
        ));
        let figures = |s: &SetupReport| {
            let f = prepare_figures(&o, s);
            (
                f["reused"].as_bool(),
                f["extended"].as_bool(),
                f["bytes_written"].as_u64(),
            )
        };
        assert_eq!(figures(&setup), (Some(false), Some(false), Some(67108864)));
        assert_eq!(figures(&extended), (Some(true), Some(true), Some(1 << 20)));
    }

    /// The engine's sample of second `t` (of `latencies_ns`, all reads of one 16 KiB block).
    fn sample(t: u64, latencies_ns: &[u64], fsyncs: u64) -> Progress {
        let reads = latencies_ns.len() as u64;
        let latency = SecondHistogram::from_ns(latencies_ns.iter().copied());
        Progress {
            elapsed: Duration::from_secs(t),
            planned: None,
            in_ramp: false,
            ops_per_sec: 0.0,
            bytes_per_sec: 0.0,
            second: fslab_engine::result::Second {
                t: t as f64,
                ramp: false,
                ops: reads + fsyncs,
                bytes_read: reads * 16384,
                bytes_written: 0,
                by_op: vec![(OpKind::Read, reads), (OpKind::Fsync, fsyncs)],
                max_latency_us: None,
                sleeps: 0,
                latency: latency.summary(),
            },
            latency,
        }
    }

    /// An interval line's text before its latency, and the latency (which the engine's buckets
    /// give within 1.6%, and sysbench's slots print within 1.8%).
    fn split(line: Option<String>) -> (String, f64) {
        let line = line.expect("an interval line");
        let (text, ms) = line.rsplit_once(' ').expect("a latency at the end");
        assert_eq!(ms.split_once('.').map(|d| d.1.len()), Some(3), "three decimals: {line}");
        (format!("{text} "), ms.parse().unwrap_or_else(|e| panic!("{line}: {e}")))
    }

    #[test]
    fn interval_lines_print_the_percentile_of_their_events() {
        let o = Options {
            report_interval: 2,
            time: 10,
            percentile: 90,
            ..rndrw()
        };
        let mut i = Intervals::new(&o);
        // Two seconds: 64 reads of 0.5 ms, then 64 of 0.5 ms and 16 of 2 ms; the 90th
        // percentile of the 144 is among the 2 ms ones (the 130th).
        assert_eq!(i.tick(&sample(1, &[500_000; 64], 3)), None);
        let mut second = vec![500_000; 64];
        second.extend([2_000_000; 16]);
        let (text, ms) = split(i.tick(&sample(2, &second, 5)));
        assert_eq!(
            text,
            "[ 2s ] reads: 1.12 MiB/s writes: 0.00 MiB/s fsyncs: 4.00/s latency (ms,90%): "
        );
        assert!((ms - 2.0).abs() <= 0.04, "{ms}");
        // The next interval starts afresh: only 0.5 ms reads.
        assert_eq!(i.tick(&sample(3, &[500_000; 10], 0)), None);
        let (text, ms) = split(i.tick(&sample(4, &[500_000; 10], 0)));
        assert!(text.starts_with("[ 4s ] reads: 0.16 MiB/s "), "{text}");
        assert!((ms - 0.5).abs() <= 0.01, "{ms}");
        // Nothing timed in an interval: sysbench's first slot.
        assert_eq!(i.tick(&sample(5, &[], 0)), None);
        assert_eq!(split(i.tick(&sample(6, &[], 0))).1, 0.001);
        // As sysbench, no line at the end of a time-bound run.
        assert_eq!(i.tick(&sample(9, &[], 0)), None);
        assert_eq!(i.tick(&sample(10, &[500_000], 0)), None);
    }

    #[test]
    fn percentiles_come_from_the_merged_buckets_in_sysbench_s_steps() {
        // Latencies at the middle of sysbench's slots for 1, 2 and 50 µs (its slots are 1.8%
        // wide, the engine's buckets under 1%, so each stays in its slot).
        let [a, b, c] = [0.001, 0.002, 0.05].map(histogram::quantize);
        let mut reads = OpStats::default();
        let mut writes = OpStats::default();
        for _ in 0..90 {
            reads.record((a * 1e6) as u64, 0, 0);
        }
        for _ in 0..5 {
            writes.record((b * 1e6) as u64, 0, 0);
            writes.record((c * 1e6) as u64, 0, 0);
        }
        let (r, w) = (reads.buckets(), writes.buckets());
        let s = slots([r.as_slice(), w.as_slice()].into_iter());
        assert_eq!(s.events(), 100);
        for (p, want) in [(90, a), (95, b), (96, c)] {
            assert!(
                (s.percentile_ms(p) - want).abs() < 1e-9,
                "{p}%: {} ms",
                s.percentile_ms(p)
            );
        }
        assert_eq!(slots(std::iter::empty()).percentile_ms(95), 0.0);
    }

    #[test]
    fn fairness_uses_the_population_stddev() {
        assert_eq!(mean_stddev(&[244423.0, 235755.0]), (240089.0, 4334.0));
    }
}
