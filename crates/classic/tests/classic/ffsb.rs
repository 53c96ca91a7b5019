//! FFSB profiles run for real, in temporary directories: the seed studies' profiles, both
//! grammars, FFSB's counting (transactions, bytes, % op weight), setup only, aging, several
//! filesystems, and the text FFSB prints.

use fslab_classic::ffsb::{self, Grammar, Options, Outcome, Plan, Table};
use fslab_engine::workload::{OpKind, SizeDist};
use fslab_engine::Bytes;
use fslab_testkit::{tempdir, Tmpfs};
use std::path::{Path, PathBuf};
use std::time::Duration;

fn profile(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../profiles").join(name)
}

/// Parses `text` and runs it with `opts`.
fn run(text: &str, opts: Options) -> (Plan, Outcome) {
    let p = ffsb::parse(text, "test.ffsb").unwrap_or_else(|e| panic!("{e}"));
    let plan = ffsb::compile(&p, &opts).unwrap_or_else(|e| panic!("{e}"));
    let outcome =
        ffsb::execute(&plan, &fslab_classic::job::Job::alone(), None, &mut |_, _| {}).unwrap_or_else(|e| panic!("{e}"));
    if let Some(r) = &outcome.result {
        assert!(r.first_error.is_none(), "the run failed: {:?}", r.first_error);
    }
    (plan, outcome)
}

fn in_dir(dir: &Path, time: u64) -> Options {
    Options {
        time: Some(time),
        dir: Some(dir.to_path_buf()),
        seed: Some(7),
        ..Options::default()
    }
}

fn total(plan: &Plan, outcome: &Outcome) -> Table {
    ffsb::figures(plan, outcome).total.expect("a total table")
}

fn row<'a>(t: &'a Table, op: &str) -> &'a ffsb::Row {
    t.ops
        .iter()
        .find(|r| r.op == op)
        .unwrap_or_else(|| panic!("no row {op} in {:?}", t.ops))
}

/// Regular files beneath `dir`, with their sizes.
fn files(dir: &Path) -> Vec<u64> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let e = e.unwrap();
        let meta = e.metadata().unwrap();
        if meta.is_dir() {
            out.extend(files(&e.path()));
        } else if !e.file_name().to_string_lossy().starts_with('.') {
            out.push(meta.len());
        }
    }
    out
}

/// Every figure FFSB 6.0 prints for a run.
fn assert_prints_ffsb_figures(text: &str, ops: &[&str]) {
    assert!(
        text.contains("             Op Name   Transactions\t Trans/sec\t% Trans\t    % Op Weight\t   Throughput"),
        "no table header in:\n{text}"
    );
    assert_prints_v5_figures(text, ops);
}

/// Every figure FFSB 5.2.1 prints for a run (its `name : N ops (x%)` lines, without 6.0's table).
fn assert_prints_v5_figures(text: &str, ops: &[&str]) {
    for want in [
        "fs setup took ",
        "Benchmark took ",
        " Transactions per Second",
        "% User   Time",
        "% System Time",
        "% CPU Utilization",
    ] {
        assert!(text.contains(want), "no `{want}` in:\n{text}");
    }
    for op in ops {
        assert!(text.contains(&format!("{op:>20} : ")), "no row for {op} in:\n{text}");
    }
}

#[test]
fn the_seed_profiles_parse_unchanged() {
    let big = ffsb::load(&profile("large-seqwrite.ffsb")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(big.grammar, Grammar::V5);
    assert_eq!(big.time, Some((300, 4)));
    let fs = &big.filesystems[0];
    assert_eq!(fs.location.as_deref(), Some("/mnt/test/"));
    assert_eq!(
        (fs.num_files, fs.num_dirs, fs.min_filesize, fs.max_filesize),
        (0, 0, 1 << 30, 1 << 30)
    );
    let plan = ffsb::compile(&big, &Options::default()).unwrap_or_else(|e| panic!("{e}"));
    let w = &plan.workload;
    assert_eq!(w.stop.time.map(|t| t.0), Some(Duration::from_secs(300)));
    assert_eq!(w.filesets[0].root.as_deref(), Some("/mnt/test/"));
    assert_eq!(w.filesets[0].size, SizeDist::Fixed(Bytes(1 << 30)));
    let g = &w.groups[0];
    assert_eq!((g.threads, g.ops.len()), (4, 1));
    assert_eq!((g.ops[0].op, g.ops[0].bs), (OpKind::Create, Some(Bytes(65536))));
    assert_eq!(g.ops[0].label.as_deref(), Some("create"), "labelled with FFSB's name");
    // The starting files are written in create_blocksize blocks, 4096 by default.
    assert_eq!(w.filesets[0].setup_bs, Some(Bytes(4096)));

    let small = ffsb::load(&profile("smallfile.ffsb")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(small.grammar, Grammar::V5);
    let plan = ffsb::compile(&small, &Options::default()).unwrap_or_else(|e| panic!("{e}"));
    let fs = &plan.workload.filesets[0];
    assert_eq!((fs.files, fs.dirs), (5000, 1000));
    assert_eq!(
        fs.size,
        SizeDist::Range {
            min: Bytes(4096),
            max: Bytes(524288)
        }
    );
    let g = &plan.workload.groups[0];
    assert_eq!(g.threads, 128);
    let mix: Vec<(OpKind, Option<&str>, u32)> = g.ops.iter().map(|o| (o.op, o.label.as_deref(), o.weight)).collect();
    assert_eq!(
        mix,
        vec![
            (OpKind::ReadAll, Some("readall"), 2),
            (OpKind::Write, Some("write"), 1),
            (OpKind::Create, Some("create"), 1)
        ]
    );
}

#[test]
fn seed_000_large_sequential_writes_run_scaled_down() {
    let text = std::fs::read_to_string(profile("large-seqwrite.ffsb"))
        .unwrap()
        .replace("1073741824", "4194304");
    let dir = tempdir();
    let (plan, outcome) = run(&text, in_dir(dir.path(), 1));
    let result = outcome.result.as_ref().unwrap();
    assert!(result.duration >= Duration::from_secs(1), "{:?}", result.duration);
    assert!(result.final_sync.is_some(), "the final sync counts inside the time");
    let t = total(&plan, &outcome);
    let create = row(&t, "create");
    assert!(create.invocations > 0);
    // One transaction per 64 KiB write of each 4 MiB file; the bytes are the files' sizes.
    assert_eq!(create.transactions, 64 * create.invocations);
    assert_eq!(create.bytes, 4194304 * create.invocations);
    assert_eq!((create.trans_pct, create.op_weight_pct), (100.0, 100.0));
    // The files stay, in DIR/data (num_dirs=0: no subdirectories).
    let on_disk = files(&dir.path().join("data"));
    assert_eq!(on_disk.len() as u64, create.invocations);
    assert!(on_disk.iter().all(|s| *s == 4194304));
    let text = ffsb::render(&plan, &outcome);
    assert_prints_v5_figures(&text, &[]);
    // 5.2.1 prints only its own throughput line for a run of one operation: no op line, no table.
    assert!(
        text.contains("Total Results\n===============\nThroughput: ") && text.contains(" creates/sec -> "),
        "{text}"
    );
    assert!(
        !text.contains("create : ") && !text.contains("Op Name   Transactions"),
        "{text}"
    );
}

#[test]
fn seed_002_small_files_run_scaled_down() {
    let text = std::fs::read_to_string(profile("smallfile.ffsb"))
        .unwrap()
        .replace("num_files=5000", "num_files=40")
        .replace("num_dirs=1000", "num_dirs=8")
        .replace("num_threads=128", "num_threads=4");
    let dir = tempdir();
    let (plan, outcome) = run(&text, in_dir(dir.path(), 1));
    let result = outcome.result.as_ref().unwrap();
    assert_eq!(result.setup[0].files, 40);
    let t = total(&plan, &outcome);
    assert_eq!(
        t.ops.iter().map(|r| r.op.as_str()).collect::<Vec<_>>(),
        vec!["readall", "write", "create"]
    );
    // write moves write_size in write_blocksize blocks: one transaction of 4 KiB each, counted
    // as FFSB 5.x counts it (not 6.0's whole file).
    let write = row(&t, "write");
    assert_eq!(write.transactions, write.invocations);
    assert_eq!(write.bytes, 4096 * write.invocations);
    let weights: f64 = t.ops.iter().map(|r| r.op_weight_pct).sum();
    assert!((weights - 100.0).abs() < 1e-9, "{weights}");
    let trans: f64 = t.ops.iter().map(|r| r.trans_pct).sum();
    assert!((trans - 100.0).abs() < 1e-9, "{trans}");
    assert_eq!(t.read_bytes, row(&t, "readall").bytes);
    assert_eq!(t.write_bytes, write.bytes + row(&t, "create").bytes);
    // 40 files at the start, one more per create, in 8 directories.
    assert_eq!(
        files(&dir.path().join("data")).len() as u64,
        40 + row(&t, "create").invocations
    );
    let text = ffsb::render(&plan, &outcome);
    assert_prints_v5_figures(&text, &["readall", "write", "create"]);
    assert!(
        text.contains("             readall : ") && text.contains(" ops ("),
        "{text}"
    );
}

/// A 6.0 profile that only reads whole files of `size` bytes in 4 KiB blocks.
fn readall_profile(size: &str) -> String {
    format!(
        "time=1\n[filesystem]\n  location=/unused\n  num_files=8\n  num_dirs=2\n  min_filesize={size}\n  max_filesize={size}\n[end]\n\
         [threadgroup]\n  num_threads=2\n  readall_weight=1\n  read_blocksize=4k\n[end]\n"
    )
}

#[test]
fn readall_counts_one_transaction_per_whole_block() {
    // 16 KiB files: four blocks each.
    let dir = tempdir();
    let (plan, outcome) = run(&readall_profile("16K"), in_dir(dir.path(), 1));
    let t = total(&plan, &outcome);
    let r = row(&t, "readall");
    assert!(r.invocations > 0);
    assert_eq!(r.transactions, 4 * r.invocations);
    assert_eq!(r.bytes, 16384 * r.invocations);
    assert_eq!(t.transactions, r.transactions);
    // 10000-byte files: two whole blocks, and the short last read counts for nothing.
    let dir = tempdir();
    let (plan, outcome) = run(&readall_profile("10000"), in_dir(dir.path(), 1));
    let t = total(&plan, &outcome);
    let r = row(&t, "readall");
    assert_eq!(r.transactions, 2 * r.invocations);
    assert_eq!(r.bytes, 10000 * r.invocations);
    let runtime = outcome.result.as_ref().unwrap().duration.as_secs_f64();
    assert!((t.transactions_per_sec - r.transactions as f64 / runtime).abs() < 1e-6);
}

#[test]
fn a_mixed_6_0_profile_counts_every_operation() {
    let text = "time=1
alignio=1
[filesystem]
    location=/unused
    num_files=30
    num_dirs=3
    min_filesize=32KB
    max_filesize=32KB
[end]
[threadgroup]
    num_threads=3
    read_weight=4
    read_size=16k
    read_blocksize=4k
    read_random=1
    write_weight=2
    write_fsync_weight=1
    write_size=8k
    write_blocksize=4k
    create_weight=1
    append_weight=1
    delete_weight=1
    stat_weight=2
    open_close_weight=2
    metaop_weight=1
    createdir_weight=1
    writeall_weight=1
[end]
";
    let dir = tempdir();
    let (plan, outcome) = run(text, in_dir(dir.path(), 1));
    let t = total(&plan, &outcome);
    let names: Vec<&str> = t.ops.iter().map(|r| r.op.as_str()).collect();
    assert_eq!(
        names,
        vec![
            "read",
            "write",
            "create",
            "append",
            "delete",
            "metaop",
            "createdir",
            "stat",
            "writeall",
            "open_close",
            "write_fsync"
        ],
        "one row per FFSB operation, in FFSB's order"
    );
    let weights: f64 = t.ops.iter().map(|r| r.op_weight_pct).sum();
    assert!((weights - 100.0).abs() < 1e-9, "{weights}");
    // read_random: read_size / read_blocksize reads, each a whole block.
    let read = row(&t, "read");
    assert_eq!(
        (read.transactions, read.bytes),
        (4 * read.invocations, 16384 * read.invocations)
    );
    // write (weight 2) and write_fsync (weight 1) each count their own operations, every one
    // of them 8 KiB in two 4 KiB blocks.
    let write = row(&t, "write");
    let write_fsync = row(&t, "write_fsync");
    for r in [write, write_fsync] {
        assert!(r.invocations > 0, "{}", r.op);
        assert_eq!(
            (r.transactions, r.bytes),
            (2 * r.invocations, 8192 * r.invocations),
            "{}",
            r.op
        );
    }
    let result = outcome.result.as_ref().unwrap();
    let engine_writes = result
        .ops
        .iter()
        .filter(|o| o.op == OpKind::Write)
        .map(|o| o.count)
        .sum::<u64>();
    assert_eq!(write.invocations + write_fsync.invocations, engine_writes);
    let append = row(&t, "append");
    assert_eq!(append.bytes, 8192 * append.invocations);
    for op in ["delete", "metaop", "createdir", "stat", "open_close"] {
        let r = row(&t, op);
        assert_eq!(r.transactions, r.invocations, "{op}: one transaction each");
        assert_eq!(
            (r.throughput_bytes_per_sec, r.throughput.as_str()),
            (None, "NA"),
            "{op}"
        );
    }
    let text = ffsb::render(&plan, &outcome);
    assert_prints_ffsb_figures(&text, &names);
    assert!(text.contains("  NA\n"), "{text}");
}

#[test]
fn directio_reads_whole_aligned_blocks() {
    let text =
        "time=1\ndirectio=1\n[filesystem]\nlocation=/unused\nnum_files=4\nmin_filesize=64k\nmax_filesize=64k\n[end]\n\
                [threadgroup]\nnum_threads=1\nread_weight=1\nread_size=16k\nread_blocksize=4k\n[end]\n";
    let dir = tempdir();
    let (plan, outcome) = run(text, in_dir(dir.path(), 1));
    assert!(plan.workload.groups[0].direct);
    assert_eq!(plan.workload.groups[0].ops[0].align, Some(Bytes(4096)));
    let read = row(&total(&plan, &outcome), "read").clone();
    assert!(read.invocations > 0);
    assert_eq!(read.transactions, 4 * read.invocations);
}

#[test]
fn time_zero_only_builds_the_fileset() {
    // A 6.0 profile without time builds the fileset and stops, as FFSB does.
    let text = "[filesystem]\nlocation=/unused\nnum_files=12\nnum_dirs=3\nmin_filesize=1k\nmax_filesize=1k\n[end]\n\
                [threadgroup]\nnum_threads=1\nstat_weight=1\n[end]\n";
    let dir = tempdir();
    let opts = Options {
        dir: Some(dir.path().to_path_buf()),
        ..Options::default()
    };
    let (plan, outcome) = run(text, opts);
    assert_eq!(plan.time, 0);
    assert!(outcome.result.is_none());
    assert_eq!(outcome.setup[0].files, 12);
    assert_eq!(files(&dir.path().join("data")), vec![1024; 12]);
    // FFSB's names: data/datadir<k>/datafile<N>, or data/datafile<N> (a file's directory is
    // drawn among the datadirs and data/ itself).
    let data = dir.path().join("data");
    let listed = |d: &std::path::Path| -> Vec<String> {
        std::fs::read_dir(d)
            .unwrap_or_else(|e| panic!("{}: {e}", d.display()))
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("datafile"))
            .collect()
    };
    let mut numbers: Vec<u64> = (0..3)
        .flat_map(|k| listed(&data.join(format!("datadir{k}"))))
        .chain(listed(&data))
        .map(|n| n["datafile".len()..].parse().unwrap())
        .collect();
    numbers.sort();
    assert_eq!(numbers, (0..12).collect::<Vec<u64>>());
    let text = ffsb::render(&plan, &outcome);
    assert!(
        text.contains("Only creating the fileset, not running benchmark."),
        "{text}"
    );
    // The setup's seconds, whole, then the end (a sync on a busy machine may take a second).
    let took = text
        .split_once("fs setup took ")
        .and_then(|(_, rest)| rest.split_once(" secs\nSetup complete, exiting"))
        .map(|(secs, _)| secs);
    assert!(took.is_some_and(|s| s.parse::<u64>().is_ok()), "{text}");
    let figures = ffsb::figures(&plan, &outcome);
    assert_eq!(figures.setup[0].files, 12);
    assert_eq!(figures.tool, "ffsb");
}

#[test]
fn init_size_makes_files_until_their_sizes_add_up() {
    let text = "time=0\n[filesystem]\nlocation=/unused\ninit_size=64K\nmin_filesize=4k\nmax_filesize=4k\n[end]\n\
                [threadgroup]\nnum_threads=1\nstat_weight=1\n[end]\n";
    let dir = tempdir();
    let (_, outcome) = run(text, in_dir(dir.path(), 0));
    assert_eq!((outcome.setup[0].files, outcome.setup[0].bytes), (16, 65536));
}

#[test]
fn several_filesystems_go_to_dir_fs_n_and_bindfs_keeps_a_group_on_one() {
    let text = "time=1
[filesystem]
    location=/nowhere/a
    num_files=5
    min_filesize=4k
    max_filesize=4k
[end]
[filesystem]
    location=/nowhere/b
    num_files=5
    min_filesize=4k
    max_filesize=4k
[end]
[threadgroup]
    num_threads=1
    bindfs=/nowhere/b
    create_weight=1
    write_blocksize=4k
[end]
[threadgroup]
    num_threads=1
    stat_weight=1
[end]
";
    let dir = tempdir();
    let (plan, outcome) = run(text, in_dir(dir.path(), 1));
    let creates = row(&total(&plan, &outcome), "create").invocations;
    assert!(creates > 0);
    assert_eq!(
        files(&dir.path().join("fs0/data")).len(),
        5,
        "bindfs keeps creates off fs0"
    );
    assert_eq!(files(&dir.path().join("fs1/data")).len() as u64, 5 + creates);
    // Each threadgroup's operations are its own: FFSB's per-threadgroup tables.
    let f = ffsb::figures(&plan, &outcome);
    let titles: Vec<&str> = f.threadgroups.iter().map(|t| t.title.as_str()).collect();
    assert_eq!(titles, vec!["ThreadGroup 0", "ThreadGroup 1"]);
    assert_eq!(f.threadgroups[0].ops[0].op, "create");
    assert_eq!(f.threadgroups[1].ops[0].op_weight_pct, 100.0);
    let text = ffsb::render(&plan, &outcome);
    assert!(
        text.contains("ThreadGroup 0\n===============\n") && text.contains("Total Results\n"),
        "{text}"
    );
}

#[test]
fn threadgroups_that_share_operations_get_tables_of_their_own() {
    let text = "time=1
[filesystem]
    location=/unused
    num_files=20
    num_dirs=2
    min_filesize=16k
    max_filesize=16k
[end]
[threadgroup]
    num_threads=2
    stat_weight=1
    readall_weight=1
    read_blocksize=4k
[end]
[threadgroup]
    num_threads=1
    stat_weight=3
    write_weight=1
    write_fsync_weight=1
    write_size=4k
    write_blocksize=4k
[end]
";
    let dir = tempdir();
    let (plan, outcome) = run(text, in_dir(dir.path(), 1));
    let f = ffsb::figures(&plan, &outcome);
    let names = |t: &Table| t.ops.iter().map(|r| r.op.clone()).collect::<Vec<_>>();
    let titles: Vec<&str> = f.threadgroups.iter().map(|t| t.title.as_str()).collect();
    assert_eq!(titles, vec!["ThreadGroup 0", "ThreadGroup 1"]);
    let (tg0, tg1) = (&f.threadgroups[0], &f.threadgroups[1]);
    let total = f.total.as_ref().unwrap();
    assert_eq!(names(tg0), vec!["readall", "stat"]);
    assert_eq!(names(tg1), vec!["write", "stat", "write_fsync"]);
    assert_eq!(names(total), vec!["readall", "write", "stat", "write_fsync"]);
    // Both threadgroups stat: each table has its own count, and the total has both.
    let (stat0, stat1) = (row(tg0, "stat").invocations, row(tg1, "stat").invocations);
    assert!(stat0 > 0 && stat1 > 0, "{stat0} {stat1}");
    assert_eq!(row(total, "stat").invocations, stat0 + stat1);
    assert_eq!(tg0.transactions + tg1.transactions, total.transactions);
    assert_eq!((tg0.read_bytes, tg0.write_bytes), (total.read_bytes, 0));
    assert_eq!((tg1.read_bytes, tg1.write_bytes), (0, total.write_bytes));
    // Each table's shares are of its own threadgroup's operations.
    for t in [tg0, tg1, total] {
        let weights: f64 = t.ops.iter().map(|r| r.op_weight_pct).sum();
        assert!((weights - 100.0).abs() < 1e-9, "{}: {weights}", t.title);
    }
    // FFSB's order: each threadgroup, then the total.
    let text = ffsb::render(&plan, &outcome);
    let at = |s: &str| text.find(s).unwrap_or_else(|| panic!("no `{s}` in:\n{text}"));
    assert!(
        at("ThreadGroup 0\n===============\n") < at("ThreadGroup 1\n===============\n")
            && at("ThreadGroup 1\n") < at("Total Results\n===============\n"),
        "{text}"
    );
    assert_prints_ffsb_figures(&text, &["readall", "write", "stat", "write_fsync"]);
    let figures = ffsb::figures(&plan, &outcome);
    assert_eq!(figures.threadgroups.len(), 2);
    assert_eq!(figures.threadgroups[1].ops[2].op, "write_fsync");
}

#[test]
#[ignore = "system tier: root, to mount a tmpfs"]
fn agefs_ages_the_filesystem_before_the_setup() {
    // Room for what the aging writes past the target in the second between two of FFSB's
    // utilisation checks: on a tmpfs, a gigabyte or more.
    let fs = Tmpfs::mount("4g");
    let text = format!(
        "time=1
[filesystem]
    location={}
    num_files=10
    min_filesize=8k
    max_filesize=64k
    agefs=1
    desired_util=0.05
    [threadgroup]
        num_threads=2
        create_weight=4
        append_weight=2
        delete_weight=1
        write_size=16k
        write_blocksize=4k
    [end]
[end]
[threadgroup]
    num_threads=1
    stat_weight=1
[end]
",
        fs.path().display()
    );
    let (plan, outcome) = run(&text, Options::default());
    let aging = &outcome.aging[0];
    assert!(aging.from_util < 0.05, "{}", aging.from_util);
    assert!(aging.to_util >= 0.05, "aging stopped at {}", aging.to_util);
    let aged = aging.result.as_ref().expect("an aging run");
    assert!(aged.totals.bytes_written > 0);
    // FFSB's aging files are data/fillfile<N>, in the benchmark's own directory; no fill/.
    let data = fs.path().join("data");
    let names: Vec<String> = std::fs::read_dir(&data)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let fills = names.iter().filter(|n| n.starts_with("fillfile")).count();
    assert!(fills > 10, "aging made files: {names:?}");
    assert!(!fs.path().join("fill").exists(), "no separate fill directory");
    // FFSB's ten starting files are empty (no size_weight).
    let seeded = aged
        .setup
        .iter()
        .find(|s| s.files == 10)
        .expect("the aging's ten files");
    assert_eq!(seeded.bytes, 0, "{:?}", aged.setup);
    // A create after a delete takes the deleted file's name, as FFSB's does: fewer names than
    // the ten and the creates.
    let count = |kind| aged.ops.iter().filter(|o| o.op == kind).map(|o| o.count).sum::<u64>();
    let (creates, deletes) = (count(OpKind::Create), count(OpKind::Delete));
    let highest = names
        .iter()
        .filter_map(|n| n.strip_prefix("fillfile")?.parse::<u64>().ok())
        .max()
        .unwrap();
    assert!(
        deletes > 0 && highest + 1 < 10 + creates,
        "{creates} creates, {deletes} deletes, fillfile{highest}"
    );
    // The benchmark's files come after the aging, beside the aging files.
    assert_eq!(files(&data).len(), 10 + fills);
    let report = ffsb::render(&plan, &outcome);
    assert!(
        report.contains(&format!("aging fs {} from 0.00 to 0.05", fs.path().display())),
        "{report}"
    );
    assert_eq!(ffsb::figures(&plan, &outcome).aging[0].to_util, aging.to_util);
    // Again in the same place: FFSB's `rm -rf data` first, the aging files with the rest.
    let (_, again) = run(&text, Options::default());
    assert!(again.aging[0].from_util < 0.05, "{}", again.aging[0].from_util);
}

#[test]
#[ignore = "system tier: root, to mount a tmpfs"]
fn init_util_makes_files_until_the_filesystem_is_that_full() {
    let fs = Tmpfs::mount("64m");
    let text = format!(
        "time=0\n[filesystem]\nlocation={}\ninit_util=0.3\nmin_filesize=64k\nmax_filesize=64k\n[end]\n\
         [threadgroup]\nnum_threads=1\nstat_weight=1\n[end]\n",
        fs.path().display()
    );
    let (_, outcome) = run(&text, Options::default());
    let dir = fslab_engine::confine::RunDir::open(fs.path()).unwrap();
    let util = fslab_engine::run::utilisation(dir.fd()).unwrap();
    assert!((0.29..0.35).contains(&util), "the filesystem is {util} full");
    let want = (0.3 * 64.0 * 1048576.0 / 65536.0) as u64;
    assert!(
        outcome.setup[0].files.abs_diff(want) <= 1,
        "{} files",
        outcome.setup[0].files
    );
}

#[test]
fn reuse_keeps_a_matching_fileset_and_rebuilds_another() {
    let text =
        "time=0\n[filesystem]\nlocation=/unused\nreuse=1\nnum_files=6\nmin_filesize=2k\nmax_filesize=8k\n[end]\n\
                [threadgroup]\nnum_threads=1\nstat_weight=1\n[end]\n";
    let dir = tempdir();
    let (_, first) = run(text, in_dir(dir.path(), 0));
    let (_, second) = run(text, in_dir(dir.path(), 0));
    assert!(!first.setup[0].reused);
    assert!(second.setup[0].reused, "the same profile keeps its files");
    let (_, third) = run(&text.replace("num_files=6", "num_files=7"), in_dir(dir.path(), 0));
    assert!(!third.setup[0].reused, "another count rebuilds the fileset");
    assert_eq!(files(&dir.path().join("data")).len(), 7);
}

#[test]
fn a_profile_that_is_not_utf8_is_refused_at_its_line_and_byte() {
    let dir = tempdir();
    let path = dir.path().join("bad.ffsb");
    std::fs::write(&path, b"time=1\n[filesystem]\nlocation=/a\xe9b\n[end]\n").unwrap();
    let e = ffsb::load(&path).unwrap_err().to_string();
    assert_eq!(
        e,
        format!(
            "{}:3: byte 12 of the line (0xe9) is not valid UTF-8; the file must be UTF-8 text",
            path.display()
        )
    );
}
