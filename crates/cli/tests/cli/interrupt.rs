//! Stopping a run from outside: Ctrl-C stops the workers, prints the partial figures marked so,
//! removes the temporary directory the run made and exits 130; a reader that closes the output
//! (`| head -1`) ends the run quietly (exit 141), with no thread left running. And input that
//! used to panic: a thread count no machine gives, a duration no clock holds.

use crate::common::{fslab_command, fslab_in, HANG};
use fslab_testkit::entries;
use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::{Duration, Instant};

#[test]
fn ctrl_c_prints_the_partial_result_removes_the_run_directory_and_exits_130() {
    // A temporary directory of the test's own, where fslab makes its run directory.
    let tmp = tempfile::tempdir().unwrap();
    let child = fslab_command(
        None,
        &[("TMPDIR", tmp.path())],
        &["run", "--op", "randread", "--size", "8m", "--time", "60s", "--json"],
    )
    .spawn()
    .expect("start fslab");
    // Wait until the run directory exists and the run is under way.
    let t0 = Instant::now();
    while entries(tmp.path()).is_empty() && t0.elapsed() < HANG {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        entries(tmp.path())[0].starts_with("fslab-run-"),
        "{:?}",
        entries(tmp.path())
    );
    std::thread::sleep(Duration::from_millis(1500));
    let pid = child.id().to_string();
    assert!(std::process::Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .unwrap()
        .success());
    let run = crate::common::finish(child, &["run (interrupted)"], HANG);
    assert_eq!(run.code, 130, "{}", run.stderr);
    let outcome = fslab_classic::Outcome::from_json(&run.stdout).unwrap_or_else(|e| panic!("{e}:\n{}", run.stdout));
    assert!(outcome.interrupted, "the outcome says it is partial");
    let result = &outcome.phases[0].result;
    assert_eq!(result.stopped_by, fslab_engine::result::StopReason::Interrupted);
    assert!(result.totals.ops > 0, "the figures so far are kept");
    assert!(result.duration < Duration::from_secs(30), "{:?}", result.duration);
    assert!(run.stderr.contains("interrupted after"), "{}", run.stderr);
    assert!(
        entries(tmp.path()).is_empty(),
        "the run's temporary directory is removed"
    );
}

#[test]
fn a_closed_output_ends_the_run_quietly_and_leaves_no_thread_running() {
    let dir = tempfile::tempdir().unwrap();
    let load = dir.path().join("load.txt");
    std::fs::write(
        &load,
        "NTCreateX \"\\\\clients\\\\client1\\\\f\" 0x40 0x5 1 NT_STATUS_OK\nWriteX 1 0 4096 4096 NT_STATUS_OK\nClose 1 NT_STATUS_OK\n",
    )
    .unwrap();
    let run_dir = dir.path().join("run");
    std::fs::create_dir(&run_dir).unwrap();
    let mut child = fslab_command(
        None,
        &[],
        &[
            "dbench",
            "-c",
            load.to_str().unwrap(),
            "-D",
            run_dir.to_str().unwrap(),
            "-t",
            "30",
            "2",
        ],
    )
    .stderr(Stdio::null())
    .spawn()
    .expect("start fslab");
    // Read one line, then close the pipe, as `| head -1` does.
    let t0 = Instant::now();
    {
        let mut first = String::new();
        let mut reader = BufReader::new(child.stdout.take().unwrap());
        reader.read_line(&mut first).unwrap();
        assert!(!first.is_empty());
    }
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "fslab went on after its output was closed"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(141), "{status}");
    assert!(
        t0.elapsed() < Duration::from_secs(15),
        "stopped {:?} after the pipe closed, of a 30 s run",
        t0.elapsed()
    );
    assert!(
        std::fs::read_dir(&run_dir).unwrap().next().is_none(),
        "dbench's clients' directories are cleaned up"
    );
}

#[test]
fn explain_into_a_closed_pipe_is_no_panic() {
    let mut child = fslab_command(None, &[], &["run", "--op", "read", "--time", "1s", "--explain"])
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(matches!(out.status.code(), Some(0 | 141)), "{:?}", out.status);
}

#[test]
fn a_thread_count_or_a_duration_no_machine_holds_is_refused_not_a_panic() {
    let r = fslab_in(
        None,
        &[],
        &[
            "run",
            "--op",
            "randread",
            "--threads",
            "100000",
            "--size",
            "1m",
            "--time",
            "1s",
        ],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("asks for 100000 threads in all; fslab runs at most 10000"),
        "{}",
        r.stderr
    );
    let r = fslab_in(
        None,
        &[],
        &[
            "run",
            "--op",
            "randread",
            "--time",
            "18446744073709551616",
            "--size",
            "1m",
        ],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("too long"), "{}", r.stderr);
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
}

/// Ctrl-C while fslab still reads its input (dbench's loadfile, here a FIFO the test holds open
/// until the signal is sent) ends it with 130, having run nothing, instead of killing it.
#[test]
fn ctrl_c_while_the_input_is_read_exits_130_having_run_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("loadfile");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let run_dir = dir.path().join("run");
    std::fs::create_dir(&run_dir).unwrap();
    let args = [
        "dbench",
        "-c",
        fifo.to_str().unwrap(),
        "-D",
        run_dir.to_str().unwrap(),
        "-t",
        "5",
        "1",
    ];
    let child = fslab_command(None, &[], &args).spawn().expect("start fslab");
    // Opening the FIFO to write returns once fslab has opened it to read: it is reading its input.
    let path = fifo.clone();
    let mut writer = fslab_testkit::within(HANG, "fslab opening its loadfile", move || {
        std::fs::OpenOptions::new().write(true).open(path).unwrap()
    });
    assert!(std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap()
        .success());
    std::io::Write::write_all(&mut writer, b"Mkdir \"\\\\clients\" NT_STATUS_OK\n").unwrap();
    drop(writer);
    let run = crate::common::finish(child, &args, HANG);
    assert_eq!(run.code, 130, "{}", run.stderr);
    assert!(
        run.stderr.contains("interrupted before the run started"),
        "{}",
        run.stderr
    );
    assert_eq!(run.stdout, "");
    assert!(entries(&run_dir).is_empty(), "{:?}", entries(&run_dir));
}
