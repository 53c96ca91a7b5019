//! Running a plan: one engine run per step, IOzone's output as each finishes, and what IOzone
//! does between sub-tests.
//!
//! Between throughput sub-tests IOzone calls `sync()` and sleeps 2 s: each run's workload syncs
//! outside its timing (`final_sync = "outside"`) and the runner pauses `--pause` (2 s).
//!
//! A child stopped by the stonewall while writing its file from empty (initial writers, and
//! throughput mode's pwrite writers and fwriters) leaves it short; IOzone's child finishes writing
//! it, uncounted. The runner does the same after the run (untimed, each completed file fsynced),
//! so the sub-tests after it find whole files.

use super::figures::{self, Figures};
use super::layout::Layout;
use super::plan::{Mode, Plan};
use super::print;
use super::subtest::Test;
use fslab_engine::confine::RunDir;
use fslab_engine::result::Status;
use fslab_engine::workload::Fileset;
use fslab_engine::{RunError, RunOptions, RunResult};
use serde::Serialize;
use std::io::{Seek, SeekFrom, Write};
use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

const KB: u64 = 1024;

/// Why a plan could not run to its end.
#[derive(Debug, thiserror::Error)]
pub enum RunFailure {
    #[error(transparent)]
    Engine(#[from] RunError),
    #[error("finishing the file {path} the stonewalled child left short: {error}")]
    Finish { path: String, error: std::io::Error },
}

/// One engine run with IOzone's figures.
#[derive(Debug, Clone, Serialize)]
pub struct SubTest {
    pub test: Test,
    pub name: &'static str,
    pub file_kb: u64,
    pub record_kb: u64,
    /// Throughput mode's figures.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub figures: Option<Figures>,
    /// Automatic mode's figure (kB/s, or ops/s with -O).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub throughput: Option<f64>,
    /// Automatic mode: the time the operations took, summed (the figure's denominator).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub busy_secs: Option<f64>,
    /// Bytes the runner wrote, untimed, to finish files the stonewall left short.
    #[serde(skip_serializing_if = "is_zero")]
    pub finished_uncounted: u64,
    /// The engine's full result (in the outcome's phases, not in IOzone's figures).
    #[serde(skip)]
    pub result: RunResult,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Everything a plan measured, in IOzone's terms: the outcome's figures.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub tool: &'static str,
    /// The IOzone version whose behaviour this models.
    pub models: &'static str,
    pub mode: &'static str,
    pub command_line: String,
    pub dir: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub children: Option<u32>,
    /// "kB" (1024 bytes) or "ops".
    pub unit: &'static str,
    pub subtests: Vec<SubTest>,
    /// Throughput mode's `-R` report: (row name, Children see).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub report: Vec<(&'static str, f64)>,
    /// A run met an error; the runs after it were not made.
    pub failed: bool,
    /// The run was stopped from outside (Ctrl-C): the sub-tests after the one under way were
    /// not made.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
}

/// How a plan runs: its directory, whether the first sub-test starts with a cold cache, and a
/// flag that, once set, stops the sub-test under way and the ones after it.
pub struct RunWith<'a> {
    pub dir: &'a Path,
    pub drop_caches: bool,
    pub interrupt: Option<Arc<AtomicBool>>,
}

/// Runs `plan` as `with` says, handing IOzone's text to `out` as it becomes known.
pub fn run(plan: &Plan, with: RunWith, out: &mut dyn FnMut(&str)) -> Result<Report, RunFailure> {
    let run_dir = with.dir;
    let result = run_steps(plan, &with, out);
    if !plan.opts.keep {
        // The last run removes the files (`cleanup`); after a failure, remove them here.
        if let Ok(dir) = RunDir::open(run_dir) {
            for fs in &filesets(plan) {
                let _ = fslab_engine::fileset::remove(&dir, fs);
            }
        }
    }
    result
}

fn run_steps(plan: &Plan, with: &RunWith, out: &mut dyn FnMut(&str)) -> Result<Report, RunFailure> {
    let run_dir = with.dir;
    let opts = &plan.opts;
    let throughput = matches!(plan.mode, Mode::Throughput { .. });
    let mut report = Report {
        tool: "iozone",
        models: "IOzone 3.487",
        mode: match plan.mode {
            Mode::Throughput { .. } => "throughput",
            Mode::Auto => "auto",
            Mode::Single => "single",
        },
        command_line: opts.command_line.clone(),
        dir: run_dir.display().to_string(),
        children: match plan.mode {
            Mode::Throughput { children } => Some(children),
            _ => None,
        },
        unit: if opts.ops_mode { "ops" } else { "kB" },
        subtests: Vec::new(),
        report: Vec::new(),
        failed: false,
        interrupted: false,
    };
    if !throughput {
        out(&format!("\n{}", print::auto_header(&plan.tests)));
    }
    let mut run_opts = RunOptions {
        dir: run_dir.to_path_buf(),
        drop_caches: with.drop_caches,
        interrupt: with.interrupt.clone(),
        ..RunOptions::default()
    };
    let mut row: Vec<Option<f64>> = Vec::new();
    for (k, step) in plan.steps.iter().enumerate() {
        if with.interrupt.as_ref().is_some_and(|i| i.load(Ordering::Relaxed)) {
            report.interrupted = true;
            break;
        }
        if throughput && k > 0 && !opts.pause.is_zero() {
            std::thread::sleep(opts.pause);
        }
        let unit_bytes = if opts.ops_mode { step.record } else { KB };
        let result = fslab_engine::run(&step.workload, &run_opts, &mut |_| {})?;
        run_opts.drop_caches = false;
        let failed = result.status == Status::Failed;
        let mut sub = SubTest {
            test: step.test,
            name: step.test.children_name(),
            file_kb: step.file_size / KB,
            record_kb: step.record / KB,
            figures: None,
            throughput: None,
            busy_secs: None,
            finished_uncounted: 0,
            result,
        };
        if throughput {
            let f = figures::throughput(step.test, &sub.result, &plan.layout, unit_bytes, opts.ops_mode);
            out(&print::throughput_block(&f, opts.per_child));
            report.report.push((step.test.report_name(), f.children_see));
            if step.test.from_empty(throughput) && !failed && !step.workload.cleanup {
                let size = step.workload.filesets[0].size.max();
                sub.finished_uncounted = finish_files(run_dir, &plan.layout, size, step.record)?;
            }
            sub.figures = Some(f);
        } else {
            let v = figures::single(&sub.result, unit_bytes);
            sub.throughput = Some(v);
            sub.busy_secs = Some(figures::busy_secs(&sub.result));
            row.push(Some(v));
            let last_of_row = plan
                .steps
                .get(k + 1)
                .is_none_or(|n| (n.file_size, n.record) != (step.file_size, step.record));
            if last_of_row || failed {
                row.resize(plan.tests.len(), None);
                out(&print::auto_row(
                    step.file_size / KB,
                    step.record / KB,
                    &plan.tests,
                    &row,
                ));
                row.clear();
            }
        }
        report.subtests.push(sub);
        if failed {
            report.failed = true;
            return Ok(report);
        }
    }
    if opts.excel {
        if throughput {
            let rows: Vec<(Test, f64)> = report
                .subtests
                .iter()
                .filter_map(|s| s.figures.as_ref().map(|f| (s.test, f.children_see)))
                .collect();
            out(&print::throughput_report(opts.record / KB, &rows, opts.ops_mode));
        } else {
            let cells: Vec<(Test, print::AutoCell)> = report
                .subtests
                .iter()
                .filter_map(|s| s.throughput.map(|v| (s.test, (s.file_kb, s.record_kb, v))))
                .collect();
            out(&print::auto_report(&plan.tests, &cells));
        }
    }
    out(print::COMPLETE);
    Ok(report)
}

/// Writes the rest of every child's file that is shorter than `size` (a stonewalled initial
/// writer's), untimed, and fsyncs it. Returns the bytes written.
fn finish_files(run_dir: &Path, layout: &Layout, size: u64, record: u64) -> Result<u64, RunFailure> {
    let dir = RunDir::open(run_dir).map_err(RunError::from)?;
    let pattern: Vec<u8> = (0..record.min(1 << 20)).map(|i| (i * 31 + 7) as u8).collect();
    let mut written = 0;
    for place in &layout.places {
        // The fileset directory, opened beneath the run directory (no symlink leads out); its
        // files are then reached through the descriptor.
        let fd = if place.dir == "." {
            dir.open_dir_self()
        } else {
            dir.open_dir(&place.dir, false)
        }
        .map_err(RunError::from)?;
        for k in 0..place.children.len() {
            let name = place.file_name(k);
            let fail = |error| RunFailure::Finish {
                path: format!("{}/{}/{name}", run_dir.display(), place.dir),
                error,
            };
            let path = format!("/proc/self/fd/{}/{name}", fd.as_raw_fd());
            let meta = std::fs::symlink_metadata(&path).map_err(fail)?;
            if !meta.file_type().is_file() {
                return Err(fail(std::io::Error::other("is not a regular file")));
            }
            if meta.len() >= size {
                continue;
            }
            let mut f = std::fs::OpenOptions::new().write(true).open(&path).map_err(fail)?;
            let mut at = f.seek(SeekFrom::Start(meta.len())).map_err(fail)?;
            while at < size {
                let n = (size - at).min(pattern.len() as u64) as usize;
                f.write_all(&pattern[..n]).map_err(fail)?;
                at += n as u64;
            }
            f.sync_all().map_err(fail)?;
            written += size - meta.len();
        }
    }
    Ok(written)
}

/// The filesets a plan's runs use (for removing them).
pub fn filesets(plan: &Plan) -> Vec<Fileset> {
    plan.steps
        .last()
        .map(|s| s.workload.filesets.clone())
        .unwrap_or_default()
}
