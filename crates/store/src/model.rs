//! The records the store keeps and hands back. What the lab writes is named `New…`, `…Spec` or
//! `…Record`; what a query returns is named `…Row` or `…Summary`.

use fslab_engine::cpu::CpuUsage;
use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

pub type StudyId = i64;
pub type CellId = i64;
pub type RunId = i64;

/// A study as it starts.
#[derive(Debug, Clone, PartialEq)]
pub struct NewStudy {
    pub name: String,
    /// Absolute path of the study file.
    pub file: String,
    /// The study file as written.
    pub text: String,
    /// RFC 3339.
    pub started_at: String,
    pub testbed: serde_json::Value,
    pub planned_runs: u64,
    /// "full", or "quick" for a study's quick form (`--quick`): resume runs the same form.
    pub form: String,
}

/// Where a study stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StudyStatus {
    Running,
    Complete,
    Interrupted,
}

/// One cell of a study's matrix: a filesystem configuration and a workload with its parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct CellSpec {
    /// Unique within its study and stable across resume (the lab builds it).
    pub key: String,
    /// Order of the cell in the study's matrix.
    pub ordinal: u32,
    /// The study's name for the filesystem configuration, e.g. "ext4-flexbg".
    pub filesystem: String,
    /// ext4, xfs, btrfs, tmpfs, jfs...
    pub fs_type: String,
    pub mkfs_options: String,
    pub mount_options: String,
    pub scheduler: Option<String>,
    pub read_ahead_kb: Option<u64>,
    /// The utilisation the filesystem is filled to before the runs (0.4 for 40%); `None`: not
    /// filled.
    pub fill_to: Option<f64>,
    /// The study's workload name.
    pub workload: String,
    /// "run", "ffsb", "dbench", "sysbench", "iozone".
    pub tool: String,
    /// Every option's value for this cell: threads=16, clients=4...
    pub params: BTreeMap<String, String>,
    pub planned_repeats: u32,
    /// How people read the cell: `xfs mq-deadline dbench clients=4` (made by the lab, once).
    pub label: String,
    /// The filesystem configuration the cell runs on, as tables name their columns: `xfs`, or
    /// `xfs mq-deadline 40% full` when the study varies those.
    pub configuration: String,
    /// The workload's options that vary across the study, with this cell's values, in order:
    /// the row of the workload's tables (`clients=4`).
    pub axes: Vec<(String, String)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CellStatus {
    Pending,
    Done,
    Unsupported,
    Failed,
    Hung,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunStatus {
    Ok,
    Failed,
    Hung,
}

/// One step of a cell's life (mkfs, mount, fill, fsck...), timed.
#[derive(Debug, Clone, PartialEq)]
pub struct StepRecord {
    pub name: String,
    /// The repeat the step belongs to; none for a step of the whole cell.
    pub repeat: Option<u32>,
    pub duration: Duration,
    pub cpu: CpuUsage,
    pub ok: bool,
    /// The tool's command line or message, whatever explains the step.
    pub detail: String,
}

pub use fslab_engine::Metric;

/// One run of a cell, as the lab records it the moment the run ends.
#[derive(Debug, Clone)]
pub struct RunRecord {
    pub repeat: u32,
    /// An uncounted warm-up run.
    pub warmup: bool,
    pub status: RunStatus,
    pub error: Option<String>,
    /// RFC 3339.
    pub started_at: String,
    pub wall: Duration,
    /// Each engine run of this run, named by phase ("run", or IOzone's "write", "read"...).
    pub results: Vec<(String, fslab_engine::RunResult)>,
    /// The tool's own figures, as its front-end reported them (dbench's operation table...).
    pub figures: Option<serde_json::Value>,
    /// The figures the report compares (dbench MB/sec, sysbench MiB/s...), the headline marked.
    pub metrics: Vec<Metric>,
    /// The text the original tool prints for this run.
    pub report: Option<String>,
    /// Effective mount options read back, scheduler read back... (what the cell really ran on).
    pub environment: serde_json::Value,
}

/// A stored study.
#[derive(Debug, Clone, PartialEq)]
pub struct StudyRow {
    pub id: StudyId,
    pub name: String,
    pub file: String,
    pub text: String,
    pub started_at: String,
    /// When the study was last marked complete or interrupted (RFC 3339).
    pub finished_at: Option<String>,
    pub status: StudyStatus,
    pub testbed: serde_json::Value,
    pub planned_runs: u64,
    /// "full", or "quick" for a study's quick form (`--quick`): resume runs the same form.
    pub form: String,
}

/// A line of `fslab study list`.
#[derive(Debug, Clone, PartialEq)]
pub struct StudySummary {
    pub id: StudyId,
    pub name: String,
    pub started_at: String,
    pub status: StudyStatus,
    pub cells: u64,
    /// Measured (non-warm-up) runs recorded, whatever their status.
    pub runs_done: u64,
    /// Of those, the ones that ended well.
    pub runs_ok: u64,
    pub planned_runs: u64,
    pub unsupported_cells: u64,
    pub failed_cells: u64,
    pub hung_cells: u64,
}

/// A stored cell.
#[derive(Debug, Clone, PartialEq)]
pub struct CellRow {
    pub id: CellId,
    pub study_id: StudyId,
    pub spec: CellSpec,
    pub status: CellStatus,
    /// Why the cell is unsupported, failed or hung.
    pub reason: Option<String>,
}

/// A stored step.
#[derive(Debug, Clone, PartialEq)]
pub struct StepRow {
    pub id: i64,
    pub cell_id: CellId,
    pub step: StepRecord,
}

/// A stored run, with what reports need without opening its full results.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRow {
    pub id: RunId,
    pub cell_id: CellId,
    pub repeat: u32,
    pub warmup: bool,
    pub status: RunStatus,
    pub error: Option<String>,
    pub started_at: String,
    pub wall: Duration,
    pub metrics: Vec<Metric>,
    /// The CPU split of the "run" phase, or of the first phase when none is named so; none when
    /// the run has no result (it hung).
    pub cpu: Option<CpuUsage>,
    /// The tool's own figures.
    pub figures: Option<serde_json::Value>,
    pub environment: serde_json::Value,
}

/// One second of a result's per-second series.
#[derive(Debug, Clone, PartialEq)]
pub struct SeriesPoint {
    /// Seconds since the threads started, at the end of this sample.
    pub t: f64,
    /// The second was part of the warm-up (ramp), left out of the statistics.
    pub ramp: bool,
    pub ops: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// The longest script step that ended in this second, in microseconds.
    pub max_latency_us: Option<f64>,
    /// Latency of the operations timed in this second; none when nothing was timed.
    pub latency: Option<fslab_engine::result::SecondLatency>,
    /// Operations of each type in this second.
    pub by_op: BTreeMap<String, u64>,
}

/// The text a status is stored as, and back.
macro_rules! stored_as_text {
    ($ty:ident { $($variant:ident = $text:literal),+ $(,)? }) => {
        impl $ty {
            pub fn as_str(self) -> &'static str {
                match self {
                    $($ty::$variant => $text),+
                }
            }

            /// The status stored as `text`; none for text no status is stored as.
            pub fn from_text(text: &str) -> Option<$ty> {
                match text {
                    $($text => Some($ty::$variant),)+
                    _ => None,
                }
            }
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

stored_as_text!(StudyStatus { Running = "running", Complete = "complete", Interrupted = "interrupted" });
stored_as_text!(CellStatus {
    Pending = "pending",
    Done = "done",
    Unsupported = "unsupported",
    Failed = "failed",
    Hung = "hung",
});
stored_as_text!(RunStatus { Ok = "ok", Failed = "failed", Hung = "hung" });

/// The process running a study: its pid, and when it started (the kernel's start time of the
/// process, in clock ticks since boot), so that a pid the kernel gave to another process since
/// is not taken for the runner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Runner {
    pub pid: u32,
    pub started: u64,
}

/// What [`crate::Store::claim_study`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// Another live process runs the study: nothing changed.
    Busy(Runner),
    /// The study is this process's now. `left`: the scratch directory of a runner that died
    /// without letting go (killed, crashed), where it may have left mounts and loop devices.
    Claimed { left: Option<String> },
}
