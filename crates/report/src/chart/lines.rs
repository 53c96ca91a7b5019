//! Lines of a figure against the number of threads or clients, one per configuration, as the
//! IBM seed draws dbench's scaling: where a filesystem stops scaling shows at a glance. Each
//! point carries its 95% confidence interval and a tooltip; a missing cell breaks its line.

use super::{cell_tip, colour, column_names, direction, frame, headroom, number_grid, render};
use super::{Area, Drawn, Layout, Svg, Tips, HEIGHT, WIDTH};
use crate::error::Result;
use crate::study::Workload;
use crate::table::{Table, TableCell};
use plotters::prelude::*;

/// The lines of `table` against its workload's one numeric axis; none unless the workload
/// varies exactly one parameter, over two values at least, all of them numbers.
pub fn chart(table: &Table, workload: &Workload) -> Result<Option<Svg>> {
    let Some(xs) = numeric_axis(workload) else {
        return Ok(None);
    };
    let top = table
        .rows
        .iter()
        .flat_map(|r| &r.cells)
        .filter_map(|c| match c {
            TableCell::Value { summary, .. } => Some(summary.ci95.map_or(summary.mean, |(_, hi)| hi)),
            _ => None,
        })
        .fold(f64::NAN, f64::max);
    if top.is_nan() {
        return Ok(None);
    }
    let title = format!("{} against {}", table.title, workload.axes[0]);
    let layout = Layout::new(
        &title,
        Some(direction(table.higher_is_better)),
        (WIDTH, HEIGHT),
        48,
        column_names(&table.columns),
    );
    render(&title, layout.size(), |root, tips| {
        draw(root, tips, &layout, table, &workload.axes[0], &xs, headroom(top))
    })
    .map(Some)
}

/// A point of a line: the axis's value, the mean and its confidence interval.
struct Point {
    x: f64,
    y: f64,
    ci: Option<(f64, f64)>,
}

/// The values of the workload's one axis as numbers, in row order.
fn numeric_axis(workload: &Workload) -> Option<Vec<f64>> {
    if workload.axes.len() != 1 || workload.rows.len() < 2 {
        return None;
    }
    workload.rows.iter().map(|r| r.values[0].parse::<f64>().ok()).collect()
}

#[allow(clippy::too_many_arguments)]
fn draw(root: &Area, tips: &mut Tips, layout: &Layout, table: &Table, axis: &str, xs: &[f64], top: f64) -> Drawn {
    let (lo, hi) = xs
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| (a.min(*x), b.max(*x)));
    let pad = ((hi - lo) * 0.05).max(0.5);
    let mut chart = frame(root, layout, tips, (lo - pad)..(hi + pad), 0f64..top)?;
    number_grid(&mut chart, axis, &table.figure)?;
    for k in 0..table.columns.len() {
        let c = colour(k);
        let points: Vec<Option<Point>> = table
            .column(k)
            .zip(xs)
            .map(|(cell, x)| match cell {
                TableCell::Value { summary, .. } => Some(Point {
                    x: *x,
                    y: summary.mean,
                    ci: summary.ci95,
                }),
                _ => None,
            })
            .collect();
        // A missing cell breaks the line: each run of consecutive points is its own line.
        for segment in points.split(|p| p.is_none()) {
            let line: Vec<(f64, f64)> = segment.iter().flatten().map(|p| (p.x, p.y)).collect();
            chart.draw_series(LineSeries::new(line, c.stroke_width(2)))?;
        }
        for (r, point) in points.iter().enumerate() {
            let Some(Point { x, y, ci }) = point else {
                continue;
            };
            chart.draw_series(std::iter::once(Circle::new((*x, *y), 4, c.filled())))?;
            if let Some((lo, hi)) = ci {
                let bar = PathElement::new(vec![(*x, lo.max(0.0)), (*x, *hi)], c.stroke_width(1));
                chart.draw_series(std::iter::once(bar))?;
            }
            tips.around(chart.backend_coord(&(*x, *y)), 7, cell_tip(table, &table.rows[r], k));
        }
    }
    Ok(())
}
