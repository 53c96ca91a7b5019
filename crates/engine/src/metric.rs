//! A named figure of a run (dbench's Throughput, sysbench's reads/s, fslab's MiB/s), as a
//! front-end reports it and a report compares it.

use crate::result::RunResult;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Metric {
    /// Unique within a run: `Throughput`, `reads/s`, `ops/s`.
    pub name: String,
    pub value: f64,
    /// As printed: `MB/sec`, `MiB/s`, `ms`.
    pub unit: String,
    /// More is better (throughput); false where less is (latency, CPU).
    pub higher_is_better: bool,
    /// The figure a report leads with; one per run.
    #[serde(default)]
    pub headline: bool,
}

impl Metric {
    /// A figure where more is better.
    pub fn new(name: &str, value: f64, unit: &str) -> Metric {
        Metric {
            name: name.to_string(),
            value,
            unit: unit.to_string(),
            higher_is_better: true,
            headline: false,
        }
    }

    /// The same figure, where less is better.
    pub fn lower_is_better(self) -> Metric {
        Metric {
            higher_is_better: false,
            ..self
        }
    }

    /// The same figure, marked as the one a report leads with.
    pub fn headline(self) -> Metric {
        Metric { headline: true, ..self }
    }
}

impl RunResult {
    /// fslab's own figures of the run, which every front-end's run has: throughput (read and
    /// written MiB/s together), ops/s, read MiB/s and write MiB/s.
    pub fn metrics(&self) -> Vec<Metric> {
        let t = &self.totals;
        vec![
            Metric::new("throughput", t.read_mib_per_sec + t.write_mib_per_sec, "MiB/s"),
            Metric::new("ops/s", t.ops_per_sec, "ops/s"),
            Metric::new("read MiB/s", t.read_mib_per_sec, "MiB/s"),
            Metric::new("write MiB/s", t.write_mib_per_sec, "MiB/s"),
        ]
    }
}
