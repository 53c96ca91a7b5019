//! dbench loadfiles replayed for real: what each operation leaves on disk, the client1 → clientN
//! rewrite, status checks, pacing, bad input, and dbench's Throughput figure.

use fslab_classic::dbench::{self, report, Options};
use fslab_engine::result::{RunResult, Status, StepResult};
use fslab_engine::run::RunOptions;
use fslab_engine::script::Call;
use fslab_engine::workload::Stop;
use fslab_engine::{Span, Workload};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A loadfile exercising every operation once, in a fresh client directory.
const EVERY_OP: &str = r#"# every dbench operation, once
Deltree "\clients\client1" NT_STATUS_OK
Mkdir "\clients" NT_STATUS_OK
NTCreateX "\clients\client1" 0x1 0x2 100 NT_STATUS_OK
Close 100 NT_STATUS_OK
NTCreateX "\clients\client1\dir" 0x1 0x2 1 NT_STATUS_OK
Close 1 NT_STATUS_OK
NTCreateX "\clients\client1\dir\a.txt" 0x40 0x2 2 NT_STATUS_OK
WriteX 2 0 1000 1000 NT_STATUS_OK
WriteX 2 4096 100 100 NT_STATUS_OK
Close 2 NT_STATUS_OK
NTCreateX "\clients\client1\dir\b.txt" 0x40 0x5 3 NT_STATUS_OK
WriteX 3 0 10 10 NT_STATUS_OK
Close 3 NT_STATUS_OK
Rename "\clients\client1\dir\b.txt" "\clients\client1\dir\c.txt" NT_STATUS_OK
NTCreateX "\clients\client1\dir\gone.txt" 0x40 0x2 4 NT_STATUS_OK
Close 4 NT_STATUS_OK
Unlink "\clients\client1\dir\gone.txt" 0x20 NT_STATUS_OK
Mkdir "\clients\client1\dir\sub" NT_STATUS_OK
NTCreateX "\clients\client1\dir\sub\deep.txt" 0x40 0x2 6 NT_STATUS_OK
WriteX 6 0 7 7 NT_STATUS_OK
Close 6 NT_STATUS_OK
NTCreateX "\clients\client1\dir\sub2" 0x1 0x2 7 NT_STATUS_OK
Close 7 NT_STATUS_OK
Rmdir "\clients\client1\dir\sub2" NT_STATUS_OK
QUERY_PATH_INFORMATION "\clients\client1\dir\a.txt" 1004 NT_STATUS_OK
QUERY_PATH_INFORMATION "\clients\client1\dir\nothere" 1004 NT_STATUS_OBJECT_NAME_NOT_FOUND
FIND_FIRST "\clients\client1\dir\*" 260 1366 3 NT_STATUS_OK
NTCreateX "\clients\client1\dir\a.txt" 0x40 0x1 5 NT_STATUS_OK
ReadX 5 0 500 500 NT_STATUS_OK
LockX 5 0 1 NT_STATUS_OK
UnlockX 5 0 1 NT_STATUS_OK
QUERY_FILE_INFORMATION 5 258 NT_STATUS_OK
SET_FILE_INFORMATION 5 1004 NT_STATUS_OK
Flush 5 NT_STATUS_OK
Close 5 NT_STATUS_OK
QUERY_FS_INFORMATION 1 NT_STATUS_OK
"#;

/// The lines that make a client's directory, as client.txt's first lines do (dbench makes no
/// directory itself, and neither does fslab).
const MAKE_CLIENT: &str = r#"Mkdir "\clients" NT_STATUS_OK
NTCreateX "\clients\client1" 0x1 0x2 99 NT_STATUS_OK
Close 99 NT_STATUS_OK
"#;

struct Loadfile {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

fn loadfile(text: &str) -> Loadfile {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("load.txt");
    std::fs::write(&path, text).expect("write the loadfile");
    Loadfile { _dir: dir, path }
}

fn options(load: &Loadfile, nprocs: u32) -> Options {
    Options {
        nprocs,
        loadfile: Some(load.path.clone()),
        ..Options::default()
    }
}

/// The workload for `opts`, stopped after `passes` passes of every client instead of by time.
fn passes(opts: &Options, passes: u64) -> Workload {
    let mut w = dbench::workload(opts).unwrap_or_else(|e| panic!("{e}"));
    let steps = w.groups[0].script.as_ref().expect("a script").steps.len() as u64;
    w.stop = Stop {
        ops: Some(steps * passes * u64::from(opts.nprocs)),
        ..Stop::default()
    };
    w
}

fn run(w: &Workload, dir: &Path) -> RunResult {
    let opts = RunOptions {
        dir: dir.to_path_buf(),
        ..RunOptions::default()
    };
    fslab_engine::run(w, &opts, &mut |_| {}).unwrap_or_else(|e| panic!("{e}"))
}

fn step<'r>(r: &'r RunResult, name: &str) -> &'r StepResult {
    r.steps.iter().find(|s| s.name == name).unwrap_or_else(|| {
        panic!(
            "no step {name} in {:?}",
            r.steps.iter().map(|s| &s.name).collect::<Vec<_>>()
        )
    })
}

/// The names in `dir`, sorted, but the marker the engine leaves in a client's directory to say
/// that fslab made it.
fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != ".fslab-script")
        .collect();
    v.sort();
    v
}

fn size(p: &Path) -> u64 {
    std::fs::metadata(p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .len()
}

#[test]
fn every_operation_leaves_what_dbench_leaves_in_each_client_directory() {
    let load = loadfile(EVERY_OP);
    let opts = Options {
        skip_cleanup: true,
        ..options(&load, 2)
    };
    let run_dir = tempfile::tempdir().unwrap();
    let r = run(&passes(&opts, 1), run_dir.path());
    assert_eq!(r.status, Status::Ok, "{:?}", r.first_error);

    for client in ["client0", "client1"] {
        let base = run_dir.path().join("clients").join(client);
        let dir = base.join("dir");
        // Sizes come from the WriteX offsets and sizes; the rename moved b.txt; the unlink and the
        // rmdir removed theirs; Mkdir and the directory NTCreateX made directories.
        assert_eq!(entries(&dir), vec!["a.txt", "c.txt", "sub"], "{client}");
        assert_eq!(size(&dir.join("a.txt")), 4196);
        assert_eq!(size(&dir.join("c.txt")), 10);
        assert_eq!(size(&dir.join("sub/deep.txt")), 7);
        // The client's own directory was emptied, made (in vain) and opened: nothing else is in it.
        assert_eq!(entries(&base), vec!["dir"], "{client}");
    }
    // One pass per client: every line once per client, no status mismatch.
    for (name, per_client) in [
        ("NTCreateX", 8),
        ("Close", 8),
        ("Rename", 1),
        ("Unlink", 1),
        ("Rmdir", 1),
        ("Deltree", 1),
        ("Mkdir", 2),
        ("Qpathinfo", 2),
        ("Qfileinfo", 1),
        ("Qfsinfo", 1),
        ("Sfileinfo", 1),
        ("Find", 1),
        ("WriteX", 4),
        ("ReadX", 1),
        ("LockX", 1),
        ("UnlockX", 1),
        ("Flush", 1),
    ] {
        let s = step(&r, name);
        assert_eq!((s.count, s.mismatches, s.errors), (per_client * 2, 0, 0), "{name}");
    }
    // dbench counts the sizes asked for.
    assert_eq!(step(&r, "WriteX").bytes, 2 * (1000 + 100 + 10 + 7));
    assert_eq!(step(&r, "ReadX").bytes, 2 * 500);
}

#[test]
fn deltree_unlinks_files_and_keeps_directories() {
    let load = loadfile(&format!(
        "{EVERY_OP}Deltree \"\\clients\\client1\\dir\" NT_STATUS_OK\n\
         NTCreateX \"\\clients\\client1\\top.txt\" 0x40 0x2 8 NT_STATUS_OK\nClose 8 NT_STATUS_OK\n"
    ));
    let opts = Options {
        skip_cleanup: true,
        ..options(&load, 1)
    };
    let run_dir = tempfile::tempdir().unwrap();
    run(&passes(&opts, 1), run_dir.path());
    let base = run_dir.path().join("clients/client0");
    assert_eq!(entries(&base.join("dir")), vec!["sub"]);
    assert_eq!(entries(&base.join("dir/sub")), Vec::<String>::new());
    assert!(base.join("top.txt").is_file());

    // The Deltree of the client's own directory at the start of the next pass empties it all,
    // keeping the directories.
    let load2 = loadfile(&format!(
        "{}Deltree \"\\clients\\client1\" NT_STATUS_OK\n",
        load_text(&load)
    ));
    let opts = Options {
        skip_cleanup: true,
        ..options(&load2, 1)
    };
    let run_dir = tempfile::tempdir().unwrap();
    let r = run(&passes(&opts, 1), run_dir.path());
    let base = run_dir.path().join("clients/client0");
    assert_eq!(entries(&base), vec!["dir"]);
    assert_eq!(entries(&base.join("dir")), vec!["sub"]);
    assert_eq!(entries(&base.join("dir/sub")), Vec::<String>::new());
    assert_eq!(step(&r, "Deltree").count, 3, "three Deltree lines");
    assert_eq!(step(&r, "Deltree").mismatches, 0);
}

#[test]
fn a_directory_opened_as_a_file_is_opened_as_a_directory_and_locks_take_their_range() {
    let load = loadfile(&format!(
        r#"{MAKE_CLIENT}NTCreateX "\clients\client1\dir" 0x1 0x2 1 NT_STATUS_OK
Close 1 NT_STATUS_OK
NTCreateX "\clients\client1\dir" 0x0 0x1 2 NT_STATUS_OK
QUERY_FILE_INFORMATION 2 1004 NT_STATUS_OK
Close 2 NT_STATUS_OK
NTCreateX "\clients\client1\dir\f" 0x40 0x5 3 NT_STATUS_OK
LockX 3 2147483538 1 NT_STATUS_OK
UnlockX 3 2147483538 1 NT_STATUS_OK
LockX 3 0 10 NT_STATUS_OK
UnlockX 3 0 10 NT_STATUS_OK
Close 3 NT_STATUS_OK
"#
    ));
    let run_dir = tempfile::tempdir().unwrap();
    let r = run(&passes(&options(&load, 2), 2), run_dir.path());
    assert_eq!(r.status, Status::Ok, "{:?}", r.first_error);
    // dbench's open(O_RDWR) of a directory says EISDIR and is made again as a directory open:
    // every open succeeds, as the loadfile's status says, and so do the locks.
    for (name, count) in [
        ("NTCreateX", 16),
        ("Qfileinfo", 4),
        ("LockX", 8),
        ("UnlockX", 8),
        ("Close", 16),
    ] {
        let s = step(&r, name);
        assert_eq!((s.count, s.mismatches, s.errors), (count, 0, 0), "{name}");
    }
    let w = passes(&options(&load, 1), 1);
    let s = w.groups[0].script.as_ref().unwrap();
    assert!(
        matches!(
            s.steps[9].call,
            Call::Lock {
                offset: 2_147_483_538,
                len: 1,
                ..
            }
        ),
        "{:?}",
        s.steps[9].call
    );
}

fn load_text(l: &Loadfile) -> String {
    std::fs::read_to_string(&l.path).unwrap()
}

#[test]
fn n_clients_work_in_clients_client0_to_n_minus_1_and_are_cleaned_up() {
    let load = loadfile(EVERY_OP);
    let kept = tempfile::tempdir().unwrap();
    let opts = Options {
        skip_cleanup: true,
        ..options(&load, 3)
    };
    run(&passes(&opts, 1), kept.path());
    assert_eq!(
        entries(&kept.path().join("clients")),
        vec!["client0", "client1", "client2"]
    );
    for c in 0..3 {
        assert_eq!(size(&kept.path().join(format!("clients/client{c}/dir/a.txt"))), 4196);
    }

    // With cleanup (dbench's default), dbench's: each client's files go, its directories stay,
    // and the rmdir of clients/ fails, as it holds them.
    let clean = tempfile::tempdir().unwrap();
    run(&passes(&options(&load, 3), 2), clean.path());
    assert_eq!(entries(clean.path()), vec!["clients"]);
    for c in 0..3 {
        let base = clean.path().join(format!("clients/client{c}"));
        assert_eq!(entries(&base), vec!["dir"]);
        assert_eq!(entries(&base.join("dir")), vec!["sub"]);
        assert_eq!(entries(&base.join("dir/sub")), Vec::<String>::new());
    }
}

#[test]
fn status_mismatches_are_counted_per_operation_and_the_replay_goes_on() {
    let load = loadfile(
        r#"Deltree "\clients\client1" NT_STATUS_OK
Mkdir "\clients" NT_STATUS_OK
NTCreateX "\clients\client1" 0x1 0x2 99 NT_STATUS_OK
Close 99 NT_STATUS_OK
QUERY_PATH_INFORMATION "\clients\client1\missing" 1004 NT_STATUS_OK
Unlink "\clients\client1\missing" 0x20 NT_STATUS_OK
NTCreateX "\clients\client1\x.txt" 0x40 0x2 7 NT_STATUS_OBJECT_NAME_COLLISION
Close 7 NT_STATUS_OK
NTCreateX "\clients\client1\y.txt" 0x40 0x2 8 NT_STATUS_OK
Close 8 NT_STATUS_OK
"#,
    );
    let run_dir = tempfile::tempdir().unwrap();
    let r = run(&passes(&options(&load, 2), 3), run_dir.path());
    assert_eq!(r.status, Status::Ok, "mismatches are not errors: {:?}", r.first_error);
    // Three passes of two clients: every line ran six times; the stat and the unlink of a missing
    // file and the open that should have failed are mismatches each time. That open is closed at
    // once and fills no handle, as dbench's nb_createx does, so the Close of its handle finds
    // none (dbench stops there; fslab counts it and goes on).
    assert_eq!((step(&r, "Qpathinfo").count, step(&r, "Qpathinfo").mismatches), (6, 6));
    assert_eq!((step(&r, "Unlink").count, step(&r, "Unlink").mismatches), (6, 6));
    assert_eq!((step(&r, "NTCreateX").count, step(&r, "NTCreateX").mismatches), (18, 6));
    assert_eq!((step(&r, "Close").count, step(&r, "Close").mismatches), (18, 6));
    let rows = report::op_rows(&r);
    assert_eq!(rows.iter().map(|r| r.mismatches).sum::<u64>(), 24);
}

#[test]
fn timestamped_lines_are_paced() {
    let load = loadfile(
        "0.0 NTCreateX \"\\clients\\client1\\p.txt\" 0x40 0x2 1 NT_STATUS_OK\n\
         0.4 Close 1 NT_STATUS_OK\n",
    );
    let run_dir = tempfile::tempdir().unwrap();
    let w = passes(&options(&load, 1), 1);
    assert!(w.groups[0].script.as_ref().unwrap().paced);
    let t = Instant::now();
    run(&w, run_dir.path());
    assert!(t.elapsed() >= Duration::from_millis(400), "{:?}", t.elapsed());
}

#[test]
fn malformed_lines_are_refused_with_their_line_number() {
    let cases = [
        ("Close 1 NT_STATUS_OK\nClose 2 DONE\n", ":2:", "NT_STATUS_ or 0x"),
        (
            "Close 1 NT_STATUS_OK\n\n# c\nLOOP 3 NT_STATUS_OK\n",
            ":4:",
            "unknown operation `LOOP`",
        ),
        ("WriteX 1 0 NT_STATUS_OK\n", ":1:", "WriteX takes"),
        ("ReadX 1 x 5 5 NT_STATUS_OK\n", ":1:", "not a number"),
        (
            "Close 1 NT_STATUS_OK\nUnlink \"\\clients\\client1\\..\\x\" 0 NT_STATUS_OK\n",
            ":2:",
            "`..`",
        ),
        ("Mkdir \"\\tmp\\x\" NT_STATUS_OK\n", ":1:", "absolute"),
        ("# only a comment\n", ":0:", "no operations"),
    ];
    for (text, line, what) in cases {
        let load = loadfile(text);
        let e = dbench::workload(&options(&load, 1)).unwrap_err().to_string();
        let at = format!("{}{line}", load.path.display());
        assert!(e.starts_with(&at) && e.contains(what), "{text:?}: {e}");
    }
}

#[test]
fn a_missing_loadfile_is_named() {
    let opts = Options {
        loadfile: Some(PathBuf::from("/nonexistent/client.txt")),
        ..Options::default()
    };
    let e = dbench::workload(&opts).unwrap_err().to_string();
    assert!(e.contains("/nonexistent/client.txt"), "{e}");
}

#[test]
fn throughput_is_the_last_per_second_sample_of_the_execute_phase() {
    let load = loadfile(EVERY_OP);
    let opts = Options {
        time: 2,
        warmup: Some(1),
        ..options(&load, 2)
    };
    let w = dbench::workload(&opts).unwrap();
    assert_eq!(w.stop.time, Some(Span(Duration::from_secs(2))));
    assert_eq!(w.stop.ramp, Span(Duration::from_secs(1)));
    assert!(w.cleanup);
    let mut live = report::Live::new(2, Duration::from_secs(1), Duration::from_secs(2));
    let run_dir = tempfile::tempdir().unwrap();
    let r = fslab_engine::run(
        &w,
        &RunOptions {
            dir: run_dir.path().to_path_buf(),
            ..RunOptions::default()
        },
        &mut |p| {
            live.tick(p.elapsed, &p.second);
        },
    )
    .unwrap();
    let samples = live.samples();
    let phases: Vec<report::Phase> = samples.iter().map(|s| s.phase).collect();
    // As dbench prints them: no warm-up line for a 1 s warm-up (its one second is the one it ends
    // in), execute lines up to -t - 1 (the second the run ends in is the cleanup line).
    assert!(phases.iter().all(|p| *p == report::Phase::Execute), "{phases:?}");
    assert!(samples.iter().all(|s| (0.5..1.5).contains(&s.secs)), "{samples:?}");
    assert_eq!(phases.len(), 1, "{phases:?}");
    let text = report::summary(&r, &live, &opts);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[..2], ["   2  cleanup   2 sec", "   0  cleanup   2 sec"]);
    let last = samples.last().unwrap();
    assert_eq!(live.throughput(), Some(last.mb_per_sec));
    assert!(last.mb_per_sec > 0.0);
    let throughput = text
        .lines()
        .find(|l| l.starts_with("Throughput "))
        .expect("a Throughput line");
    assert_eq!(
        throughput,
        format!(
            "Throughput {} MB/sec  2 clients  2 procs  max_latency={:.3} ms",
            report::format_g(last.mb_per_sec),
            live.max_latency_ms()
        )
    );
    let figures = report::figures(&r, &live, &opts);
    assert_eq!(figures.throughput_mb_per_sec, Some(last.mb_per_sec));
    assert_eq!(figures.clients, 2);
}

/// Debian's client.txt compiles to one step per line (plus dbench's name look-ups), with the
/// operation counts the reference gives.
#[test]
#[ignore = "system tier: dbench's client.txt"]
fn debian_client_txt_compiles_with_its_operation_counts() {
    fslab_testkit::require_file(dbench::DEFAULT_LOADFILE, "dbench");
    let opts = Options {
        no_resolve: true,
        ..Options::default()
    };
    let w = dbench::workload(&opts).unwrap();
    let s = w.groups[0].script.as_ref().unwrap();
    let count = |name: &str| s.steps.iter().filter(|st| s.labels[st.label as usize] == name).count();
    for (name, n) in [
        ("ReadX", 124_199),
        ("NTCreateX", 79_230),
        ("Qpathinfo", 71_814),
        ("Close", 58_200),
        ("WriteX", 39_502),
        ("Find", 27_765),
        ("Unlink", 16_000),
        ("Qfsinfo", 13_168),
        ("Qfileinfo", 12_585),
        ("Sfileinfo", 6_454),
        ("Flush", 5_553),
        ("Rename", 3_355),
        ("LockX", 258),
        ("UnlockX", 258),
        ("Deltree", 2),
        ("Mkdir", 1),
    ] {
        assert_eq!(count(name), n, "{name}");
    }
    assert!(!s.paced);
    assert!(w.validate().is_ok());
    // One step a line, the name look-ups inside them: 458,344 steps with or without them.
    assert_eq!(s.steps.len(), 458_344);
    let w = dbench::workload(&Options::default()).unwrap();
    assert_eq!(w.groups[0].script.as_ref().unwrap().steps.len(), 458_344);
    assert!(w.validate().is_ok());
}

#[test]
fn a_loadfile_that_is_not_utf8_is_refused_at_its_line_and_byte() {
    let dir = fslab_testkit::tempdir();
    let path = dir.path().join("client.txt");
    std::fs::write(&path, b"Mkdir \"/a\" NT_STATUS_OK\nMkdir \"/\xff\" NT_STATUS_OK\n").unwrap();
    let opts = Options {
        loadfile: Some(path.clone()),
        ..Options::default()
    };
    let e = dbench::read_loadfile(&opts).unwrap_err().to_string();
    assert_eq!(
        e,
        format!(
            "{}:2: byte 9 of the line (0xff) is not valid UTF-8; the file must be UTF-8 text",
            path.display()
        )
    );
}
