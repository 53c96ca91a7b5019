//! `fslab run`: fslab's own workloads on the front-end contract, from a native TOML file or from
//! fio-like flags (`--op randread --bs 4k --size 1g --threads 4`), which compile here to a
//! Workload of one fileset and one group.

use crate::contract::{
    self, option_words, Call, Common, Context, Error, FrontEnd, Outcome, Phase, Plan, Request, Style, Tool,
};
use fslab_engine::workload::{
    AioOpts, EngineKind, Fileset, Group, OpKind, OpSpec, Scope, SizeDist, Stop, Taskrun, UringOpts,
};
use fslab_engine::{Bytes, RunOptions, Span, Workload};
use std::path::PathBuf;

/// `fslab run`'s options.
#[derive(Debug, clap::Parser)]
#[command(name = "fslab run")]
pub struct Args {
    /// A native workload file (TOML), or the name of one of fslab's examples (`fslab examples`
    /// writes them out). Leave it out and use --op for an ad-hoc run.
    pub workload: Option<PathBuf>,
    /// Measured time, replacing the workload's stop.time (fio's runtime; a bare number is
    /// seconds). fslab runs for it whatever the size, as fio does with time_based.
    #[arg(long, visible_alias = "runtime")]
    time: Option<Span>,
    /// Accepted for fio's sake: fslab's --time (--runtime) is always time-based.
    #[arg(long = "time_based", hide_short_help = true)]
    time_based: bool,
    /// Warm-up left out of the statistics, replacing the workload's stop.ramp (fio's ramp_time).
    #[arg(long, visible_alias = "ramp_time")]
    ramp: Option<Span>,
    /// Seed of every random choice, replacing the workload's.
    #[arg(long)]
    seed: Option<u64>,
    /// Count errors and go on instead of stopping at the first.
    #[arg(long)]
    continue_on_error: bool,
    /// Do not time operations (no latency figures): only for measuring what timing costs.
    #[arg(long)]
    no_latency: bool,
    /// fio's directory: --dir (dbench has a --directory of its own, so this is run's alone).
    #[arg(long, value_name = "DIR", conflicts_with = "dir")]
    directory: Option<PathBuf>,
    #[command(flatten)]
    adhoc: AdHoc,
    #[command(flatten)]
    pub common: Common,
}

/// fio's `rw` patterns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Pattern {
    Read,
    Write,
    Randread,
    Randwrite,
    Randrw,
}

/// The fio-like flags of an ad-hoc run.
#[derive(Debug, Clone, clap::Args)]
pub struct AdHoc {
    /// Access pattern, as fio's rw= (instead of a workload file).
    #[arg(long, value_enum, visible_aliases = ["rw", "readwrite"])]
    pub op: Option<Pattern>,
    /// The job's name, as fio's name=: the group's, and with --numjobs its files'.
    #[arg(long)]
    pub name: Option<String>,
    /// Block size of each read()/write().
    #[arg(long, default_value = "4k")]
    pub bs: Bytes,
    /// Size of each file.
    #[arg(long, default_value = "1g")]
    pub size: Bytes,
    /// Number of files the threads share.
    #[arg(long, default_value_t = 1)]
    pub nrfiles: u64,
    /// Worker threads, sharing the fileset.
    #[arg(long, default_value_t = 1, conflicts_with = "numjobs")]
    pub threads: u32,
    /// fio's numjobs: worker threads, each on a file of its own named as fio names it
    /// (NAME.JOB.0 in --dir), unless --filename names one they share.
    #[arg(long)]
    pub numjobs: Option<u32>,
    /// Make each thread a process of its own, forked once the files are laid out, as fio's jobs
    /// are unless given --thread (fslab's threads are fio's --thread).
    #[arg(long)]
    pub processes: bool,
    /// fio's filename: the one file, in --dir, that every thread works on.
    #[arg(long)]
    pub filename: Option<String>,
    /// I/O backend (fio's ioengine: psync, sync, pvsync and vsync are sync; libaio is Linux
    /// native AIO; posixaio runs as io_uring).
    #[arg(long, value_enum, default_value = "sync", visible_alias = "ioengine")]
    pub engine: Engine,
    /// Transfers in flight per thread (io_uring, libaio).
    #[arg(long, default_value_t = 1)]
    pub iodepth: u32,
    /// O_DIRECT (also fio's --direct=1; --direct=0 is buffered).
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "1", value_parser = zero_or_one)]
    pub direct: Option<bool>,
    /// io_uring: register the files with the ring (fio's registerfiles).
    #[arg(long)]
    pub registerfiles: bool,
    /// io_uring: register the buffers with the ring (fio's fixedbufs); when not given, they are
    /// unless transfers are marked async.
    #[arg(long)]
    pub fixedbufs: Option<bool>,
    /// io_uring: when the kernel runs completion task work (defer: SINGLE_ISSUER and
    /// DEFER_TASKRUN, as fio; coop: COOP_TASKRUN; signal: neither).
    #[arg(long, value_enum, default_value = "defer")]
    pub taskrun: TaskrunArg,
    /// io_uring: IOSQE_ASYNC on every transfer, straight to io-wq workers (fio's force_async=1);
    /// when not given, when the file cannot do non-blocking reads (tmpfs), as the kernel punts
    /// those anyway, unless there are 2 processors (but not 3) per thread.
    #[arg(long, visible_aliases = ["force_async"])]
    pub force_async: Option<bool>,
    /// io_uring: the most io-wq workers for regular files, per thread (0: the kernel's limit).
    #[arg(long, default_value_t = 0)]
    pub iowq_workers: u32,
    /// io_uring and libaio: transfers submitted together (fio's iodepth_batch_submit; 0: all
    /// that fit); when not given, 1, except on io_uring where transfers are async: all that fit.
    #[arg(long, visible_aliases = ["iodepth_batch_submit", "iodepth_batch"])]
    pub iodepth_batch_submit: Option<u32>,
    /// io_uring and libaio: completions waited for in one call (fio's
    /// iodepth_batch_complete_min).
    #[arg(long, default_value_t = 1, visible_aliases = ["iodepth_batch_complete_min", "iodepth_batch_complete"])]
    pub iodepth_batch_complete_min: u32,
    /// libaio: the most completions reaped in one call (fio's iodepth_batch_complete_max); when
    /// not given, --iodepth_batch_complete_min. io_uring reaps all it finds without a call.
    #[arg(long, visible_aliases = ["iodepth_batch_complete_max"])]
    pub iodepth_batch_complete_max: Option<u32>,
    /// io_uring: how long a wait for completions keeps checking for them before it sleeps
    /// (e.g. 20us; 0s sleeps at once); when not given, 50us yielding on a file a device
    /// completes (without --hipri), and on tmpfs 20us when there are 2 processors or more per
    /// thread, else 50us yielding from iodepth 2 on.
    #[arg(long)]
    pub spin: Option<Span>,
    /// io_uring: whether a spinning wait yields the processor between its checks
    /// (sched_yield), to the device's worker or whatever else is ready to run there; when not
    /// given, it does unless the thread has a processor of its own beside its io-wq worker.
    #[arg(long)]
    pub spin_yield: Option<bool>,
    /// io_uring: a kernel thread polls the submission queue (fio's sqthread_poll).
    #[arg(long, visible_aliases = ["sqthread_poll"])]
    pub sqthread_poll: bool,
    /// io_uring: polled completions, with --direct on a device that polls (fio's hipri).
    #[arg(long)]
    pub hipri: bool,
    /// Random patterns: draw each offset on its own (fio's norandommap). Without it each thread
    /// visits every block of its file once before any comes again, as fio's random map does
    /// (the workload's `shuffle`).
    #[arg(long)]
    pub norandommap: bool,
    /// Percentage of reads for randrw.
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(0..=100))]
    pub rwmixread: u32,
    /// fio's fsync: each thread fsyncs its file(s) after every N writes (0: never). With
    /// randrw, fslab counts reads too, as sysbench's --file-fsync-freq does.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub fsync: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TaskrunArg {
    Signal,
    Coop,
    Defer,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Engine {
    #[value(aliases = ["psync", "pvsync", "vsync", "pvsync2"])]
    Sync,
    #[value(name = "io_uring")]
    IoUring,
    Mmap,
    /// Linux native AIO (io_submit, io_getevents), fio's libaio.
    Libaio,
    /// fio's posixaio: run as io_uring.
    #[value(hide = true)]
    Posixaio,
}

/// fio's booleans: 0 or 1 (and true or false).
fn zero_or_one(v: &str) -> Result<bool, String> {
    match v {
        "1" | "true" => Ok(true),
        "0" | "false" => Ok(false),
        _ => Err(format!("`{}` is not 0 or 1", fslab_engine::input::excerpt(v))),
    }
}

/// A native workload, read or compiled from the flags, with the run's settings.
pub struct Native {
    workload: Workload,
    continue_on_error: bool,
    no_latency: bool,
    notes: Vec<String>,
}

/// Reads `fslab run`'s command line.
pub fn parse(args: &[String]) -> Result<(Box<dyn FrontEnd>, Common), Error> {
    frontend(contract::parse_clap(Tool::Run, args)?)
}

/// The workload these arguments name or describe, with their overrides.
pub fn frontend(mut args: Args) -> Result<(Box<dyn FrontEnd>, Common), Error> {
    if let Some(d) = args.directory.take() {
        args.common.dir = Some(d);
    }
    args.common.resolve_dir();
    let mut workload = match (&args.workload, args.adhoc.op) {
        (Some(path), None) => Workload::from_file(path).map_err(Error::input)?,
        (None, Some(_)) if args.adhoc.size.0 == 0 => {
            return Err(Error::input(
                "--size 0: each file needs at least one byte (e.g. --size 4k)",
            ))
        }
        (None, Some(_)) if args.adhoc.nrfiles == 0 => {
            return Err(Error::input("--nrfiles 0: the threads need at least one file"))
        }
        (None, Some(_))
            if args.adhoc.numjobs.unwrap_or(1) > 1 && args.adhoc.nrfiles > 1 && args.adhoc.filename.is_none() =>
        {
            return Err(Error::input(
                "--numjobs with --nrfiles: fslab gives each job one file (name one they share with --filename)",
            ))
        }
        (None, Some(_))
            if args
                .adhoc
                .filename
                .as_deref()
                .is_some_and(|f| f.is_empty() || f.contains('/')) =>
        {
            return Err(Error::input(
                "--filename: a file name in --dir (no `/`); the directory is --dir (or --directory)",
            ))
        }
        (None, Some(op)) => args.adhoc.workload(op, args.time),
        (Some(_), Some(_)) => return Err(Error::input("give a workload file or --op, not both")),
        (None, None) => {
            return Err(Error::input(
                "give a workload file, or --op for an ad-hoc run (see fslab run --help)",
            ))
        }
    };
    if let Some(t) = args.time {
        workload.stop.time = Some(t);
    }
    if let Some(r) = args.ramp {
        workload.stop.ramp = r;
    }
    if args.seed.is_some() {
        workload.seed = args.seed;
    }
    let mut notes = Vec::new();
    if args.adhoc.op.is_some() && args.adhoc.engine == Engine::Posixaio {
        notes.push("--ioengine posixaio: fslab runs it as io_uring, with --iodepth transfers in flight".into());
    }
    if args.adhoc.op.is_some()
        && matches!(args.adhoc.engine, Engine::IoUring | Engine::Posixaio)
        && args.adhoc.iodepth_batch_complete_max.is_some()
    {
        notes.push(
            "--iodepth_batch_complete_max: fslab's io_uring reaps every completion it finds, without a system call"
                .into(),
        );
    }
    if args.adhoc.op == Some(Pattern::Randrw) && args.adhoc.fsync > 0 {
        notes.push(format!(
            "--fsync {} with randrw: fslab fsyncs after every {0} reads and writes; fio counts only the writes",
            args.adhoc.fsync
        ));
    }
    let native = Native {
        workload,
        continue_on_error: args.continue_on_error,
        no_latency: args.no_latency,
        notes,
    };
    Ok((Box::new(native), args.common))
}

/// A study's native workload: the file (or the flags alone), then its options as `--key value`.
pub fn calls(r: &Request) -> Vec<Call> {
    let mut args = vec!["run".to_string()];
    args.extend(r.main.map(|m| m.display().to_string()));
    args.extend(r.measured());
    for (k, v) in r.options {
        args.extend(option_words(k, v, Style::Long));
    }
    args.extend(r.args.iter().cloned());
    vec![Call::measured(args)]
}

impl FrontEnd for Native {
    fn tool(&self) -> Tool {
        Tool::Run
    }

    fn plan(&self) -> Plan<'_> {
        Plan {
            tool: Tool::Run,
            phases: vec![Phase::Run {
                name: "run".into(),
                workload: &self.workload,
            }],
        }
    }

    fn explain(&self) -> String {
        self.workload.to_toml()
    }

    fn notes(&self) -> Vec<String> {
        self.notes.clone()
    }

    fn execute(&mut self, ctx: &mut Context) -> Result<Outcome, Error> {
        // Without --dir: a temporary directory, removed with everything in it when the run ends.
        let temp;
        let dir = match &ctx.dir {
            Some(d) => d.clone(),
            None => {
                temp = tempfile::Builder::new()
                    .prefix("fslab-run-")
                    .tempdir()
                    .map_err(|e| Error::environment(format!("cannot make a temporary directory: {e}")))?;
                temp.path().to_path_buf()
            }
        };
        let opts = RunOptions {
            dir,
            continue_on_error: self.continue_on_error,
            no_latency: self.no_latency,
            drop_caches: ctx.drop_caches,
            interrupt: ctx.interrupt(),
            layout: ctx.layout.clone(),
            ..RunOptions::default()
        };
        let job = ctx.job();
        let result = crate::job::run(&job, &self.workload, opts, &mut |p| ctx.progress("run", p))?;
        // A workload that moves no data (metadata: creates, stats, deletes) leads with ops/s.
        let mut metrics = result.metrics();
        if result.totals.bytes_read + result.totals.bytes_written == 0 {
            metrics.swap(0, 1);
        }
        let mut outcome = Outcome::new(Tool::Run);
        outcome.push("run", result);
        outcome.set_metrics(metrics);
        Ok(outcome)
    }
}

impl AdHoc {
    /// The io_uring and libaio settings the flags give. The batch flags go to the engine that
    /// runs; with another engine every flag stays in its table, for validation to refuse.
    fn queue_settings(&self, engine: EngineKind) -> (UringOpts, AioOpts) {
        let (mut uring, mut aio) = (self.uring(), self.aio());
        match engine {
            EngineKind::Libaio => (uring.batch_submit, uring.batch_complete) = (None, 1),
            // io_uring reaps without a call (see the note in `parse`).
            EngineKind::IoUring => aio = AioOpts::default(),
            _ => {
                aio = AioOpts {
                    reap_max: self.iodepth_batch_complete_max,
                    ..AioOpts::default()
                }
            }
        }
        (uring, aio)
    }

    /// The libaio settings the batch flags give.
    fn aio(&self) -> AioOpts {
        AioOpts {
            batch_submit: self.iodepth_batch_submit.unwrap_or(1),
            batch_complete: self.iodepth_batch_complete_min,
            reap_max: self.iodepth_batch_complete_max,
            submit_latency: false,
        }
    }

    /// The io_uring settings these flags give (the defaults unless some flag was given).
    fn uring(&self) -> UringOpts {
        UringOpts {
            registerfiles: self.registerfiles,
            fixedbufs: self.fixedbufs,
            taskrun: match self.taskrun {
                TaskrunArg::Signal => Taskrun::Signal,
                TaskrunArg::Coop => Taskrun::Coop,
                TaskrunArg::Defer => Taskrun::Defer,
            },
            force_async: self.force_async,
            iowq_workers: self.iowq_workers,
            batch_submit: self.iodepth_batch_submit,
            batch_complete: self.iodepth_batch_complete_min,
            spin: self.spin,
            spin_yield: self.spin_yield,
            sqpoll: self.sqthread_poll,
            hipri: self.hipri,
        }
    }

    /// The workload these flags describe. Without a time limit, each thread moves `size` bytes
    /// (random patterns) or runs through its file once (sequential ones), as fio does.
    pub fn workload(&self, op: Pattern, time: Option<Span>) -> Workload {
        let bs = self.bs;
        let one = |kind: OpKind, weight: u32| {
            let mut o = OpSpec::new(kind);
            o.weight = weight;
            o.bs = Some(bs);
            if kind.is_stream() {
                o.scope = Some(Scope::Own);
                o.wrap = time.map(|_| true);
            } else {
                o.size = Some(bs);
                o.shuffle = (!self.norandommap).then_some(true);
            }
            o
        };
        let ops = match op {
            Pattern::Read => vec![one(OpKind::SeqRead, 1)],
            Pattern::Write => vec![one(OpKind::SeqWrite, 1)],
            Pattern::Randread => vec![one(OpKind::Read, 1)],
            Pattern::Randwrite => vec![one(OpKind::Write, 1)],
            Pattern::Randrw => [
                one(OpKind::Read, self.rwmixread),
                one(OpKind::Write, 100 - self.rwmixread),
            ]
            .into_iter()
            .filter(|o| o.weight > 0)
            .collect(),
        };
        let random = matches!(op, Pattern::Randread | Pattern::Randwrite | Pattern::Randrw);
        let engine = match self.engine {
            Engine::Sync => EngineKind::Sync,
            Engine::IoUring | Engine::Posixaio => EngineKind::IoUring,
            Engine::Libaio => EngineKind::Libaio,
            Engine::Mmap => EngineKind::Mmap,
        };
        let name = self.name.clone().unwrap_or_else(|| format!("{op:?}").to_lowercase());
        // fio's files: with --filename, that one file, shared; with --numjobs, one per job,
        // named JOB.N.0 as fio names them; else fslab's fileset the threads share.
        let threads = self.numjobs.unwrap_or(self.threads);
        let names: Vec<String> = match (&self.filename, self.numjobs) {
            (Some(f), _) => vec![f.clone()],
            (None, Some(jobs)) => (0..jobs).map(|j| format!("{name}.{j}.0")).collect(),
            (None, None) => Vec::new(),
        };
        let own_files = self.numjobs.is_some() && self.filename.is_none();
        let ops: Vec<OpSpec> = ops
            .into_iter()
            .map(|mut o| {
                if own_files {
                    o.scope = Some(Scope::Own);
                }
                o
            })
            .collect();
        let mut fileset = Fileset {
            files: if names.is_empty() {
                self.nrfiles
            } else {
                names.len() as u64
            },
            dirs: 0,
            size: SizeDist::Fixed(self.size),
            prealloc: op != Pattern::Write,
            reuse: true,
            ..Fileset::new("adhoc")
        };
        if !names.is_empty() {
            fileset.dir = Some(".".into());
            fileset.names = names;
        }
        let files = fileset.files;
        let (uring, aio) = self.queue_settings(engine);
        Workload {
            description: format!("ad-hoc: {name}, bs {bs}, {files} file(s) of {}", self.size),
            stop: Stop {
                time,
                bytes: (time.is_none() && random).then(|| Bytes(self.size.0.saturating_mul(threads as u64))),
                ..Stop::default()
            },
            filesets: vec![fileset],
            groups: vec![Group {
                threads,
                engine,
                iodepth: self.iodepth,
                uring,
                aio,
                direct: self.direct.unwrap_or(false),
                // The engine's periodic fsync counts reads and writes: for the write patterns,
                // fio's count of writes.
                fsync_every: Some(self.fsync).filter(|n| *n > 0),
                ops,
                ..Group::new(&name, "adhoc")
            }],
            processes: self.processes,
            ..Workload::new(&name)
        }
    }
}
