//! IOzone's figures, computed from an engine [`RunResult`] the way IOzone computes them.
//!
//! - A child's throughput is what it moved ÷ its own elapsed time. With stonewalling, a child
//!   stopped by the first to finish counts only what it moved until then (`RunResult.threads`:
//!   bytes and seconds from the start to that child's stop).
//! - "Children see" is the sum of the children's throughputs (what `-R` reports).
//! - "Parent sees" is everything the children moved ÷ the wall time of the whole sub-test (the
//!   start to the last child's stop: `RunResult.duration`).
//! - "Min xfer" is the least any child moved.
//! - Every time, a child's, the parent's or automatic mode's one process's, is IOzone's: the
//!   clock's reading less its resolution (`time_res`, the "Time Resolution" line: a microsecond,
//!   gettimeofday's on Linux), and at least that resolution ([`iozone_secs`]). On a 64 kB file
//!   read in a few microseconds that is a fifth of the time.
//!
//! Units: kB = 1024 bytes, or with `-O` operations (records).

use super::compile::seat;
use super::layout::Layout;
use super::subtest::{Mix, Test};
use fslab_engine::RunResult;
use serde::Serialize;

/// IOzone's clock resolution, as its preamble prints it ("Time Resolution = 0.000001 seconds."):
/// the least step of gettimeofday() it measures at start, a microsecond on Linux.
pub const TIME_RES_SECS: f64 = 1e-6;

/// A time as IOzone counts it: what the clock read less its resolution, and at least that
/// resolution (`jtime = (time_so_far() - jstarttime) - time_res; if (jtime < time_res) jtime =
/// time_res;`, and the same for the parent's time and each automatic-mode test's).
pub fn iozone_secs(measured: f64) -> f64 {
    (measured - TIME_RES_SECS).max(TIME_RES_SECS)
}

/// Whether IOzone's clock could not resolve a time `measured` (its time less the resolution is
/// below a microsecond), which it notes at the end ([`super::print::poor_resolution`]).
pub fn below_resolution(measured: f64) -> bool {
    measured - TIME_RES_SECS < 1e-6
}

/// CPU use as IOzone's `-+u` reports it: the CPU time (user and system) of the child's process
/// over the child's own wall time (`getrusage(RUSAGE_SELF)` at its start and at its figures).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CpuUse {
    /// Seconds, at least the CPU time (IOzone raises it so).
    pub wall_secs: f64,
    pub cpu_secs: f64,
    /// 100 × CPU ÷ wall, 0 without wall time; above 100 when a process used several CPUs.
    pub percent: f64,
}

impl CpuUse {
    pub fn new(wall_secs: f64, cpu_secs: f64) -> CpuUse {
        let wall_secs = wall_secs.max(cpu_secs);
        CpuUse {
            wall_secs,
            cpu_secs,
            percent: if wall_secs > 0.0 {
                100.0 * cpu_secs / wall_secs
            } else {
                0.0
            },
        }
    }

    /// A thread's, when the run read its process's CPU time (`RunOptions::process_cpu`): its
    /// own time, as IOzone's child clocks its walltime, without the resolution taken off.
    fn of(t: &fslab_engine::result::ThreadResult) -> Option<CpuUse> {
        t.process_cpu_secs.map(|cpu| CpuUse::new(t.secs, cpu))
    }
}

/// What one child did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Child {
    pub child: usize,
    /// Its file, relative to the run directory.
    pub file: String,
    /// What it moved, in `unit`.
    pub xfer: f64,
    /// `unit` per second.
    pub throughput: f64,
    pub secs: f64,
    /// It did all its work (false: stopped by the stonewall or by an error).
    pub finished: bool,
    /// With `-+u`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu: Option<CpuUse>,
}

/// One throughput sub-test's figures, as IOzone prints them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Figures {
    pub test: Test,
    /// IOzone's name for the children: "initial writers".
    pub name: &'static str,
    pub children: usize,
    /// "kB" (1024 bytes) or "ops" (records, with -O).
    pub unit: &'static str,
    pub children_see: f64,
    pub parent_sees: f64,
    pub min_throughput: f64,
    pub max_throughput: f64,
    pub avg_throughput: f64,
    pub min_xfer: f64,
    /// The wall time the parent saw, seconds.
    pub wall_secs: f64,
    /// With `-+u`, as IOzone sums it: the children's CPU times over the longest child's wall
    /// time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu: Option<CpuUse>,
    pub per_child: Vec<Child>,
}

/// The figures of a throughput sub-test, run as a job of `ranks` ranks (`crate::job`; 1 without
/// MPI), whose merged result holds every rank's children: rank r's child k is the job's child
/// `r × children + k`, its thread numbered after the same group's threads of the ranks before it,
/// its file in `rank.r/`. `mix` decides the mixed workload's readers and writers ([`seat`]).
/// `unit_bytes` is 1024 for kB, the record size for ops.
pub fn throughput(
    test: Test,
    result: &RunResult,
    (layout, mix): (&Layout, Mix),
    unit_bytes: u64,
    ops: bool,
    ranks: usize,
) -> Figures {
    let unit = unit_bytes as f64;
    let per_rank = layout.children();
    let per_child: Vec<Child> = (0..per_rank * ranks)
        .map(|i| {
            let (rank, local) = (i / per_rank.max(1), i % per_rank.max(1));
            let (place, k) = layout.of_child(local);
            let seat = seat(test, mix, layout, place, k);
            let thread = rank as u32 * seat.threads + seat.thread;
            let t = result
                .threads
                .iter()
                .find(|t| t.group == seat.group && t.thread == thread);
            let file = place.file_path(seat.file);
            let (bytes, secs, finished) = t.map_or((0, 0.0, false), |t| (t.bytes, iozone_secs(t.secs), t.finished));
            let cpu = t.and_then(CpuUse::of);
            let xfer = bytes as f64 / unit;
            Child {
                child: i,
                file: if ranks > 1 { format!("rank.{rank}/{file}") } else { file },
                xfer,
                throughput: if secs > 0.0 { xfer / secs } else { 0.0 },
                secs,
                finished,
                cpu,
            }
        })
        .collect();
    let cpus: Vec<CpuUse> = per_child.iter().filter_map(|c| c.cpu).collect();
    // The children's CPU times summed, over the longest child's wall time: with several
    // children the percentage passes 100 (IOzone does not raise this wall time).
    let cpu = (!cpus.is_empty()).then(|| {
        let wall_secs = cpus.iter().map(|c| c.wall_secs).fold(0.0, f64::max);
        let cpu_secs = cpus.iter().map(|c| c.cpu_secs).sum();
        CpuUse {
            percent: if wall_secs > 0.0 {
                100.0 * cpu_secs / wall_secs
            } else {
                0.0
            },
            wall_secs,
            cpu_secs,
        }
    });
    let n = per_child.len().max(1) as f64;
    let children_see: f64 = per_child.iter().map(|c| c.throughput).sum();
    let total: f64 = per_child.iter().map(|c| c.xfer).sum();
    let wall = iozone_secs(result.duration.as_secs_f64());
    let min = |f: fn(&Child) -> f64| per_child.iter().map(f).fold(f64::INFINITY, f64::min);
    let max_throughput = per_child.iter().map(|c| c.throughput).fold(0.0, f64::max);
    Figures {
        test,
        name: test.children_name(),
        children: per_child.len(),
        unit: if ops { "ops" } else { "kB" },
        children_see,
        parent_sees: if wall > 0.0 { total / wall } else { 0.0 },
        min_throughput: if per_child.is_empty() {
            0.0
        } else {
            min(|c| c.throughput)
        },
        max_throughput,
        avg_throughput: children_see / n,
        min_xfer: if per_child.is_empty() { 0.0 } else { min(|c| c.xfer) },
        wall_secs: wall,
        cpu,
        per_child,
    }
}

/// Automatic mode's CPU use with `-+u`: its one process's over the measurement.
pub fn single_cpu(result: &RunResult) -> Option<CpuUse> {
    result.threads.first().and_then(CpuUse::of)
}

/// Automatic mode's figure: the one process's throughput, `unit` per second.
///
/// IOzone's single process times its own loop of writes (or reads), its file opened before and
/// with `-e` its fsync inside; the engine's thread does the same with its own clock
/// (`stop.child_end`: from its start after the start line to its figures), so neither the run's
/// setup nor the start line weighs on a 64 kB file.
pub fn single(result: &RunResult, unit_bytes: u64) -> f64 {
    let Some(t) = result.threads.first() else {
        return 0.0;
    };
    t.bytes as f64 / unit_bytes as f64 / iozone_secs(t.secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_under_two_microseconds_are_below_the_resolution() {
        // Less the microsecond of resolution, under a microsecond: IOzone's `res_prob`.
        assert!(below_resolution(1.9e-6));
        assert!(!below_resolution(2.1e-6));
    }

    #[test]
    fn times_are_iozones_less_its_clock_resolution() {
        // 64 kB read in 5 µs: IOzone counts 4 µs, 16,000,000 kB/s.
        assert!((64.0 / iozone_secs(5e-6) - 16_000_000.0).abs() < 1.0);
        // Below the resolution, the resolution.
        assert_eq!(iozone_secs(0.5e-6), 1e-6);
        assert_eq!(iozone_secs(0.0), 1e-6);
        // A second is a second, less a microsecond.
        assert_eq!(iozone_secs(1.0), 1.0 - 1e-6);
    }
}
