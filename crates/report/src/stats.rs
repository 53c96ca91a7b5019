//! Statistics over the repeats of a cell: mean, standard deviation, coefficient of variation,
//! min, max, a 95% confidence interval from Student's t distribution, outliers, and Welch's
//! t-test between two sets of repeats.
//!
//! A study repeats each cell a handful of times (3 to 5 is typical), so everything here is
//! written for small samples: the sample standard deviation (n − 1), t rather than normal
//! quantiles, and outliers by the median absolute deviation, which one wild value cannot mask.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

/// Confidence level of [`Summary::ci95`].
pub const CONFIDENCE: f64 = 0.95;

/// A coefficient of variation above this (10%) earns a warning: the repeats disagree too much
/// for small differences between configurations to mean anything.
pub const HIGH_COV: f64 = 0.10;

/// A run whose modified z-score (Iglewicz and Hoaglin) is above this is an outlier.
pub const OUTLIER_Z: f64 = 3.5;

/// What the repeats of one figure of one cell add up to.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Summary {
    /// How many values (repeats that ended well).
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation (divided by n − 1); none for a single value.
    pub sd: Option<f64>,
    /// Standard deviation over the mean; none for a single value or a zero mean.
    pub cov: Option<f64>,
    pub min: f64,
    pub max: f64,
    /// The 95% confidence interval of the mean, from Student's t with n − 1 degrees of freedom;
    /// none for a single value.
    pub ci95: Option<(f64, f64)>,
    /// Indexes (into the values given) of the outliers.
    pub outliers: Vec<usize>,
}

impl Summary {
    /// The summary of `values`; none when there are none. Values that are not finite (a rate
    /// over no time) are left out.
    pub fn of(values: &[f64]) -> Option<Summary> {
        let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        if finite.is_empty() {
            return None;
        }
        let n = finite.len();
        let mean = mean(&finite);
        let sd = sample_sd(&finite, mean);
        let ci95 = sd.map(|sd| {
            let half = t_quantile(n - 1) * sd / (n as f64).sqrt();
            (mean - half, mean + half)
        });
        Some(Summary {
            n,
            mean,
            sd,
            cov: sd.filter(|_| mean != 0.0).map(|sd| sd / mean.abs()),
            min: finite.iter().copied().fold(f64::INFINITY, f64::min),
            max: finite.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            ci95,
            outliers: outliers(&finite),
        })
    }

    /// The same figures in another unit: every value multiplied by `factor` (> 0).
    pub fn scaled(&self, factor: f64) -> Summary {
        Summary {
            n: self.n,
            mean: self.mean * factor,
            sd: self.sd.map(|s| s * factor),
            cov: self.cov,
            min: self.min * factor,
            max: self.max * factor,
            ci95: self.ci95.map(|(lo, hi)| (lo * factor, hi * factor)),
            outliers: self.outliers.clone(),
        }
    }

    /// Half the width of the 95% confidence interval (the "± x" printed after a mean).
    pub fn ci_half_width(&self) -> Option<f64> {
        self.ci95.map(|(lo, hi)| (hi - lo) / 2.0)
    }

    /// What a reader should be warned of: a high coefficient of variation, outliers.
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(cov) = self.cov.filter(|c| *c > HIGH_COV) {
            out.push(format!(
                "high variation: CoV {:.1}% over {} runs (above {:.0}%)",
                cov * 100.0,
                self.n,
                HIGH_COV * 100.0
            ));
        }
        if !self.outliers.is_empty() {
            out.push(format!(
                "{} of {} runs {} an outlier",
                self.outliers.len(),
                self.n,
                if self.outliers.len() == 1 { "is" } else { "are" }
            ));
        }
        out
    }
}

pub fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

/// The sample standard deviation; none for fewer than two values.
fn sample_sd(values: &[f64], mean: f64) -> Option<f64> {
    if values.len() < 2 {
        return None;
    }
    let ss: f64 = values.iter().map(|v| (v - mean).powi(2)).sum();
    Some((ss / (values.len() - 1) as f64).sqrt())
}

/// The two-sided 95% quantile of Student's t with `df` degrees of freedom (12.706 for 1).
pub fn t_quantile(df: usize) -> f64 {
    let t = StudentsT::new(0.0, 1.0, df as f64).expect("degrees of freedom are positive");
    t.inverse_cdf(1.0 - (1.0 - CONFIDENCE) / 2.0)
}

fn median(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

fn sorted(values: &[f64]) -> Vec<f64> {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    v
}

/// The indexes of the outliers among `values`: a modified z-score, 0.6745 (x − median) / MAD,
/// above [`OUTLIER_Z`]. Needs three values at least. When more than half the values are equal
/// the MAD is zero, and any value apart from them is an outlier.
pub fn outliers(values: &[f64]) -> Vec<usize> {
    if values.len() < 3 {
        return Vec::new();
    }
    let med = median(&sorted(values));
    let deviations: Vec<f64> = values.iter().map(|v| (v - med).abs()).collect();
    let mad = median(&sorted(&deviations));
    deviations
        .iter()
        .enumerate()
        .filter(|(_, d)| {
            if mad == 0.0 {
                **d > 0.0
            } else {
                0.6745 * **d / mad > OUTLIER_Z
            }
        })
        .map(|(i, _)| i)
        .collect()
}

/// Welch's t-test of two samples, which does not assume equal variances.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Welch {
    pub t: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
    /// Two-sided p-value: the chance of a difference at least this large if the means were equal.
    pub p: f64,
}

/// Welch's t-test of `a` against `b`; none unless each has two values at least. When both
/// samples have no spread, the p-value is 1 for equal means and 0 for different ones.
pub fn welch(a: &[f64], b: &[f64]) -> Option<Welch> {
    welch_of(&Summary::of(a)?, &Summary::of(b)?)
}

/// Welch's t-test from two samples' summaries (it needs only their means, spreads and sizes).
pub fn welch_of(a: &Summary, b: &Summary) -> Option<Welch> {
    let (ma, mb) = (a.mean, b.mean);
    let (va, vb) = (a.sd?.powi(2), b.sd?.powi(2));
    let (na, nb) = (a.n as f64, b.n as f64);
    let (sa, sb) = (va / na, vb / nb);
    let se2 = sa + sb;
    if se2 == 0.0 {
        let p = if ma == mb { 1.0 } else { 0.0 };
        let t = if ma == mb { 0.0 } else { f64::INFINITY.copysign(ma - mb) };
        return Some(Welch {
            t,
            df: na + nb - 2.0,
            p,
        });
    }
    let t = (ma - mb) / se2.sqrt();
    let df = se2.powi(2) / (sa.powi(2) / (na - 1.0) + sb.powi(2) / (nb - 1.0));
    let dist = StudentsT::new(0.0, 1.0, df).expect("degrees of freedom are positive");
    let p = (2.0 * dist.sf(t.abs())).min(1.0);
    Some(Welch { t, df, p })
}

/// The value below which `q` (0 to 1) of the operations fall, from histogram buckets given as
/// (upper bound, count) in increasing order of bound: the bound of the bucket that reaches it.
/// None when the buckets hold nothing.
pub fn bucket_quantile(buckets: &[(u64, u64)], q: f64) -> Option<u64> {
    let total: u64 = buckets.iter().map(|(_, c)| c).sum();
    if total == 0 {
        return None;
    }
    let rank = ((q * total as f64).ceil() as u64).clamp(1, total);
    let mut seen = 0;
    for (upper, count) in buckets {
        seen += count;
        if seen >= rank {
            return Some(*upper);
        }
    }
    buckets.last().map(|(u, _)| *u)
}

/// Buckets of several histograms added together, in increasing order of bound.
pub fn merge_buckets<'a>(histograms: impl IntoIterator<Item = &'a [(u64, u64)]>) -> Vec<(u64, u64)> {
    let mut merged = std::collections::BTreeMap::new();
    for h in histograms {
        for (upper, count) in h {
            *merged.entry(*upper).or_insert(0) += count;
        }
    }
    merged.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_single_value_has_no_spread_and_no_interval() {
        let s = Summary::of(&[42.0]).unwrap();
        assert_eq!((s.n, s.mean, s.sd, s.ci95, s.cov), (1, 42.0, None, None, None));
        assert!(s.warnings().is_empty());
    }

    #[test]
    fn values_that_are_not_numbers_are_left_out() {
        let s = Summary::of(&[1.0, f64::NAN, 3.0]).unwrap();
        assert_eq!((s.n, s.mean), (2, 2.0));
        assert!(Summary::of(&[f64::NAN]).is_none());
        assert!(Summary::of(&[]).is_none());
    }

    #[test]
    fn one_wild_value_among_close_ones_is_an_outlier() {
        assert_eq!(outliers(&[100.0, 101.0, 99.0, 100.5, 160.0]), vec![4]);
        assert!(outliers(&[100.0, 101.0, 99.0, 100.5, 102.0]).is_empty());
        assert_eq!(outliers(&[10.0, 10.0, 10.0, 11.0]), vec![3]);
        assert!(
            outliers(&[1.0, 100.0]).is_empty(),
            "two values cannot tell which is wrong"
        );
    }

    #[test]
    fn quantiles_of_buckets_take_the_bound_of_the_bucket_that_reaches_them() {
        let b = [(10, 50), (20, 45), (40, 4), (80, 1)];
        assert_eq!(bucket_quantile(&b, 0.5), Some(10));
        assert_eq!(bucket_quantile(&b, 0.9), Some(20));
        assert_eq!(bucket_quantile(&b, 0.99), Some(40));
        assert_eq!(bucket_quantile(&b, 1.0), Some(80));
        assert_eq!(bucket_quantile(&[], 0.5), None);
        let m = merge_buckets([&b[..2], &[(10, 5), (15, 1)][..]]);
        assert_eq!(m, vec![(10, 55), (15, 1), (20, 45)]);
    }
}
