//! Grouped bars: one group per row of a table (threads, clients, or a lab step), one bar per
//! configuration, each with its 95% confidence interval as an error bar and its mean written
//! on top (turned a quarter when the bars are too narrow for it). A cell without figures is not
//! left blank: its status (hung, unsupported...) is written where its bar would be. Each bar's
//! tooltip has its value ± CI, the number of runs and the verdict.

use super::{cell_tip, column_names, direction, label, render, shorten, table_frame, text_height, text_width};
use super::{value_text, width_for, Area, Drawn, Layout, Place, Svg, Tips, HEIGHT, TEXT_SIZE, VALUE_SIZE};
use crate::error::Result;
use crate::table::{Table, TableCell};
use plotters::prelude::*;

/// Room below the axis for the groups' labels, in pixels.
pub(crate) const X_AREA: u32 = 40;

/// Pixels between a bar's value and the top of its whisker.
const VALUE_GAP: i32 = 4;

/// Where bar `k` of `count` in group `g` stands on the x axis (groups are one unit wide).
pub(crate) fn slot(g: usize, k: usize, count: usize) -> (f64, f64) {
    let width = 0.8 / count as f64;
    let x0 = g as f64 + 0.1 + k as f64 * width;
    (x0 + width * 0.06, x0 + width * 0.94)
}

/// How many pixels wide a bar's slot (the bar and its share of the gaps) is in a plot `plot`
/// pixels wide with `groups` groups of `count` bars.
pub(crate) fn slot_pixels(plot: u32, groups: usize, count: usize) -> f64 {
    f64::from(plot) / groups.max(1) as f64 * 0.8 / count.max(1) as f64
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

/// A bar's value: its mean, the top of what is drawn for it (the whisker's, or the bar's) and
/// the text written above that.
struct Mark {
    mean: f64,
    peak: f64,
    text: String,
}

impl Mark {
    fn of(cell: &TableCell, unit: &str) -> Option<Mark> {
        let TableCell::Value { summary, .. } = cell else {
            return None;
        };
        Some(Mark {
            mean: summary.mean,
            peak: summary.ci95.map_or(summary.mean, |(_, hi)| hi.max(summary.mean)),
            text: value_text(summary.mean, unit),
        })
    }

    /// The pixels its text takes above the peak: its height when written across the bar,
    /// its width when turned.
    fn room(&self, turned: bool) -> u32 {
        let extent = if turned {
            text_width(&self.text, VALUE_SIZE)
        } else {
            text_height(VALUE_SIZE)
        };
        extent + VALUE_GAP as u32 + 2
    }
}

/// The top of a y axis from 0 that shows every bar's peak with its value written above it,
/// in a plot `pixels` tall.
fn top_with_values(marks: &[Mark], turned: bool, pixels: u32) -> f64 {
    let pixels = f64::from(pixels);
    marks
        .iter()
        .map(|m| {
            // The peak at `top` is this many pixels from the axis: what is left above is the room.
            let below = (pixels - f64::from(m.room(turned))).max(pixels / 3.0);
            m.peak * pixels / below
        })
        .fold(f64::NAN, f64::max)
        .max(marks.iter().map(|m| m.peak).fold(f64::NAN, f64::max) * 1.05)
}

/// The bars of a table of values; none when it has no value.
pub fn chart(table: &Table) -> Result<Option<Svg>> {
    let marks: Vec<Mark> = table
        .rows
        .iter()
        .flat_map(|r| &r.cells)
        .filter_map(|c| Mark::of(c, &table.unit))
        .filter(|m| m.peak.is_finite())
        .collect();
    if marks.is_empty() {
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
    let (plot_w, plot_h) = layout.plot();
    let slot = slot_pixels(plot_w, table.rows.len(), table.columns.len());
    let turned = marks
        .iter()
        .any(|m| f64::from(text_width(&m.text, VALUE_SIZE) + 2) > slot);
    let top = top_with_values(&marks, turned, plot_h).max(f64::MIN_POSITIVE);
    render(&table.title, layout.size(), |root, tips| {
        draw(root, tips, &layout, table, top, turned)
    })
    .map(Some)
}

fn draw(root: &Area, tips: &mut Tips, layout: &Layout, table: &Table, top: f64, turned: bool) -> Drawn {
    let count = table.columns.len();
    let mut chart = table_frame(root, layout, tips, table, top)?;
    for (g, row) in table.rows.iter().enumerate() {
        for (k, cell) in row.cells.iter().enumerate() {
            let (x0, x1) = slot(g, k, count);
            let (left, axis) = chart.backend_coord(&(x0, 0.0));
            let (right, _) = chart.backend_coord(&(x1, 0.0));
            let mid = (left + right) / 2;
            if let TableCell::Value { summary, .. } = cell {
                let bar = Rectangle::new([(x0, 0.0), (x1, summary.mean)], super::colour(k).filled());
                chart.draw_series(std::iter::once(bar))?;
                if let Some((lo, hi)) = summary.ci95 {
                    whisker(&mut chart, (x0, x1), (lo.max(0.0), hi))?;
                }
            }
            if let Some(mark) = Mark::of(cell, &table.unit) {
                let (_, y) = chart.backend_coord(&(x1, mark.peak));
                let at = (mid, y - VALUE_GAP);
                let place = if turned { Place::Up } else { Place::Above };
                label(root, &mark.text, at, VALUE_SIZE, place)?;
                let (_, bar_top) = chart.backend_coord(&(x1, mark.mean));
                let above = y.min(bar_top) - mark.room(turned) as i32;
                tips.add((left, axis), (right, above), cell_tip(table, row, k));
            } else if let TableCell::Missing { status, .. } = cell {
                label(root, status, (mid, axis - 4), TEXT_SIZE, Place::Up)?;
                let above = axis - 4 - text_width(status, TEXT_SIZE) as i32;
                tips.add((left, axis), (right, above), cell_tip(table, row, k));
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
    use super::super::{text_height, Layout};
    use super::*;

    /// ext4 at 1/1.86 of xfs's throughput, btrfs too noisy to tell from xfs, jfs hung.
    fn planted() -> Table {
        let runs = vec![
            vec![110.0, 111.0, 109.0],
            vec![205.0, 207.0, 203.0],
            vec![190.0, 210.0, 199.0],
            vec![],
        ];
        let columns = ["ext4", "xfs", "btrfs", "jfs"];
        testing::table("MB/sec", true, &columns, &[("threads=4", "4", runs)])
    }

    /// Where the plot begins, below the title and the direction.
    fn plot_top(table: &Table) -> f64 {
        let width = width_for(table.rows.len() * table.columns.len());
        let layout = Layout::new(&table.title, Some("x"), (width, HEIGHT), X_AREA, Vec::new());
        f64::from(layout.header())
    }

    #[test]
    fn each_bar_has_a_tooltip_with_its_value_runs_and_verdict() {
        let table = planted();
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

    #[test]
    fn each_bar_has_its_mean_written_on_top_with_room_under_the_title() {
        let table = planted();
        let svg = chart(&table).unwrap().unwrap().text;
        let bars: Vec<[i32; 4]> = tips(&svg)
            .into_iter()
            .filter(|(_, t)| t.contains("n=3"))
            .map(|(r, _)| r)
            .collect();
        assert_eq!(bars.len(), 3, "a tooltip for each bar");
        let texts = texts(&svg);
        for (value, [x, y, w, h]) in ["110", "205", "199.7"].iter().zip(&bars) {
            let found = text(&texts, value);
            assert_eq!(found.len(), 1, "{value} is written once: {texts:?}");
            let v = found[0];
            assert!(!v.turned, "four wide bars have room for {value} across");
            assert!(
                (v.x - f64::from(x + w / 2)).abs() <= 1.0,
                "{value} is centred on its bar"
            );
            // The tooltip runs from the axis up to the top of the value.
            let (top, axis) = (f64::from(*y), f64::from(y + h));
            assert!(
                v.y - f64::from(text_height(VALUE_SIZE)) >= top - 1.0 && v.y < axis,
                "{v:?}"
            );
            assert!(
                v.y - f64::from(text_height(VALUE_SIZE)) >= plot_top(&table),
                "{value} has room under the title: {v:?}"
            );
        }
    }

    #[test]
    fn values_on_narrow_bars_are_turned_and_still_fit_under_the_title() {
        let columns: Vec<String> = (0..15)
            .map(|k| format!("ext4-uninit-flexbg{k} data=writeback"))
            .collect();
        let columns: Vec<&str> = columns.iter().map(String::as_str).collect();
        let rows: Vec<(String, Vec<Vec<f64>>)> = [1, 4, 16, 64]
            .iter()
            .map(|t| {
                let runs = (0..15).map(|k| vec![12_000.0 + 100.0 * k as f64, 12_345.0 + 100.0 * k as f64]);
                (format!("threads={t}"), runs.collect())
            })
            .collect();
        let rows: Vec<(&str, &str, Vec<Vec<f64>>)> = rows.iter().map(|(n, r)| (n.as_str(), "", r.clone())).collect();
        let table = testing::table("ops/s", true, &columns, &rows);
        let svg = chart(&table).unwrap().unwrap();
        let texts = texts(&svg.text);
        let tallest = text(&texts, "13572");
        assert_eq!(tallest.len(), 4, "each row's last bar has its value: {texts:?}");
        for v in tallest {
            assert!(v.turned, "a 5-digit value does not fit across a bar of 60 in a chart");
            let top = v.y - f64::from(text_width("13572", VALUE_SIZE));
            assert!(top >= plot_top(&table), "the value runs into the title: {v:?}");
        }
        assert_eq!(tips(&svg.text).iter().filter(|(_, t)| t.contains("n=2")).count(), 60);
        for c in &columns {
            assert_eq!(text(&texts, c).len(), 1, "the legend names {c}");
        }
    }

    #[test]
    fn microseconds_are_written_in_the_unit_their_size_reads_best_in() {
        let runs = vec![vec![17_000.0, 17_700.0], vec![900.0, 1_100.0], vec![]];
        let table = testing::table("us", false, &["ext4", "xfs", "btrfs"], &[("threads=4", "4", runs)]);
        let svg = chart(&table).unwrap().unwrap().text;
        let texts = texts(&svg);
        for v in ["17.35 ms", "1 ms", "↓ lower is better", "hung", "10 ms", "0"] {
            assert_eq!(text(&texts, v).len(), 1, "no {v}: {texts:?}");
        }
        assert!(
            text(&texts, "Throughput").len() == 1,
            "the axis says the figure, the ticks its unit"
        );
        let tips = tips(&svg);
        assert!(
            tips.iter()
                .any(|(_, t)| t == "btrfs, threads=4\nhung: no progress for 60 s"),
            "{tips:?}"
        );
        assert!(tips
            .iter()
            .any(|(_, t)| t.starts_with("ext4, threads=4\n17350 ± ") && t.contains(" µs\n")));
    }
}
