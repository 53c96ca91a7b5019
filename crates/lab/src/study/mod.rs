//! The study file: what to compare (filesystems with their mkfs and mount options, device
//! settings, workloads with their parameters) and how (repeats, fresh filesystems, caches,
//! timeouts). Any list in a device setting, a filesystem's scheduler, the fill level or a
//! workload option is an axis of the matrix ([`crate::matrix`]).
//!
//! ```toml
//! name = "large-file sequential write"
//! repeat = 3
//! timeout = "15m"
//! fresh = "repeat"            # or "cell", or "study"
//! drop_caches = true
//! warmup = false
//!
//! [device]
//! loop = { size = "16G" }     # or block = "/dev/sdc1" with destroy = "/dev/sdc1" and --yes,
//!                             # or dir = "/mnt/shared/fslab": a filesystem already mounted
//! scheduler = ["mq-deadline", "bfq"]
//! read_ahead_kb = 0
//! iosched = { front_merges = 0, write_expire = 500 }   # the scheduler's tunables (queue/iosched/)
//!
//! [[filesystem]]
//! name = "ext4-flexbg"
//! type = "ext4"
//! mkfs = "-I 256 -O flex_bg -G 64"
//! mount = "data=writeback"
//! fsck = true
//! # scheduler = "none"      # this filesystem's own schedulers, replacing [device]'s
//! # warmup = true           # this filesystem's own warm-up setting
//! # log = { size = "64m" }  # its journal or log on a second loop image (ext3, ext4, xfs), or
//! #                         # log = { block = "/dev/sdb2", destroy = "/dev/sdb2" } with --yes
//!
//! [fill]
//! to = ["empty", "40%"]     # each level is an axis value: cells on the empty and the filled fs
//!
//! [[workload]]
//! name = "seqwrite"
//! ffsb = "profiles/large-seqwrite.ffsb"
//! vary = { threads = [4, 16, 64] }
//!
//! [[workload]]
//! name = "dbench"
//! dbench = { clients = [1, 4, 8, 16], time = "60s" }
//! ```
//!
//! Here are the study's types and [`Study::from_file`], which reads the file as written (text.rs)
//! and checks it into a [`Study`] (validate.rs).

mod text;
mod validate;

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A study as written, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Study {
    pub name: String,
    pub description: String,
    /// Runs per cell: all of them with a plain `repeat = N`, the least with an adaptive repeat.
    pub repeat: u32,
    /// `repeat = { min, max, until_cov, budget }`: more runs for a cell whose headline figure
    /// still varies too much after `repeat` of them.
    pub adaptive: Option<Adaptive>,
    pub timeout: Duration,
    pub fresh: Fresh,
    pub drop_caches: bool,
    pub warmup: bool,
    pub device: Device,
    pub filesystems: Vec<Filesystem>,
    pub workloads: Vec<StudyWorkload>,
    /// Combinations left out of the matrix: each rule is a set of axis = value conditions, all of
    /// which must hold for a cell to be dropped (`filesystem`, `type`, `scheduler`,
    /// `read_ahead_kb`, `fill`, `workload` and any workload option).
    pub exclude: Vec<BTreeMap<String, String>>,
    /// `[fill]`: how each fresh filesystem is filled. Its `to` is the highest of `fill_to`; each
    /// cell is filled to its own level.
    pub fill: Option<crate::fill::FillSpec>,
    /// The levels `[fill] to` names, as fractions, 0 for `"empty"`; several make an axis (seed
    /// 004 runs dbench on the empty and on the 40% filled filesystem). Empty without `[fill]`.
    pub fill_to: Vec<f64>,
    pub age: Option<crate::age::AgeSpec>,
    /// `--quick`: what the quick form changes.
    pub quick: Quick,
    /// The directory of the study file: relative paths in it (profiles, workload files,
    /// loadfiles) are relative to it.
    pub base: PathBuf,
}

/// More runs for a cell while its headline figure varies too much, as the Phoronix Test Suite
/// does: after the cell's `repeat` runs, one more at a time while the coefficient of variation
/// of its runs is above `until_cov`, up to `max` runs, and while the extra runs of the study
/// have taken less than `budget`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Adaptive {
    pub max: u32,
    /// A fraction: 0.03 for "3%".
    pub until_cov: f64,
    /// The time the study may spend on extra runs; none: no limit but `max`.
    pub budget: Option<Duration>,
}

/// When to make a new filesystem.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fresh {
    /// Before every run.
    Repeat,
    /// Before each cell; its repeats share the filesystem.
    Cell,
    /// Once per filesystem of the study; its cells and repeats share it.
    Study,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Device {
    pub target: Target,
    /// Schedulers to compare (an axis); empty: leave the device's as it is.
    pub scheduler: Vec<String>,
    /// Read-ahead values to compare (an axis); empty: leave it.
    pub read_ahead_kb: Vec<u64>,
    /// The scheduler's tunables (`/sys/block/DEV/queue/iosched/NAME`), written after the
    /// scheduler is set, each cell; empty: leave them. Not an axis: one value each.
    pub iosched: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    /// A sparse image fslab creates in a temporary directory and removes.
    Loop { size: u64 },
    /// A block device the study names for destruction (`destroy` must repeat its path, and the
    /// user must confirm with `--yes`).
    Block { path: PathBuf, destroy: Option<PathBuf> },
    /// An existing directory on a filesystem already mounted (NFS, CephFS, Lustre or a local
    /// one), the same path on every host of an MPI job: each cell's runs go in a directory the
    /// lab makes beneath it and removes after; nothing is formatted, mounted or tuned.
    Dir { path: PathBuf },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Filesystem {
    pub name: String,
    pub fs_type: String,
    pub mkfs: String,
    pub mount: String,
    pub fsck: bool,
    /// Schedulers for this filesystem only, replacing `[device] scheduler` (seed 001 tunes the
    /// elevator per filesystem for its sync-mount runs).
    pub scheduler: Option<Vec<String>>,
    /// A warm-up run before each cell's measured runs, replacing the study's `warmup`.
    pub warmup: Option<bool>,
    /// Its journal (ext3, ext4) or log (xfs) on a device of its own, made with it each time.
    pub log: Option<Log>,
}

/// Where a filesystem's external journal or log goes (seed 001's `logdev=/dev/sda2`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Log {
    /// A sparse image of `size` bytes fslab creates beside the filesystem's and removes.
    Loop { size: u64 },
    /// A block device the study names for destruction, under the rules `[device] block` has.
    Block { path: PathBuf, destroy: Option<PathBuf> },
}

impl Log {
    /// As the report's configuration tables say it.
    pub fn describe(&self) -> String {
        match self {
            Log::Loop { size } => format!("external log on a {} loop image", fslab_engine::Bytes(*size)),
            Log::Block { path, .. } => format!("external log on {}", path.display()),
        }
    }
}

impl Filesystem {
    /// The schedulers this filesystem's cells run on: its own, else the device's.
    pub fn schedulers<'a>(&'a self, study: &'a Study) -> &'a [String] {
        self.scheduler.as_deref().unwrap_or(&study.device.scheduler)
    }

    /// Whether this filesystem's cells get a warm-up run.
    pub fn warmup(&self, study: &Study) -> bool {
        self.warmup.unwrap_or(study.warmup)
    }
}

/// The tool that runs a workload: one of fslab's front-ends, named by its key in the study file.
pub use fslab_classic::Tool;

/// One `[[workload]]`: a tool, its main argument (a workload file, an FFSB profile) and its
/// options, each a single value or a list (an axis).
#[derive(Debug, Clone, PartialEq)]
pub struct StudyWorkload {
    pub name: String,
    pub tool: Tool,
    /// The workload file or profile, resolved against the study's directory.
    pub main: Option<PathBuf>,
    /// Option name → its values, in the order written; one value is not an axis.
    pub options: Vec<(String, Vec<String>)>,
    /// Extra arguments passed as written (IOzone's repeated `-i`).
    pub args: Vec<String>,
    /// Run as a job of several ranks under mpirun (`mpi = { ranks = [1, 2, 4] }`): an axis.
    pub mpi: Option<crate::mpi::Mpi>,
}

/// What `--quick` changes: a smaller image, shorter runs, fewer repeats.
#[derive(Debug, Clone, PartialEq)]
pub struct Quick {
    pub repeat: u32,
    /// Each workload's time is capped at this.
    pub time: Duration,
    pub loop_size: Option<u64>,
    /// Per workload name: options that replace the full study's (smaller files, fewer clients).
    pub options: BTreeMap<String, Vec<(String, Vec<String>)>>,
    pub fill_to: Option<f64>,
}

/// A study file that cannot be used: where and why (`file:line:column: message`), as a workload
/// file's errors say it.
pub type StudyError = fslab_engine::workload::LoadError;

/// Filesystem types the lab knows how to make (others are refused at load time, so a typo is
/// caught before anything is formatted; the ones this machine lacks become unsupported cells).
pub const KNOWN_TYPES: [&str; 10] = [
    "ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "jfs", "reiserfs", "nilfs2", "f2fs",
];

impl Study {
    pub fn from_file(path: &Path) -> Result<Study, StudyError> {
        let file = path.display().to_string();
        let bytes = fslab_engine::input::read_file(path).map_err(|error| StudyError::Read {
            file: file.clone(),
            error,
        })?;
        let text = String::from_utf8(bytes).map_err(|e| StudyError::Read {
            file: file.clone(),
            error: std::io::Error::new(std::io::ErrorKind::InvalidData, e.utf8_error()),
        })?;
        let base = path
            .canonicalize()
            .ok()
            .and_then(|p| p.parent().map(Path::to_path_buf))
            .unwrap_or_else(|| PathBuf::from("."));
        Study::from_toml(&text, &file, &base)
    }

    /// Parses and checks a study; `file` names it in errors, `base` is where its relative paths
    /// start.
    pub fn from_toml(text: &str, file: &str, base: &Path) -> Result<Study, StudyError> {
        let raw = text::read(text, file)?;
        validate::check(raw, base).map_err(|b| text::at(text, file, &b.path, b.message))
    }
}
