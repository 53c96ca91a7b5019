//! Filesets with `names` (IOzone's `-F`): the files carry exactly the names given, in a
//! directory that may hold the user's own files; fslab removes only the names it made there and
//! never the directory, and refuses to touch a name it did not make.

use crate::common::{op, run_ok, tree, try_run, workload};
use fslab_engine::workload::OpKind;
use fslab_engine::Workload;
use fslab_testkit::tempdir;
use std::path::Path;

/// Three threads each read their own named file once through (64 KiB in 16 KiB blocks).
fn readers(dir: &str, names: &str, extra: &str) -> Workload {
    workload(&format!(
        r#"
name = "named"
seed = 3
{extra}

[[fileset]]
name = "data"
dir = "{dir}"
names = [{names}]
files = 3
dirs = 0
size = "64k"

[[group]]
name = "readers"
threads = 3
fileset = "data"

[[group.op]]
op = "seqread"
bs = "16k"
"#
    ))
}

const NAMES: &str = r#""alpha", "beta.dat", "gamma 3""#;

fn len(p: &Path) -> u64 {
    std::fs::metadata(p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .len()
}

#[test]
fn files_carry_the_names_given_and_nothing_else_is_made() {
    let run = tempdir();
    let r = run_ok(&readers("data", NAMES, ""), run.path());
    assert_eq!(
        tree(run.path()),
        [
            "data",
            "data/.fslab-fileset",
            "data/alpha",
            "data/beta.dat",
            "data/gamma 3"
        ]
    );
    for name in ["alpha", "beta.dat", "gamma 3"] {
        assert_eq!(len(&run.path().join("data").join(name)), 64 << 10, "{name}");
    }
    // Each thread read its own file through: 3 × 64 KiB in 16 KiB blocks.
    let reads = op(&r, OpKind::SeqRead);
    assert_eq!((reads.count, reads.bytes), (12, 3 * (64 << 10)));
    let marker = std::fs::read_to_string(run.path().join("data/.fslab-fileset")).unwrap();
    for line in ["name = \"alpha\"", "name = \"beta.dat\"", "name = \"gamma 3\""] {
        assert!(marker.lines().any(|l| l == line), "the marker lists {line}:\n{marker}");
    }
}

#[test]
fn the_users_files_beside_them_stay_and_cleanup_keeps_the_directory() {
    let run = tempdir();
    let data = run.path().join("data");
    std::fs::create_dir(&data).unwrap();
    std::fs::write(data.join("keep.txt"), "mine").unwrap();
    run_ok(&readers("data", NAMES, "cleanup = true"), run.path());
    assert_eq!(tree(run.path()), ["data", "data/keep.txt"]);
    assert_eq!(std::fs::read_to_string(data.join("keep.txt")).unwrap(), "mine");
}

#[test]
fn a_name_fslab_did_not_make_stops_the_run_untouched() {
    let run = tempdir();
    let data = run.path().join("data");
    std::fs::create_dir(&data).unwrap();
    std::fs::write(data.join("beta.dat"), "precious").unwrap();
    let e = try_run(&readers("data", NAMES, ""), run.path()).expect_err("a foreign beta.dat must stop the run");
    let msg = e.to_string();
    assert!(
        msg.contains("`beta.dat`") && msg.contains("fslab did not make"),
        "{msg}"
    );
    assert_eq!(std::fs::read_to_string(data.join("beta.dat")).unwrap(), "precious");
    assert_eq!(
        tree(run.path()),
        ["data", "data/beta.dat"],
        "nothing was made or removed"
    );
}

#[test]
fn a_later_run_with_other_names_removes_only_what_fslab_made() {
    let run = tempdir();
    let data = run.path().join("data");
    run_ok(&readers("data", NAMES, ""), run.path());
    std::fs::write(data.join("notes"), "mine").unwrap();
    run_ok(&readers("data", r#""x0", "x1", "x2""#, ""), run.path());
    assert_eq!(
        tree(run.path()),
        [
            "data",
            "data/.fslab-fileset",
            "data/notes",
            "data/x0",
            "data/x1",
            "data/x2"
        ]
    );
}

#[test]
fn kept_files_are_reused_by_name() {
    let run = tempdir();
    let first = readers("data", NAMES, "");
    run_ok(&first, run.path());
    let mut again = first.clone();
    again.filesets[0].reuse = true;
    let r = run_ok(&again, run.path());
    assert!(r.setup[0].reused, "the named files made by the first run are kept");
    assert_eq!(r.setup[0].bytes, 0);
}

#[test]
fn names_in_the_run_directory_itself() {
    let run = tempdir();
    std::fs::write(run.path().join("other"), "mine").unwrap();
    run_ok(&readers(".", NAMES, "cleanup = true"), run.path());
    assert_eq!(tree(run.path()), ["other"]);
    run_ok(&readers(".", NAMES, ""), run.path());
    assert_eq!(
        tree(run.path()),
        [".fslab-fileset", "alpha", "beta.dat", "gamma 3", "other"]
    );
}

#[test]
fn a_named_fileset_does_not_vouch_for_prefix_files_beside_it() {
    let run = tempdir();
    run_ok(&readers(".", NAMES, ""), run.path());
    std::fs::write(run.path().join("f1"), "mine").unwrap();
    // A fileset of `f<N>` files in the same directory must not take the user's f1 for its own.
    let prefixed = workload(
        r#"
name = "prefixed"
[[fileset]]
name = "data"
dir = "."
files = 2
dirs = 0
size = "4k"
[[group]]
name = "g"
fileset = "data"
[[group.op]]
op = "seqread"
"#,
    );
    let e = try_run(&prefixed, run.path()).expect_err("the user's f1 must stop the run");
    assert!(e.to_string().contains("`f1`"), "{e}");
    assert_eq!(std::fs::read_to_string(run.path().join("f1")).unwrap(), "mine");
}

#[test]
fn names_survive_a_trip_through_toml() {
    let w = readers("data", NAMES, "");
    let text = w.to_toml();
    assert!(text.contains(r#"names = ["alpha", "beta.dat", "gamma 3"]"#), "{text}");
    assert_eq!(Workload::from_toml(&text, "explain").unwrap(), w);
}

/// Loading `text` fails, naming the `names` (or `dirs`) line and saying `says`.
fn refused(text: &str, field: &str, says: &str) {
    let e = Workload::from_toml(text, "t.toml").expect_err("the workload must be refused");
    let msg = e.to_string();
    let line = text.lines().position(|l| l.starts_with(field)).unwrap() + 1;
    assert!(
        msg.starts_with(&format!("t.toml:{line}:")),
        "the error names line {line}: {msg}"
    );
    assert!(msg.contains(says), "the error says {says:?}: {msg}");
}

fn with(names: &str, files: u64, dirs: u64, op: &str) -> String {
    format!(
        r#"name = "bad"
stop = {{ ops = 10 }}
[[fileset]]
name = "data"
files = {files}
dirs = {dirs}
names = [{names}]
size = "4k"
[[group]]
name = "g"
fileset = "data"
[[group.op]]
op = "{op}"
"#
    )
}

#[test]
fn bad_names_are_refused_with_their_line() {
    refused(
        &with(r#""a", "b""#, 3, 0, "read"),
        "names",
        "names gives 2 name(s) for files = 3",
    );
    refused(
        &with(r#""a", "sub/b""#, 2, 0, "read"),
        "names",
        "\"sub/b\" cannot name a file",
    );
    refused(
        &with(r#""a", "..""#, 2, 0, "read"),
        "names",
        "\"..\" cannot name a file",
    );
    refused(
        &with(r#""a", ".fslab-fileset""#, 2, 0, "read"),
        "names",
        "cannot name a file",
    );
    refused(&with(r#""a", "a""#, 2, 0, "read"), "names", "`a` is named twice");
    refused(&with(r#""a", "b""#, 2, 1, "read"), "dirs", "dirs must be 0");
    refused(
        &with(r#""a", "b""#, 2, 0, "create"),
        "names",
        "cannot work on a fileset with names",
    );
    refused(
        &with(r#""a", "b""#, 2, 0, "mkdir"),
        "names",
        "cannot work on a fileset with names",
    );
}

/// `files` files `<prefix>N` of 4 KiB in the run directory itself, read once (they stay).
fn in_run_dir(prefix: &str) -> Workload {
    workload(&format!(
        "name = \"beside\"\n[[fileset]]\nname = \"data\"\ndir = \".\"\nprefix = \"{prefix}\"\nfiles = 2\ndirs = 0\nsize = \"4k\"\n\
         [[group]]\nname = \"g\"\nfileset = \"data\"\n[[group.op]]\nop = \"seqread\"\n"
    ))
}

/// A directory holds one marker. A fileset in the run directory does not lay out its files
/// beside another fileset's there (sysbench's files, then IOzone's): its marker would replace
/// the other's and leave those files to no one, so that no later run could remove them. Nor
/// does removing it take the other's marker away.
#[test]
fn a_fileset_in_the_run_directory_does_not_take_another_fileset_s_marker() {
    let run = tempdir();
    run_ok(&in_run_dir("test_file."), run.path());
    let before = tree(run.path());
    assert_eq!(before, [".fslab-fileset", "test_file.0", "test_file.1"]);
    for other in [in_run_dir("iozone.DUMMY."), readers(".", NAMES, "")] {
        let e = try_run(&other, run.path()).expect_err("another fileset's files must stop the run");
        assert!(
            e.to_string()
                .contains("holds `test_file.0`, which fslab made for another fileset there"),
            "{e}"
        );
        assert_eq!(tree(run.path()), before);
        let dir = fslab_engine::confine::RunDir::open(run.path()).unwrap();
        // As a front-end does after a run that failed: whatever it says, nothing goes.
        let _ = fslab_engine::fileset::remove(&dir, &other.filesets[0]);
        assert_eq!(
            tree(run.path()),
            before,
            "removing {} left the other's files and marker",
            other.name
        );
    }
    // The other way round: named files first, then files of a prefix.
    let run = tempdir();
    run_ok(&readers(".", NAMES, ""), run.path());
    let before = tree(run.path());
    let e = try_run(&in_run_dir("test_file."), run.path()).expect_err("the named files must stop the run");
    assert!(
        e.to_string().contains("which fslab made for another fileset there"),
        "{e}"
    );
    assert_eq!(tree(run.path()), before);
}
