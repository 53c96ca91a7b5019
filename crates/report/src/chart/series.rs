//! The per-second series of a run, one line per configuration: throughput second by second,
//! which shows where it levels off (seed 001 saw it after about 15 s) and any stall. The ramp
//! (warm-up, left out of the figures) is shaded; where a run stopped at steady state, a dashed
//! line in its colour marks the moment it levelled off. Each second's point has a tooltip with
//! its rate.

use super::{colour, compact, direction, frame, headroom, number_grid, render};
use super::{Area, Drawn, Layout, Svg, Tips, HEIGHT, WIDTH};
use crate::error::Result;
use fslab_store::SeriesPoint;
use plotters::prelude::*;

const MIB: f64 = 1024.0 * 1024.0;

/// One line: a configuration's label, its colour index and its run's seconds.
pub struct Line<'a> {
    pub label: String,
    pub colour: usize,
    pub points: &'a [SeriesPoint],
    /// When the run levelled off (`stop.steady`), in seconds since the threads started.
    pub levelled_at: Option<f64>,
}

/// What the y axis shows: MiB/s when the runs move bytes, else operations per second; its
/// description, and its unit as a tooltip writes it.
struct Rate {
    desc: &'static str,
    unit: &'static str,
    amount: fn(&SeriesPoint) -> f64,
}

fn rate(lines: &[Line]) -> Rate {
    let moves_bytes = lines
        .iter()
        .flat_map(|l| l.points)
        .any(|p| p.bytes_read + p.bytes_written > 0);
    if moves_bytes {
        Rate {
            desc: "MiB/s (read + written)",
            unit: "MiB/s",
            amount: |p| (p.bytes_read + p.bytes_written) as f64 / MIB,
        }
    } else {
        Rate {
            desc: "operations/s",
            unit: "operations/s",
            amount: |p| p.ops as f64,
        }
    }
}

/// Samples shorter than this (the partial last one of a run) are left out: their rate says
/// more about the moment the run stopped than about the filesystem.
const SHORTEST_SAMPLE: f64 = 0.5;

/// Each sample's rate over its own length.
fn rates(points: &[SeriesPoint], amount: fn(&SeriesPoint) -> f64) -> Vec<(f64, f64)> {
    let mut prev = 0.0;
    points
        .iter()
        .filter_map(|p| {
            let dt = p.t - prev;
            prev = p.t;
            (dt >= SHORTEST_SAMPLE).then(|| (p.t, amount(p) / dt))
        })
        .collect()
}

/// The chart of `lines` under `title`; none when no line has a point.
pub fn chart(title: &str, lines: &[Line]) -> Result<Option<Svg>> {
    let rate = rate(lines);
    let data: Vec<Vec<(f64, f64)>> = lines.iter().map(|l| rates(l.points, rate.amount)).collect();
    let all = data.iter().flatten();
    let (t_max, y_max) = all.fold((0f64, 0f64), |(t, y), p| (t.max(p.0), y.max(p.1)));
    if data.iter().all(Vec::is_empty) {
        return Ok(None);
    }
    let ramp_end = lines
        .iter()
        .flat_map(|l| l.points)
        .filter(|p| p.ramp)
        .map(|p| p.t)
        .fold(0f64, f64::max);
    let names = lines.iter().map(|l| (l.label.clone(), colour(l.colour))).collect();
    // Throughput: more is better.
    let layout = Layout::new(title, Some(direction(true)), (WIDTH, HEIGHT), 56, names);
    render(title, layout.size(), |root, tips| {
        draw(
            root,
            tips,
            &layout,
            &rate,
            lines,
            &data,
            (t_max.max(1.0), headroom(y_max)),
            ramp_end,
        )
    })
    .map(Some)
}

#[allow(clippy::too_many_arguments)]
fn draw(
    root: &Area,
    tips: &mut Tips,
    layout: &Layout,
    rate: &Rate,
    lines: &[Line],
    data: &[Vec<(f64, f64)>],
    (t_max, y_max): (f64, f64),
    ramp_end: f64,
) -> Drawn {
    let mut chart = frame(root, layout, tips, 0f64..t_max, 0f64..y_max)?;
    if ramp_end > 0.0 {
        chart.draw_series(std::iter::once(Rectangle::new(
            [(0.0, 0.0), (ramp_end, y_max)],
            RGBColor(0xEE, 0xEE, 0xEE).filled(),
        )))?;
    }
    let x_desc = if ramp_end > 0.0 {
        "seconds since the threads started (shaded: the ramp, not counted)"
    } else {
        "seconds since the threads started"
    };
    number_grid(&mut chart, x_desc, rate.desc)?;
    for (line, points) in lines.iter().zip(data) {
        let c = colour(line.colour);
        chart.draw_series(LineSeries::new(points.iter().copied(), c.stroke_width(2)))?;
        if let Some(at) = line.levelled_at.filter(|at| *at <= t_max) {
            // Dashes of a tenth of the height.
            let dash = y_max / 20.0;
            let dashes = (0..10).map(|k| {
                let y0 = 2.0 * k as f64 * dash;
                PathElement::new(vec![(at, y0), (at, y0 + dash)], c.stroke_width(2))
            });
            chart.draw_series(dashes)?;
            let text = format!("{}: levelled off at {} s (stop.steady)", line.label, compact(at));
            tips.around(chart.backend_coord(&(at, y_max / 2.0)), 6, text);
        }
        for (t, y) in points {
            let text = format!("{}, {} s\n{} {}", line.label, compact(*t), compact(*y), rate.unit);
            tips.around(chart.backend_coord(&(*t, *y)), 5, text);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::testing::{text, texts, tips};
    use super::*;

    fn second(t: f64, mib: u64, ramp: bool) -> SeriesPoint {
        SeriesPoint {
            t,
            ramp,
            ops: 10,
            bytes_read: mib * 1024 * 1024,
            bytes_written: 0,
            max_latency_us: None,
            latency: None,
            by_op: Default::default(),
        }
    }

    #[test]
    fn each_second_has_a_tooltip_with_its_rate() {
        let points = [second(1.0, 50, true), second(2.0, 120, false), second(3.0, 130, false)];
        let lines = [Line {
            label: "ext4".to_string(),
            colour: 0,
            points: &points,
            levelled_at: Some(2.5),
        }];
        let svg = chart("planted: second by second", &lines).unwrap().unwrap().text;
        assert!(
            tips(&svg)
                .iter()
                .any(|(_, t)| t == "ext4: levelled off at 2.5 s (stop.steady)"),
            "the moment it levelled off is marked"
        );
        let tips = tips(&svg);
        let seconds: Vec<&str> = tips
            .iter()
            .map(|(_, t)| t.as_str())
            .filter(|t| t.contains(" s\n"))
            .collect();
        assert_eq!(
            seconds,
            ["ext4, 1 s\n50 MiB/s", "ext4, 2 s\n120 MiB/s", "ext4, 3 s\n130 MiB/s"]
        );
        let texts = texts(&svg);
        assert_eq!(text(&texts, "↑ higher is better").len(), 1);
        assert_eq!(text(&texts, "ext4").len(), 1, "the legend names the line");
    }
}
