//! A study's whole life, as the lab owns it: checked before anything is formatted
//! ([`preflight`]), recorded with its test bed ([`start`]), run with its status kept
//! ([`execute`]), and found again to resume ([`find`]). The CLI parses arguments and prints what
//! this returns.

use crate::machine::Machine;
use crate::matrix::{self, Form};
use crate::runner::{self, Event, Options, Summary};
use crate::study::{Study, Target};
use crate::LabError;
use fslab_classic::contract::{Request, Role};
use fslab_store::{NewStudy, Store, StudyId, StudyRow, StudyStatus};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, OnceLock};

/// Checks that every cell's workload is valid as its tool reads it (its profile, loadfile or
/// options, compiled to engine workloads) before anything is formatted: a bad one is
/// [`LabError::Workload`], naming the workload, the cell and the tool's own message.
pub fn preflight(study: &Study, form: Form) -> Result<(), LabError> {
    let mut seen = BTreeSet::new();
    let dir = std::env::temp_dir();
    for cell in matrix::expand(study, form) {
        let w = &study.workloads[cell.workload];
        let request = Request {
            main: w.main.as_deref(),
            options: &cell.options,
            args: &w.args,
            dir: &dir,
            drop_caches: false,
        };
        for call in w.tool.calls(&request) {
            if call.role != Role::Measured || !seen.insert(call.args.clone()) {
                continue;
            }
            let words = &call.args[1..];
            w.tool.check(words).map_err(|error| LabError::Workload {
                workload: w.name.clone(),
                cell: cell.label.clone(),
                error,
            })?;
        }
    }
    Ok(())
}

/// Starts a new study from `file`: checks it and refuses a device it may not format (leaving
/// nothing behind when it does), then records it in the store at `db` with the test bed it
/// runs on.
pub fn start(
    machine: &dyn Machine,
    db: &Path,
    file: &Path,
    study: &Study,
    form: Form,
    yes: bool,
) -> Result<(Store, StudyId), LabError> {
    preflight(study, form)?;
    machine.ready()?;
    check_device(study, yes)?;
    let store = Store::open(db)?;
    let text = std::fs::read_to_string(file).map_err(|e| LabError::io(file.display().to_string(), e))?;
    let file = file.canonicalize().unwrap_or_else(|_| file.to_path_buf());
    // The test bed, with the study's device when it names one.
    let devices: Vec<PathBuf> = match &study.device.target {
        Target::Block { path, .. } => vec![path.clone()],
        Target::Loop { .. } => Vec::new(),
    };
    let testbed = serde_json::to_value(crate::testbed::TestBed::capture(&devices)).expect("the test bed serialises");
    let id = store.create_study(&NewStudy {
        name: study.name.clone(),
        file: file.display().to_string(),
        text,
        started_at: fslab_engine::result::rfc3339(std::time::SystemTime::now()),
        testbed,
        planned_runs: matrix::planned_runs(study, form),
        form: form.name().to_string(),
    })?;
    Ok((store, id))
}

/// The study to resume: the one `key` names (an id or a name), or the newest unfinished one;
/// with the study as it was written when it started, and its form.
pub fn find(store: &Store, key: Option<&str>) -> Result<(StudyRow, Study, Form), LabError> {
    let row = match key {
        Some(key) => store.study(key)?,
        None => match store
            .list_studies()?
            .into_iter()
            .rev()
            .find(|s| s.status != StudyStatus::Complete)
        {
            Some(s) => store.study(&s.id.to_string())?,
            None => None,
        },
    };
    let Some(row) = row else {
        let db = store.path().display();
        return Err(LabError::NoStudy(match key {
            Some(k) => format!("no study `{k}` in {db}"),
            None => format!("no unfinished study in {db}"),
        }));
    };
    let base = Path::new(&row.file).parent().unwrap_or(Path::new("."));
    let study = Study::from_toml(&row.text, &row.file, base)?;
    let form = Form::from_name(&row.form);
    Ok((row, study, form))
}

/// Runs what a recorded study lacks (all of a new one), marking it running, then complete or
/// interrupted.
pub fn execute(
    machine: &dyn Machine,
    store: &Store,
    study: &Study,
    id: StudyId,
    opts: &Options,
    yes: bool,
    on: &mut dyn FnMut(&Event),
) -> Result<Summary, LabError> {
    machine.ready()?;
    check_device(study, yes)?;
    store.set_study_status(id, StudyStatus::Running.as_str())?;
    let summary = runner::run_study(machine, store, study, id, opts, on);
    let status = match &summary {
        Ok(s) if !s.interrupted => StudyStatus::Complete,
        _ => StudyStatus::Interrupted,
    };
    store.set_study_status(id, status.as_str())?;
    summary
}

/// Refuses a block device the study may not format.
fn check_device(study: &Study, yes: bool) -> Result<(), LabError> {
    match &study.device.target {
        Target::Block { path, destroy } => crate::device::check_block_device(path, destroy.as_deref(), yes),
        Target::Loop { .. } => Ok(()),
    }
}

/// Catches Ctrl-C and SIGTERM from now on: the flag a study's runner watches, so that it stops
/// its worker and tears down before the process exits. A second one ends the process at once
/// (`fslab study resume` clears what it leaves).
pub fn catch_interrupts() -> std::io::Result<&'static AtomicBool> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();
    let flag = FLAG.get_or_init(|| Arc::new(AtomicBool::new(false)));
    for signal in [SIGINT, SIGTERM] {
        // Registered first, so that it sees the flag the first signal set.
        signal_hook::flag::register_conditional_shutdown(signal, 130, flag.clone())?;
        signal_hook::flag::register(signal, flag.clone())?;
    }
    Ok(flag)
}
