//! Where a run writes when the directory it is given leads elsewhere: a `--dir` or an FFSB
//! `location` that is a symlink is resolved once and said on stderr; a test file that is a hard
//! link or a symlink to a file outside is refused before anything is written into it.

use crate::common::{fslab, fslab_in, s};
use fslab_testkit::{entries, tempdir};
use std::os::unix::fs::symlink;
use std::path::Path;

const SET: [&str; 3] = ["fileio", "--file-num=2", "--file-total-size=128k"];

fn sysbench(cwd: &Path, extra: &[&str]) -> fslab_testkit::Run {
    fslab_in(Some(cwd), &[], &[&["sysbench"], &SET[..], extra].concat())
}

/// The lines of `stderr` that say where a symlink led.
fn link_notes(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.contains("leads through the symlink"))
        .collect()
}

#[test]
fn a_dir_that_is_a_symlink_is_resolved_once_and_said() {
    let base = tempdir();
    let real = base.path().join("real");
    std::fs::create_dir(&real).unwrap();
    let link = base.path().join("link");
    symlink(&real, &link).unwrap();

    let out = sysbench(base.path(), &["--dir", "link", "prepare"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert_eq!(
        link_notes(&out.stderr),
        [format!(
            "fslab: note: --dir link leads through the symlink link: fslab runs in {} and keeps everything beneath it",
            real.display()
        )],
        "the real directory is said once: {}",
        out.stderr
    );
    assert_eq!(entries(&real), [".fslab-fileset", "test_file.0", "test_file.1"]);

    let out = fslab(&[
        "run",
        "--op",
        "write",
        "--size",
        "64k",
        "--time",
        "1s",
        "--dir",
        s(&link),
    ]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert_eq!(link_notes(&out.stderr).len(), 1, "{}", out.stderr);
    assert!(
        out.stderr.contains(&format!("fslab runs in {}", real.display())),
        "{}",
        out.stderr
    );
    assert!(
        real.join("adhoc").is_dir(),
        "the run's files are beneath the real directory"
    );

    // dbench's -D and IOzone's --dir say it too, before anything runs (--check runs nothing).
    let loadfile = base.path().join("load.txt");
    std::fs::write(
        &loadfile,
        "NTCreateX \"\\clients\\client1\\a\" 0x0 0x2 1 NT_STATUS_OK\nClose 1 NT_STATUS_OK\n",
    )
    .unwrap();
    let dbench = fslab_in(
        Some(base.path()),
        &[],
        &["dbench", "-D", "link", "-c", s(&loadfile), "--check", "1"],
    );
    let iozone = fslab_in(
        Some(base.path()),
        &[],
        &["iozone", "--dir", "link", "-i", "0", "-s", "64k", "-r", "4k", "--check"],
    );
    for (flag, out) in [("-D", dbench), ("--dir", iozone)] {
        assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
        assert_eq!(
            link_notes(&out.stderr),
            [format!(
                "fslab: note: {flag} link leads through the symlink link: fslab runs in {} and keeps everything beneath it",
                real.display()
            )],
            "{}",
            out.stderr
        );
    }
}

#[test]
fn an_ffsb_location_that_is_a_symlink_is_resolved_once_and_said() {
    let base = tempdir();
    let real = base.path().join("real");
    std::fs::create_dir(&real).unwrap();
    let link = base.path().join("link");
    symlink(&real, &link).unwrap();
    let profile = base.path().join("p.ffsb");
    std::fs::write(
        &profile,
        format!(
            "time=0\n[filesystem0]\nlocation={}\nnum_files=2\nmin_filesize=4096\nmax_filesize=4096\n[end0]\n\
             [threadgroup0]\nnum_threads=1\nread_weight=1\nread_size=4096\nread_blocksize=4096\n[end0]\n",
            link.display()
        ),
    )
    .unwrap();
    let out = fslab(&["ffsb", s(&profile)]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert_eq!(
        link_notes(&out.stderr),
        [format!(
            "fslab: note: {}: line 3: location `{}` leads through the symlink {}: filesystem 0 runs in {} and stays beneath it",
            profile.display(),
            link.display(),
            link.display(),
            real.display()
        )],
        "{}",
        out.stderr
    );
    assert_eq!(
        entries(&real.join("data")),
        [".fslab-fileset", "datafile0", "datafile1"]
    );
    let out = fslab(&["ffsb", s(&profile), "--explain"]);
    assert!(
        out.stdout.contains(&format!("root = \"{}\"", real.display())),
        "{}",
        out.stdout
    );
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
