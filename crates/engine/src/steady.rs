//! Steady state, as fio's `steadystate` judges it: a run may stop as soon as its throughput,
//! IOPS or mean latency over the last `window` seconds stays within a deviation of its mean, or
//! changes by less than a slope per second, instead of running to its time limit.

use crate::units::Span;
use serde::{Deserialize, Serialize};

/// `[stop] steady = { on = "iops", within = "2%", window = "10s" }`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Steady {
    /// The figure judged, second by second.
    pub on: SteadyFigure,
    /// Steady when every second of the window is within this fraction of the window's mean
    /// (fio's `iops:2%`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "crate::units::opt_fraction"
    )]
    #[schemars(with = "Option<String>")]
    pub within: Option<f64>,
    /// Steady when the least-squares slope of the window, per second, is at most this fraction
    /// of the window's mean (fio's `iops_slope:0.5%`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "crate::units::opt_fraction"
    )]
    #[schemars(with = "Option<String>")]
    pub slope: Option<f64>,
    /// The seconds judged together.
    pub window: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SteadyFigure {
    /// Bytes read and written per second.
    Throughput,
    /// Operations per second.
    Iops,
    /// The mean latency of the second's timed operations.
    Latency,
}

/// What became of a run's steady-state condition.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SteadyOutcome {
    /// Whether the window became steady before the time limit.
    pub reached: bool,
    /// Seconds after the ramp at which it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_s: Option<f64>,
    /// The mean of the figure over the last window judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean: Option<f64>,
}

impl Steady {
    /// Whether `window` (one value per second, oldest first, as many as the window has seconds)
    /// is steady.
    pub fn holds(&self, window: &[f64]) -> bool {
        let n = window.len();
        if n < 2 {
            return false;
        }
        let mean = window.iter().sum::<f64>() / n as f64;
        if mean <= 0.0 || !mean.is_finite() {
            return false;
        }
        let within = self
            .within
            .is_none_or(|d| window.iter().all(|v| (v - mean).abs() <= d * mean));
        let slope = self.slope.is_none_or(|s| slope_of(window).abs() <= s * mean);
        within && slope
    }

    /// The seconds in the window.
    pub fn seconds(&self) -> usize {
        self.window.0.as_secs().max(1) as usize
    }
}

/// The least-squares slope of `values` against 0, 1, 2... (their seconds).
fn slope_of(values: &[f64]) -> f64 {
    let n = values.len() as f64;
    let mean_x = (n - 1.0) / 2.0;
    let mean_y = values.iter().sum::<f64>() / n;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (i, y) in values.iter().enumerate() {
        let dx = i as f64 - mean_x;
        sxy += dx * (y - mean_y);
        sxx += dx * dx;
    }
    sxy / sxx
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn steady(within: Option<f64>, slope: Option<f64>) -> Steady {
        Steady {
            on: SteadyFigure::Iops,
            within,
            slope,
            window: Span(Duration::from_secs(5)),
        }
    }

    #[test]
    fn a_flat_window_is_steady_and_a_rising_one_is_not() {
        let flat = [1000.0, 1010.0, 990.0, 1005.0, 995.0];
        let rising = [800.0, 900.0, 1000.0, 1100.0, 1200.0];
        let within = steady(Some(0.02), None);
        assert!(within.holds(&flat));
        assert!(!within.holds(&rising));
        let slope = steady(None, Some(0.01));
        assert!(slope.holds(&flat), "slope {}", slope_of(&flat));
        assert!(!slope.holds(&rising), "slope {}", slope_of(&rising));
        assert_eq!(slope_of(&rising), 100.0);
        assert!(!within.holds(&[0.0; 5]), "nothing done is not steady");
        assert!(!within.holds(&[1000.0]), "one second is no window");
    }
}
