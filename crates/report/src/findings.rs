//! What a study found, in a few lines, for the top of a report: for each workload's headline
//! figure and each row of its table, which configurations lead, which cannot be told from the
//! leader, which are really worse, by how much and with what confidence; and a warning when
//! single runs left nothing to rank.

use crate::table::{self, Table, TableCell};
use crate::verdict::Standing;
use crate::StudyData;
use serde::Serialize;

/// The findings of one workload's headline figure.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Finding {
    /// `dbench: Throughput (MB/sec)`.
    pub title: String,
    pub higher_is_better: bool,
    /// One line per row of the table.
    pub rows: Vec<RowFinding>,
}

/// What one row of a headline table says.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct RowFinding {
    /// `clients=4`, or the workload's name when nothing varies.
    pub row: String,
    /// The sentence: `xfs best; ext4 1.45× worse (p = 0.003); btrfs ≈ best (p = 0.41)`.
    pub text: String,
}

/// The findings of every workload, and the warnings the reader needs first.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Findings {
    pub warnings: Vec<String>,
    pub figures: Vec<Finding>,
}

/// What `data` found.
pub fn of(data: &StudyData) -> Findings {
    let mut figures = Vec::new();
    let mut untested = false;
    for w in 0..data.workloads.len() {
        let tables = table::workload_tables(data, w);
        let Some(headline) = tables.iter().find(|t| t.parts.is_empty()) else {
            continue;
        };
        let rows: Vec<RowFinding> = headline
            .rows
            .iter()
            .map(|r| {
                let (text, single) = row_text(headline, &r.cells);
                untested |= single;
                RowFinding {
                    row: r.name.clone(),
                    text,
                }
            })
            .collect();
        figures.push(Finding {
            title: headline.title.clone(),
            higher_is_better: headline.higher_is_better,
            rows,
        });
    }
    let mut warnings = Vec::new();
    if untested {
        warnings.push(
            "Some configurations were measured once: a single run cannot rank configurations, so those rows \
             have no verdict (set `repeat = 3` or more in the study for verdicts)."
                .to_string(),
        );
    }
    Findings { warnings, figures }
}

/// A row as a sentence, and whether it is unranked for want of runs.
fn row_text(t: &Table, cells: &[TableCell]) -> (String, bool) {
    let mut leaders = Vec::new();
    let mut tied = Vec::new();
    let mut worse = Vec::new();
    let mut untested = Vec::new();
    let mut missing = Vec::new();
    for (cell, column) in cells.iter().zip(&t.columns) {
        match cell {
            TableCell::Value { summary, standing, .. } => {
                let value = format!("{} {}", table::number(summary.mean), t.unit);
                match standing {
                    Some(Standing::Best) => leaders.push(format!("{column} leads ({value})")),
                    Some(Standing::Tied { p: Some(p) }) => tied.push(format!("{column} ({})", p_text(*p))),
                    Some(Standing::Tied { p: None }) => tied.push(column.clone()),
                    Some(Standing::Worse { times, p }) => {
                        worse.push(format!("{column} {times:.2}× worse ({})", p_text(*p)))
                    }
                    Some(Standing::Untested) | None => {
                        untested.push((column.as_str(), format!("{value} (n={})", summary.n)))
                    }
                }
            }
            TableCell::Missing { status, .. } => missing.push(format!("{column} {status}")),
            TableCell::Split { .. } | TableCell::Absent => {}
        }
    }
    let mut parts = Vec::new();
    let single = !untested.is_empty() && leaders.is_empty() && tied.is_empty();
    let alone = single && untested.len() == 1 && worse.is_empty();
    let listed = |u: &[(&str, String)]| u.iter().map(|(c, v)| format!("{c} {v}")).collect::<Vec<_>>().join(", ");
    if alone {
        parts.push(format!("only {} has figures: {}", untested[0].0, untested[0].1));
    } else if single {
        parts.push(format!("no verdict: {}", listed(&untested)));
    } else if leaders.is_empty() {
        parts.push(format!("no difference can be told: {}", tied.join(", ")));
    } else {
        parts.extend(leaders);
        if !tied.is_empty() {
            parts.push(format!("tied with it: {}", tied.join(", ")));
        }
        parts.extend(worse);
        if !untested.is_empty() {
            parts.push(format!("not ranked (too few runs): {}", listed(&untested)));
        }
    }
    if !missing.is_empty() {
        parts.push(format!("no figures: {}", missing.join(", ")));
    }
    (parts.join("; "), single && !alone)
}

fn p_text(p: f64) -> String {
    if p < 0.001 {
        "p < 0.001".to_string()
    } else {
        format!("p = {p:.3}")
    }
}

/// The findings as lines of text, under a heading, for the terminal and Markdown.
pub fn text(f: &Findings) -> String {
    let mut out = String::new();
    for w in &f.warnings {
        out.push_str(&format!("! {w}\n"));
    }
    for figure in &f.figures {
        let direction = if figure.higher_is_better { "higher" } else { "lower" };
        out.push_str(&format!("{} ({direction} is better)\n", figure.title));
        for r in &figure.rows {
            out.push_str(&format!("  {}: {}\n", r.row, r.text));
        }
    }
    out
}
