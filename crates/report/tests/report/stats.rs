//! The statistics against values worked out independently. Every constant below was computed
//! with Python 3 and SciPy 1.17.1 (numpy's mean and std with ddof=1,
//! `scipy.stats.t.ppf(0.975, n - 1)` for the interval, `scipy.stats.ttest_ind(a, b,
//! equal_var=False)` for Welch's test), and the simple ones checked by hand.

use fslab_report::stats::{self, Summary};

const A: [f64; 5] = [100.0, 102.0, 98.0, 101.0, 99.0];
const B: [f64; 5] = [120.0, 118.5, 121.0, 119.5, 121.5];
const C: [f64; 5] = [100.0, 90.0, 110.0, 95.0, 105.0];
const D: [f64; 5] = [112.0, 88.0, 104.0, 96.0, 110.0];

fn close(what: &str, got: f64, want: f64, tolerance: f64) {
    assert!(
        (got - want).abs() <= tolerance * want.abs().max(1e-300),
        "{what}: got {got}, want {want} (relative tolerance {tolerance})"
    );
}

#[test]
fn mean_sd_cov_min_max_and_ci_of_five_runs() {
    let s = Summary::of(&A).unwrap();
    assert_eq!(s.n, 5);
    // By hand: the deviations are 0, 2, -2, 1, -1; 10 / 4 = 2.5; sqrt(2.5) = 1.5811388300841898.
    close("mean", s.mean, 100.0, 1e-12);
    close("sd", s.sd.unwrap(), 1.5811388300841898, 1e-12);
    close("cov", s.cov.unwrap(), 0.0158113883008419, 1e-12);
    assert_eq!((s.min, s.max), (98.0, 102.0));
    let (lo, hi) = s.ci95.unwrap();
    close("ci low", lo, 98.03675683852244, 1e-9);
    close("ci high", hi, 101.96324316147756, 1e-9);
    assert!(s.outliers.is_empty());
    assert!(s.warnings().is_empty(), "{:?}", s.warnings());

    let s = Summary::of(&D).unwrap();
    close("mean", s.mean, 102.0, 1e-12);
    close("sd", s.sd.unwrap(), 10.0, 1e-12);
    let (lo, hi) = s.ci95.unwrap();
    close("ci low", lo, 89.58336001796236, 1e-9);
    close("ci high", hi, 114.41663998203764, 1e-9);
}

#[test]
fn t_quantiles_for_the_interval() {
    close("t(0.975, 1)", stats::t_quantile(1), 12.706204736174694, 1e-9);
    close("t(0.975, 4)", stats::t_quantile(4), 2.7764451051977934, 1e-9);
}

#[test]
fn welch_t_test_of_a_clear_difference() {
    let w = stats::welch(&A, &B).unwrap();
    close("t", w.t, -22.686172448920626, 1e-9);
    close("df", w.df, 7.441769190127557, 1e-9);
    close("p", w.p, 3.8455209922953245e-08, 1e-6);
}

#[test]
fn welch_t_test_of_noise() {
    let w = stats::welch(&C, &D).unwrap();
    close("t", w.t, -0.3508232077228117, 1e-9);
    close("df", w.df, 7.595505617977528, 1e-9);
    close("p", w.p, 0.7352515229518886, 1e-8);
}

#[test]
fn welch_t_test_of_unequal_sizes() {
    let w = stats::welch(&A, &[101.0, 103.0]).unwrap();
    close("t", w.t, -1.6329931618554523, 1e-9);
    close("df", w.df, 2.1176470588235294, 1e-9);
    close("p", w.p, 0.23718631933251952, 1e-8);
}

#[test]
fn welch_needs_two_values_a_side_and_copes_with_no_spread() {
    assert!(stats::welch(&A, &[100.0]).is_none());
    let same = stats::welch(&[5.0, 5.0], &[5.0, 5.0]).unwrap();
    assert_eq!(same.p, 1.0);
    let apart = stats::welch(&[5.0, 5.0], &[6.0, 6.0]).unwrap();
    assert_eq!(apart.p, 0.0);
}

#[test]
fn high_variation_and_outliers_are_warned_of() {
    let s = Summary::of(&[100.0, 80.0, 120.0]).unwrap();
    // sd 20 over a mean of 100: a CoV of 20%, above the 10% threshold.
    close("cov", s.cov.unwrap(), 0.2, 1e-12);
    assert!(
        s.warnings().iter().any(|w| w.contains("CoV 20.0%")),
        "{:?}",
        s.warnings()
    );
    let s = Summary::of(&[100.0, 101.0, 99.0, 100.5, 160.0]).unwrap();
    assert_eq!(s.outliers, vec![4]);
    assert!(
        s.warnings().iter().any(|w| w.contains("1 of 5 runs is an outlier")),
        "{:?}",
        s.warnings()
    );
}
