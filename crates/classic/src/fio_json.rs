//! `--output-format fio-json`: an outcome in fio 3.x's JSON layout (`fio --output-format=json+`),
//! so that fio's own post-processing (`fio_jsonplus_clat2csv`, fio-plot, dashboards that read
//! fio's JSON) reads fslab's runs.
//!
//! A fio job is one of fslab's groups (its threads are fio's `numjobs`, reported together as
//! fio's `group_reporting` does); `groupid` is the engine run (the phase) it belongs to. Reads
//! (read, readall, seqread) are fio's `read`, writes (write, writeall, append, seqwrite,
//! rewrite) its `write`, fsyncs its `sync`. fslab times each operation from its submission to its
//! completion, which is fio's `lat_ns`; with no separate submission time it is also reported as
//! `clat_ns` (with the histogram's `bins` and fio's default percentiles), and `slat_ns` is zero.

use crate::contract::Outcome;
use fslab_engine::result::{OpResult, RunResult};
use fslab_engine::workload::OpKind;
use serde_json::{json, Map, Value};

/// fio's default `percentile_list`.
const PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99,
];

/// The outcome as fio's JSON document.
pub fn document(outcome: &Outcome) -> Value {
    let jobs: Vec<Value> = outcome
        .phases
        .iter()
        .enumerate()
        .flat_map(|(phase, p)| jobs(phase, &p.result))
        .collect();
    let started = outcome
        .phases
        .first()
        .map(|p| p.result.started_at.clone())
        .unwrap_or_default();
    json!({
        "fio version": format!("fslab-{}", outcome.fslab_version),
        "fslab tool": outcome.tool.key(),
        "time": started,
        "global options": {},
        "jobs": jobs,
        "disk_util": [],
    })
}

fn jobs(phase: usize, r: &RunResult) -> Vec<Value> {
    let runtime_ms = (r.duration.as_secs_f64() * 1000.0).round() as u64;
    // One group's figures are the run's own (`groups` lists them only when there are several).
    let groups: Vec<(&str, &[OpResult])> = match r.groups.as_slice() {
        [] => vec![(
            r.workload.groups.first().map_or("fslab", |g| g.name.as_str()),
            r.ops.as_slice(),
        )],
        many => many.iter().map(|g| (g.name.as_str(), g.ops.as_slice())).collect(),
    };
    groups
        .into_iter()
        .map(|(name, ops)| {
            let of = |kinds: &[OpKind]| -> Vec<&OpResult> { ops.iter().filter(|o| kinds.contains(&o.op)).collect() };
            let reads = of(&[OpKind::Read, OpKind::ReadAll, OpKind::SeqRead]);
            let writes = of(&[
                OpKind::Write,
                OpKind::WriteAll,
                OpKind::Append,
                OpKind::SeqWrite,
                OpKind::Rewrite,
            ]);
            let syncs = of(&[OpKind::Fsync]);
            let sync = lat(&syncs, false);
            json!({
                "jobname": name,
                "groupid": phase,
                "error": 0,
                "eta": 0,
                "elapsed": runtime_ms.div_ceil(1000),
                "job options": {},
                "read": direction(&reads, runtime_ms),
                "write": direction(&writes, runtime_ms),
                "trim": direction(&[], runtime_ms),
                "sync": { "total_ios": syncs.iter().map(|o| o.count).sum::<u64>(), "lat_ns": sync },
                "job_runtime": runtime_ms,
            })
        })
        .collect()
}

/// fio's figures for one direction (`read`, `write`, `trim`).
fn direction(ops: &[&OpResult], runtime_ms: u64) -> Value {
    let bytes: u64 = ops.iter().map(|o| o.bytes).sum();
    let ios: u64 = ops.iter().map(|o| o.count).sum();
    let secs = runtime_ms as f64 / 1000.0;
    let (bw_bytes, iops) = if secs > 0.0 {
        ((bytes as f64 / secs) as u64, ios as f64 / secs)
    } else {
        (0, 0.0)
    };
    let zero = json!({ "min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0 });
    json!({
        "io_bytes": bytes,
        "io_kbytes": bytes / 1024,
        "bw_bytes": bw_bytes,
        "bw": bw_bytes / 1024,
        "iops": iops,
        "runtime": if ios > 0 { runtime_ms } else { 0 },
        "total_ios": ios,
        "short_ios": 0,
        "drop_ios": 0,
        "slat_ns": zero,
        "clat_ns": lat(ops, true),
        "lat_ns": lat(ops, false),
    })
}

/// min, max, mean, stddev and N of the operations' latencies in ns, from their histograms;
/// with `detail`, fio's percentiles and (when there are any) the histogram's bins.
fn lat(ops: &[&OpResult], detail: bool) -> Value {
    let mut bins: Vec<(u64, u64)> = ops.iter().flat_map(|o| o.histogram.iter().copied()).collect();
    bins.sort_unstable();
    let mut merged: Vec<(u64, u64)> = Vec::with_capacity(bins.len());
    for (ns, n) in bins {
        match merged.last_mut() {
            Some((last, count)) if *last == ns => *count += n,
            _ => merged.push((ns, n)),
        }
    }
    let n: u64 = merged.iter().map(|(_, c)| c).sum();
    let timed: Vec<&&OpResult> = ops.iter().filter(|o| !o.histogram.is_empty()).collect();
    let (mut min, mut max, mut mean, mut stddev) = (0u64, 0u64, 0.0, 0.0);
    if n > 0 {
        min = timed
            .iter()
            .map(|o| (o.latency.min_us * 1000.0) as u64)
            .min()
            .unwrap_or(0);
        max = timed
            .iter()
            .map(|o| (o.latency.max_us * 1000.0) as u64)
            .max()
            .unwrap_or(0);
        let weight: u64 = timed
            .iter()
            .map(|o| o.histogram.iter().map(|(_, c)| c).sum::<u64>())
            .sum();
        mean = timed
            .iter()
            .map(|o| o.latency.mean_us * 1000.0 * o.histogram.iter().map(|(_, c)| *c).sum::<u64>() as f64)
            .sum::<f64>()
            / weight.max(1) as f64;
        let var = merged
            .iter()
            .map(|(ns, c)| (*ns as f64 - mean).powi(2) * *c as f64)
            .sum::<f64>()
            / n as f64;
        stddev = var.sqrt();
    }
    let mut out = Map::new();
    out.insert("min".into(), min.into());
    out.insert("max".into(), max.into());
    out.insert("mean".into(), mean.into());
    out.insert("stddev".into(), stddev.into());
    out.insert("N".into(), n.into());
    if detail && n > 0 {
        let mut percentile = Map::new();
        for p in PERCENTILES {
            percentile.insert(format!("{p:.6}"), at(&merged, n, p).into());
        }
        out.insert("percentile".into(), Value::Object(percentile));
        let bins: Map<String, Value> = merged.iter().map(|(ns, c)| (ns.to_string(), (*c).into())).collect();
        out.insert("bins".into(), Value::Object(bins));
    }
    Value::Object(out)
}

/// The bucket bound at or below which `p` percent of the `n` latencies lie.
fn at(merged: &[(u64, u64)], n: u64, p: f64) -> u64 {
    let want = ((p / 100.0) * n as f64).ceil().max(1.0) as u64;
    let mut seen = 0;
    for (ns, c) in merged {
        seen += c;
        if seen >= want {
            return *ns;
        }
    }
    merged.last().map_or(0, |(ns, _)| *ns)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_come_from_the_merged_buckets() {
        let merged = [(1000, 90), (2000, 9), (50_000, 1)];
        assert_eq!(at(&merged, 100, 50.0), 1000);
        assert_eq!(at(&merged, 100, 90.0), 1000);
        assert_eq!(at(&merged, 100, 95.0), 2000);
        assert_eq!(at(&merged, 100, 99.0), 2000);
        assert_eq!(at(&merged, 100, 99.5), 50_000);
        assert_eq!(at(&merged, 100, 99.99), 50_000);
    }
}
