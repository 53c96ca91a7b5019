//! SVG charts drawn with plotters, one file per kind: grouped bars with confidence intervals
//! ([`bars`]), stacked bars of the CPU split ([`cpu`]), lines against threads or clients
//! ([`lines`]), a run's per-second series ([`series`]) and latency percentiles per operation
//! ([`latency`]). Each returns the SVG as text, or none when it would show nothing.
//!
//! Charts are built from the same [`Table`](crate::table::Table)s the exports print, so a bar
//! and the number beside it agree. Text is left to the browser's sans-serif font (plotters'
//! SVG backend writes `<text>` elements), so no font is needed here.
//!
//! Every chart is read the same way: its title, with the figure's direction under it ("higher
//! is better") where it has one; the plot; the legend below, in columns, so that long labels and
//! fifteen configurations fit. Each bar, point and legend entry has a tooltip (an SVG `<title>`,
//! which the browser shows on hover without any script) with its figures in full.

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

/// Font sizes, in pixels as plotters counts them (its SVG text is 1/1.24 of these). The page
/// shows a chart of [`WIDTH`] at about three quarters of its size, so these are larger than a
/// page's text would be.
pub(crate) const TITLE_SIZE: u32 = 26;
/// The line under the title that says which way is better.
pub(crate) const SUBTITLE_SIZE: u32 = 20;
/// Tick labels, axis descriptions and the labels under groups of bars.
pub(crate) const TEXT_SIZE: u32 = 20;
/// The legend's names.
pub(crate) const LEGEND_SIZE: u32 = 22;
/// The values written on bars.
pub(crate) const VALUE_SIZE: u32 = 19;

/// Room around a chart, in pixels: on every side, more on the right (where the last tick label
/// of an x axis overhangs), and left of the plot for the y axis's tick labels and description.
const MARGIN: u32 = 8;
const MARGIN_RIGHT: u32 = 24;
pub(crate) const Y_AREA: u32 = 96;

/// Secondary text: the direction under a title.
const GREY: RGBColor = RGBColor(0x55, 0x55, 0x55);

/// How tall a line of text of `size` is in the SVG, in pixels.
pub(crate) fn text_height(size: u32) -> u32 {
    (f64::from(size) / 1.24 * 1.2).ceil() as u32
}

/// About how wide `text` is at `size` in the browser's sans-serif, in pixels, from the widths
/// of DejaVu Sans (Chromium's usual sans-serif on Linux; Arial's are a little narrower): a
/// third of an em for narrow letters and punctuation, 0.85 for wide ones, 0.64 for digits and
/// 0.6 for the rest.
pub(crate) fn text_width(text: &str, size: u32) -> u32 {
    let em: f64 =
        text.chars()
            .map(|c| match c {
                'i' | 'j' | 'l' | 't' | 'f' | 'r' | 'I' | '.' | ',' | ':' | ';' | '\'' | '|' | ' ' | '-' | '('
                | ')' => 0.36,
                'm' | 'w' | 'M' | 'W' | '=' | '%' | '@' | '×' | '…' => 0.85,
                '0'..='9' => 0.64,
                c if c.is_uppercase() => 0.7,
                _ => 0.6,
            })
            .sum();
    (em * f64::from(size) / 1.24).ceil() as u32
}

/// A y axis's tick label: a figure with its trailing zeros dropped (3000, 0.25, 12.5).
pub(crate) fn tick(v: &f64) -> String {
    trimmed(crate::table::number(*v))
}

/// A figure with its trailing decimal zeros (and a trailing point) dropped.
fn trimmed(text: String) -> String {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// A figure written on a bar: four significant digits at most (whole numbers from 1000 on),
/// trailing zeros dropped: 1560, 129.5, 17.35, 1.25, 0.1234.
pub(crate) fn compact(v: f64) -> String {
    let a = v.abs();
    let text = if a >= 1000.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 10.0 {
        format!("{v:.2}")
    } else if a >= 1.0 {
        format!("{v:.3}")
    } else {
        format!("{v:.4}")
    };
    trimmed(text)
}

/// Whether a table's unit is microseconds, which charts write in µs, ms or s by size.
pub(crate) fn is_micros(unit: &str) -> bool {
    unit == "us" || unit == "µs"
}

/// A duration given in microseconds, in the unit its size reads best in: `850 µs`, `1.2 ms`,
/// `35 ms`, `2.5 s`.
pub(crate) fn duration_us(us: f64) -> String {
    let a = us.abs();
    if a == 0.0 {
        "0".to_string()
    } else if a < 1e3 {
        format!("{} µs", compact(us))
    } else if a < 1e6 {
        format!("{} ms", compact(us / 1e3))
    } else {
        format!("{} s", compact(us / 1e6))
    }
}

/// A value of a table in `unit` as a chart writes it: a duration in its best unit, or the
/// figure alone (the axis says the unit).
pub(crate) fn value_text(v: f64, unit: &str) -> String {
    if is_micros(unit) {
        duration_us(v)
    } else {
        compact(v)
    }
}

/// How the y axis of a figure in `unit` labels its ticks.
pub(crate) fn y_format(unit: &str) -> fn(&f64) -> String {
    if is_micros(unit) {
        |v| duration_us(*v)
    } else {
        tick
    }
}

/// A unit as a reader writes it (`µs` for `us`).
fn unit_text(unit: &str) -> &str {
    if is_micros(unit) {
        "µs"
    } else {
        unit
    }
}

/// What a chart says under its title about the figure's direction.
pub(crate) fn direction(higher_is_better: bool) -> &'static str {
    if higher_is_better {
        "↑ higher is better"
    } else {
        "↓ lower is better"
    }
}

/// The description of a table's y axis: its figure, without the unit when the ticks carry it
/// (durations).
pub(crate) fn y_desc(table: &crate::table::Table) -> String {
    let suffix = format!(" ({})", table.unit);
    match table.figure.strip_suffix(&suffix) {
        Some(name) if is_micros(&table.unit) => name.to_string(),
        _ => table.figure.clone(),
    }
}

/// The tooltip of cell `k` of `row`: where it is, its value ± CI with the unit, the number of
/// runs and the verdict, its warnings; a missing cell's status and reason.
pub(crate) fn cell_tip(table: &crate::table::Table, row: &crate::table::TableRow, k: usize) -> String {
    use crate::table::{mean_and_ci, runs_and_standing, TableCell};
    let at = format!("{}, {}", table.columns[k], row.name);
    let unit = match unit_text(&table.unit) {
        "" => String::new(),
        u => format!(" {u}"),
    };
    match &row.cells[k] {
        TableCell::Value {
            summary,
            standing,
            warnings,
        } => {
            let mut text = format!(
                "{at}\n{}{unit}\n{}",
                mean_and_ci(summary),
                runs_and_standing(summary, standing.as_ref())
            );
            for w in warnings {
                text.push_str(&format!("\n! {w}"));
            }
            text
        }
        TableCell::Split { parts } => {
            let parts: Vec<String> = table
                .parts
                .iter()
                .zip(parts)
                .map(|(name, v)| format!("{name} {}", part_text(*v, &table.unit)))
                .collect();
            format!("{at}\n{}", parts.join(", "))
        }
        TableCell::Missing { status, reason } => format!("{at}\n{status}: {reason}"),
        TableCell::Absent => format!("{at}\nnot measured"),
    }
}

/// A part of a split: `86%` in percent, else the figure with its unit.
pub(crate) fn part_text(v: f64, unit: &str) -> String {
    match unit {
        "%" => format!("{v:.0}%"),
        "" => compact(v),
        unit => format!("{} {unit}", compact(v)),
    }
}

/// The width a chart of `bars` bars in groups needs: 22 pixels a bar, between [`WIDTH`] and
/// twice that.
pub(crate) fn width_for(bars: usize) -> u32 {
    (380 + 22 * bars as u32).clamp(WIDTH, 2 * WIDTH)
}

/// The tooltips of a chart, recorded while it is drawn: rectangles of pixels, each with its
/// text. plotters writes no `<title>`, so [`render`] adds them once the chart is drawn, as
/// transparent rectangles over everything else: the browser shows a rectangle's `<title>` when
/// the pointer rests on it, and nothing else changes.
#[derive(Debug, Default)]
pub(crate) struct Tips(Vec<([i32; 4], String)>);

/// The smallest side of a tooltip's rectangle, in pixels: a bar of nearly nothing still has one
/// the pointer can find.
const TIP_SIDE: i32 = 8;

impl Tips {
    /// A tooltip over the rectangle between pixels `a` and `b` (opposite corners, in any order).
    pub fn add(&mut self, a: (i32, i32), b: (i32, i32), text: impl Into<String>) {
        let widen = |lo: i32, hi: i32| {
            let (lo, hi) = (lo.min(hi), lo.max(hi));
            let short = (TIP_SIDE - (hi - lo)).max(0);
            (lo - short / 2, hi + short - short / 2)
        };
        let (x0, x1) = widen(a.0, b.0);
        let (y0, y1) = widen(a.1, b.1);
        self.0.push(([x0, y0, x1 - x0, y1 - y0], text.into()));
    }

    /// A tooltip over the square of `r` pixels each way around pixel `at`.
    pub fn around(&mut self, at: (i32, i32), r: i32, text: impl Into<String>) {
        self.add((at.0 - r, at.1 - r), (at.0 + r, at.1 + r), text);
    }

    /// The rectangles as SVG.
    fn svg(&self) -> String {
        let mut out = String::new();
        for ([x, y, w, h], text) in &self.0 {
            out.push_str(&format!(
                "<rect x=\"{x}\" y=\"{y}\" width=\"{w}\" height=\"{h}\" fill=\"transparent\"><title>{}</title></rect>\n",
                xml_escape(text)
            ));
        }
        out
    }
}

/// Text made safe inside an SVG element.
pub(crate) fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Draws a chart of `size` pixels with `draw`, which records the tooltips of what it draws, and
/// returns its SVG with them; a failure names the chart.
pub(crate) fn render(name: &str, size: (u32, u32), draw: impl FnOnce(&Area, &mut Tips) -> Drawn) -> Result<Svg> {
    let mut svg = String::new();
    let failed = |message: String| ReportError::Chart {
        chart: name.to_string(),
        message,
    };
    let mut tips = Tips::default();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        root.fill(&WHITE).map_err(|e| failed(e.to_string()))?;
        draw(&root, &mut tips).map_err(|e| failed(e.to_string()))?;
        root.present().map_err(|e| failed(e.to_string()))?;
    }
    let end = svg
        .rfind("</svg>")
        .ok_or_else(|| failed("plotters wrote no </svg>".to_string()))?;
    svg.insert_str(end, &tips.svg());
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
    /// Horizontal, centred, standing on the point.
    Above,
    /// Horizontal, its right end at the point, centred on it vertically.
    Left,
    /// Horizontal, centred on the point both ways.
    Middle,
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
        Place::Above => style.pos(Pos::new(HPos::Center, VPos::Bottom)),
        Place::Left => style.pos(Pos::new(HPos::Right, VPos::Center)),
        Place::Middle => style.pos(Pos::new(HPos::Center, VPos::Center)),
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

/// Where a chart's parts go, in pixels: the header (its title, and the figure's direction under
/// it), the plot with its axes, and the legend below everything, as tall as its names need.
pub(crate) struct Layout {
    title: String,
    /// Which way is better, when the figure has a direction.
    subtitle: Option<&'static str>,
    width: u32,
    /// The height without the legend.
    body: u32,
    /// Room below the plot for the x axis's labels.
    x_area: u32,
    legend: Legend,
}

impl Layout {
    /// A chart `width` pixels wide whose header, plot and x axis take `body` pixels of height,
    /// with `x_area` of them for the x axis's labels, and a legend of `names` below.
    pub fn new(
        title: &str,
        subtitle: Option<&'static str>,
        (width, body): (u32, u32),
        x_area: u32,
        names: Vec<(String, RGBColor)>,
    ) -> Layout {
        Layout {
            title: title.to_string(),
            subtitle,
            width,
            body,
            x_area,
            legend: Legend::new(names, width),
        }
    }

    /// The whole chart's size.
    pub fn size(&self) -> (u32, u32) {
        (self.width, self.body + self.legend.height())
    }

    /// How tall the header is.
    fn header(&self) -> u32 {
        let sub = self.subtitle.map_or(0, |_| text_height(SUBTITLE_SIZE) + 2);
        MARGIN + text_height(TITLE_SIZE) + sub + 10
    }

    /// The plotting area's size in pixels (as plotters lays it out: see [`frame`]).
    pub fn plot(&self) -> (u32, u32) {
        (
            self.width - MARGIN - MARGIN_RIGHT - Y_AREA,
            self.body - self.header() - self.x_area - MARGIN,
        )
    }

    /// Draws the title, the direction and the legend.
    fn draw(&self, root: &Area, tips: &mut Tips) -> Drawn {
        let centre = (self.width / 2) as i32;
        let fits = ((self.width - 2 * MARGIN) / text_width("x", TITLE_SIZE)) as usize;
        let title = TextStyle::from((FONT, TITLE_SIZE).into_font())
            .color(&BLACK)
            .pos(Pos::new(HPos::Center, VPos::Top));
        root.draw(&Text::new(
            shorten(&self.title, fits.min(90)),
            (centre, MARGIN as i32),
            title,
        ))?;
        if let Some(sub) = self.subtitle {
            let style = TextStyle::from((FONT, SUBTITLE_SIZE).into_font())
                .color(&GREY)
                .pos(Pos::new(HPos::Center, VPos::Top));
            let y = (MARGIN + text_height(TITLE_SIZE) + 4) as i32;
            root.draw(&Text::new(sub.to_string(), (centre, y), style))?;
        }
        self.legend.draw(root, tips)
    }
}

/// A legend below a chart: its names in columns as wide as the longest, as many columns as
/// the chart's width holds, as many lines as they need. A name too long for the chart is
/// shortened; its tooltip has it whole.
struct Legend {
    names: Vec<(String, RGBColor)>,
    /// Characters of a name that are written.
    chars: usize,
    columns: usize,
    /// A column's width with the gap after it.
    column: u32,
}

const LEGEND_LINE: u32 = 26;
const SWATCH: u32 = 16;
const LEGEND_GAP: u32 = 28;
/// The longest name a legend writes whole (seed studies have labels such as
/// `ext4-uninit-flexbg data=writeback`).
const LEGEND_CHARS: usize = 48;

impl Legend {
    fn new(names: Vec<(String, RGBColor)>, width: u32) -> Legend {
        let room = width - 2 * MARGIN;
        let fits = ((room - SWATCH - 8) / text_width("x", LEGEND_SIZE)) as usize;
        let chars = LEGEND_CHARS.min(fits);
        let widest = names
            .iter()
            .map(|(n, _)| text_width(&shorten(n, chars), LEGEND_SIZE))
            .max()
            .unwrap_or(0);
        let column = SWATCH + 8 + widest + LEGEND_GAP;
        let columns = ((room + LEGEND_GAP) / column).clamp(1, names.len().max(1) as u32) as usize;
        Legend {
            names,
            chars,
            columns,
            column,
        }
    }

    fn height(&self) -> u32 {
        if self.names.is_empty() {
            0
        } else {
            self.names.len().div_ceil(self.columns) as u32 * LEGEND_LINE + 6
        }
    }

    /// Draws the legend at the bottom of `root`, centred.
    fn draw(&self, root: &Area, tips: &mut Tips) -> Drawn {
        let (width, height) = root.dim_in_pixel();
        let used = self.columns as u32 * self.column - LEGEND_GAP;
        let left = (width.saturating_sub(used) / 2) as i32;
        let top = (height - MARGIN - self.height() + 6) as i32;
        let style = TextStyle::from((FONT, LEGEND_SIZE).into_font())
            .color(&BLACK)
            .pos(Pos::new(HPos::Left, VPos::Center));
        for (i, (name, colour)) in self.names.iter().enumerate() {
            let x = left + (i % self.columns) as i32 * self.column as i32;
            let y = top + (i / self.columns) as i32 * LEGEND_LINE as i32;
            let mid = y + LEGEND_LINE as i32 / 2;
            let half = SWATCH as i32 / 2;
            root.draw(&Rectangle::new(
                [(x, mid - half), (x + SWATCH as i32, mid + half)],
                colour.filled(),
            ))?;
            let text = shorten(name, self.chars);
            root.draw(&Text::new(text, (x + SWATCH as i32 + 8, mid), style.clone()))?;
            let right = x + (self.column - LEGEND_GAP) as i32;
            tips.add((x, y), (right, y + LEGEND_LINE as i32), name.clone());
        }
        Ok(())
    }
}

/// The frame of a chart laid out by `layout`: its title, direction and legend drawn, the room
/// for tick labels on the left and for the x axis's labels below, and the plotting area's
/// coordinates.
pub(crate) fn frame<'a, 'b, X: AsRangedCoord, Y: AsRangedCoord>(
    root: &'a Area<'b>,
    layout: &Layout,
    tips: &mut Tips,
    x: X,
    y: Y,
) -> std::result::Result<Chart<'a, 'b, X::CoordDescType, Y::CoordDescType>, Box<dyn std::error::Error>> {
    layout.draw(root, tips)?;
    let chart = ChartBuilder::on(root)
        .margin_top(layout.header())
        .margin_bottom(MARGIN + layout.legend.height())
        .margin_left(MARGIN)
        .margin_right(MARGIN_RIGHT)
        .x_label_area_size(layout.x_area)
        .y_label_area_size(Y_AREA)
        .build_cartesian_2d(x, y)?;
    Ok(chart)
}

/// The grid of a chart whose x axis holds categories (its labels are drawn apart): light
/// horizontal lines and tick labels on the y axis (as `y_format` writes them), described by
/// `y_desc`.
pub(crate) fn category_grid<X, Y>(chart: &mut Chart<X, Y>, y_desc: &str, y_format: fn(&f64) -> String) -> Drawn
where
    X: Ranged + ValueFormatter<X::ValueType>,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_desc(shorten(y_desc, 40))
        .y_label_formatter(&y_format)
        .label_style((FONT, TEXT_SIZE))
        .axis_desc_style((FONT, TEXT_SIZE))
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
        .axis_desc_style((FONT, TEXT_SIZE))
        .light_line_style(LIGHT_LINE)
        .draw()?;
    Ok(())
}

/// The faint lines between a grid's labelled ones.
pub(crate) const LIGHT_LINE: RGBColor = RGBColor(0xF3, 0xF3, 0xF3);
/// The lines a grid draws at its labelled ticks.
pub(crate) const GRID_LINE: RGBColor = RGBColor(0xDD, 0xDD, 0xDD);

/// The legend's names of a table's columns (configurations), in their colours.
pub(crate) fn column_names(columns: &[String]) -> Vec<(String, RGBColor)> {
    columns
        .iter()
        .enumerate()
        .map(|(k, c)| (c.clone(), colour(k)))
        .collect()
}

/// The frame and grid of a chart of a table's rows as groups of bars, the y axis from 0 to
/// `top`.
pub(crate) fn table_frame<'a, 'b>(
    root: &'a Area<'b>,
    layout: &Layout,
    tips: &mut Tips,
    table: &crate::table::Table,
    top: f64,
) -> std::result::Result<Chart<'a, 'b, RangedCoordf64, RangedCoordf64>, Box<dyn std::error::Error>> {
    let mut chart = frame(root, layout, tips, 0f64..table.rows.len() as f64, 0f64..top)?;
    category_grid(&mut chart, &y_desc(table), y_format(&table.unit))?;
    Ok(chart)
}

/// Ticks of a logarithmic axis from `lo` to `hi` that is `pixels` long: each power of ten, and
/// 2× and 5× between them where labels `gap` pixels tall have room; every other power of ten
/// (or fewer) where even those would crowd.
pub(crate) fn log_ticks(lo: f64, hi: f64, pixels: u32, gap: u32) -> Vec<f64> {
    if !(lo > 0.0 && hi > lo) {
        return Vec::new();
    }
    let decade = f64::from(pixels) / (hi / lo).log10();
    // 1→2 and 5→10 are the closest steps: 0.30 of a decade.
    let steps: &[f64] = if decade * 2f64.log10() >= f64::from(gap) {
        &[1.0, 2.0, 5.0]
    } else {
        &[1.0]
    };
    let every = (f64::from(gap) / decade).ceil().max(1.0) as i32;
    let first = lo.log10().floor() as i32;
    let last = hi.log10().ceil() as i32;
    let mut out = Vec::new();
    for e in first..=last {
        if (e - first) % every != 0 && steps.len() == 1 {
            continue;
        }
        for s in steps {
            let v = s * 10f64.powi(e);
            // Within the axis, allowing for rounding.
            if v >= lo * (1.0 - 1e-9) && v <= hi * (1.0 + 1e-9) {
                out.push(v);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tooltips_are_escaped_rectangles_before_the_end_of_the_svg() {
        let svg = render("t", (200, 100), |root, tips| {
            root.draw(&Rectangle::new([(10, 10), (20, 20)], BLACK.filled()))?;
            tips.add((20, 20), (10, 10), "a <b> & \"c\"");
            tips.around((50, 50), 1, "tiny");
            Ok(())
        })
        .unwrap();
        let tail = svg.text.rsplit("</rect>").nth(1).unwrap();
        assert!(svg.text.trim_end().ends_with("</svg>"));
        assert!(svg.text.contains(
            "<rect x=\"10\" y=\"10\" width=\"10\" height=\"10\" fill=\"transparent\"><title>a &lt;b&gt; &amp; &quot;c&quot;</title></rect>"
        ));
        assert!(
            tail.contains("<rect x=\"46\" y=\"46\" width=\"8\" height=\"8\""),
            "a rectangle is at least {TIP_SIDE} pixels each way: {tail}"
        );
    }

    #[test]
    fn durations_take_the_unit_their_size_reads_best_in() {
        assert_eq!(duration_us(100.0), "100 µs");
        assert_eq!(duration_us(1000.0), "1 ms");
        assert_eq!(duration_us(17346.0), "17.35 ms");
        assert_eq!(duration_us(2_500_000.0), "2.5 s");
        assert_eq!(duration_us(0.0), "0");
        assert_eq!(compact(1560.04), "1560");
        assert_eq!(compact(129.53), "129.5");
        assert_eq!(compact(0.5), "0.5");
    }

    #[test]
    fn log_ticks_are_powers_of_ten_with_2_and_5_between_when_there_is_room() {
        let close =
            |a: &[f64], b: &[f64]| a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x / y - 1.0).abs() < 1e-9);
        let roomy = log_ticks(100.0, 100_000.0, 300, 16);
        assert!(
            close(&roomy, &[100.0, 200.0, 500.0, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5]),
            "{roomy:?}"
        );
        let tight = log_ticks(1.0, 1e7, 280, 20);
        assert!(close(&tight, &[1.0, 10.0, 100.0, 1e3, 1e4, 1e5, 1e6, 1e7]), "{tight:?}");
        let crowded = log_ticks(1.0, 1e12, 150, 20);
        assert!(close(&crowded, &[1.0, 1e2, 1e4, 1e6, 1e8, 1e10, 1e12]), "{crowded:?}");
    }

    #[test]
    fn a_long_legend_takes_several_lines_and_stays_inside_the_chart() {
        let names: Vec<(String, RGBColor)> = (0..15)
            .map(|i| (format!("ext4-uninit-flexbg{i} data=writeback"), colour(i)))
            .collect();
        let legend = Legend::new(names, WIDTH);
        assert!(legend.columns >= 2, "{} columns", legend.columns);
        let used = legend.columns as u32 * legend.column - LEGEND_GAP;
        assert!(used <= WIDTH - 2 * MARGIN, "the legend is {used} pixels wide");
        assert_eq!(
            legend.height(),
            15usize.div_ceil(legend.columns) as u32 * LEGEND_LINE + 6
        );
    }
}

/// What the charts' tests plant and read: tables made of runs, ranked as the report ranks
/// them, and the texts, tooltips and rectangles of an SVG.
#[cfg(test)]
pub(crate) mod testing {
    use crate::stats::Summary;
    use crate::table::{Table, TableCell, TableRow};

    /// A table of `unit` whose rows are `(name, label, runs of each column)`, each row ranked.
    pub fn table(unit: &str, higher_is_better: bool, columns: &[&str], rows: &[(&str, &str, Vec<Vec<f64>>)]) -> Table {
        let rows = rows
            .iter()
            .map(|(name, label, runs)| {
                let summaries: Vec<Option<Summary>> = runs.iter().map(|r| Summary::of(r)).collect();
                let refs: Vec<Option<&Summary>> = summaries.iter().map(Option::as_ref).collect();
                let standings = crate::verdict::rank(&refs, higher_is_better, crate::verdict::MIN_EFFECT_PCT);
                let cells = summaries
                    .iter()
                    .zip(standings)
                    .map(|(s, standing)| match s {
                        Some(summary) => TableCell::Value {
                            summary: summary.clone(),
                            standing,
                            warnings: Vec::new(),
                        },
                        None => TableCell::Missing {
                            status: "hung".to_string(),
                            reason: "no progress for 60 s".to_string(),
                        },
                    })
                    .collect();
                TableRow {
                    label: label.to_string(),
                    name: name.to_string(),
                    cells,
                }
            })
            .collect();
        let figure = crate::table::figure_name("Throughput", unit);
        Table {
            title: format!("planted: {figure}"),
            figure,
            unit: unit.to_string(),
            higher_is_better,
            corner: "threads".to_string(),
            columns: columns.iter().map(|c| c.to_string()).collect(),
            rows,
            parts: Vec::new(),
            notes: Vec::new(),
            primary: true,
        }
    }

    /// A `<text>` of an SVG: where it is anchored, whether it is turned, what it says.
    #[derive(Debug, Clone)]
    pub struct Text {
        pub x: f64,
        pub y: f64,
        pub turned: bool,
        pub text: String,
    }

    fn attr(tag: &str, name: &str) -> Option<String> {
        let at = tag.find(&format!(" {name}=\""))? + name.len() + 3;
        Some(tag[at..].split('"').next()?.to_string())
    }

    fn unescape(s: &str) -> String {
        s.replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&#39;", "'")
            .replace("&amp;", "&")
    }

    /// Every `<text>` of `svg`.
    pub fn texts(svg: &str) -> Vec<Text> {
        svg.split("<text")
            .skip(1)
            .filter_map(|t| {
                let (tag, rest) = t.split_once('>')?;
                Some(Text {
                    x: attr(tag, "x")?.parse().ok()?,
                    y: attr(tag, "y")?.parse().ok()?,
                    turned: tag.contains("rotate("),
                    text: unescape(rest.split("</text>").next()?.trim()),
                })
            })
            .collect()
    }

    /// The `<text>`s of `svg` that say exactly `what`.
    pub fn text<'a>(texts: &'a [Text], what: &str) -> Vec<&'a Text> {
        texts.iter().filter(|t| t.text == what).collect()
    }

    /// Every tooltip of `svg`: its rectangle (x, y, width, height) and its text.
    pub fn tips(svg: &str) -> Vec<([i32; 4], String)> {
        svg.split("<rect")
            .skip(1)
            .filter_map(|r| {
                let (tag, rest) = r.split_once('>')?;
                let title = rest.strip_prefix("<title>")?.split("</title>").next()?;
                let n = |name| attr(tag, name)?.parse::<i32>().ok();
                Some(([n("x")?, n("y")?, n("width")?, n("height")?], unescape(title)))
            })
            .collect()
    }
}
