//! How a cell's workload runs: the fslab command lines of each phase (a worker process runs
//! each), and what the lab keeps from their JSON: the engine results, the tool's own figures and
//! the headline metrics a report compares.
//!
//! Running each tool through its own fslab command keeps one path from a study to a result:
//! a study's dbench cell is exactly `fslab dbench ... --json`, which a user can run by hand.

use crate::study::{StudyWorkload, Tool};
use fslab_engine::result::RunResult;
use fslab_engine::Span;
pub use fslab_store::Metric;
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

/// A phase of a cell's run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Phase {
    /// `setup` (untimed: sysbench's prepare), `run` (measured) or `cleanup`.
    pub name: &'static str,
    /// Arguments of the fslab binary.
    pub args: Vec<String>,
    /// Whether it prints the JSON the lab keeps.
    pub measured: bool,
}

/// The phases of one run of `w` with these option values, in directory `dir`. `drop_caches`:
/// the measured phase starts with a cold cache (after the tool's untimed setup).
pub fn phases(w: &StudyWorkload, options: &[(String, String)], dir: &Path, drop_caches: bool) -> Vec<Phase> {
    let dir = dir.display().to_string();
    let main = w.main.as_ref().map(|m| m.display().to_string());
    let mut args: Vec<String> = Vec::new();
    let push_opts = |args: &mut Vec<String>, style: Style| {
        for (k, v) in options {
            if style == Style::Dbench && k == "clients" {
                continue;
            }
            // A study may write "60s" or "2m"; the classic tools take whole seconds.
            let v = match seconds(v) {
                Some(d) if k == "time" && w.tool != Tool::Run => d.as_secs_f64().ceil().to_string(),
                _ => v.clone(),
            };
            args.extend(render(k, &v, style));
        }
    };
    let measured = |args: Vec<String>| Phase {
        name: "run",
        args,
        measured: true,
    };
    match w.tool {
        Tool::Run | Tool::Ffsb => {
            args.push(w.tool.key().to_string());
            args.extend(main);
            args.extend(["--dir".to_string(), dir, "--json".to_string()]);
            if drop_caches {
                args.push("--drop-caches".to_string());
            }
            push_opts(&mut args, Style::Long);
            args.extend(w.args.iter().cloned());
            vec![measured(args)]
        }
        Tool::Dbench => {
            args.extend(["dbench", "-D"].map(String::from));
            args.extend([dir, "--json".to_string()]);
            push_opts(&mut args, Style::Dbench);
            args.extend(w.args.iter().cloned());
            let clients = options
                .iter()
                .find(|(k, _)| k == "clients")
                .map_or("1", |(_, v)| v.as_str());
            args.push(clients.to_string());
            vec![measured(args)]
        }
        Tool::Sysbench => {
            let mut base: Vec<String> = ["sysbench", "fileio", "--dir"].map(String::from).to_vec();
            base.push(dir);
            push_opts(&mut base, Style::Sysbench);
            base.extend(w.args.iter().cloned());
            let with = |extra: &[&str]| {
                let mut a = base.clone();
                a.extend(extra.iter().map(|s| s.to_string()));
                a
            };
            vec![
                Phase {
                    name: "setup",
                    args: with(&["prepare"]),
                    measured: false,
                },
                measured(with(&["--json", "run"])),
                Phase {
                    name: "cleanup",
                    args: with(&["cleanup"]),
                    measured: false,
                },
            ]
        }
        Tool::Iozone => {
            args.extend(["iozone", "--dir"].map(String::from));
            args.extend([dir, "--json".to_string()]);
            args.extend(w.args.iter().cloned());
            push_opts(&mut args, Style::Short);
            vec![measured(args)]
        }
    }
}

/// Whether the lab must drop caches itself before the measured phase (the tools whose setup is
/// not inside the measured command, or that have none).
pub fn lab_drops_caches(tool: Tool) -> bool {
    !matches!(tool, Tool::Run | Tool::Ffsb)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    /// `--key value`; `--key` for true.
    Long,
    /// dbench: `-t` for time, one-letter keys as `-k value`, others `--key value`.
    Dbench,
    /// sysbench: `--key=value`.
    Sysbench,
    /// IOzone: one-letter keys as `-k value`, others `--key value`.
    Short,
}

fn render(k: &str, v: &str, style: Style) -> Vec<String> {
    let k = match (style, k) {
        (Style::Dbench, "time") => "t",
        (Style::Dbench, "loadfile") => "c",
        (Style::Short, "threads") => "t",
        (Style::Short, "size") => "s",
        (Style::Short, "record") => "r",
        _ => k,
    };
    let flag = if k.len() == 1 && matches!(style, Style::Dbench | Style::Short) {
        format!("-{k}")
    } else {
        format!("--{k}")
    };
    match (style, v) {
        (Style::Sysbench, _) => vec![format!("{flag}={v}")],
        (_, "true") => vec![flag],
        (_, "false") => vec![],
        _ => vec![flag, v.to_string()],
    }
}

/// The option that sets a tool's run time, if it has one.
pub fn time_option(tool: Tool) -> Option<&'static str> {
    match tool {
        Tool::Iozone => None,
        _ => Some("time"),
    }
}

/// "60", "60s", "2m" as a duration.
pub fn seconds(v: &str) -> Option<Duration> {
    v.parse::<Span>().ok().map(|s| s.0)
}

/// How long one run of `w` takes, for estimates: its time option (dbench adds its warm-up of a
/// fifth), else a guess of 30 s. A time of 0 is no limit (sysbench's runs bounded by requests).
pub fn expected_time(w: &StudyWorkload, options: &[(String, String)]) -> Duration {
    let t = time_option(w.tool)
        .and_then(|k| options.iter().find(|(o, _)| o == k))
        .and_then(|(_, v)| seconds(v))
        .filter(|t| !t.is_zero());
    match (w.tool, t) {
        (Tool::Dbench, Some(t)) => t + t / 5,
        (Tool::Dbench, None) => Duration::from_secs(720),
        (Tool::Sysbench, None) => Duration::from_secs(10),
        (_, Some(t)) => t,
        (_, None) => Duration::from_secs(30),
    }
}

fn metric(name: &str, value: f64, unit: &str) -> Metric {
    Metric {
        name: name.to_string(),
        value,
        unit: unit.to_string(),
        higher_is_better: true,
    }
}

/// What the lab keeps of a measured phase's JSON.
#[derive(Debug)]
pub struct Output {
    /// Each engine run, named by phase (`run`, or IOzone's sub-test names).
    pub results: Vec<(String, RunResult)>,
    /// The tool's own figures (`classic`), or IOzone's whole document.
    pub classic: Option<Value>,
    /// The headline figures, the first being the one a report leads with.
    pub metrics: Vec<Metric>,
}

/// Reads a measured phase's JSON.
pub fn parse_output(tool: Tool, json: &str) -> Result<Output, String> {
    let doc: Value = serde_json::from_str(json).map_err(|e| format!("the worker's JSON is not valid: {e}"))?;
    if tool == Tool::Iozone {
        return iozone_output(doc);
    }
    let result: RunResult =
        serde_json::from_value(doc).map_err(|e| format!("the worker's JSON is not a fslab result: {e}"))?;
    let classic = result.classic.clone();
    let mut metrics = match (tool, &classic) {
        (Tool::Dbench, Some(c)) => dbench_metrics(c),
        (Tool::Sysbench, Some(c)) => sysbench_metrics(c),
        (Tool::Ffsb, Some(c)) => ffsb_metrics(c),
        _ => Vec::new(),
    };
    add_engine_metrics(&mut metrics, engine_metrics(&result));
    Ok(Output {
        results: vec![("run".to_string(), result)],
        classic,
        metrics,
    })
}

/// Adds fslab's own figures after the tool's, leaving out those the tool already names (sysbench's
/// `throughput` is its own, over its own time): the store keeps one value per run and name.
fn add_engine_metrics(metrics: &mut Vec<Metric>, engine: Vec<Metric>) {
    for m in engine {
        if metrics.iter().all(|t| t.name != m.name) {
            metrics.push(m);
        }
    }
}

/// fslab's own figures, which every tool's run has.
fn engine_metrics(r: &RunResult) -> Vec<Metric> {
    let t = &r.totals;
    vec![
        metric("throughput", t.read_mib_per_sec + t.write_mib_per_sec, "MiB/s"),
        metric("ops/s", t.ops_per_sec, "ops/s"),
        metric("read MiB/s", t.read_mib_per_sec, "MiB/s"),
        metric("write MiB/s", t.write_mib_per_sec, "MiB/s"),
    ]
}

fn num(v: &Value, key: &str) -> Option<f64> {
    v.get(key).and_then(Value::as_f64)
}

fn dbench_metrics(c: &Value) -> Vec<Metric> {
    let mut m = Vec::new();
    if let Some(v) = num(c, "throughput_mb_per_sec") {
        m.push(metric("Throughput", v, "MB/sec"));
    }
    if let Some(v) = num(c, "mean_mb_per_sec") {
        m.push(metric("mean MB/sec", v, "MB/sec"));
    }
    if let Some(v) = num(c, "max_latency_ms") {
        m.push(Metric {
            higher_is_better: false,
            ..metric("max latency", v, "ms")
        });
    }
    m
}

fn sysbench_metrics(c: &Value) -> Vec<Metric> {
    let mut m = Vec::new();
    let read = num(c, "read_mib_per_sec").unwrap_or(0.0);
    let written = num(c, "written_mib_per_sec").unwrap_or(0.0);
    m.push(metric("throughput", read + written, "MiB/s"));
    for (key, name, unit) in [
        ("reads_per_sec", "reads/s", "/s"),
        ("writes_per_sec", "writes/s", "/s"),
        ("fsyncs_per_sec", "fsyncs/s", "/s"),
    ] {
        if let Some(v) = num(c, key) {
            m.push(metric(name, v, unit));
        }
    }
    if let Some(p) = c.get("latency_ms").and_then(|l| num(l, "percentile_value")) {
        m.push(Metric {
            higher_is_better: false,
            ..metric("latency p95", p, "ms")
        });
    }
    m
}

fn ffsb_metrics(c: &Value) -> Vec<Metric> {
    let mut m = Vec::new();
    let Some(t) = c.get("total") else { return m };
    if let Some(v) = num(t, "transactions_per_sec") {
        m.push(metric("Transactions/s", v, "trans/s"));
    }
    let mib = |k: &str| num(t, k).map(|b| b / 1048576.0);
    if let Some(v) = mib("read_throughput_bytes_per_sec") {
        m.push(metric("read MB/sec", v, "MB/sec"));
    }
    if let Some(v) = mib("write_throughput_bytes_per_sec") {
        m.push(metric("write MB/sec", v, "MB/sec"));
    }
    if let Some(v) = num(c, "cpu_utilization_pct") {
        m.push(Metric {
            higher_is_better: false,
            ..metric("CPU %", v, "%")
        });
    }
    m
}

/// IOzone's document: one engine result per sub-test, and the "Children see" figure of each as
/// a metric (kB/sec, as IOzone prints it).
fn iozone_output(doc: Value) -> Result<Output, String> {
    let mut results = Vec::new();
    let mut metrics = Vec::new();
    for st in doc.get("subtests").and_then(Value::as_array).into_iter().flatten() {
        let name = st.get("name").and_then(Value::as_str).unwrap_or("subtest").to_string();
        if let Some(r) = st.get("result") {
            let r: RunResult = serde_json::from_value(r.clone())
                .map_err(|e| format!("IOzone's sub-test `{name}` has no valid result: {e}"))?;
            results.push((name.clone(), r));
        }
        if let Some(v) = st.get("figures").and_then(|f| num(f, "children_see")) {
            metrics.push(metric(&name, v, "kB/sec"));
        }
    }
    if results.is_empty() {
        return Err("IOzone's JSON has no sub-test results".to_string());
    }
    Ok(Output {
        results,
        classic: Some(doc),
        metrics,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn workload(tool: Tool, main: Option<&str>, args: &[&str]) -> StudyWorkload {
        StudyWorkload {
            name: "w".into(),
            tool,
            main: main.map(PathBuf::from),
            options: Vec::new(),
            args: args.iter().map(|s| s.to_string()).collect(),
        }
    }

    fn opts(o: &[(&str, &str)]) -> Vec<(String, String)> {
        o.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn a_tool_s_figure_is_kept_over_fslab_s_of_the_same_name() {
        let sysbench = sysbench_metrics(&serde_json::json!({"read_mib_per_sec": 3.0, "written_mib_per_sec": 4.0}));
        let mut metrics = sysbench.clone();
        let engine = vec![metric("throughput", 6.5, "MiB/s"), metric("ops/s", 100.0, "ops/s")];
        add_engine_metrics(&mut metrics, engine);
        let names: Vec<&str> = metrics.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names.iter().filter(|n| **n == "throughput").count(), 1, "{names:?}");
        assert_eq!(metrics[0].value, 7.0, "sysbench's own throughput leads");
        assert_eq!(names.last(), Some(&"ops/s"));
    }

    #[test]
    fn a_run_s_expected_time_is_its_time_and_a_zero_time_is_unbounded() {
        let sysbench = workload(Tool::Sysbench, None, &[]);
        assert_eq!(
            expected_time(&sysbench, &opts(&[("time", "60")])),
            Duration::from_secs(60)
        );
        assert_eq!(
            expected_time(&sysbench, &opts(&[("time", "0")])),
            Duration::from_secs(10),
            "time 0 is no limit: the guess, not no time"
        );
        let dbench = workload(Tool::Dbench, None, &[]);
        assert_eq!(
            expected_time(&dbench, &opts(&[("time", "60")])),
            Duration::from_secs(72)
        );
    }

    #[test]
    fn each_tool_gets_its_own_syntax() {
        let dir = Path::new("/mnt/x");
        let d = phases(
            &workload(Tool::Dbench, None, &[]),
            &opts(&[("clients", "4"), ("time", "1m"), ("sync", "true")]),
            dir,
            true,
        );
        assert_eq!(d[0].args.join(" "), "dbench -D /mnt/x --json -t 60 --sync 4");
        let s = phases(
            &workload(Tool::Sysbench, None, &[]),
            &opts(&[("file-test-mode", "rndrd"), ("threads", "2")]),
            dir,
            true,
        );
        let names: Vec<_> = s.iter().map(|p| p.name).collect();
        assert_eq!(names, ["setup", "run", "cleanup"]);
        assert_eq!(
            s[1].args.join(" "),
            "sysbench fileio --dir /mnt/x --file-test-mode=rndrd --threads=2 --json run"
        );
        let i = phases(
            &workload(Tool::Iozone, None, &["-i", "0", "-e"]),
            &opts(&[("threads", "16"), ("r", "64k")]),
            dir,
            false,
        );
        assert_eq!(i[0].args.join(" "), "iozone --dir /mnt/x --json -i 0 -e -t 16 -r 64k");
        let f = phases(
            &workload(Tool::Ffsb, Some("/p/x.ffsb"), &[]),
            &opts(&[("threads", "4"), ("time", "10")]),
            dir,
            true,
        );
        assert_eq!(
            f[0].args.join(" "),
            "ffsb /p/x.ffsb --dir /mnt/x --json --drop-caches --threads 4 --time 10"
        );
    }
}
