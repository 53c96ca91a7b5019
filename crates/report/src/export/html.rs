//! The HTML report: one self-contained file (inline CSS and SVG, nothing fetched from the
//! network) with the test bed, the study as written, one section per workload with its tables
//! and charts, the lab's own steps, then the failures with their reasons.
//!
//! A short inline script checks, once the page is laid out, that every chart has a size on
//! screen, and says so on the console (`console.error`) when one has not; the report's test
//! renders the page in headless Chromium and reads both the console and the DOM it leaves.

use crate::chart::{self, latency, series, Svg};
use crate::error::{ReportError, Result};
use crate::findings;
use crate::study::{Cell, StudyData};
use crate::table::{self, Table, TableCell};
use crate::verdict;
use fslab_store::{Store, StudyId, StudyRow};
use std::collections::HashSet;
use std::fmt::Write;
use std::path::Path;

/// Reads study `study` from `store` and writes its HTML report to `path`.
pub fn write_study(store: &Store, study: StudyId, path: &Path) -> Result<()> {
    let data = StudyData::load_key(store, &study.to_string())?;
    let html = page(&data)?;
    std::fs::write(path, html).map_err(|source| ReportError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// The report's usual file name: `<name>-<id>.html`, the name with anything but letters,
/// digits, `-`, `_` and `.` turned into `-`.
pub fn file_name(study: &StudyRow) -> String {
    let name: String = study
        .name
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '-'
            }
        })
        .collect();
    format!("{}-{}.html", name.trim_matches('-'), study.id)
}

/// The whole page.
pub fn page(data: &StudyData) -> Result<String> {
    let mut p = Page::default();
    p.head(data);
    p.findings(data);
    for w in 0..data.workloads.len() {
        p.workload(data, w)?;
    }
    p.steps(data)?;
    p.failures(data);
    p.testbed(data);
    p.study_file(data);
    p.tail(data);
    Ok(p.out)
}

/// The page as it is written, with a count of its charts for their ids.
#[derive(Default)]
struct Page {
    out: String,
    charts: usize,
}

const STYLE: &str = r#"
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0; color: #222; background: #fafafa; }
main { max-width: 1180px; margin: 0 auto; padding: 1rem 1.5rem 3rem; background: #fff; }
h1 { margin-bottom: 0.2rem; }
h2 { border-bottom: 2px solid #0072b2; padding-bottom: 0.2rem; margin-top: 2.5rem; }
h3 { margin: 1.6rem 0 0.4rem; font-size: 1.05rem; }
nav ul { display: flex; flex-wrap: wrap; gap: 0.4rem 1.2rem; list-style: none; padding: 0; }
.overview, .legend { color: #555; }
.legend { font-size: 0.85rem; margin: 0.3rem 0; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-size: 0.9rem; }
th, td { border: 1px solid #ddd; padding: 0.3rem 0.6rem; vertical-align: top; }
th { background: #f0f4f8; text-align: left; }
table.figures td { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
table.figures td.row { text-align: left; font-weight: 600; }
td .rel { display: block; font-size: 0.78rem; color: #666; }
td.best { background: #e8f5e9; }
p.warning { background: #fff4e5; border-left: 4px solid #c77700; padding: 0.5rem 0.8rem; }
ul.findings { margin: 0.2rem 0 0.8rem; }
.direction { font-weight: normal; color: #555; font-size: 0.9rem; }
table.figures td.missing { background: #fdecea; color: #a4161a; font-weight: 600; text-align: center; }
td.warn::after { content: " !"; color: #c77700; font-weight: 700; }
ul.notes { font-size: 0.85rem; color: #7a4b00; margin: 0.3rem 0 0; }
pre { background: #f6f8fa; padding: 0.8rem; overflow-x: auto; font-size: 0.85rem; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(520px, 1fr)); gap: 1rem; margin-top: 1rem; }
figure.chart { margin: 0; border: 1px solid #e4e4e4; padding: 0.3rem; background: #fff; }
figure.chart svg { width: 100%; height: auto; display: block; }
figure.chart.wide { grid-column: 1 / -1; }
figcaption { font-size: 0.8rem; color: #555; padding: 0.2rem 0.4rem; }
details { margin-top: 1rem; }
summary { cursor: pointer; font-weight: 600; }
.failures li { margin-bottom: 0.3rem; }
footer { margin-top: 3rem; font-size: 0.8rem; color: #777; }
"#;

const BARS_CAPTION: &str = "the mean on each bar, its 95% confidence interval as an error bar; \
                            point at a bar for its runs and verdict";
const CPU_CAPTION: &str = "mean CPU split over the measured time";

/// Checks every chart has a size on screen once the page is laid out; tells the console when
/// one has not, and leaves the counts on <body> for a test to read. Folded sections are opened
/// while it measures (and closed again before anything is painted), so their charts count too.
const CHART_CHECK: &str = r#"
(function () {
  var folded = Array.prototype.filter.call(document.querySelectorAll("details"), function (d) { return !d.open; });
  folded.forEach(function (d) { d.open = true; });
  var figures = document.querySelectorAll("figure.chart");
  var drawn = 0;
  figures.forEach(function (f) {
    var svg = f.querySelector("svg");
    var box = svg ? svg.getBoundingClientRect() : null;
    if (box && box.width > 0 && box.height > 0 && svg.querySelector("rect, path, polyline, circle")) {
      drawn += 1;
      f.setAttribute("data-drawn", "yes");
    } else {
      console.error("fslab report: chart " + f.id + " was not drawn");
    }
  });
  folded.forEach(function (d) { d.open = false; });
  document.body.setAttribute("data-charts", String(figures.length));
  document.body.setAttribute("data-charts-drawn", String(drawn));
})();
"#;

/// Text made safe for HTML: the same five characters as in the charts' SVG.
pub fn escape(s: &str) -> String {
    crate::chart::xml_escape(s)
}

impl Page {
    fn head(&mut self, data: &StudyData) {
        let name = escape(&data.study.name);
        let _ = write!(
            self.out,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <title>fslab: {name}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>\n\
             <header><h1>{name}</h1><p class=\"overview\">{}</p></header>\n<nav><ul>\
             <li><a href=\"#findings\">What it found</a></li>",
            escape(&data.overview())
        );
        for (w, workload) in data.workloads.iter().enumerate() {
            let _ = write!(self.out, "<li><a href=\"#w{w}\">{}</a></li>", escape(&workload.name));
        }
        self.out.push_str(
            "<li><a href=\"#steps\">The lab's steps</a></li><li><a href=\"#failures\">Failures</a></li>\
             <li><a href=\"#testbed\">Test bed</a></li><li><a href=\"#study\">The study</a></li></ul></nav>\n",
        );
    }

    /// The answer first: what each workload's headline figure says, row by row.
    fn findings(&mut self, data: &StudyData) {
        let f = findings::of(data);
        self.out
            .push_str("<section id=\"findings\"><h2>What the study found</h2>\n");
        for w in &f.warnings {
            let _ = writeln!(self.out, "<p class=\"warning\">{}</p>", escape(w));
        }
        for figure in &f.figures {
            let direction = if figure.higher_is_better { "higher" } else { "lower" };
            let _ = writeln!(
                self.out,
                "<h3>{} <span class=\"direction\">({direction} is better)</span></h3>\n<ul class=\"findings\">",
                escape(&figure.title)
            );
            for r in &figure.rows {
                let _ = writeln!(self.out, "<li><b>{}</b>: {}</li>", escape(&r.row), escape(&r.text));
            }
            self.out.push_str("</ul>\n");
        }
        let _ = writeln!(
            self.out,
            "<p class=\"legend\">{}</p>\n</section>",
            escape(&verdict::footnote(verdict::MIN_EFFECT_PCT))
        );
    }

    /// The machine, folded: a reader looks it up once the results are read.
    fn testbed(&mut self, data: &StudyData) {
        self.out.push_str(
            "<section id=\"testbed\"><h2>Test bed</h2>\n<details><summary>CPU, memory, kernel, devices, tools</summary>\n\
             <div class=\"scroll\"><table>\n",
        );
        for (k, v) in data.testbed_lines() {
            let _ = writeln!(self.out, "<tr><th>{}</th><td>{}</td></tr>", escape(&k), escape(&v));
        }
        self.out.push_str("</table></div></details></section>\n");
    }

    /// The configurations, then the study file as written, folded.
    fn study_file(&mut self, data: &StudyData) {
        self.out
            .push_str("<section id=\"study\"><h2>The study</h2>\n<h3>Configurations</h3>\n");
        self.grid(&table::configuration_rows(data));
        let _ = write!(
            self.out,
            "<details><summary>The study as written: {}</summary>\n<pre>{}</pre></details>\n</section>\n",
            escape(&data.study.file),
            escape(&data.study.text)
        );
    }

    /// A plain table of text, the first row its header.
    fn grid(&mut self, rows: &[Vec<String>]) {
        self.out.push_str("<div class=\"scroll\"><table>\n");
        for (i, r) in rows.iter().enumerate() {
            let tag = if i == 0 { "th" } else { "td" };
            self.out.push_str("<tr>");
            for c in r {
                let _ = write!(self.out, "<{tag}>{}</{tag}>", escape(c));
            }
            self.out.push_str("</tr>\n");
        }
        self.out.push_str("</table></div>\n");
    }

    fn workload(&mut self, data: &StudyData, w: usize) -> Result<()> {
        let _ = writeln!(
            self.out,
            "<section id=\"w{w}\"><h2>{}</h2>",
            escape(&table::workload_title(data, w))
        );
        let tables = table::workload_tables(data, w);
        let mut seen = HashSet::new();
        for t in tables.iter().filter(|t| t.primary) {
            self.table(t, &mut seen);
        }
        self.out.push_str("<div class=\"charts\">\n");
        if let Some(headline) = tables.first().filter(|t| t.parts.is_empty()) {
            self.chart("bars", BARS_CAPTION, chart::bars::chart(headline)?);
            let lines = chart::lines::chart(headline, &data.workloads[w])?;
            let caption = "95% confidence intervals as vertical bars; point at a dot for its value, runs and verdict";
            self.chart("lines", caption, lines);
        }
        // The whole run's split, and a sub-test's when the runs have several (IOzone).
        for cpu in tables.iter().filter(|t| t.primary && !t.parts.is_empty()) {
            self.chart("cpu", CPU_CAPTION, chart::cpu::chart(cpu)?);
        }
        for r in 0..data.workloads[w].rows.len() {
            self.row_charts(data, w, r)?;
        }
        self.out.push_str("</div>\n");
        let others: Vec<&Table> = tables.iter().filter(|t| !t.primary).collect();
        if !others.is_empty() {
            // Each with its chart: a seed may draw any of them (FFSB's write MB/sec, each
            // IOzone sub-test's figure and CPU split).
            self.out.push_str("<details><summary>Every other figure</summary>\n");
            for t in others {
                self.table(t, &mut seen);
                self.out.push_str("<div class=\"charts\">\n");
                if t.parts.is_empty() {
                    self.chart("bars", BARS_CAPTION, chart::bars::chart(t)?);
                } else {
                    self.chart("cpu", CPU_CAPTION, chart::cpu::chart(t)?);
                }
                self.out.push_str("</div>\n");
            }
            self.out.push_str("</details>\n");
        }
        self.out.push_str("</section>\n");
        Ok(())
    }

    /// The per-second series and the latency per operation of one row's cells.
    fn row_charts(&mut self, data: &StudyData, w: usize, r: usize) -> Result<()> {
        let cells: Vec<&Cell> = data
            .cells
            .iter()
            .filter(|c| c.workload == w && c.row_index == r && c.missing().is_none())
            .collect();
        let workload = &data.workloads[w];
        let what = if workload.axes.is_empty() {
            workload.name.clone()
        } else {
            format!("{} {}", workload.name, workload.rows[r].label)
        };
        let label = |c: &Cell| data.configurations[c.configuration].label.clone();
        let lines: Vec<series::Line> = cells
            .iter()
            .map(|c| series::Line {
                label: label(c),
                colour: c.configuration,
                points: &c.series,
                // Seconds since the threads started: the ramp, then the time after it.
                levelled_at: c
                    .steady
                    .first()
                    .copied()
                    .flatten()
                    .map(|at| at + c.series.iter().filter(|p| p.ramp).map(|p| p.t).fold(0.0, f64::max)),
            })
            .collect();
        let title = format!("{what}: second by second (first run)");
        self.chart("series", "each second's throughput", series::chart(&title, &lines)?);
        let bars: Vec<latency::Bars> = cells
            .iter()
            .map(|c| latency::Bars {
                label: label(c),
                colour: c.configuration,
                ops: &c.latency,
            })
            .collect();
        let title = format!("{what}: latency per operation");
        let caption = "bar: 99th percentile; whisker: median to 99.9th percentile; pooled over the runs; \
                       point at a bar for every percentile";
        self.chart("latency", caption, latency::chart(&title, &bars)?);
        Ok(())
    }

    /// A chart in its figure, when there is one; a wide one takes a whole row of the grid.
    fn chart(&mut self, kind: &str, caption: &str, svg: Option<Svg>) {
        let Some(svg) = svg else {
            return;
        };
        self.charts += 1;
        let wide = if svg.width > chart::WIDTH { " wide" } else { "" };
        let _ = writeln!(
            self.out,
            "<figure class=\"chart{wide}\" id=\"chart{}\" data-chart=\"{kind}\" data-title=\"{}\">\n{}\n<figcaption>{}</figcaption></figure>",
            self.charts,
            escape(&svg.title),
            svg.text,
            escape(caption)
        );
    }

    /// A table with its legend and the notes not `seen` yet in this section.
    fn table(&mut self, t: &Table, seen: &mut HashSet<String>) {
        let _ = write!(
            self.out,
            "<h3>{}</h3>\n<div class=\"scroll\"><table class=\"figures\"><thead><tr><th>{}</th>",
            escape(&t.figure),
            escape(&t.corner)
        );
        for c in &t.columns {
            let _ = write!(self.out, "<th>{}</th>", escape(c));
        }
        self.out.push_str("</tr></thead><tbody>\n");
        for row in &t.rows {
            let _ = write!(self.out, "<tr><td class=\"row\">{}</td>", escape(&row.label));
            for cell in &row.cells {
                self.out.push_str(&cell_html(cell, &t.unit));
            }
            self.out.push_str("</tr>\n");
        }
        let _ = writeln!(
            self.out,
            "</tbody></table></div>\n<p class=\"legend\">{}</p>",
            escape(&table::legend(t))
        );
        let notes = table::new_notes(t, seen);
        if !notes.is_empty() {
            self.out.push_str("<ul class=\"notes\">");
            for n in notes {
                let _ = write!(self.out, "<li>{}</li>", escape(n));
            }
            self.out.push_str("</ul>\n");
        }
    }

    fn steps(&mut self, data: &StudyData) -> Result<()> {
        self.out.push_str("<section id=\"steps\"><h2>The lab's steps</h2>\n");
        let tables = table::steps_tables(data);
        if tables.is_empty() {
            self.out.push_str("<p>No step was recorded.</p>\n");
        }
        let mut seen = HashSet::new();
        for t in &tables {
            self.table(t, &mut seen);
        }
        self.out.push_str("<div class=\"charts\">\n");
        if let Some(time) = table::steps_seconds(data) {
            let caption = "mean duration of each step; point at a bar for its runs and verdict";
            self.chart("bars", caption, chart::bars::chart(&time)?);
        }
        if let Some(split) = tables.get(1) {
            let caption = "each step's time, split by what the CPU was doing meanwhile";
            self.chart("cpu", caption, chart::cpu::chart(split)?);
        }
        self.out.push_str("</div></section>\n");
        Ok(())
    }

    fn failures(&mut self, data: &StudyData) {
        self.out.push_str("<section id=\"failures\"><h2>Failures</h2>\n");
        let failures = data.failures_grouped();
        if failures.is_empty() {
            self.out
                .push_str("<p>None: every cell ran and every run ended well.</p>\n");
        } else {
            self.out.push_str("<ul class=\"failures\">\n");
            for f in failures {
                let _ = writeln!(
                    self.out,
                    "<li><strong>{}</strong>: {}: {}</li>",
                    escape(&f.cell),
                    escape(&f.what),
                    escape(&f.reason)
                );
            }
            self.out.push_str("</ul>\n");
        }
        self.out.push_str("</section>\n");
    }

    fn tail(&mut self, data: &StudyData) {
        let _ = write!(
            self.out,
            "<footer>fslab {} report of study {} ({} charts).</footer>\n</main>\n<script>{CHART_CHECK}</script>\n</body>\n</html>\n",
            env!("CARGO_PKG_VERSION"),
            data.study.id,
            self.charts
        );
    }
}

/// A table cell: the mean ± CI over its relative standing; a missing cell's status with its
/// reason on hover.
fn cell_html(cell: &TableCell, unit: &str) -> String {
    match cell {
        TableCell::Value {
            summary,
            standing,
            warnings,
        } => {
            let rel = table::runs_and_standing(summary, standing.as_ref());
            let mut class = Vec::new();
            // The best and the entries that cannot be told from it share its shading.
            if standing.is_some_and(|s| s.leads()) {
                class.push("best");
            }
            if !warnings.is_empty() {
                class.push("warn");
            }
            format!(
                "<td class=\"{}\" title=\"{}\">{}<span class=\"rel\">{}</span></td>",
                class.join(" "),
                escape(&warnings.join("; ")),
                escape(&table::mean_and_ci(summary)),
                escape(&rel)
            )
        }
        TableCell::Missing { status, reason } => format!(
            "<td class=\"missing\" title=\"{}\">{}</td>",
            escape(reason),
            escape(status)
        ),
        other => format!("<td>{}</td>", escape(&table::cell_text(other, unit))),
    }
}
