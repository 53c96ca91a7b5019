//! FFSB 5.2.1's results (`main.c`, `ffsb_op.c`), for profiles in the 5.x grammar, after the
//! prelude both versions print ([`super::prelude`]): one `name : N ops (x%)` line per operation
//! that ran, or only a throughput line when a single operation ran, and the CPU times. fslab's
//! extras follow, after `--- fslab ---`.

use super::compile::Plan;
use super::execute::Outcome;
use super::prelude::prelude;
use super::report::{printsize, Figures, Table};
use std::fmt::Write as _;

/// FFSB 5.2.1's report; `extras` appends fslab's figures.
pub(super) fn render(plan: &Plan, outcome: &Outcome, f: &Figures, extras: impl FnOnce(&mut String)) -> String {
    let mut out = String::new();
    let o = &mut out;
    let Some(result) = prelude(o, plan, outcome, f) else {
        extras(o);
        return out;
    };
    let runtime = result.duration.as_secs_f64();
    if f.threadgroups.len() > 1 {
        for t in &f.threadgroups {
            let _ = writeln!(o, "{}\n===============", t.title);
            print_results(o, t, runtime);
            let _ = writeln!(o);
        }
    }
    if let Some(total) = &f.total {
        let _ = writeln!(o, "Total Results\n===============");
        print_results(o, total, runtime);
    }
    let _ = writeln!(o, "\n");
    let _ = writeln!(o, "{:.1}% User   Time", f.user_time_pct.unwrap_or(0.0));
    let _ = writeln!(o, "{:.1}% System Time", f.system_time_pct.unwrap_or(0.0));
    let _ = writeln!(o, "{:.1}% CPU Utilization", f.cpu_utilization_pct.unwrap_or(0.0));
    extras(o);
    out
}

/// `print_results()`: a line per operation that ran, or, when a single operation with a
/// throughput line of its own ran, that line; then the transactions per second.
fn print_results(o: &mut String, t: &Table, runtime: f64) {
    let ran: Vec<_> = t.ops.iter().filter(|r| r.transactions > 0).collect();
    for r in &ran {
        let verb = match r.op.as_str() {
            "read" | "readall" => Some(("reads", t.read_bytes)),
            "write" => Some(("writes", t.write_bytes)),
            "create" => Some(("creates", t.write_bytes)),
            "append" => Some(("append writes", t.write_bytes)),
            _ => None,
        };
        match verb.filter(|_| ran.len() == 1) {
            Some((verb, bytes)) => {
                let _ = writeln!(
                    o,
                    "Throughput: {:.2} {verb}/sec -> {}/sec",
                    r.transactions as f64 / runtime,
                    printsize(bytes as f64 / runtime)
                );
            }
            None => {
                let _ = writeln!(o, "{:>20} : {} ops ({:.6}%) ", r.op, r.transactions, r.trans_pct);
            }
        }
    }
    let _ = writeln!(o, "{:.2} Transactions per Second", t.transactions_per_sec);
}
