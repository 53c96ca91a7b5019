//! sysbench fileio run for real, in temporary directories: the files prepare makes (in the
//! directory itself, beside whatever is there), cleanup, the fsync bursts, the rndrw ratio, the
//! shared sequential cursor, and what run says when the files are missing or of another size. Every expected count follows sysbench 1.0.20's rules
//! (and was checked against the real sysbench where noted).

use fslab_classic::sysbench::{self, files, report, Command, Options};
use fslab_engine::run::RunOptions;
use fslab_engine::RunResult;
use fslab_testkit::tempdir;
use std::path::{Path, PathBuf};

/// A sysbench command line as `fslab sysbench --dir DIR` reads it.
struct Inv {
    command: Command,
    options: Options,
    dir: PathBuf,
}

/// Parses a sysbench command line run in `dir`.
fn parse(dir: &Path, args: &[&str]) -> Inv {
    let inv = sysbench::parse(args).unwrap_or_else(|e| panic!("{args:?}: {e}"));
    Inv {
        command: inv.command,
        options: inv.options,
        dir: dir.to_path_buf(),
    }
}

fn prepare(dir: &Path, args: &[&str]) {
    let mut a = args.to_vec();
    a.extend(["fileio", "prepare"]);
    let inv = parse(dir, &a);
    files::prepare(&inv.dir, &inv.options).unwrap_or_else(|e| panic!("prepare: {e}"));
}

/// Runs `args` (with `fileio run`) in `dir` and returns the engine's result and sysbench's
/// figures.
fn run(dir: &Path, args: &[&str]) -> (RunResult, report::Figures) {
    let mut a = args.to_vec();
    a.extend(["fileio", "run"]);
    let inv = parse(dir, &a);
    assert_eq!(inv.command, Command::Run);
    let kept = files::check(&inv.dir, &inv.options).unwrap_or_else(|e| panic!("check: {e}"));
    let mut w = sysbench::workload(&inv.options);
    if let Some(kept) = kept {
        kept.apply(&mut w.filesets[0]);
    }
    let opts = RunOptions {
        dir: inv.dir.clone(),
        ..RunOptions::default()
    };
    let r = fslab_engine::run(&w, &opts, &mut |_| {}).unwrap_or_else(|e| panic!("run: {e}"));
    assert!(r.first_error.is_none(), "the run failed: {:?}", r.first_error);
    let f = report::figures(&r, &inv.options);
    (r, f)
}

/// Sizes of `<dir>/test_file.N`, in order of N, and the names of everything in `dir`.
fn on_disk(dir: &Path) -> (Vec<u64>, Vec<String>) {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut ids: Vec<u64> = names
        .iter()
        .filter_map(|n| n.strip_prefix("test_file.")?.parse().ok())
        .collect();
    ids.sort();
    let sizes = ids
        .iter()
        .map(|i| std::fs::metadata(dir.join(format!("test_file.{i}"))).unwrap().len())
        .collect();
    (sizes, names)
}

const SMALL: [&str; 2] = ["--file-num=4", "--file-total-size=1M"];

#[test]
fn prepare_writes_test_files_of_the_total_divided_evenly() {
    let d = tempdir();
    prepare(d.path(), &SMALL);
    let (sizes, names) = on_disk(d.path());
    assert_eq!(sizes, vec![262144; 4]);
    assert_eq!(
        names,
        [
            ".fslab-fileset",
            "test_file.0",
            "test_file.1",
            "test_file.2",
            "test_file.3"
        ]
    );
    // A size that is no multiple of the block is rounded up to whole blocks, as sysbench's
    // prepare writes them: 102400 / 3 = 34133 bytes, written as three 16 KiB blocks.
    let d = tempdir();
    prepare(d.path(), &["--file-num=3", "--file-total-size=100k"]);
    assert_eq!(on_disk(d.path()).0, vec![49152; 3]);
}

#[test]
fn prepare_keeps_a_matching_set_and_rewrites_another() {
    let d = tempdir();
    let inv = parse(d.path(), &["--file-num=4", "--file-total-size=1M", "fileio", "prepare"]);
    let first = files::prepare(&inv.dir, &inv.options).unwrap();
    assert!(!first.setup.reused);
    assert_eq!((first.setup.bytes, first.before), (1 << 20, vec![0; 4]));
    let again = files::prepare(&inv.dir, &inv.options).unwrap();
    assert!(again.setup.reused);
    assert_eq!((again.setup.bytes, again.before), (0, vec![262144; 4]));
    // Checked blocks where the set holds zeros: written again from scratch.
    let inv = parse(
        d.path(),
        &[
            "--file-num=2",
            "--file-total-size=1M",
            "--validate",
            "fileio",
            "prepare",
        ],
    );
    let other = files::prepare(&inv.dir, &inv.options).unwrap();
    assert!(!other.setup.reused);
    assert_eq!((other.setup.bytes, other.before), (1 << 20, vec![0; 2]));
    assert_eq!(on_disk(d.path()).0, vec![524288; 2]);
}

/// prepare over a set fslab made does to each file what sysbench 1.0.20's `create_files()` does
/// to what it finds, whatever the set's earlier options: a missing file is made, a shorter one
/// extended from its end, one long enough left as it is; the files of an earlier, larger
/// `--file-num` are removed (sysbench leaves them). A run then takes files of different sizes,
/// each at least its size, as sysbench's does.
#[test]
fn prepare_over_a_set_of_other_options_makes_and_extends_file_by_file() {
    let d = tempdir();
    let prep = |args: &[&str]| {
        let mut a = args.to_vec();
        a.extend(["fileio", "prepare"]);
        let inv = parse(d.path(), &a);
        files::prepare(&inv.dir, &inv.options).unwrap_or_else(|e| panic!("prepare {args:?}: {e}"))
    };
    prep(&["--file-num=4", "--file-total-size=1M"]);
    // Fewer, larger files: the first two extended from 256 KiB to 512 KiB, the others gone.
    let fewer = prep(&["--file-num=2", "--file-total-size=1M"]);
    assert!(fewer.setup.reused);
    assert_eq!((fewer.setup.bytes, fewer.before), (524288, vec![262144; 2]));
    let (sizes, names) = on_disk(d.path());
    assert_eq!(sizes, vec![524288; 2]);
    assert_eq!(names, [".fslab-fileset", "test_file.0", "test_file.1"]);
    // A file removed by hand is made again, alone.
    std::fs::remove_file(d.path().join("test_file.1")).unwrap();
    let one = prep(&["--file-num=2", "--file-total-size=1M"]);
    assert_eq!((one.setup.bytes, one.before), (524288, vec![524288, 0]));
    assert_eq!(on_disk(d.path()).0, vec![524288; 2]);
    // More, smaller files: the two long enough kept as they are, two more made.
    let more = prep(&["--file-num=4", "--file-total-size=1M"]);
    assert_eq!((more.setup.bytes, more.before), (524288, vec![524288, 524288, 0, 0]));
    assert_eq!(on_disk(d.path()).0, vec![524288, 524288, 262144, 262144]);
    let (r, f) = run(
        d.path(),
        &[
            "--file-num=4",
            "--file-total-size=1M",
            "--file-test-mode=rndrd",
            "--events=100",
            "--time=0",
        ],
    );
    assert_eq!((f.reads, r.totals.bytes_read), (100, 100 * 16384));
    // Nothing more to write: every file reused.
    let kept = prep(&["--file-num=4", "--file-total-size=1M"]);
    assert_eq!((kept.setup.bytes, kept.setup.reused), (0, true));
    assert_eq!(on_disk(d.path()).0, vec![524288, 524288, 262144, 262144]);
}

/// What lies in a directory before sysbench's files go there: a file, a directory with a file
/// in it, and names that only look like test files.
fn others(dir: &Path) -> Vec<String> {
    std::fs::write(dir.join("mine.txt"), "not sysbench's").unwrap();
    std::fs::create_dir(dir.join("lost+found")).unwrap();
    std::fs::write(dir.join("lost+found/#1234"), "").unwrap();
    std::fs::write(dir.join("test_file.x"), "").unwrap();
    std::fs::write(dir.join("test_file."), "").unwrap();
    vec![
        "lost+found".into(),
        "mine.txt".into(),
        "test_file.".into(),
        "test_file.x".into(),
    ]
}

#[test]
fn the_files_go_into_the_directory_among_what_is_there_and_cleanup_takes_only_them() {
    let d = tempdir();
    let mine = others(d.path());
    prepare(d.path(), &SMALL);
    assert_eq!(on_disk(d.path()).0, vec![262144; 4]);
    // A run (which sets the fileset up again) keeps the other entries too.
    run(
        d.path(),
        &[
            "--file-num=4",
            "--file-total-size=1M",
            "--file-test-mode=rndwr",
            "--events=10",
            "--time=0",
        ],
    );
    // Prepared again with another number of files: the old set goes, the rest stays.
    prepare(d.path(), &["--file-num=2", "--file-total-size=1M"]);
    let (sizes, names) = on_disk(d.path());
    assert_eq!(sizes, vec![524288; 2]);
    let mut want = mine.clone();
    want.extend([".fslab-fileset".into(), "test_file.0".into(), "test_file.1".into()]);
    want.sort();
    assert_eq!(names, want);
    let inv = parse(d.path(), &["fileio", "cleanup"]);
    files::cleanup(&inv.dir, &inv.options).unwrap();
    assert_eq!(
        on_disk(d.path()).1,
        mine,
        "cleanup removes fslab's test files and nothing else"
    );
    assert!(d.path().join("lost+found/#1234").exists());
    // Nothing left to remove is no error.
    files::cleanup(&inv.dir, &inv.options).unwrap();
}

#[test]
fn test_files_fslab_did_not_make_are_never_touched() {
    let d = tempdir();
    // As the real sysbench leaves them: test_file.N and no marker.
    for i in 0..4 {
        std::fs::write(d.path().join(format!("test_file.{i}")), "sysbench's").unwrap();
    }
    let before = on_disk(d.path());
    let inv = parse(d.path(), &["--file-num=4", "--file-total-size=1M", "fileio", "prepare"]);
    let e = files::prepare(&inv.dir, &inv.options).unwrap_err().to_string();
    assert!(e.contains("`test_file.0`, which fslab did not make"), "{e}");
    let inv = parse(d.path(), &["fileio", "cleanup"]);
    let e = files::cleanup(&inv.dir, &inv.options).unwrap_err().to_string();
    assert!(e.contains("`test_file.0`, which fslab did not make"), "{e}");
    assert_eq!(on_disk(d.path()), before);
    assert_eq!(
        std::fs::read_to_string(d.path().join("test_file.3")).unwrap(),
        "sysbench's"
    );
}

#[test]
fn periodic_fsyncs_come_in_bursts_of_every_file() {
    let d = tempdir();
    prepare(d.path(), &SMALL);
    let rndwr = |extra: &[&str]| {
        let mut a = vec![
            "--file-num=4",
            "--file-total-size=1M",
            "--file-test-mode=rndwr",
            "--time=0",
        ];
        a.extend(extra);
        let (r, f) = run(d.path(), &a);
        // The latency figures cover the events only: the end fsyncs are not timed.
        let timed: u64 = r.ops.iter().flat_map(|o| &o.histogram).map(|b| b.1).sum();
        assert_eq!(timed, f.events, "{extra:?}");
        f
    };
    // 3 writes, then 4 fsyncs (one per file), three times: 21 events; then each thread's 4 end
    // fsyncs, counted in fsyncs but not in events (sysbench 1.0.20 prints the same for these
    // options: writes/fsyncs = 9/16).
    let f = rndwr(&["--events=21", "--file-fsync-freq=3"]);
    assert_eq!((f.writes, f.fsyncs, f.end_fsyncs, f.events), (9, 16, 4, 21));
    let f = rndwr(&["--events=22", "--file-fsync-freq=3"]);
    assert_eq!((f.writes, f.fsyncs, f.events), (10, 16, 22));
    // Fewer events end the run inside a burst, exactly at --events (sysbench 1.0.20 prints
    // writes/fsyncs of 9/15 for 20 events and 9/12 for 17: 11 and 8 of them periodic).
    let f = rndwr(&["--events=20", "--file-fsync-freq=3"]);
    assert_eq!((f.writes, f.fsyncs, f.end_fsyncs, f.events), (9, 15, 4, 20));
    let f = rndwr(&["--events=17", "--file-fsync-freq=3"]);
    assert_eq!((f.writes, f.fsyncs, f.end_fsyncs, f.events), (9, 12, 4, 17));
    let f = rndwr(&["--events=21", "--file-fsync-freq=3", "--file-fsync-end=off"]);
    assert_eq!((f.writes, f.fsyncs, f.end_fsyncs, f.events), (9, 12, 0, 21));
    let f = rndwr(&["--events=20", "--file-fsync-freq=0"]);
    assert_eq!((f.writes, f.fsyncs, f.events), (20, 4, 20));
    // Two threads: each fsyncs every file at its end.
    let f = rndwr(&["--events=20", "--file-fsync-freq=0", "--threads=2"]);
    assert_eq!((f.writes, f.fsyncs, f.end_fsyncs, f.events), (20, 8, 8, 20));
    assert_eq!(f.threads_fairness.events_avg, 10.0);
    // --file-fsync-all: an fsync in each write, counted in fsyncs; no burst, no end fsync.
    let f = rndwr(&["--events=20", "--file-fsync-all"]);
    assert_eq!((f.writes, f.fsyncs, f.end_fsyncs, f.events), (20, 20, 0, 20));
}

#[test]
fn read_modes_never_fsync() {
    let d = tempdir();
    prepare(d.path(), &SMALL);
    for mode in ["rndrd", "seqrd"] {
        let m = format!("--file-test-mode={mode}");
        let (r, f) = run(
            d.path(),
            &["--file-num=4", "--file-total-size=1M", &m, "--events=300", "--time=0"],
        );
        assert_eq!((f.reads, f.writes, f.fsyncs, f.events), (300, 0, 0, 300), "{mode}");
        assert_eq!(r.totals.bytes_read, 300 * 16384, "{mode}");
    }
}

/// The read/write choices of sysbench 1.0.20's rndrw with one thread: a read while
/// (reads+1)/(writes+1) < ratio.
fn sysbench_rule(ratio: f64, events: u64) -> (u64, u64) {
    let (mut reads, mut writes) = (0u64, 0u64);
    for _ in 0..events {
        if ((reads + 1) as f64) / ((writes + 1) as f64) < ratio {
            reads += 1;
        } else {
            writes += 1;
        }
    }
    (reads, writes)
}

#[test]
fn rndrw_keeps_reads_and_writes_at_the_ratio_exactly() {
    let d = tempdir();
    prepare(d.path(), &SMALL);
    // sysbench 1.0.20 printed reads/writes of 6/4 and 7/4 for 10 and 11 events at 1.5.
    assert_eq!(sysbench_rule(1.5, 10), (6, 4));
    assert_eq!(sysbench_rule(1.5, 11), (7, 4));
    for (ratio, events) in [
        ("1.5", 10),
        ("1.5", 11),
        ("1.5", 1000),
        ("2.5", 997),
        ("0.25", 500),
        ("1", 7),
    ] {
        let r_opt = format!("--file-rw-ratio={ratio}");
        let e_opt = format!("--events={events}");
        let (_, f) = run(
            d.path(),
            &[
                "--file-num=4",
                "--file-total-size=1M",
                "--file-test-mode=rndrw",
                "--file-fsync-freq=0",
                "--file-fsync-end=off",
                "--time=0",
                &r_opt,
                &e_opt,
            ],
        );
        let want = sysbench_rule(ratio.parse().unwrap(), events);
        assert_eq!((f.reads, f.writes), want, "ratio {ratio}, {events} events");
    }
}

#[test]
fn seqwr_writes_the_files_in_order_through_one_cursor() {
    let d = tempdir();
    // No prepare: seqwr makes its files. 4 files of 64 KiB, 16 KiB blocks: 6 writes fill
    // test_file.0 and half of test_file.1.
    let args = [
        "--file-num=4",
        "--file-total-size=256k",
        "--file-test-mode=seqwr",
        "--time=0",
    ];
    let mut a = args.to_vec();
    a.push("--events=6");
    let (_, f) = run(d.path(), &a);
    assert_eq!(f.writes, 6);
    assert_eq!(on_disk(d.path()).0, vec![65536, 32768, 0, 0]);
    // Two threads share the cursor: 16 writes over both fill every file exactly once.
    let mut a = args.to_vec();
    a.extend(["--events=16", "--threads=2", "--file-fsync-freq=0"]);
    let (r, f) = run(d.path(), &a);
    assert_eq!((f.writes, r.totals.bytes_written), (16, 262144));
    assert_eq!(on_disk(d.path()).0, vec![65536; 4]);
    // Past the end the cursor starts again at file 0 (sysbench 1.0.20 wraps).
    let mut a = args.to_vec();
    a.extend(["--events=20", "--file-fsync-freq=0"]);
    let (r, _) = run(d.path(), &a);
    assert_eq!(r.totals.bytes_written, 20 * 16384);
    assert_eq!(on_disk(d.path()).0, vec![65536; 4]);
}

#[test]
fn merged_requests_make_sequential_requests_larger() {
    let d = tempdir();
    prepare(d.path(), &["--file-num=2", "--file-total-size=256k"]);
    let (r, f) = run(
        d.path(),
        &[
            "--file-num=2",
            "--file-total-size=256k",
            "--file-test-mode=seqrd",
            "--file-merged-requests=4",
            "--events=3",
            "--time=0",
        ],
    );
    assert_eq!((f.reads, r.totals.bytes_read), (3, 3 * 65536));
}

#[test]
fn run_without_prepare_says_to_prepare() {
    let d = tempdir();
    let inv = parse(d.path(), &["--file-num=4", "--file-test-mode=rndrd", "fileio", "run"]);
    let e = files::check(&inv.dir, &inv.options).unwrap_err().to_string();
    assert!(e.contains("test_file.0"), "{e}");
    assert!(e.contains("prepare` first"), "{e}");
    assert_eq!(on_disk(d.path()).1, Vec::<String>::new(), "the check made something");
}

#[test]
fn run_on_files_of_another_size_or_number_says_to_prepare() {
    let d = tempdir();
    prepare(d.path(), &SMALL);
    let check = |args: &[&str]| {
        let mut a = args.to_vec();
        a.extend(["--file-test-mode=rndrd", "fileio", "run"]);
        let inv = parse(d.path(), &a);
        files::check(&inv.dir, &inv.options).map_err(|e| e.to_string())
    };
    check(&SMALL).expect("the prepared set");
    let e = check(&["--file-num=4", "--file-total-size=2M"]).unwrap_err();
    assert!(
        e.contains("size of file") && e.contains("262144 bytes, but at least 524288"),
        "{e}"
    );
    let e = check(&["--file-num=2", "--file-total-size=512k"]).unwrap_err();
    assert!(e.contains("holds 4 test files, not --file-num=2"), "{e}");
    let e = check(&["--file-num=8", "--file-total-size=2M"]).unwrap_err();
    assert!(e.contains("test_file.4"), "{e}");
    // A file written to by hand: the set is no longer as fslab made it.
    std::fs::OpenOptions::new()
        .append(true)
        .open(d.path().join("test_file.2"))
        .and_then(|mut f| std::io::Write::write_all(&mut f, b"more"))
        .unwrap();
    let e = check(&SMALL).unwrap_err();
    assert!(
        e.contains("are not as fslab left them (their sizes now span 262144 to 262148 bytes)"),
        "{e}"
    );
    assert!(e.contains("prepare` again"), "{e}");
}

#[test]
fn a_run_keeps_longer_files_and_uses_only_their_first_part_as_sysbench_does() {
    // Prepared for 1 MiB (2 files of 512 KiB), run for 512 KiB: sysbench takes any file at
    // least its file size (256 KiB here) and keeps to that part of it.
    let d = tempdir();
    prepare(d.path(), &["--file-num=2", "--file-total-size=1M"]);
    let args = [
        "--file-num=2",
        "--file-total-size=512k",
        "--file-test-mode=seqrd",
        "--events=40",
        "--time=0",
    ];
    let (r, f) = run(d.path(), &args);
    assert!(r.setup[0].reused, "the prepared files were written again");
    // 16 blocks of each file's first 256 KiB, then from the start again: 40 reads, none past.
    assert_eq!((f.reads, r.totals.bytes_read), (40, 40 * 16384));
    assert_eq!(on_disk(d.path()).0, vec![524288; 2], "the files changed size");
}

#[test]
fn files_a_seqwr_run_left_serve_the_other_modes() {
    // 100,000 bytes over 3 files: seqwr writes each to 33,333 bytes, not a whole number of
    // 16 KiB blocks, and a random read run takes them as they are, as sysbench does.
    let d = tempdir();
    let files = ["--file-num=3", "--file-total-size=100000", "--time=0"];
    let mut a = files.to_vec();
    a.extend(["--file-test-mode=seqwr", "--events=9"]);
    run(d.path(), &a);
    assert_eq!(on_disk(d.path()).0, vec![33333; 3]);
    let mut a = files.to_vec();
    a.extend(["--file-test-mode=rndrd", "--events=30"]);
    let (r, f) = run(d.path(), &a);
    assert!(r.setup[0].reused, "the files seqwr left were written again");
    assert_eq!(f.reads, 30);
    assert_eq!(on_disk(d.path()).0, vec![33333; 3]);
    // prepare keeps them too, as sysbench's reuses files at least that long.
    let mut a = files.to_vec();
    a.extend(["fileio", "prepare"]);
    let inv = parse(d.path(), &a);
    let report = files::prepare(&inv.dir, &inv.options).unwrap();
    assert!(report.setup.reused && report.setup.bytes == 0, "{report:?}");
    assert_eq!(on_disk(d.path()).0, vec![33333; 3]);
}

#[test]
fn the_old_spellings_run() {
    let d = tempdir();
    prepare(d.path(), &SMALL);
    let (_, f) = run(
        d.path(),
        &[
            "--test=fileio",
            "--num-threads=2",
            "--max-requests=100",
            "--max-time=0",
            "--file-num=4",
            "--file-total-size=1M",
            "--file-test-mode=rndrd",
        ],
    );
    assert_eq!((f.reads, f.events), (100, 100));
    assert_eq!(f.threads_fairness.events_avg, 50.0);
}
