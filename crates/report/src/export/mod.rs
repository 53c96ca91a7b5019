//! A study's report in each format: the terminal's aligned tables, Markdown, CSV (one row per
//! run), JSON (the aggregated figures) and HTML (one self-contained file with SVG charts).

pub mod csv;
pub mod html;
pub mod json;
pub mod markdown;
pub mod text;

/// The formats `fslab report --format` writes to stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Aligned tables no wider than this many columns where they can be laid out so.
    Text {
        width: usize,
    },
    Markdown,
    Csv,
    Json,
}

/// The report of `data` in `format`.
pub fn render(data: &crate::StudyData, format: Format) -> crate::Result<String> {
    match format {
        Format::Text { width } => Ok(text::report(data, width)),
        Format::Markdown => Ok(markdown::report(data)),
        Format::Csv => csv::report(data),
        Format::Json => Ok(json::report(data)),
    }
}
