//! `fslab dbench` from the outside: dbench's output, --json, --explain, exit codes, and that bad
//! input runs nothing.

use crate::common::fslab_in;
use fslab_testkit::{entries, Run};
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

const LOAD: &str = r#"Deltree "\clients\client1" NT_STATUS_OK
Mkdir "\clients" NT_STATUS_OK
NTCreateX "\clients\client1\d" 0x1 0x2 1 NT_STATUS_OK
Close 1 NT_STATUS_OK
NTCreateX "\clients\client1\d\f.txt" 0x40 0x5 2 NT_STATUS_OK
WriteX 2 0 65536 65536 NT_STATUS_OK
ReadX 2 0 65536 65536 NT_STATUS_OK
QUERY_PATH_INFORMATION "\clients\client1\d\f.txt" 1004 NT_STATUS_OK
Close 2 NT_STATUS_OK
"#;

/// Runs `fslab dbench ARGS`.
fn dbench(args: &[&str]) -> Run {
    fslab_in(None, &[], &[&["dbench"], args].concat())
}

fn write_load(dir: &Path, text: &str) -> String {
    write_named(dir, "load.txt", text)
}

fn write_named(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

#[test]
fn a_run_prints_dbench_s_lines_table_and_throughput_and_cleans_up() {
    let files = tempfile::tempdir().unwrap();
    let run_dir = tempfile::tempdir().unwrap();
    let load = write_load(files.path(), LOAD);
    let r = dbench(&[
        "-c",
        &load,
        "-D",
        run_dir.path().to_str().unwrap(),
        "-t",
        "2",
        "--warmup",
        "1",
        "2",
    ]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let out = &r.stdout;
    assert!(out.contains("Running for 2 seconds with load"), "{out}");
    let warm: Vec<&str> = out.lines().filter(|l| l.contains("MB/sec  warmup ")).collect();
    let exec: Vec<&str> = out.lines().filter(|l| l.contains("MB/sec  execute ")).collect();
    assert_eq!(warm.len(), 1, "{out}");
    assert_eq!(exec.len(), 2, "{out}");
    assert!(
        exec[1].starts_with("   2 ") && exec[1].contains(" MB/sec  execute   2 sec  latency "),
        "{out}"
    );
    assert!(out.contains("   2  cleanup   2 sec"), "{out}");
    assert!(out.contains(" Operation      Count    AvgLat    MaxLat"), "{out}");
    for op in ["NTCreateX", "Close", "WriteX", "ReadX", "Qpathinfo", "Deltree", "Mkdir"] {
        assert!(
            out.lines().any(|l| l.starts_with(&format!(" {op} "))),
            "{op} row:\n{out}"
        );
    }
    assert!(!out.contains("(resolve)") && !out.contains("Mismatch"), "{out}");
    // dbench's Throughput is the last execute line's MB/sec.
    let last_mb = exec[1].split_whitespace().nth(2).unwrap();
    let tp = out
        .lines()
        .find(|l| l.starts_with("Throughput "))
        .expect("Throughput line");
    assert!(tp.contains("2 clients  2 procs  max_latency="), "{tp}");
    let tp_mb: f64 = tp.split_whitespace().nth(1).unwrap().parse().unwrap();
    assert!(
        (tp_mb - last_mb.parse::<f64>().unwrap()).abs() < 0.006,
        "{tp} vs {last_mb}"
    );
    assert!(out.contains("Mean ") && out.contains("fslab's figure"), "{out}");
    assert_eq!(entries(run_dir.path()), Vec::<String>::new(), "dbench cleans up");
}

#[test]
fn json_is_one_document_with_dbench_s_figures() {
    let files = tempfile::tempdir().unwrap();
    let run_dir = tempfile::tempdir().unwrap();
    let load = write_load(files.path(), LOAD);
    let r = dbench(&[
        "-c",
        &load,
        "-D",
        run_dir.path().to_str().unwrap(),
        "-t",
        "1",
        "--json",
        "--skip-cleanup",
        "3",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}:\n{}", r.stdout));
    assert_eq!(v["schema_version"], 2);
    assert_eq!(v["tool"], "dbench");
    let c = &v["figures"];
    assert_eq!((c["clients"].as_u64(), c["warmup_secs"].as_u64()), (Some(3), Some(0)));
    let seconds = c["seconds"].as_array().unwrap();
    assert_eq!(seconds.len(), 1);
    assert_eq!(c["throughput_mb_per_sec"], seconds[0]["mb_per_sec"]);
    // The headline is dbench's Throughput, in its MB/sec.
    let headline = &v["metrics"][0];
    assert_eq!(
        (headline["name"].as_str(), headline["headline"].as_bool()),
        (Some("Throughput"), Some(true))
    );
    assert_eq!(headline["value"], c["throughput_mb_per_sec"]);
    assert!(
        v["report"].as_str().unwrap().contains("Throughput "),
        "the text dbench prints is kept"
    );
    let ops = c["operations"].as_array().unwrap();
    let writes = ops.iter().find(|o| o["name"] == "WriteX").expect("a WriteX row");
    assert!(writes["count"].as_u64().unwrap() > 0);
    // The compiled steps are left out of the document (client.txt has 458,344 of them); their
    // number and the loadfile they came from stay.
    let script = &v["phases"][0]["result"]["workload"]["group"][0]["script"];
    assert_eq!(script["step"].as_array().map(Vec::len), Some(0), "{script}");
    assert_eq!(script["source"].as_str(), Some(load.as_str()));
    assert_eq!(c["script_steps"].as_u64(), Some(9), "one step a loadfile line");
    // --skip-cleanup: the clients' directories stay.
    assert_eq!(
        entries(&run_dir.path().join("clients")),
        vec!["client0", "client1", "client2"]
    );
}

#[test]
fn explain_prints_the_script_and_runs_nothing() {
    let files = tempfile::tempdir().unwrap();
    let run_dir = tempfile::tempdir().unwrap();
    let load = write_load(files.path(), LOAD);
    let r = dbench(&[
        "-c",
        &load,
        "-D",
        run_dir.path().to_str().unwrap(),
        "-t",
        "60",
        "--explain",
        "4",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let w = fslab_engine::Workload::from_toml(&r.stdout, "explain").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(w.groups[0].threads, 4);
    assert_eq!(w.stop.ramp.0, Duration::from_secs(12));
    let s = w.groups[0].script.as_ref().unwrap();
    assert_eq!(s.base, "clients/client{thread}");
    assert!(r.stdout.contains("path = \"d/f.txt\""), "{}", r.stdout);
    assert_eq!(entries(run_dir.path()), Vec::<String>::new());
}

#[test]
fn bad_input_names_the_line_or_option_exits_2_and_creates_nothing() {
    let files = tempfile::tempdir().unwrap();
    let run_dir = tempfile::tempdir().unwrap();
    let dir = run_dir.path().to_str().unwrap();
    let bad = write_load(
        files.path(),
        "Close 1 NT_STATUS_OK\nClose 2 NT_STATUS_OK\nCLOSE 3 NT_STATUS_OK\n",
    );
    let good = write_named(files.path(), "good.txt", LOAD);
    let cases: Vec<(Vec<&str>, String)> = vec![
        (
            vec!["-c", &bad, "-D", dir, "2"],
            format!("{bad}:3: unknown operation `CLOSE`"),
        ),
        (vec!["-c", &good, "-D", dir, "0"], "NPROCS: ".into()),
        (vec!["-c", &good, "-D", dir, "-t", "0", "1"], "-t: ".into()),
        (vec!["-c", &good, "-D", dir, "-x", "1"], "'-x'".into()),
        (vec!["-c", &good, "-D", dir, "-t", "ten", "1"], "'ten'".into()),
        (
            vec!["-c", "/nonexistent/load.txt", "-D", dir, "1"],
            "/nonexistent/load.txt".into(),
        ),
        (
            vec!["-c", &good, "-D", "/nonexistent/dir", "1"],
            "-D /nonexistent/dir".into(),
        ),
    ];
    for (args, want) in cases {
        let r = dbench(&args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(&want), "{args:?}: want {want:?} in {}", r.stderr);
        assert_eq!(r.stdout, "", "{args:?}");
        assert_eq!(entries(run_dir.path()), Vec::<String>::new(), "{args:?}");
    }
}
