//! How the record types map to columns and back, for what writes and queries share: the CPU
//! split (in `steps` and `cpu`), durations, JSON documents and statuses.

use crate::error::{Result, StoreError};
use fslab_engine::cpu::CpuUsage;
use rusqlite::types::Value;
use rusqlite::Row;
use std::time::Duration;

/// The CPU split's columns, in the order of [`cpu_values`] and [`cpu_from_row`].
pub(crate) const CPU_COLUMNS: &str = "user_pct, nice_pct, system_pct, iowait_pct, irq_pct, softirq_pct, steal_pct, \
     idle_pct, process_user_s, process_system_s, voluntary_ctx_switches, involuntary_ctx_switches";

/// How many columns [`CPU_COLUMNS`] names.
pub(crate) const CPU_COLUMN_COUNT: usize = 12;

pub(crate) fn cpu_values(cpu: &CpuUsage) -> Result<[Value; CPU_COLUMN_COUNT]> {
    Ok([
        Value::Real(cpu.user),
        Value::Real(cpu.nice),
        Value::Real(cpu.system),
        Value::Real(cpu.iowait),
        Value::Real(cpu.irq),
        Value::Real(cpu.softirq),
        Value::Real(cpu.steal),
        Value::Real(cpu.idle),
        Value::Real(cpu.process_user_secs),
        Value::Real(cpu.process_system_secs),
        Value::Integer(integer(cpu.voluntary_ctx_switches, "voluntary_ctx_switches")?),
        Value::Integer(integer(cpu.involuntary_ctx_switches, "involuntary_ctx_switches")?),
    ])
}

/// The CPU split from the [`CPU_COLUMNS`] that start at column `at` of `row`.
pub(crate) fn cpu_from_row(row: &Row, at: usize) -> rusqlite::Result<CpuUsage> {
    Ok(CpuUsage {
        user: real(row, at)?,
        nice: real(row, at + 1)?,
        system: real(row, at + 2)?,
        iowait: real(row, at + 3)?,
        irq: real(row, at + 4)?,
        softirq: real(row, at + 5)?,
        steal: real(row, at + 6)?,
        idle: real(row, at + 7)?,
        process_user_secs: real(row, at + 8)?,
        process_system_secs: real(row, at + 9)?,
        voluntary_ctx_switches: row.get(at + 10)?,
        involuntary_ctx_switches: row.get(at + 11)?,
    })
}

/// A REAL column; SQLite stores NaN as NULL, so NULL reads back as NaN.
pub(crate) fn real(row: &Row, at: usize) -> rusqlite::Result<f64> {
    Ok(row.get::<_, Option<f64>>(at)?.unwrap_or(f64::NAN))
}

/// A count as SQLite's signed integer; only a count past 2^63 fails.
pub(crate) fn integer(n: u64, what: &'static str) -> Result<i64> {
    i64::try_from(n).map_err(|_| StoreError::TooLarge { what, value: n })
}

/// A stored duration in seconds back to a `Duration`.
pub(crate) fn duration(secs: f64, table: &'static str, column: &'static str) -> Result<Duration> {
    Duration::try_from_secs_f64(secs).map_err(|_| StoreError::BadValue {
        table,
        column,
        value: secs.to_string(),
    })
}

pub(crate) fn to_json<T: serde::Serialize + ?Sized>(value: &T, what: &str) -> Result<String> {
    serde_json::to_string(value).map_err(StoreError::json(what))
}

pub(crate) fn from_json<T: serde::de::DeserializeOwned>(text: &str, what: &str) -> Result<T> {
    serde_json::from_str(text).map_err(StoreError::json(what))
}

/// A status stored as text back to its type, with `parse` being its `from_text`.
pub(crate) fn status<T>(
    text: &str,
    parse: fn(&str) -> Option<T>,
    table: &'static str,
    column: &'static str,
) -> Result<T> {
    parse(text).ok_or_else(|| StoreError::BadValue {
        table,
        column,
        value: text.to_string(),
    })
}
