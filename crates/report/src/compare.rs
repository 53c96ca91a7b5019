//! Comparisons: a candidate against a baseline, figure by figure, as mmtests compares kernels.
//! Each side is a study, or one configuration of a study; cells are paired by what they ran
//! (configuration, workload and parameters for two studies; workload and parameters for two
//! configurations). A change is significant by the same rule as the report's verdicts
//! ([`crate::verdict`]): Welch's t-test gives p < 0.05 *and* the change is at least the minimum
//! effect: a tiny but consistent difference is not worth a warning, and a large but noisy one
//! is not proven. Each line is one test of its own (a comparison of two configurations of a
//! study is the report's row of two).

use crate::error::{ReportError, Result};
use crate::stats::{self, Summary};
use crate::study::{Cell, LatencyFigure, StudyData};
use crate::summary;
use crate::table::{figure_name, mean_and_ci};
use crate::verdict::Difference;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;

pub use crate::verdict::ALPHA;

/// One side of a comparison.
#[derive(Clone, Copy)]
pub struct Side<'a> {
    pub data: &'a StudyData,
    /// One configuration of the study (an index into its configurations), or all of them.
    pub configuration: Option<usize>,
}

impl<'a> Side<'a> {
    /// The side `study` alone, or its configuration `name` (a configuration's label, or its
    /// filesystem's name when that names one configuration only).
    pub fn new(data: &'a StudyData, configuration: Option<&str>) -> Result<Side<'a>> {
        let configuration = configuration.map(|name| find_configuration(data, name)).transpose()?;
        Ok(Side { data, configuration })
    }

    /// `quick (study 3)`, `quick (study 3) xfs`.
    pub fn label(&self) -> String {
        let s = &self.data.study;
        let mut label = format!("{} (study {})", s.name, s.id);
        if let Some(k) = self.configuration {
            label.push(' ');
            label.push_str(&self.data.configurations[k].label);
        }
        label
    }

    fn cells(&self) -> impl Iterator<Item = &'a Cell> + '_ {
        self.data
            .cells
            .iter()
            .filter(move |c| self.configuration.is_none_or(|k| c.configuration == k))
    }
}

fn find_configuration(data: &StudyData, name: &str) -> Result<usize> {
    let configs = &data.configurations;
    if let Some(k) = configs.iter().position(|c| c.label == name) {
        return Ok(k);
    }
    let by_filesystem: Vec<usize> = (0..configs.len()).filter(|k| configs[*k].filesystem == name).collect();
    match by_filesystem[..] {
        [k] => Ok(k),
        _ => Err(ReportError::NoConfiguration {
            study: data.study.name.clone(),
            name: name.to_string(),
            available: configs.iter().map(|c| c.label.clone()).collect(),
        }),
    }
}

/// What became of one figure of one cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Significantly better (in the figure's own direction).
    Better,
    /// Significantly worse: a regression.
    Worse,
    /// The t-test or the minimum effect does not support a difference.
    NoSignificantChange,
    /// Fewer than two runs on a side: no t-test is possible.
    NotTested,
    /// A side has no figures (the cell hung, failed, is unsupported) or lacks this figure; the
    /// line's note says which and why.
    Missing,
}

/// One figure of one pair of cells.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Line {
    /// The cell as both sides ran it: `dbench clients=4`, with the configuration when two
    /// studies are compared (`ext4 dbench clients=4`).
    pub cell: String,
    pub metric: String,
    pub unit: String,
    pub higher_is_better: bool,
    pub baseline: Option<Summary>,
    pub candidate: Option<Summary>,
    /// (candidate − baseline) ÷ baseline, in percent.
    pub change_pct: Option<f64>,
    pub welch: Option<stats::Welch>,
    pub verdict: Verdict,
    /// Why a side is missing.
    pub note: Option<String>,
}

impl Line {
    pub fn significant(&self) -> bool {
        matches!(self.verdict, Verdict::Better | Verdict::Worse)
    }
}

/// A whole comparison.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Comparison {
    pub baseline: String,
    pub candidate: String,
    /// The smallest change, in percent, that counts as significant.
    pub min_effect_pct: f64,
    pub alpha: f64,
    pub lines: Vec<Line>,
    /// Cells one side has and the other lacks.
    pub only_in_baseline: Vec<String>,
    pub only_in_candidate: Vec<String>,
}

/// `fslab compare --json`: the comparison with the version of its layout.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct CompareDocument<'a> {
    /// Raised when a field changes meaning or goes away.
    pub schema_version: u32,
    #[serde(flatten)]
    pub comparison: &'a Comparison,
}

/// The version of [`CompareDocument`]'s layout.
pub const SCHEMA_VERSION: u32 = 2;

impl Comparison {
    /// The `--json` document.
    pub fn document(&self) -> CompareDocument<'_> {
        CompareDocument {
            schema_version: SCHEMA_VERSION,
            comparison: self,
        }
    }
}

/// The JSON Schema of `fslab compare --json` (docs/schema/compare.schema.json).
pub fn schema() -> String {
    let mut text = serde_json::to_string_pretty(&schemars::schema_for!(CompareDocument)).expect("a schema serialises");
    text.push('\n');
    text
}

/// What pairs two cells: with a configuration named on each side, the workload and its
/// parameters; for two whole studies, the configuration too.
type Key = (
    String,
    Option<String>,
    Option<u64>,
    Option<String>,
    String,
    BTreeMap<String, String>,
);

fn key(cell: &Cell, with_configuration: bool) -> Key {
    let s = &cell.row.spec;
    if with_configuration {
        (
            s.filesystem.clone(),
            s.scheduler.clone(),
            s.read_ahead_kb,
            s.fill_to.map(|f| f.to_string()),
            s.workload.clone(),
            s.params.clone(),
        )
    } else {
        (String::new(), None, None, None, s.workload.clone(), s.params.clone())
    }
}

/// The cell as a comparison names it: without its configuration when one is named per side.
fn cell_name(side: &Side, cell: &Cell) -> String {
    let full = side.data.cell_label(cell);
    match side.configuration {
        Some(k) => full
            .strip_prefix(&side.data.configurations[k].label)
            .unwrap_or(&full)
            .trim_start()
            .to_string(),
        None => full,
    }
}

/// Compares `candidate` against `baseline`: each figure of each pair of cells.
pub fn compare(baseline: Side, candidate: Side, min_effect_pct: f64) -> Result<Comparison> {
    let whole_studies = baseline.configuration.is_none() || candidate.configuration.is_none();
    if whole_studies && baseline.configuration != candidate.configuration {
        return Err(ReportError::Compare(
            "name a configuration on both sides (STUDY:CONFIG), or on neither".to_string(),
        ));
    }
    if baseline.data.study.id == candidate.data.study.id && baseline.configuration == candidate.configuration {
        return Err(ReportError::Compare(format!(
            "both sides are {}: name two studies, or two configurations of one (STUDY:CONFIG)",
            baseline.label()
        )));
    }
    let mut comparison = Comparison {
        baseline: baseline.label(),
        candidate: candidate.label(),
        min_effect_pct,
        alpha: ALPHA,
        lines: Vec::new(),
        only_in_baseline: Vec::new(),
        only_in_candidate: Vec::new(),
    };
    let theirs: Vec<&Cell> = candidate.cells().collect();
    for mine in baseline.cells() {
        let k = key(mine, whole_studies);
        match theirs.iter().find(|c| key(c, whole_studies) == k) {
            Some(other) => comparison
                .lines
                .extend(pair(&cell_name(&baseline, mine), mine, other, min_effect_pct)),
            None => comparison.only_in_baseline.push(cell_name(&baseline, mine)),
        }
    }
    for other in &theirs {
        let k = key(other, whole_studies);
        if !baseline.cells().any(|c| key(c, whole_studies) == k) {
            comparison.only_in_candidate.push(cell_name(&candidate, other));
        }
    }
    Ok(comparison)
}

/// The lines of one pair of cells: one per figure they share, or one saying what is missing.
fn pair(name: &str, base: &Cell, cand: &Cell, min_effect_pct: f64) -> Vec<Line> {
    let missing = |cell: &Cell, side: &str| cell.missing().map(|m| format!("{side} {}: {}", m.status, m.reason));
    if let Some(note) = missing(base, "baseline").or_else(|| missing(cand, "candidate")) {
        return vec![Line {
            cell: name.to_string(),
            metric: "-".to_string(),
            unit: String::new(),
            higher_is_better: true,
            baseline: None,
            candidate: None,
            change_pct: None,
            welch: None,
            verdict: Verdict::Missing,
            note: Some(note),
        }];
    }
    // Each figure the baseline gives, then each operation's latency percentiles, run by run.
    let figures = base.metrics.iter().map(|b| {
        let c = cand.metric(&b.name).map(|c| &c.summary);
        (b.name.clone(), b.unit.clone(), b.higher_is_better, &b.summary, c)
    });
    let latencies = base.latency_runs.iter().map(|b| {
        let c = cand
            .latency_runs
            .iter()
            .find(|c| c.name() == b.name())
            .map(|c| &c.summary);
        (b.name(), LatencyFigure::UNIT.to_string(), false, &b.summary, c)
    });
    figures
        .chain(latencies)
        .map(|(metric, unit, higher_is_better, b, c)| {
            let d = c.map(|c| Difference::of(b, c));
            let (change_pct, welch) = (d.and_then(|d| d.change_pct), d.and_then(|d| d.welch));
            let verdict = verdict(higher_is_better, d, min_effect_pct);
            let note = match (c, change_pct) {
                (None, _) => Some("the candidate does not give this figure".to_string()),
                (Some(_), None) => Some("the baseline's mean is 0: no change can be worked out".to_string()),
                _ => None,
            };
            Line {
                cell: name.to_string(),
                metric,
                unit,
                higher_is_better,
                baseline: Some(b.clone()),
                candidate: c.cloned(),
                change_pct,
                welch,
                verdict,
                note,
            }
        })
        .collect()
}

fn verdict(higher_is_better: bool, d: Option<Difference>, min_effect: f64) -> Verdict {
    let Some((d, change)) = d.and_then(|d| Some((d, d.change_pct?))) else {
        return Verdict::Missing;
    };
    let Some(welch) = d.welch else {
        return Verdict::NotTested;
    };
    if !d.is_real(welch.p, min_effect) {
        return Verdict::NoSignificantChange;
    }
    if (change > 0.0) == higher_is_better {
        Verdict::Better
    } else {
        Verdict::Worse
    }
}

impl Comparison {
    /// Whether any line could be tested (two runs a side at least).
    pub fn tested_any(&self) -> bool {
        self.lines.iter().any(|l| l.welch.is_some())
    }

    /// The significant regressions larger than `pct` percent.
    pub fn regressions_above(&self, pct: f64) -> Vec<&Line> {
        self.lines
            .iter()
            .filter(|l| l.verdict == Verdict::Worse && l.change_pct.is_some_and(|c| c.abs() > pct))
            .collect()
    }

    /// The comparison as aligned text, significant changes marked with `*`.
    pub fn text(&self) -> String {
        let mut out = format!("baseline:  {}\ncandidate: {}\n\n", self.baseline, self.candidate);
        let mut rows = vec![["cell", "figure", "baseline", "candidate", "change", "p", "verdict"]
            .map(String::from)
            .to_vec()];
        for l in &self.lines {
            let figure = figure_name(&l.metric, &l.unit);
            let side = |s: &Option<Summary>| s.as_ref().map(mean_and_ci).unwrap_or_else(|| "-".into());
            let change = l.change_pct.map_or("-".to_string(), |c| {
                format!("{c:+.1}%{}", if l.significant() { " *" } else { "" })
            });
            rows.push(vec![
                l.cell.clone(),
                figure,
                side(&l.baseline),
                side(&l.candidate),
                change,
                l.welch.map_or("-".to_string(), |w| p_value(w.p)),
                verdict_text(l),
            ]);
        }
        out.push_str(&summary::table(&rows));
        let _ = writeln!(
            out,
            "\nmean ± 95% confidence interval; * significant: p < {} (Welch's t-test) and a change of {}% or more",
            self.alpha, self.min_effect_pct
        );
        for l in self.lines.iter().filter(|l| l.verdict == Verdict::Missing) {
            let note = l.note.as_deref().unwrap_or("no figure on one side");
            let _ = writeln!(out, "missing, {} {}: {note}", l.cell, l.metric);
        }
        for (side, cells) in [
            ("baseline", &self.only_in_baseline),
            ("candidate", &self.only_in_candidate),
        ] {
            if !cells.is_empty() {
                let _ = writeln!(out, "only in the {side}: {}", cells.join(", "));
            }
        }
        out
    }
}

fn p_value(p: f64) -> String {
    if p < 0.0001 {
        "<0.0001".to_string()
    } else {
        format!("{p:.4}")
    }
}

fn verdict_text(l: &Line) -> String {
    match l.verdict {
        Verdict::Better => "better".into(),
        Verdict::Worse => "WORSE".into(),
        Verdict::NoSignificantChange => "no significant change".into(),
        Verdict::NotTested => "not tested: needs 2 runs a side".into(),
        Verdict::Missing => "missing (listed below)".into(),
    }
}
