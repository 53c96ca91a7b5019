//! SVG charts drawn with plotters, one file per kind: grouped bars with confidence intervals
//! ([`bars`]), stacked bars of the CPU split ([`cpu`]), lines against threads or clients
//! ([`lines`]), a run's per-second series ([`series`]) and latency percentiles per operation
//! ([`latency`]). Each returns the SVG as text, or none when it would show nothing.
//!
//! Charts are built from the same [`Table`](crate::table::Table)s the exports print, so a bar
//! and the number beside it agree. Text is left to the browser's sans-serif font (plotters'
//! SVG backend writes `<text>` elements), so no font is needed here.

pub mod bars;
pub mod cpu;
pub mod latency;
pub mod lines;
pub mod series;

use crate::error::{ReportError, Result};
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// The drawing area charts are drawn on: the whole SVG, in pixels.
pub(crate) type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// A chart's plotting area with its coordinates.
pub(crate) type Chart<'a, 'b, X, Y> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<X, Y>>;

/// What a chart's drawing code returns.
pub(crate) type Drawn = std::result::Result<(), Box<dyn std::error::Error>>;

/// Default size of a chart, in pixels; CSS scales it down on a narrow screen.
pub const WIDTH: u32 = 760;
pub const HEIGHT: u32 = 380;

pub(crate) const FONT: &str = "sans-serif";

/// Okabe and Ito's colour-blind-safe palette, dark colours first (yellow is left out: it
/// does not show on white).
const PALETTE: [RGBColor; 7] = [
    RGBColor(0x00, 0x72, 0xB2),
    RGBColor(0xE6, 0x9F, 0x00),
    RGBColor(0x00, 0x9E, 0x73),
    RGBColor(0xD5, 0x5E, 0x00),
    RGBColor(0x56, 0xB4, 0xE9),
    RGBColor(0xCC, 0x79, 0xA7),
    RGBColor(0x55, 0x55, 0x55),
];

/// The colour of configuration `i`, the same in every chart of a report. Past the palette
/// (seed 001 compares 15 configurations) each further round takes the palette darker, then
/// lighter, so that no two configurations of a study share a colour.
pub fn colour(i: usize) -> RGBColor {
    let RGBColor(r, g, b) = PALETTE[i % PALETTE.len()];
    // Toward black (0) or white (255) by this share, per round.
    let (target, share) = match i / PALETTE.len() {
        0 => return RGBColor(r, g, b),
        round if round % 2 == 1 => (0.0, 0.45 / round.div_ceil(2) as f64),
        round => (255.0, 0.5 / (round / 2) as f64),
    };
    let mix = |c: u8| (f64::from(c) + (target - f64::from(c)) * share).round() as u8;
    RGBColor(mix(r), mix(g), mix(b))
}

#[cfg(test)]
mod palette_tests {
    use super::*;

    #[test]
    fn three_rounds_of_configurations_have_distinct_colours() {
        let colours: Vec<RGBColor> = (0..3 * PALETTE.len()).map(colour).collect();
        for (i, a) in colours.iter().enumerate() {
            for (j, b) in colours.iter().enumerate().skip(i + 1) {
                assert_ne!(a, b, "configurations {i} and {j} share a colour");
            }
        }
        assert_eq!(colour(0), PALETTE[0]);
        assert_eq!(
            colour(PALETTE.len()),
            RGBColor(0x00, 0x3F, 0x62),
            "the first colour, 45% darker"
        );
    }
}

/// A drawn chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Svg {
    /// The `<svg>` element.
    pub text: String,
    /// Its title, in full (the drawn one may be shortened): what the HTML names the chart by.
    pub title: String,
    /// Its width in pixels: a chart wider than [`WIDTH`] needs a whole row of the page.
    pub width: u32,
}

/// Font sizes, in pixels as plotters counts them (its SVG text is 1/1.24 of these).
pub(crate) const TITLE_SIZE: u32 = 20;
pub(crate) const TEXT_SIZE: u32 = 15;

/// A y axis's tick label: a figure with its trailing zeros dropped (3000, 0.25, 12.5).
pub(crate) fn tick(v: &f64) -> String {
    let text = crate::table::number(*v);
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// The width a chart of `bars` bars in groups needs: 22 pixels a bar, between [`WIDTH`] and
/// twice that.
pub(crate) fn width_for(bars: usize) -> u32 {
    (200 + 22 * bars as u32 + bars::LEGEND_WIDTH).clamp(WIDTH, 2 * WIDTH)
}

/// Draws a chart of `size` pixels with `draw` and returns its SVG; a failure names the chart.
pub(crate) fn render(name: &str, size: (u32, u32), draw: impl FnOnce(&Area) -> Drawn) -> Result<Svg> {
    let mut svg = String::new();
    let failed = |message: String| ReportError::Chart {
        chart: name.to_string(),
        message,
    };
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        root.fill(&WHITE).map_err(|e| failed(e.to_string()))?;
        draw(&root).map_err(|e| failed(e.to_string()))?;
        root.present().map_err(|e| failed(e.to_string()))?;
    }
    Ok(Svg {
        text: svg,
        title: name.to_string(),
        width: size.0,
    })
}

/// Where a label goes from its anchor point.
#[derive(Clone, Copy)]
pub(crate) enum Place {
    /// Horizontal, centred below the point.
    Below,
    /// Turned a quarter anticlockwise, rising from the point.
    Up,
    /// Turned a quarter anticlockwise, hanging down from the point.
    Down,
}

/// Writes `text` at pixel `at` of `root`, placed as `place` says.
pub(crate) fn label(root: &Area, text: &str, at: (i32, i32), size: u32, place: Place) -> Drawn {
    let style = TextStyle::from((FONT, size).into_font()).color(&BLACK);
    let style = match place {
        Place::Below => style.pos(Pos::new(HPos::Center, VPos::Top)),
        Place::Up => style
            .transform(FontTransform::Rotate270)
            .pos(Pos::new(HPos::Left, VPos::Center)),
        Place::Down => style
            .transform(FontTransform::Rotate270)
            .pos(Pos::new(HPos::Right, VPos::Center)),
    };
    root.draw(&Text::new(text.to_string(), at, style))?;
    Ok(())
}

/// A text shortened to `max` characters with an ellipsis.
pub(crate) fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_string()
    } else {
        text.chars().take(max.saturating_sub(1)).chain(['…']).collect()
    }
}

/// The top of a y axis that starts at zero and shows `max` with some room above it.
pub(crate) fn headroom(max: f64) -> f64 {
    if max.is_finite() && max > 0.0 {
        max * 1.12
    } else {
        1.0
    }
}

/// The frame of a chart: its title, the room for the legend on the right, for tick labels on
/// the left and for `x_area` pixels of labels below, and the plotting area's coordinates.
pub(crate) fn frame<'a, 'b, X: AsRangedCoord, Y: AsRangedCoord>(
    root: &'a Area<'b>,
    title: &str,
    x_area: u32,
    x: X,
    y: Y,
) -> std::result::Result<Chart<'a, 'b, X::CoordDescType, Y::CoordDescType>, Box<dyn std::error::Error>> {
    let chart = ChartBuilder::on(root)
        .caption(shorten(title, 80), (FONT, TITLE_SIZE))
        .margin(8)
        .margin_right(bars::LEGEND_WIDTH)
        .x_label_area_size(x_area)
        .y_label_area_size(76)
        .build_cartesian_2d(x, y)?;
    Ok(chart)
}

/// The grid of a chart whose x axis holds categories (its labels are drawn apart): light
/// horizontal lines and tick labels on the y axis, described by `y_desc`.
pub(crate) fn category_grid<X, Y>(chart: &mut Chart<X, Y>, y_desc: &str) -> Drawn
where
    X: Ranged + ValueFormatter<X::ValueType>,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_desc(shorten(y_desc, 40))
        .y_label_formatter(&tick)
        .label_style((FONT, TEXT_SIZE))
        .light_line_style(LIGHT_LINE)
        .draw()?;
    Ok(())
}

/// The grid of a chart with numbers on both axes, described by `x_desc` and `y_desc`.
pub(crate) fn number_grid<X, Y>(chart: &mut Chart<X, Y>, x_desc: &str, y_desc: &str) -> Drawn
where
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(shorten(y_desc, 40))
        .x_label_formatter(&tick)
        .y_label_formatter(&tick)
        .label_style((FONT, TEXT_SIZE))
        .light_line_style(LIGHT_LINE)
        .draw()?;
    Ok(())
}

/// The faint lines between a grid's labelled ones.
const LIGHT_LINE: RGBColor = RGBColor(0xF3, 0xF3, 0xF3);

/// Draws the legend of a table's columns (configurations), in their colours.
pub(crate) fn column_legend(root: &Area, columns: &[String]) -> Drawn {
    let names: Vec<_> = columns
        .iter()
        .enumerate()
        .map(|(k, c)| (c.clone(), colour(k)))
        .collect();
    legend(root, &names)
}

/// The frame and grid of a chart of a table's rows as groups of bars, the y axis from 0 to
/// `top`, with `x_area` pixels below for the labels.
pub(crate) fn table_frame<'a, 'b>(
    root: &'a Area<'b>,
    table: &crate::table::Table,
    x_area: u32,
    top: f64,
) -> std::result::Result<Chart<'a, 'b, RangedCoordf64, RangedCoordf64>, Box<dyn std::error::Error>> {
    let mut chart = frame(root, &table.title, x_area, 0f64..table.rows.len() as f64, 0f64..top)?;
    category_grid(&mut chart, &table.figure)?;
    Ok(chart)
}

/// Draws a legend of `names` with their colours to the right of a chart's plotting area.
pub(crate) fn legend(root: &Area, names: &[(String, RGBColor)]) -> Drawn {
    let (width, _) = root.dim_in_pixel();
    let (x, mut y) = ((width - bars::LEGEND_WIDTH + 16) as i32, 44);
    for (name, colour) in names {
        root.draw(&Rectangle::new([(x, y + 2), (x + 12, y + 12)], colour.filled()))?;
        let style = TextStyle::from((FONT, TEXT_SIZE).into_font())
            .color(&BLACK)
            .pos(Pos::new(HPos::Left, VPos::Top));
        root.draw(&Text::new(shorten(name, 22), (x + 16, y), style))?;
        y += 18;
    }
    Ok(())
}
