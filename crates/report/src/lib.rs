//! fslab's reports. For now: the summary table of one run; statistics over repeats, comparisons,
//! charts and exports come with the results store.

pub mod summary;
