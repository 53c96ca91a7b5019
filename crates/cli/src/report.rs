//! `fslab report STUDY`: a stored study's statistics as terminal tables, Markdown, CSV, JSON, or
//! one self-contained HTML file with SVG charts.

use crate::Failure;
use anyhow::anyhow;
use fslab_report::export::{self, Format};
use fslab_report::{ReportError, StudyData};
use fslab_store::{Store, StudyId};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A study's id or name (the newest study of that name).
    study: String,
    /// The results store (SQLite). Default: $FSLAB_DB, else $XDG_DATA_HOME/fslab/fslab.db, else
    /// ~/.local/share/fslab/fslab.db.
    #[arg(long)]
    db: Option<PathBuf>,
    /// Write the HTML report (one file, SVG charts, nothing fetched from the network) to FILE.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// What to print on stdout: terminal tables, Markdown, CSV (one row per run) or JSON (the
    /// aggregated figures) [default: text, or nothing with --html].
    #[arg(long, value_enum)]
    format: Option<FormatArg>,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum FormatArg {
    Text,
    Md,
    Csv,
    Json,
}

impl From<FormatArg> for Format {
    fn from(f: FormatArg) -> Format {
        match f {
            FormatArg::Text => Format::Text {
                width: terminal_width(),
            },
            FormatArg::Md => Format::Markdown,
            FormatArg::Csv => Format::Csv,
            FormatArg::Json => Format::Json,
        }
    }
}

/// The terminal's width in columns; `$COLUMNS`, or 120, when stdout is not a terminal.
pub fn terminal_width() -> usize {
    let stdout = std::io::stdout();
    if let Ok(size) = rustix::termios::tcgetwinsize(&stdout) {
        if size.ws_col > 0 {
            return size.ws_col as usize;
        }
    }
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse().ok())
        .filter(|c: &usize| *c > 0)
        .unwrap_or(120)
}

pub fn main(args: Args) -> Result<ExitCode, Failure> {
    let store = open_existing(args.db)?;
    let data = StudyData::load_key(&store, &args.study).map_err(failure)?;
    if let Some(path) = &args.html {
        let html = export::html::page(&data).map_err(failure)?;
        std::fs::write(path, html)
            .map_err(|e| Failure::Environment(anyhow!("cannot write the report {}: {e}", path.display())))?;
        eprintln!(
            "fslab: wrote the report of study {} to {}",
            data.study.id,
            path.display()
        );
    }
    let format = match (args.format, &args.html) {
        (Some(f), _) => Some(f),
        (None, None) => Some(FormatArg::Text),
        (None, Some(_)) => None,
    };
    if let Some(f) = format {
        print!("{}", export::render(&data, f.into()).map_err(failure)?);
    }
    Ok(ExitCode::SUCCESS)
}

/// The store at `--db` (or the default place), which must exist: a report never creates one.
pub(crate) fn open_existing(db: Option<PathBuf>) -> Result<Store, Failure> {
    let db = match db {
        Some(p) => p,
        None => Store::default_path().map_err(|e| Failure::Environment(e.into()))?,
    };
    if !db.exists() {
        return Err(Failure::Input(anyhow!(
            "no results store at {}: run a study first (fslab study run), or name one with --db",
            db.display()
        )));
    }
    Store::open(&db).map_err(|e| Failure::Environment(e.into()))
}

/// A report error as the CLI ends with it: what the user named wrong is bad input (2); a store
/// or a file that fails is the environment (3).
pub(crate) fn failure(e: ReportError) -> Failure {
    match e {
        ReportError::NoStudy { .. } | ReportError::NoConfiguration { .. } | ReportError::Compare(_) => {
            Failure::Input(e.into())
        }
        _ => Failure::Environment(e.into()),
    }
}

/// Writes the HTML report of study `id`, which just ran, beside its store `db` (in the current
/// directory when that fails) and prints where; a failure here loses nothing, so it is only
/// told on stderr.
pub(crate) fn after_study(store: &Store, id: StudyId, db: &Path) {
    let beside = db
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let written = write_into(store, id, beside).or_else(|_| write_into(store, id, Path::new(".")));
    match written {
        Ok(path) => println!("  report: {}", path.display()),
        Err(e) => eprintln!("fslab: the results are stored, but the HTML report could not be written: {e}"),
    }
}

/// Writes study `id`'s report as `<name>-<id>.html` in `dir`.
fn write_into(store: &Store, id: StudyId, dir: &Path) -> Result<PathBuf, ReportError> {
    let row = store.study(&id.to_string())?.ok_or_else(|| ReportError::NoStudy {
        key: id.to_string(),
        db: store.path().to_path_buf(),
    })?;
    let path = dir.join(export::html::file_name(&row));
    export::html::write_study(store, id, &path)?;
    Ok(path)
}
