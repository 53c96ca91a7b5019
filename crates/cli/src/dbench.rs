//! `fslab dbench [-t TIME] [-D DIR] [-c LOADFILE] [-s] [-S] [-F] [--warmup SECONDS] [--json]
//! [--explain] NPROCS`: dbench 4.0's loadfile replay on fslab's engine, printing what dbench
//! prints (fslab_classic::dbench does the work; this file reads the command line and prints).

use crate::run::engine_failure;
use crate::Failure;
use anyhow::anyhow;
use fslab_classic::dbench::{self, report, Error, Options};
use fslab_engine::run::{Progress, RunOptions};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Number of clients, each replaying the loadfile in its own clients/client<N>.
    #[arg(value_name = "NPROCS")]
    nprocs: u32,
    /// Seconds of the execute phase (after the warm-up).
    #[arg(short = 't', long = "timelimit", value_name = "TIME", default_value_t = 600)]
    time: u64,
    /// Directory to run in.
    #[arg(short = 'D', long = "directory", value_name = "DIR", default_value = ".")]
    dir: PathBuf,
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
    /// Leave the clients' directories in place after the run.
    #[arg(long)]
    skip_cleanup: bool,
    /// Print the result as one JSON document on stdout (dbench's figures under `classic`).
    #[arg(long)]
    json: bool,
    /// Print the workload as fslab will run it (native TOML) and exit.
    #[arg(long)]
    explain: bool,
    /// Check the input as a run would, print nothing and exit (a study checks each workload so
    /// before it formats anything).
    #[arg(long, conflicts_with = "explain")]
    check: bool,
}

impl Args {
    fn options(&self) -> Options {
        Options {
            nprocs: self.nprocs,
            time: self.time,
            warmup: self.warmup,
            dir: self.dir.clone(),
            loadfile: self.loadfile.clone(),
            sync_open: self.sync_open,
            sync_dirs: self.sync_dirs,
            fsync: self.fsync,
            no_resolve: self.no_resolve,
            skip_cleanup: self.skip_cleanup,
        }
    }
}

pub fn main(args: Args) -> Result<ExitCode, Failure> {
    let opts = args.options();
    if !args.explain && !args.check && !args.dir.is_dir() {
        return Err(Failure::Input(anyhow!(
            "-D {}: not a directory (dbench runs in an existing directory)",
            args.dir.display()
        )));
    }
    let workload = dbench::workload(&opts).map_err(|e| match e {
        Error::MissingDefault { .. } => Failure::Environment(e.into()),
        _ => Failure::Input(e.into()),
    })?;
    workload
        .validate()
        .map_err(|e| Failure::Input(anyhow!("{}: {e}", opts.loadfile_path().display())))?;
    if args.check {
        return Ok(ExitCode::SUCCESS);
    }
    if args.explain {
        print!("{}", workload.to_toml());
        return Ok(ExitCode::SUCCESS);
    }
    if !args.json {
        print!("{}", report::header(&opts));
    }
    let mut live = report::Live::new(opts.nprocs, Duration::from_secs(opts.warmup_secs()));
    let mut on_progress = |p: &Progress| {
        let sample = live.tick(p.elapsed, &p.second);
        if !args.json {
            println!("{}", sample.line(opts.nprocs));
        }
    };
    let run_opts = RunOptions {
        dir: args.dir.clone(),
        continue_on_error: false,
        no_latency: false,
        drop_caches: false,
    };
    let mut result = fslab_engine::run(&workload, &run_opts, &mut on_progress).map_err(engine_failure)?;
    result.classic = Some(report::classic(&result, &live, &opts));
    if args.json {
        // The compiled script (a step per loadfile line: 458,344 for client.txt)
        // would make the document tens of MB: it is left out; `script.source` names the loadfile
        // it was compiled from and `classic.script_steps` says how many steps it had.
        for g in &mut result.workload.groups {
            if let Some(s) = &mut g.script {
                s.steps.clear();
            }
        }
        println!(
            "{}",
            serde_json::to_string_pretty(&result).expect("a result always serialises")
        );
    } else {
        print!("{}", report::summary(&result, &live, opts.nprocs));
    }
    Ok(crate::run::exit_code(&result))
}
