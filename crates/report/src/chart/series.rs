//! The per-second series of a run, one line per configuration: throughput second by second,
//! which shows where it levels off (seed 001 saw it after about 15 s) and any stall. The ramp
//! (warm-up, left out of the figures) is shaded.

use super::{colour, frame, headroom, legend, number_grid, render, Area, Drawn, Svg, HEIGHT, WIDTH};
use crate::error::Result;
use fslab_store::SeriesPoint;
use plotters::prelude::*;

const MIB: f64 = 1024.0 * 1024.0;

/// One line: a configuration's label, its colour index and its run's seconds.
pub struct Line<'a> {
    pub label: String,
    pub colour: usize,
    pub points: &'a [SeriesPoint],
}

/// What the y axis shows: MiB/s when the runs move bytes, else operations per second.
fn rate(lines: &[Line]) -> (&'static str, fn(&SeriesPoint) -> f64) {
    let moves_bytes = lines
        .iter()
        .flat_map(|l| l.points)
        .any(|p| p.bytes_read + p.bytes_written > 0);
    if moves_bytes {
        ("MiB/s (read + written)", |p| {
            (p.bytes_read + p.bytes_written) as f64 / MIB
        })
    } else {
        ("operations/s", |p| p.ops as f64)
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
    let (unit, amount) = rate(lines);
    let data: Vec<Vec<(f64, f64)>> = lines.iter().map(|l| rates(l.points, amount)).collect();
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
    render(title, (WIDTH, HEIGHT), |root| {
        draw(
            root,
            title,
            unit,
            lines,
            &data,
            (t_max.max(1.0), headroom(y_max)),
            ramp_end,
        )
    })
    .map(Some)
}

fn draw(
    root: &Area,
    title: &str,
    unit: &str,
    lines: &[Line],
    data: &[Vec<(f64, f64)>],
    (t_max, y_max): (f64, f64),
    ramp_end: f64,
) -> Drawn {
    let mut chart = frame(root, title, 48, 0f64..t_max, 0f64..y_max)?;
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
    number_grid(&mut chart, x_desc, unit)?;
    for (line, points) in lines.iter().zip(data) {
        let c = colour(line.colour);
        chart.draw_series(LineSeries::new(points.iter().copied(), c.stroke_width(2)))?;
    }
    let names: Vec<_> = lines.iter().map(|l| (l.label.clone(), colour(l.colour))).collect();
    legend(root, &names)
}
