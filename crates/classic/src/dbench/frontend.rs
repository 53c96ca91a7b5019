//! `fslab dbench [-t TIME] [-D DIR] [-c LOADFILE] [-s] [-S] [-F] [--warmup SECONDS] NPROCS`:
//! dbench's command line, and dbench on the front-end contract.

use super::{report, Error as DbenchError, Options};
use crate::contract::{
    self, option_words, Call, Common, Context, Error, FrontEnd, Outcome, Phase, Plan, Request, Style, Tool,
};
use fslab_engine::{Metric, RunOptions, Workload};
use std::path::PathBuf;
use std::time::Duration;

/// dbench's options, as `fslab dbench` takes them.
#[derive(Debug, clap::Parser)]
#[command(name = "fslab dbench")]
pub struct Args {
    /// Number of clients, each replaying the loadfile in its own clients/client<N>.
    #[arg(value_name = "NPROCS")]
    nprocs: u32,
    /// Seconds of the execute phase (after the warm-up).
    #[arg(short = 't', long = "timelimit", value_name = "TIME", default_value_t = 600)]
    time: u64,
    /// Directory to run in, as dbench names it (--dir says the same) [default: the current
    /// directory].
    #[arg(short = 'D', long = "directory", value_name = "DIR", conflicts_with = "dir")]
    directory: Option<PathBuf>,
    /// The loadfile [default: /usr/share/dbench/client.txt].
    #[arg(short = 'c', long = "loadfile", value_name = "LOADFILE")]
    loadfile: Option<PathBuf>,
    /// Open files with O_SYNC.
    #[arg(short = 's', long = "sync")]
    sync_open: bool,
    /// fsync the directory after unlink, rmdir and rename.
    #[arg(short = 'S', long = "sync-dir")]
    sync_dirs: bool,
    /// fsync after every write.
    #[arg(short = 'F', long = "fsync")]
    fsync: bool,
    /// Seconds of warm-up, left out of the figures [default: TIME / 5].
    #[arg(long, value_name = "SECONDS")]
    warmup: Option<u64>,
    /// Name look-ups without their case-insensitive read of the directory when the stat fails
    /// (the stat before each operation on a path stays, as in dbench).
    #[arg(long)]
    no_resolve: bool,
    /// Skip dbench's cleanup at the end of the run (which unlinks the clients' files and keeps
    /// their directories), leaving everything in place.
    #[arg(long)]
    skip_cleanup: bool,
    #[command(flatten)]
    pub common: Common,
}

/// dbench with its loadfile read and compiled.
pub struct Dbench {
    opts: Options,
    workload: Workload,
}

/// Reads `fslab dbench`'s command line.
pub fn parse(args: &[String]) -> Result<(Box<dyn FrontEnd>, Common), Error> {
    frontend(contract::parse_clap(Tool::Dbench, args)?)
}

/// dbench for these arguments: the loadfile read and compiled.
pub fn frontend(mut args: Args) -> Result<(Box<dyn FrontEnd>, Common), Error> {
    // `-D` or `--dir`, resolved once when it leads through a symlink (and said on stderr).
    args.common.resolve_dir();
    let dir = match args.directory.take() {
        Some(d) => {
            let (real, note) = contract::real_dir("-D", &d);
            args.common.dir_note = note;
            Some(real)
        }
        None => args.common.dir.clone(),
    };
    let opts = Options {
        nprocs: args.nprocs,
        time: args.time,
        warmup: args.warmup,
        dir: dir.unwrap_or_else(|| PathBuf::from(".")),
        loadfile: args.loadfile,
        sync_open: args.sync_open,
        sync_dirs: args.sync_dirs,
        fsync: args.fsync,
        no_resolve: args.no_resolve,
        skip_cleanup: args.skip_cleanup,
    };
    let workload = super::workload(&opts).map_err(|e| match e {
        DbenchError::MissingDefault { .. } => Error::environment(e),
        _ => Error::input(e),
    })?;
    Ok((Box::new(Dbench { opts, workload }), args.common))
}

/// A study's dbench workload: `clients` is NPROCS, `time` is `-t`, `loadfile` is `-c`, other
/// one-letter options are `-k value` and longer ones `--key value`.
pub fn calls(r: &Request) -> Vec<Call> {
    let mut args = vec!["dbench".to_string()];
    args.extend(r.measured());
    let options = r.options_in_seconds();
    for (k, v) in &options {
        let k = match k.as_str() {
            "clients" => continue,
            "time" => "t",
            "loadfile" => "c",
            k => k,
        };
        args.extend(option_words(k, v, Style::Short));
    }
    args.extend(r.args.iter().cloned());
    let clients = options
        .iter()
        .find(|(k, _)| k == "clients")
        .map_or("1", |(_, v)| v.as_str());
    args.push(clients.to_string());
    vec![Call::measured(args)]
}

impl FrontEnd for Dbench {
    fn tool(&self) -> Tool {
        Tool::Dbench
    }

    fn plan(&self) -> Plan<'_> {
        Plan {
            tool: Tool::Dbench,
            phases: vec![Phase::Run {
                name: "run".to_string(),
                workload: &self.workload,
            }],
        }
    }

    fn explain(&self) -> String {
        format!("{}{}", super::DIFFERENCES, self.workload.to_toml())
    }

    fn execute(&mut self, ctx: &mut Context) -> Result<Outcome, Error> {
        let opts = &self.opts;
        if !opts.dir.is_dir() {
            return Err(Error::input(format!(
                "-D {}: not a directory (dbench runs in an existing directory)",
                opts.dir.display()
            )));
        }
        ctx.print(&report::header(opts));
        let mut live = report::Live::new(
            opts.nprocs,
            Duration::from_secs(opts.warmup_secs()),
            Duration::from_secs(opts.time),
        );
        let run_opts = RunOptions {
            dir: opts.dir.clone(),
            drop_caches: ctx.drop_caches,
            interrupt: ctx.interrupt(),
            ..RunOptions::default()
        };
        let job = ctx.job();
        let mut result = crate::job::run(&job, &self.workload, run_opts, &mut |p| {
            if let Some(sample) = live.tick(p.elapsed, &p.second) {
                ctx.print(&format!("{}\n", sample.line(opts.nprocs)));
            }
            ctx.progress("run", p);
        })?;
        // A job of several ranks reports dbench's figures for all its clients: the per-second
        // view again from the job's merged seconds (the lines printed while it ran were this
        // rank's), with every rank's clients counted.
        let job_opts;
        let (live, opts) = if ctx.ranks.size() > 1 {
            job_opts = super::Options {
                nprocs: opts.nprocs * ctx.ranks.size() as u32,
                ..opts.clone()
            };
            let mut job = report::Live::new(
                job_opts.nprocs,
                Duration::from_secs(opts.warmup_secs()),
                Duration::from_secs(opts.time),
            );
            for second in &result.series {
                job.tick(Duration::from_secs_f64(second.t), second);
            }
            (job, &job_opts)
        } else {
            (live, opts)
        };
        ctx.print(&report::summary(&result, &live, opts));
        let figures = report::figures(&result, &live, opts);
        // The compiled script (a step per loadfile line: 458,344 for client.txt) would make the
        // document tens of MB: it is left out; the figures name the loadfile and how many steps
        // it had.
        for g in &mut result.workload.groups {
            if let Some(s) = &mut g.script {
                s.steps.clear();
            }
        }
        let mut outcome = Outcome::new(Tool::Dbench);
        outcome.push("run", result);
        outcome.set_metrics(vec![
            Metric::new("Throughput", figures.throughput_mb_per_sec.unwrap_or(0.0), "MB/sec"),
            Metric::new("mean MB/sec", figures.mean_mb_per_sec, "MB/sec"),
            Metric::new("max latency", figures.max_latency_ms, "ms").lower_is_better(),
        ]);
        outcome.figures = Some(serde_json::to_value(&figures).expect("figures serialise"));
        outcome.report = ctx.take_text();
        Ok(outcome)
    }
}
