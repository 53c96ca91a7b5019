//! `fslab mdtest` end to end through the library, alone and as jobs of 4 ranks (threads): the
//! tree and item names and counts on disk, the bytes of -w, shared and unique directories, -N's
//! stride, the SUMMARY table's rows, and everything removed at the end.

use super::hpc::{job, job_with, names, ok, Hosts};
use fslab_classic::{Outcome, Tool};
use std::path::Path;

fn run(args: &str, dir: &Path, n: usize) -> Vec<Outcome> {
    ok(Tool::Mdtest, args, dir, n, Hosts::One)
}

fn rows(t: &str) -> Vec<String> {
    t.lines()
        .skip_while(|l| !l.starts_with("   ---------"))
        .skip(1)
        .take_while(|l| l.starts_with("   "))
        .map(|l| l.trim_start().split("  ").next().unwrap().to_string())
        .collect()
}

#[test]
fn one_rank_makes_mdtest_s_names_and_prints_every_row() {
    let tmp = tempfile::tempdir().unwrap();
    let o = &run("-n 10 -C -w 100 -d out", tmp.path(), 1)[0];
    let top = tmp.path().join("out/test-dir.0-0/mdtest_tree.0");
    let mut want: Vec<String> = (0..10).map(|i| format!("dir.mdtest.0.{i}")).collect();
    want.extend((0..10).map(|i| format!("file.mdtest.0.{i}")));
    want.sort();
    assert_eq!(names(&top), want);
    assert_eq!(std::fs::metadata(top.join("file.mdtest.0.3")).unwrap().len(), 100);
    let t = &o.report;
    assert!(t.starts_with("-- started at "), "{t}");
    assert!(t.contains("\nmdtest-4.0.0 was launched with 1 total task(s) on 1 node(s)\n"));
    assert!(t.contains("Command line used: mdtest '-n' '10' '-C' '-w' '100' '-d' 'out'\n"));
    assert!(
        t.contains("\nNodemap: 1\n1 tasks, 10 files/directories\n\nSUMMARY rate: (of 1 iterations)\n"),
        "{t}"
    );
    assert_eq!(
        rows(t),
        [
            "Directory creation",
            "Directory stat",
            "Directory rename",
            "Directory removal",
            "File creation",
            "File stat",
            "File read",
            "File removal",
            "Tree creation",
            "Tree removal"
        ]
    );
    let stat = t.lines().find(|l| l.contains("Directory stat")).unwrap();
    assert!(
        stat.ends_with("0.000          0.000          0.000          0.000"),
        "not run with -C: {stat}"
    );
    assert!(t.trim_end().ends_with(" --"));
    let m: Vec<&str> = o.metrics.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(m, ["Directory creation", "File creation", "Tree creation"]);
}

#[test]
fn a_tree_holds_items_per_directory_numbered_by_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let o = &run("-F -C -z 2 -b 2 -I 2 -d out", tmp.path(), 1)[0];
    let t0 = tmp.path().join("out/test-dir.0-0/mdtest_tree.0");
    assert_eq!(
        names(&t0),
        ["file.mdtest.0.0", "file.mdtest.0.1", "mdtest_tree.1", "mdtest_tree.2"]
    );
    assert_eq!(
        names(&t0.join("mdtest_tree.1")),
        ["file.mdtest.0.2", "file.mdtest.0.3", "mdtest_tree.3", "mdtest_tree.4"]
    );
    assert_eq!(
        names(&t0.join("mdtest_tree.2")),
        ["file.mdtest.0.4", "file.mdtest.0.5", "mdtest_tree.5", "mdtest_tree.6"]
    );
    assert_eq!(
        names(&t0.join("mdtest_tree.2/mdtest_tree.6")),
        ["file.mdtest.0.12", "file.mdtest.0.13"]
    );
    assert!(o.report.contains("1 tasks, 14 files\n"), "{}", o.report);
    assert_eq!(rows(&o.report)[0], "File creation", "-F: no directory rows");
    // The stat, read and removal of a later run find them where they are.
    let o = &run("-F -T -E -r -z 2 -b 2 -I 2 -d out", tmp.path(), 1)[0];
    // mdtest removes `-d` only when the same run made it.
    assert_eq!(names(tmp.path()), ["out"]);
    assert!(
        names(&tmp.path().join("out")).is_empty(),
        "{:?}",
        names(&tmp.path().join("out"))
    );
    let stat = o.report.lines().find(|l| l.contains("File stat")).unwrap();
    assert!(!stat.contains("      0.000      "), "{stat}");
}

#[test]
fn four_ranks_share_one_tree_or_each_have_their_own() {
    let tmp = tempfile::tempdir().unwrap();
    let outs = run("-F -C -n 2 -d shared", tmp.path(), 4);
    let top = tmp.path().join("shared/test-dir.0-0/mdtest_tree.0");
    let want: Vec<String> = (0..4)
        .flat_map(|r| (0..2).map(move |i| format!("file.mdtest.{r}.{i}")))
        .collect();
    assert_eq!(names(&top), want);
    assert!(
        outs[0].report.contains("Nodemap: 1111\n4 tasks, 8 files\n"),
        "{}",
        outs[0].report
    );
    assert!(outs[1..].iter().all(|o| o.report.is_empty()));

    let tmp = tempfile::tempdir().unwrap();
    run("-D -C -u -n 3 -d uniq", tmp.path(), 4);
    let td = tmp.path().join("uniq/test-dir.0-0");
    assert_eq!(
        names(&td),
        [
            "mdtest_tree.0.0",
            "mdtest_tree.1.0",
            "mdtest_tree.2.0",
            "mdtest_tree.3.0"
        ]
    );
    for r in 0..4 {
        let want: Vec<String> = (0..3).map(|i| format!("dir.mdtest.{r}.{i}")).collect();
        assert_eq!(names(&td.join(format!("mdtest_tree.{r}.0"))), want);
    }
}

#[test]
fn a_full_run_of_four_ranks_with_a_stride_removes_all_it_made() {
    let tmp = tempfile::tempdir().unwrap();
    for args in [
        "-n 5 -N 1 -w 64 -e 64 -i 2 -d out",
        "-u -N 1 -n 4 -d out",
        "-z 1 -b 3 -I 2 -d out",
    ] {
        let outs = run(args, tmp.path(), 4);
        assert!(
            names(tmp.path()).is_empty(),
            "{args}: {:?}",
            names(&tmp.path().join("out"))
        );
        let t = &outs[0].report;
        let create = t.lines().find(|l| l.contains("File creation")).unwrap();
        assert!(!create.contains("      0.000 "), "{args}: {create}");
        let fig = outs[2].figures.as_ref().unwrap();
        assert_eq!(fig["run"]["all"].as_array().unwrap().len(), 4, "every rank's rates");
    }
    let t = &run("-n 5 -N 1 -i 3 -d out", tmp.path(), 4)[0].report;
    assert!(
        t.contains("\nV-0: Rank   0 Line  2537 Shifting ranks by 1 for each phase.\n4 tasks, 20 files/directories\n"),
        "{t}"
    );
    assert!(t.contains("SUMMARY rate: (of 3 iterations)"));
}

#[test]
fn a_missing_item_fails_the_run_naming_the_call() {
    let tmp = tempfile::tempdir().unwrap();
    let r = job(Tool::Mdtest, "-F -T -n 2 -d none", tmp.path(), 1, Hosts::One);
    let e = r[0].as_ref().unwrap_err();
    assert!(
        e.contains("unable to stat file") && e.contains("file.mdtest.0.0"),
        "{e}"
    );
}

#[test]
fn bad_options_are_refused_naming_the_option() {
    let tmp = tempfile::tempdir().unwrap();
    for (args, needle) in [
        ("-n 4 -I 2", "-n/-I"),
        ("-x", "unknown option -x"),
        ("-d ../up", "-d ../up"),
    ] {
        let r = job(Tool::Mdtest, args, tmp.path(), 1, Hosts::One);
        let e = r[0].as_ref().unwrap_err();
        assert!(e.contains(needle), "{args}: {e}");
    }
}

#[test]
fn an_interrupted_run_stops_creating_and_leaves_nothing_behind() {
    let tmp = tempfile::tempdir().unwrap();
    for r in job_with(Tool::Mdtest, "-n 50 -d out", tmp.path(), 2, Hosts::One, true) {
        let o = r.unwrap_or_else(|e| panic!("an interrupted run is not a failed one: {e}"));
        assert!(o.interrupted);
    }
    assert!(names(tmp.path()).is_empty(), "{:?}", names(&tmp.path().join("out")));
}
