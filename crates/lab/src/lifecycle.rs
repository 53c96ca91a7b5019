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
use fslab_store::{Claim, NewStudy, Runner, Store, StudyId, StudyRow, StudyStatus};
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
    // Before anything is touched: a second run or resume of a study must not clear the first
    // one's mounts nor record runs it is recording.
    let me = this_runner()?;
    let scratch = runner::scratch_dir(opts, id);
    let left = match store.claim_study(id, me, &scratch.display().to_string(), &|r| runner_alive(r))? {
        Claim::Busy(holder) => {
            return Err(LabError::Busy {
                study: id,
                pid: holder.pid,
            })
        }
        Claim::Claimed { left } => left,
    };
    let summary = (|| {
        machine.ready()?;
        // What a runner that died left mounted (fslab's own mounts, beneath the scratch
        // directories recorded with the study) goes before the device is checked, which still
        // refuses any other mount.
        if let Some(left) = left {
            machine.clear_leftovers(Path::new(&left));
        }
        machine.clear_leftovers(&scratch);
        check_device(study, yes)?;
        store.set_study_status(id, StudyStatus::Running.as_str())?;
        let summary = runner::run_study(machine, store, study, id, opts, on);
        let status = match &summary {
            Ok(s) if !s.interrupted => StudyStatus::Complete,
            _ => StudyStatus::Interrupted,
        };
        store.set_study_status(id, status.as_str())?;
        summary
    })();
    let released = store.release_study(id, me);
    let summary = summary?;
    released?;
    Ok(summary)
}

/// This process, as the store records a study's runner.
fn this_runner() -> Result<Runner, LabError> {
    let pid = std::process::id();
    let started = process_start(pid).ok_or_else(|| {
        LabError::io(
            format!("cannot read /proc/{pid}/stat"),
            std::io::Error::from(std::io::ErrorKind::NotFound),
        )
    })?;
    Ok(Runner { pid, started })
}

/// Whether a recorded runner still runs: its pid is a live process that started when it did
/// (not another process the kernel gave the pid to since).
pub fn runner_alive(r: Runner) -> bool {
    process_start(r.pid) == Some(r.started)
}

/// When a process started, in clock ticks since boot: field 22 of /proc/PID/stat, counted
/// after the command name, which is in parentheses and may hold anything.
pub fn process_start(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, after) = stat.rsplit_once(')')?;
    // After the name: state (field 3) ... starttime (field 22).
    after.split_whitespace().nth(19)?.parse().ok()
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
