//! Where a fileset's files lie: file N in data directory N mod `dirs`, or with `spread` (FFSB's
//! placement) in one drawn from the data directories and the fileset's own.

use crate::common::{op, run_ok, workload};
use fslab_engine::workload::OpKind;
use fslab_testkit::tempdir;
use std::path::Path;

fn stats(files: u64, reuse: bool) -> fslab_engine::Workload {
    workload(&format!(
        "name = \"p\"\nseed = 1\nstop = {{ ops = 600 }}\n\
         [[fileset]]\nname = \"s\"\nfiles = {files}\ndirs = 2\nsize = 0\nreuse = {reuse}\n\
         [[group]]\nname = \"g\"\nfileset = \"s\"\n[[group.op]]\nop = \"stat\"\n"
    ))
}

/// The data files directly in `dir`.
fn files_in(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .filter(|e| {
            let e = e.as_ref().unwrap();
            e.file_type().unwrap().is_file() && e.file_name().to_string_lossy().starts_with('f')
        })
        .count()
}

#[test]
fn spread_files_lie_in_the_data_directories_and_the_fileset_s_own() {
    let dir = tempdir();
    let w = stats(300, false);
    run_ok(&w, dir.path());
    let s = dir.path().join("s");
    assert_eq!(
        (files_in(&s), files_in(&s.join("d0")), files_in(&s.join("d1"))),
        (0, 150, 150)
    );

    let dir = tempdir();
    let mut w = stats(300, true);
    w.filesets[0].spread = true;
    let r = run_ok(&w, dir.path());
    // Every stat found its file where the placement put it.
    assert_eq!((op(&r, OpKind::Stat).count, op(&r, OpKind::Stat).errors), (600, 0));
    let s = dir.path().join("s");
    let counts = [files_in(&s), files_in(&s.join("d0")), files_in(&s.join("d1"))];
    assert_eq!(counts.iter().sum::<usize>(), 300, "{counts:?}");
    // A third each, give or take: 100 +- 30 is over four standard deviations.
    assert!(counts.iter().all(|&c| (70..=130).contains(&c)), "{counts:?}");

    // A second run keeps them (`reuse`): it finds each file where the first put it.
    let r = run_ok(&w, dir.path());
    assert!(r.setup.iter().all(|s| s.reused), "{:?}", r.setup);
}
