//! Latency percentiles per operation type, one bar per configuration on a logarithmic axis:
//! the bar reaches the 99th percentile, the whisker runs from the median (its lower cap) to the
//! 99.9th percentile (its upper cap). Percentiles are pooled over the cell's runs. Each bar's
//! tooltip has every percentile and the number of operations.

use super::bars::{slot, whisker, X_AREA};
use super::{category_grid, colour, direction, frame, label, render, shorten, tick, width_for};
use super::{Area, Drawn, Layout, Place, Svg, Tips, HEIGHT, TEXT_SIZE};
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
        (lo.min(o.p50_us), hi.max(o.p99_9_us))
    });
    let range = ((lo / 2.0).max(0.1), (hi * 2.0).max(1.0));
    let width = width_for(ops.len() * configs.len());
    let names = configs.iter().map(|c| (c.label.clone(), colour(c.colour))).collect();
    let layout = Layout::new(title, Some(direction(false)), (width, HEIGHT), X_AREA, names);
    render(title, layout.size(), |root, tips| {
        draw(root, tips, &layout, &ops, configs, range)
    })
    .map(Some)
}

/// The tooltip of one configuration's bar for one operation, in µs.
fn tip(config: &Bars, o: &OpLatency) -> String {
    format!(
        "{}, {}\np50 {} µs, p90 {} µs, p99 {} µs, p99.9 {} µs, max {} µs\n{} operations",
        config.label,
        o.op,
        tick(&o.p50_us),
        tick(&o.p90_us),
        tick(&o.p99_us),
        tick(&o.p99_9_us),
        tick(&o.max_us),
        o.count
    )
}

fn draw(root: &Area, tips: &mut Tips, layout: &Layout, ops: &[&str], configs: &[Bars], (lo, hi): (f64, f64)) -> Drawn {
    let mut chart = frame(root, layout, tips, 0f64..ops.len() as f64, (lo..hi).log_scale())?;
    category_grid(&mut chart, "latency, µs", tick)?;
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
