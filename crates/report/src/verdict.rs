//! When a report may say that one configuration beats another, and by how much: one rule, used by
//! the report's tables and by `fslab compare` alike.
//!
//! A difference between two configurations is real only when Welch's t-test between their runs
//! gives p < [`ALPHA`] after Holm's correction for the number of comparisons made at once (the
//! others of the same row), *and* the difference is at least the minimum effect (1% unless said
//! otherwise): a tiny but consistent difference is not worth naming, and a large but noisy one is
//! not proven. With fewer than two runs on a side there is no test, so no verdict at all.

use crate::stats::{self, Summary, Welch};
use serde::Serialize;

/// The significance level.
pub const ALPHA: f64 = 0.05;

/// The smallest difference, in percent of the better value, that is worth a verdict.
pub const MIN_EFFECT_PCT: f64 = 1.0;

/// How one entry of a row stands against the best of the row.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Standing {
    /// The best of the row, and at least one other entry is really worse.
    Best,
    /// Cannot be told from the best: no real difference (or the best itself, when no entry is
    /// really worse than it).
    Tied {
        /// Holm-adjusted p-value of the test against the best; none for the best itself.
        p: Option<f64>,
    },
    /// Really worse than the best, `times` times (best ÷ value when more is better, value ÷
    /// best when less is).
    Worse { times: f64, p: f64 },
    /// Fewer than two runs here or in the best: no test, no verdict.
    Untested,
}

impl Standing {
    /// As a table prints it after the value: `best`, `≈ best`, `2.10×`, or nothing.
    pub fn text(&self) -> String {
        match self {
            Standing::Best => "best".to_string(),
            Standing::Tied { .. } => "≈ best".to_string(),
            Standing::Worse { times, .. } => format!("{times:.2}×"),
            Standing::Untested => String::new(),
        }
    }

    /// Whether the entry leads its row: the best, or tied with it.
    pub fn leads(&self) -> bool {
        matches!(self, Standing::Best | Standing::Tied { .. })
    }
}

/// One test of a difference between two sets of runs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Difference {
    /// (b − a) ÷ |a|, in percent; none when a is 0.
    pub change_pct: Option<f64>,
    /// Welch's t-test; none with fewer than two runs on a side.
    pub welch: Option<Welch>,
}

impl Difference {
    /// `b` against `a`.
    pub fn of(a: &Summary, b: &Summary) -> Difference {
        Difference {
            change_pct: (a.mean != 0.0).then(|| (b.mean - a.mean) / a.mean.abs() * 100.0),
            welch: stats::welch_of(a, b),
        }
    }

    /// Whether the difference is real: its p-value (as adjusted for the comparisons made with
    /// it) below [`ALPHA`], and at least `min_effect_pct` percent.
    pub fn is_real(&self, p_adjusted: f64, min_effect_pct: f64) -> bool {
        p_adjusted < ALPHA && self.change_pct.is_some_and(|c| c.abs() >= min_effect_pct)
    }
}

/// Holm's step-down adjustment of `p` (the p-values of one family of tests, in any order): each
/// adjusted value is what must be below the significance level for that test to count, keeping
/// the chance of any false verdict in the family under it. The order of `p` is kept.
pub fn holm(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|a, b| p[*a].total_cmp(&p[*b]));
    let mut adjusted = vec![0.0; m];
    let mut running = 0.0_f64;
    for (rank, &i) in order.iter().enumerate() {
        running = running.max(((m - rank) as f64 * p[i]).min(1.0));
        adjusted[i] = running;
    }
    adjusted
}

/// The standing of each entry of a row (the summary of each configuration's runs of one figure;
/// none where a configuration has no figure), against the best mean of the row. Every other
/// entry is tested against the best, the tests corrected together (Holm). Entries without
/// values stay none.
pub fn rank(entries: &[Option<&Summary>], higher_is_better: bool, min_effect_pct: f64) -> Vec<Option<Standing>> {
    let means: Vec<Option<f64>> = entries.iter().map(|e| e.map(|s| s.mean)).collect();
    let better = |a: f64, b: f64| if higher_is_better { a > b } else { a < b };
    let Some(best) = (0..entries.len()).filter(|i| means[*i].is_some()).reduce(|a, b| {
        if better(means[b].unwrap(), means[a].unwrap()) {
            b
        } else {
            a
        }
    }) else {
        return vec![None; entries.len()];
    };
    let others: Vec<usize> = (0..entries.len())
        .filter(|i| *i != best && means[*i].is_some())
        .collect();
    let mut out: Vec<Option<Standing>> = vec![None; entries.len()];
    let best_runs = entries[best].expect("the best has values");
    if others.is_empty() {
        // Nothing to compare it with.
        out[best] = Some(Standing::Untested);
        return out;
    }
    // The tests that can be made: both sides with two runs at least.
    let tests: Vec<(usize, Difference)> = others
        .iter()
        .map(|&i| (i, Difference::of(best_runs, entries[i].expect("has values"))))
        .filter(|(_, d)| d.welch.is_some())
        .collect();
    let adjusted = holm(
        &tests
            .iter()
            .map(|(_, d)| d.welch.expect("tested").p)
            .collect::<Vec<_>>(),
    );
    let mut any_worse = false;
    for &i in &others {
        out[i] = Some(Standing::Untested);
    }
    for ((i, d), p) in tests.iter().zip(adjusted) {
        out[*i] = Some(if d.is_real(p, min_effect_pct) {
            any_worse = true;
            let (value, best) = (means[*i].expect("has values"), means[best].expect("has values"));
            let times = if higher_is_better { best / value } else { value / best };
            Standing::Worse { times, p }
        } else {
            Standing::Tied { p: Some(p) }
        });
    }
    out[best] = Some(if tests.is_empty() {
        Standing::Untested
    } else if any_worse {
        Standing::Best
    } else {
        Standing::Tied { p: None }
    });
    out
}

/// The footnote that says how to read the verdicts.
pub fn footnote(min_effect_pct: f64) -> String {
    format!(
        "best, and N× worse, only where Welch's t-test against the best of the row gives p < {ALPHA} \
         after Holm's correction for the row's comparisons, and the difference is {min_effect_pct}% or more; \
         ≈ best: cannot be told from the best; no verdict with fewer than 2 runs"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The standings of rows given as runs.
    fn rank(rows: &[Option<&[f64]>], higher_is_better: bool, min_effect_pct: f64) -> Vec<Option<Standing>> {
        let summaries: Vec<Option<Summary>> = rows.iter().map(|r| r.and_then(Summary::of)).collect();
        let refs: Vec<Option<&Summary>> = summaries.iter().map(Option::as_ref).collect();
        super::rank(&refs, higher_is_better, min_effect_pct)
    }

    #[test]
    fn holm_multiplies_the_smallest_p_by_the_number_of_tests_and_keeps_the_order() {
        let adjusted = holm(&[0.04, 0.01, 0.03]);
        // Sorted: 0.01 × 3 = 0.03; 0.03 × 2 = 0.06; 0.04 × 1 = 0.04, raised to 0.06.
        let want = [0.06, 0.03, 0.06];
        for (a, w) in adjusted.iter().zip(want) {
            assert!((a - w).abs() < 1e-12, "{adjusted:?}");
        }
        assert_eq!(holm(&[0.9, 0.8]), [1.0, 1.0], "capped at 1");
        assert!(holm(&[]).is_empty());
    }

    #[test]
    fn a_twenty_percent_difference_with_little_spread_is_a_verdict() {
        let a = [100.0, 101.0, 99.0, 100.5, 99.5];
        let b = [80.0, 80.8, 79.2, 80.4, 79.6];
        let r = rank(&[Some(&a), Some(&b)], true, MIN_EFFECT_PCT);
        assert_eq!(r[0], Some(Standing::Best));
        match r[1] {
            Some(Standing::Worse { times, p }) => {
                assert!((times - 1.25).abs() < 1e-9, "{times}");
                assert!(p < 1e-6, "{p}");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(r[1].unwrap().text(), "1.25×");
    }

    #[test]
    fn a_two_percent_difference_with_much_spread_is_a_tie() {
        let a = [100.0, 110.0, 90.0, 105.0, 95.0];
        let b = [102.0, 112.2, 91.8, 107.1, 96.9];
        let r = rank(&[Some(&a), Some(&b)], true, MIN_EFFECT_PCT);
        assert_eq!(r[1], Some(Standing::Tied { p: None }), "the best of a tied row");
        assert!(matches!(r[0], Some(Standing::Tied { p: Some(p) }) if p > 0.5));
        assert_eq!(r[0].unwrap().text(), "≈ best");
    }

    #[test]
    fn one_run_per_configuration_gives_no_verdict() {
        let r = rank(&[Some(&[62.1][..]), Some(&[1022.0][..]), None], true, MIN_EFFECT_PCT);
        assert_eq!(r, [Some(Standing::Untested), Some(Standing::Untested), None]);
        assert_eq!(Standing::Untested.text(), "");
        let alone = rank(&[Some(&[1.0, 2.0][..])], true, MIN_EFFECT_PCT);
        assert_eq!(alone, [Some(Standing::Untested)], "one configuration: nothing to rank");
    }

    #[test]
    fn lower_is_better_puts_the_smallest_first() {
        let fast = [1.0, 1.01, 0.99];
        let slow = [2.0, 2.02, 1.98];
        let r = rank(&[Some(&slow), Some(&fast)], false, MIN_EFFECT_PCT);
        assert_eq!(r[1], Some(Standing::Best));
        assert!(matches!(r[0], Some(Standing::Worse { times, .. }) if (times - 2.0).abs() < 1e-9));
    }

    #[test]
    fn among_three_configurations_only_the_one_that_differs_is_worse_after_correction() {
        // a and b are the same within their noise; c is 30% lower.
        let a = [100.0, 103.0, 97.0, 101.0];
        let b = [99.0, 102.0, 96.0, 101.5];
        let c = [70.0, 71.0, 69.0, 70.5];
        let r = rank(&[Some(&a), Some(&b), Some(&c)], true, MIN_EFFECT_PCT);
        assert_eq!(r[0], Some(Standing::Best));
        assert!(matches!(r[1], Some(Standing::Tied { .. })), "{:?}", r[1]);
        assert!(matches!(r[2], Some(Standing::Worse { .. })), "{:?}", r[2]);
    }

    #[test]
    fn a_real_but_tiny_difference_is_below_the_minimum_effect() {
        let a = [100.0, 100.01, 99.99, 100.0];
        let b = [99.5, 99.51, 99.49, 99.5];
        let r = rank(&[Some(&a), Some(&b)], true, MIN_EFFECT_PCT);
        assert!(
            matches!(r[1], Some(Standing::Tied { p: Some(p) }) if p < ALPHA),
            "{:?}",
            r[1]
        );
        let r = rank(&[Some(&a), Some(&b)], true, 0.1);
        assert!(matches!(r[1], Some(Standing::Worse { .. })), "{:?}", r[1]);
    }
}
