//! Threads that end as IOzone's children (`stop.child_end`). A child whose work is its own stream
//! and nothing else runs a loop of its own, without the mix's choice of operation per call: it
//! must count, move and leave on disk exactly what the mix's loop does.

use crate::common::{counts, data_files, run_ok, try_run_opts, workload};
use fslab_engine::result::RunResult;
use fslab_engine::RunOptions;
use fslab_testkit::tempdir;

/// Two threads, each streaming `op` through its own file of 100,000 bytes (24 whole 4 KiB
/// blocks and a short one), as IOzone's children or as a plain mix.
fn streams(op: &str, extra_op: &str, child_end: bool, stop: &str) -> fslab_engine::Workload {
    streams_by("seek", op, extra_op, child_end, stop)
}

/// [`streams`] by the `engine`'s calls.
fn streams_by(engine: &str, op: &str, extra_op: &str, child_end: bool, stop: &str) -> fslab_engine::Workload {
    let end = if child_end {
        // No fsync at its end, so that its figures are the stream's alone.
        "child_end = { close_fsync = false }\n"
    } else {
        ""
    };
    workload(&format!(
        "name = \"streams\"\nseed = 11\n[stop]\n{end}{stop}\n\
         [[fileset]]\nname = \"data\"\nfiles = 2\ndirs = 0\nsize = 100000\n\
         [[group]]\nname = \"g\"\nthreads = 2\nfileset = \"data\"\nengine = \"{engine}\"\n\
         [[group.op]]\nop = \"{op}\"\nbs = \"4k\"\n{extra_op}"
    ))
}

/// (thread, ops, bytes, finished) of each thread of a run.
fn threads(r: &RunResult) -> Vec<(u32, u64, u64, bool)> {
    r.threads
        .iter()
        .map(|t| (t.thread, t.ops, t.bytes, t.finished))
        .collect()
}

#[test]
fn a_child_streaming_its_own_file_counts_and_writes_what_the_mix_does() {
    for (op, extra) in [
        ("seqread", ""),
        ("seqread", "reverse = true\n"),
        ("rewrite", ""),
        ("seqwrite", ""),
    ] {
        let (child_dir, mix_dir) = (tempdir(), tempdir());
        let child = run_ok(&streams(op, extra, true, ""), child_dir.path());
        let mix = run_ok(&streams(op, extra, false, ""), mix_dir.path());
        let (child_counts, child_threads) = (counts(&child), threads(&child));
        assert_eq!(
            (&child_counts, &child_threads),
            (&counts(&mix), &threads(&mix)),
            "{op} {extra}"
        );
        // 25 calls per file, the last a short one: a read's transactions are its whole blocks
        // (24 per file), a write's its calls.
        let (_, count, errors, _, bytes, transactions) = child_counts[0];
        let whole = if op == "seqread" { 48 } else { 50 };
        assert_eq!(
            (count, errors, bytes, transactions),
            (50, 0, 200_000, whole),
            "{op} {extra}"
        );
        assert_eq!(
            child_threads,
            [(0, 25, 100_000, true), (1, 25, 100_000, true)],
            "{op} {extra}"
        );
        // Every call was timed: its latency is in the histogram.
        let timed: u64 = child.ops[0].histogram.iter().map(|b| b.1).sum();
        assert_eq!(timed, 50, "{op} {extra}");
        let contents = |dir: &std::path::Path| -> Vec<Vec<u8>> {
            data_files(&dir.join("data"))
                .iter()
                .map(|(f, _)| std::fs::read(f).expect("a data file"))
                .collect()
        };
        let left = contents(child_dir.path());
        assert_eq!(left.iter().map(Vec::len).collect::<Vec<_>>(), [100_000; 2]);
        assert!(
            left == contents(mix_dir.path()),
            "{op} {extra}: the files left behind differ"
        );
    }
}

/// `streams` run without latencies, as IOzone's automatic mode runs: then a child's stream is
/// made by a loop that leaves nothing but the calls between them (`run_bare_stream`).
fn untimed(w: &fslab_engine::Workload, dir: &std::path::Path) -> RunResult {
    let opts = RunOptions {
        dir: dir.to_path_buf(),
        no_latency: true,
        ..RunOptions::default()
    };
    let r = try_run_opts(w, opts).unwrap_or_else(|e| panic!("the run failed: {e}"));
    assert!(r.first_error.is_none(), "{:?}", r.first_error);
    r
}

#[test]
fn an_untimed_child_counts_and_writes_what_the_mix_does_by_each_kind_of_call() {
    for engine in ["seek", "sync"] {
        for op in ["seqread", "rewrite", "seqwrite"] {
            let (child_dir, mix_dir) = (tempdir(), tempdir());
            let child = untimed(&streams_by(engine, op, "", true, ""), child_dir.path());
            let mix = run_ok(&streams_by(engine, op, "", false, ""), mix_dir.path());
            assert_eq!(
                (counts(&child), threads(&child)),
                (counts(&mix), threads(&mix)),
                "{engine} {op}"
            );
            assert_eq!(counts(&child)[0].4, 200_000, "{engine} {op}");
            let sizes = |dir: &std::path::Path| {
                data_files(&dir.join("data"))
                    .into_iter()
                    .map(|(_, n)| n)
                    .collect::<Vec<_>>()
            };
            assert_eq!(sizes(child_dir.path()), [100_000; 2], "{engine} {op}");
            for (a, b) in data_files(&child_dir.path().join("data"))
                .iter()
                .zip(data_files(&mix_dir.path().join("data")))
            {
                assert!(
                    std::fs::read(&a.0).unwrap() == std::fs::read(&b.0).unwrap(),
                    "{engine} {op}: {:?} differs",
                    a.0
                );
            }
        }
    }
    // A quota stops the loop where the mix's stops.
    let dir = tempdir();
    let r = untimed(&streams("seqread", "", true, "ops = 20"), dir.path());
    assert_eq!(threads(&r), [(0, 10, 40960, true), (1, 10, 40960, true)]);
}

#[test]
fn a_child_streaming_its_own_file_stops_at_its_share_of_the_run_s_operations() {
    let dir = tempdir();
    let r = run_ok(&streams("seqread", "", true, "ops = 20"), dir.path());
    let read = counts(&r)[0];
    assert_eq!((read.1, read.4), (20, 20 * 4096));
    assert_eq!(threads(&r), [(0, 10, 40960, true), (1, 10, 40960, true)]);
}

/// A reader and a slow writer on two files of 64 KiB, stonewalled: the reader finishes first and
/// stops the writer. `writer_end` is the writers' group's own `child_end`, if any. The writer's
/// file's size after the run.
fn stonewalled_writer(writer_end: &str) -> (RunResult, u64) {
    let dir = tempdir();
    let w = workload(&format!(
        "name = \"mixed\"\n[stop]\nstonewall = true\nchild_end = {{ close_fsync = false }}\n\
         [[fileset]]\nname = \"data\"\nfiles = 2\ndirs = 0\nsize = \"64k\"\n\
         [[group]]\nname = \"readers\"\nfileset = \"data\"\nengine = \"seek\"\n\
         [[group.op]]\nop = \"seqread\"\nbs = \"4k\"\n\
         [[group]]\nname = \"writers\"\nfileset = \"data\"\nengine = \"seek\"\ndelay = \"5ms\"\n{writer_end}\
         [[group.op]]\nop = \"seqwrite\"\nbs = \"4k\"\n"
    ));
    let r = run_ok(&w, dir.path());
    let size = std::fs::metadata(dir.path().join("data/f1")).unwrap().len();
    (r, size)
}

#[test]
fn a_group_can_end_its_threads_its_own_way() {
    let writer = |r: &RunResult| {
        let t = r.threads.iter().find(|t| t.group == "writers").unwrap();
        (t.bytes, t.finished)
    };
    // As the run's readers: the stopped writer stops where it is (16 blocks take it 80 ms).
    let (r, size) = stonewalled_writer("");
    let (counted, finished) = writer(&r);
    assert!(!finished && counted < 64 << 10, "{counted} bytes counted");
    assert_eq!(size, counted, "the writer's file holds what it counted");
    // As IOzone's random writers: it takes its figures, then finishes its file uncounted.
    let (r, size) = stonewalled_writer("child_end = { finish_uncounted = true, close_fsync = false }\n");
    let (counted, finished) = writer(&r);
    assert!(!finished && counted < 64 << 10, "{counted} bytes counted");
    assert_eq!(size, 64 << 10, "the stopped writer finished its file");
}
