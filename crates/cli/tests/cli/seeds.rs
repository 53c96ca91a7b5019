//! The five seed studies (`studies/seed-00N-*.toml`, the documents of ../shared/seeds) in their
//! quick form, end to end: each runs with `fslab study run FILE --quick` on loop devices, then
//! its report is read as JSON and as HTML, and must hold every table and chart its document
//! shows, with every filesystem the document names either measured (its cells have values) or
//! unsupported with a reason naming what is missing. The study must leave nothing behind.
//!
//! They need root, loop devices, the mkfs tools and dbench's loadfile, and fail naming what is
//! missing. They run one at a time (each keeps both CPUs busy for a minute or more, up to three
//! in a debug build), in a directory of their own (see `lab.rs`).

use crate::common::{fslab_within, refs};
use crate::lab::Lab;
use fslab_lab::tool::package_of;
use fslab_testkit::{require_file, require_root, require_tool};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Far longer than a quick study takes (16 s to 3 min in a debug build, on a 2-CPU machine):
/// only a hang stops here.
const SEED_LIMIT: Duration = Duration::from_secs(900);

/// No row: every cell of the column is absent (the matrix leaves them out).
const NO_ROWS: &[&str] = &[];

/// dbench's loadfile, which `fslab dbench` runs by default.
const DBENCH_LOADFILE: &str = "/usr/share/dbench/client.txt";

// ---------------------------------------------------------------------------------------------
// The seeds

/// Seed 000, FFSB large-file sequential write: throughput (MB/sec) and CPU % for ext3, ext4 and
/// xfs at 4, 16 and 64 threads, and their graphs.
#[test]
#[ignore = "system tier: a whole study: root, loop devices, mkfs.ext3, mkfs.ext4, mkfs.xfs"]
fn seed_000_ffsb_large_file_sequential_write() {
    let seed = Seed::run("seed-000-", &["mkfs.ext3", "mkfs.ext4", "mkfs.xfs"], &[]);
    let full = seed.dry_run(&[]);
    for threads in ["4", "16", "64"] {
        assert!(
            full.contains(&format!("threads={threads}")),
            "the full form runs {threads} threads:\n{full}"
        );
    }
    let quick = axis_values(&seed.dry_run(&["--quick"]), "threads");
    assert!(!quick.is_empty(), "the quick form varies no thread count");
    let w = seed.workload_of("ffsb");
    assert_eq!(
        seed.rows(&w),
        quick,
        "the report's rows are the quick form's thread counts"
    );
    let columns: Vec<String> = ["ext3", "ext4", "xfs"]
        .iter()
        .map(|fs| seed.column(&format!("type {fs}"), |c| c["fs_type"] == *fs))
        .collect();
    for figure in ["write MB/sec", "CPU %", "CPU split (%)"] {
        let t = seed.table(&w, figure);
        for column in &columns {
            seed.expect(t, column, &quick, Want::Measured);
        }
    }
    seed.expect_chart("bars", &format!("{w}: write MB/sec"));
    seed.expect_chart("bars", &format!("{w}: CPU %"));
    seed.expect_chart("cpu", &format!("{w}: CPU split (%)"));
    seed.finish();
}

/// Seed 001, dbench: Throughput for ext3, xfs and jfs under every scheduler at 5 and 20
/// clients, and the sync mounts at 5 clients after a warm-up run; jfs is unsupported here.
#[test]
#[ignore = "system tier: a whole study: root, loop devices, mkfs.ext3, mkfs.xfs, dbench's client.txt"]
fn seed_001_dbench_filesystems_and_schedulers() {
    let seed = Seed::run("seed-001-", &["mkfs.ext3", "mkfs.xfs"], &[DBENCH_LOADFILE]);
    let w = seed.workload_of("dbench");
    assert_eq!(seed.rows(&w), ["5", "20"]);
    let throughput = seed.table(&w, "Throughput (MB/sec)");
    let cpu = seed.table(&w, "CPU split (%)");
    let plain = |fs: &'static str, scheduler: &'static str| {
        seed.column(&format!("{fs} on {scheduler}"), move |c| {
            c["fs_type"] == fs && c["scheduler"] == scheduler && !is_sync(c)
        })
    };
    for scheduler in ["none", "mq-deadline", "kyber", "bfq"] {
        for fs in ["ext3", "xfs"] {
            seed.expect(throughput, &plain(fs, scheduler), &["5", "20"], Want::Measured);
            seed.expect(cpu, &plain(fs, scheduler), &["5", "20"], Want::Measured);
        }
        seed.expect(
            throughput,
            &plain("jfs", scheduler),
            &["5", "20"],
            Want::Unsupported("jfs"),
        );
    }
    let synced = |fs: &'static str, scheduler: &'static str| {
        seed.column(&format!("{fs} mounted sync on {scheduler}"), move |c| {
            c["fs_type"] == fs && c["scheduler"] == scheduler && is_sync(c)
        })
    };
    for (fs, scheduler) in [("xfs", "none"), ("ext3", "bfq")] {
        seed.expect(throughput, &synced(fs, scheduler), &["5"], Want::Measured);
    }
    seed.expect(
        throughput,
        &synced("jfs", "mq-deadline"),
        &["5"],
        Want::Unsupported("jfs"),
    );
    seed.expect_warmups(|c| is_sync(c) && c["fs_type"] != "jfs");
    seed.expect_chart("bars", &format!("{w}: Throughput (MB/sec)"));
    seed.expect_chart("lines", &format!("{w}: Throughput (MB/sec) against clients"));
    seed.expect_chart("cpu", &format!("{w}: CPU split (%)"));
    seed.finish();
}

/// One row of seed 002's table: the filesystem, whether mkfs asks for uninit_groups (today
/// uninit_bg) and for flex_bg with `-G 64`, and the mount options.
type Seed002Row = (&'static str, bool, bool, &'static str);

/// The rows of seed 002's table, in its order.
const SEED_002_ROWS: [Seed002Row; 13] = [
    ("ext3", false, false, "data=writeback"),
    ("xfs", false, false, ""),
    ("ext4", false, false, "data=writeback"),
    ("ext4", false, false, "data=writeback,nodelalloc"),
    ("ext4", true, false, "data=writeback"),
    ("ext4", true, false, "data=writeback,nomballoc"),
    ("ext4", true, false, "data=writeback,nomballoc,nodelalloc"),
    ("ext4", true, false, "data=writeback,journal_async_commit"),
    ("ext4", true, true, "data=writeback"),
    ("ext4", true, true, "data=writeback,nomballoc"),
    ("ext4", true, true, "data=writeback,nomballoc,nodelalloc"),
    ("ext4", true, true, "data=writeback,journal_checksum"),
    ("ext4", true, true, "data=writeback,journal_async_commit"),
];

/// Seed 002, FFSB small files: a column per mkfs/mount row of the document with its
/// transactions per second, CPU % and fsck time; rows this kernel refuses are unsupported with
/// its message.
#[test]
#[ignore = "system tier: a whole study: root, loop devices, mkfs.ext3, mkfs.ext4, mkfs.xfs, e2fsck, xfs_repair"]
fn seed_002_ffsb_small_files_mkfs_and_mount_options() {
    let seed = Seed::run(
        "seed-002-",
        &["mkfs.ext3", "mkfs.ext4", "mkfs.xfs", "e2fsck", "xfs_repair"],
        &[],
    );
    let w = seed.workload_of("ffsb");
    let transactions = seed.table(&w, "Transactions/s (trans/s)");
    let cpu = seed.table(&w, "CPU %");
    let steps = seed.steps_table("duration");
    let mut measured = Vec::new();
    for (i, (fs, uninit, flex_bg, mount)) in SEED_002_ROWS.into_iter().enumerate() {
        let what = format!("the document's row {}: {fs} {mount}", i + 1);
        let column = seed.column(&what, |c| {
            c["fs_type"] == fs && mkfs_has(c, "uninit_bg") == uninit && is_flex_bg_64(c) == flex_bg && {
                let options = c["mount_options"].as_str().unwrap_or_default();
                options == mount || (fs == "xfs" && options == "defaults")
            }
        });
        let rows = seed.rows(&w);
        match cell(transactions, &rows[0], &column)["kind"].as_str() {
            Some("missing") => {
                let config = seed.configuration(&column);
                let options = format!("{} {}", config["mkfs_options"], config["mount_options"]);
                let reason = seed.expect(transactions, &column, &rows, Want::Unsupported(""));
                assert!(
                    options_named(&options).iter().any(|o| reason.contains(o.as_str())),
                    "{what}: the reason does not name what the kernel refused: {reason}"
                );
            }
            _ => {
                seed.expect(transactions, &column, &rows, Want::Measured);
                seed.expect(cpu, &column, &rows, Want::Measured);
                seed.expect_cell(steps, "fsck", &column, Want::Measured);
                measured.push(i + 1);
            }
        }
    }
    for row in [1, 2, 3] {
        assert!(
            measured.contains(&row),
            "row {row} ({:?}) is supported by this kernel but was not measured",
            SEED_002_ROWS[row - 1]
        );
    }
    seed.expect_chart("bars", &format!("{w}: Transactions/s (trans/s)"));
    seed.expect_chart("bars", &format!("{w}: CPU %"));
    seed.expect_chart("bars", "the lab's steps: duration (s)");
    seed.finish();
}

/// Seed 003, sysbench fileio: the six modes on ext3, ext4, xfs and btrfs (reiserfs, jfs and
/// nilfs2 unsupported here), and how many times the best each is. A mode may be a row of one
/// workload or a workload of its own: either way it has a row of a headline table.
#[test]
#[ignore = "system tier: a whole study: root, loop devices, mkfs.ext3, mkfs.ext4, mkfs.xfs, mkfs.btrfs"]
fn seed_003_sysbench_fileio_modes() {
    let seed = Seed::run("seed-003-", &["mkfs.ext3", "mkfs.ext4", "mkfs.xfs", "mkfs.btrfs"], &[]);
    for mode in ["seqwr", "seqrewr", "seqrd", "rndrd", "rndwr", "rndrw"] {
        let (w, row) = seed.row_where("sysbench", "file-test-mode", mode);
        let headline = seed.headline(&w);
        for fs in ["ext3", "ext4", "xfs", "btrfs"] {
            let column = seed.column(&format!("type {fs}"), |c| c["fs_type"] == fs);
            seed.expect_cell(headline, &row, &column, Want::Measured);
        }
        for fs in ["reiserfs", "jfs", "nilfs2"] {
            let column = seed.column(&format!("type {fs}"), |c| c["fs_type"] == fs);
            seed.expect_cell(headline, &row, &column, Want::Unsupported(fs));
        }
        // "XFS was the worst at 2.8x the best": each value's standing against the best of its
        // row, which the quick form's single runs cannot give: every value says it has none.
        let cells = headline["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["label"] == row.as_str());
        let standings: Vec<(&str, u64)> = cells.unwrap()["cells"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["kind"] == "value")
            .map(|c| {
                let verdict = c["standing"]["verdict"]
                    .as_str()
                    .unwrap_or_else(|| panic!("{mode}: a value without its standing: {c}"));
                (verdict, c["summary"]["n"].as_u64().unwrap())
            })
            .collect();
        assert_eq!(standings.len(), 4, "{mode}: {standings:?}");
        for (verdict, n) in &standings {
            match n {
                1 => assert_eq!(*verdict, "untested", "{mode}: one run ranks nothing: {standings:?}"),
                _ => assert!(["best", "tied", "worse"].contains(verdict), "{mode}: {standings:?}"),
            }
        }
        seed.expect_chart("bars", headline["title"].as_str().unwrap());
    }
    seed.finish();
}

/// A filesystem of seed 004: as the document names it, its type, and which configurations of
/// that type are it.
type Seed004Filesystem = (&'static str, &'static str, fn(&Value) -> bool);

/// Seed 004, IBM's large journaling filesystems: format and fill times with their CPU split;
/// IOzone's sequential and random readers and writers with a CPU split each, on the filled
/// filesystem; dbench against clients, empty and filled; ext2, ext3, ext3 with dir_index and
/// xfs measured, reiserfs unsupported.
#[test]
#[ignore = "system tier: a whole study: root, loop devices, mkfs.ext2, mkfs.ext3, mkfs.xfs, dbench's client.txt"]
fn seed_004_ibm_journaling_filesystems() {
    let seed = Seed::run("seed-004-", &["mkfs.ext2", "mkfs.ext3", "mkfs.xfs"], &[DBENCH_LOADFILE]);
    let filesystems: [Seed004Filesystem; 5] = [
        ("ext2", "ext2", |_| true),
        ("ext3 without dir_index", "ext3", |c| !mkfs_has(c, "dir_index")),
        ("ext3 with dir_index", "ext3", |c| mkfs_has(c, "dir_index")),
        ("xfs", "xfs", |_| true),
        ("reiserfs", "reiserfs", |_| true),
    ];
    let level = |c: &Value, filled: bool| c["fill_to"].is_null() != filled;
    let column = |name: &str, fs: &str, test: fn(&Value) -> bool, filled: bool| {
        let what = format!("{name}, {}", if filled { "filled" } else { "empty" });
        seed.column(&what, |c| c["fs_type"] == fs && test(c) && level(c, filled))
    };

    // Format and fill times, with where the CPU was meanwhile.
    let time = seed.steps_table("duration");
    let split = seed.steps_table("CPU split (%)");
    for (name, fs, test) in &filesystems[..4] {
        for filled in [false, true] {
            let c = column(name, fs, *test, filled);
            seed.expect_cell(time, "mkfs", &c, Want::Measured);
            seed.expect_cell(split, "mkfs", &c, Want::Measured);
            if filled {
                seed.expect_cell(time, "fill", &c, Want::Measured);
                seed.expect_cell(split, "fill", &c, Want::Measured);
            }
        }
    }
    seed.expect_chart("cpu", "the lab's steps: CPU split (%)");

    // IOzone on the filled filesystem: each figure and its CPU split.
    let iozone = seed.workloads_of("iozone");
    for sub_test in ["readers", "rewriters", "random readers", "random writers"] {
        let figure = format!("{sub_test} (kB/sec)");
        let w = iozone
            .iter()
            .find(|w| seed.has_table(w, &figure))
            .unwrap_or_else(|| panic!("no IOzone workload of {iozone:?} has a table `{figure}`"));
        let rows = seed.rows(w);
        let cpu_figure = format!("CPU split: {sub_test} (%)");
        for f in [figure.as_str(), cpu_figure.as_str()] {
            let t = seed.table(w, f);
            for (name, fs, test) in &filesystems[..4] {
                seed.expect(t, &column(name, fs, *test, true), &rows, Want::Measured);
                seed.expect(t, &column(name, fs, *test, false), NO_ROWS, Want::Measured);
            }
            let (name, fs, test) = &filesystems[4];
            seed.expect(t, &column(name, fs, *test, true), &rows, Want::Unsupported("reiserfs"));
            seed.expect(t, &column(name, fs, *test, false), NO_ROWS, Want::Measured);
        }
        seed.expect_chart("bars", &format!("{w}: {figure}"));
        seed.expect_chart("cpu", &format!("{w}: {cpu_figure}"));
    }

    // dbench against clients, empty and filled: a line per configuration.
    let w = seed.workload_of("dbench");
    let clients = seed.rows(&w);
    assert!(clients.len() >= 2, "dbench varies no client count: {clients:?}");
    for figure in ["Throughput (MB/sec)", "CPU split (%)"] {
        let t = seed.table(&w, figure);
        for (name, fs, test) in &filesystems {
            for filled in [false, true] {
                let want = if *fs == "reiserfs" {
                    Want::Unsupported("reiserfs")
                } else {
                    Want::Measured
                };
                seed.expect(t, &column(name, fs, *test, filled), &clients, want);
            }
        }
    }
    let lines = seed.expect_chart("lines", &format!("{w}: Throughput (MB/sec) against clients"));
    for filled in [false, true] {
        let label = column("xfs", "xfs", |_| true, filled);
        let config = seed.configuration(&label);
        let level = match config["fill_to"].as_f64() {
            Some(f) => format!("{}% full", (f * 1000.0).round() / 10.0),
            None => "empty".to_string(),
        };
        assert_eq!(
            label,
            format!("xfs {level}"),
            "a configuration is labelled by its fill level"
        );
        assert!(
            lines.texts().contains(&label),
            "no line for {label} in the chart's legend: {:?}",
            lines.texts()
        );
    }
    seed.expect_chart("cpu", &format!("{w}: CPU split (%)"));
    seed.finish();
}

// ---------------------------------------------------------------------------------------------
// A seed's run and report

/// A seed study run in its quick form, and its report.
struct Seed {
    lab: Lab,
    /// `seed-001-` (what the study file's name begins with).
    prefix: String,
    /// `fslab report 1 --format json`.
    doc: Value,
    /// The charts of `fslab report 1 --html`.
    charts: Vec<Chart>,
}

/// A chart of the HTML report.
#[derive(Debug)]
struct Chart {
    /// `bars`, `lines`, `cpu`, `series`, `latency`.
    kind: String,
    title: String,
    svg: String,
}

impl Chart {
    /// The texts the chart writes: its title, ticks, labels and legend.
    fn texts(&self) -> Vec<String> {
        self.svg
            .split("<text")
            .skip(1)
            .filter_map(|t| t.split_once('>')?.1.split("</text>").next())
            .map(|t| unescape(t.trim()))
            .collect()
    }
}

/// What a table's cell must hold.
#[derive(Debug, Clone, Copy)]
enum Want<'a> {
    /// A figure or a CPU split.
    Measured,
    /// A missing cell, unsupported, with a reason naming this.
    Unsupported(&'a str),
}

impl Seed {
    /// Runs the seed study whose file begins with `prefix` in its quick form, after checking
    /// root, `tools` and `files` are there, and reads its report.
    fn run(prefix: &str, tools: &[&str], files: &[&str]) -> Seed {
        require_root();
        for tool in tools {
            require_tool(tool, package_of(tool).unwrap_or("the package that has it"));
        }
        for file in files {
            require_file(file, "dbench");
        }
        // The seeds run one after the other, and beside no other study: two at once would share
        // two CPUs and one page cache.
        let lab = Lab::alone(&seed_file(prefix));
        let t0 = Instant::now();
        let run = fslab_within(None, &[], &refs(&lab.run_args(&["--quick"])), SEED_LIMIT);
        eprintln!("{prefix}: the quick study took {:.0?}", t0.elapsed());
        assert_eq!(run.code, 0, "the quick study failed:\n{}", run.stderr);
        let json = lab.fslab(&["report", "1", "--format", "json"]);
        assert_eq!(json.code, 0, "{}", json.stderr);
        let doc: Value = serde_json::from_str(&json.stdout).expect("the report is one JSON document");
        let page = lab.root.join("report.html");
        let html = lab.fslab(&["report", "1", "--html", &page.display().to_string()]);
        assert_eq!(html.code, 0, "{}", html.stderr);
        let html = std::fs::read_to_string(&page).expect("the HTML report");
        Seed {
            lab,
            prefix: prefix.to_string(),
            doc,
            charts: charts(&html),
        }
    }

    /// The full form's (or with `--quick`, the quick form's) dry run: its matrix.
    fn dry_run(&self, extra: &[&str]) -> String {
        let args = self.lab.run_args(&[&["--dry-run"], extra].concat());
        let run = fslab_within(None, &[], &refs(&args), SEED_LIMIT);
        assert_eq!(run.code, 0, "{}", run.stderr);
        run.stdout
    }

    /// The one workload of `tool`.
    fn workload_of(&self, tool: &str) -> String {
        match self.workloads_of(tool).as_slice() {
            [one] => one.clone(),
            other => panic!("{}: one {tool} workload expected, found {other:?}", self.prefix),
        }
    }

    /// The workloads of `tool`, by name.
    fn workloads_of(&self, tool: &str) -> Vec<String> {
        self.doc["workloads"]
            .as_array()
            .expect("workloads")
            .iter()
            .map(|w| &w["workload"])
            .filter(|w| w["tool"] == tool)
            .map(|w| w["name"].as_str().unwrap().to_string())
            .collect()
    }

    fn workload(&self, name: &str) -> &Value {
        self.doc["workloads"]
            .as_array()
            .expect("workloads")
            .iter()
            .find(|w| w["workload"]["name"] == name)
            .unwrap_or_else(|| panic!("{}: no workload {name}", self.prefix))
    }

    /// The labels of workload `w`'s rows, as its tables give them: the values of its one axis
    /// (threads, clients, mode), or its name when nothing varies.
    fn rows(&self, w: &str) -> Vec<String> {
        let rows = self.headline(w)["rows"].as_array().expect("rows");
        rows.iter().map(|r| r["label"].as_str().unwrap().to_string()).collect()
    }

    /// The workload of `tool` and the label of its row whose cells run with `param=value`.
    fn row_where(&self, tool: &str, param: &str, value: &str) -> (String, String) {
        let mut found = Vec::new();
        for w in self.workloads_of(tool) {
            let cells = self.workload(&w)["cells"].as_array().expect("cells");
            let rows = self.headline(&w)["rows"].as_array().expect("rows");
            for c in cells.iter().filter(|c| c["params"][param] == value) {
                let row = rows.iter().find(|r| r["name"] == c["row"]).expect("the cell's row");
                let pair = (w.clone(), row["label"].as_str().unwrap().to_string());
                if !found.contains(&pair) {
                    found.push(pair);
                }
            }
        }
        match found.as_slice() {
            [one] => one.clone(),
            _ => panic!(
                "{}: one row of {tool} with {param}={value} expected, found {found:?}",
                self.prefix
            ),
        }
    }

    fn tables(&self, w: &str) -> &Vec<Value> {
        self.workload(w)["tables"].as_array().expect("tables")
    }

    fn has_table(&self, w: &str, figure: &str) -> bool {
        self.tables(w).iter().any(|t| t["figure"] == figure)
    }

    /// Workload `w`'s table of `figure` (`Throughput (MB/sec)`).
    fn table(&self, w: &str, figure: &str) -> &Value {
        let tables = self.tables(w);
        tables.iter().find(|t| t["figure"] == figure).unwrap_or_else(|| {
            let figures: Vec<&Value> = tables.iter().map(|t| &t["figure"]).collect();
            panic!(
                "{}: workload {w} has no table `{figure}`, only {figures:?}",
                self.prefix
            )
        })
    }

    /// Workload `w`'s first table: its headline figure.
    fn headline(&self, w: &str) -> &Value {
        &self.tables(w)[0]
    }

    /// The lab's steps table of `figure`.
    fn steps_table(&self, figure: &str) -> &Value {
        let steps = self.doc["steps"].as_array().expect("steps");
        steps
            .iter()
            .find(|t| t["figure"] == figure)
            .unwrap_or_else(|| panic!("{}: no steps table `{figure}`", self.prefix))
    }

    /// The label of the one configuration `test` picks (`what` names it for a failure).
    fn column(&self, what: &str, test: impl Fn(&Value) -> bool) -> String {
        let configurations = self.doc["configurations"].as_array().expect("configurations");
        let found: Vec<&Value> = configurations.iter().filter(|c| test(c)).collect();
        match found.as_slice() {
            [one] => one["label"].as_str().unwrap().to_string(),
            _ => panic!(
                "{}: one configuration expected for {what}, found {}: {configurations:#?}",
                self.prefix,
                found.len()
            ),
        }
    }

    fn configuration(&self, label: &str) -> &Value {
        self.doc["configurations"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["label"] == label)
            .unwrap_or_else(|| panic!("no configuration {label}"))
    }

    /// Checks column `column` of table `t`: the cells of `rows` hold what `want` says, every
    /// other row's is absent (the matrix leaves it out). Returns the last reason of a missing
    /// cell.
    fn expect(&self, t: &Value, column: &str, rows: &[impl AsRef<str>], want: Want) -> String {
        let mut reason = String::new();
        for row in t["rows"].as_array().expect("rows") {
            let label = row["label"].as_str().unwrap();
            if rows.iter().any(|r| r.as_ref() == label) {
                reason = self.expect_cell(t, label, column, want);
            } else {
                let c = cell(t, label, column);
                assert_eq!(
                    c["kind"], "absent",
                    "{}: {} {label} {column}: {c}",
                    self.prefix, t["title"]
                );
            }
        }
        reason
    }

    /// Checks the cell of `row` and `column` in table `t` holds what `want` says; returns the
    /// reason of a missing cell.
    fn expect_cell(&self, t: &Value, row: &str, column: &str, want: Want) -> String {
        let c = cell(t, row, column);
        let at = format!("{}: {} row {row}, column {column}", self.prefix, t["title"]);
        match want {
            Want::Measured => {
                assert!(c["kind"] == "value" || c["kind"] == "split", "{at}: no figure: {c}");
                String::new()
            }
            Want::Unsupported(named) => {
                assert_eq!(
                    (&c["kind"], &c["status"]),
                    (&"missing".into(), &"unsupported".into()),
                    "{at}: {c}"
                );
                let reason = c["reason"].as_str().unwrap_or_default().to_string();
                assert!(
                    !reason.trim().is_empty() && reason.contains(named),
                    "{at}: the reason does not name {named:?}: {reason:?}"
                );
                reason
            }
        }
    }

    /// The chart of `kind` titled `title`, which must be in the HTML report and show something.
    fn expect_chart(&self, kind: &str, title: &str) -> &Chart {
        let chart = self
            .charts
            .iter()
            .find(|c| c.kind == kind && c.title == title)
            .unwrap_or_else(|| {
                let all: Vec<String> = self
                    .charts
                    .iter()
                    .map(|c| format!("{} {:?}", c.kind, c.title))
                    .collect();
                panic!(
                    "{}: no {kind} chart {title:?} in the HTML report:\n{}",
                    self.prefix,
                    all.join("\n")
                )
            });
        assert!(
            chart.svg.contains("<rect") || chart.svg.contains("<polyline") || chart.svg.contains("<path"),
            "{}: the {kind} chart {title:?} draws nothing",
            self.prefix
        );
        chart
    }

    /// The cells of the configurations `warmed` picks have one warm-up run each, stored as such
    /// and ended well, before their measured run; the others none.
    fn expect_warmups(&self, warmed: impl Fn(&Value) -> bool) {
        let store = self.lab.store();
        let runs = store.runs(1).expect("the runs");
        let cells = store.cells(1).expect("the cells");
        let mut seen = 0;
        for cell in &cells {
            let s = &cell.spec;
            let config = self.doc["configurations"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| {
                    c["filesystem"] == s.filesystem.as_str() && c["scheduler"] == Value::from(s.scheduler.clone())
                })
                .unwrap_or_else(|| panic!("no configuration for cell {}", s.key));
            let mine: Vec<_> = runs.iter().filter(|r| r.cell_id == cell.id).collect();
            let warmups: Vec<_> = mine.iter().filter(|r| r.warmup).collect();
            if !warmed(config) {
                assert!(warmups.is_empty(), "{}: a warm-up run it should not have", s.key);
                continue;
            }
            seen += 1;
            assert_eq!(warmups.len(), 1, "{}: one warm-up run expected: {mine:#?}", s.key);
            assert_eq!(
                warmups[0].status,
                fslab_store::RunStatus::Ok,
                "{}: {:?}",
                s.key,
                warmups[0].error
            );
            let measured: Vec<_> = mine.iter().filter(|r| !r.warmup).collect();
            assert_eq!(measured.len(), 1, "{}: one measured run in the quick form", s.key);
            assert!(warmups[0].id < measured[0].id, "{}: the warm-up comes first", s.key);
        }
        assert!(seen > 0, "{}: no cell has a warm-up", self.prefix);
    }

    /// Nothing left behind: no mount, no loop device, no scratch directory (the lab's), no
    /// loop image anywhere under the test's directory.
    fn finish(self) {
        self.lab.assert_clean();
        let images = files_under(&self.lab.root, &|p: &Path| p.extension().is_some_and(|e| e == "img"));
        assert!(
            images.is_empty(),
            "{}: loop images left behind: {images:?}",
            self.prefix
        );
    }
}

/// The one study file `studies/PREFIX*.toml`.
fn seed_file(prefix: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../studies");
    let dir = dir.canonicalize().unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let found: Vec<String> = fslab_testkit::entries(&dir)
        .into_iter()
        .filter(|n| n.starts_with(prefix) && n.ends_with(".toml"))
        .collect();
    match found.as_slice() {
        [one] => dir.join(one),
        _ => panic!(
            "one study {prefix}*.toml expected in {}, found {found:?}",
            dir.display()
        ),
    }
}

/// The cell of row `row` (its label) and column `column` of table `t`.
fn cell<'a>(t: &'a Value, row: &str, column: &str) -> &'a Value {
    let columns = t["columns"].as_array().expect("columns");
    let k = columns
        .iter()
        .position(|c| c == column)
        .unwrap_or_else(|| panic!("{}: no column {column} in {columns:?}", t["title"]));
    let rows = t["rows"].as_array().expect("rows");
    let r = rows
        .iter()
        .find(|r| r["label"] == row || r["name"] == row)
        .unwrap_or_else(|| panic!("{}: no row {row}", t["title"]));
    &r["cells"][k]
}

/// The charts of an HTML report: each `<figure class="chart..." data-chart=KIND
/// data-title=TITLE>` with its SVG.
fn charts(html: &str) -> Vec<Chart> {
    html.split("<figure class=\"chart")
        .skip(1)
        .map(|f| {
            let attr = |name: &str| {
                let value = f.split(&format!("{name}=\"")).nth(1).unwrap_or_default();
                unescape(value.split('"').next().unwrap_or_default())
            };
            Chart {
                kind: attr("data-chart"),
                title: attr("data-title"),
                svg: f.split("</figure>").next().unwrap_or_default().to_string(),
            }
        })
        .collect()
}

/// HTML's escapes undone.
fn unescape(s: &str) -> String {
    s.replace("&#39;", "'")
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// The values `name=VALUE` takes in a dry run's lines, in order, each once.
fn axis_values(matrix: &str, name: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for word in matrix.split_whitespace() {
        if let Some(v) = word.strip_prefix(&format!("{name}=")) {
            if !out.iter().any(|o| o == v) {
                out.push(v.to_string());
            }
        }
    }
    out
}

/// Whether a configuration is mounted with `sync`.
fn is_sync(c: &Value) -> bool {
    c["mount_options"]
        .as_str()
        .unwrap_or_default()
        .split(',')
        .any(|o| o == "sync")
}

/// Whether a configuration's mkfs turns feature `feature` on (`-O a,feature`, not `^feature`).
fn mkfs_has(c: &Value, feature: &str) -> bool {
    let mkfs = c["mkfs_options"].as_str().unwrap_or_default();
    mkfs.split([' ', ','])
        .any(|w| w == feature || w == format!("-O{feature}"))
}

/// Whether a configuration's mkfs asks for flex_bg with 64 groups a flex group (`-G 64`).
fn is_flex_bg_64(c: &Value) -> bool {
    let mkfs = c["mkfs_options"].as_str().unwrap_or_default();
    mkfs_has(c, "flex_bg")
        && mkfs
            .split_whitespace()
            .collect::<Vec<_>>()
            .windows(2)
            .any(|w| w == ["-G", "64"])
}

/// The option words of mkfs and mount options, as a kernel's or a tool's message would name
/// them: `nomballoc`, `uninit_bg`, `journal_async_commit`.
fn options_named(options: &str) -> Vec<String> {
    options
        .split([' ', ',', '"'])
        .map(|w| w.trim_start_matches('^').trim_start_matches("-O"))
        .filter(|w| w.len() > 2 && !w.starts_with('-'))
        .map(str::to_string)
        .collect()
}

/// The files beneath `dir` that `pick` selects.
fn files_under(dir: &Path, pick: &dyn Fn(&Path) -> bool) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in entries.flatten() {
        let path = e.path();
        match e.file_type() {
            Ok(t) if t.is_dir() => out.extend(files_under(&path, pick)),
            Ok(_) if pick(&path) => out.push(path),
            _ => {}
        }
    }
    out
}
