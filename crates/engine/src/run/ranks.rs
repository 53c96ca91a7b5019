//! The results of the ranks of one job (processes started together by `mpirun`, or threads in
//! tests), merged into one: counts and bytes summed, latency histograms added bucket by bucket
//! (as the threads of one run are merged, `merge.rs`), the per-second series summed second by
//! second from the common start, each thread kept under a number of its own.

use super::merge::OpMerge;
use crate::histogram::{Latency, OpStats};
use crate::result::{
    CallResult, FirstError, GroupResult, OpResult, RunResult, Second, SetupReport, Status, StepResult, StopReason, MIB,
};
use std::time::Duration;

/// One result for the whole job from each rank's, in rank order (rank 0 first). The job's
/// measured time is the longest rank's: the ranks start together, so its rates are the job's.
/// What is the machine's (system, CPU split) is rank 0's; the caller keeps each host's.
///
/// Panics when `results` is empty.
pub fn merge_ranks(results: &[RunResult]) -> RunResult {
    let first = results.first().expect("a job has at least one rank");
    if results.len() == 1 {
        return first.clone();
    }
    let duration = results.iter().map(|r| r.duration).max().unwrap_or_default();
    let secs = duration.as_secs_f64().max(1e-9);

    let ops = merge_ops(results.iter().map(|r| r.ops.as_slice()), secs);
    let groups = first
        .groups
        .iter()
        .map(|g| GroupResult {
            name: g.name.clone(),
            ops: merge_ops(
                results
                    .iter()
                    .filter_map(|r| r.groups.iter().find(|o| o.name == g.name))
                    .map(|o| o.ops.as_slice()),
                secs,
            ),
        })
        .collect();
    let steps = merge_steps(results, secs);
    let calls = merge_calls(results);

    let mut totals = first.totals.clone();
    totals.ops = results.iter().map(|r| r.totals.ops).sum();
    totals.errors = results.iter().map(|r| r.totals.errors).sum();
    totals.skipped = results.iter().map(|r| r.totals.skipped).sum();
    totals.transactions = results.iter().map(|r| r.totals.transactions).sum();
    totals.bytes_read = results.iter().map(|r| r.totals.bytes_read).sum();
    totals.bytes_written = results.iter().map(|r| r.totals.bytes_written).sum();
    totals.ops_per_sec = totals.ops as f64 / secs;
    totals.transactions_per_sec = totals.transactions as f64 / secs;
    totals.read_mib_per_sec = totals.bytes_read as f64 / MIB / secs;
    totals.write_mib_per_sec = totals.bytes_written as f64 / MIB / secs;

    // Each thread numbered after the same group's threads of the ranks before it.
    let mut threads = Vec::new();
    let mut seen: Vec<(String, u32)> = Vec::new();
    for r in results {
        let mut mine: Vec<(String, u32)> = Vec::new();
        for t in &r.threads {
            let base = seen.iter().find(|s| s.0 == t.group).map_or(0, |s| s.1);
            let mut t = t.clone();
            t.thread += base;
            match mine.iter_mut().find(|m| m.0 == t.group) {
                Some(m) => m.1 += 1,
                None => mine.push((t.group.clone(), 1)),
            }
            threads.push(t);
        }
        for (g, n) in mine {
            match seen.iter_mut().find(|s| s.0 == g) {
                Some(s) => s.1 += n,
                None => seen.push((g, n)),
            }
        }
    }

    let failed = results.iter().any(|r| r.status == Status::Failed);
    let stopped_by = if failed {
        StopReason::Error
    } else if results.iter().any(|r| r.stopped_by == StopReason::Stonewall) {
        StopReason::Stonewall
    } else {
        first.stopped_by
    };
    // The first rank's first error; after it, every other thread's, rank by rank.
    let mut errors = (results.iter().filter_map(|r| r.first_error.as_ref()))
        .flat_map(|e| std::iter::once(&e.error).chain(&e.others))
        .cloned();
    let first_error = errors.next().map(|error| FirstError {
        error,
        total_errors: totals.errors.max(1),
        others: errors.collect(),
    });

    RunResult {
        status: if failed { Status::Failed } else { Status::Ok },
        stopped_by,
        first_error,
        setup: merge_setup(results),
        duration,
        final_sync: results.iter().filter_map(|r| r.final_sync).max(),
        totals,
        ops,
        groups,
        steps,
        calls,
        threads,
        series: merge_series(results),
        ..first.clone()
    }
}

/// Operation results merged by (type, label), in the engine's order, histograms added.
fn merge_ops<'a>(ranks: impl Iterator<Item = &'a [OpResult]> + Clone, secs: f64) -> Vec<OpResult> {
    let mut merged = OpMerge::default();
    for ops in ranks.clone() {
        for o in ops {
            merged.add(
                o.op,
                o.label.as_deref(),
                &stats(o.count, o.errors, o.skipped, 0, o.bytes, o.transactions, &o.histogram),
            );
        }
    }
    let mut out = merged.results(secs);
    for m in &mut out {
        let parts = ranks
            .clone()
            .flat_map(|ops| ops.iter().filter(|o| o.op == m.op && o.label == m.label))
            .map(|o| (o.latency, timed(&o.histogram)));
        m.latency = exact_extremes(m.latency, parts);
    }
    out
}

/// Script steps merged by label, in the first rank's order then any new ones.
fn merge_steps(results: &[RunResult], secs: f64) -> Vec<StepResult> {
    let mut names: Vec<&str> = Vec::new();
    for s in results.iter().flat_map(|r| &r.steps) {
        if !names.contains(&s.name.as_str()) {
            names.push(&s.name);
        }
    }
    names
        .into_iter()
        .map(|name| {
            let parts: Vec<&StepResult> = results
                .iter()
                .flat_map(|r| r.steps.iter().filter(|s| s.name == name))
                .collect();
            let mut st = OpStats::default();
            for p in &parts {
                st.merge(&stats(p.count, p.errors, 0, p.mismatches, p.bytes, 0, &p.histogram));
            }
            StepResult {
                name: name.to_string(),
                count: st.count,
                mismatches: st.mismatches,
                errors: st.errors,
                bytes: st.bytes,
                ops_per_sec: st.count as f64 / secs,
                latency: exact_extremes(st.latency(), parts.iter().map(|p| (p.latency, timed(&p.histogram)))),
                histogram: st.buckets(),
            }
        })
        .collect()
}

/// Timed system calls merged by group and kind, in the first rank's order then any new ones.
fn merge_calls(results: &[RunResult]) -> Vec<CallResult> {
    let mut merged: Vec<CallResult> = Vec::new();
    for c in results.iter().flat_map(|r| &r.calls) {
        if merged.iter().any(|m| m.group == c.group && m.call == c.call) {
            continue;
        }
        let parts: Vec<&CallResult> = results
            .iter()
            .flat_map(|r| r.calls.iter().filter(|o| o.group == c.group && o.call == c.call))
            .collect();
        let mut st = OpStats::default();
        for p in &parts {
            st.merge(&stats(p.count, 0, 0, 0, 0, 0, &p.histogram_ns));
        }
        merged.push(CallResult {
            group: c.group.clone(),
            call: c.call,
            count: st.count,
            latency: exact_extremes(st.latency(), parts.iter().map(|p| (p.latency, p.count))),
            histogram_ns: st.buckets(),
        });
    }
    merged
}

fn stats(
    count: u64,
    errors: u64,
    skipped: u64,
    mismatches: u64,
    bytes: u64,
    transactions: u64,
    buckets: &[(u64, u64)],
) -> OpStats {
    let mut s = OpStats::from_buckets(buckets);
    s.count = count;
    s.errors = errors;
    s.skipped = skipped;
    s.mismatches = mismatches;
    s.bytes = bytes;
    s.transactions = transactions;
    s
}

fn timed(buckets: &[(u64, u64)]) -> u64 {
    buckets.iter().map(|b| b.1).sum()
}

/// The percentiles come from the merged buckets; the minimum, maximum and mean, which each rank
/// knows exactly, are taken exactly from theirs rather than from the buckets.
fn exact_extremes(mut merged: Latency, parts: impl Iterator<Item = (Latency, u64)>) -> Latency {
    let parts: Vec<(Latency, u64)> = parts.filter(|p| p.1 > 0).collect();
    let n: u64 = parts.iter().map(|p| p.1).sum();
    if n == 0 {
        return merged;
    }
    merged.min_us = parts.iter().map(|p| p.0.min_us).fold(f64::INFINITY, f64::min);
    merged.max_us = parts.iter().map(|p| p.0.max_us).fold(0.0, f64::max);
    merged.mean_us = parts.iter().map(|p| p.0.mean_us * p.1 as f64).sum::<f64>() / n as f64;
    merged
}

/// Each fileset's files and bytes over every rank; its setup took as long as the slowest rank's.
fn merge_setup(results: &[RunResult]) -> Vec<SetupReport> {
    results[0]
        .setup
        .iter()
        .map(|s| {
            let parts: Vec<&SetupReport> = results
                .iter()
                .filter_map(|r| r.setup.iter().find(|o| o.fileset == s.fileset))
                .collect();
            SetupReport {
                fileset: s.fileset.clone(),
                files: parts.iter().map(|p| p.files).sum(),
                bytes: parts.iter().map(|p| p.bytes).sum(),
                reused: parts.iter().all(|p| p.reused),
                duration: parts.iter().map(|p| p.duration).max().unwrap_or(Duration::ZERO),
                dirs_added: parts.iter().map(|p| p.dirs_added).sum(),
            }
        })
        .collect()
}

/// Second `i` of the job is second `i` of every rank (they started together) summed; a
/// second's latency figures are its ranks' highest (bounds: the per-second buckets are not
/// kept), its mean exact.
fn merge_series(results: &[RunResult]) -> Vec<Second> {
    let len = results.iter().map(|r| r.series.len()).max().unwrap_or(0);
    (0..len)
        .map(|i| {
            let parts: Vec<&Second> = results.iter().filter_map(|r| r.series.get(i)).collect();
            let mut sec = parts[0].clone();
            for p in &parts[1..] {
                sec.t = sec.t.max(p.t);
                sec.ramp |= p.ramp;
                sec.ops += p.ops;
                sec.sleeps += p.sleeps;
                sec.bytes_read += p.bytes_read;
                sec.bytes_written += p.bytes_written;
                for (kind, n) in &p.by_op {
                    match sec.by_op.iter_mut().find(|b| b.0 == *kind) {
                        Some(b) => b.1 += n,
                        None => sec.by_op.push((*kind, *n)),
                    }
                }
                sec.by_op.sort_by_key(|b| b.0.index());
                sec.max_latency_us = match (sec.max_latency_us, p.max_latency_us) {
                    (Some(a), Some(b)) => Some(a.max(b)),
                    (a, b) => a.or(b),
                };
                sec.latency = match (sec.latency, p.latency) {
                    (Some(mut a), Some(b)) => {
                        let n = (a.ops + b.ops).max(1) as f64;
                        a.mean_us = (a.mean_us * a.ops as f64 + b.mean_us * b.ops as f64) / n;
                        a.ops += b.ops;
                        a.p50_us = a.p50_us.max(b.p50_us);
                        a.p90_us = a.p90_us.max(b.p90_us);
                        a.p95_us = a.p95_us.max(b.p95_us);
                        a.p99_us = a.p99_us.max(b.p99_us);
                        a.max_us = a.max_us.max(b.max_us);
                        Some(a)
                    }
                    (a, b) => a.or(b),
                };
            }
            sec
        })
        .collect()
}
