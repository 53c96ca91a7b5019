//! Running a plan: one engine run per step, IOzone's output as each finishes, and what IOzone
//! does between sub-tests.
//!
//! Between throughput sub-tests IOzone calls `sync()` and sleeps 2 s: each run's workload syncs
//! outside its timing (`final_sync = "outside"`) and the runner pauses `--pause` (2 s). After
//! the last one's cleanup it calls `sync()`, sleeps 2 s and calls `sync()` again, and so does
//! the runner. Single-process and automatic mode call `sync()` twice before each file and
//! record size, as IOzone's `begin()`; no setup syncs (`SetupCalls::Iozone`).
//!
//! A child the stonewall stops while writing its whole file (initial and random writers, and
//! throughput mode's pwrite writers) finishes it uncounted inside the engine run, as
//! IOzone's does (`stop.child_end`), so the sub-tests after it find whole files.

use super::figures::{self, CpuUse, Figures};
use super::plan::{Mode, Plan};
use super::print;
use super::subtest::Test;
use fslab_engine::confine::RunDir;
use fslab_engine::result::Status;
use fslab_engine::workload::Fileset;
use fslab_engine::{RunError, RunOptions, RunResult};
use serde::Serialize;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

const KB: u64 = 1024;

/// Why a plan could not run to its end.
#[derive(Debug, thiserror::Error)]
pub enum RunFailure {
    #[error(transparent)]
    Engine(#[from] RunError),
    /// A run of a job of several ranks failed (on this rank or another).
    #[error(transparent)]
    Job(#[from] crate::contract::Error),
}

/// One engine run with IOzone's figures.
#[derive(Debug, Clone, Serialize)]
pub struct SubTest {
    pub test: Test,
    /// IOzone's name for the children ([`Plan::step_name`]): "initial writers", or with
    /// several numbers of children "4 initial writers".
    pub name: String,
    /// Throughput mode's number of children.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub children: Option<u32>,
    pub file_kb: u64,
    pub record_kb: u64,
    /// Throughput mode's figures.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub figures: Option<Figures>,
    /// Automatic mode's figure (kB/s, or ops/s with -O).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub throughput: Option<f64>,
    /// Automatic mode: the process's own time, its file open, from its first operation to its
    /// last (and its -e fsync), less IOzone's clock resolution ([`figures::iozone_secs`]): the
    /// figure's denominator.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secs: Option<f64>,
    /// Automatic mode's CPU use, with `-+u`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu: Option<CpuUse>,
    /// IOzone's second backward read of automatic mode, which it makes and does not report.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unreported: bool,
    /// The engine's full result (in the outcome's phases, not in IOzone's figures).
    #[serde(skip)]
    pub result: RunResult,
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
    /// Throughput mode's numbers of children, a run of every sub-test for each.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<u32>,
    /// "kB" (1024 bytes) or "ops".
    pub unit: &'static str,
    pub subtests: Vec<SubTest>,
    /// Throughput mode's `-R` report: (row name, Children see for each number of children).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub report: Vec<(&'static str, Vec<f64>)>,
    /// With `-+u`, the `-R` report of CPU use: (row name, CPU utilization in % for each number
    /// of children).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cpu_report: Vec<(&'static str, Vec<f64>)>,
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
    /// The job each sub-test runs across ([`crate::job`]): alone, or one rank of several, each in
    /// its own directory beneath `dir`.
    pub job: crate::job::Job,
}

/// Runs `plan` as `with` says, handing IOzone's text to `out` as it becomes known.
pub fn run(plan: &Plan, with: RunWith, out: &mut dyn FnMut(&str)) -> Result<Report, RunFailure> {
    let run_dir = &crate::job::rank_dir(with.job.ranks.as_ref(), with.dir)?;
    let result = run_steps(plan, &with, out);
    let cleaned = result.as_ref().is_ok_and(|r| !r.failed && !r.interrupted);
    if !plan.opts.keep && !cleaned {
        // The last run removes the files (`cleanup`); when it was not made, remove them here.
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
        children: if throughput { opts.child_counts() } else { Vec::new() },
        unit: if opts.ops_mode { "ops" } else { "kB" },
        subtests: Vec::new(),
        report: Vec::new(),
        cpu_report: Vec::new(),
        failed: false,
        interrupted: false,
    };
    if !throughput {
        out(&print::auto_header(opts.extension));
    }
    let mut run_opts = RunOptions {
        dir: run_dir.to_path_buf(),
        // Automatic mode's figure is one process's loop, timed as a whole as IOzone times it: no
        // clock read per operation inside it (that and the histograms' first touches were a
        // fixed cost that weighed on small files), no machine CPU split of a run too short for
        // `/proc/stat`'s ticks, and the loop made by the process's only thread, as IOzone's
        // (a second thread makes the kernel count references on every call's descriptor).
        no_latency: !throughput,
        one_process: !throughput,
        process_cpu: opts.cpu_util,
        drop_caches: with.drop_caches,
        interrupt: with.interrupt.clone(),
        ..RunOptions::default()
    };
    let mut row: Vec<(Test, f64)> = Vec::new();
    // Throughput mode's report rows, automatic mode's report cells.
    let mut rows: Vec<(Test, f64)> = Vec::new();
    let mut cells: Vec<(Test, print::AutoCell)> = Vec::new();
    // The same, of CPU use in % (-+u).
    let mut cpu_rows: Vec<(Test, f64)> = Vec::new();
    let mut cpu_cells: Vec<(Test, print::AutoCell)> = Vec::new();
    // The largest record size of a time below the clock's resolution.
    let mut unresolved: Option<u64> = None;
    for (k, step) in plan.steps.iter().enumerate() {
        if interrupted(with) {
            report.interrupted = true;
            break;
        }
        if throughput && k > 0 && !opts.pause.is_zero() {
            std::thread::sleep(opts.pause);
        }
        // The next number of children: IOzone's next throughput test.
        if throughput && k > 0 && plan.steps[k - 1].children != step.children {
            out(print::THROUGHPUT_END);
            out(&plan.each_writes());
        }
        // IOzone's begin() calls sync() twice before each file and record size.
        let new_size =
            k == 0 || (plan.steps[k - 1].file_size, plan.steps[k - 1].record) != (step.file_size, step.record);
        if !throughput && new_size {
            crate::sync();
            crate::sync();
        }
        let unit_bytes = if opts.ops_mode { step.record } else { KB };
        let result = crate::job::run(&with.job, &step.workload, run_opts.clone(), &mut |_| {})?;
        run_opts.drop_caches = false;
        let failed = result.status == Status::Failed;
        let mut sub = SubTest {
            test: step.test,
            name: plan.step_name(step),
            children: throughput.then_some(step.children),
            file_kb: step.file_size / KB,
            record_kb: step.record / KB,
            figures: None,
            throughput: None,
            secs: None,
            cpu: None,
            unreported: !step.reported,
            result,
        };
        if throughput {
            let ranks = with.job.ranks.size();
            let layout = (&plan.layout.first(step.children as usize), opts.mix);
            let f = figures::throughput(step.test, &sub.result, layout, unit_bytes, opts.ops_mode, ranks);
            out(&print::throughput_block(&f, opts.per_child, opts.children_word(false)));
            rows.push((step.test, f.children_see));
            cpu_rows.push((step.test, f.cpu.map_or(0.0, |c| c.percent)));
            // -+n: IOzone reports the re-run it did not make as 0.
            if let Some(retest) = step.test.retest(true).filter(|_| opts.no_retests) {
                rows.push((retest, 0.0));
                cpu_rows.push((retest, 0.0));
            }
            sub.figures = Some(f);
        } else {
            if step.reported {
                let v = figures::single(&sub.result, unit_bytes);
                sub.throughput = Some(v);
                sub.secs = sub.result.threads.first().map(|t| figures::iozone_secs(t.secs));
                row.push((step.test, v));
                cells.push((step.test, (sub.file_kb, sub.record_kb, v)));
                sub.cpu = figures::single_cpu(&sub.result);
                let percent = sub.cpu.map_or(0.0, |c| c.percent);
                cpu_cells.push((step.test, (sub.file_kb, sub.record_kb, percent)));
                if let Some(retest) = step.test.retest(false).filter(|_| opts.no_retests) {
                    row.push((retest, 0.0));
                    cells.push((retest, (sub.file_kb, sub.record_kb, 0.0)));
                    cpu_cells.push((retest, (sub.file_kb, sub.record_kb, 0.0)));
                }
            }
            let last_of_row = plan
                .steps
                .get(k + 1)
                .is_none_or(|n| (n.file_size, n.record) != (step.file_size, step.record));
            if last_of_row || failed {
                out(&print::auto_row(
                    step.file_size / KB,
                    step.record / KB,
                    &row,
                    opts.extension,
                ));
                row.clear();
            }
        }
        // IOzone notes the largest record of a time its clock could not resolve: each of its
        // one process's measurements, the parent's time, and with -T (where the children share
        // its memory) each child's.
        let mut times: Vec<f64> = Vec::new();
        if throughput {
            times.push(sub.result.duration.as_secs_f64());
        }
        if !throughput || opts.posix_threads {
            times.extend(sub.result.threads.iter().map(|t| t.secs));
        }
        if times.into_iter().any(figures::below_resolution) {
            unresolved = unresolved.max(Some(step.record));
        }
        report.subtests.push(sub);
        // The end of a throughput test (IOzone's for one number of children): its cleanup's
        // unlinks, then sync() and a pause, and one more sync().
        let last_of_test = plan.steps.get(k + 1).is_none_or(|n| n.children != step.children);
        if throughput && last_of_test && !failed {
            if step.workload.cleanup {
                crate::sync();
                if !opts.pause.is_zero() && !interrupted(with) {
                    std::thread::sleep(opts.pause);
                }
            }
            crate::sync();
        }
        if failed {
            report.failed = true;
            report.report = report_rows(&rows);
            return Ok(report);
        }
    }
    report.report = report_rows(&rows);
    if opts.cpu_util && throughput {
        report.cpu_report = report_rows(&cpu_rows);
    }
    // IOzone's ending: throughput mode's two blank lines and its report; its last words (and a
    // note when its clock could not resolve a time); automatic mode's report.
    if throughput {
        out(print::THROUGHPUT_END);
        if opts.excel {
            let (ops, threads) = (opts.ops_mode, opts.posix_threads);
            out(&print::throughput_report(
                opts.record / KB,
                &report.report,
                ops,
                threads,
            ));
            if opts.cpu_util {
                out(&print::throughput_cpu_report(
                    opts.record / KB,
                    &report.cpu_report,
                    threads,
                ));
            }
        }
    }
    out(print::COMPLETE);
    out(&print::poor_resolution(unresolved));
    if !throughput && opts.excel {
        let records: Vec<u64> = plan.report_records().iter().map(|r| r / KB).collect();
        out(&print::auto_report(&plan.tests, &cells, &records));
        if opts.cpu_util {
            out(&print::auto_cpu_report(&plan.tests, &cpu_cells, &records));
        }
    }
    Ok(report)
}

/// Whether the run was stopped from outside.
fn interrupted(with: &RunWith) -> bool {
    with.interrupt.as_ref().is_some_and(|i| i.load(Ordering::Relaxed))
}

/// Throughput mode's `-R` rows as the report holds them: IOzone's row name, and Children see
/// for each number of children in turn.
fn report_rows(rows: &[(Test, f64)]) -> Vec<(&'static str, Vec<f64>)> {
    let mut report: Vec<(&'static str, Vec<f64>)> = Vec::new();
    for (test, v) in rows {
        let name = test.report_name();
        match report.iter_mut().find(|r| r.0 == name) {
            Some(row) => row.1.push(*v),
            None => report.push((name, vec![*v])),
        }
    }
    report
}

/// The filesets a plan's runs use (for removing them).
pub fn filesets(plan: &Plan) -> Vec<Fileset> {
    plan.steps
        .last()
        .map(|s| s.workload.filesets.clone())
        .unwrap_or_default()
}
