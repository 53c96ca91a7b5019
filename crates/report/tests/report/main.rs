//! The report's integration tests, one binary: statistics, tables, exports and comparisons of
//! studies stored through the store's API (testkit's `studies`), and the HTML report in a real
//! browser (the system tier: it needs Chromium).

mod chromium;
mod compare;
mod exports;
mod phases;
mod stats;
