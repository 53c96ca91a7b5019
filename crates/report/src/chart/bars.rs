//! Grouped bars: one group per row of a table (threads, clients, or a lab step), one bar per
//! configuration, each with its 95% confidence interval as an error bar. A cell without
//! figures is not left blank: its status (hung, unsupported...) is written where its bar would
//! be. Each bar's tooltip has its value ± CI, the number of runs and the verdict.

use super::{cell_tip, column_names, direction, headroom, label, render, shorten, table_frame, text_width};
use super::{width_for, Area, Drawn, Layout, Place, Svg, Tips, HEIGHT, TEXT_SIZE};
use crate::error::Result;
use crate::table::{Table, TableCell};
use plotters::prelude::*;

/// Room below the axis for the groups' labels, in pixels.
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
    let layout = Layout::new(
        &table.title,
        Some(direction(table.higher_is_better)),
        (width, HEIGHT),
        X_AREA,
        column_names(&table.columns),
    );
    render(&table.title, layout.size(), |root, tips| {
        draw(root, tips, &layout, table, headroom(top))
    })
    .map(Some)
}

fn draw(root: &Area, tips: &mut Tips, layout: &Layout, table: &Table, top: f64) -> Drawn {
    let count = table.columns.len();
    let mut chart = table_frame(root, layout, tips, table, top)?;
    for (g, row) in table.rows.iter().enumerate() {
        for (k, cell) in row.cells.iter().enumerate() {
            let (x0, x1) = slot(g, k, count);
            let (left, axis) = chart.backend_coord(&(x0, 0.0));
            let (right, _) = chart.backend_coord(&(x1, 0.0));
            let mid = (left + right) / 2;
            match cell {
                TableCell::Value { summary, .. } => {
                    let bar = Rectangle::new([(x0, 0.0), (x1, summary.mean)], super::colour(k).filled());
                    chart.draw_series(std::iter::once(bar))?;
                    let peak = summary.ci95.map_or(summary.mean, |(_, hi)| hi.max(summary.mean));
                    if let Some((lo, hi)) = summary.ci95 {
                        whisker(&mut chart, (x0, x1), (lo.max(0.0), hi))?;
                    }
                    let (_, above) = chart.backend_coord(&(x1, peak));
                    tips.add((left, axis), (right, above - 4), cell_tip(table, row, k));
                }
                TableCell::Missing { status, .. } => {
                    label(root, status, (mid, axis - 4), TEXT_SIZE, Place::Up)?;
                    let above = axis - 4 - text_width(status, TEXT_SIZE) as i32;
                    tips.add((left, axis), (right, above), cell_tip(table, row, k));
                }
                _ => {}
            }
        }
        let (x, y) = chart.backend_coord(&(g as f64 + 0.5, 0.0));
        label(root, &shorten(&row.name, 24), (x, y + 8), TEXT_SIZE, Place::Below)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::testing::{self, text, texts, tips};
    use super::*;

    #[test]
    fn each_bar_has_a_tooltip_with_its_value_runs_and_verdict() {
        // ext4 at 1/1.86 of xfs's throughput, btrfs too noisy to tell from xfs, jfs hung.
        let runs = vec![
            vec![110.0, 111.0, 109.0],
            vec![205.0, 207.0, 203.0],
            vec![190.0, 210.0, 199.0],
            vec![],
        ];
        let table = testing::table(
            "MB/sec",
            true,
            &["ext4", "xfs", "btrfs", "jfs"],
            &[("threads=4", "4", runs)],
        );
        let svg = chart(&table).unwrap().unwrap().text;
        let bars: Vec<String> = tips(&svg)
            .into_iter()
            .map(|(_, t)| t)
            .filter(|t| t.contains("threads=4"))
            .collect();
        assert_eq!(
            bars,
            [
                "ext4, threads=4\n110.00 ± 2.484 MB/sec\nn=3, 1.86×",
                "xfs, threads=4\n205.00 ± 4.968 MB/sec\nn=3, best",
                "btrfs, threads=4\n199.67 ± 24.883 MB/sec\nn=3, ≈ best",
                "jfs, threads=4\nhung: no progress for 60 s",
            ]
        );
        let texts = texts(&svg);
        let title = text(&texts, "planted: Throughput (MB/sec)");
        let direction = text(&texts, "↑ higher is better");
        assert!(title.len() == 1 && direction.len() == 1, "{texts:?}");
        assert!(direction[0].y > title[0].y, "the direction is under the title");
        assert!(!text(&texts, "threads=4")[0].turned, "the group is named across");
        let legend: Vec<f64> = ["ext4", "xfs", "btrfs", "jfs"]
            .iter()
            .map(|name| text(&texts, name)[0].x)
            .collect();
        assert!(legend.windows(2).all(|w| w[0] < w[1]), "one line of legend: {legend:?}");
    }
}
