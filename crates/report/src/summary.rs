//! The human summary of one run: an aligned table per operation type, then totals, CPU and setup.

use fslab_engine::result::{RunResult, Status};
use std::fmt::Write;

const MIB: f64 = 1024.0 * 1024.0;

/// A latency in microseconds, in the unit that keeps 3-4 significant digits.
pub fn latency(us: f64) -> String {
    if us < 1000.0 {
        format!("{us:.1}us")
    } else if us < 1_000_000.0 {
        format!("{:.2}ms", us / 1000.0)
    } else {
        format!("{:.2}s", us / 1_000_000.0)
    }
}

/// Lays out rows of cells in columns: the first left-aligned, the rest right-aligned.
pub fn table(rows: &[Vec<String>]) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for r in rows {
        let mut line = String::new();
        for (c, cell) in r.iter().enumerate() {
            if c == 0 {
                let _ = write!(line, "{cell:<w$}", w = widths[0]);
            } else {
                let _ = write!(line, "  {cell:>w$}", w = widths[c]);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

pub fn run_summary(r: &RunResult) -> String {
    let mut out = String::new();
    let w = &r.workload;
    let _ = writeln!(
        out,
        "{}: {} threads, {:.2}s measured, stopped by {}, seed {}",
        w.name,
        w.total_threads(),
        r.duration.as_secs_f64(),
        r.stopped_by,
        r.seed
    );
    let _ = writeln!(out);
    // A label column only when some mix entry has a label (FFSB's write and write_fsync).
    let labelled = r.ops.iter().any(|o| o.label.is_some());
    let mut header = vec!["op"];
    if labelled {
        header.push("label");
    }
    header.extend(["ops", "ops/s", "MiB/s", "errors", "mean", "p50", "p99", "p99.9", "max"]);
    let mut rows = vec![header.into_iter().map(String::from).collect::<Vec<_>>()];
    for o in &r.ops {
        let l = &o.latency;
        // Without latency timing (--no-latency) the histogram is empty.
        let lat = |us: f64| {
            if o.histogram.is_empty() {
                "-".to_string()
            } else {
                latency(us)
            }
        };
        let mut errors = o.errors.to_string();
        if o.skipped > 0 {
            errors = format!("{errors} ({} skipped)", o.skipped);
        }
        let mut row = vec![o.op.to_string()];
        if labelled {
            row.push(o.label.clone().unwrap_or_default());
        }
        row.extend([
            o.count.to_string(),
            format!("{:.1}", o.ops_per_sec),
            format!("{:.2}", o.mib_per_sec),
            errors,
            lat(l.mean_us),
            lat(l.p50_us),
            lat(l.p99_us),
            lat(l.p99_9_us),
            lat(l.max_us),
        ]);
        rows.push(row);
    }
    out.push_str(&table(&rows));
    let t = &r.totals;
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "total: {} ops ({:.1} ops/s), {} transactions ({:.1}/s); read {:.1} MiB ({:.2} MiB/s), written {:.1} MiB ({:.2} MiB/s)",
        t.ops,
        t.ops_per_sec,
        t.transactions,
        t.transactions_per_sec,
        t.bytes_read as f64 / MIB,
        t.read_mib_per_sec,
        t.bytes_written as f64 / MIB,
        t.write_mib_per_sec
    );
    let c = &r.cpu;
    let _ = writeln!(
        out,
        "cpu: user {:.1}%  system {:.1}%  iowait {:.1}%  idle {:.1}%  (fslab: {:.2}s user, {:.2}s system, {} context switches)",
        c.user + c.nice,
        c.system + c.irq + c.softirq,
        c.iowait,
        c.idle,
        c.process_user_secs,
        c.process_system_secs,
        c.voluntary_ctx_switches + c.involuntary_ctx_switches
    );
    for s in &r.setup {
        let what = if s.reused {
            "reused".to_string()
        } else {
            format!("{:.1} MiB written", s.bytes as f64 / MIB)
        };
        let _ = writeln!(
            out,
            "setup: fileset {}: {} files, {what}, {:.2}s (untimed)",
            s.fileset,
            s.files,
            s.duration.as_secs_f64()
        );
    }
    if let Some(d) = r.final_sync {
        let _ = writeln!(out, "final sync: {:.3}s ({:?})", d.as_secs_f64(), w.stop.final_sync);
    }
    if r.status == Status::Failed {
        if let Some(e) = &r.first_error {
            let _ = writeln!(
                out,
                "FAILED: {} error(s); the first: {}",
                e.total_errors, e.error.message
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_picks_a_readable_unit() {
        assert_eq!(latency(12.34), "12.3us");
        assert_eq!(latency(1234.0), "1.23ms");
        assert_eq!(latency(2_500_000.0), "2.50s");
    }

    #[test]
    fn table_aligns_columns() {
        let t = table(&[vec!["op".into(), "ops".into()], vec!["readall".into(), "7".into()]]);
        assert_eq!(t, "op       ops\nreadall    7\n");
    }
}
