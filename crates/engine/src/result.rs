//! RunResult: everything one run measured, as `--json` prints it and the store keeps it.

use crate::calls::Call;
use crate::cpu::CpuUsage;
use crate::histogram::Latency;
use crate::io::checked::Mismatch;
use crate::sysinfo::SystemInfo;
use crate::workload::{OpKind, Workload};
use serde::{Deserialize, Serialize};
use std::time::Duration;

// Defined where they belong, lower down; re-exported here, where the other crates name them.
pub use crate::live_latency::SecondLatency;
pub use crate::units::{opt_secs, secs};

/// Version of the JSON layout of [`RunResult`]; raised on any change a reader would notice.
pub const SCHEMA_VERSION: u32 = 2;

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunResult {
    pub schema_version: u32,
    pub fslab_version: String,
    /// Start of the run, UTC, RFC 3339.
    pub started_at: String,
    pub system: SystemInfo,
    pub dir: String,
    /// The workload as compiled, with the seed that was used.
    pub workload: Workload,
    pub seed: u64,
    pub status: Status,
    /// What ended the measured phase.
    pub stopped_by: StopReason,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_error: Option<FirstError>,
    /// Untimed fileset setup, one entry per fileset.
    pub setup: Vec<SetupReport>,
    /// Measured time, from the end of the ramp to the last thread's stop (plus the final sync
    /// when it is counted inside).
    #[serde(with = "secs", rename = "duration_s", alias = "duration")]
    #[schemars(with = "f64")]
    pub duration: Duration,
    #[serde(with = "secs", rename = "ramp_s", alias = "ramp")]
    #[schemars(with = "f64")]
    pub ramp: Duration,
    /// Time the final sync() took, wherever it was counted.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "opt_secs",
        rename = "final_sync_s",
        alias = "final_sync"
    )]
    #[schemars(with = "Option<f64>")]
    pub final_sync: Option<Duration>,
    pub totals: Totals,
    /// One entry per operation type that ran, in the order of [`OpKind::ALL`]; a type's labelled
    /// entries each have their own, after its unlabelled one, in the order the labels first appear.
    pub ops: Vec<OpResult>,
    /// When the workload has several groups: each group's `ops`, over its own threads only
    /// (FFSB's per-threadgroup tables). Empty with one group, whose figures are `ops`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<GroupResult>,
    /// For script groups: one entry per label (dbench's NTCreateX, ReadX...), in the script's
    /// order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<StepResult>,
    /// For groups with `call_latency`: each kind of system call their operations made, timed
    /// apart, per group in the workload's order, then in the order of [`Call::ALL`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<CallResult>,
    /// What each thread did, in group order (IOzone's per-child figures).
    pub threads: Vec<ThreadResult>,
    /// One entry per second of the run, ramp included (`ramp` marks those seconds).
    pub series: Vec<Second>,
    pub cpu: CpuUsage,
    /// With `stop.steady`: whether and when the figure levelled off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady: Option<crate::steady::SteadyOutcome>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Ok,
    Failed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    Time,
    Ops,
    Bytes,
    Stonewall,
    /// The filesystem reached `stop.util`.
    Util,
    /// Every thread finished its streams.
    Done,
    /// The figure `stop.steady` judges levelled off.
    Steady,
    /// The caller stopped it (Ctrl-C, a closed output): the figures cover a partial run.
    Interrupted,
    Error,
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            StopReason::Time => "time",
            StopReason::Ops => "ops",
            StopReason::Bytes => "bytes",
            StopReason::Stonewall => "stonewall",
            StopReason::Util => "util",
            StopReason::Done => "done",
            StopReason::Steady => "steady",
            StopReason::Interrupted => "interrupted",
            StopReason::Error => "error",
        })
    }
}

/// The first error of the run, and how many there were in all.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FirstError {
    #[serde(flatten)]
    pub error: ThreadError,
    pub total_errors: u64,
    /// The first error of each other thread that met one before the run stopped, in thread
    /// order: the threads that were mid-operation when the first failed (sysbench prints a
    /// `FATAL:` block for each).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub others: Vec<ThreadError>,
}

/// The first thing that went wrong in a thread: the operation, the message, the OS error number
/// and the cause, when the engine knows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ThreadError {
    pub op: OpKind,
    pub message: String,
    pub errno: Option<i32>,
    /// What the engine knows of the error beyond its message, for a front-end to say it its
    /// original's way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<Cause>,
}

/// What made an error, as data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Cause {
    /// A block of `data = "checked"` failed its check: in `file`, as the message names it.
    Mismatch { file: String, mismatch: Mismatch },
    /// More operations waited for a thread than `rate.queue` holds.
    QueueFull { queue: u64 },
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Totals {
    pub ops: u64,
    pub errors: u64,
    pub skipped: u64,
    pub transactions: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub ops_per_sec: f64,
    pub transactions_per_sec: f64,
    pub read_mib_per_sec: f64,
    pub write_mib_per_sec: f64,
}

/// The figures of one operation type, or of one labelled entry of the mix (see
/// [`OpSpec::label`](crate::workload::OpSpec::label)).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct OpResult {
    pub op: OpKind,
    /// The label of the mix entries counted here; none for unlabelled entries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    pub count: u64,
    pub errors: u64,
    pub skipped: u64,
    pub bytes: u64,
    /// FFSB's transactions: one per block-sized read()/write() call, one per metadata operation.
    pub transactions: u64,
    pub ops_per_sec: f64,
    pub mib_per_sec: f64,
    pub latency: Latency,
    /// (upper bound in ns, count) of each non-empty histogram bucket.
    #[serde(rename = "histogram_ns", alias = "histogram")]
    pub histogram: Vec<(u64, u64)>,
}

/// One group's operations, counted as [`RunResult::ops`] is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GroupResult {
    pub name: String,
    pub ops: Vec<OpResult>,
}

/// One kind of system call of one group (`call_latency`): how many, and how long each took.
/// The minimum, mean and maximum are exact; the percentiles come from the histogram.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CallResult {
    pub group: String,
    pub call: Call,
    pub count: u64,
    pub latency: Latency,
    /// (upper bound in ns, count) of each non-empty histogram bucket.
    pub histogram_ns: Vec<(u64, u64)>,
}

/// The figures of one label of a script.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StepResult {
    pub name: String,
    pub count: u64,
    /// Outcomes other than the one the script expects (dbench's status checks).
    pub mismatches: u64,
    pub errors: u64,
    pub bytes: u64,
    pub ops_per_sec: f64,
    pub latency: Latency,
    #[serde(rename = "histogram_ns", alias = "histogram")]
    pub histogram: Vec<(u64, u64)>,
}

/// What one thread did over the measured phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ThreadResult {
    pub group: String,
    pub thread: u32,
    pub ops: u64,
    pub bytes: u64,
    /// From the start of the measured phase to this thread's stop.
    pub secs: f64,
    /// It ran out of work by itself (its streams ended or its quota was met).
    pub finished: bool,
    /// With [`RunOptions::process_cpu`](crate::RunOptions::process_cpu): the CPU time, user and
    /// system, its process used over the thread's own time (IOzone's `-+u`; with threads of one
    /// process, every thread's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process_cpu_secs: Option<f64>,
}

/// What setting a fileset up did, reported apart from the measured run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SetupReport {
    pub fileset: String,
    pub files: u64,
    pub bytes: u64,
    /// The files already there matched and were kept.
    pub reused: bool,
    #[serde(with = "secs", rename = "duration_s", alias = "duration")]
    #[schemars(with = "f64")]
    pub duration: Duration,
    /// Directories the run's createdir operations (FFSB's) added to the fileset, numbered on
    /// from its `dirs`; counted once the run has ended, with threads (workers as processes add
    /// theirs unseen).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub dirs_added: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One second of the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Second {
    /// Seconds since the threads started, at the end of this sample.
    #[serde(rename = "t_s", alias = "t")]
    pub t: f64,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ramp: bool,
    pub ops: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// Operations of each type in this second (types with none are left out).
    pub by_op: Vec<(OpKind, u64)>,
    /// The longest script step that ended in this second, in microseconds (script groups only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_latency_us: Option<f64>,
    /// Script sleeps that ended in this second: steps that are no operation, so not in `ops`
    /// (dbench's `Sleep` lines, which its lines column counts).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub sleeps: u64,
    /// Latency of the operations timed in this second, all types together; none when nothing
    /// was timed. For another percentile, [`Progress::latency`](crate::run::Progress::latency)
    /// holds the second's buckets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<SecondLatency>,
}

pub(crate) const MIB: f64 = 1024.0 * 1024.0;

/// `t` (seconds since the Unix epoch) as RFC 3339 UTC, e.g. `2026-11-22T04:28:24Z`.
pub fn rfc3339(t: std::time::SystemTime) -> String {
    let secs = t.duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs()) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_formats_known_instants() {
        let at = |s| std::time::UNIX_EPOCH + Duration::from_secs(s);
        assert_eq!(rfc3339(at(0)), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(at(951_782_400)), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(at(1_795_321_704)), "2026-11-22T04:28:24Z");
    }
}
