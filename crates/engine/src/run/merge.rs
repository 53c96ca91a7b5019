//! After the threads have ended: their statistics merged per operation type and label (per
//! group too when there are several) and per script label, each thread's own figures, the
//! totals and their rates, the run's first error and what ended it.

use super::spawn::Ran;
use crate::calls::{Call, CallTimes};
use crate::histogram::OpStats;
use crate::result::{CallResult, FirstError, GroupResult, OpResult, StepResult, StopReason, ThreadResult, Totals, MIB};
use crate::worker::ThreadOutcome;
use crate::workload::{OpKind, Stop, Workload};
use std::time::Instant;

/// The result's figures, merged from every thread's statistics.
pub(super) struct Merged {
    pub totals: Totals,
    pub ops: Vec<OpResult>,
    pub groups: Vec<GroupResult>,
    pub steps: Vec<StepResult>,
    pub calls: Vec<CallResult>,
    pub threads: Vec<ThreadResult>,
}

/// Merges what the threads measured over the `secs` seconds from `measure_start`.
pub(super) fn merge(
    workload: &Workload,
    outcomes: &[(usize, u32, ThreadOutcome)],
    measure_start: Instant,
    secs: f64,
) -> Merged {
    // Merge per operation type and label (per group too when there are several); script steps
    // per label.
    let mut merged = OpMerge::default();
    let several = workload.groups.len() > 1;
    let mut per_group: Vec<OpMerge> = workload.groups.iter().map(|_| OpMerge::default()).collect();
    let mut labels: Vec<(String, OpStats)> = Vec::new();
    let mut calls: Vec<Option<CallTimes>> = workload.groups.iter().map(|_| None).collect();
    let mut threads = Vec::new();
    for (gi, t, o) in outcomes {
        let g = &workload.groups[*gi];
        if let Some(theirs) = &o.calls {
            calls[*gi].get_or_insert_with(CallTimes::default).merge(theirs);
        }
        let mut mine = OpStats::default();
        let mut add = |op: OpKind, label: Option<&str>, st: &OpStats| {
            merged.add(op, label, st);
            if several {
                per_group[*gi].add(op, label, st);
            }
            mine.merge(st);
        };
        for (spec, st) in g.ops.iter().zip(&o.stats) {
            add(spec.op, spec.label.as_deref(), st);
        }
        if o.fsyncs.count + o.fsyncs.errors > 0 {
            add(OpKind::Fsync, None, &o.fsyncs);
        }
        if let Some(script) = &g.script {
            for (name, st) in script.labels.iter().zip(&o.steps) {
                match labels.iter_mut().find(|l| &l.0 == name) {
                    Some(l) => l.1.merge(st),
                    None => labels.push((name.clone(), st.clone())),
                }
                mine.merge(st);
            }
        }
        threads.push(ThreadResult {
            group: g.name.clone(),
            thread: *t,
            ops: mine.count,
            bytes: mine.bytes,
            secs: o
                .counted_end
                .unwrap_or(o.ended)
                .saturating_duration_since(o.started.map_or(measure_start, |s| s.max(measure_start)))
                .as_secs_f64(),
            finished: o.finished,
            process_cpu_secs: o.process_cpu.map(|d| d.as_secs_f64()),
        });
    }
    let mut totals = Totals::default();
    for (kind, _, st) in &merged.0 {
        add_totals(&mut totals, st, kind.writes());
    }
    let ops = merged.results(secs);
    let groups = if several {
        workload
            .groups
            .iter()
            .zip(per_group)
            .map(|(g, m)| GroupResult {
                name: g.name.clone(),
                ops: m.results(secs),
            })
            .collect()
    } else {
        Vec::new()
    };
    let mut steps = Vec::new();
    for (name, st) in &labels {
        // A script's bytes are what its reads and writes moved.
        let writes = workload
            .groups
            .iter()
            .filter_map(|g| g.script.as_ref())
            .flat_map(|s| s.steps.iter().filter(|st| s.labels[st.label as usize] == *name))
            .any(|st| st.call.kind() == Some(OpKind::Write));
        add_totals(&mut totals, st, writes);
        steps.push(StepResult {
            name: name.clone(),
            count: st.count,
            mismatches: st.mismatches,
            errors: st.errors,
            bytes: st.bytes,
            ops_per_sec: st.count as f64 / secs,
            latency: st.latency(),
            histogram: st.buckets(),
        });
    }
    totals.ops_per_sec = totals.ops as f64 / secs;
    totals.transactions_per_sec = totals.transactions as f64 / secs;
    totals.read_mib_per_sec = totals.bytes_read as f64 / MIB / secs;
    totals.write_mib_per_sec = totals.bytes_written as f64 / MIB / secs;

    let calls = workload
        .groups
        .iter()
        .zip(calls)
        .filter_map(|(g, times)| Some((g, times?)))
        .flat_map(|(g, times)| {
            Call::ALL.into_iter().filter_map(move |call| {
                let c = times.get(call);
                (c.count() > 0).then(|| CallResult {
                    group: g.name.clone(),
                    call,
                    count: c.count(),
                    latency: c.latency(),
                    histogram_ns: c.stats.buckets(),
                })
            })
        })
        .collect();
    Merged {
        totals,
        ops,
        groups,
        steps,
        calls,
        threads,
    }
}

/// The first error any thread met, in thread order, with how many there were in all and the
/// first error of each other thread that met one.
pub(super) fn first_error(outcomes: &[(usize, u32, ThreadOutcome)], total_errors: u64) -> Option<FirstError> {
    let mut errors = outcomes.iter().filter_map(|o| o.2.first_error.clone());
    let error = errors.next()?;
    let others: Vec<_> = errors.collect();
    Some(FirstError {
        error,
        // Errors are counted where the statistics merge; never fewer than the threads that
        // failed (a thread that could not start counts none).
        total_errors: total_errors.max(1 + others.len() as u64),
        others,
    })
}

/// What ended the measured phase: an error that stopped the run (`failed`), the filesystem
/// reaching `stop.util` as a worker saw it, what the monitor stopped it for, or the threads
/// themselves (stonewall, quotas); otherwise they all ran out of work.
pub(super) fn stop_reason(stop: &Stop, failed: bool, ran: &Ran) -> StopReason {
    let any_finished = ran.outcomes.iter().any(|o| o.2.finished);
    if failed {
        StopReason::Error
    } else if ran.util_reached {
        StopReason::Util
    } else if let Some(reason) = ran.timing.stopped {
        reason
    } else if stop.time.is_some_and(|t| t.0.is_zero()) {
        // Stopped before it started (spawn.rs): the monitor saw the threads end, not the time.
        StopReason::Time
    } else if stop.stonewall && any_finished {
        StopReason::Stonewall
    } else if stop.ops.is_some() && any_finished {
        StopReason::Ops
    } else if stop.bytes.is_some() && any_finished {
        StopReason::Bytes
    } else {
        StopReason::Done
    }
}

/// Operation statistics merged per (operation type, label), as [`RunResult::ops`] lists them.
#[derive(Default)]
pub(super) struct OpMerge(Vec<(OpKind, Option<String>, OpStats)>);

impl OpMerge {
    pub(super) fn add(&mut self, op: OpKind, label: Option<&str>, st: &OpStats) {
        match self.0.iter_mut().find(|e| e.0 == op && e.1.as_deref() == label) {
            Some(e) => e.2.merge(st),
            None => self.0.push((op, label.map(str::to_string), st.clone())),
        }
    }

    /// In the order of [`OpKind::ALL`]; within a type the unlabelled entry first, then the
    /// labelled ones in the order they first appeared (the sort is stable).
    pub(super) fn results(mut self, secs: f64) -> Vec<OpResult> {
        self.0.sort_by_key(|e| (e.0.index(), e.1.is_some()));
        self.0
            .into_iter()
            .map(|(op, label, st)| OpResult {
                op,
                label,
                count: st.count,
                errors: st.errors,
                skipped: st.skipped,
                bytes: st.bytes,
                transactions: st.transactions,
                ops_per_sec: st.count as f64 / secs,
                mib_per_sec: st.bytes as f64 / MIB / secs,
                latency: st.latency(),
                histogram: st.buckets(),
            })
            .collect()
    }
}

fn add_totals(totals: &mut Totals, st: &OpStats, writes: bool) {
    totals.ops += st.count;
    totals.errors += st.errors;
    totals.skipped += st.skipped;
    totals.transactions += st.transactions;
    if writes {
        totals.bytes_written += st.bytes;
    } else {
        totals.bytes_read += st.bytes;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Workload;

    /// Every thread that failed is in the run's first error: the first thread's error first,
    /// then the others' in thread order, as sysbench prints each failed thread's lines.
    #[test]
    fn the_first_error_lists_every_other_failed_thread_after_the_first() {
        let text = "name = \"w\"\n[stop]\nops = 1\n[[fileset]]\nname = \"f\"\nfiles = 1\nsize = \"4k\"\n\
                    [[group]]\nname = \"g\"\nfileset = \"f\"\n[[group.op]]\nop = \"read\"\n";
        let w = Workload::from_toml(text, "w.toml").unwrap();
        let g = &w.groups[0];
        let failed = |m: &str| ThreadOutcome::failed(g, m.to_string(), Some(5));
        let mut ok = failed("");
        ok.first_error = None;
        let outcomes = vec![
            (0, 0, ok),
            (0, 1, failed("b")),
            (0, 2, failed("c")),
            (0, 3, failed("d")),
        ];
        let e = first_error(&outcomes, 2).expect("an error");
        assert_eq!(e.error.message, "b");
        assert_eq!(e.total_errors, 3, "at least as many as the threads that failed");
        let others: Vec<_> = e.others.iter().map(|t| (t.message.as_str(), t.errno)).collect();
        assert_eq!(others, [("c", Some(5)), ("d", Some(5))]);
        assert_eq!(first_error(&outcomes[..1], 0), None);
    }
}
