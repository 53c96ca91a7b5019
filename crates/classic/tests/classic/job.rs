//! One workload across the ranks of a job, with `ranks::local(4)`: four threads as the four
//! ranks MPI would start, each with its own Context, in one shared directory.

use fslab_classic::job::{self, Job};
use fslab_classic::ranks;
use fslab_classic::{Context, Outcome, Tool};
use fslab_engine::result::StopReason;
use fslab_engine::{RunOptions, RunResult, Workload};
use fslab_testkit::{tempdir, within};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

const RANKS: usize = 4;
const HANG: Duration = Duration::from_secs(60);

/// `fslab TOOL ARGS` run by each of four ranks: each rank's outcome and the text it printed.
fn run_job(tool: Tool, args: Vec<String>) -> Vec<(Outcome, String)> {
    within(HANG, "a job of four ranks", move || {
        let handles: Vec<_> = ranks::local(RANKS)
            .into_iter()
            .map(|rank| {
                let args = args.clone();
                std::thread::spawn(move || {
                    let (mut frontend, common) = tool.parse(&args).unwrap_or_else(|e| panic!("{e}"));
                    let mut printed = String::new();
                    let mut out = |t: &str| printed.push_str(t);
                    let mut progress = |_: &str, _: &fslab_engine::Progress| {};
                    let mut ctx = Context::new(&common, Arc::new(AtomicBool::new(false)), &mut out, &mut progress);
                    ctx.ranks = rank;
                    let outcome = job::execute(frontend.as_mut(), &mut ctx).unwrap_or_else(|e| panic!("{e}"));
                    drop(ctx);
                    (outcome, printed)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("a rank")).collect()
    })
}

/// Bytes of the regular files beneath `dir`.
fn bytes_on_disk(dir: &Path) -> u64 {
    std::fs::read_dir(dir).map_or(0, |d| {
        d.flatten()
            .map(|e| match e.file_type() {
                Ok(t) if t.is_dir() => bytes_on_disk(&e.path()),
                Ok(t) if t.is_file() && !e.file_name().to_string_lossy().starts_with('.') => {
                    e.metadata().map_or(0, |m| m.len())
                }
                _ => 0,
            })
            .sum()
    })
}

#[test]
fn a_job_s_counts_and_bytes_are_the_sum_of_its_ranks_and_of_the_files_on_disk() {
    let dir = tempdir();
    let file = dir.path().join("writes.toml");
    std::fs::write(&file, fslab_testkit::TWO_WRITERS).unwrap();
    let target: PathBuf = dir.path().join("target");
    std::fs::create_dir(&target).unwrap();
    let args = vec![
        file.display().to_string(),
        "--dir".into(),
        target.display().to_string(),
        "--json".into(),
    ];
    let outcomes = run_job(Tool::Run, args);
    for (rank, (o, _)) in outcomes.iter().enumerate() {
        let ranks: Vec<usize> = o.ranks.iter().map(|r| r.rank).collect();
        assert_eq!(ranks, [0, 1, 2, 3], "rank {rank} keeps every rank's figures");
        assert_eq!(o.hosts.len(), 1, "one host");
        assert_eq!(o.hosts[0].ranks, [0, 1, 2, 3]);
    }
    let o = &outcomes[0].0;
    let r = &o.phases[0].result;
    // Each rank wrote its two 256k files in 4k blocks: 128 writes each, 512 in the job.
    assert_eq!(r.totals.ops, 4 * 128);
    assert_eq!(r.totals.ops, o.ranks.iter().map(|f| f.ops).sum::<u64>());
    assert_eq!(r.totals.bytes_written, o.ranks.iter().map(|f| f.bytes).sum::<u64>());
    let mut on_disk = 0;
    for rank in 0..RANKS {
        let mine = bytes_on_disk(&target.join(format!("rank.{rank}")));
        assert_eq!(mine, 512 << 10, "rank.{rank} holds that rank's files");
        assert_eq!(mine, o.ranks[rank].bytes);
        on_disk += mine;
    }
    assert_eq!(r.totals.bytes_written, on_disk);
    let writes = &r.ops[0];
    assert_eq!(writes.histogram.iter().map(|b| b.1).sum::<u64>(), writes.count);
    assert_eq!(r.threads.len(), 8, "two threads per rank");
    assert_eq!(r.dir, target.display().to_string(), "the job's directory");
    // The document says so; alone it has neither field.
    let json = o.to_json();
    assert!(json.contains("\"ranks\"") && json.contains("\"hosts\""));
    let back = Outcome::from_json(&json).unwrap();
    assert_eq!(back.ranks, o.ranks);
}

#[test]
fn only_the_leading_rank_prints_the_original_s_report_and_it_is_the_whole_job_s() {
    let dir = tempdir();
    let args: Vec<String> = format!(
        "fileio --file-num=2 --file-total-size=256K --file-test-mode=seqwr --dir {}",
        dir.path().display()
    )
    .split_whitespace()
    .map(String::from)
    .collect();
    let mut prepare = args.clone();
    prepare.push("prepare".into());
    run_job(Tool::Sysbench, prepare);
    for rank in 0..RANKS {
        assert_eq!(
            bytes_on_disk(&dir.path().join(format!("rank.{rank}"))),
            256 << 10,
            "prepare made rank {rank}'s files in its own directory"
        );
    }
    let mut run = args;
    run.extend(["--time=0", "--events=40", "run"].map(String::from));
    let outcomes = run_job(Tool::Sysbench, run);
    assert!(outcomes[0].1.contains("File operations"), "{}", outcomes[0].1);
    for (o, printed) in &outcomes[1..] {
        assert_eq!(printed, "", "other ranks print nothing");
        assert_eq!(o.report, outcomes[0].0.report, "every rank computed the job's report");
    }
    let r = &outcomes[0].0.phases[0].result;
    assert_eq!(
        r.totals.ops - count(r, "fsync"),
        4 * 40,
        "forty events on each of four ranks"
    );
}

fn count(r: &RunResult, op: &str) -> u64 {
    r.ops.iter().filter(|o| o.op.to_string() == op).map(|o| o.count).sum()
}

/// A short stream of 16 reads, and a long one that wraps around its file; on every rank but the
/// first the short stream pauses a second after each read, so rank 0 finishes first.
fn stonewall(delay: &str) -> Workload {
    let text = fslab_testkit::short_and_long(&format!("delay = \"{delay}\""));
    Workload::from_toml(&text, "stonewall.toml").unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn the_first_rank_to_finish_stops_every_rank_of_a_stonewalled_job() {
    let dir = tempdir();
    let root = dir.path().to_path_buf();
    let results: Vec<RunResult> = within(HANG, "a stonewalled job", move || {
        let handles: Vec<_> = ranks::local(RANKS)
            .into_iter()
            .map(|rank| {
                let root = root.clone();
                std::thread::spawn(move || {
                    let w = stonewall(if rank.rank() == 0 { "0s" } else { "1s" });
                    let opts = RunOptions {
                        dir: root,
                        ..RunOptions::default()
                    };
                    let job = Job::new(rank.clone());
                    let merged = job::run(&job, &w, opts, &mut |_| {}).unwrap_or_else(|e| panic!("{e}"));
                    let log = job.log.lock().unwrap();
                    assert_eq!(log.ranks.len(), RANKS);
                    drop(log);
                    merged
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("a rank")).collect()
    });
    let merged = &results[0];
    assert_eq!(merged.stopped_by, StopReason::Stonewall);
    let shorts: Vec<_> = merged.threads.iter().filter(|t| t.group == "short").collect();
    assert_eq!(shorts.len(), RANKS);
    assert!(
        shorts[0].finished && shorts[0].ops == 16,
        "rank 0 read its file: {:?}",
        shorts[0]
    );
    for (rank, t) in shorts.iter().enumerate().skip(1) {
        // At a read a second it would take 16 s to finish: it was stopped.
        assert!(!t.finished && t.ops < 16, "rank {rank} was stopped: {t:?}");
    }
    let longs = merged.threads.iter().filter(|t| t.group == "long");
    assert!(
        longs.clone().all(|t| !t.finished),
        "a wrapping stream never finishes by itself"
    );
    assert_eq!(longs.count(), RANKS);
}

/// A dbench loadfile of a few lines: one file written and read back.
const LOAD: &str = r#"NTCreateX "\clients\client1\f.txt" 0x40 0x5 2 NT_STATUS_OK
WriteX 2 0 65536 65536 NT_STATUS_OK
ReadX 2 0 65536 65536 NT_STATUS_OK
Close 2 NT_STATUS_OK
"#;

#[test]
fn dbench_reports_the_throughput_of_every_client_of_every_rank() {
    let dir = tempdir();
    let load = dir.path().join("load.txt");
    std::fs::write(&load, LOAD).unwrap();
    let target = dir.path().join("d");
    std::fs::create_dir(&target).unwrap();
    let args: Vec<String> = format!("-c {} -D {} -t 2 --warmup 0 2", load.display(), target.display())
        .split_whitespace()
        .map(String::from)
        .collect();
    let outcomes = run_job(Tool::Dbench, args);
    let (o, printed) = &outcomes[0];
    assert!(printed.contains("8 clients  8 procs"), "{printed}");
    let figures = o.figures.as_ref().unwrap();
    assert_eq!(figures["clients"].as_u64(), Some(8), "{figures}");
    for (_, p) in &outcomes[1..] {
        assert_eq!(p, "");
    }
    let r = &o.phases[0].result;
    assert_eq!(r.threads.len(), 8, "two clients on each of four ranks");
    assert_eq!(r.totals.ops, o.ranks.iter().map(|f| f.ops).sum::<u64>());
}

/// An FFSB 6.0 profile of a few small files, read by one thread for a second.
const PROFILE: &str = "time=1\n\
[filesystem0]\n\tlocation=/unused\n\tnum_files=20\n\tnum_dirs=2\n\tmin_filesize=4k\n\tmax_filesize=4k\n[end0]\n\
[threadgroup0]\n\tnum_threads=1\n\tread_weight=1\n\tread_size=4k\n\tread_blocksize=4k\n[end0]\n";

#[test]
fn ffsb_runs_each_rank_in_its_own_directory_and_reports_the_job() {
    let dir = tempdir();
    let profile = dir.path().join("small.ffsb");
    std::fs::write(&profile, PROFILE).unwrap();
    let target = dir.path().join("t");
    std::fs::create_dir(&target).unwrap();
    let args = vec![
        profile.display().to_string(),
        "--dir".into(),
        target.display().to_string(),
    ];
    let outcomes = run_job(Tool::Ffsb, args);
    for rank in 0..RANKS {
        assert_eq!(
            bytes_on_disk(&target.join(format!("rank.{rank}"))),
            20 * 4096,
            "rank {rank}'s twenty files"
        );
    }
    assert_eq!(
        bytes_on_disk(&target),
        RANKS as u64 * 20 * 4096,
        "nothing outside the ranks' directories"
    );
    let (o, printed) = &outcomes[0];
    assert!(printed.contains("Transactions per Second"), "{printed}");
    for (_, p) in &outcomes[1..] {
        assert_eq!(p, "");
    }
    let r = &o.phases[0].result;
    assert_eq!(r.threads.len(), RANKS, "one thread on each rank");
    assert_eq!(r.totals.ops, o.ranks.iter().map(|f| f.ops).sum::<u64>());
    assert_eq!(r.setup[0].files, RANKS as u64 * 20);
}
