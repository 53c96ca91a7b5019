//! FFSB's figures from a run, printed as FFSB 6.0 prints them after the prelude both versions
//! print (prelude.rs; 5.x profiles' results as FFSB 5.2.1 prints them: report_v5.rs), with
//! fslab's own figures after.
//!
//! FFSB counts, per operation: transactions (one per block read or written, one per metadata
//! operation), Trans/sec (transactions ÷ runtime), % Trans (share of all transactions), % Op
//! Weight (share of the operations done) and Throughput (bytes ÷ runtime, binary units with
//! `%.3g`; "NA" for metadata operations). The runtime includes the final `sync()`. CPU% is the
//! process's user + system time ÷ runtime, not divided by the number of CPUs.

use super::compile::Plan;
use super::execute::Outcome;
use super::grammar::Grammar;
use super::ops::{FfsbOp, Moves};
use super::stats::{self, CallLine};
use fslab_engine::result::{OpResult, RunResult};
use serde::Serialize;
use std::fmt::Write as _;

/// One line of FFSB's table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// FFSB's name.
    pub op: String,
    pub transactions: u64,
    pub trans_per_sec: f64,
    pub trans_pct: f64,
    /// Operations done (FFSB's op_weight counter).
    pub invocations: u64,
    pub op_weight_pct: f64,
    pub bytes: u64,
    /// None for metadata operations (FFSB prints "NA").
    pub throughput_bytes_per_sec: Option<f64>,
    /// As FFSB prints it: `9.48MB/sec` or `NA`.
    pub throughput: String,
    /// Operations that found no file to work on (FFSB would have died).
    pub skipped: u64,
}

/// One of FFSB's result tables: a threadgroup's or the total.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Table {
    pub title: String,
    pub ops: Vec<Row>,
    pub transactions: u64,
    pub transactions_per_sec: f64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub read_throughput_bytes_per_sec: f64,
    pub write_throughput_bytes_per_sec: f64,
    /// `596KB/sec`, when anything was read.
    pub read_throughput: Option<String>,
    pub write_throughput: Option<String>,
}

/// One filesystem's aging, as reported apart from the benchmark.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AgingSummary {
    pub filesystem: usize,
    pub location: String,
    pub desired_util: f64,
    pub from_util: f64,
    pub to_util: f64,
    pub secs: f64,
    pub ops: u64,
    pub bytes_written: u64,
}

/// FFSB's figures for one run, as `--json` carries them in `classic`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Figures {
    pub tool: &'static str,
    pub profile: String,
    pub grammar: Grammar,
    /// Seconds asked for (`time`); 0 only builds the filesets.
    pub benchmark_time: u64,
    /// "fs setup took": aging and fileset setup, in seconds.
    pub fs_setup_secs: f64,
    pub aging: Vec<AgingSummary>,
    /// The filesets set up before the benchmark (with time = 0, or to run a callout between).
    pub setup: Vec<fslab_engine::fileset::SetupReport>,
    /// "Benchmark took": from the start to the end of the final sync.
    pub runtime_secs: Option<f64>,
    /// One table per threadgroup when there are several (`ThreadGroup <n>`), as FFSB prints
    /// them before the total.
    pub threadgroups: Vec<Table>,
    pub total: Option<Table>,
    pub user_time_pct: Option<f64>,
    pub system_time_pct: Option<f64>,
    pub cpu_utilization_pct: Option<f64>,
    /// The system-call latencies of each threadgroup with `[stats]`.
    pub syscall_latency: Vec<ThreadgroupCalls>,
}

/// One threadgroup's `[stats]` figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ThreadgroupCalls {
    pub threadgroup: usize,
    pub calls: Vec<CallLine>,
}

/// Computes FFSB's figures from what the run measured.
pub fn figures(plan: &Plan, outcome: &Outcome) -> Figures {
    let aging = outcome
        .aging
        .iter()
        .map(|a| AgingSummary {
            filesystem: a.fs,
            location: a.root.display().to_string(),
            desired_util: a.desired_util,
            from_util: a.from_util,
            to_util: a.to_util,
            secs: a.secs,
            ops: a.result.as_ref().map_or(0, |r| r.totals.ops),
            bytes_written: a.result.as_ref().map_or(0, |r| r.totals.bytes_written),
        })
        .collect();
    let mut f = Figures {
        tool: "ffsb",
        profile: plan.profile.file.clone(),
        grammar: plan.profile.grammar,
        benchmark_time: plan.time,
        fs_setup_secs: outcome.setup_secs,
        aging,
        setup: outcome.setup.clone(),
        runtime_secs: None,
        threadgroups: Vec::new(),
        total: None,
        user_time_pct: None,
        system_time_pct: None,
        cpu_utilization_pct: None,
        syscall_latency: Vec::new(),
    };
    let Some(result) = &outcome.result else {
        return f;
    };
    let runtime = result.duration.as_secs_f64().max(1e-9);
    // The engine reports each group apart when there are several; FFSB's threadgroup n is the
    // workload's group n.
    f.threadgroups = result
        .groups
        .iter()
        .zip(&plan.groups)
        .enumerate()
        .map(|(g, (measured, ops))| table(&format!("ThreadGroup {g}"), ops, &measured.ops, runtime))
        .collect();
    let all: Vec<FfsbOp> = FfsbOp::ALL
        .into_iter()
        .filter(|op| plan.groups.iter().any(|g| g.contains(op)))
        .collect();
    f.total = Some(table("Total Results", &all, &result.ops, runtime));
    let (user, system) = (result.cpu.process_user_secs, result.cpu.process_system_secs);
    f.runtime_secs = Some(result.duration.as_secs_f64());
    f.user_time_pct = Some(100.0 * user / runtime);
    f.system_time_pct = Some(100.0 * system / runtime);
    f.cpu_utilization_pct = Some(100.0 * (user + system) / runtime);
    f.syscall_latency = plan
        .profile
        .threadgroups
        .iter()
        .zip(&plan.workload.groups)
        .enumerate()
        .filter_map(|(i, (tg, group))| {
            Some(ThreadgroupCalls {
                threadgroup: i,
                calls: stats::lines(tg.stats.as_ref()?, &group.name, &result.calls),
            })
        })
        .collect();
    f
}

/// What the engine measured for FFSB operation `op`: the entries labelled with its name.
fn measured(ops: &[OpResult], op: FfsbOp) -> Option<&OpResult> {
    ops.iter()
        .find(|o| o.op == op.kind() && o.label.as_deref() == Some(op.name()))
}

/// One of FFSB's tables: a row for each of `ops` (given in FFSB's order), from what the engine
/// measured for them (`results`: the run's operations, or one group's).
fn table(title: &str, ops: &[FfsbOp], results: &[OpResult], runtime: f64) -> Table {
    let zero = |op: FfsbOp| OpResult {
        op: op.kind(),
        label: Some(op.name().to_string()),
        count: 0,
        errors: 0,
        skipped: 0,
        bytes: 0,
        transactions: 0,
        ops_per_sec: 0.0,
        mib_per_sec: 0.0,
        latency: Default::default(),
        histogram: Vec::new(),
    };
    let measured: Vec<(FfsbOp, OpResult)> = ops
        .iter()
        .map(|&op| (op, measured(results, op).cloned().unwrap_or_else(|| zero(op))))
        .collect();
    let total_trans: u64 = measured.iter().map(|m| m.1.transactions).sum();
    let total_ops: u64 = measured.iter().map(|m| m.1.count).sum();
    let pct = |part: u64, whole: u64| {
        if whole == 0 {
            0.0
        } else {
            100.0 * part as f64 / whole as f64
        }
    };
    let mut t = Table {
        title: title.to_string(),
        ops: Vec::new(),
        transactions: total_trans,
        transactions_per_sec: total_trans as f64 / runtime,
        read_bytes: 0,
        write_bytes: 0,
        read_throughput_bytes_per_sec: 0.0,
        write_throughput_bytes_per_sec: 0.0,
        read_throughput: None,
        write_throughput: None,
    };
    for (op, r) in &measured {
        let moves = op.moves();
        match moves {
            Moves::Read => t.read_bytes += r.bytes,
            Moves::Write => t.write_bytes += r.bytes,
            Moves::Nothing => {}
        }
        let rate = (moves != Moves::Nothing).then(|| r.bytes as f64 / runtime);
        t.ops.push(Row {
            op: op.name().to_string(),
            transactions: r.transactions,
            trans_per_sec: r.transactions as f64 / runtime,
            trans_pct: pct(r.transactions, total_trans),
            invocations: r.count,
            op_weight_pct: pct(r.count, total_ops),
            bytes: r.bytes,
            throughput_bytes_per_sec: rate,
            throughput: rate.map_or_else(|| "NA".to_string(), |b| format!("{}/sec", printsize(b))),
            skipped: r.skipped,
        });
    }
    t.read_throughput_bytes_per_sec = t.read_bytes as f64 / runtime;
    t.write_throughput_bytes_per_sec = t.write_bytes as f64 / runtime;
    t.read_throughput = (t.read_bytes > 0).then(|| format!("{}/sec", printsize(t.read_throughput_bytes_per_sec)));
    t.write_throughput = (t.write_bytes > 0).then(|| format!("{}/sec", printsize(t.write_throughput_bytes_per_sec)));
    t
}

/// What FFSB prints, then fslab's latency percentiles, CPU split and setup.
pub fn render(plan: &Plan, outcome: &Outcome) -> String {
    let f = figures(plan, outcome);
    if plan.profile.grammar == Grammar::V5 {
        return super::report_v5::render(plan, outcome, &f, |o| {
            extras(o, plan, outcome, outcome.result.as_ref());
        });
    }
    let mut out = String::new();
    let o = &mut out;
    let Some(result) = super::prelude::prelude(o, plan, outcome, &f) else {
        extras(o, plan, outcome, None);
        return out;
    };
    // As FFSB 6.0's main(): one threadgroup's table is titled "Total Results" and followed by
    // a blank line; several are each followed by one, then the total's table; two more blank
    // lines before the CPU times.
    // A threadgroup with [stats] has its system calls' latencies after its table.
    let calls = |o: &mut String, tg: usize| {
        if let Some(c) = f.syscall_latency.iter().find(|c| c.threadgroup == tg) {
            stats::render(o, &c.calls);
        }
    };
    for (i, t) in f.threadgroups.iter().enumerate() {
        let _ = writeln!(o, "{}\n===============", t.title);
        print_table(o, t);
        calls(o, i);
        let _ = writeln!(o);
    }
    if let Some(total) = &f.total {
        let _ = writeln!(o, "{}\n===============", total.title);
        print_table(o, total);
        if f.threadgroups.is_empty() {
            calls(o, 0);
            let _ = writeln!(o);
        }
    }
    let _ = writeln!(o, "\n\n{:.1}% User   Time", f.user_time_pct.unwrap_or(0.0));
    let _ = writeln!(o, "{:.1}% System Time", f.system_time_pct.unwrap_or(0.0));
    let _ = writeln!(o, "{:.1}% CPU Utilization", f.cpu_utilization_pct.unwrap_or(0.0));
    extras(o, plan, outcome, Some(result));
    out
}

/// One of FFSB 6.0's tables (`print_results`).
fn print_table(o: &mut String, t: &Table) {
    let _ = writeln!(
        o,
        "             Op Name   Transactions\t Trans/sec\t% Trans\t    % Op Weight\t   Throughput"
    );
    let _ = writeln!(
        o,
        "             =======   ============\t =========\t=======\t    ===========\t   =========="
    );
    for r in t.ops.iter().filter(|r| r.transactions > 0) {
        let _ = writeln!(
            o,
            "{:>20} : {:>12}\t{:>10.2}\t{:>6.3}%\t\t{:>6.3}%\t  {:>11}",
            r.op, r.transactions, r.trans_per_sec, r.trans_pct, r.op_weight_pct, r.throughput
        );
    }
    let _ = writeln!(o, "-\n{:.2} Transactions per Second\n", t.transactions_per_sec);
    if t.read_throughput.is_some() || t.write_throughput.is_some() {
        let _ = writeln!(o, "Throughput Results\n===================");
    }
    if let Some(r) = &t.read_throughput {
        let _ = writeln!(o, "Read Throughput: {r}");
    }
    if let Some(w) = &t.write_throughput {
        let _ = writeln!(o, "Write Throughput: {w}");
    }
}

/// fslab's figures beside FFSB's: latency per operation, the system's CPU split, the setup.
fn extras(o: &mut String, plan: &Plan, outcome: &Outcome, result: Option<&RunResult>) {
    let _ = writeln!(o, "\n--- fslab ---");
    let _ = writeln!(
        o,
        "FFSB profile {} ({} grammar), run by fslab {}",
        plan.profile.file,
        plan.profile.grammar,
        env!("CARGO_PKG_VERSION")
    );
    if let Some(r) = result {
        let _ = writeln!(
            o,
            "latency per operation (open to close):\n{:>20} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}",
            "Op Name", "ops", "mean", "p50", "p95", "p99", "p99.9", "max"
        );
        if let Some(total) = figures(plan, outcome).total {
            for row in &total.ops {
                let ffsb_op = FfsbOp::ALL.into_iter().find(|op| row.op == op.name());
                let Some(op) = ffsb_op.and_then(|f| measured(&r.ops, f)) else {
                    continue;
                };
                let l = &op.latency;
                let _ = writeln!(
                    o,
                    "{:>20} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}",
                    row.op,
                    op.count,
                    micros(l.mean_us),
                    micros(l.p50_us),
                    micros(l.p95_us),
                    micros(l.p99_us),
                    micros(l.p99_9_us),
                    micros(l.max_us)
                );
            }
        }
        let c = &r.cpu;
        let _ = writeln!(
            o,
            "cpu, all CPUs (/proc/stat): user {:.1}%  system {:.1}%  iowait {:.1}%  idle {:.1}%",
            c.user + c.nice,
            c.system + c.irq + c.softirq,
            c.iowait,
            c.idle
        );
        if let Some(sync) = r.final_sync {
            let _ = writeln!(o, "final sync: {:.3} s (inside the benchmark time)", sync.as_secs_f64());
        }
    }
    for a in &outcome.aging {
        let what = a.result.as_ref().map_or_else(
            || "already full enough, nothing done".to_string(),
            |r| {
                format!(
                    "{} ops, {} written, {:.2} s",
                    r.totals.ops,
                    mib(r.totals.bytes_written),
                    a.secs
                )
            },
        );
        let _ = writeln!(
            o,
            "aging fs{} {}: utilisation {:.3} -> {:.3} (target {}): {what}",
            a.fs,
            a.root.display(),
            a.from_util,
            a.to_util,
            a.desired_util
        );
    }
    let setup = result.map_or(&outcome.setup[..], |r| {
        if outcome.setup.is_empty() {
            &r.setup[..]
        } else {
            &outcome.setup[..]
        }
    });
    for (k, s) in setup.iter().enumerate() {
        let _ = writeln!(
            o,
            "setup {} {}/data: {} files, {} written{} in {:.2} s",
            s.fileset,
            plan.roots.get(k).map_or_else(String::new, |r| r.display().to_string()),
            s.files,
            mib(s.bytes),
            if s.reused { " (reused)" } else { "" },
            s.duration.as_secs_f64()
        );
    }
    if let Some(r) = result {
        let skipped: Vec<String> = r
            .ops
            .iter()
            .filter(|op| op.skipped > 0)
            .map(|op| format!("{} {}", op.label.as_deref().unwrap_or(op.op.name()), op.skipped))
            .collect();
        if !skipped.is_empty() {
            let _ = writeln!(
                o,
                "skipped (no file left to work on; FFSB would have stopped): {}",
                skipped.join(", ")
            );
        }
        let _ = writeln!(o, "stopped by {}; seed {}", r.stopped_by, r.seed);
    }
    if let Some(status) = outcome.callout_status.filter(|s| *s != 0) {
        let _ = writeln!(o, "the callout exited with status {status}");
    }
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / 1048576.0)
}

/// A latency in microseconds, in the unit that suits it.
fn micros(us: f64) -> String {
    if us < 1000.0 {
        format!("{us:.1}us")
    } else if us < 1e6 {
        format!("{:.2}ms", us / 1e3)
    } else {
        format!("{:.2}s", us / 1e6)
    }
}

/// FFSB's `ffsb_printsize`: binary GB, MB, KB or B with `%.3g`.
pub fn printsize(bytes: f64) -> String {
    const K: f64 = 1024.0;
    if bytes >= K * K * K {
        format!("{}GB", fmt_g(bytes / (K * K * K), 3))
    } else if bytes >= K * K {
        format!("{}MB", fmt_g(bytes / (K * K), 3))
    } else if bytes >= K {
        format!("{}KB", fmt_g(bytes / K, 3))
    } else {
        format!("{}B", fmt_g(bytes, 3))
    }
}

/// C's `%.<precision>g`: `precision` significant digits, trailing zeros dropped, exponent form
/// for very large or small numbers.
pub fn fmt_g(v: f64, precision: usize) -> String {
    if v == 0.0 {
        return "0".into();
    }
    if !v.is_finite() {
        return format!("{v}");
    }
    let p = precision.max(1);
    let sci = format!("{:.*e}", p - 1, v);
    let (mantissa, exp) = sci.split_once('e').expect("an exponent");
    let x: i32 = exp.parse().expect("an integer exponent");
    let trim = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if x < -4 || x >= p as i32 {
        format!("{}e{}{:02}", trim(mantissa), if x < 0 { '-' } else { '+' }, x.abs())
    } else {
        trim(&format!("{:.*}", (p as i32 - 1 - x) as usize, v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fmt_g_matches_c() {
        for (v, want) in [
            (596.0, "596"),
            (9.48, "9.48"),
            (17.6, "17.6"),
            (1.0, "1"),
            (0.5, "0.5"),
            (123.456, "123"),
            (999.6, "1e+03"),
            (1000.0, "1e+03"),
            (0.0001234, "0.000123"),
            (0.00001234, "1.23e-05"),
            (12.0, "12"),
            (9.995, "9.99"),
        ] {
            assert_eq!(fmt_g(v, 3), want, "{v}");
        }
    }

    #[test]
    fn printsize_uses_binary_units() {
        assert_eq!(printsize(596.0 * 1024.0), "596KB");
        assert_eq!(printsize(9.48 * 1048576.0), "9.48MB");
        assert_eq!(printsize(2.5 * 1073741824.0), "2.5GB");
        assert_eq!(printsize(100.0), "100B");
    }
}
