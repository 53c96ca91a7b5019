//! Stacked bars of the CPU split, as the IBM seed draws them: one bar per configuration (in a
//! group per row), split into user, system, iowait and idle. In percent for a workload's runs;
//! in seconds for the lab's steps, where the bar is the step's time and its parts say where the
//! CPU was meanwhile.

use super::bars::slot;
use super::{headroom, label, legend, render, shorten, table_frame, width_for, Area, Drawn, Place, Svg};
use super::{HEIGHT, TEXT_SIZE};
use crate::error::Result;
use crate::table::{Table, TableCell};
use plotters::prelude::*;

/// Colours of the parts, in the order of [`CpuSplit::PARTS`](crate::study::CpuSplit::PARTS):
/// user green, system vermillion, iowait orange, idle light grey.
const PARTS: [RGBColor; 4] = [
    RGBColor(0x00, 0x9E, 0x73),
    RGBColor(0xD5, 0x5E, 0x00),
    RGBColor(0xE6, 0x9F, 0x00),
    RGBColor(0xDD, 0xDD, 0xDD),
];

/// Room below the axis: each bar's configuration written downwards, then the group's label.
const X_AREA: u32 = 110;

/// The stacked bars of a table of splits; none when it has none.
pub fn chart(table: &Table) -> Result<Option<Svg>> {
    let totals = table.rows.iter().flat_map(|r| &r.cells).filter_map(|c| match c {
        TableCell::Split { parts } => Some(parts.iter().sum::<f64>()),
        _ => None,
    });
    let top = totals.fold(f64::NAN, f64::max);
    if top.is_nan() {
        return Ok(None);
    }
    let top = if table.unit == "%" { 100.0 } else { headroom(top) };
    let width = width_for(table.rows.len() * table.columns.len());
    render(&table.title, (width, HEIGHT + 60), |root| draw(root, table, top)).map(Some)
}

fn draw(root: &Area, table: &Table, top: f64) -> Drawn {
    let count = table.columns.len();
    let mut chart = table_frame(root, table, X_AREA, top)?;
    for (g, row) in table.rows.iter().enumerate() {
        for (k, cell) in row.cells.iter().enumerate() {
            let (x0, x1) = slot(g, k, count);
            let (x, y) = chart.backend_coord(&((x0 + x1) / 2.0, 0.0));
            match cell {
                TableCell::Split { parts } => {
                    let mut base = 0.0;
                    for (p, value) in parts.iter().enumerate() {
                        let part = Rectangle::new([(x0, base), (x1, base + value)], PARTS[p % PARTS.len()].filled());
                        chart.draw_series(std::iter::once(part))?;
                        base += value;
                    }
                }
                TableCell::Missing { status, .. } => label(root, status, (x, y - 4), TEXT_SIZE, Place::Up)?,
                _ => {}
            }
            label(
                root,
                &shorten(&table.columns[k], 12),
                (x, y + 4),
                TEXT_SIZE - 2,
                Place::Down,
            )?;
        }
        let (x, y) = chart.backend_coord(&(g as f64 + 0.5, 0.0));
        label(
            root,
            &shorten(&row.label, 24),
            (x, y + X_AREA as i32 - 24),
            TEXT_SIZE,
            Place::Below,
        )?;
    }
    let names: Vec<_> = table
        .parts
        .iter()
        .enumerate()
        .map(|(p, name)| (name.clone(), PARTS[p % PARTS.len()]))
        .collect();
    legend(root, &names)
}
