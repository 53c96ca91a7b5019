//! Tables as the seeds lay them out: rows are a workload's parameter values (threads, clients),
//! columns are configurations, one table per figure; each value is the mean over the repeats
//! with its 95% confidence interval, the number of runs, and how it stands against the best of
//! its row where the statistics say so ([`crate::verdict`]).
//!
//! A table is built once and drawn by every export (terminal, Markdown, HTML) and by the charts,
//! so that all of them show the same numbers.

use crate::stats::Summary;
use crate::study::{Cell, CpuSplit, Row, StudyData};
use crate::verdict::{self, Standing};
use serde::Serialize;

/// One figure of one workload (or of the lab's steps) across configurations.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Table {
    /// `dbench: Throughput`.
    pub title: String,
    /// The figure's name and unit: `Throughput (MB/sec)`.
    pub figure: String,
    pub unit: String,
    /// Whether more is better; decides the best of each row.
    pub higher_is_better: bool,
    /// Header of the row labels' column: the axes (`clients`), or `workload`.
    pub corner: String,
    pub columns: Vec<String>,
    pub rows: Vec<TableRow>,
    /// Names of the parts of [`TableCell::Split`] values (`user`, `system`...).
    pub parts: Vec<String>,
    /// What readers must know: missing cells with their reasons, warnings.
    pub notes: Vec<String>,
    /// Shown in the terminal and at the top of each HTML section; the others are in Markdown and
    /// folded in the HTML report.
    pub primary: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct TableRow {
    /// The row's values under the corner's axes (`4`, or `4 / 16` for two axes).
    pub label: String,
    /// The row as notes name it: `clients=4`.
    pub name: String,
    pub cells: Vec<TableCell>,
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TableCell {
    /// A figure over the repeats.
    Value {
        summary: Summary,
        /// How it stands against the best of its row, where the row is ranked: best, tied with
        /// the best, or N× worse (significant), or untested (fewer than two runs).
        standing: Option<Standing>,
        /// High variation, outliers, runs that failed.
        warnings: Vec<String>,
    },
    /// Parts of a whole (the CPU split, in percent), named by [`Table::parts`].
    Split { parts: Vec<f64> },
    /// A cell without figures: unsupported, failed, hung, pending.
    Missing { status: String, reason: String },
    /// The matrix has no such cell (an excluded combination).
    Absent,
}

impl Table {
    /// The values of column `col`, one per row.
    pub fn column(&self, col: usize) -> impl Iterator<Item = &TableCell> {
        self.rows.iter().map(move |r| &r.cells[col])
    }

    /// Whether any cell holds a value or a split (a chart of it would show something).
    pub fn has_values(&self) -> bool {
        self.rows
            .iter()
            .flat_map(|r| &r.cells)
            .any(|c| matches!(c, TableCell::Value { .. } | TableCell::Split { .. }))
    }
}

/// The title of the section about workload `w`: its name and tool.
pub fn workload_title(data: &StudyData, w: usize) -> String {
    let w = &data.workloads[w];
    format!("{} ({})", w.name, w.tool)
}

/// A figure with its unit, `Throughput (MB/sec)`, the unit left out when the name says it
/// (`MiB/s`).
pub fn figure_name(name: &str, unit: &str) -> String {
    if unit.is_empty() || name.ends_with(unit) {
        name.to_string()
    } else {
        format!("{name} ({unit})")
    }
}

/// The study's configurations as rows of text, the header first: label, type, mkfs and mount
/// options, scheduler, read-ahead, fill level.
pub fn configuration_rows(data: &StudyData) -> Vec<Vec<String>> {
    let header = [
        "configuration",
        "type",
        "mkfs options",
        "mount options",
        "scheduler",
        "read-ahead",
        "filled to",
    ];
    let mut rows = vec![header.iter().map(|s| s.to_string()).collect::<Vec<_>>()];
    let or_default = |s: &str| {
        if s.is_empty() {
            "(defaults)".to_string()
        } else {
            s.to_string()
        }
    };
    for c in &data.configurations {
        rows.push(vec![
            c.label.clone(),
            c.fs_type.clone(),
            or_default(&c.mkfs_options),
            or_default(&c.mount_options),
            c.scheduler.clone().unwrap_or_else(|| "(as is)".into()),
            c.read_ahead_kb
                .map(|k| format!("{k} KiB"))
                .unwrap_or_else(|| "(as is)".into()),
            c.fill_to
                .map(crate::study::fill_percent)
                .unwrap_or_else(|| "(empty)".into()),
        ]);
    }
    rows
}

/// How a figure's summary is read from a cell, if the cell has it.
type SummaryOf<'a> = Box<dyn Fn(&Cell) -> Option<Summary> + 'a>;

/// A figure of each cell of a workload, with its unit and direction.
struct Figure<'a> {
    name: String,
    unit: String,
    higher_is_better: bool,
    primary: bool,
    value: SummaryOf<'a>,
}

/// The tables of workload `w`: its headline figure first, ops/s, latency p99 and the CPU split
/// (primary), then every other figure its runs gave.
pub fn workload_tables(data: &StudyData, w: usize) -> Vec<Table> {
    let cells: Vec<&Cell> = data.cells.iter().filter(|c| c.workload == w).collect();
    let mut figures: Vec<Figure> = Vec::new();
    for (i, m) in cells.iter().flat_map(|c| &c.metrics).enumerate() {
        if figures.iter().any(|f| f.name == m.name) {
            continue;
        }
        let name = m.name.clone();
        figures.push(Figure {
            name: m.name.clone(),
            unit: m.unit.clone(),
            higher_is_better: m.higher_is_better,
            primary: i == 0 || m.name == "ops/s",
            value: Box::new(move |c: &Cell| c.metric(&name).map(|m| m.summary.clone())),
        });
    }
    // The headline first, then ops/s, then the rest in the order the runs give them.
    figures.sort_by_key(|f| !f.primary);
    if cells.iter().any(|c| c.p99_us.is_some()) {
        let p99 = Figure {
            name: "latency p99, all operations".into(),
            unit: "us".into(),
            higher_is_better: false,
            primary: true,
            value: Box::new(|c: &Cell| c.p99_us.clone()),
        };
        let at = figures.iter().take_while(|f| f.primary).count();
        figures.insert(at, p99);
    }
    let mut tables: Vec<Table> = figures.iter().map(|f| figure_table(data, w, f)).collect();
    if cells.iter().any(|c| c.cpu.is_some()) {
        let at = tables.iter().take_while(|t| t.primary).count();
        tables.insert(at, cpu_table(data, w, "CPU split", true, |c| c.cpu));
    }
    add_phase_cpu_tables(data, w, &mut tables);
    tables
}

/// For a workload whose runs have several results (IOzone's sub-tests), a CPU split table per
/// result, `CPU split: readers`, right after the table of that result's figure (`readers`), and
/// shown as prominently; after the others when no figure bears its name.
fn add_phase_cpu_tables(data: &StudyData, w: usize, tables: &mut Vec<Table>) {
    let mut phases: Vec<&str> = Vec::new();
    for (phase, _) in data
        .cells
        .iter()
        .filter(|c| c.workload == w)
        .flat_map(|c| &c.cpu_by_phase)
    {
        if !phases.contains(&phase.as_str()) {
            phases.push(phase);
        }
    }
    for phase in phases {
        let of_phase = |t: &Table| t.figure == phase || t.figure.starts_with(&format!("{phase} ("));
        let (at, primary) = match tables.iter().position(of_phase) {
            Some(i) => (i + 1, tables[i].primary),
            None => (tables.len(), false),
        };
        let name = format!("CPU split: {phase}");
        let table = cpu_table(data, w, &name, primary, |c| {
            c.cpu_by_phase.iter().find(|(p, _)| p == phase).map(|(_, s)| *s)
        });
        tables.insert(at, table);
    }
}

fn figure_table(data: &StudyData, w: usize, f: &Figure) -> Table {
    let workload = &data.workloads[w];
    let mut table = empty_table(data, w, &f.name, &f.unit, f.higher_is_better, f.primary);
    for (r, row) in workload.rows.iter().enumerate() {
        let cells = (0..data.configurations.len())
            .map(|k| match data.cell(w, r, k) {
                None => TableCell::Absent,
                Some(cell) => match (cell.missing(), (f.value)(cell)) {
                    (Some(m), _) => TableCell::Missing {
                        status: m.status,
                        reason: m.reason,
                    },
                    (None, None) => TableCell::Absent,
                    (None, Some(summary)) => {
                        let mut warnings = summary.warnings();
                        warnings.extend(cell.troubles());
                        TableCell::Value {
                            summary,
                            standing: None,
                            warnings,
                        }
                    }
                },
            })
            .collect();
        table.rows.push(TableRow {
            label: values_of(row),
            name: row.label.clone(),
            cells,
        });
    }
    rank(&mut table);
    table.notes = notes(&table);
    // How many runs each cell took, and why, when the study repeats adaptively; and whether its
    // runs levelled off, when they stop at steady state.
    for cell in data.cells.iter().filter(|c| c.workload == w) {
        for s in cell.steps.iter().filter(|s| s.step.name == ADAPTIVE_STEP) {
            table.notes.push(format!("{}: {}", cell.row.spec.label, s.step.detail));
        }
        if !cell.steady.is_empty() {
            table.notes.push(steady_note(&cell.row.spec.label, &cell.steady));
        }
    }
    table
}

/// `ext4 fileserver: steady state in 2 of 3 runs, after 12.0 s on average`.
fn steady_note(label: &str, steady: &[Option<f64>]) -> String {
    let reached: Vec<f64> = steady.iter().flatten().copied().collect();
    if reached.is_empty() {
        return format!("{label}: no run levelled off before its time limit (stop.steady)");
    }
    format!(
        "{label}: steady state in {} of {} runs, after {:.1} s on average (stop.steady)",
        reached.len(),
        steady.len(),
        reached.iter().sum::<f64>() / reached.len() as f64
    )
}

/// The lab's record of how many runs an adaptive repeat gave a cell, and why.
const ADAPTIVE_STEP: &str = "repeats";

/// A CPU split of workload `w`'s cells (`split` reads it from a cell): user, system, iowait,
/// idle in percent.
fn cpu_table(
    data: &StudyData,
    w: usize,
    name: &str,
    primary: bool,
    split: impl Fn(&Cell) -> Option<CpuSplit>,
) -> Table {
    let mut table = empty_table(data, w, name, "%", false, primary);
    table.parts = CpuSplit::PARTS.iter().map(|s| s.to_string()).collect();
    for (r, row) in data.workloads[w].rows.iter().enumerate() {
        let cells = (0..data.configurations.len())
            .map(|k| match data.cell(w, r, k) {
                None => TableCell::Absent,
                Some(cell) => match (cell.missing(), split(cell)) {
                    (Some(m), _) => TableCell::Missing {
                        status: m.status,
                        reason: m.reason,
                    },
                    (None, Some(cpu)) => TableCell::Split {
                        parts: cpu.parts().to_vec(),
                    },
                    (None, None) => TableCell::Absent,
                },
            })
            .collect();
        table.rows.push(TableRow {
            label: values_of(row),
            name: row.label.clone(),
            cells,
        });
    }
    table.notes = notes(&table);
    table
}

/// A row's label under the corner: its values (`4`, `4 / 16`), or the workload's name when
/// nothing varies.
fn values_of(row: &Row) -> String {
    if row.values.is_empty() {
        row.label.clone()
    } else {
        row.values.join(" / ")
    }
}

fn empty_table(data: &StudyData, w: usize, name: &str, unit: &str, higher_is_better: bool, primary: bool) -> Table {
    let workload = &data.workloads[w];
    let figure = figure_name(name, unit);
    Table {
        title: format!("{}: {figure}", workload.name),
        figure,
        unit: unit.to_string(),
        higher_is_better,
        corner: if workload.axes.is_empty() {
            "workload".to_string()
        } else {
            workload.axes.join(" / ")
        },
        columns: data.configurations.iter().map(|c| c.label.clone()).collect(),
        rows: Vec::new(),
        parts: Vec::new(),
        notes: Vec::new(),
        primary,
    }
}

/// The lab's own figures: the mean duration of each step (wipe, mkfs, mount, fill, umount,
/// fsck...) per configuration, over every cell and repeat, in seconds (in milliseconds for a
/// step that takes less than a second everywhere: the row says which); and, apart, the CPU
/// split of each step's time, in percent.
pub fn steps_tables(data: &StudyData) -> Vec<Table> {
    let mut names: Vec<&str> = Vec::new();
    for s in data
        .cells
        .iter()
        .flat_map(|c| &c.steps)
        .filter(|s| s.step.name != ADAPTIVE_STEP)
    {
        if !names.contains(&s.step.name.as_str()) {
            names.push(&s.step.name);
        }
    }
    if names.is_empty() {
        return Vec::new();
    }
    let columns: Vec<String> = data.configurations.iter().map(|c| c.label.clone()).collect();
    let base = Table {
        title: "the lab's steps: duration".to_string(),
        figure: "duration".to_string(),
        unit: String::new(),
        higher_is_better: false,
        corner: "step".to_string(),
        columns,
        rows: Vec::new(),
        parts: Vec::new(),
        notes: Vec::new(),
        primary: true,
    };
    let mut time = base.clone();
    let mut split = Table {
        title: "the lab's steps: CPU split (%)".to_string(),
        figure: "CPU split (%)".to_string(),
        unit: "%".to_string(),
        parts: CpuSplit::PARTS.iter().map(|s| s.to_string()).collect(),
        primary: false,
        ..base
    };
    for name in names {
        let mut durations = Vec::new();
        let mut splits = Vec::new();
        for k in 0..data.configurations.len() {
            let steps: Vec<_> = data
                .cells
                .iter()
                .filter(|c| c.configuration == k)
                .flat_map(|c| &c.steps)
                .filter(|s| s.step.name == name && s.step.ok)
                .collect();
            let secs: Vec<f64> = steps.iter().map(|s| s.step.duration.as_secs_f64()).collect();
            durations.push(secs);
            let cpu: Vec<CpuSplit> = steps.iter().map(|s| CpuSplit::of(&s.step.cpu)).collect();
            splits.push(match CpuSplit::mean(&cpu) {
                Some(cpu) => TableCell::Split {
                    parts: cpu.parts().to_vec(),
                },
                None => TableCell::Absent,
            });
        }
        let cells = durations
            .iter()
            .map(|secs| match Summary::of(secs) {
                Some(summary) => TableCell::Value {
                    warnings: Vec::new(),
                    summary,
                    standing: None,
                },
                None => TableCell::Absent,
            })
            .collect();
        time.rows.push(TableRow {
            label: name.to_string(),
            name: name.to_string(),
            cells,
        });
        split.rows.push(TableRow {
            label: name.to_string(),
            name: name.to_string(),
            cells: splits,
        });
    }
    // Only the steps whose time is a result of the study get verdicts: formatting, filling,
    // ageing and checking a filesystem; not sub-second housekeeping (wipe, mount, umount).
    rank_rows(&mut time, |row| RANKED_STEPS.contains(&row.name.as_str()));
    time.notes = failed_steps(data);
    vec![readable(time), split]
}

/// The steps' durations in seconds, for a chart, which needs one unit.
pub fn steps_seconds(data: &StudyData) -> Option<Table> {
    let mut time = steps_tables(data).into_iter().next()?;
    for row in &mut time.rows {
        if let Some(label) = row.label.strip_suffix(" (ms)") {
            row.label = label.to_string();
            scale_row(row, 0.001);
        } else if let Some(label) = row.label.strip_suffix(" (s)") {
            row.label = label.to_string();
        }
    }
    time.title = "the lab's steps: duration (s)".to_string();
    time.figure = "duration (s)".to_string();
    time.unit = "s".to_string();
    Some(time)
}

/// The steps' table with each row in the unit that reads best: milliseconds for a step that
/// takes less than a second everywhere, seconds otherwise; the row's label says which.
fn readable(mut time: Table) -> Table {
    for row in &mut time.rows {
        let quick = row.cells.iter().all(|c| match c {
            TableCell::Value { summary, .. } => summary.max < 1.0,
            _ => true,
        });
        if quick {
            scale_row(row, 1000.0);
        }
        row.label = format!("{} ({})", row.label, if quick { "ms" } else { "s" });
    }
    time
}

/// Multiplies every value of a row by `factor`.
fn scale_row(row: &mut TableRow, factor: f64) {
    for cell in &mut row.cells {
        if let TableCell::Value { summary, .. } = cell {
            *summary = summary.scaled(factor);
        }
    }
}

/// The lab's steps whose durations are compared between configurations.
const RANKED_STEPS: [&str; 4] = ["mkfs", "fill", "age", "fsck"];

/// Steps that failed, with their message: they are left out of the durations.
fn failed_steps(data: &StudyData) -> Vec<String> {
    data.cells
        .iter()
        .flat_map(|c| c.steps.iter().map(move |s| (c, s)))
        .filter(|(_, s)| !s.step.ok)
        .map(|(c, s)| format!("{}: {} failed: {}", data.cell_label(c), s.step.name, s.step.detail))
        .collect()
}

/// Ranks every row of a figure's table.
fn rank(table: &mut Table) {
    rank_rows(table, |_| true);
}

/// Sets each value's standing against the best of its row ([`verdict::rank`]), in the rows
/// `ranked` picks.
fn rank_rows(table: &mut Table, ranked: impl Fn(&TableRow) -> bool) {
    let higher = table.higher_is_better;
    for row in table.rows.iter_mut().filter(|r| ranked(r)) {
        let summaries: Vec<Option<&Summary>> = row
            .cells
            .iter()
            .map(|c| match c {
                TableCell::Value { summary, .. } => Some(summary),
                _ => None,
            })
            .collect();
        let standings = verdict::rank(&summaries, higher, verdict::MIN_EFFECT_PCT);
        for (cell, s) in row.cells.iter_mut().zip(standings) {
            if let TableCell::Value { standing, .. } = cell {
                *standing = s;
            }
        }
    }
}

/// A missing cell's column, status and reason.
type MissingKey<'a> = (usize, &'a str, &'a str);

/// The notes under a table: the missing cells with their reasons, then each warning. A
/// column's cells missing for one reason make one note (`jfs: unsupported: ...` when every row
/// says so, `ext4 clients=1, clients=4: hung: ...` otherwise), not one a row.
fn notes(table: &Table) -> Vec<String> {
    // (column, status, reason) and the rows that say so, in the order first met.
    let mut missing: Vec<(MissingKey, Vec<&str>)> = Vec::new();
    let mut warnings = Vec::new();
    let at = |column: &str, rows: &[&str]| {
        if table.corner == "workload" || rows.len() == table.rows.len() {
            column.to_string()
        } else {
            format!("{column} {}", rows.join(", "))
        }
    };
    for row in &table.rows {
        for (k, (cell, column)) in row.cells.iter().zip(&table.columns).enumerate() {
            match cell {
                TableCell::Missing { status, reason } => {
                    let key = (k, status.as_str(), reason.as_str());
                    match missing.iter_mut().find(|(m, _)| *m == key) {
                        Some((_, rows)) => rows.push(&row.name),
                        None => missing.push((key, vec![&row.name])),
                    }
                }
                TableCell::Value { warnings: w, .. } => {
                    let cell = if table.corner == "workload" {
                        column.clone()
                    } else {
                        format!("{column} {}", row.name)
                    };
                    warnings.extend(w.iter().map(|w| format!("{cell}: {w}")));
                }
                _ => {}
            }
        }
    }
    missing
        .into_iter()
        .map(|((k, status, reason), rows)| format!("{}: {status}: {reason}", at(&table.columns[k], &rows)))
        .chain(warnings)
        .collect()
}

/// A table as rows of text, the header first: what the terminal and Markdown lay out.
pub fn grid(t: &Table) -> Vec<Vec<String>> {
    let header = std::iter::once(t.corner.clone())
        .chain(t.columns.iter().cloned())
        .collect();
    let rows = t.rows.iter().map(|r| {
        std::iter::once(r.label.clone())
            .chain(r.cells.iter().map(|c| cell_text(c, &t.unit)))
            .collect()
    });
    std::iter::once(header).chain(rows).collect()
}

/// A table with its rows and columns swapped, the header first: one row per configuration, the
/// workload's rows (threads, clients) as columns.
pub fn transposed_grid(t: &Table) -> Vec<Vec<String>> {
    let header = std::iter::once("configuration".to_string())
        .chain(t.rows.iter().map(|r| r.name.clone()))
        .collect();
    let rows = t.columns.iter().enumerate().map(|(k, column)| {
        std::iter::once(column.clone())
            .chain(t.rows.iter().map(|r| cell_text(&r.cells[k], &t.unit)))
            .collect()
    });
    std::iter::once(header).chain(rows).collect()
}

/// The notes of `t` not in `seen` yet, which are added to it: a section of a report prints each
/// note once, under the first table that has it.
pub fn new_notes<'a>(t: &'a Table, seen: &mut std::collections::HashSet<String>) -> Vec<&'a str> {
    t.notes
        .iter()
        .filter(|n| seen.insert(n.to_string()))
        .map(String::as_str)
        .collect()
}

/// A figure with about four significant digits: 12345, 1234.5, 123.45, 12.345, 1.2345.
pub fn number(v: f64) -> String {
    let a = v.abs();
    if a >= 10_000.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 1000.0 {
        format!("{v:.1}")
    } else if a >= 100.0 {
        format!("{v:.2}")
    } else if a >= 1.0 {
        format!("{v:.3}")
    } else {
        format!("{v:.4}")
    }
}

/// `277.2 ± 3.1`, or the mean alone for a single run.
pub fn mean_and_ci(s: &Summary) -> String {
    match s.ci_half_width() {
        Some(h) => format!("{} ± {}", number(s.mean), number(h)),
        None => number(s.mean),
    }
}

/// How many runs, and the verdict when there is one: `n=3, best`, `n=3, 2.10×`, `n=1`.
pub fn runs_and_standing(summary: &Summary, standing: Option<&Standing>) -> String {
    match standing.map(Standing::text).filter(|t| !t.is_empty()) {
        Some(t) => format!("n={}, {t}", summary.n),
        None => format!("n={}", summary.n),
    }
}

/// A cell of a table in `unit` as one line of text: `277.2 ± 3.1 (n=3, best)`, `12/45/8/35` (a
/// split in whole percent, or in figures of four digits in another unit), `hung`, `-`.
pub fn cell_text(cell: &TableCell, unit: &str) -> String {
    match cell {
        TableCell::Value {
            summary,
            standing,
            warnings,
        } => {
            let flag = if warnings.is_empty() { "" } else { " !" };
            format!(
                "{} ({}){flag}",
                mean_and_ci(summary),
                runs_and_standing(summary, standing.as_ref())
            )
        }
        TableCell::Split { parts } => parts
            .iter()
            .map(|p| if unit == "%" { format!("{p:.0}") } else { number(*p) })
            .collect::<Vec<_>>()
            .join("/"),
        TableCell::Missing { status, .. } => status.clone(),
        TableCell::Absent => "-".to_string(),
    }
}

/// The line under a table that says how to read it.
pub fn legend(table: &Table) -> String {
    if !table.parts.is_empty() {
        return format!("{} (mean of the runs)", table.parts.join("/"));
    }
    let direction = if table.higher_is_better {
        "higher is better"
    } else {
        "lower is better"
    };
    let flagged = table
        .rows
        .iter()
        .flat_map(|r| &r.cells)
        .any(|c| matches!(c, TableCell::Value { warnings, .. } if !warnings.is_empty()));
    let warned = if !flagged {
        ""
    } else {
        "; ! marks a warning, listed below"
    };
    format!(
        "mean ± 95% confidence interval over n runs; {direction}; best, ≈ best and N× only where the difference \
         is significant (see the note on verdicts at the top){warned}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_column_missing_for_one_reason_has_one_note() {
        let missing = |status: &str, reason: &str| TableCell::Missing {
            status: status.into(),
            reason: reason.into(),
        };
        let row = |n: u32, cells: Vec<TableCell>| TableRow {
            label: n.to_string(),
            name: format!("clients={n}"),
            cells,
        };
        let table = Table {
            title: "dbench: Throughput".into(),
            figure: "Throughput (MB/sec)".into(),
            unit: "MB/sec".into(),
            higher_is_better: true,
            corner: "clients".into(),
            columns: vec!["ext4".into(), "jfs".into()],
            rows: vec![
                row(
                    1,
                    vec![missing("hung", "no progress"), missing("unsupported", "no jfs")],
                ),
                row(4, vec![TableCell::Absent, missing("unsupported", "no jfs")]),
                row(
                    16,
                    vec![missing("hung", "no progress"), missing("unsupported", "no jfs")],
                ),
            ],
            parts: Vec::new(),
            notes: Vec::new(),
            primary: true,
        };
        assert_eq!(
            notes(&table),
            [
                "ext4 clients=1, clients=16: hung: no progress",
                "jfs: unsupported: no jfs",
            ]
        );
    }

    #[test]
    fn every_value_says_how_many_runs_it_is_and_its_verdict_if_any() {
        let three = Summary::of(&[1.0, 2.0, 3.0]).unwrap();
        let one = Summary::of(&[62.1]).unwrap();
        assert_eq!(runs_and_standing(&three, Some(&Standing::Best)), "n=3, best");
        assert_eq!(
            runs_and_standing(&three, Some(&Standing::Worse { times: 2.804, p: 0.01 })),
            "n=3, 2.80×"
        );
        assert_eq!(
            runs_and_standing(&three, Some(&Standing::Tied { p: None })),
            "n=3, ≈ best"
        );
        assert_eq!(runs_and_standing(&one, Some(&Standing::Untested)), "n=1");
        let cell = TableCell::Value {
            summary: one,
            standing: Some(Standing::Untested),
            warnings: Vec::new(),
        };
        assert_eq!(cell_text(&cell, "MB/sec"), "62.100 (n=1)");
    }

    #[test]
    fn numbers_keep_about_four_significant_digits() {
        assert_eq!(number(277.2468), "277.25");
        assert_eq!(number(12345.6), "12346");
        assert_eq!(number(1.23456), "1.235");
        assert_eq!(number(0.012345), "0.0123");
    }
}
