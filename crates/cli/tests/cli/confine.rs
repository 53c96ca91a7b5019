//! Where a run writes when a file it is given leads elsewhere: a test file that is a hard link or
//! a symlink to a file outside is refused before anything is written into it.

use crate::common::{fslab_in, s};
use fslab_testkit::tempdir;
use std::os::unix::fs::symlink;
use std::path::Path;

const SET: [&str; 3] = ["fileio", "--file-num=2", "--file-total-size=128k"];

fn sysbench(cwd: &Path, extra: &[&str]) -> fslab_testkit::Run {
    fslab_in(Some(cwd), &[], &[&["sysbench"], &SET[..], extra].concat())
}

/// An outside file with the bytes of a test file, and a prepared directory whose test_file.0
/// `plant` replaced by another name of it.
fn planted(plant: fn(&Path, &Path)) -> (tempfile::TempDir, tempfile::TempDir, Vec<u8>) {
    let run = tempdir();
    let outside = tempdir();
    let out = sysbench(run.path(), &["prepare"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let precious = outside.path().join("precious");
    let content: Vec<u8> = (0..64 * 1024).map(|i| (i % 253) as u8).collect();
    std::fs::write(&precious, &content).unwrap();
    let f0 = run.path().join("test_file.0");
    std::fs::remove_file(&f0).unwrap();
    plant(&precious, &f0);
    (run, outside, content)
}

#[test]
fn a_hard_linked_test_file_is_never_written_into() {
    let (run, outside, content) = planted(|from, to| std::fs::hard_link(from, to).unwrap());
    let precious = outside.path().join("precious");
    let why = format!(
        "fslab: fileset `sysbench`: {}/test_file.0 has 2 hard links, so fslab did not make it",
        run.path().display()
    );
    for extra in [
        &["--file-test-mode=rndwr", "--events=200", "--time=0", "run"][..],
        &["prepare"],
    ] {
        let out = sysbench(run.path(), &[&["--dir", s(run.path())], extra].concat());
        assert_eq!(out.code, 2, "{extra:?}: {}{}", out.stdout, out.stderr);
        assert!(out.stderr.contains(&why), "{extra:?}: {}", out.stderr);
        assert_eq!(
            std::fs::read(&precious).unwrap(),
            content,
            "{extra:?} wrote into the outside file"
        );
    }
}

#[test]
fn a_symlinked_test_file_is_never_written_through() {
    let (run, outside, content) = planted(|from, to| symlink(from, to).unwrap());
    let precious = outside.path().join("precious");
    let out = sysbench(
        run.path(),
        &["--file-test-mode=rndwr", "--events=200", "--time=0", "run"],
    );
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr
            .contains("test_file.0' is not a regular file; run `fslab sysbench fileio"),
        "{}",
        out.stderr
    );
    let out = sysbench(run.path(), &["prepare"]);
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("holds `test_file.0`, which fslab did not make"),
        "{}",
        out.stderr
    );
    assert_eq!(
        std::fs::read(&precious).unwrap(),
        content,
        "the outside file was written through the symlink"
    );
    assert!(std::fs::symlink_metadata(run.path().join("test_file.0"))
        .unwrap()
        .file_type()
        .is_symlink());
}
