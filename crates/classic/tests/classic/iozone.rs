//! IOzone on the engine, end to end through the library: stonewalling and the Children/Parent
//! figures, -e with stonewalling, per-child lines, the -R report, the files kept or removed, -F
//! names and confinement, the pwrite/pread/fwrite/fread and record rewrite tests, automatic mode
//! and --explain.

use fslab_classic::iozone::{self, Options, Plan, Report, Test};
use fslab_engine::workload::SetupCalls;
use fslab_engine::{Span, Workload};
use std::path::Path;
use std::time::{Duration, Instant};

/// A plan that takes longer than this is taken to hang.
const HANG: Duration = Duration::from_secs(30);
const KB: f64 = 1024.0;

fn options(line: &str) -> Options {
    let args: Vec<String> = line.split_whitespace().map(String::from).collect();
    let mut o = Options::parse(&args).unwrap_or_else(|e| panic!("`{line}` is refused: {e}"));
    o.pause = Duration::ZERO;
    o
}

fn plan(line: &str, dir: &Path) -> Plan {
    Plan::new(&options(line), dir).unwrap_or_else(|e| panic!("`{line}` cannot be planned: {e}"))
}

/// Runs `plan` in `dir`, returning the report and the text IOzone would print.
fn run(plan: &Plan, dir: &Path) -> (Report, String) {
    let (plan, dir) = (plan.clone(), dir.to_path_buf());
    let r = fslab_testkit::within(HANG, "the plan", move || {
        let mut text = String::new();
        let r = iozone::run(
            &plan,
            iozone::RunWith {
                dir: &dir,
                drop_caches: false,
                interrupt: None,
                job: fslab_classic::job::Job::alone(),
            },
            &mut |s| text.push_str(s),
        );
        r.map(|r| (r, text)).map_err(|e| e.to_string())
    });
    r.unwrap_or_else(|e| panic!("the plan failed: {e}"))
}

/// Plans and runs `line` in a fresh temporary directory, kept for looking at what is left.
fn run_fresh(line: &str) -> (tempfile::TempDir, Report, String) {
    let tmp = tempfile::tempdir().unwrap();
    let (report, text) = run(&plan(line, tmp.path()), tmp.path());
    (tmp, report, text)
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = match std::fs::read_dir(dir) {
        Ok(rd) => rd
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect(),
        Err(_) => Vec::new(),
    };
    v.sort();
    v
}

/// Slows down the children of group `group` in every run: `delay` after each operation.
fn slow_group(plan: &mut Plan, group: &str, delay: Duration) {
    for step in &mut plan.steps {
        for g in &mut step.workload.groups {
            if g.name == group {
                g.delay = Span(delay);
            }
        }
    }
}

/// Makes the directories `-F` names files in (IOzone needs them to exist).
fn dirs(base: &Path, names: &[&str]) {
    for d in names {
        std::fs::create_dir_all(base.join(d)).unwrap();
    }
}

/// The fsyncs a run counted apart from its writes (`fsync` operations).
fn fsyncs(r: &fslab_engine::RunResult) -> u64 {
    r.ops
        .iter()
        .filter(|o| o.op == fslab_engine::workload::OpKind::Fsync)
        .map(|o| o.count)
        .sum()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn stonewalling_stops_the_slow_child_and_the_figures_add_up() {
    let tmp = tempfile::tempdir().unwrap();
    // Two children, each in a directory of its own so that one of them can be slowed down.
    dirs(tmp.path(), &["a", "b"]);
    let mut p = plan("-i 0 -t 2 -s 1m -r 64k -C -w -F a/f0 b/f1", tmp.path());
    slow_group(&mut p, "children-1", Duration::from_millis(20));
    let (report, text) = run(&p, tmp.path());
    let writers = &report.subtests[0];
    assert_eq!(writers.test, Test::Write);
    let f = writers.figures.as_ref().unwrap();
    let r = &writers.result;
    let (fast, slow) = (&f.per_child[0], &f.per_child[1]);
    assert!(
        fast.finished && !slow.finished,
        "child 1 must be stonewalled: {:?}",
        f.per_child
    );
    assert_eq!(fast.xfer, 1024.0, "the fast child writes its whole 1 MB file");
    assert!(
        slow.xfer < 1024.0,
        "the stonewalled child is stopped early: {}",
        slow.xfer
    );
    assert_eq!(f.min_xfer, slow.xfer);
    assert_eq!(r.stopped_by, fslab_engine::result::StopReason::Stonewall);

    // Children see = Σ per-child (kB ÷ own seconds); Parent sees = Σ kB ÷ the run's wall time;
    // each time less IOzone's clock resolution (a microsecond), as IOzone counts it.
    let iozone = |secs: f64| (secs - 1e-6).max(1e-6);
    let children_see: f64 = r.threads.iter().map(|t| t.bytes as f64 / KB / iozone(t.secs)).sum();
    let parent_sees = r.threads.iter().map(|t| t.bytes as f64 / KB).sum::<f64>() / iozone(r.duration.as_secs_f64());
    assert!(
        close(f.children_see, children_see),
        "{} vs {children_see}",
        f.children_see
    );
    assert!(close(f.parent_sees, parent_sees), "{} vs {parent_sees}", f.parent_sees);
    assert!(close(f.avg_throughput, children_see / 2.0));
    assert_eq!(f.max_throughput, fast.throughput);
    assert_eq!(f.min_throughput, slow.throughput);
    assert_eq!(
        r.threads.iter().map(|t| t.bytes).sum::<u64>(),
        ((fast.xfer + slow.xfer) * KB) as u64
    );

    // The stonewalled child finished its file, uncounted, inside the parent's time, as IOzone's
    // child does: all 16 of its records, each after its 20 ms delay.
    assert!(
        r.duration >= Duration::from_millis(16 * 20),
        "the parent waits for the stopped writer to finish its file: {:?}",
        r.duration
    );
    assert!(slow.secs < r.duration.as_secs_f64());
    assert_eq!(
        fsyncs(r),
        2,
        "without -e only each child's fsync before close, outside its figures"
    );
    for file in ["a/f0", "b/f1"] {
        let len = std::fs::metadata(tmp.path().join(file)).unwrap().len();
        assert_eq!(len, 1 << 20, "{file} after the run (-w keeps it)");
    }
    // The printed block carries the same numbers.
    assert!(text.contains(&format!(
        "\tChildren see throughput for  2 initial writers \t= {:10.2} kB/sec\n",
        f.children_see
    )));
    assert!(text.contains(&format!("\tMin xfer \t\t\t\t\t= {:10.2} kB\n", slow.xfer)));
    assert!(text.contains(&format!(
        "\tChild[1] xfer count = {:10.2} kB, Throughput = {:10.2} kB/sec\n",
        slow.xfer, slow.throughput
    )));
}

#[test]
fn without_stonewalling_every_child_moves_its_whole_file() {
    let tmp = tempfile::tempdir().unwrap();
    dirs(tmp.path(), &["a", "b"]);
    let mut p = plan("-i 0 -i 2 -t 2 -s 256k -r 64k -x -F a/f0 b/f1", tmp.path());
    slow_group(&mut p, "children-1", Duration::from_millis(10));
    let (report, _) = run(&p, tmp.path());
    let names: Vec<_> = report.subtests.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        ["initial writers", "rewriters", "random readers", "random writers"]
    );
    for s in &report.subtests {
        let f = s.figures.as_ref().unwrap();
        assert_eq!(f.min_xfer, 256.0, "{}: {:?}", s.name, f.per_child);
        assert!(f.per_child.iter().all(|c| c.finished && c.xfer == 256.0));
    }
    // Random tests: file size ÷ record size single-record operations per child.
    let random = &report.subtests[2].result;
    let reads = random
        .ops
        .iter()
        .find(|o| o.op == fslab_engine::workload::OpKind::Read)
        .unwrap();
    assert_eq!(reads.count, 2 * 4);
    assert_eq!(reads.bytes, 2 * 256 * 1024);
    // Without -w the files are gone at the end; the directories, which were there, stay.
    assert!(
        files_in(&tmp.path().join("a")).is_empty(),
        "{:?}",
        files_in(&tmp.path().join("a"))
    );
    assert!(files_in(&tmp.path().join("b")).is_empty());
    assert_eq!(files_in(tmp.path()), ["a", "b"]);
}

#[test]
fn with_e_a_stonewalled_child_fsyncs_before_its_time_is_taken() {
    let tmp = tempfile::tempdir().unwrap();
    dirs(tmp.path(), &["a", "b"]);
    let mut p = plan("-i 0 -t 2 -s 1m -r 64k -e -w -F a/f0 b/f1", tmp.path());
    slow_group(&mut p, "children-1", Duration::from_millis(20));
    let (report, _) = run(&p, tmp.path());
    for s in &report.subtests {
        let f = s.figures.as_ref().unwrap();
        assert!(
            f.per_child[0].finished && !f.per_child[1].finished,
            "{}: child 1 must be stonewalled: {:?}",
            s.name,
            f.per_child
        );
        // As IOzone's children: the finished child fsyncs (-e) and fsyncs again before close;
        // the stonewalled initial writer fsyncs where it stopped, finishes its file uncounted,
        // fsyncs (-e) and before close; the stonewalled rewriter fsyncs and before close.
        let stopped = if s.test == Test::Write { 3 } else { 2 };
        assert_eq!(fsyncs(&s.result), 2 + stopped, "{}: {:?}", s.name, s.result.ops);
        let fsync = s
            .result
            .ops
            .iter()
            .find(|o| o.op == fslab_engine::workload::OpKind::Fsync);
        assert_eq!(fsync.map(|o| o.errors), Some(0));
    }
    assert_eq!(report.subtests.len(), 2, "initial writers and rewriters");
}

#[test]
fn with_e_random_writers_fsync_their_own_file_only() {
    let (_tmp, report, _) = run_fresh("-i 0 -i 2 -i 8 -t 3 -s 128k -r 32k -e -x");
    for s in report
        .subtests
        .iter()
        .filter(|s| matches!(s.test, Test::RandomWrite | Test::Mixed))
    {
        // Two fsyncs per child, of its own file, as IOzone's children do (-e, then before
        // close): not 3 × 3.
        assert_eq!(fsyncs(&s.result), 2 * 3, "{}: {:?}", s.name, s.result.ops);
    }
    // IOzone's readers fsync too with -e (their file, read-only), and before close.
    let random_readers = report.subtests.iter().find(|s| s.test == Test::RandomRead).unwrap();
    assert_eq!(fsyncs(&random_readers.result), 2 * 3);
}

#[test]
fn f_creates_exactly_the_named_files() {
    let tmp = tempfile::tempdir().unwrap();
    dirs(tmp.path(), &["sub"]);
    std::fs::write(tmp.path().join("mine.txt"), "keep").unwrap();
    std::fs::write(tmp.path().join("sub/notes"), "keep too").unwrap();
    let abs = tmp.path().join("sub/third").display().to_string();
    let line = format!("-i 0 -i 1 -t 3 -s 128k -r 32k -w -F first sub/second {abs}");
    let (report, text) = run(&plan(&line, tmp.path()), tmp.path());
    assert_eq!(
        files_in(tmp.path()),
        [".fslab-fileset", "first", "mine.txt", "sub"],
        "-F puts the files where it names them"
    );
    assert_eq!(
        files_in(&tmp.path().join("sub")),
        [".fslab-fileset", "notes", "second", "third"]
    );
    for f in ["first", "sub/second", "sub/third"] {
        assert_eq!(std::fs::metadata(tmp.path().join(f)).unwrap().len(), 128 << 10, "{f}");
    }
    let files: Vec<_> = report.subtests[0]
        .figures
        .as_ref()
        .unwrap()
        .per_child
        .iter()
        .map(|c| c.file.clone())
        .collect();
    assert_eq!(files, ["first", "sub/second", "sub/third"]);
    assert!(text.contains("Children see throughput for 3 re-readers \t="));
    // Without -w the next run removes them at its end, and only them.
    run(
        &plan("-i 0 -t 3 -s 128k -r 32k -F first sub/second sub/third", tmp.path()),
        tmp.path(),
    );
    assert_eq!(files_in(tmp.path()), ["mine.txt", "sub"]);
    assert_eq!(files_in(&tmp.path().join("sub")), ["notes"]);
    assert_eq!(std::fs::read_to_string(tmp.path().join("mine.txt")).unwrap(), "keep");
}

#[test]
fn f_refuses_a_name_fslab_did_not_make_and_a_missing_directory() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("taken"), "precious").unwrap();
    let p = plan("-i 0 -t 1 -s 64k -F taken", tmp.path());
    let e = iozone::run(
        &p,
        iozone::RunWith {
            dir: tmp.path(),
            drop_caches: false,
            interrupt: None,
            job: fslab_classic::job::Job::alone(),
        },
        &mut |_| {},
    )
    .expect_err("a file fslab did not make must not be written");
    assert!(e.to_string().contains("`taken`"), "{e}");
    assert_eq!(std::fs::read_to_string(tmp.path().join("taken")).unwrap(), "precious");
    assert_eq!(files_in(tmp.path()), ["taken"]);
    let e = Plan::new(&options("-i 0 -t 1 -F nodir/f"), tmp.path()).unwrap_err();
    assert!(e.0.contains("`nodir/f`") && e.0.contains("does not exist"), "{e}");
}

#[test]
fn files_are_kept_with_w_and_removed_without() {
    let tmp = tempfile::tempdir().unwrap();
    run(&plan("-i 0 -i 1 -t 3 -s 128k -r 16k -w", tmp.path()), tmp.path());
    // IOzone's files, in the run directory itself.
    let dir = tmp.path().to_path_buf();
    assert_eq!(
        files_in(&dir),
        [".fslab-fileset", "iozone.DUMMY.0", "iozone.DUMMY.1", "iozone.DUMMY.2"]
    );
    for n in 0..3 {
        let len = std::fs::metadata(dir.join(format!("iozone.DUMMY.{n}"))).unwrap().len();
        assert_eq!(len, 128 * 1024);
    }
    // A later run without -i 0 reads the kept files (no untimed setup writes them again).
    let (report, _) = run(&plan("-i 1 -t 3 -s 128k -r 16k -x", tmp.path()), tmp.path());
    assert!(report.subtests[0].result.setup[0].reused, "the kept files are reused");
    assert_eq!(report.subtests[0].figures.as_ref().unwrap().min_xfer, 128.0);
    assert!(files_in(tmp.path()).is_empty(), "without -w the files are removed");
}

#[test]
fn every_throughput_test_moves_the_file_size_per_child() {
    let (_tmp, report, text) = run_fresh("-i 0 -i 1 -i 2 -i 3 -i 5 -i 6 -i 7 -i 8 -i 9 -i 10 -t 2 -s 512k -r 16k -x");
    let names: Vec<_> = report.subtests.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "initial writers",
            "rewriters",
            "readers",
            "re-readers",
            "reverse readers",
            "stride readers",
            "random readers",
            "mixed workload",
            "random writers",
            "pwrite writers",
            "pread readers",
            "fwriters",
            "freaders"
        ]
    );
    for s in &report.subtests {
        let total: u64 = s.result.threads.iter().map(|t| t.bytes).sum();
        assert_eq!(total, 2 * 512 * 1024, "{}", s.name);
        assert!(s.result.first_error.is_none(), "{}: {:?}", s.name, s.result.first_error);
        // IOzone's spacing: `%2lld` or `%lld` children, one tab or two (readers) before `=`.
        let line = format!(
            "Children see throughput for {:w$} {}{}=",
            2,
            s.name,
            s.test.children_gap(),
            w = s.test.count_width()
        );
        assert!(text.contains(&line), "{line:?}");
    }
    // Each run synced outside its timing (IOzone's sync between sub-tests).
    assert!(report.subtests.iter().all(|s| s.result.final_sync.is_some()));
    // The last block, three blank lines (throughput mode's two, then IOzone's last words').
    assert!(text.ends_with(" kB\n\n\n\niozone test complete.\n"), "{text}");
}

#[test]
fn pwrite_pread_fwrite_fread_in_throughput_mode() {
    let (tmp, report, text) = run_fresh("-i 0 -i 9 -i 10 -i 6 -i 7 -t 2 -s 256k -r 64k -x -R -w");
    let names: Vec<_> = report.subtests.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "initial writers",
            "rewriters",
            "pwrite writers",
            "pread readers",
            "fwriters",
            "freaders"
        ]
    );
    use fslab_engine::workload::OpKind;
    for (s, kind) in report.subtests[2..]
        .iter()
        // The fwriters write over the files, as IOzone's fopen("r+").
        .zip([OpKind::SeqWrite, OpKind::SeqRead, OpKind::Rewrite, OpKind::SeqRead])
    {
        let o = s
            .result
            .ops
            .iter()
            .find(|o| o.op == kind)
            .unwrap_or_else(|| panic!("{}", s.name));
        // One 64 kB record per call, four per child, two children.
        assert_eq!((o.count, o.bytes), (8, 2 * 256 * 1024), "{}", s.name);
        let f = s.figures.as_ref().unwrap();
        assert_eq!(f.min_xfer, 256.0, "{}", s.name);
        let children_line = format!(
            "\tChildren see throughput for {:w$} {} \t= {:10.2} kB/sec\n",
            2,
            s.name,
            f.children_see,
            w = s.test.count_width()
        );
        assert!(text.contains(&children_line), "{children_line:?}\n{text}");
    }
    // IOzone's fwriters and freaders have one more tab before the parent's `=`.
    assert!(text.contains("\tParent sees throughput for  2 fwriters \t\t= "));
    assert!(text.contains("\tParent sees throughput for  2 freaders \t\t= "));
    assert!(text.contains("\tParent sees throughput for 2 pwrite writers \t= "));
    for (row, s) in ["Pwrite", "Pread", "Fwrite", "Fread"].iter().zip(&report.subtests[2..]) {
        let v = s.figures.as_ref().unwrap().children_see;
        assert!(text.contains(&format!("\n\"{row:>15} \" {v:10.2} \n")), "{row}\n{text}");
    }
    for n in 0..2 {
        let len = std::fs::metadata(tmp.path().join(format!("iozone.DUMMY.{n}")))
            .unwrap()
            .len();
        assert_eq!(len, 256 * 1024);
    }
}

#[test]
fn auto_mode_runs_record_rewrite_pwrite_pread_fwrite_fread() {
    // pwrite and pread (-i 9, -i 10) run in automatic mode only with -E, as in IOzone 3.487.
    let (_tmp, report, text) = run_fresh("-a -E -n 64k -g 64k -y 16k -q 16k -i 0 -i 4 -i 6 -i 7 -i 9 -i 10 -R");
    // IOzone's whole header, whatever runs, with -E's four more columns.
    let lower = "              kB  reclen    write  rewrite    read    reread    read     write     read   rewrite      read   fwrite frewrite    fread  freread  pwrite repwrite   pread   repread\n";
    assert!(text.contains(lower), "{text}");
    let row = text
        .lines()
        .find(|l| l.starts_with("              64      16 "))
        .unwrap_or_else(|| panic!("no row for 64 kB / 16 kB:\n{text}"));
    assert_eq!(row.split_whitespace().count(), 2 + 11, "{row}");
    // Blanks where read, random and backward read would be, then record rewrite's ` %9`.
    assert_eq!(&row[42..42 + 18 + 18 + 9], " ".repeat(45), "{row:?}");
    let names: Vec<_> = report.subtests.iter().map(|s| s.test).collect();
    assert_eq!(
        names,
        [
            Test::Write,
            Test::Rewrite,
            Test::RecordRewrite,
            Test::Fwrite,
            Test::Frewrite,
            Test::Fread,
            Test::Freread,
            Test::Pwrite,
            Test::Repwrite,
            Test::Pread,
            Test::Repread
        ]
    );
    for s in &report.subtests {
        assert_eq!(s.result.threads[0].bytes, 64 * 1024, "{:?}", s.test);
        assert!(s.throughput.unwrap() > 0.0, "{:?}", s.test);
    }
    // Record rewrite: 64 kB / 16 kB = 4 writes of one record, all at the file's start.
    let rr = &report.subtests[2].result;
    let w = rr
        .ops
        .iter()
        .find(|o| o.op == fslab_engine::workload::OpKind::Write)
        .unwrap();
    assert_eq!((w.count, w.bytes), (4, 64 * 1024));
    for title in [
        "Record rewrite report",
        "Fwrite report",
        "Re-Fwrite report",
        "Fread report",
        "Re-Fread report",
        "Pwrite report",
        "Re-Pwrite report",
        "Pread report",
        "Re-Pread report",
    ] {
        assert!(text.contains(&format!("\n\"{title}\"\n")), "{title}\n{text}");
    }
}

#[test]
fn c_prints_a_line_per_child_and_r_the_report() {
    let (tmp, report, text) = run_fresh("-i 0 -i 1 -t 3 -s 64k -r 4k -C -R");
    assert_eq!(text.matches("\tChild[").count(), 4 * 3, "{text}");
    for i in 0..3 {
        assert_eq!(text.matches(&format!("\tChild[{i}] xfer count = ")).count(), 4);
    }
    let report_at = text
        .find("\"Throughput report Y-axis is type of test X-axis is number of processes\"\n")
        .expect("the -R report");
    let tail = &text[report_at..];
    assert!(tail.contains("\"Record size = 4 kBytes \"\n"), "{tail}");
    let rows: Vec<&str> = tail
        .lines()
        .filter(|l| l.starts_with("\"  ") || l.starts_with("\"   "))
        .collect();
    let expect = [
        "  Initial write",
        "        Rewrite",
        "           Read",
        "        Re-read",
    ];
    assert_eq!(rows.len(), 4, "{tail}");
    for ((row, name), s) in rows.iter().zip(expect).zip(&report.subtests) {
        let children_see = s.figures.as_ref().unwrap().children_see;
        assert_eq!(*row, format!("\"{name} \" {children_see:10.2} "));
    }
    // Without -C: no child lines.
    let (_, text) = run(&plan("-i 0 -t 2 -s 64k -r 4k", tmp.path()), tmp.path());
    assert!(!text.contains("Child["));
    assert!(!text.contains("Throughput report"));
}

#[test]
fn ops_mode_counts_records() {
    let (_tmp, report, text) = run_fresh("-i 0 -t 2 -s 256k -r 64k -O -x -C");
    let f = report.subtests[0].figures.as_ref().unwrap();
    assert_eq!(f.unit, "ops");
    assert_eq!(f.min_xfer, 4.0, "256 kB in 64 kB records");
    assert!(text.contains(" ops/sec\n"));
}

#[test]
fn pause_between_sub_tests() {
    let tmp = tempfile::tempdir().unwrap();
    let mut p = plan("-i 0 -i 1 -t 1 -s 64k", tmp.path());
    p.opts.pause = Duration::from_millis(300);
    let start = Instant::now();
    let (report, _) = run(&p, tmp.path());
    // Four runs, three pauses.
    assert_eq!(report.subtests.len(), 4);
    assert!(start.elapsed() >= Duration::from_millis(900), "{:?}", start.elapsed());
    assert_eq!(options("-t 1").pause, Duration::ZERO, "the helper sets it");
    let args: Vec<String> = vec!["-t".into(), "1".into()];
    assert_eq!(
        Options::parse(&args).unwrap().pause,
        Duration::from_secs(2),
        "IOzone's 2 s"
    );
}

#[test]
fn f_names_outside_the_run_directory_are_refused_and_nothing_is_made() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let line = format!("-i 0 -t 2 -F f0 {}/f1", outside.path().display());
    let e = Plan::new(&options(&line), tmp.path()).unwrap_err();
    assert!(e.0.contains("option -F"), "{e}");
    assert!(e.0.contains(&outside.path().join("f1").display().to_string()), "{e}");
    assert!(files_in(tmp.path()).is_empty());
    assert!(files_in(outside.path()).is_empty());
    let e = Plan::new(&options("-i 0 -t 1 -F ../escape"), tmp.path()).unwrap_err();
    assert!(e.0.contains("`../escape`"), "{e}");
}

#[test]
fn auto_mode_reads_backwards_twice_and_reports_the_first() {
    // As IOzone 3.487's reverse_perf_test: two passes, each opening and reading the whole file
    // backwards; the table and the report have the first.
    let (_tmp, report, text) = run_fresh("-a -n 64k -g 64k -y 16k -q 16k -i 0 -i 3 -R");
    let passes: Vec<_> = report.subtests.iter().filter(|s| s.test == Test::Reverse).collect();
    assert_eq!(passes.len(), 2);
    for s in &passes {
        let read = s
            .result
            .ops
            .iter()
            .find(|o| o.op == fslab_engine::workload::OpKind::SeqRead)
            .unwrap();
        assert_eq!((read.count, read.bytes), (4, 64 * 1024), "{}", s.result.workload.name);
    }
    assert_eq!((passes[0].unreported, passes[1].unreported), (false, true));
    assert!(passes[0].throughput.is_some() && passes[1].throughput.is_none());
    let first = passes[0].throughput.unwrap() as u64;
    let row = text
        .lines()
        .find(|l| l.starts_with("              64      16 "))
        .unwrap();
    assert_eq!(row.split_whitespace().nth(4), Some(first.to_string().as_str()), "{row}");
    let report_at = text.find("\"Backward read report\"\n").unwrap();
    assert!(text[report_at..].contains(&format!("\"64\"   {first} \n")), "{text}");
}

#[test]
fn no_retests_reports_the_re_runs_as_zero() {
    // Throughput mode: no rewriters' or re-readers' block, their report rows 0.
    let (_tmp, report, text) = run_fresh("-i 0 -i 1 -t 2 -s 64k -r 4k -x -+n -R");
    let names: Vec<_> = report.subtests.iter().map(|s| s.test).collect();
    assert_eq!(names, [Test::Write, Test::Read]);
    assert!(
        !text.contains(" rewriters ") && !text.contains(" re-readers "),
        "{text}"
    );
    assert!(text.contains("\n\"        Rewrite \"       0.00 \n"), "{text}");
    assert!(text.contains("\n\"        Re-read \"       0.00 \n"), "{text}");
    // Automatic mode: the re-runs' columns 0, in the table and the report.
    let (_tmp, report, text) = run_fresh("-a -n 64k -g 64k -y 16k -q 16k -i 0 -i 1 -+n -R");
    assert_eq!(report.subtests.len(), 2);
    let row = text
        .lines()
        .find(|l| l.starts_with("              64      16 "))
        .unwrap();
    let cols: Vec<&str> = row.split_whitespace().collect();
    assert_eq!((cols[3], cols[5]), ("0", "0"), "{row}");
    assert!(
        text.contains("\"Re-Reader report\"\n        \"16\"\n\"64\"   0 \n"),
        "{text}"
    );
}

#[test]
fn auto_mode_prints_a_row_per_size_and_record() {
    let (tmp, report, text) = run_fresh("-a -n 64k -g 256k -y 16k -q 64k -i 0 -i 1 -i 2 -R");
    let header = "              kB  reclen    write  rewrite    read    reread    read     write     read   rewrite      read   fwrite frewrite    fread  freread\n";
    assert!(text.contains(header), "{text}");
    let rows: Vec<(u64, u64)> = text
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let a = w.next()?.parse().ok()?;
            let b = w.next()?.parse().ok()?;
            (w.count() == 6).then_some((a, b))
        })
        .collect();
    assert_eq!(
        rows,
        [
            (64, 16),
            (64, 32),
            (64, 64),
            (128, 16),
            (128, 32),
            (128, 64),
            (256, 16),
            (256, 32),
            (256, 64)
        ]
    );
    assert_eq!(report.subtests.len(), 9 * 6);
    for s in &report.subtests {
        assert_eq!(s.result.threads.len(), 1);
        assert_eq!(
            s.result.threads[0].bytes,
            s.file_kb * 1024,
            "{} {}k/{}k",
            s.name,
            s.file_kb,
            s.record_kb
        );
        assert!(s.throughput.unwrap() > 0.0);
    }
    assert!(text.contains("\n\"Writer report\"\n"));
    assert!(text.contains("\n\"Random write report\"\n"));
    assert!(!tmp.path().join("iozone").exists(), "the file is removed without -w");
}

#[test]
fn explain_prints_every_run_as_native_toml() {
    let tmp = tempfile::tempdir().unwrap();
    let p = plan("-i 0 -i 1 -i 2 -t 16 -s 2000m -r 64k -e -C -R -w", tmp.path());
    let text = p.explain();
    let runs: Vec<&str> = text.split("\n# ---- run ").skip(1).collect();
    assert_eq!(runs.len(), 6);
    for (k, part) in runs.iter().enumerate() {
        let toml = part.split_once('\n').unwrap().1;
        let mut w = Workload::from_toml(toml, "explain").unwrap_or_else(|e| panic!("run {}: {e}\n{toml}", k + 1));
        // How the setup makes the files is the front-end's, not a workload file's.
        assert_eq!(w.filesets[0].setup_calls, SetupCalls::Parallel);
        w.filesets[0].setup_calls = SetupCalls::Iozone;
        assert_eq!(w, p.steps[k].workload);
        assert_eq!(w.groups[0].threads, 16);
        assert_eq!(w.filesets[0].size.max(), 2000 << 20);
    }
    assert!(text.contains("#   child 15: iozone.DUMMY.15"));
    assert!(files_in(tmp.path()).is_empty(), "explaining makes nothing");
}
