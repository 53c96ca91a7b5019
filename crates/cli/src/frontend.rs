//! `fslab run|ffsb|dbench|sysbench|iozone`: one front-end's run, driven the same way for every
//! tool: notes to stderr, `--check` or `--explain` and stop, or run it with the original's text
//! on stdout (or the outcome as one JSON document with `--json`) and a progress bar on a
//! terminal. A study's worker (run with `FSLAB_PROGRESS` set) writes its progress on stderr
//! instead, a line a second, for the lab's view.
//!
//! Ctrl-C (or SIGTERM) stops the run: its workers stop, the figures so far are printed marked
//! partial, what the run made is cleaned up as at its end, and fslab exits 130 (a second Ctrl-C
//! ends it at once). A reader that closes the output (`| head`) stops the run the same way, and
//! fslab exits quietly with 141, as a tool killed by SIGPIPE does.

use crate::Failure;
use fslab_classic::contract::{OutputFormat, Phase, Tool};
use fslab_classic::{Common, Context, Error, ErrorKind, FrontEnd, Outcome};
use fslab_engine::fileset::Layout;
use fslab_engine::result::Status;
use fslab_engine::Progress;
use fslab_lab::worker::{LaidOut, Live};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// sysbench's and IOzone's words, which their own parsers read (clap cannot declare them).
#[derive(Debug, clap::Args)]
#[command(disable_help_flag = true)]
pub struct Words {
    /// The tool's command line (`fslab sysbench fileio help`, `fslab iozone -h` list it).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "ARGS")]
    pub words: Vec<String>,
}

/// Runs a front-end as its command line asks. Ctrl-C is caught before `parse` reads the input
/// (a large dbench loadfile takes a while): one that comes before the run starts ends fslab
/// with 130 having run nothing.
pub fn main(parse: impl FnOnce() -> Result<(Box<dyn FrontEnd>, Common), Error>) -> Result<ExitCode, Failure> {
    // Under mpirun: this rank's part of the job (before anything else, so that a build
    // without MPI refuses before it reads or runs anything).
    let job = crate::mpi::join()?;
    let leads = job.ranks.leads();
    let interrupt = Arc::new(AtomicBool::new(false));
    let signalled = catch_interrupts(&interrupt).map_err(|e| Failure::Environment(e.into()))?;
    let (mut frontend, common) = parse().map_err(failure)?;
    frontend.plan().validate().map_err(failure)?;
    if signalled.load(Ordering::SeqCst) {
        eprintln!("fslab: interrupted before the run started: nothing ran");
        return Ok(ExitCode::from(INTERRUPTED));
    }
    // Where a --dir through a symlink leads, once, before anything runs there.
    for note in common.dir_note.iter().chain(&frontend.notes()).filter(|_| leads) {
        eprintln!("fslab: note: {note}");
    }
    if common.check {
        return Ok(ExitCode::SUCCESS);
    }
    if common.explain {
        if leads && !print_out(&frontend.explain()) {
            return Ok(ExitCode::from(CLOSED_OUTPUT));
        }
        return Ok(ExitCode::SUCCESS);
    }
    let json = common.prints_json();
    let pipe_closed = Arc::new(AtomicBool::new(false));
    let show_bar = !json
        && leads
        && !frontend.tool().prints_as_it_runs()
        && std::io::stdout().is_terminal()
        && std::io::stderr().is_terminal();
    let bar = show_bar.then(|| progress_bar(frontend.as_ref()));
    // Set once the engine reports its first second: the layout is over.
    let running = Arc::new(AtomicBool::new(false));
    let mut out = |text: &str| {
        if !json && !print_out(text) {
            pipe_closed.store(true, Ordering::SeqCst);
            interrupt.store(true, Ordering::SeqCst);
        }
    };
    // A study's worker: its progress, once a second, on stderr for the lab to read.
    let report_live = json && leads && std::env::var_os(fslab_lab::worker::PROGRESS_ENV).is_some();
    let mut progress = |phase: &str, p: &Progress| {
        running.store(true, Ordering::SeqCst);
        if report_live {
            let live = Live {
                phase: phase.to_string(),
                elapsed: p.elapsed,
                planned: p.planned,
                in_ramp: p.in_ramp,
                bytes_per_sec: p.bytes_per_sec,
                ops_per_sec: p.ops_per_sec,
                laid_out: None,
            };
            let _ = std::io::stderr().write_all(live.line().as_bytes());
        }
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
    let mut ctx = Context::new(&common, interrupt.clone(), &mut out, &mut progress);
    ctx.ranks = job.ranks.clone();
    // While the run lays out its files, the bar (or a study's view) says how far it has got.
    let layout = match (&bar, report_live) {
        (Some(bar), _) => {
            let bar = bar.clone();
            Some(LayoutWatch::start(running.clone(), move |laid: LaidOut| {
                bar.set_message(laid.text());
                bar.tick();
            }))
        }
        (None, true) => {
            let t0 = std::time::Instant::now();
            Some(LayoutWatch::start(running.clone(), move |laid: LaidOut| {
                let live = Live {
                    phase: "layout".into(),
                    elapsed: t0.elapsed(),
                    planned: None,
                    in_ramp: false,
                    bytes_per_sec: 0.0,
                    ops_per_sec: 0.0,
                    laid_out: Some(laid),
                };
                let _ = std::io::stderr().write_all(live.line().as_bytes());
            }))
        }
        (None, false) => None,
    };
    ctx.layout = layout.as_ref().map(|l| l.layout.clone());
    let outcome = fslab_classic::job::execute(frontend.as_mut(), &mut ctx);
    let notes = ctx.take_notes();
    if let Some(layout) = layout {
        layout.stop();
    }
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    for note in notes.iter().filter(|_| leads) {
        eprintln!("fslab: note: {note}");
    }
    if pipe_closed.load(Ordering::SeqCst) {
        // The reader has gone: nothing more to say to it, and no error either.
        return Ok(ExitCode::from(CLOSED_OUTPUT));
    }
    let mut outcome = outcome.map_err(failure)?;
    let interrupted = signalled.load(Ordering::SeqCst);
    outcome.interrupted = interrupted;
    // The job's document and report are the leading rank's to print; the others' stdout
    // stays empty.
    let shown = if !leads {
        true
    } else if common.output_format == Some(OutputFormat::FioJson) {
        print_out(&format!("{:#}\n", fslab_classic::fio_json::document(&outcome)))
    } else if json {
        print_out(&format!("{}\n", outcome.to_json()))
    } else if outcome.report.is_empty() && outcome.tool == Tool::Run {
        // Native runs have no original to imitate: fslab's own summary of each engine run. (A
        // classic front-end whose original prints nothing, sysbench's --verbosity=0, prints
        // nothing.)
        outcome
            .phases
            .iter()
            .all(|phase| print_out(&fslab_report::summary::run_summary(&phase.result)))
    } else {
        true
    };
    if !shown {
        return Ok(ExitCode::from(CLOSED_OUTPUT));
    }
    // MPI is finalised here, once every rank has printed what it prints.
    drop(job);
    if interrupted {
        let measured: f64 = outcome.phases.iter().map(|p| p.result.duration.as_secs_f64()).sum();
        eprintln!("fslab: interrupted after {measured:.1} s measured: the figures are those of a partial run");
        return Ok(ExitCode::from(INTERRUPTED));
    }
    Ok(exit_code(&outcome))
}

/// The exit status after Ctrl-C or SIGTERM (128 + SIGINT, as a shell reports it).
const INTERRUPTED: u8 = 130;
/// The exit status when the output was closed (128 + SIGPIPE, as for a tool killed by it).
const CLOSED_OUTPUT: u8 = 141;

/// From now on, Ctrl-C and SIGTERM set `interrupt` (the run stops) and the flag returned (the
/// run was interrupted); a second one ends fslab at once.
fn catch_interrupts(interrupt: &Arc<AtomicBool>) -> std::io::Result<Arc<AtomicBool>> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let signalled = Arc::new(AtomicBool::new(false));
    for signal in [SIGINT, SIGTERM] {
        // Registered first, so that it sees the flag the first signal set.
        signal_hook::flag::register_conditional_shutdown(signal, i32::from(INTERRUPTED), signalled.clone())?;
        signal_hook::flag::register(signal, signalled.clone())?;
        signal_hook::flag::register(signal, interrupt.clone())?;
    }
    Ok(signalled)
}

/// Writes to stdout; false when the reader has closed it (`| head`).
fn print_out(text: &str) -> bool {
    let mut stdout = std::io::stdout().lock();
    let written = stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush());
    !matches!(written, Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe)
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

/// A thread that tells `show`, four times a second until the run reports its first second, how
/// far the run has laid out its files.
struct LayoutWatch {
    layout: Arc<Layout>,
    done: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<()>,
}

impl LayoutWatch {
    fn start(running: Arc<AtomicBool>, show: impl Fn(LaidOut) + Send + 'static) -> LayoutWatch {
        let layout = Arc::new(Layout::default());
        let done = Arc::new(AtomicBool::new(false));
        let (l, d) = (layout.clone(), done.clone());
        let thread = std::thread::spawn(move || {
            while !d.load(Ordering::SeqCst) && !running.load(Ordering::SeqCst) {
                if let Some(laid) = laid_out(&l) {
                    show(laid);
                }
                std::thread::sleep(std::time::Duration::from_millis(250));
            }
        });
        LayoutWatch { layout, done, thread }
    }

    fn stop(self) {
        self.done.store(true, Ordering::SeqCst);
        let _ = self.thread.join();
    }
}

/// How far the files are laid out; none before the first fileset is planned.
fn laid_out(l: &Layout) -> Option<LaidOut> {
    let get = |c: &std::sync::atomic::AtomicU64| c.load(Ordering::Relaxed);
    let laid = LaidOut {
        files: get(&l.files),
        planned_files: get(&l.planned_files),
        bytes: get(&l.bytes),
        planned_bytes: get(&l.planned_bytes),
    };
    (laid.planned_files > 0).then_some(laid)
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
            e.total_errors, e.error.message
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_layout_message_counts_files_and_mib() {
        let l = Layout::default();
        let layout_message = |l: &Layout| laid_out(l).map(|laid| laid.text());
        assert_eq!(layout_message(&l), None);
        l.planned_files.store(16, Ordering::Relaxed);
        l.planned_bytes.store(64 << 20, Ordering::Relaxed);
        l.files.store(3, Ordering::Relaxed);
        l.bytes.store(13 << 20, Ordering::Relaxed);
        assert_eq!(
            layout_message(&l).as_deref(),
            Some("laying out files: 3 of 16, 13 of 64 MiB")
        );
        // Empty files (no prealloc): the files alone.
        l.planned_bytes.store(0, Ordering::Relaxed);
        assert_eq!(layout_message(&l).as_deref(), Some("laying out files: 3 of 16"));
        l.files.store(16, Ordering::Relaxed);
        assert_eq!(layout_message(&l).as_deref(), Some("laid out 16 files; syncing them"));
    }
}
