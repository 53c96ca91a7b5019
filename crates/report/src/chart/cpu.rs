//! Stacked bars of the CPU split, as the IBM seed draws them: one bar per configuration (in a
//! group per row), split into user, system, iowait and idle. In percent for a workload's runs;
//! in seconds for the lab's steps, where the bar is the step's time and its parts say where the
//! CPU was meanwhile. A part tall and wide enough has its share written on it; every part's
//! tooltip has the whole split.

use super::bars::{slot, slot_pixels};
use super::{cell_tip, headroom, label, part_text, render, shorten, table_frame, text_height, text_width, width_for};
use super::{Area, Drawn, Layout, Place, Svg, Tips, HEIGHT, TEXT_SIZE, VALUE_SIZE};
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
    let names: Vec<_> = table
        .parts
        .iter()
        .enumerate()
        .map(|(p, name)| (name.clone(), PARTS[p % PARTS.len()]))
        .collect();
    // Parts of a whole have no better direction.
    let layout = Layout::new(&table.title, None, (width, HEIGHT + 60), X_AREA, names);
    render(&table.title, layout.size(), |root, tips| {
        draw(root, tips, &layout, table, top)
    })
    .map(Some)
}

fn draw(root: &Area, tips: &mut Tips, layout: &Layout, table: &Table, top: f64) -> Drawn {
    let count = table.columns.len();
    let mut chart = table_frame(root, layout, tips, table, top)?;
    let slot_px = slot_pixels(layout.plot().0, table.rows.len(), count);
    for (g, row) in table.rows.iter().enumerate() {
        for (k, cell) in row.cells.iter().enumerate() {
            let (x0, x1) = slot(g, k, count);
            let (x, y) = chart.backend_coord(&((x0 + x1) / 2.0, 0.0));
            let tip = cell_tip(table, row, k);
            match cell {
                TableCell::Split { parts } => {
                    let mut base = 0.0;
                    for (p, value) in parts.iter().enumerate() {
                        let part = Rectangle::new([(x0, base), (x1, base + value)], PARTS[p % PARTS.len()].filled());
                        chart.draw_series(std::iter::once(part))?;
                        let (left, bottom) = chart.backend_coord(&(x0, base));
                        let (right, upper) = chart.backend_coord(&(x1, base + value));
                        // Its share, where it has room.
                        let text = part_text(*value, &table.unit);
                        let fits_across = f64::from(text_width(&text, VALUE_SIZE) + 4) <= slot_px;
                        if fits_across && bottom - upper >= text_height(VALUE_SIZE) as i32 + 2 {
                            label(root, &text, (x, (bottom + upper) / 2), VALUE_SIZE, Place::Middle)?;
                        }
                        let name = table.parts.get(p).map_or("", String::as_str);
                        let head = format!("{name} {}", part_text(*value, &table.unit));
                        tips.add((left, bottom), (right, upper), format!("{head}\n{tip}"));
                        base += value;
                    }
                }
                TableCell::Missing { status, .. } => {
                    label(root, status, (x, y - 4), TEXT_SIZE, Place::Up)?;
                    let above = y - 4 - text_width(status, TEXT_SIZE) as i32;
                    tips.add((x - 6, y), (x + 6, above), tip);
                }
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
            &shorten(&row.name, 24),
            (x, y + X_AREA as i32 - 24),
            TEXT_SIZE,
            Place::Below,
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::testing::{text, texts, tips};
    use super::*;
    use crate::table::TableRow;

    #[test]
    fn large_parts_have_their_share_written_and_every_part_a_tooltip() {
        let table = Table {
            title: "planted: CPU split (%)".to_string(),
            figure: "CPU split (%)".to_string(),
            unit: "%".to_string(),
            higher_is_better: false,
            corner: "threads".to_string(),
            columns: vec!["ext4".to_string(), "xfs".to_string()],
            rows: vec![TableRow {
                label: "4".to_string(),
                name: "threads=4".to_string(),
                cells: vec![
                    TableCell::Split {
                        parts: vec![10.0, 86.0, 0.4, 3.6],
                    },
                    TableCell::Missing {
                        status: "unsupported".to_string(),
                        reason: "no such filesystem".to_string(),
                    },
                ],
            }],
            parts: ["user", "system", "iowait", "idle"].map(String::from).to_vec(),
            notes: Vec::new(),
            primary: true,
        };
        let svg = chart(&table).unwrap().unwrap().text;
        let texts = texts(&svg);
        for share in ["10%", "86%"] {
            assert_eq!(text(&texts, share).len(), 1, "no {share}: {texts:?}");
        }
        assert!(text(&texts, "0%").is_empty(), "a sliver has no room for its share");
        assert!(
            !texts.iter().any(|t| t.text.contains("better")),
            "a split has no direction"
        );
        for part in ["user", "system", "iowait", "idle", "threads=4"] {
            assert_eq!(text(&texts, part).len(), 1, "no {part}: {texts:?}");
        }
        let tips = tips(&svg);
        let whole = "ext4, threads=4\nuser 10%, system 86%, iowait 0%, idle 4%";
        assert!(
            tips.iter().any(|(_, t)| *t == format!("system 86%\n{whole}")),
            "{tips:?}"
        );
        assert_eq!(tips.iter().filter(|(_, t)| t.ends_with(whole)).count(), 4);
        assert!(tips
            .iter()
            .any(|(_, t)| t == "xfs, threads=4\nunsupported: no such filesystem"));
    }
}
