//! CPU accounting over a measured window, in the style of `sar -u`.
//!
//! Take a [`CpuSnapshot`] before and after the measured work, then turn the
//! pair into a [`CpuUsage`] with [`CpuUsage::between`]. A snapshot records:
//!
//! * the aggregate `cpu` line of `/proc/stat` (jiffies spent in user, nice,
//!   system, idle, iowait, irq, softirq and steal), from which the
//!   system-wide percentage breakdown is computed, and
//! * this process's `getrusage(RUSAGE_SELF)` user and system CPU time and its
//!   voluntary and involuntary context switches, with those of the worker
//!   processes it has waited for (`RUSAGE_CHILDREN`).
//!
//! Note that the kernel already counts guest time inside `user` (and
//! guest_nice inside `nice`), so the guest columns are deliberately ignored.
//!
//! Taking a snapshot never panics: if `/proc/stat` cannot be read or parsed,
//! the system-wide part is simply absent and the resulting percentages are
//! all zero.

use serde::{Deserialize, Serialize};

/// Cumulative jiffy counters of the aggregate `cpu` line of `/proc/stat`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Jiffies {
    user: u64,
    nice: u64,
    system: u64,
    idle: u64,
    iowait: u64,
    irq: u64,
    softirq: u64,
    steal: u64,
}

impl Jiffies {
    /// Per-field difference `self - earlier`, clamped at zero (counters can
    /// appear to go backwards, e.g. when CPUs are taken offline).
    fn delta_since(&self, earlier: &Jiffies) -> Jiffies {
        Jiffies {
            user: self.user.saturating_sub(earlier.user),
            nice: self.nice.saturating_sub(earlier.nice),
            system: self.system.saturating_sub(earlier.system),
            idle: self.idle.saturating_sub(earlier.idle),
            iowait: self.iowait.saturating_sub(earlier.iowait),
            irq: self.irq.saturating_sub(earlier.irq),
            softirq: self.softirq.saturating_sub(earlier.softirq),
            steal: self.steal.saturating_sub(earlier.steal),
        }
    }

    /// Sum of all fields (guest time is already included in user/nice).
    fn total(&self) -> u64 {
        self.user
            .saturating_add(self.nice)
            .saturating_add(self.system)
            .saturating_add(self.idle)
            .saturating_add(self.iowait)
            .saturating_add(self.irq)
            .saturating_add(self.softirq)
            .saturating_add(self.steal)
    }
}

/// Parses the aggregate `cpu` line out of the text of `/proc/stat`.
///
/// At least the first four columns (user, nice, system, idle) must be
/// present, as on very old kernels; missing later columns count as zero and
/// extra columns (guest, guest_nice) are ignored. Returns `None` if there is
/// no aggregate line or a column is not a number.
fn parse_proc_stat(text: &str) -> Option<Jiffies> {
    let line = text.lines().find(|line| {
        let mut words = line.split_whitespace();
        words.next() == Some("cpu")
    })?;
    let mut values = [0u64; 8];
    let mut count = 0;
    for (slot, word) in values.iter_mut().zip(line.split_whitespace().skip(1)) {
        *slot = word.parse().ok()?;
        count += 1;
    }
    if count < 4 {
        return None;
    }
    let [user, nice, system, idle, iowait, irq, softirq, steal] = values;
    Some(Jiffies {
        user,
        nice,
        system,
        idle,
        iowait,
        irq,
        softirq,
        steal,
    })
}

/// Reads and parses the aggregate line of `/proc/stat`; `None` if either step fails.
///
/// One read at offset 0 of a descriptor opened once per process (the kernel makes the text anew
/// for each read from the start), of the first line only. A run takes two snapshots; opening the
/// file and reading all of it (a line per CPU, then every interrupt's count) cost an open, a
/// stat and some 16 reads each time, which IOzone's automatic mode, whose runs make a few
/// transfers each, showed among the calls it counts.
fn read_proc_stat() -> Option<Jiffies> {
    use std::os::unix::fs::FileExt;
    static STAT: std::sync::OnceLock<Option<std::fs::File>> = std::sync::OnceLock::new();
    let file = STAT.get_or_init(|| std::fs::File::open("/proc/stat").ok()).as_ref()?;
    let mut buf = [0u8; 1024];
    let n = file.read_at(&mut buf, 0).ok()?;
    let line = buf[..n]
        .split(|&b| b == b'\n')
        .next()
        .filter(|_| buf[..n].contains(&b'\n'))?;
    parse_proc_stat(std::str::from_utf8(line).ok()?)
}

/// This process's resource usage as reported by `getrusage(RUSAGE_SELF)`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct ProcessTimes {
    user_micros: u64,
    system_micros: u64,
    voluntary_ctx_switches: u64,
    involuntary_ctx_switches: u64,
}

fn timeval_micros(tv: &libc::timeval) -> u64 {
    let secs = u64::try_from(tv.tv_sec).unwrap_or(0);
    let micros = u64::try_from(tv.tv_usec).unwrap_or(0);
    secs.saturating_mul(1_000_000).saturating_add(micros)
}

/// `getrusage(who)`; None in the (practically impossible) case that it fails.
fn rusage(who: libc::c_int) -> Option<libc::rusage> {
    // SAFETY: `rusage` is a plain C struct for which all-zero bytes is a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid, writable `rusage` for the whole call; getrusage only writes it.
    (unsafe { libc::getrusage(who, &mut usage) } == 0).then_some(usage)
}

/// The CPU time (user and system) this process has used so far, as `getrusage(RUSAGE_SELF)`
/// gives it: what IOzone's children read at their start and at their figures (`-+u`).
pub fn process_cpu_time() -> std::time::Duration {
    rusage(libc::RUSAGE_SELF).map_or(std::time::Duration::ZERO, |u| {
        std::time::Duration::from_micros(timeval_micros(&u.ru_utime) + timeval_micros(&u.ru_stime))
    })
}

/// This process's `getrusage(RUSAGE_SELF)` plus that of the children it has waited for
/// (`RUSAGE_CHILDREN`), so that a run's worker processes (`Workload::processes`), reaped before
/// its last snapshot, count as its threads would. Two snapshots are subtracted, so children
/// reaped before the first one cancel out. All zeros in the (practically impossible) case that
/// it fails.
fn read_rusage() -> ProcessTimes {
    let get = |who| {
        rusage(who).map_or_else(ProcessTimes::default, |usage| ProcessTimes {
            user_micros: timeval_micros(&usage.ru_utime),
            system_micros: timeval_micros(&usage.ru_stime),
            voluntary_ctx_switches: u64::try_from(usage.ru_nvcsw).unwrap_or(0),
            involuntary_ctx_switches: u64::try_from(usage.ru_nivcsw).unwrap_or(0),
        })
    };
    let (me, children) = (get(libc::RUSAGE_SELF), get(libc::RUSAGE_CHILDREN));
    ProcessTimes {
        user_micros: me.user_micros + children.user_micros,
        system_micros: me.system_micros + children.system_micros,
        voluntary_ctx_switches: me.voluntary_ctx_switches + children.voluntary_ctx_switches,
        involuntary_ctx_switches: me.involuntary_ctx_switches + children.involuntary_ctx_switches,
    }
}

/// A point-in-time reading of system-wide and per-process CPU counters.
///
/// Holds the aggregate `cpu` line of `/proc/stat` (absent if it could not be
/// read) and this process's `getrusage(RUSAGE_SELF)` times and context
/// switch counts. Two snapshots are compared with [`CpuUsage::between`].
#[derive(Debug, Clone)]
pub struct CpuSnapshot {
    system: Option<Jiffies>,
    process: ProcessTimes,
}

impl CpuSnapshot {
    /// Takes a snapshot now, with the machine-wide part when `machine`. Never panics; if
    /// `/proc/stat` is unreadable the machine-wide part is missing.
    pub fn take(machine: bool) -> CpuSnapshot {
        CpuSnapshot {
            system: if machine { read_proc_stat() } else { None },
            process: read_rusage(),
        }
    }
}

/// CPU usage over the window between two [`CpuSnapshot`]s.
///
/// The first eight fields are system-wide percentages of all CPU time (over
/// all CPUs) in the window and sum to 100 when the window contained any
/// ticks; they are all zero if the window had no ticks or either snapshot
/// lacked `/proc/stat` data. The remaining fields describe this process only, with the worker
/// processes of a run of `processes`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CpuUsage {
    /// Percentage of time in user mode (includes guest time).
    #[serde(rename = "user_pct", alias = "user")]
    pub user: f64,
    /// Percentage of time in user mode at reduced priority (niced).
    #[serde(rename = "nice_pct", alias = "nice")]
    pub nice: f64,
    /// Percentage of time in kernel mode.
    #[serde(rename = "system_pct", alias = "system")]
    pub system: f64,
    /// Percentage of time idle with outstanding disk I/O.
    #[serde(rename = "iowait_pct", alias = "iowait")]
    pub iowait: f64,
    /// Percentage of time servicing hardware interrupts.
    #[serde(rename = "irq_pct", alias = "irq")]
    pub irq: f64,
    /// Percentage of time servicing software interrupts.
    #[serde(rename = "softirq_pct", alias = "softirq")]
    pub softirq: f64,
    /// Percentage of time stolen by the hypervisor.
    #[serde(rename = "steal_pct", alias = "steal")]
    pub steal: f64,
    /// Percentage of time idle.
    #[serde(rename = "idle_pct", alias = "idle")]
    pub idle: f64,
    /// User CPU seconds consumed by this process in the window.
    pub process_user_secs: f64,
    /// System CPU seconds consumed by this process in the window.
    pub process_system_secs: f64,
    /// Voluntary context switches of this process in the window.
    pub voluntary_ctx_switches: u64,
    /// Involuntary context switches of this process in the window.
    pub involuntary_ctx_switches: u64,
}

impl CpuUsage {
    /// Computes the usage over the window from `start` to `end`.
    pub fn between(start: &CpuSnapshot, end: &CpuSnapshot) -> CpuUsage {
        let mut usage = CpuUsage::default();

        if let (Some(before), Some(after)) = (&start.system, &end.system) {
            let delta = after.delta_since(before);
            let total = delta.total();
            if total > 0 {
                let total = total as f64;
                let pct = |ticks: u64| ticks as f64 * 100.0 / total;
                usage.user = pct(delta.user);
                usage.nice = pct(delta.nice);
                usage.system = pct(delta.system);
                usage.iowait = pct(delta.iowait);
                usage.irq = pct(delta.irq);
                usage.softirq = pct(delta.softirq);
                usage.steal = pct(delta.steal);
                usage.idle = pct(delta.idle);
            }
        }

        let (p0, p1) = (&start.process, &end.process);
        usage.process_user_secs = p1.user_micros.saturating_sub(p0.user_micros) as f64 / 1e6;
        usage.process_system_secs = p1.system_micros.saturating_sub(p0.system_micros) as f64 / 1e6;
        usage.voluntary_ctx_switches = p1.voluntary_ctx_switches.saturating_sub(p0.voluntary_ctx_switches);
        usage.involuntary_ctx_switches = p1.involuntary_ctx_switches.saturating_sub(p0.involuntary_ctx_switches);
        usage
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    const SAMPLE: &str = "\
cpu  10132153 290696 3084719 46828483 16683 0 25195 0 175628 0
cpu0 1393280 32966 572056 13343292 6130 0 17875 0 23933 0
cpu1 1335940 38426 538612 13394036 2945 0 3326 0 24455 0
intr 114930548 113199788 3 0 5 263 0 4 [...]
ctxt 1990473
btime 1062191376
processes 2915
procs_running 1
procs_blocked 0
softirq 183433 0 21755 12 39 1137 231 21459 2263
";

    #[test]
    fn proc_stat_is_read_again_from_its_start() {
        // The descriptor is opened once: each read must start the text again, not go on from
        // where the last one ended.
        let first = read_proc_stat().expect("/proc/stat's aggregate line");
        let second = read_proc_stat().expect("/proc/stat's aggregate line, read again");
        assert!(second.total() >= first.total(), "{first:?} then {second:?}");
        assert!(first.total() > 0);
    }

    #[test]
    fn parses_aggregate_line() {
        let j = parse_proc_stat(SAMPLE).expect("parse");
        assert_eq!(
            j,
            Jiffies {
                user: 10132153,
                nice: 290696,
                system: 3084719,
                idle: 46828483,
                iowait: 16683,
                irq: 0,
                softirq: 25195,
                steal: 0,
            }
        );
    }

    #[test]
    fn parses_old_kernel_with_four_columns() {
        let j = parse_proc_stat("cpu 1 2 3 4\ncpu0 1 2 3 4\n").expect("parse");
        assert_eq!(
            j,
            Jiffies {
                user: 1,
                nice: 2,
                system: 3,
                idle: 4,
                ..Jiffies::default()
            }
        );
    }

    #[test]
    fn rejects_bad_input() {
        assert_eq!(parse_proc_stat(""), None);
        // Only per-CPU lines, no aggregate.
        assert_eq!(parse_proc_stat("cpu0 1 2 3 4 5 6 7 8\n"), None);
        // Too few columns.
        assert_eq!(parse_proc_stat("cpu 1 2 3\n"), None);
        // Non-numeric column.
        assert_eq!(parse_proc_stat("cpu 1 2 x 4 5 6 7 8\n"), None);
    }

    fn snapshot(system: Option<Jiffies>, process: ProcessTimes) -> CpuSnapshot {
        CpuSnapshot { system, process }
    }

    #[test]
    fn percentages_between_hand_made_readings() {
        let start = snapshot(
            Some(Jiffies {
                user: 1000,
                nice: 50,
                system: 300,
                idle: 5000,
                iowait: 10,
                irq: 5,
                softirq: 7,
                steal: 2,
            }),
            ProcessTimes {
                user_micros: 1_000_000,
                system_micros: 500_000,
                voluntary_ctx_switches: 10,
                involuntary_ctx_switches: 3,
            },
        );
        // Deltas: user 100, nice 8, system 40, idle 200, iowait 28,
        // irq 4, softirq 12, steal 8 => 400 ticks in total.
        let end = snapshot(
            Some(Jiffies {
                user: 1100,
                nice: 58,
                system: 340,
                idle: 5200,
                iowait: 38,
                irq: 9,
                softirq: 19,
                steal: 10,
            }),
            ProcessTimes {
                user_micros: 1_250_000,
                system_micros: 625_000,
                voluntary_ctx_switches: 17,
                involuntary_ctx_switches: 5,
            },
        );
        let usage = CpuUsage::between(&start, &end);
        assert_eq!(
            usage,
            CpuUsage {
                user: 25.0,
                nice: 2.0,
                system: 10.0,
                iowait: 7.0,
                irq: 1.0,
                softirq: 3.0,
                steal: 2.0,
                idle: 50.0,
                process_user_secs: 0.25,
                process_system_secs: 0.125,
                voluntary_ctx_switches: 7,
                involuntary_ctx_switches: 2,
            }
        );
        let sum = usage.user
            + usage.nice
            + usage.system
            + usage.iowait
            + usage.irq
            + usage.softirq
            + usage.steal
            + usage.idle;
        assert_eq!(sum, 100.0);
    }

    #[test]
    fn empty_or_missing_system_data_gives_zero_percentages() {
        let j = Jiffies {
            user: 5,
            nice: 0,
            system: 5,
            idle: 5,
            ..Jiffies::default()
        };
        let same = CpuUsage::between(
            &snapshot(Some(j), ProcessTimes::default()),
            &snapshot(Some(j), ProcessTimes::default()),
        );
        assert_eq!(same, CpuUsage::default());

        let missing = CpuUsage::between(
            &snapshot(None, ProcessTimes::default()),
            &snapshot(Some(j), ProcessTimes::default()),
        );
        assert_eq!(missing, CpuUsage::default());
    }

    #[test]
    fn busy_loop_consumes_user_time() {
        let start = CpuSnapshot::take(true);
        let t0 = Instant::now();
        let mut x: u64 = 0;
        while t0.elapsed() < Duration::from_millis(50) {
            for i in 0..10_000u64 {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
            }
        }
        std::hint::black_box(x);
        let end = CpuSnapshot::take(true);
        let usage = CpuUsage::between(&start, &end);
        assert!(
            usage.process_user_secs > 0.0,
            "process_user_secs = {}",
            usage.process_user_secs
        );
        if start.system.is_some() && end.system.is_some() {
            let sum = usage.user
                + usage.nice
                + usage.system
                + usage.iowait
                + usage.irq
                + usage.softirq
                + usage.steal
                + usage.idle;
            // Zero if the window saw no tick at all, else 100.
            assert!(sum == 0.0 || (sum - 100.0).abs() < 1e-9, "sum = {sum}");
        }
    }
}
