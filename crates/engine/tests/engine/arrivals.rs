//! `rate.arrivals = "poisson"`, sysbench's `--rate`: the group's operations arrive at random at
//! the rate, each taken by the next free thread, and each one's latency counts from its arrival.

use crate::common::{op, run_ok, workload};
use fslab_engine::workload::OpKind;
use fslab_engine::Workload;
use fslab_testkit::tempdir;

/// Stats of a few empty files by `threads` threads, `rate` arriving a second, for `time`; each
/// thread pausing `delay` after each.
fn stats(threads: u32, rate: u64, time: &str, delay: &str) -> String {
    format!(
        r#"name = "arrivals"
stop = {{ time = "{time}" }}

[[fileset]]
name = "fs"
files = 8
size = "0"

[[group]]
name = "g"
threads = {threads}
fileset = "fs"
delay = "{delay}"
rate = {{ ops = {rate}, arrivals = "poisson" }}

[[group.op]]
op = "stat"
"#
    )
}

#[test]
fn the_group_s_operations_come_at_the_rate_whatever_its_threads() {
    // 2 s at 1000 a second: 2000 expected; a Poisson count's spread is 45, and the bounds are
    // five times that.
    let w = workload(&stats(3, 1000, "2s", "0ms"));
    let r = run_ok(&w, tempdir().path());
    let s = op(&r, OpKind::Stat);
    assert!((1775..=2225).contains(&s.count), "{} stats in 2 s at 1000/s", s.count);
    // The threads were free: each stat's latency is its own, microseconds.
    assert!(s.latency.p50_us < 1000.0, "{:?}", s.latency);
}

#[test]
fn operations_that_wait_for_a_thread_count_the_wait_in_their_latency() {
    // One thread that can take an operation every 20 ms, asked for 200 a second: the backlog
    // grows by 150 a second, and the operations' waits with it.
    let w = workload(&stats(1, 200, "1500ms", "20ms"));
    let r = run_ok(&w, tempdir().path());
    let s = op(&r, OpKind::Stat);
    assert!((20..=80).contains(&s.count), "{} stats at one per 20 ms", s.count);
    // The last ones waited most of a second; the mean wait is half that.
    assert!(s.latency.max_us > 500_000.0, "{:?}", s.latency);
    assert!(s.latency.mean_us > 200_000.0, "{:?}", s.latency);
}

#[test]
fn more_operations_waiting_than_the_queue_holds_fail_the_run() {
    // 100,000 a second for a thread that takes one a millisecond: 100 wait within about a
    // millisecond, long before the 5 s are up.
    let text = stats(1, 100_000, "5s", "1ms").replace("arrivals = \"poisson\"", "arrivals = \"poisson\", queue = 100");
    let r = crate::common::try_run(&workload(&text), tempdir().path()).unwrap();
    let e = r.first_error.expect("the queue overflows").error;
    assert!(
        e.message.starts_with(fslab_engine::workload::QUEUE_FULL) && e.message.contains("(100 operations)"),
        "{}",
        e.message
    );
    assert_eq!(e.cause, Some(fslab_engine::result::Cause::QueueFull { queue: 100 }));
    assert!(r.duration.as_secs_f64() < 2.0, "the run went on for {:?}", r.duration);
}

#[test]
fn poisson_arrivals_need_a_rate_of_operations() {
    let text = stats(1, 100, "1s", "0ms").replace("ops = 100", "bytes = \"1m\"");
    let e = Workload::from_toml(&text, "w.toml").expect_err("refused").to_string();
    assert!(
        e.starts_with("w.toml:") && e.contains("arrivals = \"poisson\" counts operations: give the rate in ops"),
        "{e}"
    );
    let text = stats(1, 100, "1s", "0ms").replace(", arrivals = \"poisson\"", ", queue = 10");
    let e = Workload::from_toml(&text, "w.toml").expect_err("refused").to_string();
    assert!(e.contains("queue applies to arrivals = \"poisson\""), "{e}");
}
