//! The report as Markdown: every table of every workload (not only the primary ones), with the
//! test bed, the configurations, the lab's steps and the failures.

use crate::findings;
use crate::study::StudyData;
use crate::table::{self, Table};
use crate::verdict;
use std::collections::HashSet;
use std::fmt::Write;

pub fn report(data: &StudyData) -> String {
    let mut out = format!("# {}\n\n{}\n", data.study.name, data.overview());
    let found = findings::of(data);
    let _ = writeln!(out, "\n## What the study found\n");
    for w in &found.warnings {
        let _ = writeln!(out, "> **{}**\n", escape(w));
    }
    for figure in &found.figures {
        let direction = if figure.higher_is_better { "higher" } else { "lower" };
        let _ = writeln!(out, "**{}** ({direction} is better)\n", escape(&figure.title));
        for r in &figure.rows {
            let _ = writeln!(out, "- {}: {}", escape(&r.row), escape(&r.text));
        }
        out.push('\n');
    }
    let _ = writeln!(out, "_{}_", escape(&verdict::footnote(verdict::MIN_EFFECT_PCT)));
    let _ = writeln!(out, "\n## Configurations\n");
    out.push_str(&rows(&table::configuration_rows(data), false));
    for w in 0..data.workloads.len() {
        let _ = writeln!(out, "\n## {}", escape(&table::workload_title(data, w)));
        let mut seen = HashSet::new();
        for t in table::workload_tables(data, w) {
            out.push_str(&table_markdown(&t, &mut seen));
        }
    }
    let steps = table::steps_tables(data);
    if !steps.is_empty() {
        let _ = writeln!(out, "\n## The lab's steps");
        let mut seen = HashSet::new();
        for t in &steps {
            out.push_str(&table_markdown(t, &mut seen));
        }
    }
    let _ = writeln!(out, "\n## Failures\n");
    let failures = data.failures_grouped();
    if failures.is_empty() {
        let _ = writeln!(out, "None.");
    }
    for f in failures {
        let _ = writeln!(out, "- **{}**: {}: {}", escape(&f.cell), f.what, escape(&f.reason));
    }
    let _ = writeln!(out, "\n## Test bed\n");
    for (k, v) in data.testbed_lines() {
        let _ = writeln!(out, "- {}: {}", escape(&k), escape(&v));
    }
    out
}

/// One table under its own heading, with its legend and the notes not `seen` yet.
pub fn table_markdown(t: &Table, seen: &mut HashSet<String>) -> String {
    let grid = table::grid(t);
    let mut out = format!("\n### {}\n\n", escape(&t.figure));
    out.push_str(&rows(&grid, true));
    let _ = writeln!(out, "\n_{}_", table::legend(t));
    let notes = table::new_notes(t, seen);
    if !notes.is_empty() {
        out.push('\n');
    }
    for n in notes {
        let _ = writeln!(out, "- {}", escape(n));
    }
    out
}

/// A pipe table: the first row is the header; with `numbers`, the columns after the first are
/// right-aligned.
fn rows(grid: &[Vec<String>], numbers: bool) -> String {
    let mut out = String::new();
    for (i, r) in grid.iter().enumerate() {
        let cells: Vec<String> = r.iter().map(|c| escape(c)).collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
        if i == 0 {
            let marks: Vec<&str> = (0..r.len())
                .map(|c| if numbers && c > 0 { "---:" } else { "---" })
                .collect();
            let _ = writeln!(out, "|{}|", marks.join("|"));
        }
    }
    out
}

/// Text safe inside a Markdown table cell or list item.
fn escape(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}
