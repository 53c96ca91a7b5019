//! Lines of a figure against the number of threads or clients, one per configuration, as the
//! IBM seed draws dbench's scaling: where a filesystem stops scaling shows at a glance. Each
//! point carries its 95% confidence interval and a tooltip; a missing cell breaks its line.
//!
//! Thread and client counts usually grow by factors (4, 16, 64): when the axis's values span
//! more than 4×, points stand at log2 of their value, so that each step gets the same room.
//! Either way the ticks are the rows' own values.

use super::{cell_tip, colour, column_names, direction, frame, label, render, text_width, y_desc, y_format};
use super::{Area, Drawn, Layout, Place, Svg, Tips, FONT, GRID_LINE, HEIGHT, LIGHT_LINE, TEXT_SIZE, WIDTH};
use crate::error::Result;
use crate::study::Workload;
use crate::table::{Table, TableCell};
use plotters::prelude::*;

/// Room below the axis for the ticks' labels and the axis's description.
const X_AREA: u32 = 56;

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
            TableCell::Value { summary, .. } => Some(summary.ci95.map_or(summary.mean, |(_, hi)| hi.max(summary.mean))),
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
        X_AREA,
        column_names(&table.columns),
    );
    let axis = Axis {
        name: workload.axes[0].clone(),
        log: spans_factors(&xs),
        ticks: workload.rows.iter().map(|r| r.values[0].clone()).collect(),
        xs,
    };
    render(&title, layout.size(), |root, tips| {
        draw(root, tips, &layout, table, &axis, super::headroom(top))
    })
    .map(Some)
}

/// Whether values span more than 4×, which a logarithmic axis shows better.
fn spans_factors(xs: &[f64]) -> bool {
    let (lo, hi) = bounds(xs);
    lo > 0.0 && hi / lo > 4.0
}

fn bounds(xs: &[f64]) -> (f64, f64) {
    xs.iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| (a.min(*x), b.max(*x)))
}

/// The x axis: its name, the rows' values (as numbers, and as written for the ticks), and
/// whether it is logarithmic (base 2).
struct Axis {
    name: String,
    xs: Vec<f64>,
    ticks: Vec<String>,
    log: bool,
}

impl Axis {
    /// Where value `x` stands.
    fn at(&self, x: f64) -> f64 {
        if self.log {
            x.log2()
        } else {
            x
        }
    }

    /// The range shown: the values' with a little room on either side.
    fn range(&self) -> std::ops::Range<f64> {
        let (lo, hi) = bounds(&self.xs);
        let (lo, hi) = (self.at(lo), self.at(hi));
        let pad = if self.log {
            (hi - lo) * 0.06
        } else {
            ((hi - lo) * 0.05).max(0.5)
        };
        (lo - pad)..(hi + pad)
    }

    fn desc(&self) -> String {
        if self.log {
            format!("{} (log scale)", self.name)
        } else {
            self.name.clone()
        }
    }
}

/// A point of a line: where it stands on the x axis, the mean and its confidence interval.
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

fn draw(root: &Area, tips: &mut Tips, layout: &Layout, table: &Table, axis: &Axis, top: f64) -> Drawn {
    let mut chart = frame(root, layout, tips, axis.range(), 0f64..top)?;
    let y_format = y_format(&table.unit);
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .x_desc(axis.desc())
        .y_desc(super::shorten(&y_desc(table), 40))
        .y_label_formatter(&y_format)
        .label_style((FONT, TEXT_SIZE))
        .axis_desc_style((FONT, TEXT_SIZE))
        .light_line_style(LIGHT_LINE)
        .draw()?;
    x_ticks(root, &mut chart, axis, top)?;
    for k in 0..table.columns.len() {
        let c = colour(k);
        let points: Vec<Option<Point>> = table
            .column(k)
            .zip(&axis.xs)
            .map(|(cell, x)| match cell {
                TableCell::Value { summary, .. } => Some(Point {
                    x: axis.at(*x),
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

/// The x axis's ticks at the rows' values, each with a grid line and its value written below;
/// a label that would touch the one before it is left out.
fn x_ticks(
    root: &Area,
    chart: &mut super::Chart<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
    axis: &Axis,
    top: f64,
) -> Drawn {
    let mut ticks: Vec<(f64, &str)> = axis
        .xs
        .iter()
        .zip(&axis.ticks)
        .map(|(x, t)| (axis.at(*x), t.as_str()))
        .collect();
    ticks.sort_by(|a, b| a.0.total_cmp(&b.0));
    ticks.dedup_by(|a, b| a.0 == b.0);
    let mut free_from = i32::MIN;
    for (x, text) in ticks {
        let grid = PathElement::new(vec![(x, 0.0), (x, top)], GRID_LINE.stroke_width(1));
        chart.draw_series(std::iter::once(grid))?;
        let (px, py) = chart.backend_coord(&(x, 0.0));
        root.draw(&PathElement::new(vec![(px, py), (px, py + 5)], BLACK.stroke_width(1)))?;
        let half = text_width(text, TEXT_SIZE) as i32 / 2;
        if px - half >= free_from {
            label(root, text, (px, py + 8), TEXT_SIZE, Place::Below)?;
            free_from = px + half + 6;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::testing::{self, text, texts, tips, Text};
    use super::*;
    use crate::study::Row;

    /// A workload over `threads`, and a table of two configurations over it, xfs twice ext4.
    fn planted(threads: &[&str]) -> (Table, Workload) {
        let workload = Workload {
            name: "dbench".to_string(),
            tool: "dbench".to_string(),
            axes: vec!["threads".to_string()],
            rows: threads
                .iter()
                .map(|t| Row {
                    label: format!("threads={t}"),
                    values: vec![t.to_string()],
                })
                .collect(),
        };
        let names: Vec<String> = threads.iter().map(|t| format!("threads={t}")).collect();
        let rows: Vec<(&str, &str, Vec<Vec<f64>>)> = names
            .iter()
            .zip(threads)
            .map(|(n, t)| (n.as_str(), *t, vec![vec![50.0, 52.0, 54.0], vec![100.0, 102.0, 104.0]]))
            .collect();
        (testing::table("MB/sec", true, &["ext4", "xfs"], &rows), workload)
    }

    /// The tick labels below the x axis, left to right: the texts lowest in the plot, above
    /// the axis's description.
    fn x_ticks(svg: &str, values: &[&str]) -> Vec<Text> {
        let texts = texts(svg);
        values
            .iter()
            .map(|v| {
                let found = text(&texts, v);
                let lowest = found.iter().max_by(|a, b| a.y.total_cmp(&b.y));
                (*lowest.unwrap_or_else(|| panic!("no tick {v}: {texts:?}"))).clone()
            })
            .collect()
    }

    #[test]
    fn threads_that_grow_by_factors_stand_equally_apart_on_a_log2_axis() {
        let (table, workload) = planted(&["4", "16", "64"]);
        let svg = chart(&table, &workload).unwrap().unwrap().text;
        let ticks = x_ticks(&svg, &["4", "16", "64"]);
        assert!(ticks.iter().all(|t| t.y == ticks[0].y && !t.turned), "{ticks:?}");
        let (a, b) = (ticks[1].x - ticks[0].x, ticks[2].x - ticks[1].x);
        assert!(a > 100.0 && (a - b).abs() <= 1.0, "4, 16, 64 at {ticks:?}");
        let texts = texts(&svg);
        assert_eq!(text(&texts, "threads (log scale)").len(), 1);
        assert_eq!(text(&texts, "↑ higher is better").len(), 1);
        let tips = tips(&svg);
        let points: Vec<&str> = tips
            .iter()
            .map(|(_, t)| t.as_str())
            .filter(|t| t.contains("threads="))
            .collect();
        assert_eq!(points.len(), 6, "a tooltip for each point: {tips:?}");
        assert!(
            points.contains(&"xfs, threads=16\n102.00 ± 4.968 MB/sec\nn=3, best"),
            "{points:?}"
        );
        assert!(
            points.contains(&"ext4, threads=64\n52.000 ± 4.968 MB/sec\nn=3, 1.96×"),
            "{points:?}"
        );
    }

    #[test]
    fn clients_from_1_to_54_are_on_a_log2_axis_too() {
        let (table, workload) = planted(&["1", "6", "18", "54"]);
        let svg = chart(&table, &workload).unwrap().unwrap().text;
        let ticks = x_ticks(&svg, &["1", "6", "18", "54"]);
        let gap = |i: usize| ticks[i + 1].x - ticks[i].x;
        assert!((gap(1) - gap(2)).abs() <= 1.0, "6, 18, 54 are 3× apart: {ticks:?}");
        let ratio = gap(0) / gap(1);
        assert!((ratio - 6f64.log2() / 3f64.log2()).abs() < 0.05, "{ticks:?}");
    }

    #[test]
    fn values_within_4x_stay_on_a_linear_axis() {
        let (table, workload) = planted(&["1", "2", "4"]);
        let svg = chart(&table, &workload).unwrap().unwrap().text;
        let ticks = x_ticks(&svg, &["1", "2", "4"]);
        let (a, b) = (ticks[1].x - ticks[0].x, ticks[2].x - ticks[1].x);
        assert!((b / a - 2.0).abs() < 0.05, "1, 2, 4 at {ticks:?}");
        assert_eq!(
            text(&texts(&svg), "threads").len(),
            1,
            "the axis is named, not called a log scale"
        );
    }
}
