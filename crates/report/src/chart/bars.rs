//! Grouped bars: one group per row of a table (threads, clients, or a lab step), one bar per
//! configuration, each with its 95% confidence interval as an error bar. A cell without
//! figures is not left blank: its status (hung, unsupported...) is written where its bar would be.

use super::{colour, column_legend, headroom, label, render, shorten, table_frame, width_for, Area, Drawn, Place, Svg};
use super::{HEIGHT, TEXT_SIZE};
use crate::error::Result;
use crate::table::{Table, TableCell};
use plotters::prelude::*;

/// Room on the right for the legend, and below the axis for the groups' labels, in pixels.
pub(crate) const LEGEND_WIDTH: u32 = 180;
pub(crate) const X_AREA: u32 = 40;

/// Where bar `k` of `count` in group `g` stands on the x axis (groups are one unit wide).
pub(crate) fn slot(g: usize, k: usize, count: usize) -> (f64, f64) {
    let width = 0.8 / count as f64;
    let x0 = g as f64 + 0.1 + k as f64 * width;
    (x0 + width * 0.06, x0 + width * 0.94)
}

/// Draws an error bar from `lo` to `hi` across `x0..x1` (a bar's width).
pub(crate) fn whisker<DB: DrawingBackend, CT: CoordTranslate<From = (f64, f64)>>(
    chart: &mut ChartContext<DB, CT>,
    (x0, x1): (f64, f64),
    (lo, hi): (f64, f64),
) -> Drawn
where
    DB::ErrorType: 'static,
{
    let mid = (x0 + x1) / 2.0;
    let cap = (x1 - x0) / 4.0;
    let lines = [
        vec![(mid, lo), (mid, hi)],
        vec![(mid - cap, hi), (mid + cap, hi)],
        vec![(mid - cap, lo), (mid + cap, lo)],
    ];
    chart.draw_series(lines.into_iter().map(|l| PathElement::new(l, BLACK.stroke_width(1))))?;
    Ok(())
}

/// The bars of a table of values; none when it has no value.
pub fn chart(table: &Table) -> Result<Option<Svg>> {
    let values = table.rows.iter().flat_map(|r| &r.cells).filter_map(|c| match c {
        TableCell::Value { summary, .. } => Some(summary.ci95.map_or(summary.mean, |(_, hi)| hi.max(summary.mean))),
        _ => None,
    });
    let top = values.fold(f64::NAN, f64::max);
    if top.is_nan() {
        return Ok(None);
    }
    let width = width_for(table.rows.len() * table.columns.len());
    render(&table.title, (width, HEIGHT), |root| draw(root, table, headroom(top))).map(Some)
}

fn draw(root: &Area, table: &Table, top: f64) -> Drawn {
    let count = table.columns.len();
    let mut chart = table_frame(root, table, X_AREA, top)?;
    for (g, row) in table.rows.iter().enumerate() {
        for (k, cell) in row.cells.iter().enumerate() {
            let (x0, x1) = slot(g, k, count);
            match cell {
                TableCell::Value { summary, .. } => {
                    let bar = Rectangle::new([(x0, 0.0), (x1, summary.mean)], colour(k).filled());
                    chart.draw_series(std::iter::once(bar))?;
                    if let Some((lo, hi)) = summary.ci95 {
                        whisker(&mut chart, (x0, x1), (lo.max(0.0), hi))?;
                    }
                }
                TableCell::Missing { status, .. } => {
                    let (x, y) = chart.backend_coord(&((x0 + x1) / 2.0, 0.0));
                    label(root, status, (x, y - 4), TEXT_SIZE, Place::Up)?;
                }
                _ => {}
            }
        }
        let (x, y) = chart.backend_coord(&(g as f64 + 0.5, 0.0));
        label(root, &shorten(&row.label, 24), (x, y + 8), TEXT_SIZE, Place::Below)?;
    }
    column_legend(root, &table.columns)
}
