//! Confinement: nothing a workload does reaches outside its run directory, whether through a
//! path in the workload or a symlink planted in the run directory.

use crate::common::{data_files, run_ok, tree, try_run, workload};
use fslab_engine::{RunError, Workload};
use fslab_testkit::tempdir;
use std::os::unix::fs::{symlink, MetadataExt};
use std::path::Path;

fn writes(fileset_extra: &str) -> Workload {
    workload(&format!(
        r#"
name = "writes"
seed = 8
stop = {{ ops = 20 }}

[[fileset]]
name = "data"
files = 2
size = "64k"
{fileset_extra}

[[group]]
name = "g"
fileset = "data"

[[group.op]]
op = "write"
size = "4k"

[[group.op]]
op = "append"
size = "4k"
"#
    ))
}

#[test]
fn a_symlinked_fileset_directory_is_refused() {
    let run = tempdir();
    let outside = tempdir();
    symlink(outside.path(), run.path().join("data")).unwrap();
    let e = try_run(&writes(""), run.path()).expect_err("a fileset directory that is a symlink out must be refused");
    let msg = e.to_string();
    assert!(
        msg.contains("leads out of the run directory"),
        "the error says the path leads out of the run directory: {msg}"
    );
    assert_eq!(
        tree(outside.path()),
        Vec::<String>::new(),
        "something was made in the symlink's target"
    );
}

#[test]
fn a_symlink_in_a_parent_of_the_fileset_directory_is_refused() {
    let run = tempdir();
    let outside = tempdir();
    symlink(outside.path(), run.path().join("up")).unwrap();
    let e =
        try_run(&writes("dir = \"up/data\""), run.path()).expect_err("a path through a symlink out must be refused");
    assert!(e.to_string().contains("leads out of the run directory"), "{e}");
    assert_eq!(
        tree(outside.path()),
        Vec::<String>::new(),
        "something was made in the symlink's target"
    );
}

#[test]
fn a_relative_symlink_out_is_refused() {
    let base = tempdir();
    let run = base.path().join("run");
    let outside = base.path().join("outside");
    std::fs::create_dir(&run).unwrap();
    std::fs::create_dir(&outside).unwrap();
    symlink("../outside", run.join("data")).unwrap();
    let e = try_run(&writes(""), &run).expect_err("a relative symlink out must be refused");
    assert!(e.to_string().contains("leads out of the run directory"), "{e}");
    assert_eq!(tree(&outside), Vec::<String>::new());
}

fn plant_file_symlink(run: &Path, outside_file: &Path) {
    let f0 = run.join("data/d0/f0");
    assert!(f0.is_file(), "the first run should have made {}", f0.display());
    std::fs::remove_file(&f0).unwrap();
    symlink(outside_file, &f0).unwrap();
}

fn file_symlink_is_never_written_through(fileset_extra: &str) {
    let run = tempdir();
    let outside = tempdir();
    let target = outside.path().join("precious");
    let content = vec![b'x'; 64 * 1024];
    std::fs::write(&target, &content).unwrap();
    let w = writes(fileset_extra);
    run_ok(&w, run.path());
    plant_file_symlink(run.path(), &target);
    let r = try_run(&w, run.path());
    assert_eq!(
        std::fs::read(&target).unwrap(),
        content,
        "the file the symlink points to was changed (run result: {:?})",
        r.as_ref().map(|r| &r.first_error).map_err(|e| e.to_string())
    );
    assert_eq!(tree(outside.path()), vec!["precious".to_string()]);
    let f0 = std::fs::symlink_metadata(run.path().join("data/d0/f0")).unwrap();
    if f0.file_type().is_symlink() {
        // Left in place: then the run must have said it would not follow it.
        let said = match &r {
            Ok(r) => r
                .first_error
                .as_ref()
                .map(|e| e.error.message.clone())
                .unwrap_or_default(),
            Err(e) => e.to_string(),
        };
        assert!(
            said.contains("symlink"),
            "the symlink was left and the run did not refuse it: {said:?}"
        );
    }
}

#[test]
fn a_symlink_in_place_of_a_file_is_not_written_through_without_reuse() {
    file_symlink_is_never_written_through("");
}

#[test]
fn a_symlink_in_place_of_a_file_is_not_written_through_with_reuse() {
    file_symlink_is_never_written_through("reuse = true");
}

#[test]
fn a_symlink_in_place_of_a_file_directory_is_refused() {
    let run = tempdir();
    let outside = tempdir();
    let w = writes("");
    run_ok(&w, run.path());
    let d0 = run.path().join("data/d0");
    std::fs::remove_dir_all(&d0).unwrap();
    symlink(outside.path(), &d0).unwrap();
    let r = try_run(&w, run.path());
    assert!(r.is_err(), "a symlinked d0 must stop the run before it starts");
    assert_eq!(
        tree(outside.path()),
        Vec::<String>::new(),
        "something was made through the symlinked d0"
    );
}

#[test]
fn fileset_paths_outside_the_run_directory_are_refused_by_validation() {
    let base = tempdir();
    let run = base.path().join("run");
    std::fs::create_dir(&run).unwrap();
    let abs = base.path().join("abs");
    for dir in [
        "../x".to_string(),
        abs.display().to_string(),
        "a/../../x".into(),
        "./x".into(),
    ] {
        let text = format!(
            "name = \"out\"\nstop = {{ ops = 1 }}\n\n[[fileset]]\nname = \"data\"\ndir = \"{dir}\"\nfiles = 1\n\n[[group]]\nname = \"g\"\nfileset = \"data\"\n[[group.op]]\nop = \"stat\"\n"
        );
        let e = Workload::from_toml(&text, "out.toml").expect_err(&format!("dir = {dir:?} must be refused"));
        let msg = e.to_string();
        assert!(msg.starts_with("out.toml:"), "the error names the file: {msg}");
        assert!(msg.contains("run directory"), "the error says why: {msg}");
        // The engine refuses it too when handed the workload without loading it from a file.
        let mut w: Workload = toml::from_str(&text).unwrap();
        w.filesets[0].dir = Some(dir.clone());
        let e = try_run(&w, &run).expect_err(&format!("the engine runs a fileset at {dir:?}"));
        assert!(matches!(e, RunError::Invalid(_)), "{e:?}");
    }
    assert_eq!(
        tree(base.path()),
        vec!["run".to_string()],
        "something was made outside the run directory"
    );
    assert!(data_files(base.path()).is_empty());
}

#[test]
fn a_symlink_in_place_of_the_marker_is_not_written_through() {
    let run = tempdir();
    let outside = tempdir();
    let target = outside.path().join("precious");
    std::fs::write(&target, b"keep me").unwrap();
    let w = writes("");
    run_ok(&w, run.path());
    let marker = run.path().join("data/.fslab-fileset");
    assert!(marker.is_file(), "the first run should have left its marker");
    std::fs::remove_file(&marker).unwrap();
    symlink(&target, &marker).unwrap();
    let _ = try_run(&w, run.path());
    assert_eq!(
        std::fs::read(&target).unwrap(),
        b"keep me",
        "the marker symlink was written through"
    );
}

#[test]
fn a_run_directory_that_is_a_symlink_is_refused_naming_its_target() {
    let base = tempdir();
    let target = base.path().join("elsewhere");
    std::fs::create_dir(&target).unwrap();
    let link = base.path().join("run");
    symlink(&target, &link).unwrap();
    let e = try_run(&writes(""), &link).expect_err("a run directory that is a symlink must be refused");
    let msg = e.to_string();
    assert!(
        msg.contains(&format!(
            "the run directory {} is (or passes through) a symlink to {}",
            link.display(),
            target.display()
        )),
        "the error names the link and its target: {msg}"
    );
    // A parent of the run directory that is a symlink leads elsewhere just the same.
    std::fs::create_dir(target.join("sub")).unwrap();
    let e = try_run(&writes(""), &link.join("sub")).expect_err("a run directory beneath a symlink must be refused");
    assert!(e.to_string().contains("(or passes through) a symlink"), "{e}");
    assert_eq!(
        tree(&target),
        vec!["sub".to_string()],
        "the run wrote through the symlink"
    );
}

/// Overwrites only, so that a second run with `reuse` finds every file at its size and keeps it.
fn overwrites() -> Workload {
    workload(
        r#"
name = "overwrites"
seed = 8
stop = { ops = 64 }

[[fileset]]
name = "data"
files = 2
size = "64k"
reuse = true

[[group]]
name = "g"
fileset = "data"

[[group.op]]
op = "write"
size = "4k"
"#,
    )
}

#[test]
fn a_reused_file_with_another_hard_link_is_refused_before_any_write() {
    let run = tempdir();
    let outside = tempdir();
    let target = outside.path().join("precious");
    let content: Vec<u8> = (0..64 * 1024).map(|i| (i % 251) as u8).collect();
    std::fs::write(&target, &content).unwrap();
    let w = overwrites();
    run_ok(&w, run.path());
    // The same bytes the run would find in a file of its own, but another name of `precious`.
    let f0 = run.path().join("data/d0/f0");
    std::fs::remove_file(&f0).unwrap();
    std::fs::hard_link(&target, &f0).unwrap();
    let e = try_run(&w, run.path()).expect_err("a file with two links must not be reused");
    let msg = e.to_string();
    assert!(
        msg.contains(&format!(
            "{}/data/d0/f0 has 2 hard links, so fslab did not make it",
            run.path().display()
        )),
        "the error names the file and why: {msg}"
    );
    assert!(matches!(e, RunError::Setup(_)), "{e:?}");
    assert_eq!(
        std::fs::read(&target).unwrap(),
        content,
        "the outside file was written through its hard link"
    );
    assert_eq!(
        std::fs::metadata(&f0).unwrap().nlink(),
        2,
        "the link was left for the user"
    );
}
