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
    Text,
    Markdown,
    Csv,
    Json,
}

/// The report of `data` in `format`.
pub fn render(data: &crate::StudyData, format: Format) -> crate::Result<String> {
    match format {
        Format::Text => Ok(text::report(data)),
        Format::Markdown => Ok(markdown::report(data)),
        Format::Csv => csv::report(data),
        Format::Json => Ok(json::report(data)),
    }
}
