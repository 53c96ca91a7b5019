//! fslab's reports: the summary table of one run, and everything about a stored study:
//! statistics over its repeats ([`stats`]), tables of configurations side by side ([`table`]),
//! SVG charts ([`chart`]), exports to the terminal, Markdown, CSV, JSON and one self-contained
//! HTML file ([`export`]), and comparisons of two studies or configurations with Welch's t-test
//! ([`compare`]).
//!
//! A report reads a study from the results store once ([`StudyData::load`]); every export draws
//! from the same [`table::Table`]s, so all of them show the same numbers.

pub mod chart;
pub mod compare;
mod error;
pub mod export;
pub mod findings;
pub mod stats;
pub mod study;
pub mod summary;
pub mod table;
pub mod verdict;

pub use error::{ReportError, Result};
pub use export::html;
pub use study::StudyData;
