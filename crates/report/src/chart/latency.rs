//! Latency percentiles per operation type, one bar per configuration on a logarithmic axis:
//! the bar reaches the 99th percentile, the whisker runs from the median (its lower cap) to the
//! 99.9th percentile (its upper cap). Percentiles are pooled over the cell's runs.
//!
//! The axis is labelled in µs, ms or s as each tick's size calls for ("100 µs", "1 ms",
//! "10 ms"), at each power of ten, with 2× and 5× between where there is room. Each bar's
//! tooltip has every percentile and the number of operations.

use super::bars::{slot, whisker, X_AREA};
use super::{colour, direction, duration_us, frame, label, log_ticks, render, shorten, text_height, width_for};
use super::{Area, Drawn, Layout, Place, Svg, Tips, FONT, GRID_LINE, HEIGHT, LIGHT_LINE, TEXT_SIZE};
use crate::error::Result;
use crate::study::OpLatency;
use plotters::prelude::*;

/// One configuration's operations: its label, its colour index and its latency per operation.
pub struct Bars<'a> {
    pub label: String,
    pub colour: usize,
    pub ops: &'a [OpLatency],
}

/// The chart of `configs` under `title`; none when no configuration has an operation.
pub fn chart(title: &str, configs: &[Bars]) -> Result<Option<Svg>> {
    let mut ops: Vec<&str> = Vec::new();
    for o in configs.iter().flat_map(|c| c.ops) {
        if !ops.contains(&o.op.as_str()) {
            ops.push(&o.op);
        }
    }
    if ops.is_empty() {
        return Ok(None);
    }
    let all = configs.iter().flat_map(|c| c.ops);
    let (lo, hi) = all.fold((f64::INFINITY, 0f64), |(lo, hi), o| {
        (lo.min(o.p50_us), hi.max(o.p99_9_us).max(o.p99_us))
    });
    let range = (round_125(lo / 1.2, false), round_125(hi * 1.2, true));
    let width = width_for(ops.len() * configs.len());
    let names = configs.iter().map(|c| (c.label.clone(), colour(c.colour))).collect();
    let layout = Layout::new(title, Some(direction(false)), (width, HEIGHT), X_AREA, names);
    render(title, layout.size(), |root, tips| {
        draw(root, tips, &layout, &ops, configs, range)
    })
    .map(Some)
}

/// The nearest of 1, 2 and 5 times a power of ten to `v` upward (`up`) or downward: the ends
/// of the axis, 0.1 µs at the least.
fn round_125(v: f64, up: bool) -> f64 {
    let v = if v.is_finite() { v.max(0.1) } else { 0.1 };
    let decade = 10f64.powf(v.log10().floor());
    let steps = [1.0, 2.0, 5.0, 10.0].map(|s| s * decade);
    let found = if up {
        steps.into_iter().find(|s| *s >= v * (1.0 - 1e-9))
    } else {
        steps.into_iter().rev().find(|s| *s <= v * (1.0 + 1e-9))
    };
    found.unwrap_or(decade)
}

/// The tooltip of one configuration's bar for one operation.
fn tip(config: &Bars, o: &OpLatency) -> String {
    format!(
        "{}, {}\np50 {}, p90 {}, p99 {}, p99.9 {}, max {}\n{} operations",
        config.label,
        o.op,
        duration_us(o.p50_us),
        duration_us(o.p90_us),
        duration_us(o.p99_us),
        duration_us(o.p99_9_us),
        duration_us(o.max_us),
        o.count
    )
}

fn draw(root: &Area, tips: &mut Tips, layout: &Layout, ops: &[&str], configs: &[Bars], (lo, hi): (f64, f64)) -> Drawn {
    let groups = ops.len() as f64;
    let mut chart = frame(root, layout, tips, 0f64..groups, (lo..hi).log_scale())?;
    chart
        .configure_mesh()
        .disable_mesh()
        .x_labels(0)
        .y_labels(0)
        // plotters writes a label on a logarithmic axis even when asked for none: an empty one.
        .y_label_formatter(&|_| String::new())
        .y_desc("latency")
        .label_style((FONT, TEXT_SIZE))
        .axis_desc_style((FONT, TEXT_SIZE))
        .draw()?;
    // The ticks, each with its line across the plot: darker at powers of ten.
    for t in log_ticks(lo, hi, layout.plot().1, text_height(TEXT_SIZE) + 4) {
        let power = (t.log10() - t.log10().round()).abs() < 1e-9;
        let line = if power { GRID_LINE } else { LIGHT_LINE };
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(0.0, t), (groups, t)],
            line.stroke_width(1),
        )))?;
        let (x, y) = chart.backend_coord(&(0.0, t));
        root.draw(&PathElement::new(vec![(x - 5, y), (x, y)], BLACK.stroke_width(1)))?;
        label(root, &duration_us(t), (x - 8, y), TEXT_SIZE, Place::Left)?;
    }
    for (g, op) in ops.iter().enumerate() {
        for (k, config) in configs.iter().enumerate() {
            let Some(o) = config.ops.iter().find(|o| o.op == *op) else {
                continue;
            };
            let (x0, x1) = slot(g, k, configs.len());
            let c = colour(config.colour);
            chart.draw_series(std::iter::once(Rectangle::new([(x0, lo), (x1, o.p99_us)], c.filled())))?;
            whisker(&mut chart, (x0, x1), (o.p50_us, o.p99_9_us))?;
            let bottom = chart.backend_coord(&(x0, lo));
            let (right, peak) = chart.backend_coord(&(x1, o.p99_9_us.max(o.p99_us)));
            tips.add(bottom, (right, peak - 4), tip(config, o));
        }
        let (x, y) = chart.backend_coord(&(g as f64 + 0.5, lo));
        label(root, &shorten(op, 16), (x, y + 8), TEXT_SIZE - 2, Place::Below)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::testing::{text, texts, tips};
    use super::*;

    fn op(op: &str, p50_ms: f64) -> OpLatency {
        let us = p50_ms * 1000.0;
        OpLatency {
            op: op.to_string(),
            count: 1200,
            p50_us: us,
            p90_us: us * 4.0,
            p99_us: us * 10.0,
            p99_9_us: us * 25.0,
            max_us: us * 40.0,
        }
    }

    #[test]
    fn milliseconds_are_labelled_in_ms_at_each_power_of_ten_and_between() {
        let ext4 = [op("read", 2.0), op("write", 3.0)];
        let xfs = [op("read", 2.5), op("write", 2.2)];
        let configs = [
            Bars {
                label: "ext4".to_string(),
                colour: 0,
                ops: &ext4,
            },
            Bars {
                label: "xfs".to_string(),
                colour: 1,
                ops: &xfs,
            },
        ];
        let svg = chart("planted: latency per operation", &configs).unwrap().unwrap().text;
        let texts = texts(&svg);
        // From 2 ms / 1.2 down to 1 ms, up to 75 ms × 1.2 = 90 ms: two decades, room for 2× and 5×.
        for tick in ["1 ms", "2 ms", "5 ms", "10 ms", "20 ms", "50 ms", "100 ms"] {
            assert_eq!(text(&texts, tick).len(), 1, "no tick {tick}: {texts:?}");
        }
        assert!(
            !texts.iter().any(|t| t.text.contains("µs") || t.text.contains("1000")),
            "ms, not µs: {texts:?}"
        );
        // Ticks go up the axis evenly: 1, 10 and 100 ms a decade apart.
        let y = |tick: &str| text(&texts, tick)[0].y;
        assert!(((y("1 ms") - y("10 ms")) - (y("10 ms") - y("100 ms"))).abs() <= 1.0);
        assert!(y("1 ms") > y("2 ms") && y("2 ms") > y("5 ms") && y("5 ms") > y("10 ms"));
        assert_eq!(text(&texts, "↓ lower is better").len(), 1);
        let tips = tips(&svg);
        assert!(
            tips.iter()
                .any(|(_, t)| t
                    == "ext4, write\np50 3 ms, p90 12 ms, p99 30 ms, p99.9 75 ms, max 120 ms\n1200 operations"),
            "{tips:?}"
        );
        assert_eq!(tips.iter().filter(|(_, t)| t.ends_with("1200 operations")).count(), 4);
    }

    #[test]
    fn latencies_over_many_decades_keep_a_tick_per_power_of_ten_in_its_unit() {
        let wide = [op("fsync", 0.01), op("rename", 400.0)];
        let configs = [Bars {
            label: "ext4".to_string(),
            colour: 0,
            ops: &wide,
        }];
        let svg = chart("planted: latency per operation", &configs).unwrap().unwrap().text;
        let texts = texts(&svg);
        for tick in ["10 µs", "100 µs", "1 ms", "10 ms", "100 ms", "1 s", "10 s"] {
            assert_eq!(text(&texts, tick).len(), 1, "no tick {tick}: {texts:?}");
        }
    }
}
