//! The terminal report: each workload's primary tables, aligned, then the lab's steps and the
//! failures.

use crate::findings;
use crate::study::StudyData;
use crate::summary;
use crate::table::{self, Table};
use crate::verdict;
use std::collections::HashSet;
use std::fmt::Write;

/// The terminal report, its tables laid out to fit `width` columns where they can.
pub fn report(data: &StudyData, width: usize) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", data.overview());
    let _ = writeln!(out, "\n== what the study found ==");
    out.push_str(&findings::text(&findings::of(data)));
    let _ = writeln!(out, "({})", verdict::footnote(verdict::MIN_EFFECT_PCT));
    for w in 0..data.workloads.len() {
        let _ = writeln!(out, "\n== {} ==", table::workload_title(data, w));
        let mut seen = HashSet::new();
        for t in table::workload_tables(data, w).iter().filter(|t| t.primary) {
            out.push_str(&table_text(t, &mut seen, width));
        }
    }
    if let Some(steps) = table::steps_tables(data).first() {
        let _ = writeln!(out, "\n== the lab's steps ==");
        out.push_str(&table_text(steps, &mut HashSet::new(), width));
    }
    let failures = data.failures_grouped();
    let _ = writeln!(out, "\n== failures ==");
    if failures.is_empty() {
        let _ = writeln!(out, "none");
    }
    for f in failures {
        let _ = writeln!(out, "{}: {}: {}", f.cell, f.what, f.reason);
    }
    out
}

/// One table: its figure, the aligned rows, the legend and the notes not `seen` yet. When the
/// configurations side by side are wider than `width`, each configuration gets a row of its own
/// instead (as the seeds' own tables have them), whichever way is narrower.
pub fn table_text(t: &Table, seen: &mut HashSet<String>, width: usize) -> String {
    let wide = table::grid(t);
    let rows = if widest(&wide) + 2 > width {
        let tall = table::transposed_grid(t);
        if widest(&tall) < widest(&wide) {
            tall
        } else {
            wide
        }
    } else {
        wide
    };
    let mut out = format!("\n{}\n", t.figure);
    for line in summary::table(&rows).lines() {
        let _ = writeln!(out, "  {line}");
    }
    let _ = writeln!(out, "  ({})", table::legend(t));
    for n in table::new_notes(t, seen) {
        let _ = writeln!(out, "  ! {n}");
    }
    out
}

/// The width of the longest line `rows` lay out to.
fn widest(rows: &[Vec<String>]) -> usize {
    summary::table(rows)
        .lines()
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(0)
}
