//! `fslab study run|resume|list|show`: whole comparison studies, kept in the results store.

use crate::{out, Failure};
use anyhow::anyhow;
use fslab_lab::lifecycle;
use fslab_lab::machine::Host;
use fslab_lab::matrix::{self, Form};
use fslab_lab::runner::{Event, Options, Summary};
use fslab_lab::study::Study;
use fslab_lab::LabError;
use fslab_store::Store;
use fslab_store::{CellStatus, RunStatus};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  fslab study run studies/quick.toml --dry-run
  fslab study run studies/quick.toml
  fslab study list
  fslab study show 1")]
pub struct Args {
    #[command(subcommand)]
    command: Command,
    /// The results store (SQLite). Default: $FSLAB_DB, else $XDG_DATA_HOME/fslab/fslab.db, else
    /// ~/.local/share/fslab/fslab.db.
    #[arg(long, global = true)]
    db: Option<PathBuf>,
}

#[derive(Debug, clap::Subcommand)]
enum Command {
    /// Run a study: format, mount, run, repeat and store every result.
    #[command(after_help = "Examples:
  fslab study run studies/quick.toml
  fslab study run quick --dry-run
  fslab study run seed-001-dbench --quick
  fslab study run my-study.toml --scratch /var/tmp --db results.db")]
    Run {
        /// The study file (TOML), or the name of one of fslab's example studies (quick,
        /// seed-001-dbench...; `fslab examples` writes them out).
        study: PathBuf,
        /// The study's quick form: small images, seconds-long runs, one repeat.
        #[arg(long)]
        quick: bool,
        /// The preflight: print each cell, runnable here or unsupported (and why), and an
        /// estimate of the duration; run nothing. As root, each filesystem's mkfs and mount
        /// options are tried on a sparse scratch image first, so that options the kernel
        /// refuses show here. Exit 3 when no cell can run.
        #[arg(long)]
        dry_run: bool,
        /// Confirm that the block device the study names under `destroy` may be formatted.
        #[arg(long)]
        yes: bool,
        /// Where loop images and mount points go [default: the system's temporary directory].
        #[arg(long)]
        scratch: Option<PathBuf>,
    },
    /// Run what an interrupted study lacks (the newest unfinished one, or STUDY).
    #[command(after_help = "Examples:
  fslab study resume
  fslab study resume 3 --scratch /var/tmp")]
    Resume {
        /// A study's id or name.
        study: Option<String>,
        /// Confirm again that the block device the study names under `destroy` may be formatted.
        #[arg(long)]
        yes: bool,
        /// Where loop images and mount points go [default: the system's temporary directory].
        #[arg(long)]
        scratch: Option<PathBuf>,
    },
    /// The studies in the store.
    #[command(after_help = "Examples:\n  fslab study list\n  fslab study list --db results.db")]
    List,
    /// One study: its cells, their status and headline figures.
    #[command(after_help = "Examples:\n  fslab study show 1\n  fslab study show quick --db results.db")]
    Show {
        /// A study's id or name.
        study: String,
    },
}

pub fn main(args: Args) -> Result<ExitCode, Failure> {
    let db = match &args.db {
        Some(p) => p.clone(),
        None => Store::default_path().map_err(|e| Failure::Environment(e.into()))?,
    };
    let machine = Host {
        exe: std::env::current_exe().map_err(|e| Failure::Environment(anyhow!("cannot find the fslab binary: {e}")))?,
        mpi: cfg!(feature = "mpi"),
    };
    match args.command {
        Command::Run {
            study,
            quick,
            dry_run,
            yes,
            scratch,
        } => {
            let form = if quick { Form::Quick } else { Form::Full };
            let study = crate::examples::resolve(&study, "studies")?;
            let s = Study::from_file(&study).map_err(|e| Failure::Input(e.into()))?;
            if dry_run {
                let scratch = scratch.unwrap_or_else(std::env::temp_dir);
                let verdicts = lifecycle::preflight_with_trials(&s, form, &machine, &scratch)
                    .map_err(|e| lab_failure(e, &study))?;
                out::print(&dry_run_text(&s, form, &verdicts))?;
                if verdicts.iter().all(Option::is_some) {
                    return Err(Failure::Environment(anyhow!(
                        "{}",
                        lifecycle::nothing_runs(&s, form, &verdicts)
                    )));
                }
                return Ok(ExitCode::SUCCESS);
            }
            let (store, id) =
                lifecycle::start(&machine, &db, &study, &s, form, yes).map_err(|e| lab_failure(e, &study))?;
            execute(&machine, &store, &s, id, form, yes, scratch, &db)
        }
        Command::Resume { study, yes, scratch } => {
            let store = open(&db)?;
            let (row, s, form) =
                lifecycle::find(&store, study.as_deref()).map_err(|e| lab_failure(e, Path::new(&db)))?;
            execute(&machine, &store, &s, row.id, form, yes, scratch, &db)
        }
        Command::List => {
            let store = open_read(&db)?;
            out::print(&list_text(&store).map_err(Failure::Environment)?)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Show { study } => {
            let store = open_read(&db)?;
            out::print(&show_text(&store, &study).map_err(Failure::Input)?)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The store, to write into (its errors name it).
fn open(db: &Path) -> Result<Store, Failure> {
    Store::open(db).map_err(|e| Failure::Environment(e.into()))
}

/// The store, to read only: listing and showing work on a store the user cannot write.
fn open_read(db: &Path) -> Result<Store, Failure> {
    Store::open_read(db).map_err(|e| Failure::Environment(e.into()))
}

/// Runs (or resumes) a study and prints where its results are.
#[allow(clippy::too_many_arguments)]
fn execute(
    machine: &Host,
    store: &Store,
    s: &Study,
    id: i64,
    form: Form,
    yes: bool,
    scratch: Option<PathBuf>,
    db: &Path,
) -> Result<ExitCode, Failure> {
    let opts = Options {
        form,
        scratch: scratch.unwrap_or_else(std::env::temp_dir),
        stop: lifecycle::catch_interrupts().map_err(|e| Failure::Environment(e.into()))?,
    };
    let terminal = std::io::stderr().is_terminal();
    let colour = terminal && std::env::var_os("NO_COLOR").is_none();
    // On a terminal, the live view with the same lines above it; otherwise the lines alone.
    let mut view = terminal.then(|| crate::progress::StudyView::new(&s.name));
    let mut on = |e: &Event| {
        let line = event_line(s, e, colour);
        match &mut view {
            Some(view) => view.event(e, &line),
            None => eprint!("{line}"),
        }
    };
    let summary = lifecycle::execute(machine, store, s, id, &opts, yes, &mut on);
    if let Some(view) = &view {
        view.finish();
    }
    let summary = summary.map_err(|e| lab_failure(e, db))?;
    eprintln!("{}", summary_line(&summary));
    // The results are stored: a closed stdout no longer matters.
    let _ = out::print(&format!(
        "study {id} `{}`: results in {}\n  fslab study show {id} --db {}\n",
        s.name,
        db.display(),
        db.display()
    ));
    crate::report::after_study(store, id, db);
    if summary.interrupted {
        let _ = out::print(&format!(
            "  interrupted: fslab study resume {id} --db {} runs what is missing\n",
            db.display()
        ));
        return Ok(ExitCode::from(130));
    }
    if summary.runs > 0 && summary.ok == 0 {
        return Err(Failure::Run(anyhow!(
            "study {id} `{}`: not one of its {} runs succeeded (fslab study show {id} says why)",
            s.name,
            summary.runs
        )));
    }
    Ok(ExitCode::SUCCESS)
}

/// Bad input (a study, a workload, a device it may not name) is the user's fault; anything else
/// is the machine's.
fn lab_failure(e: LabError, file: &Path) -> Failure {
    if e.is_input() {
        match e {
            LabError::Workload { .. } => Failure::Input(anyhow!("{}: {e}", file.display())),
            _ => Failure::Input(e.into()),
        }
    } else {
        Failure::Environment(e.into())
    }
}

fn summary_line(o: &Summary) -> String {
    format!(
        "fslab: {} runs: {} ok, {} failed, {} hung; {} cells unsupported",
        o.runs, o.ok, o.failed, o.hung, o.unsupported_cells
    )
}

fn event_line(s: &Study, e: &Event, colour: bool) -> String {
    let paint = |code: &str, t: &str| {
        if colour {
            format!("\x1b[{code}m{t}\x1b[0m")
        } else {
            t.to_string()
        }
    };
    match e {
        Event::Begin {
            cells,
            runs_left,
            estimate,
        } => format!(
            "study `{}`: {cells} cells, {runs_left} runs to do, about {} in all\n",
            s.name,
            human(*estimate)
        ),
        // The live view's alone.
        Event::Stage { .. } | Event::Live { .. } => String::new(),
        Event::Unsupported { cells, reason } => {
            let which = match cells.as_slice() {
                [] => return String::new(),
                [one] => one.clone(),
                [first, rest @ ..] => format!("{first} and {} more cells", rest.len()),
            };
            format!("  {which}: {} {reason}\n", paint("33", "unsupported:"))
        }
        // The lab's routine steps are in the store; the ones worth a glance are shown.
        Event::Step { step, .. }
            if step.ok && step.duration.as_secs() < 2 && !matches!(step.name.as_str(), "fill" | "age" | "fsck") =>
        {
            String::new()
        }
        Event::Step { cell, step } => {
            let what = if step.ok {
                String::new()
            } else {
                format!(" {} {}", paint("31", "failed:"), step.detail)
            };
            format!("  {cell}: {} {:.2}s{what}\n", step.name, step.duration.as_secs_f64())
        }
        Event::Run {
            cell,
            repeat,
            warmup,
            status,
            headline,
            error,
            done,
            total,
            left,
        } => {
            let figure = headline
                .as_ref()
                .map(|m| format!("{} {:.2} {}", m.name, m.value, m.unit))
                .unwrap_or_default();
            let state = match status {
                RunStatus::Ok => figure,
                RunStatus::Failed => format!("{} {}", paint("31", "failed:"), error.as_deref().unwrap_or("")),
                RunStatus::Hung => paint("31", error.as_deref().unwrap_or("hung")),
            };
            let which = if *warmup {
                "warm-up".to_string()
            } else {
                format!("run {}", repeat + 1)
            };
            format!("[{done}/{total}] {cell} {which}: {state} ({} left)\n", human(*left))
        }
    }
}

pub(crate) fn human(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, s / 60 % 60),
    }
}

/// The preflight: every cell of the matrix, runnable here or unsupported with the reason, and
/// an estimate of the runnable cells' time.
fn dry_run_text(s: &Study, form: Form, verdicts: &[Option<String>]) -> String {
    let cells = matrix::expand(s, form);
    let repeats = matrix::repeats(s, form);
    let runnable: Vec<bool> = verdicts.iter().map(Option::is_none).collect();
    let can = runnable.iter().filter(|ok| **ok).count();
    let mut out = format!(
        "study `{}` ({} form): {} cells × {repeats} repeats = {} runs\n",
        s.name,
        form.name(),
        cells.len(),
        cells.len() as u64 * u64::from(repeats),
    );
    out.push_str(&format!(
        "{can} of {} cells can run on this machine, about {}\n\n",
        cells.len(),
        human(matrix::estimate_runnable(s, form, &runnable))
    ));
    let width = cells.iter().map(|c| c.label.chars().count()).max().unwrap_or(0);
    // Each reason once, below the table, numbered in the order they first appear.
    let mut reasons: Vec<&str> = Vec::new();
    for (c, verdict) in cells.iter().zip(verdicts) {
        let what = match verdict {
            None => c
                .options
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(" "),
            Some(reason) => {
                let n = match reasons.iter().position(|r| r == reason) {
                    Some(n) => n,
                    None => {
                        reasons.push(reason);
                        reasons.len() - 1
                    }
                };
                format!("unsupported [{}]", n + 1)
            }
        };
        out.push_str(&format!("{:>4}  {:<width$}  {what}\n", c.ordinal + 1, c.label));
    }
    if !reasons.is_empty() {
        out.push('\n');
    }
    for (n, reason) in reasons.iter().enumerate() {
        out.push_str(&format!("[{}] {reason}\n", n + 1));
    }
    out
}

fn list_text(store: &Store) -> anyhow::Result<String> {
    let studies = store.list_studies()?;
    if studies.is_empty() {
        return Ok(format!("no studies in {}\n", store.path().display()));
    }
    let mut out = format!(
        "{:>4}  {:<32} {:<20} {:<11} {:>9} {:>5} {:>6} {:>5} {:>4}\n",
        "id", "name", "started", "status", "runs", "ok", "unsup", "fail", "hung"
    );
    for s in studies {
        out.push_str(&format!(
            "{:>4}  {:<32} {:<20} {:<11} {:>9} {:>5} {:>6} {:>5} {:>4}\n",
            s.id,
            truncate(&s.name, 32),
            s.started_at,
            lifecycle::status_now(store, s.id, s.status)?.as_str(),
            format!("{}/{}", s.runs_done, s.planned_runs),
            s.runs_ok,
            s.unsupported_cells,
            s.failed_cells,
            s.hung_cells
        ));
    }
    Ok(out)
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        s.chars().take(n - 1).chain(['…']).collect()
    }
}

/// A study's cells with their status and the mean of their headline figure.
fn show_text(store: &Store, key: &str) -> anyhow::Result<String> {
    let row = store
        .study(key)?
        .ok_or_else(|| anyhow!("no study `{key}` in {}", store.path().display()))?;
    let cells = store.cells(row.id)?;
    let runs = store.runs(row.id)?;
    let mut out = format!(
        "study {} `{}` ({}), started {}, {}\n\n",
        row.id,
        row.name,
        row.file,
        row.started_at,
        lifecycle::status_now(store, row.id, row.status)?.as_str()
    );
    let labels: Vec<&str> = cells.iter().map(|c| c.spec.label.as_str()).collect();
    let width = labels.iter().map(|l| l.chars().count()).max().unwrap_or(4).max(4);
    out.push_str(&format!(
        "{:<width$} {:<11} {:>5}  {}\n",
        "cell", "status", "runs", "headline (mean of the runs)"
    ));
    for (c, label) in cells.iter().zip(&labels) {
        let mine: Vec<_> = runs.iter().filter(|r| r.cell_id == c.id && !r.warmup).collect();
        let ok: Vec<_> = mine.iter().filter(|r| r.status == RunStatus::Ok).collect();
        let headline = ok
            .first()
            .and_then(|r| r.metrics.iter().find(|m| m.headline))
            .map(|m| {
                let values: Vec<f64> = ok
                    .iter()
                    .filter_map(|r| r.metrics.iter().find(|x| x.name == m.name).map(|x| x.value))
                    .collect();
                format!(
                    "{} {:.2} {}",
                    m.name,
                    values.iter().sum::<f64>() / values.len() as f64,
                    m.unit
                )
            })
            .unwrap_or_default();
        let detail = match c.status {
            CellStatus::Done | CellStatus::Pending => headline,
            _ => c.reason.clone().unwrap_or_default(),
        };
        out.push_str(&format!(
            "{:<width$} {:<11} {:>5}  {}\n",
            label,
            c.status.as_str(),
            format!("{}/{}", mine.len(), c.spec.planned_repeats),
            detail
        ));
    }
    Ok(out)
}
