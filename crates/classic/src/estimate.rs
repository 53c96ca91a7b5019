//! How long a run will take, for a study's estimate before anything runs (`study run --dry-run`
//! and the first "time left"; once runs have ended, the live progress goes by their pace).
//!
//! A run is estimated from its input as its front-end reads it: the time it is given, and where
//! the bytes it must move bound it (IOzone's files, FFSB's final sync, sysbench's prepare), those
//! bytes at an assumed speed. The speeds are what a small machine gives, a page cache of
//! gigabytes over a loop image on one virtual disk, each stated with the runs it was measured on.

use crate::iozone::{Mode, Plan as IozonePlan};
use fslab_engine::workload::{FinalSync, Group, OpKind, OpSpec, Workload};
use std::time::Duration;

const MIB: f64 = 1024.0 * 1024.0;

/// Bytes a benchmark moves through the page cache in a second, reads and writes together: FFSB's
/// small-file mix read 15.6 GB and wrote 8.0 GB in 20 s (seed 002); its create-only runs wrote
/// 4.4–13.6 GB in 5 s (seed 000), and took 13–33 s with their final sync (this model: 12–16 s;
/// seed 000's full form has run in 7m28s, 9m16s and 10m02s, against an estimate of 7m37s).
pub const PAGE_CACHE_BYTES_PER_S: f64 = 1024.0 * MIB;

/// Bytes written back to the loop image in a second, which a sync waits for: seed 002's final
/// syncs wrote the 2.2 GB that writeback leaves dirty in about 4.6 s.
pub const WRITEBACK_BYTES_PER_S: f64 = 512.0 * MIB;

/// How much the kernel lets stay dirty: writeback starts in the background above `background`
/// bytes, and writers are held back above `limit` (vm.dirty_background_ratio and vm.dirty_ratio
/// of the memory available, or their `_bytes` settings).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Dirty {
    pub background: f64,
    pub limit: f64,
}

impl Dirty {
    /// This machine's, read once; the kernel's default ratios (10% and 20%) of 8 GiB where
    /// /proc cannot be read.
    pub fn here() -> Dirty {
        static HERE: std::sync::OnceLock<Dirty> = std::sync::OnceLock::new();
        *HERE.get_or_init(|| {
            let read = |name: &str| -> Option<f64> {
                std::fs::read_to_string(format!("/proc/sys/vm/{name}"))
                    .ok()?
                    .trim()
                    .parse()
                    .ok()
            };
            let available = std::fs::read_to_string("/proc/meminfo")
                .ok()
                .and_then(|m| {
                    m.lines()
                        .find_map(|l| l.strip_prefix("MemAvailable:"))
                        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
                })
                .map_or(8.0 * 1024.0 * MIB, |kb| kb * 1024.0);
            let setting = |bytes: &str, ratio: &str, default: f64| match read(bytes) {
                Some(b) if b > 0.0 => b,
                _ => read(ratio).unwrap_or(default) / 100.0 * available,
            };
            let background = setting("dirty_background_bytes", "dirty_background_ratio", 10.0);
            let limit = setting("dirty_bytes", "dirty_ratio", 20.0);
            Dirty {
                background,
                limit: limit.max(background),
            }
        })
    }
}

/// The speed a sysbench estimate assumes for the bytes it moves, prepare included. Seed 003's
/// full form measured 7.2–7.5 s for its 2 GiB sequential runs (this gives 9 s) and 6.7–12.8 s
/// for its random ones, whose fsyncs this leaves out (5.3–5.7 s): 18m34s in all, against an
/// estimate of 20m34s.
pub const SYSBENCH_BYTES_PER_S: f64 = 512.0 * MIB;

/// `bytes` at `bytes_per_s`.
pub fn at(bytes: f64, bytes_per_s: f64) -> Duration {
    Duration::try_from_secs_f64(bytes / bytes_per_s).unwrap_or(Duration::MAX)
}

/// A sysbench run: its prepare writes the files (`file-total-size`), then it runs for its
/// time, or, with none, moves `events` blocks (fsyncs counted as blocks, as sysbench counts
/// them as events); 10 s when neither bounds it or the options do not parse.
pub fn sysbench(options: &[(String, String)], time: Option<Duration>) -> Duration {
    let mut words = vec!["fileio".to_string()];
    words.extend(options.iter().map(|(k, v)| format!("--{k}={v}")));
    // `prepare`: `run` would also want the test mode, which the bytes do not depend on.
    words.push("prepare".to_string());
    let Ok(o) = crate::sysbench::options::parse(&words).map(|i| i.options) else {
        return time.unwrap_or(Duration::from_secs(10));
    };
    let at_speed = |bytes: u64| at(bytes as f64, SYSBENCH_BYTES_PER_S);
    let prepare = at_speed(o.total_size);
    let run = match time {
        Some(t) => t,
        None if o.events == 0 => Duration::from_secs(10),
        None => Duration::from_secs(1).saturating_add(at_speed(o.events.saturating_mul(o.block_size))),
    };
    prepare.saturating_add(run)
}

/// A run bounded by `time` (its `stop.time`, or a tool's own limit): the time, and when the run
/// ends with a sync (`final_sync`), the time that sync takes ([`timed_with`] on this machine).
pub fn timed(w: &Workload, time: Duration) -> Duration {
    timed_with(w, time, Dirty::here())
}

/// [`timed`] with the kernel's dirty thresholds given. The run writes its share of what moves
/// through the page cache, and at least one operation's bytes per thread, as each thread
/// finishes the operation under way (FFSB's create of a whole file). Up to `background` all of
/// it stays dirty; beyond, writeback drains it while the run goes on, but not below
/// `background`, and the writers are held at `limit`. The final sync writes what is left.
pub fn timed_with(w: &Workload, time: Duration, dirty: Dirty) -> Duration {
    if w.stop.final_sync == FinalSync::None {
        return time;
    }
    let rate = PAGE_CACHE_BYTES_PER_S * write_share(w);
    let last_ops: f64 = w
        .groups
        .iter()
        .map(|g| {
            let largest = g
                .ops
                .iter()
                .filter(|o| o.op.writes())
                .map(|o| op_bytes(w, g, o))
                .fold(0.0, f64::max);
            largest * f64::from(g.threads)
        })
        .sum();
    let t = time.as_secs_f64();
    let written = (t * rate).max(last_ops);
    if written == 0.0 {
        return time;
    }
    // With no share of its own (writes only in the last operations), the run writes at the
    // page cache's speed.
    let rate = if rate > 0.0 { rate } else { PAGE_CACHE_BYTES_PER_S };
    let writing = t.max(written / rate);
    let left = if written <= dirty.background {
        written
    } else {
        let drained = WRITEBACK_BYTES_PER_S * (writing - dirty.background / rate).max(0.0);
        (written - drained).clamp(dirty.background, dirty.limit)
    };
    Duration::try_from_secs_f64(writing + left / WRITEBACK_BYTES_PER_S).unwrap_or(Duration::MAX)
}

/// The files a workload writes before its measured phase (untimed, but part of the run), at the
/// page cache's speed; files kept from an earlier run (`reuse`) take none.
pub fn setup(w: &Workload) -> Duration {
    let bytes: f64 = w
        .filesets
        .iter()
        .filter(|f| f.prealloc && !f.reuse)
        .map(|f| match f.until_bytes {
            Some(b) => b.0 as f64,
            None => f.files as f64 * f.size.mean(),
        })
        .sum();
    at(bytes, PAGE_CACHE_BYTES_PER_S)
}

/// The part of the bytes a workload's operations move that they write: each operation counted
/// by its weight, its group's threads and the bytes it moves (a create or a whole-file read the
/// mean size of the group's files).
fn write_share(w: &Workload) -> f64 {
    let (mut written, mut moved) = (0.0, 0.0);
    for g in &w.groups {
        let total_weight: f64 = g.ops.iter().map(|o| f64::from(o.weight)).sum();
        if total_weight == 0.0 {
            continue;
        }
        for o in &g.ops {
            let bytes = op_bytes(w, g, o) * f64::from(o.weight) / total_weight * f64::from(g.threads);
            moved += bytes;
            if o.op.writes() {
                written += bytes;
            }
        }
    }
    if moved == 0.0 {
        0.0
    } else {
        written / moved
    }
}

/// The bytes one operation moves: its `size`, else a whole file's for the operations that move
/// whole files, else one block.
fn op_bytes(w: &Workload, g: &Group, o: &OpSpec) -> f64 {
    if let Some(size) = o.size {
        return size.0 as f64;
    }
    match o.op {
        OpKind::Create | OpKind::ReadAll | OpKind::WriteAll | OpKind::SeqRead | OpKind::SeqWrite | OpKind::Rewrite => {
            let sizes: Vec<f64> = w
                .filesets
                .iter()
                .filter(|f| g.fileset.contains(&f.name))
                .map(|f| f.size.mean())
                .collect();
            if sizes.is_empty() {
                0.0
            } else {
                sizes.iter().sum::<f64>() / sizes.len() as f64
            }
        }
        _ => o.bs.map_or(0.0, |b| b.0 as f64),
    }
}

/// Bytes IOzone's writers write and sync in a second, and its readers read (from the page cache,
/// which holds the files just written) in a second. Seed 004's full form, 16 children over 2 GiB
/// of 128 MiB files on a 40%-filled 16 GiB image: initial writers 3.1–5.0 s, rewriters 1.8–1.9 s,
/// random writers 2.5–3.3 s, readers 0.28–0.43 s per sub-test.
pub const IOZONE_WRITE_BYTES_PER_S: f64 = 700.0 * MIB;
pub const IOZONE_READ_BYTES_PER_S: f64 = 4096.0 * MIB;

/// The time one IOzone measurement costs besides its bytes (the start line, the figures):
/// automatic mode makes hundreds of small measurements.
const IOZONE_PER_MEASUREMENT: Duration = Duration::from_millis(5);

/// IOzone's runs: each measurement's files at the speed of what it does, and in throughput mode
/// the pause after each sub-test but the last. Writes that reach the disk (throughput mode's,
/// whose sub-tests end with a sync, and any with `-e`, `-o` or `-I`) go at
/// [`IOZONE_WRITE_BYTES_PER_S`], the others at the page cache's speed; reads at
/// [`IOZONE_READ_BYTES_PER_S`], or the disk's with `-I`.
pub fn iozone(plan: &IozonePlan) -> Duration {
    let opts = &plan.opts;
    let throughput = matches!(plan.mode, Mode::Throughput { .. });
    let to_disk = throughput || opts.fsync || opts.osync || opts.direct;
    let mut total = Duration::ZERO;
    for (k, step) in plan.steps.iter().enumerate() {
        let bytes = step.file_size as f64 * f64::from(step.children);
        let speed = match (step.test.writes(), to_disk) {
            (true, true) => IOZONE_WRITE_BYTES_PER_S,
            (true, false) => PAGE_CACHE_BYTES_PER_S,
            (false, _) if opts.direct => IOZONE_WRITE_BYTES_PER_S,
            (false, _) => IOZONE_READ_BYTES_PER_S,
        };
        total = total
            .saturating_add(at(bytes, speed))
            .saturating_add(IOZONE_PER_MEASUREMENT);
        if throughput && k > 0 {
            total = total.saturating_add(opts.pause);
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ffsb::{compile, load, Options};
    use std::path::Path;

    const GB: f64 = 1e9;
    /// A machine with about 22 GB available: 2.2 GB dirty before writeback starts, 4.4 GB at most.
    const DIRTY: Dirty = Dirty {
        background: 2.2 * GB,
        limit: 4.4 * GB,
    };

    fn profile(name: &str, threads: Option<u32>, filesize: Option<u64>, time: u64) -> Workload {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../profiles").join(name);
        let profile = load(&path).unwrap_or_else(|e| panic!("{e}"));
        let opts = Options {
            time: Some(time),
            dir: Some(std::env::temp_dir()),
            seed: None,
            threads,
            filesize,
            drop_caches: false,
        };
        compile(&profile, &opts).unwrap_or_else(|e| panic!("{e}")).workload
    }

    fn secs(d: Duration) -> f64 {
        d.as_secs_f64()
    }

    #[test]
    fn a_create_only_run_ends_when_what_it_left_dirty_is_written() {
        let (c, w) = (PAGE_CACHE_BYTES_PER_S, WRITEBACK_BYTES_PER_S);
        // Seed 000: 4 threads write for 5 s; writeback starts once 2.2 GB are dirty and drains
        // while they go on; the final sync writes the rest.
        let four = profile("large-seqwrite.ffsb", Some(4), Some(128 << 20), 5);
        assert_eq!(write_share(&four), 1.0);
        let written = 5.0 * c;
        let left = written - w * (5.0 - DIRTY.background / c);
        let want = 5.0 + left / w;
        let got = secs(timed_with(&four, Duration::from_secs(5), DIRTY));
        assert!((got - want).abs() < 1e-6, "{got} against {want}");
        // 64 threads each finish a 128 MiB file: 8 GiB take 8 s to write, and the dirty limit
        // holds what the sync finds at 4.4 GB.
        let many = profile("large-seqwrite.ffsb", Some(64), Some(128 << 20), 5);
        let want = 8.0 + DIRTY.limit / w;
        let got = secs(timed_with(&many, Duration::from_secs(5), DIRTY));
        assert!((got - want).abs() < 1e-6, "{got} against {want}");
        // Less than the background threshold: all of it waits for the sync.
        let small = profile("large-seqwrite.ffsb", Some(1), Some(1 << 20), 1);
        let want = 1.0 + c / w;
        let got = secs(timed_with(&small, Duration::from_secs(1), DIRTY));
        assert!((got - want).abs() < 1e-6, "{got} against {want}");
    }

    #[test]
    fn a_mixed_run_that_writeback_keeps_up_with_leaves_the_background_threshold() {
        // Seed 002: 5000 files of 4 KiB to 512 KiB written first (their mean, 258 KiB, each);
        // then readall : write : create = 2 : 1 : 1 writes about a third of what it moves,
        // which writeback keeps up with: the sync finds the 2.2 GB writeback leaves.
        let w = profile("smallfile.ffsb", None, None, 20);
        let mean = (4096.0 + 524288.0) / 2.0;
        let share = (4096.0 + mean) / (4096.0 + mean + 2.0 * mean);
        assert!((write_share(&w) - share).abs() < 1e-9, "{}", write_share(&w));
        let setup_want = 5000.0 * mean / PAGE_CACHE_BYTES_PER_S;
        assert!((secs(setup(&w)) - setup_want).abs() < 1e-9, "{:?}", setup(&w));
        let want = 20.0 + DIRTY.background / WRITEBACK_BYTES_PER_S;
        let got = secs(timed_with(&w, Duration::from_secs(20), DIRTY));
        assert!((got - want).abs() < 1e-6, "{got} against {want}");
    }

    #[test]
    fn a_run_without_a_final_sync_takes_its_time() {
        let mut w = profile("large-seqwrite.ffsb", Some(4), Some(128 << 20), 5);
        w.stop.final_sync = FinalSync::None;
        assert_eq!(timed_with(&w, Duration::from_secs(5), DIRTY), Duration::from_secs(5));
    }

    #[test]
    fn this_machine_s_thresholds_are_read_and_ordered() {
        let here = Dirty::here();
        assert!(here.background > 0.0 && here.background <= here.limit, "{here:?}");
    }
}
