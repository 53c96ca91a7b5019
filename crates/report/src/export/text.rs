//! The terminal report: each workload's primary tables, aligned, then the lab's steps and the
//! failures.

use crate::study::StudyData;
use crate::summary;
use crate::table::{self, Table};
use std::collections::HashSet;
use std::fmt::Write;

pub fn report(data: &StudyData) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", data.overview());
    for w in 0..data.workloads.len() {
        let _ = writeln!(out, "\n== {} ==", table::workload_title(data, w));
        let mut seen = HashSet::new();
        for t in table::workload_tables(data, w).iter().filter(|t| t.primary) {
            out.push_str(&table_text(t, &mut seen));
        }
    }
    if let Some(steps) = table::steps_tables(data).first() {
        let _ = writeln!(out, "\n== the lab's steps ==");
        out.push_str(&table_text(steps, &mut HashSet::new()));
    }
    let failures = data.failures();
    let _ = writeln!(out, "\n== failures ==");
    if failures.is_empty() {
        let _ = writeln!(out, "none");
    }
    for f in failures {
        let _ = writeln!(out, "{}: {}: {}", f.cell, f.what, f.reason);
    }
    out
}

/// One table: its figure, the aligned rows, the legend and the notes not `seen` yet.
pub fn table_text(t: &Table, seen: &mut HashSet<String>) -> String {
    let rows = table::grid(t);
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
