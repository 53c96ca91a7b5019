//! `fslab run`: one workload, its summary or its JSON.

use crate::adhoc::AdHoc;
use crate::Failure;
use anyhow::anyhow;
use fslab_engine::confine::ConfineError;
use fslab_engine::fileset::SetupError;
use fslab_engine::result::{RunResult, Status};
use fslab_engine::run::{Progress, RunError, RunOptions};
use fslab_engine::{Span, Workload};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// A native workload file (TOML). Leave it out and use --op for an ad-hoc run.
    workload: Option<PathBuf>,
    /// Directory to run in; everything the workload touches stays beneath it. Without it, fslab
    /// makes a temporary directory and removes it afterwards.
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Print the result as one JSON document on stdout.
    #[arg(long)]
    json: bool,
    /// Print the workload as fslab will run it (native TOML) and exit.
    #[arg(long)]
    explain: bool,
    /// Check the input as a run would, print nothing and exit (a study checks each workload so
    /// before it formats anything).
    #[arg(long, conflicts_with = "explain")]
    check: bool,
    /// Measured time, replacing the workload's stop.time.
    #[arg(long)]
    time: Option<Span>,
    /// Warm-up left out of the statistics, replacing the workload's stop.ramp.
    #[arg(long)]
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
    /// After the untimed setup, sync and drop the page cache, dentries and inodes (root only),
    /// so that the measured phase starts with a cold cache.
    #[arg(long)]
    drop_caches: bool,
    #[command(flatten)]
    adhoc: AdHoc,
}

pub fn main(args: RunArgs) -> Result<ExitCode, Failure> {
    let mut workload = match (&args.workload, args.adhoc.op) {
        (Some(path), None) => Workload::from_file(path).map_err(|e| Failure::Input(e.into()))?,
        (None, Some(op)) => args.adhoc.workload(op, args.time),
        (Some(_), Some(_)) => return Err(Failure::Input(anyhow!("give a workload file or --op, not both"))),
        (None, None) => {
            return Err(Failure::Input(anyhow!(
                "give a workload file, or --op for an ad-hoc run (see fslab run --help)"
            )))
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
    workload
        .validate()
        .map_err(|e| Failure::Input(anyhow!("{}: {e}", workload.name)))?;
    if args.check {
        return Ok(ExitCode::SUCCESS);
    }
    if args.explain {
        print!("{}", workload.to_toml());
        return Ok(ExitCode::SUCCESS);
    }

    let temp;
    let dir = match &args.dir {
        Some(d) => d.clone(),
        None => {
            // Removed, with everything in it, when the run ends.
            temp = tempfile::Builder::new()
                .prefix("fslab-run-")
                .tempdir()
                .map_err(|e| Failure::Environment(anyhow!("cannot make a temporary directory: {e}")))?;
            temp.path().to_path_buf()
        }
    };
    let show_progress = !args.json && std::io::stdout().is_terminal() && std::io::stderr().is_terminal();
    let bar = show_progress.then(|| progress_bar(&workload));
    let mut on_progress = |p: &Progress| {
        if let Some(bar) = &bar {
            bar.set_position(p.elapsed.as_secs());
            bar.set_message(format!(
                "{}{:.1} MiB/s, {:.0} ops/s",
                if p.in_ramp { "ramp: " } else { "" },
                p.bytes_per_sec / 1048576.0,
                p.ops_per_sec
            ));
        }
    };
    let opts = RunOptions {
        dir,
        continue_on_error: args.continue_on_error,
        no_latency: args.no_latency,
        drop_caches: args.drop_caches,
    };
    let result = fslab_engine::run(&workload, &opts, &mut on_progress);
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let result = result.map_err(engine_failure)?;
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&result).expect("a result always serialises")
        );
    } else {
        print!("{}", fslab_report::summary::run_summary(&result));
    }
    Ok(exit_code(&result))
}

fn progress_bar(w: &Workload) -> ProgressBar {
    let total = w.stop.time.map(|t| (t.0 + w.stop.ramp.0).as_secs());
    let bar = match total {
        Some(t) => ProgressBar::new(t).with_style(
            ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len}s, {eta} left  {msg}")
                .expect("template")
                .progress_chars("=> "),
        ),
        None => ProgressBar::new_spinner()
            .with_style(ProgressStyle::with_template("{elapsed_precise} {spinner} {msg}").expect("template")),
    };
    bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
    bar
}

/// The exit code of a finished run: 1, naming the first error and the count on stderr, when an
/// operation failed; 0 otherwise.
pub fn exit_code(result: &RunResult) -> ExitCode {
    if result.status != Status::Failed {
        return ExitCode::SUCCESS;
    }
    if let Some(e) = &result.first_error {
        eprintln!(
            "fslab: the run failed: {} error(s); the first: {}",
            e.total_errors, e.message
        );
    }
    ExitCode::from(1)
}

/// What an engine error means for the exit code: bad input (2) or a failed run (1).
pub fn engine_failure(e: RunError) -> Failure {
    match e {
        RunError::Invalid(_) | RunError::Confine(ConfineError::Escapes { .. } | ConfineError::RunDir { .. }) => {
            Failure::Input(e.into())
        }
        RunError::Setup(
            SetupError::Foreign { .. }
            | SetupError::Confine(ConfineError::Escapes { .. } | ConfineError::RunDir { .. }),
        ) => Failure::Input(e.into()),
        RunError::Confine(_) | RunError::Setup(_) => Failure::Run(e.into()),
        RunError::DropCaches(_) => Failure::Environment(e.into()),
    }
}
