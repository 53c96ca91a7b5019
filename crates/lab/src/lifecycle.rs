//! A study's whole life, as the lab owns it: checked before anything is formatted
//! ([`preflight`]), recorded with its test bed ([`start`]), run with its status kept
//! ([`execute`]), and found again to resume ([`find`]). The CLI parses arguments and prints what
//! this returns.

use crate::machine::Machine;
use crate::matrix::{self, Form};
use crate::runner::{self, Event, Options, Summary};
use crate::study::{Log, Study, Target};
use crate::LabError;
use fslab_classic::contract::{Request, Role};
use fslab_store::{Claim, NewStudy, Runner, Store, StudyId, StudyRow, StudyStatus};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, OnceLock};

/// Checks that every cell's workload is valid as its tool reads it (its profile, loadfile or
/// options, compiled to engine workloads) before anything is formatted: a bad one is
/// [`LabError::Workload`], naming the workload, the cell and the tool's own message. Returns,
/// for each cell of [`matrix::expand`] in order, why this machine cannot run it (its filesystem
/// or a file its tool needs is missing here), or `None` when it can.
pub fn preflight(study: &Study, form: Form, machine: &dyn Machine) -> Result<Vec<Option<String>>, LabError> {
    check_cells(study, form, machine, None)
}

/// [`preflight`] for the dry run: as root, each filesystem's mkfs and mount options are also
/// tried on a sparse scratch image in `scratch` ([`options_refused`]), so that options the
/// kernel refuses show before the study runs, and its estimate leaves their cells out.
pub fn preflight_with_trials(
    study: &Study,
    form: Form,
    machine: &dyn Machine,
    scratch: &Path,
) -> Result<Vec<Option<String>>, LabError> {
    check_cells(study, form, machine, Some(scratch))
}

fn check_cells(
    study: &Study,
    form: Form,
    machine: &dyn Machine,
    scratch: Option<&Path>,
) -> Result<Vec<Option<String>>, LabError> {
    let mut verdicts = Vec::new();
    let mut support = BTreeMap::new();
    let mut checked = BTreeMap::new();
    let dir = dir_target(study, machine)?;
    // The study's own loop images can be tried: its filesystems' options on a scratch image
    // of the same size (root only; a named block device is formatted only when its cells run).
    let trial_size = match (&study.device.target, form) {
        _ if scratch.is_none() || !machine.is_root() => None,
        (Target::Loop { size }, Form::Quick) => Some(study.quick.loop_size.unwrap_or(*size)),
        (Target::Loop { size }, Form::Full) => Some(*size),
        (Target::Block { .. } | Target::Dir { .. }, _) => None,
    };
    for cell in matrix::expand(study, form) {
        let filesystem = &study.filesystems[cell.filesystem];
        let fs = support
            .entry(cell.filesystem)
            .or_insert_with(|| match &dir {
                Some((path, mounted)) => runner::dir_type_mismatch(path, &filesystem.fs_type, &mounted.fs_type),
                None => filesystem_unsupported(filesystem, machine).or_else(|| {
                    let (size, scratch) = (trial_size?, scratch?);
                    options_refused(filesystem, size, scratch, machine)
                }),
            })
            .clone();
        let mpi = cell.launch(study).and_then(|_| machine.mpi_unsupported());
        verdicts.push(fs.or(mpi).or(workload_unsupported(study, &cell, &mut checked)?));
    }
    Ok(verdicts)
}

/// Why this machine cannot make `fs` (its type, or its external log), or `None` when it can.
pub fn filesystem_unsupported(fs: &crate::study::Filesystem, machine: &dyn Machine) -> Option<String> {
    let log = || match fs.log {
        Some(_) => crate::filesystem::log_support(&fs.fs_type),
        None => Ok(()),
    };
    machine
        .support(&fs.fs_type)
        .and_then(|()| log())
        .err()
        .map(|e| e.to_string())
}

/// Why the kernel refuses `fs`'s mkfs or mount options (an option removed since the study was
/// written, a typo), found by making the filesystem on a sparse image of `size` bytes in a
/// directory of its own beneath `scratch` and mounting it, then removing both: so that a dry run
/// names such cells, and leaves them out of its estimate, before hours of other cells have run.
/// `None` when the kernel takes them, or when the trial cannot be made (no free loop device: the
/// run will say). tmpfs, and a filesystem with an external log, are left to their first make.
pub fn options_refused(
    fs: &crate::study::Filesystem,
    size: u64,
    scratch: &Path,
    machine: &dyn Machine,
) -> Option<String> {
    if fs.fs_type == "tmpfs" || fs.log.is_some() {
        return None;
    }
    let scratch = tempfile::Builder::new()
        .prefix("fslab-trial-")
        .tempdir_in(scratch)
        .ok()?;
    let mnt = scratch.path().join("mnt");
    std::fs::create_dir(&mnt).ok()?;
    // Dropped before `scratch`: detached and removed.
    let image = machine.attach_image(scratch.path(), size).ok()?;
    if let Err(e) = machine.mkfs(image.device(), &fs.fs_type, &fs.mkfs) {
        return Some(mkfs_refused(&e));
    }
    match machine.mount(Some(image.device()), &mnt, &fs.fs_type, &fs.mount) {
        Ok(_) => {
            if machine.umount(&mnt).is_err() {
                machine.umount_lazy(&mnt);
            }
            None
        }
        Err(e) => Some(mount_refused(&fs.mount, &e)),
    }
}

/// Why a filesystem could not be made: its mkfs failed (the reason a cell on it was not run).
pub fn mkfs_refused(e: &dyn std::fmt::Display) -> String {
    format!("mkfs failed: {e}")
}

/// Why a filesystem could not be mounted with `options` (the reason a cell on it was not run).
pub fn mount_refused(options: &str, e: &dyn std::fmt::Display) -> String {
    format!("mount -o {options} failed: {e}")
}

/// A `[device] dir` target and the filesystem mounted there; an error when it is not an
/// existing directory. `None` for the other targets.
fn dir_target<'a>(
    study: &'a Study,
    machine: &dyn Machine,
) -> Result<Option<(&'a Path, crate::filesystem::mountinfo::MountEntry)>, LabError> {
    let Target::Dir { path } = &study.device.target else {
        return Ok(None);
    };
    let refused = |reason: String| LabError::Refused {
        device: path.clone(),
        reason,
    };
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            return Err(refused(
                "[device] dir names something that is not a directory".to_string(),
            ))
        }
        Err(e) => return Err(refused(format!("[device] dir must be an existing directory: {e}"))),
    }
    Ok(Some((path, machine.mounted_at(path)?)))
}

/// Why this machine cannot run `cell`'s workload (its tool lacks a file the machine should
/// provide, such as dbench's loadfile), or `None` when it can; bad input is an error. `checked`
/// keeps each command line's verdict, so that one read by many cells is checked once.
pub fn workload_unsupported(
    study: &Study,
    cell: &matrix::Cell,
    checked: &mut BTreeMap<Vec<String>, Option<String>>,
) -> Result<Option<String>, LabError> {
    let w = &study.workloads[cell.workload];
    let dir = std::env::temp_dir();
    let options = cell.tool_options();
    let request = Request {
        main: w.main.as_deref(),
        options: &options,
        args: &w.args,
        dir: &dir,
        drop_caches: false,
    };
    for call in w.tool.calls(&request) {
        if call.role != Role::Measured {
            continue;
        }
        if let Some(verdict) = checked.get(&call.args) {
            if verdict.is_some() {
                return Ok(verdict.clone());
            }
            continue;
        }
        match w.tool.check(&call.args[1..]) {
            Ok(()) => {
                checked.insert(call.args, None);
            }
            Err(error) if error.kind == fslab_classic::ErrorKind::Environment => {
                let reason = error.to_string();
                checked.insert(call.args, Some(reason.clone()));
                return Ok(Some(reason));
            }
            Err(error) => {
                return Err(LabError::Workload {
                    workload: w.name.clone(),
                    cell: cell.label.clone(),
                    error,
                })
            }
        }
    }
    Ok(None)
}

/// What in `study` needs root, if anything: the lab's own filesystems (loop images or a block
/// device, mkfs, mount, the scheduler) and dropping the page cache do. A study on a `[device]
/// dir` (a shared filesystem someone else mounted) needs none of that, so a user runs it as
/// themself, as they would run IOR or mdtest there.
pub fn needs_root(study: &Study) -> Option<String> {
    match &study.device.target {
        Target::Loop { .. } => Some("a study formats and mounts filesystems on loop devices".into()),
        Target::Block { path, .. } => Some(format!(
            "a study formats and mounts filesystems on its [device] block {}",
            path.display()
        )),
        Target::Dir { .. } if study.drop_caches => {
            Some("this study drops the page cache before each run (drop_caches = true)".into())
        }
        Target::Dir { .. } => None,
    }
}

/// Refuses a study that needs root when fslab does not run as root, saying why.
fn ready(study: &Study, machine: &dyn Machine) -> Result<(), LabError> {
    match needs_root(study) {
        Some(why) if !machine.is_root() => Err(LabError::NotRoot(why)),
        _ => Ok(()),
    }
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
    let verdicts = preflight(study, form, machine)?;
    ready(study, machine)?;
    if verdicts.iter().all(Option::is_some) {
        return Err(LabError::NothingRuns(nothing_runs(study, form, &verdicts)));
    }
    check_device(study, yes)?;
    let store = Store::open(db)?;
    let text = std::fs::read_to_string(file).map_err(|e| LabError::io(file.display().to_string(), e))?;
    let file = file.canonicalize().unwrap_or_else(|_| file.to_path_buf());
    // The test bed, with the study's device when it names one.
    let mut devices: Vec<PathBuf> = match &study.device.target {
        Target::Block { path, .. } => vec![path.clone()],
        Target::Loop { .. } | Target::Dir { .. } => Vec::new(),
    };
    devices.extend(log_devices(study).map(|(path, _)| path.to_path_buf()));
    let mut testbed = crate::testbed::TestBed::capture(&devices);
    if let Some((path, mounted)) = dir_target(study, machine)? {
        testbed.target = Some(crate::testbed::DirTarget::new(path, &mounted));
    }
    let testbed = serde_json::to_value(testbed).expect("the test bed serialises");
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
        ready(study, machine)?;
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

/// A study's status as a user should see it: a study recorded as running whose runner has died
/// (killed, or the machine rebooted) is interrupted, and `study resume` takes it up.
pub fn status_now(store: &Store, study: StudyId, recorded: StudyStatus) -> Result<StudyStatus, LabError> {
    if recorded != StudyStatus::Running {
        return Ok(recorded);
    }
    Ok(match store.runner(study)? {
        Some(r) if runner_alive(r) => StudyStatus::Running,
        _ => StudyStatus::Interrupted,
    })
}

/// When a process started, in clock ticks since boot: field 22 of /proc/PID/stat, counted
/// after the command name, which is in parentheses and may hold anything.
pub fn process_start(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, after) = stat.rsplit_once(')')?;
    // After the name: state (field 3) ... starttime (field 22).
    after.split_whitespace().nth(19)?.parse().ok()
}

/// Why no cell of a study can run here: each distinct reason once.
pub fn nothing_runs(study: &Study, form: Form, verdicts: &[Option<String>]) -> String {
    let mut reasons: Vec<&str> = verdicts.iter().flatten().map(String::as_str).collect();
    reasons.sort_unstable();
    reasons.dedup();
    format!(
        "no cell of study `{}` ({} form) can run on this machine: {}",
        study.name,
        form.name(),
        reasons.join("; ")
    )
}

/// Refuses a block device the study may not format: its device, and the devices its
/// filesystems' external logs are on.
fn check_device(study: &Study, yes: bool) -> Result<(), LabError> {
    if let Target::Block { path, destroy } = &study.device.target {
        crate::device::check_block_device(path, destroy.as_deref(), yes)?;
    }
    for (path, destroy) in log_devices(study) {
        crate::device::check_block_device(path, destroy, yes)?;
    }
    Ok(())
}

/// The block devices the study's filesystems put their external logs on, with what `destroy`
/// names for each.
fn log_devices(study: &Study) -> impl Iterator<Item = (&Path, Option<&Path>)> {
    study.filesystems.iter().filter_map(|f| match &f.log {
        Some(Log::Block { path, destroy }) => Some((path.as_path(), destroy.as_deref())),
        _ => None,
    })
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
