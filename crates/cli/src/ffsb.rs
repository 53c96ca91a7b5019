//! `fslab ffsb`: run an FFSB profile (6.0 or 5.x grammar) and print what FFSB prints.

use crate::Failure;
use anyhow::anyhow;
use fslab_classic::ffsb::{self, ExecError, Options, Phase};
use fslab_engine::{Progress, RunError};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The FFSB profile, in FFSB 6.0's or 5.x's grammar (detected).
    profile: PathBuf,
    /// Seconds of benchmark, as in FFSB 5.x's `ffsb PROFILE [TIME]`.
    #[arg(value_name = "TIME")]
    time_arg: Option<u64>,
    /// Seconds of benchmark, replacing the profile's time (0: only build the filesets).
    #[arg(long, value_name = "SECONDS")]
    time: Option<u64>,
    /// Run here instead of the profile's locations: the only filesystem goes to DIR, several go
    /// to DIR/fs0, DIR/fs1...
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Print the result as one JSON document on stdout (FFSB's figures under `classic`).
    #[arg(long)]
    json: bool,
    /// Print the workload as fslab will run it (native TOML) and exit.
    #[arg(long)]
    explain: bool,
    /// Check the input as a run would, print nothing and exit (a study checks each workload so
    /// before it formats anything).
    #[arg(long, conflicts_with = "explain")]
    check: bool,
    /// Seed of every random choice.
    #[arg(long)]
    seed: Option<u64>,
    /// Threads of every threadgroup, replacing each one's num_threads.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    threads: Option<u32>,
    /// Size of every file (4k, 256m, 1g), replacing each filesystem's min_filesize,
    /// max_filesize and size_weight: scales a profile to a small machine without editing it.
    #[arg(long, value_name = "SIZE")]
    filesize: Option<fslab_engine::Bytes>,
    /// After the filesets are built, sync and drop the page cache, dentries and inodes (root
    /// only), so that the benchmark starts with a cold cache.
    #[arg(long)]
    drop_caches: bool,
}

pub fn main(args: Args) -> Result<ExitCode, Failure> {
    if args.time.is_some() && args.time_arg.is_some() {
        return Err(Failure::Input(anyhow!("give the time once: as TIME or as --time")));
    }
    let profile = ffsb::load(&args.profile).map_err(|e| Failure::Input(e.into()))?;
    let opts = Options {
        time: args.time.or(args.time_arg),
        dir: args.dir.clone(),
        seed: args.seed,
        threads: args.threads,
        filesize: args.filesize.map(|b| b.0),
        drop_caches: args.drop_caches,
    };
    let plan = ffsb::compile(&profile, &opts).map_err(|e| Failure::Input(e.into()))?;
    for w in &plan.warnings {
        eprintln!("fslab: warning: {}: {w}", profile.file);
    }
    if args.check {
        return Ok(ExitCode::SUCCESS);
    }
    if args.explain {
        print!("{}", ffsb::explain(&plan));
        return Ok(ExitCode::SUCCESS);
    }
    ffsb::preflight(&plan).map_err(exec_failure)?;

    let show_progress = !args.json && std::io::stdout().is_terminal() && std::io::stderr().is_terminal();
    let bar = show_progress.then(|| {
        let bar = ProgressBar::new_spinner()
            .with_style(ProgressStyle::with_template("{elapsed_precise} {spinner} {msg}").expect("template"));
        bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
        bar
    });
    let time = plan.time;
    let mut on_progress = |phase: Phase, p: &Progress| {
        if let Some(bar) = &bar {
            let rate = format!("{:.1} MiB/s, {:.0} ops/s", p.bytes_per_sec / 1048576.0, p.ops_per_sec);
            bar.set_message(match phase {
                Phase::Aging(k) => format!("aging filesystem {k}: {rate}"),
                Phase::Benchmark => format!("{}s of {time}s: {rate}", p.elapsed.as_secs()),
            });
            bar.tick();
        }
    };
    let outcome = ffsb::execute(&plan, &mut on_progress);
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let outcome = outcome.map_err(exec_failure)?;
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&ffsb::json(&plan, &outcome)).expect("JSON serialises")
        );
    } else {
        print!("{}", ffsb::render(&plan, &outcome));
    }
    Ok(outcome.result.as_ref().map_or(ExitCode::SUCCESS, crate::run::exit_code))
}

/// What a failure to run means for the exit code.
fn exec_failure(e: ExecError) -> Failure {
    match e {
        ExecError::Location(_) => Failure::Input(e.into()),
        ExecError::Environment(_) => Failure::Environment(e.into()),
        ExecError::Callout { .. } | ExecError::Aging { .. } => Failure::Run(e.into()),
        ExecError::Engine(e) => crate::run::engine_failure(e),
        ExecError::Setup(e) => crate::run::engine_failure(RunError::Setup(e)),
        ExecError::Confine(e) => crate::run::engine_failure(RunError::Confine(e)),
    }
}
