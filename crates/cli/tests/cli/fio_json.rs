//! `--output-format fio-json`: fio's JSON layout, read by fio's own `fio_jsonplus_clat2csv`.

use crate::common::{fslab_in, s};
use fslab_testkit::{require_tool, tempdir};
use serde_json::Value;

fn fio_json(dir: &std::path::Path, extra: &[&str]) -> Value {
    let args = [
        &[
            "run",
            "--op",
            "randrw",
            "--bs",
            "4k",
            "--size",
            "8m",
            "--time",
            "1s",
            "--dir",
            s(dir),
        ][..],
        extra,
    ]
    .concat();
    let run = fslab_in(None, &[], &args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("not JSON ({e}):\n{}", run.stdout))
}

#[test]
fn fio_json_has_fio_s_layout_and_adds_up() {
    let dir = tempdir();
    let doc = fio_json(dir.path(), &["--output-format", "fio-json"]);
    assert!(doc["fio version"].as_str().unwrap().starts_with("fslab-"), "{doc:#}");
    let jobs = doc["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 1, "{doc:#}");
    let job = &jobs[0];
    assert_eq!(job["jobname"], "randrw");
    let runtime = job["job_runtime"].as_u64().unwrap();
    assert!(runtime >= 900, "{runtime} ms");
    for ddir in ["read", "write"] {
        let d = &job[ddir];
        let ios = d["total_ios"].as_u64().unwrap();
        assert!(ios > 0, "{ddir}: {d:#}");
        assert_eq!(d["io_bytes"].as_u64().unwrap(), ios * 4096, "{ddir}");
        let clat = &d["clat_ns"];
        assert_eq!(clat["N"].as_u64().unwrap(), ios, "{ddir}: every I/O timed");
        let binned: u64 = clat["bins"]
            .as_object()
            .unwrap()
            .values()
            .map(|v| v.as_u64().unwrap())
            .sum();
        assert_eq!(binned, ios, "{ddir}: the bins hold every I/O");
        let (min, max) = (clat["min"].as_u64().unwrap(), clat["max"].as_u64().unwrap());
        let mean = clat["mean"].as_f64().unwrap();
        assert!(min as f64 <= mean && mean <= max as f64, "{ddir}: {min} {mean} {max}");
        let p = |k: &str| {
            clat["percentile"][k]
                .as_u64()
                .unwrap_or_else(|| panic!("{ddir}: no {k}"))
        };
        assert!(
            p("1.000000") <= p("50.000000") && p("50.000000") <= p("99.000000") && p("99.000000") <= p("99.990000")
        );
        let bw = d["bw_bytes"].as_u64().unwrap() as f64;
        let expect = ios as f64 * 4096.0 / (runtime as f64 / 1000.0);
        assert!(
            (bw - expect).abs() <= expect * 0.01 + 1.0,
            "{ddir}: bw {bw} for {expect}"
        );
        assert_eq!(d["slat_ns"]["N"], 0);
    }
    assert_eq!(job["trim"]["total_ios"], 0);
    // --output-format json is --json.
    let json = fio_json(dir.path(), &["--output-format=json"]);
    assert_eq!(json["tool"], "run", "{json:#}");
    assert!(json["schema_version"].as_u64().is_some());
}

#[test]
#[ignore = "system tier: fio's fio_jsonplus_clat2csv (Debian's fio package)"]
fn fio_jsonplus_clat2csv_reads_fslab_s_fio_json() {
    require_tool("fio_jsonplus_clat2csv", "fio");
    let dir = tempdir();
    let doc = fio_json(dir.path(), &["--output-format", "fio-json"]);
    let file = dir.path().join("run.json");
    std::fs::write(&file, doc.to_string()).unwrap();
    let csv = dir.path().join("run.csv");
    for extra in [None, Some("--validate")] {
        let out = std::process::Command::new("fio_jsonplus_clat2csv")
            .arg(&file)
            .arg(&csv)
            .args(extra)
            .output()
            .expect("run fio_jsonplus_clat2csv");
        assert!(
            out.status.success(),
            "{extra:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let text = std::fs::read_to_string(dir.path().join("run_job0.csv")).expect("fio's script wrote run_job0.csv");
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').map(str::trim).collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .unwrap_or_else(|| panic!("no {name}"))
    };
    let (read_cum, write_cum) = (col("read_clat_ns_cumulative"), col("write_clat_ns_cumulative"));
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').map(str::trim).collect()).collect();
    // One row per distinct latency bucket of reads and writes.
    let mut buckets: Vec<&String> = ["read", "write"]
        .iter()
        .flat_map(|d| doc["jobs"][0][*d]["clat_ns"]["bins"].as_object().unwrap().keys())
        .collect();
    buckets.sort();
    buckets.dedup();
    assert_eq!(rows.len(), buckets.len());
    // The last cumulative count of each direction is its number of I/Os.
    let last = |c: usize| -> u64 { rows.iter().rev().find_map(|r| r[c].parse().ok()).unwrap() };
    assert_eq!(last(read_cum), doc["jobs"][0]["read"]["total_ios"].as_u64().unwrap());
    assert_eq!(last(write_cum), doc["jobs"][0]["write"]["total_ios"].as_u64().unwrap());
}
