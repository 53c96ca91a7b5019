//! A test's own lab directory for `fslab study` tests: its study file, store and scratch, what
//! it leaves mounted or attached, and the release of all of it when the test ends.

use crate::common::{fslab_within, refs};
use fslab_store::Store;
use fslab_testkit::Run;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant};

/// Longer than any study of these tests takes (the longest, over three filesystems, about 20 s).
pub const STUDY_LIMIT: Duration = Duration::from_secs(120);

/// How long the kernel may take to let go of a lazily unmounted filesystem and its loop device.
pub const SETTLE: Duration = Duration::from_secs(10);

/// The seed studies each keep both CPUs busy for a minute or more and run alone; the smaller
/// studies of study.rs may run side by side, but not beside a seed. (They were apart when they
/// were test binaries of their own; in one binary this lock keeps them so.)
static STUDIES: RwLock<()> = RwLock::new(());

/// A test's turn to run studies: alone, or beside other tests' small ones.
enum Turn {
    Alone(#[allow(dead_code)] RwLockWriteGuard<'static, ()>),
    Shared(#[allow(dead_code)] RwLockReadGuard<'static, ()>),
}

// ---------------------------------------------------------------------------------------------
// The test's directory

/// A test's own directory, holding its study file, its store and its scratch. Dropping it
/// releases whatever a failing test left there: it thaws and lazily unmounts the mounts under it
/// and detaches the loop devices of images under it, then removes it.
pub struct Lab {
    _dir: tempfile::TempDir,
    /// The directory's canonical path, as /proc/self/mounts and the loop driver write it.
    pub root: PathBuf,
    /// The study file: `study.toml` here, or a study of the repository's.
    study: PathBuf,
    /// Let go last, once the directory and all in it are released.
    _turn: Turn,
}

impl Lab {
    /// A directory with `study` as its study file.
    pub fn new(study: &str) -> Lab {
        let lab = Lab::of_file(Path::new("study.toml"));
        lab.write_study(study);
        lab
    }

    /// A directory for running the study file `study` (relative: to the directory), beside
    /// other tests' small studies.
    pub fn of_file(study: &Path) -> Lab {
        let turn = Turn::Shared(STUDIES.read().unwrap_or_else(|e| e.into_inner()));
        Lab::with_turn(study, turn)
    }

    /// [`Lab::of_file`] for a study that runs alone: no other test's study runs beside it.
    pub fn alone(study: &Path) -> Lab {
        let turn = Turn::Alone(STUDIES.write().unwrap_or_else(|e| e.into_inner()));
        Lab::with_turn(study, turn)
    }

    fn with_turn(study: &Path, turn: Turn) -> Lab {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let root = dir.path().canonicalize().expect("the temporary directory's path");
        let study = root.join(study);
        Lab {
            _dir: dir,
            root,
            study,
            _turn: turn,
        }
    }

    pub fn study_file(&self) -> PathBuf {
        self.study.clone()
    }

    /// Writes the study file, which must be the directory's own.
    pub fn write_study(&self, text: &str) {
        assert!(
            self.study.starts_with(&self.root),
            "{} is not the test's own study file",
            self.study.display()
        );
        std::fs::write(&self.study, text).expect("write the study file");
    }

    pub fn db(&self) -> PathBuf {
        self.root.join("x.db")
    }

    pub fn store(&self) -> Store {
        assert!(self.db().exists(), "no store at {}", self.db().display());
        Store::open(self.db()).expect("open the store")
    }

    /// `fslab study run STUDY --db DB --scratch DIR EXTRA...`.
    pub fn run_args(&self, extra: &[&str]) -> Vec<String> {
        let mut args: Vec<String> = ["study", "run"].map(String::from).to_vec();
        args.push(self.study_file().display().to_string());
        args.extend(["--db".to_string(), self.db().display().to_string()]);
        args.extend(["--scratch".to_string(), self.root.display().to_string()]);
        args.extend(extra.iter().map(|s| s.to_string()));
        args
    }

    pub fn run_study(&self, extra: &[&str]) -> Run {
        fslab_within(None, &[], &refs(&self.run_args(extra)), STUDY_LIMIT)
    }

    /// `fslab WORDS... --db DB`.
    pub fn fslab(&self, words: &[&str]) -> Run {
        let db = self.db().display().to_string();
        fslab_within(None, &[], &[words, &["--db", &db]].concat(), STUDY_LIMIT)
    }

    /// Mount points beneath the directory, deepest first.
    pub fn mounts(&self) -> Vec<PathBuf> {
        let table = std::fs::read_to_string("/proc/self/mounts").expect("read /proc/self/mounts");
        let mut points: Vec<PathBuf> = table
            .lines()
            .filter_map(|l| l.split_whitespace().nth(1))
            .map(|p| PathBuf::from(p.replace("\\040", " ")))
            .filter(|p| p.starts_with(&self.root))
            .collect();
        points.sort_by_key(|p| std::cmp::Reverse(p.as_os_str().len()));
        points
    }

    /// Loop devices backed by a file beneath the directory (what `losetup -a` lists, from sysfs),
    /// as "/dev/loopN (backing file)".
    pub fn loops(&self) -> Vec<String> {
        let Ok(devices) = std::fs::read_dir("/sys/block") else {
            return Vec::new();
        };
        let mut found: Vec<String> = devices
            .flatten()
            .filter_map(|d| {
                let backing = std::fs::read_to_string(d.path().join("loop/backing_file")).ok()?;
                let backing = backing.trim_end();
                let file = backing.strip_suffix(" (deleted)").unwrap_or(backing);
                Path::new(file)
                    .starts_with(&self.root)
                    .then(|| format!("/dev/{} ({backing})", d.file_name().to_string_lossy()))
            })
            .collect();
        found.sort();
        found
    }

    /// Nothing mounted beneath the directory, no loop device on a file in it (after the moment
    /// the kernel takes to let go of lazily unmounted ones), and no scratch directory of a study.
    pub fn assert_clean(&self) {
        let t0 = Instant::now();
        while t0.elapsed() < SETTLE && !(self.mounts().is_empty() && self.loops().is_empty()) {
            std::thread::sleep(Duration::from_millis(100));
        }
        assert_eq!(self.mounts(), Vec::<PathBuf>::new(), "left mounted");
        assert_eq!(self.loops(), Vec::<String>::new(), "loop devices left attached");
        let scratch: Vec<String> = fslab_testkit::entries(&self.root)
            .into_iter()
            .filter(|e| e.starts_with("fslab-study-"))
            .collect();
        assert!(
            scratch.is_empty(),
            "the lab's scratch directories are left: {scratch:?}"
        );
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        for pid in self.processes() {
            if let Some(pid) = rustix::process::Pid::from_raw(pid) {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            }
        }
        for m in self.mounts() {
            quietly("fsfreeze", &["-u".as_ref(), m.as_os_str()]);
            quietly("umount", &["-l".as_ref(), m.as_os_str()]);
        }
        // A frozen filesystem outlives its lazy unmount until it is thawed, holding its loop
        // device (and any process blocked on it): mount it again to reach it, and thaw it.
        let again = self.root.join("release");
        for l in self.loops() {
            let dev = l.split_whitespace().next().unwrap_or_default();
            let _ = std::fs::create_dir(&again);
            quietly("mount", &[dev.as_ref(), again.as_os_str()]);
            quietly("fsfreeze", &["-u".as_ref(), again.as_os_str()]);
            quietly("umount", &[again.as_os_str()]);
            quietly("losetup", &["-d".as_ref(), dev.as_ref()]);
        }
    }
}

impl Lab {
    /// The processes still running that the test started (fslab and its workers): all name the
    /// directory on their command line.
    pub fn processes(&self) -> Vec<i32> {
        let root = self.root.display().to_string();
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        entries
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
            .filter(|pid| {
                std::fs::read(format!("/proc/{pid}/cmdline"))
                    .is_ok_and(|c| String::from_utf8_lossy(&c).split('\0').any(|a| a.contains(&root)))
            })
            .collect()
    }
}

pub fn quietly(program: &str, args: &[&std::ffi::OsStr]) {
    let _ = Command::new(program).args(args).output();
}
