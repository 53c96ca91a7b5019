//! `fslab sysbench` from the outside: prepare, run and cleanup with sysbench's syntax, the text
//! sysbench prints, `--json`, `--explain`, the old option spellings, and the exit codes of bad
//! input.

use crate::common::fslab_in;
use fslab_testkit::{entries, require_tool, tempdir, Run};
use serde_json::Value;
use std::path::Path;

type Out = Run;

/// Runs `fslab sysbench ARGS` in `cwd`.
fn sysbench(cwd: &Path, args: &[&str]) -> Out {
    fslab_in(Some(cwd), &[], &[&["sysbench"], args].concat())
}

fn ok(cwd: &Path, args: &[&str]) -> Out {
    let out = sysbench(cwd, args);
    assert_eq!(out.code, 0, "fslab sysbench {args:?}: {}{}", out.stdout, out.stderr);
    out
}

const SET: [&str; 3] = ["fileio", "--file-num=4", "--file-total-size=1M"];

fn with(extra: &[&'static str]) -> Vec<&'static str> {
    let mut a = SET.to_vec();
    a.extend(extra);
    a
}

#[test]
fn prepare_run_cleanup_in_the_current_directory() {
    let d = tempdir();
    let out = ok(d.path(), &with(&["prepare"]));
    assert!(out
        .stdout
        .contains("\n4 files, 256Kb each, 1Mb total\nCreating files for the test...\n"));
    assert!(out
        .stdout
        .contains("Creating file test_file.3\n1048576 bytes written in "));
    std::fs::write(d.path().join("notes.txt"), "the user's").unwrap();
    for i in 0..4 {
        let f = d.path().join(format!("test_file.{i}"));
        assert_eq!(
            std::fs::metadata(&f).map(|m| m.len()).ok(),
            Some(262144),
            "{}",
            f.display()
        );
    }

    let out = ok(
        d.path(),
        &with(&[
            "--file-test-mode=rndrw",
            "--events=500",
            "--time=0",
            "--threads=2",
            "run",
        ]),
    );
    let s = &out.stdout;
    for line in [
        "\nRunning the test with following options:\nNumber of threads: 2\n",
        "\n4 files, 256KiB each\n1MiB total file size\nBlock size 16KiB\nNumber of IO requests: 500\n",
        "\nDoing random r/w test\nInitializing worker threads...\n\nThreads started!\n\n\nFile operations:\n    reads/s: ",
        "\nGeneral statistics:\n    total time:                          ",
        "\n    total number of events:              500\n",
        "\n         95th percentile:   ",
        // The threads take the 500 events between them, each the next while it is free.
        "\nThreads fairness:\n    events (avg/stddev):           250.0000/",
    ] {
        assert!(s.contains(line), "no {line:?} in:\n{s}");
    }
    assert!(s.ends_with("\n\n"));
    // sysbench's data, prepared and written: zeros (its buffers, zeroed when allocated, are
    // only filled with --validate).
    for i in 0..4 {
        let data = std::fs::read(d.path().join(format!("test_file.{i}"))).unwrap();
        assert_eq!(data.len(), 262144);
        assert!(
            data.iter().all(|&b| b == 0),
            "test_file.{i} holds other bytes than zeros"
        );
    }

    let out = ok(d.path(), &["fileio", "cleanup"]);
    assert!(out.stdout.ends_with("\nRemoving test files...\n"));
    assert_eq!(
        entries(d.path()),
        ["notes.txt"],
        "cleanup leaves only what was there before"
    );
}

#[test]
fn json_is_one_document_with_sysbenchs_figures() {
    let d = tempdir();
    ok(d.path(), &with(&["--dir", ".", "prepare", "--json"]));
    let out = ok(
        d.path(),
        &with(&[
            "--file-test-mode=rndwr",
            "--file-fsync-freq=5",
            "--events=27",
            "--time=0",
            "--json",
            "run",
        ]),
    );
    let v: Value = serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}:\n{}", out.stdout));
    assert_eq!(v["schema_version"], 2);
    assert_eq!(v["tool"], "sysbench");
    let c = &v["figures"];
    // Three rounds of 5 writes and a burst of 4 fsyncs (one per file) make the 27 events; then
    // the 4 end fsyncs, counted in fsyncs but not in events.
    let (writes, fsyncs, events) = (c["writes"].as_u64(), c["fsyncs"].as_u64(), c["events"].as_u64());
    assert_eq!((writes, fsyncs, events), (Some(15), Some(16), Some(27)));
    assert_eq!(c["end_fsyncs"], 4);
    assert!(c["latency_ms"]["percentile_value"].is_number());
    // sysbench's own figures are the outcome's metrics, by sysbench's names.
    let metric = |name: &str| {
        v["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == name)
            .unwrap_or_else(|| panic!("no `{name}` metric in {}", v["metrics"]))
            .clone()
    };
    assert_eq!(metric("writes/s")["value"], c["writes_per_sec"]);
    assert_eq!(metric("fsyncs/s")["value"], c["fsyncs_per_sec"]);
    assert_eq!(metric("latency p95")["higher_is_better"], false);
}

#[test]
fn histogram_prints_sysbench_s_slots_before_the_report() {
    let d = tempdir();
    ok(d.path(), &with(&["prepare"]));
    let run = |extra: &[&'static str]| {
        let mut args = with(&["--file-test-mode=rndrd", "--events=300", "--time=0", "--histogram"]);
        args.extend(extra);
        args.push("run");
        ok(d.path(), &args)
    };
    let s = run(&[]).stdout;
    let (_, table) = s
        .split_once("Threads started!\n\nLatency histogram (values are in milliseconds)\n")
        .unwrap_or_else(|| panic!("no histogram after the start:\n{s}"));
    let (table, report) = table
        .split_once(" \n")
        .expect("the line of one space after the histogram");
    assert!(report.starts_with("\nFile operations:\n"), "{s}");
    let mut rows = table.lines();
    assert_eq!(
        rows.next(),
        Some("       value  ------------- distribution ------------- count")
    );
    // Each row: the slot's value, 12 wide with 3 decimals; a bar, 40 stars at the fullest; the
    // count. The counts add up to the 300 events.
    let (mut events, mut fullest, mut values) = (0, 0, Vec::new());
    for row in rows {
        let (value, rest) = row.split_once(" |").unwrap_or_else(|| panic!("{row:?}"));
        assert_eq!(value.len(), 12, "{row:?}");
        values.push(value.trim().parse::<f64>().unwrap());
        let (bar, count) = (&rest[..40], rest[41..].parse::<u64>().unwrap());
        assert!(bar.trim_end().chars().all(|c| c == '*'), "{row:?}");
        events += count;
        fullest = fullest.max(bar.trim_end().len());
    }
    assert_eq!((events, fullest), (300, 40), "{table}");
    assert!(values.windows(2).all(|w| w[0] <= w[1]), "{table}");
    // The percentile is one of the slots' values, as sysbench's.
    let p95 = report
        .lines()
        .find_map(|l| l.trim().strip_prefix("95th percentile:"))
        .map(|v| v.trim().parse::<f64>().unwrap())
        .expect("a 95th percentile line");
    assert!(
        values.iter().any(|v| (v - p95).abs() < 0.006),
        "{p95} not among {values:?}"
    );

    // --json carries the slots.
    let v: Value = serde_json::from_str(&run(&["--json"]).stdout).unwrap();
    let rows = v["figures"]["latency_ms"]["histogram"]
        .as_array()
        .expect("the histogram's slots");
    assert_eq!(rows.iter().map(|r| r[1].as_u64().unwrap()).sum::<u64>(), 300);
    // As sysbench, no histogram without a percentile.
    let out = sysbench(
        d.path(),
        &with(&["--histogram", "--percentile=0", "--file-test-mode=rndrd", "run"]),
    );
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("--histogram: cannot be used with --percentile=0"),
        "{}",
        out.stderr
    );
}

#[test]
fn verbosity_quiets_everything_below_3_and_says_why_the_run_ended_at_4() {
    let d = tempdir();
    // 0 to 2: nothing on stdout, the work still done.
    for (command, extra) in [
        ("prepare", None),
        ("run", Some("--file-test-mode=rndrd")),
        ("cleanup", None),
    ] {
        let mut args = with(&["--verbosity=0", "--events=50", "--time=0"]);
        args.extend(extra);
        args.push(command);
        let out = ok(d.path(), &args);
        assert_eq!(out.stdout, "", "{command}");
        let files = entries(d.path()).iter().filter(|n| n.starts_with("test_file.")).count();
        assert_eq!(files, if command == "cleanup" { 0 } else { 4 }, "{command}");
    }
    ok(d.path(), &with(&["prepare"]));
    // 4: each thread's reason, folded as sysbench's logger folds repeats, then Done.
    let out = ok(
        d.path(),
        &with(&[
            "--verbosity=4",
            "--threads=2",
            "--events=200",
            "--time=0",
            "--file-test-mode=rndwr",
            "run",
        ]),
    );
    assert!(
        out.stdout.contains(
            "Threads started!\n\nEvent limit exceeded, exiting...\n(last message repeated 1 times)\nDone.\n\n\nFile operations:\n"
        ),
        "{}",
        out.stdout
    );
    let out = ok(
        d.path(),
        &with(&["--verbosity=4", "--time=1", "--file-test-mode=rndrd", "run"]),
    );
    assert!(
        out.stdout
            .contains("\n\nTime limit exceeded, exiting...\nDone.\n\n\nFile operations:\n"),
        "{}",
        out.stdout
    );
}

#[test]
fn another_front_end_s_files_beside_the_prepared_ones_are_refused_and_both_sets_survive() {
    let d = tempdir();
    ok(d.path(), &with(&["prepare"]));
    let before = entries(d.path());
    // IOzone's files would go beside them, its marker replacing sysbench's: refused, untouched.
    let out = crate::common::fslab_in(
        Some(d.path()),
        &[],
        &["iozone", "-t", "1", "-i", "0", "-s", "64k", "--pause", "0"],
    );
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr
            .contains("holds `test_file.0`, which fslab made for another fileset there"),
        "{}",
        out.stderr
    );
    assert_eq!(entries(d.path()), before);
    // sysbench's own cleanup still knows its files.
    ok(d.path(), &with(&["cleanup"]));
    assert!(entries(d.path()).is_empty(), "{:?}", entries(d.path()));
}

#[test]
fn explain_prints_the_workload_and_runs_nothing() {
    let d = tempdir();
    let out = ok(d.path(), &with(&["--file-test-mode=seqrewr", "--explain", "run"]));
    for part in [
        "prefix = \"test_file.\"",
        "files = 4",
        "op = \"rewrite\"",
        "scope = \"shared\"",
        "wrap = true",
    ] {
        assert!(out.stdout.contains(part), "no {part} in:\n{}", out.stdout);
    }
    // The deliberate differences from sysbench come first, as comments; the rest is the workload.
    assert!(
        out.stdout
            .starts_with("# fslab sysbench makes sysbench 1.0.20 fileio's system calls")
            && out
                .stdout
                .contains("# - prepare removes an earlier set's test files beyond --file-num"),
        "{}",
        out.stdout
    );
    let w = fslab_engine::Workload::from_toml(&out.stdout, "explain").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(w.filesets[0].files, 4);
    assert!(entries(d.path()).is_empty(), "--explain made something");
}

#[test]
fn the_old_spellings_work_on_the_command_line() {
    let d = tempdir();
    ok(
        d.path(),
        &["--test=fileio", "--file-num=4", "--file-total-size=1M", "prepare"],
    );
    let out = ok(
        d.path(),
        &[
            "--test=fileio",
            "--num-threads=2",
            "--max-time=0",
            "--max-requests=200",
            "--file-num=4",
            "--file-total-size=1M",
            "--file-test-mode=rndrd",
            "run",
        ],
    );
    assert!(out.stdout.contains("Number of threads: 2\n"));
    assert!(out.stdout.contains("    total number of events:              200\n"));
}

#[test]
fn bad_options_name_the_option_exit_2_and_make_nothing() {
    let d = tempdir();
    for (args, says) in [
        (
            with(&["--threads=abc", "prepare"]),
            "--threads: `abc` is not a whole number",
        ),
        (with(&["--file-io-mode=fast", "prepare"]), "--file-io-mode: `fast`"),
        (
            with(&["--no-such-option=1", "prepare"]),
            "--no-such-option: unknown option",
        ),
        (with(&["--file-test-mode=rndrd", "--time=0", "run"]), "--time:"),
        (with(&["run"]), "--file-test-mode: missing"),
        (vec!["oltp", "run"], "fileio test only"),
    ] {
        let out = sysbench(d.path(), &args);
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains(says), "{args:?}: {}", out.stderr);
        assert!(out.stdout.is_empty(), "{args:?} printed {}", out.stdout);
    }
    assert_eq!(
        std::fs::read_dir(d.path()).unwrap().count(),
        0,
        "bad input created something"
    );
}

/// The blocks of `test_file.N` in `dir` that do not carry sysbench's --validate trailer: the
/// CRC-32 of the block's bytes, then its offset, little-endian.
fn unchecked_blocks(dir: &Path, file: u64) -> Vec<usize> {
    let data = std::fs::read(dir.join(format!("test_file.{file}"))).unwrap();
    assert_eq!(data.len() % 16384, 0);
    let mut bad = Vec::new();
    for (k, b) in data.chunks(16384).enumerate() {
        let crc = crc32fast::hash(&b[..16372]).to_le_bytes();
        if b[16372..16376] != crc || b[16376..] != ((k * 16384) as u64).to_le_bytes() {
            bad.push(k * 16384);
        }
    }
    bad
}

#[test]
fn validate_writes_checksums_checks_them_and_stops_at_a_changed_block_as_sysbench_does() {
    let d = tempdir();
    ok(d.path(), &with(&["--validate", "prepare"]));
    for f in 0..4 {
        assert_eq!(unchecked_blocks(d.path(), f), Vec::<usize>::new(), "test_file.{f}");
    }
    let run = |mode: &'static str| {
        sysbench(
            d.path(),
            &with(&["--validate", mode, "--events=2000", "--time=0", "--threads=2", "run"]),
        )
    };
    let out = run("--file-test-mode=rndrw");
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    for line in [
        "\nNumber of threads: 2\nValidation checks: on.\n\nInitializing random number generator",
        "\nUsing synchronous I/O mode\nUsing checksums validation.\nDoing random r/w test\n",
        "\n    total number of events:              2000\n",
    ] {
        assert!(out.stdout.contains(line), "no {line:?} in:\n{}", out.stdout);
    }
    // Two threads wrote blocks the other read: every block still checks.
    for f in 0..4 {
        assert_eq!(unchecked_blocks(d.path(), f), Vec::<usize>::new(), "test_file.{f}");
    }

    // One byte changed in test_file.2's fourth block: the sequential read stops there.
    let path = d.path().join("test_file.2");
    let mut data = std::fs::read(&path).unwrap();
    data[3 * 16384 + 100] ^= 0x40;
    std::fs::write(&path, &data).unwrap();
    let out = run("--file-test-mode=seqrd");
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    let crc = crc32fast::hash(&data[3 * 16384..4 * 16384 - 12]);
    let stored = u32::from_le_bytes(data[4 * 16384 - 12..4 * 16384 - 8].try_into().unwrap());
    let want = format!(
        "\nThreads started!\n\nFATAL: Checksum mismatch in block with offset: 49152\nFATAL:     Calculated value: \
         0x{crc:x}    Stored value: 0x{stored:x}\nFATAL: Validation failed on file 2, block offset 49152, exiting...\n"
    );
    assert!(out.stdout.ends_with(&want), "{}", out.stdout);
    assert!(
        out.stderr
            .contains("seqread test_file.2: checksum mismatch in the block of 16384 bytes at offset 49152"),
        "{}",
        out.stderr
    );
}

/// Every thread whose read fails the check before it sees the run stop prints its own lines,
/// as each sysbench thread does; `--json` lists those threads' errors after the first.
#[test]
fn validate_prints_a_fatal_block_for_each_thread_that_met_a_bad_block() {
    let d = tempdir();
    ok(d.path(), &with(&["--validate", "prepare"]));
    // Every block of every file fails its check.
    for f in 0..4 {
        let path = d.path().join(format!("test_file.{f}"));
        let mut data = std::fs::read(&path).unwrap();
        data.chunks_mut(16384).for_each(|b| b[100] ^= 0x40);
        std::fs::write(&path, &data).unwrap();
    }
    let args = [
        "--validate",
        "--file-test-mode=rndrd",
        "--events=100",
        "--time=0",
        "--threads=2",
    ];
    let out = sysbench(d.path(), &with(&[&args[..], &["run", "--json"]].concat()));
    assert_eq!(out.code, 1, "{}", out.stderr);
    let doc: Value = serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}:\n{}", out.stdout));
    let error = &doc["phases"][0]["result"]["first_error"];
    let threads = 1 + error["others"].as_array().map_or(0, Vec::len);
    assert!(threads <= 2, "{error}");
    let text = doc["report"].as_str().unwrap();
    let fatal: Vec<&str> = text.lines().filter(|l| l.starts_with("FATAL: ")).collect();
    assert_eq!(
        fatal.len(),
        3 * threads,
        "three lines for each of {threads} thread(s):\n{text}"
    );
    for block in fatal.chunks(3) {
        assert!(
            block[0].starts_with("FATAL: Checksum mismatch in block with offset: "),
            "{text}"
        );
        assert!(block[2].starts_with("FATAL: Validation failed on file "), "{text}");
    }
    assert!(
        text.ends_with(" exiting...\n"),
        "the report follows no FATAL block:\n{text}"
    );
}

#[test]
fn validate_over_files_prepared_without_it_fails_at_the_first_read_as_sysbench_does() {
    let d = tempdir();
    ok(d.path(), &with(&["prepare"]));
    // prepare keeps files of the right size as they are, --validate or not, as sysbench does.
    let out = ok(d.path(), &with(&["--validate", "prepare"]));
    assert!(
        out.stdout
            .ends_with("Reusing existing file test_file.3\nNo bytes written.\n"),
        "{}",
        out.stdout
    );
    assert_eq!(unchecked_blocks(d.path(), 0).len(), 16);
    let out = sysbench(
        d.path(),
        &with(&[
            "--validate",
            "--file-test-mode=rndrd",
            "--events=100",
            "--time=0",
            "run",
        ]),
    );
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    let zeros = crc32fast::hash(&[0u8; 16372]);
    let fatal =
        format!("\nFATAL:     Calculated value: 0x{zeros:x}    Stored value: 0x0\nFATAL: Validation failed on file ");
    assert!(
        out.stdout
            .contains("\nThreads started!\n\nFATAL: Checksum mismatch in block with offset: ")
            && out.stdout.contains(&fatal)
            && !out.stdout.contains("Throughput:"),
        "{}",
        out.stdout
    );
    assert!(
        out.stderr
            .contains("were prepared without --validate: their blocks carry no checksums"),
        "{}",
        out.stderr
    );
    // Writing checked blocks over zeros is what sysbench does too; seqwr then makes its files
    // anew, and a checked sequential read of them passes.
    for mode in [
        "--file-test-mode=rndwr",
        "--file-test-mode=seqwr",
        "--file-test-mode=seqrd",
    ] {
        ok(
            d.path(),
            &with(&["--validate", mode, "--events=300", "--time=0", "run"]),
        );
    }
    for f in 0..4 {
        assert_eq!(unchecked_blocks(d.path(), f), Vec::<usize>::new(), "test_file.{f}");
    }
    let out = sysbench(d.path(), &with(&["--validate", "--file-block-size=8", "prepare"]));
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .contains("--file-block-size: 8 bytes cannot hold --validate's checksum"),
        "{}",
        out.stderr
    );
}

#[test]
fn rate_paces_the_events_and_says_its_target() {
    let d = tempdir();
    ok(d.path(), &with(&["prepare"]));
    let out = ok(
        d.path(),
        &with(&[
            "--file-test-mode=rndrd",
            "--rate=400",
            "--threads=2",
            "--time=2",
            "run",
            "--json",
        ]),
    );
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    let events = doc["figures"]["events"]
        .as_u64()
        .unwrap_or_else(|| panic!("{}", doc["figures"]));
    // 800 expected; a Poisson count's spread is 28.
    assert!((660..=940).contains(&events), "{events} events in 2 s at 400/s");
    let out = ok(
        d.path(),
        &with(&["--file-test-mode=rndrd", "--rate=400", "--events=10", "run"]),
    );
    assert!(
        out.stdout
            .contains("\nNumber of threads: 1\nTarget transaction rate: 400/sec\nInitializing random"),
        "{}",
        out.stdout
    );
    // A rate no thread keeps up with fills sysbench's queue of 131,072 events: the run stops.
    let out = sysbench(
        d.path(),
        &with(&["--file-test-mode=rndrd", "--rate=100000000", "--time=30", "run"]),
    );
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.ends_with(
            "\nThreads started!\n\nFATAL: The event queue is full. This means the worker threads are unable to \
             keep up with the specified event generation rate\n"
        ),
        "{}",
        out.stdout
    );
}

#[test]
fn a_run_after_seqwr_reads_the_files_seqwr_left() {
    use std::os::unix::fs::MetadataExt;
    let d = tempdir();
    ok(d.path(), &with(&["prepare"]));
    ok(
        d.path(),
        &with(&["--file-test-mode=seqwr", "--events=64", "--time=0", "run"]),
    );
    let inodes = || -> Vec<u64> {
        (0..4)
            .map(|i| {
                std::fs::metadata(d.path().join(format!("test_file.{i}")))
                    .unwrap()
                    .ino()
            })
            .collect()
    };
    let before = inodes();
    // sysbench reads what seqwr wrote; fslab wrote the files again here once, since seqwr's
    // marker said no data.
    let out = ok(
        d.path(),
        &with(&["--file-test-mode=seqrd", "--events=64", "--time=0", "run"]),
    );
    assert!(!out.stderr.contains("written again"), "{}", out.stderr);
    assert_eq!(inodes(), before, "the run made the files anew");
}

#[test]
fn run_without_prepare_exits_2_and_says_to_prepare() {
    let d = tempdir();
    let out = sysbench(d.path(), &with(&["--file-test-mode=rndrd", "run"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("/test_file.0'"), "{}", out.stderr);
    assert!(
        out.stderr.contains("--file-num=4 --file-total-size=1m prepare"),
        "{}",
        out.stderr
    );
    assert!(entries(d.path()).is_empty(), "the failed run made something");
}

#[test]
fn report_interval_prints_one_line_per_interval() {
    let d = tempdir();
    ok(d.path(), &with(&["prepare"]));
    for (percentile, label) in [(None, "(ms,95%)"), (Some("--percentile=99"), "(ms,99%)")] {
        let mut args = with(&["--file-test-mode=rndwr", "--time=3", "--report-interval=1"]);
        args.extend(percentile);
        args.push("run");
        let out = ok(d.path(), &args);
        let lines: Vec<&str> = out.stdout.lines().filter(|l| l.starts_with("[ ")).collect();
        // As sysbench: [ 1s ] and [ 2s ], none at the end of the run.
        assert_eq!(lines.len(), 2, "{}", out.stdout);
        for (n, line) in lines.iter().enumerate() {
            assert!(
                line.starts_with(&format!("[ {}s ] reads: 0.00 MiB/s writes: ", n + 1)),
                "{line}"
            );
            // The interval's percentile of its events' latency, in ms with three decimals.
            let (text, ms) = line.rsplit_once(' ').unwrap();
            assert!(text.ends_with(&format!("/s latency {label}:")), "{line}");
            let ms: f64 = ms.parse().unwrap_or_else(|e| panic!("{line}: {e}"));
            assert!(ms > 0.0 && ms < 10_000.0, "{line}");
            assert_eq!(line.rsplit_once('.').map(|d| d.1.len()), Some(3), "{line}");
        }
    }
}

/// The fsync() and fdatasync() calls of `fslab ARGS` (with `--dir DIR`), from strace.
fn syncs(dir: &Path, args: &[&str]) -> (usize, usize) {
    let log = dir.join("strace.log");
    let status = std::process::Command::new("strace")
        .args(["-f", "-qq", "-e", "trace=fsync,fdatasync", "-o"])
        .arg(&log)
        .arg(env!("CARGO_BIN_EXE_fslab"))
        .args(["sysbench", "--dir"])
        .arg(dir)
        .args(args)
        .stdout(std::process::Stdio::null())
        .status()
        .expect("this test needs strace to see the sync calls (apt-get install strace)");
    assert!(status.success(), "strace fslab sysbench {args:?}: {status}");
    let text = std::fs::read_to_string(&log).unwrap();
    std::fs::remove_file(&log).unwrap();
    let calls = |name: &str| text.lines().filter(|l| l.contains(&format!("{name}("))).count();
    (calls("fsync"), calls("fdatasync"))
}

#[test]
#[ignore = "system tier: strace"]
fn fsync_mode_fdatasync_applies_to_the_bursts_and_the_end() {
    require_tool("strace", "strace");
    let d = tempdir();
    ok(d.path(), &with(&["prepare"]));
    // 21 events: 3 bursts of 4 after every 3 writes; then 4 at the end: 16 syncs.
    let run = with(&[
        "--file-test-mode=rndwr",
        "--file-fsync-freq=3",
        "--events=21",
        "--time=0",
    ]);
    assert_eq!(syncs(d.path(), &[&run[..], &["run"]].concat()), (16, 0));
    let fdatasync = [&run[..], &["--file-fsync-mode=fdatasync", "run"]].concat();
    assert_eq!(syncs(d.path(), &fdatasync), (0, 16));
}

/// The calls of kinds `trace`, by process, that `fslab sysbench` with `run_opts` and
/// `--time=0 run` makes under strace, on files prepared in a directory of its own.
fn traced_run(run_opts: &[&'static str], trace: &str) -> Vec<(String, String)> {
    require_tool("strace", "strace");
    let d = tempdir();
    ok(d.path(), &with(&["prepare"]));
    let run = with(&[run_opts, &["--time=0", "run"]].concat());
    let args: Vec<&str> = [&["sysbench"], &run[..]].concat();
    crate::common::strace_fslab(Some(d.path()), &d.path().join("strace.log"), trace, &args)
}

/// sysbench 1.0.20's mmap mode maps every file once, whole, on its main thread after opening
/// them all and before its threads start (`file_mmap_prepare()`; seqwr first gives each file
/// its size with `ftruncate()`); its threads copy to and from those mappings and msync them;
/// `file_done()` closes the files, then unmaps them. Traced for 4 threads (sysbench under
/// strace: 4 opens, 4 mmaps, msyncs of those 4 addresses from the threads, 4 closes, then 4
/// munmaps; no pread or pwrite).
#[test]
#[ignore = "system tier: strace"]
fn mmap_mode_maps_every_file_once_for_every_thread_as_sysbench_does() {
    for mode in ["--file-test-mode=rndrw", "--file-test-mode=seqwr"] {
        let calls = traced_run(
            &[mode, "--file-io-mode=mmap", "--threads=4", "--events=400"],
            "openat,ftruncate,mmap,munmap,msync,close,pread64,pwrite64",
        );
        // strace pads a call's result: `close(5)     = 0` reads `close(5) = 0`.
        let calls: Vec<(String, String)> = calls
            .into_iter()
            .map(|(t, c)| (t, c.split_whitespace().collect::<Vec<_>>().join(" ")))
            .collect();
        let of_test_file = |c: &&(String, String)| c.1.contains("\"test_file.") && c.1.contains("O_RDWR");
        let opens: Vec<&(String, String)> = calls.iter().filter(of_test_file).collect();
        assert_eq!(opens.len(), 4, "{mode}: {opens:#?}");
        let main = &opens[0].0;
        let fds: Vec<String> = opens
            .iter()
            .map(|(_, c)| c.rsplit("= ").next().unwrap().trim().to_string())
            .collect();
        let last_open = calls.iter().rposition(|c| of_test_file(&c)).unwrap();
        let size = 262_144;
        // The mappings, one per file, in order, on the main thread after the last open.
        let maps: Vec<(usize, &(String, String))> = calls
            .iter()
            .enumerate()
            .filter(|(_, (_, c))| c.starts_with("mmap(") && c.contains("MAP_SHARED,"))
            .collect();
        assert_eq!(maps.len(), 4, "{mode}: one mapping of each file, made once: {maps:#?}");
        let mut addrs = Vec::new();
        for ((k, (tid, c)), fd) in maps.iter().zip(&fds) {
            assert!(
                c.starts_with(&format!(
                    "mmap(NULL, {size}, PROT_READ|PROT_WRITE, MAP_SHARED, {fd}, 0)"
                )),
                "{mode}: {c}"
            );
            assert!(tid == main && *k > last_open, "{mode}: {c} by {tid}, at {k}");
            addrs.push(c.rsplit("= ").next().unwrap().trim().to_string());
        }
        // seqwr: each file given its size, in order, before the mappings.
        let truncates: Vec<usize> = (0..calls.len())
            .filter(|&k| calls[k].1.starts_with("ftruncate("))
            .collect();
        if mode.ends_with("seqwr") {
            assert_eq!(truncates.len(), 4, "{mode}");
            for (k, fd) in truncates.iter().zip(&fds) {
                assert_eq!(calls[*k].1, format!("ftruncate({fd}, {size}) = 0"), "{mode}");
                assert!(*k > last_open && *k < maps[0].0, "{mode}: {}", calls[*k].1);
            }
        } else {
            assert!(truncates.is_empty(), "{mode}: {truncates:?}");
        }
        // The threads move data through the mappings: no read or write call, and every msync is
        // of one of the four mappings, whole, from a worker thread.
        let by_call = calls.iter().find(|(_, c)| {
            let fd = c.split(['(', ',']).nth(1).unwrap_or("");
            (c.starts_with("pread64(") || c.starts_with("pwrite64(")) && fds.iter().any(|f| f == fd)
        });
        assert!(by_call.is_none(), "{mode}: a transfer by call: {by_call:?}");
        let syncs: Vec<&(String, String)> = calls.iter().filter(|(_, c)| c.starts_with("msync(")).collect();
        assert!(!syncs.is_empty(), "{mode}: no msync");
        for (tid, c) in &syncs {
            let addr = c.trim_start_matches("msync(").split(',').next().unwrap();
            assert!(addrs.iter().any(|a| a == addr), "{mode}: {c}");
            assert!(
                c.contains(&format!(", {size}, MS_SYNC|MS_INVALIDATE")) && tid != main,
                "{mode}: {c}"
            );
        }
        // Closed, then unmapped, each once, in order, after the last msync.
        let last_sync = calls.iter().rposition(|(_, c)| c.starts_with("msync(")).unwrap();
        let ends: Vec<&String> = calls[last_sync..]
            .iter()
            .filter(|(_, c)| {
                fds.iter().any(|fd| c.starts_with(&format!("close({fd})")))
                    || addrs.iter().any(|a| c.starts_with(&format!("munmap({a}, ")))
            })
            .map(|(_, c)| c)
            .take(8)
            .collect();
        let want: Vec<String> = fds
            .iter()
            .map(|fd| format!("close({fd}) = 0"))
            .chain(addrs.iter().map(|a| format!("munmap({a}, {size}) = 0")))
            .collect();
        assert_eq!(ends, want.iter().collect::<Vec<_>>(), "{mode}");
    }
}

/// The (file, bytes, offset) of every pread64 or pwrite64 on a test file that `fslab sysbench
/// fileio ARGS --time=0 run` makes in `dir`, traced; the files by their numbers.
fn transfers(dir: &Path, args: &[&str]) -> Vec<(u64, u64, u64)> {
    let run: Vec<&str> = [&["sysbench", "fileio"], args, &["--time=0", "run"]].concat();
    let calls = crate::common::strace_fslab(Some(dir), &dir.join("strace.log"), "openat,pread64,pwrite64", &run);
    let mut files = std::collections::HashMap::new();
    let mut moved = Vec::new();
    for (_, c) in &calls {
        let result = c.rsplit("= ").next().unwrap().trim();
        if let Some(name) = c.split("\"test_file.").nth(1) {
            let n: u64 = name.split('"').next().unwrap().parse().unwrap();
            files.insert(result.to_string(), n);
        } else if c.starts_with("pread64(") || c.starts_with("pwrite64(") {
            let args: Vec<&str> = c.split(['(', ')']).nth(1).unwrap().split(", ").collect();
            if let Some(&file) = files.get(args[0]) {
                let n = |s: &str| s.trim().parse::<u64>().unwrap();
                moved.push((file, n(args[args.len() - 2]), n(args[args.len() - 1])));
            }
        }
    }
    moved
}

/// With files that are not a whole number of blocks (100,000 bytes over 3 files: 33,333 bytes
/// each, prepared as 3 blocks of 16 KiB), the requests fall where sysbench 1.0.20 puts them
/// (`file_get_seq_req()`, `file_get_rand_req()`), as strace showed for sysbench itself: each
/// sequential pass reads each file's first 33,333 bytes, the last request 565 bytes; a random
/// request is a block-aligned offset over the files laid end to end, so that in files 1 and 2
/// its offsets are off the block boundaries, cut short at 33,333; seqwr leaves each file at
/// 33,333 bytes.
#[test]
#[ignore = "system tier: strace"]
fn requests_fall_where_sysbench_puts_them_when_files_are_not_whole_blocks() {
    require_tool("strace", "strace");
    let d = tempdir();
    let set = ["--file-num=3", "--file-total-size=100000"];
    ok(d.path(), &[&["fileio"], &set[..], &["prepare"]].concat());
    for n in 0..3 {
        let len = std::fs::metadata(d.path().join(format!("test_file.{n}")))
            .unwrap()
            .len();
        assert_eq!(len, 3 * 16384, "test_file.{n}: prepare writes whole blocks");
    }
    let seq = transfers(
        d.path(),
        &[&set[..], &["--file-test-mode=seqrd", "--events=9"]].concat(),
    );
    let want: Vec<(u64, u64, u64)> = (0..3)
        .flat_map(|f| [(f, 16384, 0), (f, 16384, 16384), (f, 565, 32768)])
        .collect();
    assert_eq!(seq, want);
    // sysbench's random request: an offset of the 99,999 bytes, aligned to 16 KiB, in the file
    // it falls in, cut short at that file's 33,333 bytes.
    let places: std::collections::BTreeSet<(u64, u64, u64)> = (0..99_999u64)
        .step_by(16384)
        .map(|at| (at / 33_333, 16384.min(33_333 - at % 33_333), at % 33_333))
        .collect();
    let random = transfers(
        d.path(),
        &[&set[..], &["--file-test-mode=rndrd", "--events=2000"]].concat(),
    );
    assert_eq!(random.len(), 2000);
    let seen: std::collections::BTreeSet<(u64, u64, u64)> = random.iter().copied().collect();
    assert_eq!(
        seen, places,
        "every request at one of sysbench's places, and every place met"
    );
    let written = transfers(
        d.path(),
        &[&set[..], &["--file-test-mode=seqwr", "--events=9"]].concat(),
    );
    assert_eq!(written, want);
    for n in 0..3 {
        let len = std::fs::metadata(d.path().join(format!("test_file.{n}")))
            .unwrap()
            .len();
        assert_eq!(len, 33_333, "test_file.{n}: seqwr writes sysbench's file size");
    }
}

/// seqwr's run makes its files anew as sysbench 1.0.20's sb_create() does: `open(O_CREAT|O_EXCL,
/// 0600)` alone, read-only, whatever --file-extra-flags says (it applies to the opens that
/// write); then writes them through descriptors opened O_RDWR.
#[test]
#[ignore = "system tier: strace"]
fn seqwr_creates_its_files_read_only_as_sb_create() {
    let calls = traced_run(
        &["--file-test-mode=seqwr", "--file-extra-flags=dsync", "--events=8"],
        "openat",
    );
    let opens: Vec<&String> = calls
        .iter()
        .map(|(_, c)| c)
        .filter(|c| c.contains("\"test_file."))
        .collect();
    let (made, opened): (Vec<&&String>, Vec<&&String>) = opens.iter().partition(|c| c.contains("O_CREAT"));
    assert_eq!(made.len(), 4, "{opens:#?}");
    for c in &made {
        assert!(
            c.contains("O_RDONLY|O_CREAT|O_EXCL") && !c.contains("O_DSYNC") && c.contains(", 0600)"),
            "{c}"
        );
    }
    assert!(!opened.is_empty(), "{opens:#?}");
    assert!(opened.iter().all(|c| c.contains("O_RDWR|O_DSYNC")), "{opened:#?}");
}

/// With several threads, sysbench 1.0.20 draws every event from one generator under a lock:
/// `--events` is one budget, and the fsync bursts count every thread's requests, each fsync an
/// event of whichever thread asks next. 1000 rndwr events, a burst of the 4 files after every
/// 10 writes: 71 cycles of 10 writes and 4 fsyncs, then 6 writes; then each of the 4 threads
/// fsyncs the 4 files at its end. sysbench under strace: 716 pwrite64s, 284 + 16 fsyncs.
#[test]
#[ignore = "system tier: strace"]
fn threads_share_one_budget_of_events_and_one_count_for_the_fsync_bursts() {
    let run = [
        "--file-test-mode=rndwr",
        "--threads=4",
        "--file-fsync-freq=10",
        "--events=1000",
    ];
    let calls = traced_run(&run, "pwrite64,fsync");
    let count = |name: &str| calls.iter().filter(|(_, c)| c.starts_with(&format!("{name}("))).count();
    assert_eq!((count("pwrite64"), count("fsync")), (716, 284 + 16));
    // Every thread took events.
    let threads: std::collections::BTreeSet<_> = calls.iter().map(|(pid, _)| pid).collect();
    assert_eq!(threads.len(), 4, "{threads:?}");
}

/// `--file-fsync-all` in a sequential mode syncs the file after every write, with fsync() or
/// fdatasync(), on a descriptor opened without O_SYNC, as sysbench 1.0.20's
/// file_execute_event() does: for 40 seqrewr events sysbench makes 40 pwrite64s, each followed
/// by its sync, then the end fsyncs of the 4 files.
#[test]
#[ignore = "system tier: strace"]
fn fsync_all_in_a_sequential_mode_syncs_after_every_write() {
    require_tool("strace", "strace");
    let d = tempdir();
    ok(d.path(), &with(&["prepare"]));
    for (mode, sync) in [("fsync", "fsync"), ("fdatasync", "fdatasync")] {
        let fsync_mode = format!("--file-fsync-mode={mode}");
        let run = with(&[
            "--file-test-mode=seqrewr",
            "--file-fsync-all=on",
            "--file-fsync-end=off",
            "--events=40",
            "--time=0",
            "run",
        ]);
        let args: Vec<&str> = [&["sysbench", fsync_mode.as_str()], &run[..]].concat();
        let calls = crate::common::strace_fslab(
            Some(d.path()),
            &d.path().join("strace.log"),
            "openat,pwrite64,fsync,fdatasync",
            &args,
        );
        let seen: Vec<&str> = calls
            .iter()
            .filter(|(_, c)| !c.starts_with("openat(") || c.contains("test_file"))
            .map(|(_, c)| c.split('(').next().unwrap_or_default())
            .filter(|n| *n != "openat")
            .collect();
        let want: Vec<&str> = (0..40).flat_map(|_| ["pwrite64", sync]).collect();
        assert_eq!(seen, want, "{mode}: {calls:#?}");
        assert!(
            calls
                .iter()
                .all(|(_, c)| !c.contains("O_SYNC") && !c.contains("O_DSYNC")),
            "{mode}: no O_SYNC: {calls:#?}"
        );
    }
}

/// sysbench's sb_open() opens every test file `O_RDWR`, in the read modes too: so does fslab, one
/// open per file.
#[test]
#[ignore = "system tier: strace"]
fn read_modes_open_the_files_for_reading_and_writing() {
    require_tool("strace", "strace");
    let d = tempdir();
    ok(d.path(), &with(&["prepare"]));
    for mode in ["--file-test-mode=rndrd", "--file-test-mode=seqrd"] {
        // 64 events: every block of the 4 files once in seqrd.
        let run = with(&[mode, "--events=64", "--time=0", "run"]);
        let calls = crate::common::strace_fslab(
            Some(d.path()),
            &d.path().join("strace.log"),
            "openat",
            &[&["sysbench"], &run[..]].concat(),
        );
        let opens: Vec<&String> = calls
            .iter()
            .map(|(_, c)| c)
            .filter(|c| c.contains("\"test_file."))
            .collect();
        assert_eq!(opens.len(), 4, "{mode}: {opens:#?}");
        assert!(opens.iter().all(|c| c.contains("O_RDWR")), "{mode}: {opens:#?}");
    }
}

/// In mmap mode sysbench 1.0.20 (64-bit) syncs a file with `msync(MS_SYNC|MS_INVALIDATE)` of its
/// mapping and no fsync(): 16 of them for these options under strace, as here.
#[test]
#[ignore = "system tier: strace"]
fn mmap_mode_syncs_with_msync_alone() {
    require_tool("strace", "strace");
    let d = tempdir();
    ok(d.path(), &with(&["prepare"]));
    let run = with(&[
        "--file-test-mode=rndwr",
        "--file-io-mode=mmap",
        "--file-fsync-freq=3",
        "--events=21",
        "--time=0",
        "run",
    ]);
    let calls = crate::common::strace_fslab(
        Some(d.path()),
        &d.path().join("strace.log"),
        "msync,fsync,fdatasync",
        &[&["sysbench"], &run[..]].concat(),
    );
    let msyncs = calls.iter().filter(|(_, c)| c.starts_with("msync(")).count();
    let flagged = calls
        .iter()
        .filter(|(_, c)| c.contains("MS_SYNC|MS_INVALIDATE"))
        .count();
    assert_eq!((msyncs, flagged, calls.len()), (16, 16, 16), "{calls:#?}");
}

#[test]
fn help_lists_the_options() {
    let d = tempdir();
    for args in [vec!["fileio", "help"], vec!["--help"]] {
        let out = ok(d.path(), &args);
        assert!(out.stdout.contains("--file-test-mode=STRING"), "{}", out.stdout);
    }
}

/// prepare makes sysbench 1.0.20's calls (`create_files()`): each test file opened with mode
/// 0600, `lseek(SEEK_END)`, `--file-block-size` write()s of zeros, one fsync() per file.
#[test]
#[ignore = "system tier: strace"]
fn prepare_writes_blocks_and_fsyncs_each_file_as_sysbench_does() {
    require_tool("strace", "strace");
    let _ = check_prepare_calls(&[], None, None);
    // --file-extra-flags apply to prepare's open too.
    let _ = check_prepare_calls(&["--file-extra-flags=dsync"], Some("O_DSYNC"), None);
}

/// prepare over files long enough (sysbench's "Reusing existing file") writes nothing, but opens
/// each as it would to write it, seeks to its end, fsyncs and closes it, as sysbench 1.0.20 did
/// under strace.
#[test]
#[ignore = "system tier: strace"]
fn prepare_again_opens_seeks_and_fsyncs_each_kept_file_as_sysbench_does() {
    require_tool("strace", "strace");
    let _ = check_prepare_calls(&[], None, Some(131072));
    let _ = check_prepare_calls(&["--file-extra-flags=sync"], Some("O_SYNC"), Some(131072));
}

/// prepare over shorter files fslab made (sysbench's "Extending existing file") writes each
/// from its end, whole blocks until sysbench's file size, as sysbench 1.0.20 did under strace,
/// and says so; the set is then kept at its new size.
#[test]
#[ignore = "system tier: strace"]
fn prepare_over_shorter_files_extends_each_from_its_end_as_sysbench_does() {
    require_tool("strace", "strace");
    let _ = check_prepare_calls(&[], None, Some(65536));
    // 40 KiB files in 16 KiB blocks are 48 KiB: one block more makes 64.
    let d = check_prepare_calls(&["--validate"], None, Some(81920));
    // The blocks added are checked blocks at their offsets, and the set is kept at its size.
    let out = ok(
        &d.path().join("w"),
        &[
            "fileio",
            "--file-num=2",
            "--file-total-size=128K",
            "--file-block-size=16384",
            "--validate",
            "--file-test-mode=seqrd",
            "--events=8",
            "run",
        ],
    );
    assert!(out.stdout.contains("reads/s:"), "{}", out.stdout);
}

/// prepare with `extra` options under strace (after an untraced one of `--file-total-size=before`
/// bytes when given): each test file's open (with `flag` when given) and the calls on its
/// descriptor until it is closed, each file 64 KiB once written. The directory, `w` in it
/// holding the files.
fn check_prepare_calls(extra: &[&str], flag: Option<&str>, before: Option<u64>) -> tempfile::TempDir {
    let d = tempdir();
    let log = d.path().join("strace.log");
    let work = d.path().join("w");
    std::fs::create_dir(&work).unwrap();
    let args = |cmd: &mut std::process::Command, total: u64| {
        cmd.args(["sysbench", "--dir"])
            .arg(&work)
            // Two files of 64 KiB in 16 KiB blocks.
            .args([
                "fileio",
                "--file-num=2",
                &format!("--file-total-size={total}"),
                "--file-block-size=16384",
            ])
            .args(extra)
            .arg("prepare")
            .stdout(std::process::Stdio::null());
    };
    if let Some(total) = before {
        let mut first = std::process::Command::new(env!("CARGO_BIN_EXE_fslab"));
        args(&mut first, total);
        assert!(first.status().unwrap().success());
    }
    let mut traced = std::process::Command::new("strace");
    traced
        .args([
            "-f",
            "-qq",
            "-s",
            "0",
            "-e",
            "trace=openat,write,pwrite64,lseek,fsync,syncfs,close",
            "-o",
        ])
        .arg(&log)
        .arg(env!("CARGO_BIN_EXE_fslab"));
    args(&mut traced, 131072);
    let status = traced
        .status()
        .expect("this test needs strace to see prepare's calls (apt-get install strace)");
    assert!(status.success(), "strace fslab sysbench prepare: {status}");
    let text = std::fs::read_to_string(&log).unwrap();
    let fds = calls_per_test_file(&text);
    for (open, _) in &fds {
        assert!(flag.is_none_or(|f| open.contains(f)), "{flag:?} missing: {open}");
    }
    // Each file as the first prepare left it: from there, whole blocks to 64 KiB.
    let from = before.map_or(0, |total| (total / 2).div_ceil(16384) * 16384);
    let mut want = vec![format!("lseek={from}")];
    want.extend((from..65536).step_by(16384).map(|_| "write=16384".to_string()));
    want.extend(["fsync=0".to_string(), "close".to_string()]);
    assert_eq!(fds.len(), 2, "{text}");
    for (open, calls) in &fds {
        assert_eq!(calls, &want, "calls after {open}:\n{text}");
    }
    assert!(
        !text.contains("syncfs("),
        "sysbench fsyncs each file, no syncfs: {text}"
    );
    for n in 0..2 {
        let meta = std::fs::metadata(work.join(format!("test_file.{n}"))).unwrap();
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o777,
            0o600
        );
        assert_eq!(meta.len(), 65536);
    }
    d
}

/// Each test file's open in a strace log of prepare (checked to be sysbench's: `O_WRONLY|O_CREAT`,
/// mode 0600), and the calls on its descriptor until it was closed, each as `name=result`.
fn calls_per_test_file(text: &str) -> Vec<(String, Vec<String>)> {
    let mut fds: Vec<(String, String, Vec<String>)> = Vec::new();
    for l in text.lines() {
        let call = l.split_once(' ').map_or(l, |(_, c)| c.trim_start());
        if call.starts_with("openat(") && call.contains("\"test_file.") {
            assert!(call.contains("O_WRONLY") && call.contains("O_CREAT"), "{call}");
            assert!(call.contains(", 0600)"), "sysbench makes its files 0600: {call}");
            let fd = call.rsplit("= ").next().unwrap().trim().to_string();
            fds.push((call.to_string(), fd, Vec::new()));
        } else if let Some((_, fd, calls)) = fds.last_mut().filter(|(_, _, c)| c.last().is_none_or(|c| c != "close")) {
            let name = call.split('(').next().unwrap_or("");
            if call
                .split_once('(')
                .is_some_and(|(_, rest)| rest.starts_with(&format!("{fd},")) || rest.starts_with(&format!("{fd})")))
            {
                let result = call.rsplit("= ").next().unwrap().trim().to_string();
                calls.push(if name == "close" {
                    "close".into()
                } else {
                    format!("{name}={result}")
                });
            }
        }
    }
    fds.into_iter().map(|(open, _, calls)| (open, calls)).collect()
}

/// prepare over a set made with other options makes sysbench 1.0.20's calls file by file: a
/// file long enough is opened, sought to its end, fsynced and closed; a missing one is made
/// (`O_EXCL` added: fslab makes it) and written from 0. The files of the earlier set beyond
/// `--file-num` are unlinked, where sysbench leaves them, and only those.
#[test]
#[ignore = "system tier: strace"]
fn prepare_over_a_set_of_other_options_makes_sysbenchs_calls_file_by_file() {
    require_tool("strace", "strace");
    let d = tempdir();
    let work = d.path().join("w");
    std::fs::create_dir(&work).unwrap();
    let prepare = |num: &'static str, total: &'static str| ["fileio", num, total, "--file-block-size=16384", "prepare"];
    // Four files of 64 KiB; then test_file.1 gone by hand.
    ok(&work, &prepare("--file-num=4", "--file-total-size=256K"));
    std::fs::remove_file(work.join("test_file.1")).unwrap();
    let log = d.path().join("strace.log");
    let calls = crate::common::strace_fslab(
        Some(&work),
        &log,
        "openat,write,lseek,fsync,close,unlink,unlinkat",
        &[&["sysbench"][..], &prepare("--file-num=2", "--file-total-size=64K")].concat(),
    );
    let fds = calls_per_test_file(&std::fs::read_to_string(&log).unwrap());
    assert_eq!(fds.len(), 2, "{fds:#?}");
    // test_file.0 is long enough (32 KiB asked), test_file.1 is made.
    assert!(
        fds[0].0.contains("\"test_file.0\"") && !fds[0].0.contains("O_EXCL"),
        "{fds:#?}"
    );
    assert_eq!(fds[0].1, ["lseek=65536", "fsync=0", "close"]);
    assert!(
        fds[1].0.contains("\"test_file.1\"") && fds[1].0.contains("O_EXCL"),
        "{fds:#?}"
    );
    assert_eq!(fds[1].1, ["lseek=0", "write=16384", "write=16384", "fsync=0", "close"]);
    let unlinked: Vec<&String> = calls
        .iter()
        .map(|(_, c)| c)
        .filter(|c| c.starts_with("unlink"))
        .collect();
    assert_eq!(unlinked.len(), 2, "{unlinked:#?}");
    assert!(
        unlinked[0].contains("\"test_file.2\"") && unlinked[1].contains("\"test_file.3\""),
        "{unlinked:#?}"
    );
    let mut names: Vec<String> = std::fs::read_dir(&work)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, [".fslab-fileset", "test_file.0", "test_file.1"]);
    let sizes = ["test_file.0", "test_file.1"].map(|n| std::fs::metadata(work.join(n)).unwrap().len());
    assert_eq!(sizes, [65536, 32768]);
}

/// `--file-io-mode=async` makes sysbench 1.0.20's libaio calls: one `io_setup(backlog)`, an
/// `io_submit()` of one request per event, an `io_getevents(1, backlog)` each time the backlog
/// fills, the end fsyncs with requests still in flight, then an `io_getevents()` for the rest
/// and `io_destroy()`. sysbench counts a read or write for `--file-rw-ratio` when it is reaped,
/// so on these cached files the mix comes in runs of the backlog; the sequence below is what
/// sysbench 1.0.20 made for these options under strace.
#[test]
#[ignore = "system tier: strace"]
fn async_mode_makes_sysbenchs_libaio_calls_in_its_order() {
    require_tool("strace", "strace");
    let d = tempdir();
    ok(d.path(), &with(&["prepare"]));
    let run = with(&[
        "--file-test-mode=rndrw",
        "--file-io-mode=async",
        "--file-async-backlog=4",
        "--file-fsync-freq=0",
        "--events=30",
        "--time=0",
        "run",
    ]);
    let calls = crate::common::strace_fslab(
        Some(d.path()),
        &d.path().join("strace.log"),
        "io_setup,io_submit,io_getevents,io_destroy,fsync,io_uring_setup",
        &[&["sysbench"], &run[..]].concat(),
    );
    let seen: Vec<String> = calls
        .iter()
        .map(|(_, call)| {
            let name = call.split('(').next().unwrap_or_default();
            let arg = |k: usize| call.split(", ").nth(k).unwrap_or_default().to_string();
            match name {
                "io_submit" if call.contains("IOCB_CMD_PREAD") => "R".to_string(),
                "io_submit" if call.contains("IOCB_CMD_PWRITE") => "W".to_string(),
                "io_getevents" => format!("get({},{})", arg(1), arg(2)),
                "io_setup" => format!(
                    "setup({})",
                    call["io_setup(".len()..].split(',').next().unwrap_or_default()
                ),
                other => other.to_string(),
            }
        })
        .collect();
    let runs = ["RRRR", "WWWW", "RRRR", "WWWW", "RRRR", "RRRR", "WWWW"];
    let mut want = vec!["setup(4)".to_string()];
    for run in runs {
        want.extend(run.chars().map(String::from));
        want.push("get(1,4)".into());
    }
    want.extend(["R", "R", "fsync", "fsync", "fsync", "fsync", "get(2,4)", "io_destroy"].map(String::from));
    assert_eq!(seen, want, "{calls:#?}");
}

/// sysbench 1.0.20's run opens every test file once, in order, before its threads start
/// (`file_prepare()`: `open(O_RDWR)` then `fstat()`, per file), every thread reads and writes
/// through those descriptors, and `file_done()` closes each once the threads have ended.
#[test]
#[ignore = "system tier: strace"]
fn the_files_are_opened_once_for_every_thread_as_sysbench_opens_them() {
    let calls = traced_run(
        &["--file-test-mode=rndrw", "--threads=4", "--events=400"],
        "openat,fstat,newfstatat,statx,close,pread64,pwrite64",
    );
    let fd_of = |c: &str| c.split(['(', ',', ')']).nth(1).unwrap_or("").trim().to_string();
    let opens: Vec<(usize, &String, &String)> = calls
        .iter()
        .enumerate()
        .filter(|(_, (_, c))| c.starts_with("openat(") && c.contains("\"test_file."))
        .map(|(k, (t, c))| (k, t, c))
        .collect();
    assert_eq!(opens.len(), 4, "{opens:#?}");
    // The workers' reads and writes (the main thread reads fslab's marker, and /proc/stat).
    let opener = opens[0].1;
    let transfer = |t: &String, c: &str| t != opener && (c.starts_with("pread64(") || c.starts_with("pwrite64("));
    let first_io = calls.iter().position(|(t, c)| transfer(t, c)).expect("transfers");
    let mut fds = Vec::new();
    for (n, (k, tid, c)) in opens.iter().enumerate() {
        assert!(
            c.contains(&format!("\"test_file.{n}\", O_RDWR")) && !c.contains("O_CREAT"),
            "{c}"
        );
        assert_eq!(*tid, opener, "one thread opens them all: {opens:#?}");
        assert!(*k < first_io, "{c} after the first transfer");
        let fd = c.rsplit("= ").next().unwrap().trim().to_string();
        // Its fstat next, on that thread, before anything else of it.
        let next = calls[k + 1..]
            .iter()
            .find(|(t, _)| t == *tid)
            .map(|(_, c)| c.as_str())
            .unwrap_or("");
        let stat = next.starts_with(&format!("fstat({fd},"))
            || next.starts_with(&format!("newfstatat({fd}, \"\""))
            || next.starts_with(&format!("statx({fd}, \"\""));
        assert!(stat, "after {c}: {next}");
        fds.push(fd);
    }
    let io: Vec<&(String, String)> = calls[first_io..].iter().filter(|(t, c)| transfer(t, c)).collect();
    assert!(
        io.iter().all(|(_, c)| fds.contains(&fd_of(c))),
        "a transfer on another descriptor"
    );
    let threads: std::collections::BTreeSet<&String> = io.iter().map(|(t, _)| t).collect();
    assert!(threads.len() >= 2, "only {threads:?} moved data");
    let last_io = calls.iter().rposition(|(t, c)| transfer(t, c)).unwrap();
    for fd in &fds {
        let closes: Vec<usize> = (0..calls.len())
            .filter(|&k| calls[k].1.starts_with(&format!("close({fd})")))
            .filter(|&k| k > opens[0].0)
            .collect();
        let after: Vec<&usize> = closes.iter().filter(|&&k| k > last_io).collect();
        assert!(!after.is_empty(), "descriptor {fd} never closed after the run");
        assert!(
            closes.iter().filter(|&&k| k < last_io).count() == 0,
            "descriptor {fd} closed while the run still used it"
        );
    }
}
