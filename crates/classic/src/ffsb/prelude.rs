//! What FFSB prints before its results, the same in 5.2.1 and 6.0 (`main.c`, `ffsb_tg.c`,
//! `ffsb_fs.c`, `util.c`) but for the version and the operations each knows: the version line,
//! the profile echo (each threadgroup, then each filesystem), `creating new fileset`, `fs setup
//! took`, the `Syncing()...` lines around `Starting Actual Benchmark At` and `FFSB benchmark
//! finished at`, then `Results:` and `Benchmark took`.
//!
//! Deliberate differences: the dates are UTC (FFSB prints local time with `ctime()`); "Starting
//! Actual Benchmark At" is the start of the engine run, whose untimed fileset setup comes first;
//! createdir's `dirnum: N` lines, which FFSB prints as it adds each directory, come after it,
//! each filesystem's together where FFSB's threads interleave them;
//! `current utilization` is measured once before anything is made; the filesystem is named by
//! its directory as run (`--dir` moves it).

use super::compile::Plan;
use super::execute::Outcome;
use super::grammar::Grammar;
use super::ops::FfsbOp;
use super::profile::{FsSpec, TgSpec};
use super::report::{printsize, Figures};
use fslab_engine::result::RunResult;
use std::fmt::Write as _;

/// Everything FFSB prints up to its results, into `o`; the run's result when there was a timed
/// run (None: FFSB's `Setup complete, exiting`, already printed).
pub(super) fn prelude<'a>(o: &mut String, plan: &Plan, outcome: &'a Outcome, f: &Figures) -> Option<&'a RunResult> {
    let version = match plan.profile.grammar {
        Grammar::V5 => "5.2.1",
        Grammar::V6 => "6.0-RC1",
    };
    let _ = writeln!(o, "FFSB version {version} started\n");
    if plan.time > 0 {
        let _ = writeln!(o, "benchmark time = {}", plan.time);
    } else {
        let _ = writeln!(o, "Only creating the fileset, not running benchmark.");
    }
    for (i, tg) in plan.profile.threadgroups.iter().enumerate() {
        let _ = writeln!(o, "ThreadGroup {i}\n================");
        tg_config(o, tg, plan.profile.grammar);
    }
    for (i, fs) in plan.profile.filesystems.iter().enumerate() {
        let root = plan.roots.get(i).map_or_else(String::new, |r| r.display().to_string());
        fs_config(o, fs, &root, outcome.start_util.get(i).copied().unwrap_or(0.0), plan);
    }
    for (i, fs) in plan.profile.filesystems.iter().enumerate() {
        let root = plan.roots.get(i).map_or_else(String::new, |r| r.display().to_string());
        if fs.reuse {
            let _ = writeln!(o, "checking existing fs: {root}");
        } else {
            let _ = writeln!(o, "creating new fileset {root}");
        }
        for a in outcome.aging.iter().filter(|a| a.fs == i) {
            let _ = writeln!(o, "aging fs {root} from {:.2} to {:.2}", a.from_util, a.desired_util);
        }
    }
    let _ = writeln!(o, "fs setup took {} secs", f.fs_setup_secs as u64);
    let Some(result) = &outcome.result else {
        let _ = writeln!(o, "Setup complete, exiting");
        return None;
    };
    let _ = writeln!(o, "Syncing()...0 sec");
    if let Some(command) = &plan.callout {
        let _ = writeln!(o, "executing callout: \n {command}");
    }
    let start = unix_secs(&result.started_at);
    let setup: f64 = result.setup.iter().map(|s| s.duration.as_secs_f64()).sum();
    let runtime = result.duration.as_secs_f64();
    // ctime() ends with a newline of its own: hence the blank lines.
    let _ = writeln!(o, "Starting Actual Benchmark At: {}\n", ctime(start + setup as i64));
    // createdir's `add_dir()` prints each directory's number as it adds it.
    for (fs, report) in plan.profile.filesystems.iter().zip(&result.setup) {
        for k in 0..report.dirs_added {
            let _ = writeln!(o, "dirnum: {}", fs.num_dirs + k);
        }
    }
    let sync = result.final_sync.map_or(0, |d| d.as_secs());
    let _ = writeln!(o, "Syncing()...{sync} sec");
    let end = start + (setup + runtime) as i64;
    let _ = writeln!(o, "FFSB benchmark finished   at: {}\n", ctime(end));
    let _ = writeln!(o, "Results:");
    let _ = writeln!(o, "Benchmark took {:.2} sec\n", result.duration.as_secs_f64());
    Some(result)
}

/// `tg_print_config_helper()`.
fn tg_config(o: &mut String, tg: &TgSpec, grammar: Grammar) {
    let size = |n: u64| printsize(n as f64);
    let on = |b: bool| if b { "on" } else { "off" };
    let _ = writeln!(o, "\t num_threads      = {}", tg.num_threads);
    let _ = writeln!(o, "\t");
    let _ = writeln!(o, "\t read_random      = {}", on(tg.read_random));
    let _ = writeln!(o, "\t read_size        = {}\t({})", tg.read_size, size(tg.read_size));
    let _ = writeln!(
        o,
        "\t read_blocksize   = {}\t({})",
        tg.read_blocksize,
        size(tg.read_blocksize)
    );
    let _ = writeln!(o, "\t read_skip        = {}", on(tg.read_skip));
    let _ = writeln!(
        o,
        "\t read_skipsize    = {}\t({})",
        tg.read_skipsize,
        size(tg.read_skipsize)
    );
    let _ = writeln!(o, "\t");
    let _ = writeln!(o, "\t write_random     = {}", on(tg.write_random));
    let _ = writeln!(o, "\t write_size       = {}\t({})", tg.write_size, size(tg.write_size));
    let _ = writeln!(o, "\t fsync_file       = {}", u8::from(tg.fsync_file));
    let _ = writeln!(
        o,
        "\t write_blocksize  = {}\t({})",
        tg.write_blocksize,
        size(tg.write_blocksize)
    );
    let _ = writeln!(o, "\t wait time        = {}", tg.op_delay_ms);
    if let Some(fs) = tg.bound_to {
        let _ = writeln!(o, "\t\n\t bound to fs {fs}");
    }
    let _ = writeln!(o, "\t\n\t op weights");
    let weight = |op: FfsbOp| tg.weights.get(&op).map_or(0, |w| w.0);
    // The operations the version knows, each with its weight.
    let ops: &[FfsbOp] = match grammar {
        Grammar::V5 => &FfsbOp::V5,
        Grammar::V6 => &FfsbOp::ALL,
    };
    let sum: u32 = ops.iter().copied().map(weight).sum();
    for &op in ops {
        let pct = if sum == 0 {
            f32::NAN
        } else {
            100.0 * weight(op) as f32 / sum as f32
        };
        let _ = writeln!(o, "\t {:>20} = {} ({pct:.2}%)", op.name(), weight(op));
    }
    let _ = writeln!(o, "\t");
}

/// `fs_print_config()`.
fn fs_config(o: &mut String, fs: &FsSpec, root: &str, util: f64, plan: &Plan) {
    let on = |b: bool| if b { "on" } else { "off" };
    let p = &plan.profile;
    let v6 = p.grammar == Grammar::V6;
    let _ = writeln!(o, "FileSystem {root}\n==========");
    let _ = writeln!(o, "\t num_dirs         = {}", fs.num_dirs);
    let _ = writeln!(o, "\t starting files   = {}", fs.num_files);
    let _ = writeln!(o, "\t");
    if v6 && !fs.size_weights.is_empty() {
        // FFSB 6.0 shows the sizes `create` draws from instead of the smallest and largest.
        let sum: u32 = fs.size_weights.iter().map(|w| w.1).sum();
        let _ = writeln!(o, "\t Fileset weight:");
        for &(size, weight) in &fs.size_weights {
            let pct = 100.0 * weight as f32 / sum as f32;
            let size_text = printsize(size as f64);
            let _ = writeln!(o, "\t\t {size:>12} ({size_text:>6}) -> {weight} ({pct:.2}%)");
        }
    } else {
        let size = |n: u64| printsize(n as f64);
        let _ = writeln!(
            o,
            "\t min file size    = {}\t({})",
            fs.min_filesize,
            size(fs.min_filesize)
        );
        let _ = writeln!(
            o,
            "\t max file size    = {}\t({})",
            fs.max_filesize,
            size(fs.max_filesize)
        );
    }
    let _ = writeln!(o, "\t directio         = {}", on(p.directio));
    let _ = writeln!(o, "\t alignedio        = {}", on(p.alignio));
    let _ = writeln!(o, "\t bufferedio       = {}", on(p.bufferio));
    let _ = writeln!(o, "\t");
    let _ = writeln!(o, "\t aging is {}", on(fs.agefs));
    // 5.2.1 prints the utilisations as fractions, 6.0 as percentages.
    let (scale, unit) = if v6 { (100.0, "%") } else { (1.0, "") };
    let _ = writeln!(o, "\t current utilization = {:.2}{unit}", util * scale);
    if fs.agefs {
        let _ = writeln!(o, "\t desired utilization = {:.2}{unit}", fs.desired_util * scale);
        let _ = writeln!(o, "\t \n\t Aging ThreadGroup for fs {root}\n\t ================");
        if let Some(ager) = &fs.aging {
            tg_config(o, ager, p.grammar);
        }
    }
    let _ = writeln!(o, "\t");
}

/// Seconds since the epoch of an RFC 3339 UTC time (`2026-11-22T04:28:24Z`); 0 when unreadable.
fn unix_secs(rfc3339: &str) -> i64 {
    let n = |a: usize, b: usize| rfc3339.get(a..b).and_then(|s| s.parse::<i64>().ok());
    let (Some(y), Some(m), Some(d), Some(hh), Some(mm), Some(ss)) =
        (n(0, 4), n(5, 7), n(8, 10), n(11, 13), n(14, 16), n(17, 19))
    else {
        return 0;
    };
    // Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    days * 86_400 + hh * 3600 + mm * 60 + ss
}

/// `ctime()` without its newline, in UTC: `Wed Nov 25 18:48:51 2026`.
fn ctime(secs: i64) -> String {
    let rfc = fslab_engine::result::rfc3339(std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs.max(0) as u64));
    let n = |a: usize, b: usize| rfc.get(a..b).and_then(|s| s.parse::<usize>().ok()).unwrap_or(0);
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!(
        "{} {} {:>2} {} {}",
        DAYS[(secs.div_euclid(86_400)).rem_euclid(7) as usize],
        MONTHS[n(5, 7).clamp(1, 12) - 1],
        n(8, 10),
        &rfc[11..19],
        &rfc[0..4]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ctime_reads_rfc3339() {
        let t = unix_secs("2026-11-25T18:48:51Z");
        assert_eq!(ctime(t), "Wed Nov 25 18:48:51 2026");
        assert_eq!(ctime(unix_secs("2000-02-29T00:00:00Z")), "Tue Feb 29 00:00:00 2000");
        assert_eq!(
            ctime(unix_secs("2026-11-05T01:02:03Z") + 60),
            "Thu Nov  5 01:03:03 2026"
        );
    }
}
