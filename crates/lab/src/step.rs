//! A step of a cell's life (wipe, mkfs, mount, fill, fsck...), timed with the system's CPU split
//! over its duration, as the store keeps it.

use fslab_engine::cpu::{CpuSnapshot, CpuUsage};
pub use fslab_store::StepRecord;
use std::time::Instant;

/// Runs `f` as the step `name`; the record says how long it took and whether it succeeded.
/// `detail` turns the step's value into its record's detail; a failure's detail is its error.
pub fn timed<T, E: std::fmt::Display>(
    name: &str,
    f: impl FnOnce() -> Result<T, E>,
    detail: impl FnOnce(&T) -> String,
) -> (StepRecord, Result<T, E>) {
    let cpu0 = CpuSnapshot::take(true);
    let t0 = Instant::now();
    let r = f();
    let duration = t0.elapsed();
    let cpu = CpuUsage::between(&cpu0, &CpuSnapshot::take(true));
    let (ok, detail) = match &r {
        Ok(v) => (true, detail(v)),
        Err(e) => (false, e.to_string()),
    };
    let rec = StepRecord {
        name: name.to_string(),
        repeat: None,
        duration,
        cpu,
        ok,
        detail,
    };
    (rec, r)
}

/// A step's report (the fill's, the ageing's) as its record's detail: one line of JSON, for
/// whatever reads the store.
pub fn report_json<T: serde::Serialize>(report: &T) -> String {
    serde_json::to_string(report).unwrap_or_default()
}
