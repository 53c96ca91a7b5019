//! `fslab run|ffsb|dbench|sysbench|iozone`: one front-end's run, driven the same way for every
//! tool: notes to stderr, `--check` or `--explain` and stop, or run it with the original's text
//! on stdout (or the outcome as one JSON document with `--json`) and a progress bar on a
//! terminal.

use crate::Failure;
use fslab_classic::contract::Phase;
use fslab_classic::{Common, Context, Error, ErrorKind, FrontEnd, Outcome};
use fslab_engine::result::Status;
use fslab_engine::Progress;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::{IsTerminal, Write};
use std::process::ExitCode;

/// sysbench's and IOzone's words, which their own parsers read (clap cannot declare them).
#[derive(Debug, clap::Args)]
#[command(disable_help_flag = true)]
pub struct Words {
    /// The tool's command line (`fslab sysbench fileio help`, `fslab iozone -h` list it).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "ARGS")]
    pub words: Vec<String>,
}

/// Runs a front-end as its command line asks.
pub fn main(parsed: Result<(Box<dyn FrontEnd>, Common), Error>) -> Result<ExitCode, Failure> {
    let (mut frontend, common) = parsed.map_err(failure)?;
    frontend.plan().validate().map_err(failure)?;
    for note in frontend.notes() {
        eprintln!("fslab: note: {note}");
    }
    if common.check {
        return Ok(ExitCode::SUCCESS);
    }
    if common.explain {
        print_out(&frontend.explain());
        return Ok(ExitCode::SUCCESS);
    }
    let json = common.json;
    let show_bar = !json
        && !frontend.tool().prints_as_it_runs()
        && std::io::stdout().is_terminal()
        && std::io::stderr().is_terminal();
    let bar = show_bar.then(|| progress_bar(frontend.as_ref()));
    let mut out = |text: &str| {
        if !json {
            print_out(text);
        }
    };
    let mut progress = |phase: &str, p: &Progress| {
        if let Some(bar) = &bar {
            bar.set_position(p.elapsed.as_secs());
            bar.set_message(format!(
                "{phase}{}: {:.1} MiB/s, {:.0} ops/s",
                if p.in_ramp { " (ramp)" } else { "" },
                p.bytes_per_sec / 1048576.0,
                p.ops_per_sec
            ));
        }
    };
    let mut ctx = Context::new(&common, &mut out, &mut progress);
    let outcome = frontend.execute(&mut ctx);
    let notes = ctx.take_notes();
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    for note in notes {
        eprintln!("fslab: note: {note}");
    }
    let outcome = outcome.map_err(failure)?;
    if json {
        print_out(&format!("{}\n", outcome.to_json()));
    } else if outcome.report.is_empty() {
        // Native runs have no original to imitate: fslab's own summary of each engine run.
        for phase in &outcome.phases {
            print_out(&fslab_report::summary::run_summary(&phase.result));
        }
    }
    Ok(exit_code(&outcome))
}

/// Writes to stdout; a reader that stopped early (`| head`) is not an error.
fn print_out(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
}

/// A bar over the measured time when the plan's first run has one, a spinner otherwise.
fn progress_bar(frontend: &dyn FrontEnd) -> ProgressBar {
    let plan = frontend.plan();
    let total = plan.phases.iter().find_map(|p| match p {
        Phase::Run { workload, .. } => workload.stop.time.map(|t| (t.0 + workload.stop.ramp.0).as_secs()),
        Phase::Setup { .. } => None,
    });
    let bar = match total {
        Some(t) if plan.phases.len() == 1 => ProgressBar::new(t).with_style(
            ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len}s, {eta} left  {msg}")
                .expect("template")
                .progress_chars("=> "),
        ),
        _ => ProgressBar::new_spinner()
            .with_style(ProgressStyle::with_template("{elapsed_precise} {spinner} {msg}").expect("template")),
    };
    bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
    bar
}

/// The exit code of a finished run: 1, naming the first error and the count on stderr, when an
/// operation failed; 0 otherwise.
fn exit_code(outcome: &Outcome) -> ExitCode {
    if outcome.status() != Status::Failed {
        return ExitCode::SUCCESS;
    }
    if let Some(e) = outcome.first_error() {
        eprintln!(
            "fslab: the run failed: {} error(s); the first: {}",
            e.total_errors, e.message
        );
    }
    ExitCode::from(1)
}

/// What a front-end's error means for the exit code.
fn failure(e: Error) -> Failure {
    match e.kind {
        ErrorKind::Input => Failure::Input(e.into()),
        ErrorKind::Environment => Failure::Environment(e.into()),
        ErrorKind::Run => Failure::Run(e.into()),
    }
}
