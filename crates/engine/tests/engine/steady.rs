//! `stop.steady`: a run whose figure levels off stops before its time limit and says when; one
//! that never levels off runs to its limit and says so; a steady condition without a limit, or
//! without a criterion, is refused with its place.

use fslab_engine::result::StopReason;
use fslab_engine::{RunOptions, Workload};
use std::time::Duration;

/// Reads of a cached file, held to 2000 operations a second by the rate limit (as flat a series
/// as a run can give) or, with `rate` empty, as fast as they go. `{steady}` is the stop's steady
/// condition.
fn reads(steady: &str, time: &str, rate: &str) -> Workload {
    let text = format!(
        r#"
name = "paced"
[stop]
time = "{time}"
steady = {steady}
[[fileset]]
name = "data"
files = 1
size = "1m"
[[group]]
name = "readers"
fileset = "data"
{rate}
[[group.op]]
op = "read"
bs = "4k"
"#
    );
    Workload::from_toml(&text, "steady.toml").unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn paced_reads(steady: &str, time: &str) -> Workload {
    reads(steady, time, "rate = { ops = 2000 }")
}

fn run(w: &Workload) -> fslab_engine::RunResult {
    let dir = tempfile::tempdir().unwrap();
    let opts = RunOptions {
        dir: dir.path().to_path_buf(),
        ..RunOptions::default()
    };
    fslab_testkit::run_within(w, opts, Duration::from_secs(60)).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn a_run_that_levels_off_stops_early_and_says_when() {
    let r = run(&paced_reads(r#"{ on = "iops", within = "20%", window = "3s" }"#, "30s"));
    assert_eq!(r.stopped_by, StopReason::Steady);
    let steady = r.steady.expect("the steady outcome");
    assert!(steady.reached);
    let at = steady.at_s.expect("when it levelled off");
    // The first whole window: three seconds after the ramp (and a few ticks of slack on a
    // loaded machine), far from the 30 s limit.
    assert!((2.5..15.0).contains(&at), "levelled off at {at} s");
    assert!(r.duration < Duration::from_secs(20), "{:?}", r.duration);
    let mean = steady.mean.unwrap();
    assert!((1000.0..3000.0).contains(&mean), "mean IOPS {mean}");
}

#[test]
fn a_run_that_never_levels_off_runs_to_its_limit_and_says_so() {
    // Unpaced reads count hundreds of thousands a second, never the same count twice; a paced
    // run can count exactly 2000 every second and so meet even a millionth.
    let r = run(&reads(
        r#"{ on = "iops", within = "0.0001%", window = "2s" }"#,
        "4s",
        "",
    ));
    assert_eq!(r.stopped_by, StopReason::Time);
    let steady = r.steady.expect("the steady outcome");
    assert!(!steady.reached);
    assert_eq!(steady.at_s, None);
    assert!(r.duration >= Duration::from_secs(4), "{:?}", r.duration);
}

#[test]
fn a_steady_condition_needs_a_limit_a_criterion_and_a_window() {
    for (steady, time, says) in [
        (
            r#"{ on = "iops", within = "2%", window = "3s" }"#,
            None,
            "needs stop.time",
        ),
        (r#"{ on = "iops", window = "3s" }"#, Some("10s"), "needs `within`"),
        (
            r#"{ on = "iops", within = "2%", window = "1s" }"#,
            Some("10s"),
            "2 seconds at least",
        ),
        (
            r#"{ on = "iops", within = "120%", window = "3s" }"#,
            Some("10s"),
            "above 0 and below 100",
        ),
        (
            r#"{ on = "ops", within = "2%", window = "3s" }"#,
            Some("10s"),
            "unknown variant `ops`",
        ),
    ] {
        let time = time.map(|t| format!("time = \"{t}\"\n")).unwrap_or_default();
        let text = format!(
            "name = \"s\"\n[stop]\n{time}ops = 10\nsteady = {steady}\n[[fileset]]\nname = \"d\"\n[[group]]\nname = \"g\"\nfileset = \"d\"\n[[group.op]]\nop = \"stat\"\n"
        );
        let e = Workload::from_toml(&text, "s.toml").unwrap_err().to_string();
        assert!(e.starts_with("s.toml:"), "{e}");
        assert!(e.contains(says), "{steady}: {e}");
    }
    // The condition round-trips through --explain's TOML.
    let w = paced_reads(r#"{ on = "throughput", slope = "0.5%", window = "10s" }"#, "1m");
    let back = Workload::from_toml(&w.to_toml(), "explained.toml").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(back, w);
}
