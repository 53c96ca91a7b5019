//! Workload files: a faulty file is refused with the file, the line and column of the fault, and
//! what is wrong; a good one survives the trip through TOML unchanged.

use fslab_engine::workload::{LoadError, OpKind};
use fslab_engine::Workload;
use std::path::{Path, PathBuf};

const GOOD: &str = r#"name = "good"
seed = 1

[stop]
ops = 10

[[fileset]]
name = "data"
files = 4
size = "64k"

[[group]]
name = "readers"
threads = 2
fileset = "data"

[[group.op]]
op = "read"
size = "4k"
"#;

/// Writes GOOD with line `line` (1-based) replaced by `with` into a file, and loads it.
fn load_with(dir: &Path, line: usize, with: &str) -> (PathBuf, Result<Workload, LoadError>) {
    let mut lines: Vec<&str> = GOOD.lines().collect();
    lines[line - 1] = with;
    let text = lines.join("\n") + "\n";
    let path = dir.join("w.toml");
    std::fs::write(&path, &text).unwrap();
    let r = Workload::from_file(&path);
    (path, r)
}

/// Loads GOOD with line `line` replaced and expects it refused at `line:column`, with a message
/// that contains every one of `says`.
fn refused_at(line: usize, with: &str, column: usize, says: &[&str]) {
    let dir = fslab_testkit::tempdir();
    let (path, r) = load_with(dir.path(), line, with);
    let e = r.expect_err(&format!("a file with `{with}` on line {line} must be refused"));
    let msg = e.to_string();
    let at = format!("{}:{line}:{column}: ", path.display());
    assert!(msg.starts_with(&at), "expected the error at `{at}`, got: {msg}");
    match &e {
        LoadError::At {
            file,
            line: l,
            column: c,
            ..
        } => {
            assert_eq!(file, &path.display().to_string());
            assert_eq!((*l, *c), (line, column));
        }
        other => panic!("expected an error with a place, got {other:?}"),
    }
    for s in says {
        assert!(msg.contains(s), "the message should say `{s}`: {msg}");
    }
}

#[test]
fn the_unchanged_template_loads() {
    let dir = fslab_testkit::tempdir();
    let (_, r) = load_with(dir.path(), 1, "name = \"good\"");
    let w = r.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(w.groups[0].threads, 2);
    assert_eq!(w.groups[0].ops[0].op, OpKind::Read);
}

#[test]
fn a_toml_syntax_error_names_its_line() {
    refused_at(9, "files = = 4", 9, &["expected"]);
}

#[test]
fn an_unknown_field_names_its_line_and_the_field() {
    refused_at(14, "thredas = 2", 1, &["unknown field", "thredas"]);
}

#[test]
fn a_wrong_type_names_its_line() {
    refused_at(14, "threads = \"two\"", 11, &["invalid type", "string"]);
}

#[test]
fn a_bad_size_names_its_line() {
    refused_at(10, "size = \"64q\"", 8, &["`64q` has an unknown size suffix `q`"]);
}

#[test]
fn a_group_naming_an_unknown_fileset_names_its_line() {
    refused_at(15, "fileset = \"nope\"", 11, &["nope", "data"]);
}

#[test]
fn a_field_that_does_not_apply_names_its_line() {
    refused_at(19, "scope = \"shared\"", 9, &["`scope` does not apply to read"]);
}

#[test]
fn from_start_with_more_than_one_run_names_its_line() {
    refused_at(
        19,
        "from_start = true\nsize = \"16k\"\nseeks = 2",
        14,
        &["from_start reads or writes one run from the file's head"],
    );
}

#[test]
fn a_deck_order_without_a_deck_names_its_line() {
    refused_at(
        19,
        "shuffle_order = \"iozone\"",
        17,
        &["shuffle_order orders a shuffled deck: it needs shuffle = true"],
    );
}

#[test]
fn stride_on_a_random_read_names_its_line() {
    refused_at(
        19,
        "stride = 4",
        10,
        &["`stride` applies to seqread with scope = \"own\""],
    );
}

#[test]
fn an_extent_on_a_read_of_several_blocks_names_its_line() {
    refused_at(
        19,
        "extent = \"10k\"\nsize = \"8k\"",
        10,
        &["`extent` applies to read and write of one block at a random offset"],
    );
    refused_at(19, "extent = 0", 10, &["extent must be above 0"]);
}

#[test]
fn a_fileset_dir_outside_the_run_directory_names_the_dir_line() {
    refused_at(10, "dir = \"../x\"", 7, &["../x", "run directory"]);
}

#[test]
fn iodepth_without_io_uring_names_its_line() {
    refused_at(14, "iodepth = 4", 11, &["io_uring"]);
}

#[test]
fn a_missing_file_is_named() {
    let dir = fslab_testkit::tempdir();
    let path = dir.path().join("missing.toml");
    let e = Workload::from_file(&path).expect_err("a missing file");
    assert!(e.to_string().starts_with(&path.display().to_string()), "{e}");
}

#[test]
fn a_workload_that_never_stops_is_refused() {
    let text = GOOD.replace("[stop]\nops = 10\n", "");
    let e = Workload::from_toml(&text, "w.toml").expect_err("no stop condition and endless ops");
    assert!(e.to_string().contains("never stops"), "{e}");
}

fn workloads_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../workloads")
}

#[test]
fn every_shipped_workload_loads_and_survives_a_trip_through_toml() {
    let mut seen = 0;
    for entry in std::fs::read_dir(workloads_dir()).expect("the workloads directory") {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        let w = Workload::from_file(&path).unwrap_or_else(|e| panic!("{e}"));
        let text = w.to_toml();
        let back = Workload::from_toml(&text, "explained.toml")
            .unwrap_or_else(|e| panic!("{}: its explained form is refused: {e}\n{text}", path.display()));
        assert_eq!(back, w, "{} changed through to_toml:\n{text}", path.display());
        seen += 1;
    }
    assert!(seen >= 5, "only {seen} workload files found");
}

#[test]
fn every_size_form_survives_a_trip_through_toml() {
    for size in [
        "1536",
        "\"1m\"",
        "{ min = \"1000\", max = \"4k\" }",
        "{ min = 1000, max = \"64k\" }",
        "{ table = [[\"16k\", 4], [\"100\", 1]] }",
    ] {
        let text = GOOD.replace("size = \"64k\"", &format!("size = {size}"));
        let text = text.replace("size = \"4k\"", "size = \"100\"");
        let w = Workload::from_toml(&text, "w.toml").unwrap_or_else(|e| panic!("size = {size}: {e}"));
        let back = Workload::from_toml(&w.to_toml(), "back.toml").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back, w, "size = {size} changed through to_toml:\n{}", w.to_toml());
    }
}

#[test]
fn a_prefix_that_names_the_directories_too_is_refused_at_its_line() {
    // Line 9 is `files = 4`; the error points at the value.
    refused_at(
        9,
        "prefix = \"d\"",
        10,
        &["prefix `d` cannot name files", "directories' `d`"],
    );
    refused_at(
        9,
        "dir_prefix = \"f\"",
        14,
        &["dir_prefix `f` cannot name directories", "files' `f`"],
    );
    refused_at(
        9,
        "dir_prefix = \"a/b\"",
        14,
        &["dir_prefix `a/b` cannot name directories"],
    );
}

/// A prefix is written into a fixed buffer on every operation's path: one too long for it, or
/// one holding a NUL, made the run panic once its setup had begun.
#[test]
fn a_prefix_too_long_or_holding_a_control_character_is_refused_at_its_line() {
    let long = "p".repeat(41);
    refused_at(
        9,
        &format!("prefix = \"{long}\""),
        10,
        &[&format!("prefix `{long}` is 41 bytes long"), "at most 40 bytes"],
    );
    refused_at(
        9,
        &format!("dir_prefix = \"{long}\""),
        14,
        &["dir_prefix `", "is 41 bytes long"],
    );
    refused_at(9, "prefix = \"a\\u0000b\"", 10, &["holds a control character"]);
}

/// The longest prefixes allowed name files and directories, the largest numbers included.
#[test]
fn the_longest_prefixes_name_files() {
    let (p, d) = ("p".repeat(40), "d".repeat(40));
    let text = GOOD.replace(
        "files = 4",
        &format!("files = 4\nprefix = \"{p}\"\ndir_prefix = \"{d}\"\ndirs = 1"),
    );
    let w = crate::common::workload(&text);
    let dir = fslab_testkit::tempdir();
    crate::common::run_ok(&w, dir.path());
    let tree = crate::common::tree(&dir.path().join("data"));
    assert!(tree.contains(&format!("{d}0/{p}3")), "{tree:?}");
    let mut b: fslab_engine::fileset::NameBuf = [0xff; fslab_engine::fileset::NAME_LEN];
    let name = fslab_engine::fileset::file_name(&p, u64::MAX, &mut b);
    assert_eq!(name.to_str().unwrap(), format!("{p}{}", u64::MAX));
}

#[test]
fn dir_prefix_names_the_directories_and_survives_a_trip_through_toml() {
    let text = GOOD.replace("files = 4", "files = 4\ndirs = 2\ndir_prefix = \"sub\"");
    let w = crate::common::workload(&text);
    assert_eq!(w.filesets[0].dir_prefix, "sub");
    let back = Workload::from_toml(&w.to_toml(), "back.toml").unwrap();
    assert_eq!(back, w);
    let dir = fslab_testkit::tempdir();
    crate::common::run_ok(&w, dir.path());
    let mut tree = crate::common::tree(&dir.path().join("data"));
    tree.retain(|p| !p.contains(".fslab"));
    tree.sort();
    assert_eq!(tree, ["sub0", "sub0/f0", "sub0/f2", "sub1", "sub1/f1", "sub1/f3"]);
    // The same fileset again finds its own directories and makes them anew.
    crate::common::run_ok(&w, dir.path());
}

#[test]
fn a_mode_is_written_back_in_octal_and_survives_a_trip_through_toml() {
    for (given, written) in [
        ("0o700", "mode = 0o700"),
        ("0o2640", "mode = 0o2640"),
        ("420", "mode = 0o644"),
    ] {
        let text = GOOD.replace("files = 4", &format!("files = 4\nmode = {given}"));
        let w = crate::common::workload(&text);
        let toml = w.to_toml();
        assert!(toml.lines().any(|l| l == written), "mode = {given}:\n{toml}");
        assert_eq!(Workload::from_toml(&toml, "back.toml").unwrap(), w);
    }
}

#[test]
fn shuffle_applies_to_reads_and_writes_only() {
    let dir = fslab_testkit::tempdir();
    let path = dir.path().join("w.toml");
    let shuffled = |op: &str| {
        GOOD.replace(
            "op = \"read\"\nsize = \"4k\"",
            &format!("op = \"{op}\"\nshuffle = true"),
        )
    };
    std::fs::write(&path, shuffled("write")).unwrap();
    let w = Workload::from_file(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(w.groups[0].ops[0].shuffle, Some(true));
    std::fs::write(&path, shuffled("stat")).unwrap();
    let msg = Workload::from_file(&path).expect_err("shuffle on stat").to_string();
    let at = format!("{}:19:11: ", path.display());
    assert!(msg.starts_with(&at), "expected the error at `{at}`: {msg}");
    assert!(msg.contains("`shuffle` does not apply to stat"), "{msg}");
}

#[test]
fn a_groups_child_end_needs_the_runs() {
    refused_at(
        14,
        "child_end = { finish_uncounted = true }",
        13,
        &["child_end", "stop.child_end"],
    );
}
