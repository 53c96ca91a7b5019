//! Values no run can use are refused with their place, not a panic: sizes, offsets and counts
//! above 8 EiB (TOML's largest integer, the largest file Linux holds), blocks above 1 GiB; and
//! filesets larger than the machine can hold (memory, open directories) before anything is made.

use crate::common::workload;
use fslab_engine::script::Call;
use fslab_engine::workload::{LoadError, PathSeg};
use fslab_engine::{Bytes, Workload};

const READS: &str = r#"name = "big"
[stop]
ops = 10

[[fileset]]
name = "data"
files = 1
size = "4k"

[[group]]
name = "g"
fileset = "data"

[[group.op]]
op = "read"
bs = "4k"
"#;

/// READS with line `line` (from 1) replaced by `with`, as loaded from `w.toml`.
fn load_with(line: usize, with: &str) -> Result<Workload, LoadError> {
    let mut lines: Vec<&str> = READS.lines().collect();
    lines[line - 1] = with;
    Workload::from_toml(&(lines.join("\n") + "\n"), "w.toml")
}

#[test]
fn a_file_size_above_8_eib_is_refused_at_its_line() {
    let e = load_with(8, "size = \"18446744073709551615\"").unwrap_err().to_string();
    assert!(e.starts_with("w.toml:8:8: "), "{e}");
    assert!(e.contains("18446744073709551615 is above 9223372036854775807"), "{e}");
    // 8 EiB less a byte is the largest file Linux holds: accepted (it is only validated here).
    load_with(8, "size = \"9223372036854775807\"").unwrap_or_else(|e| panic!("{e}"));
    let e = load_with(8, "size = \"9223372036854775808\"").unwrap_err().to_string();
    assert!(e.starts_with("w.toml:8:8: "), "{e}");
}

#[test]
fn a_block_above_1_gib_is_refused_at_its_line() {
    let e = load_with(16, "bs = \"2g\"").unwrap_err().to_string();
    assert!(e.starts_with("w.toml:16:6: "), "{e}");
    assert!(e.contains("bs 2g is larger than fslab's largest block, 1g"), "{e}");
}

#[test]
fn values_toml_cannot_write_are_refused_by_validation_and_explain_does_not_panic() {
    let w = workload(READS);
    let mut seeded = w.clone();
    seeded.seed = Some(u64::MAX);
    seeded.validate().unwrap_or_else(|e| panic!("any seed is fine: {e}"));
    // A seed above TOML's largest integer is written as its digits, and read back.
    let text = seeded.to_toml();
    assert!(text.contains("seed = \"18446744073709551615\""), "{text}");
    assert_eq!(
        Workload::from_toml(&text, "back.toml").unwrap_or_else(|e| panic!("{e}")),
        seeded
    );
    let mut ops = w.clone();
    ops.stop.ops = Some(1 << 63);
    let e = ops.validate().unwrap_err();
    assert!(e.message.contains("is above"), "{}", e.message);
    assert!(ops
        .to_toml()
        .starts_with("# this workload cannot be written as TOML: stop.ops"));
    let mut ops = w.clone();
    ops.stop.ops = Some(1 << 63);
    assert_eq!(
        ops.validate().unwrap_err().path,
        vec![PathSeg::Key("stop"), PathSeg::Key("ops")]
    );
    let mut bytes = w;
    bytes.stop.bytes = Some(Bytes(u64::MAX));
    assert!(bytes.validate().is_err());
}

#[test]
fn a_script_offset_beyond_8_eib_names_its_step() {
    let text = r#"name = "s"
[stop]
ops = 2

[[group]]
name = "g"

[group.script]
base = "c{thread}"
labels = ["NTCreateX", "WriteX"]

[[group.script.step]]
label = 0
call = "open"
path = "f"
handle = 1
create = true

[[group.script.step]]
label = 1
call = "write"
handle = 1
offset = 0
len = 1
"#;
    let mut w = workload(text);
    let script = w.groups[0].script.as_mut().unwrap();
    script.steps[1].call = Call::Write {
        handle: 1,
        offset: 1 << 63,
        len: 1,
    };
    let e = w.validate().unwrap_err();
    assert_eq!(
        e.path,
        vec![PathSeg::Key("group"), PathSeg::Index(0), PathSeg::Key("script")]
    );
    assert!(
        e.message
            .starts_with("step 2 (WriteX): the offset ends beyond 9223372036854775807 bytes"),
        "{}",
        e.message
    );
    // What explain prints instead of panicking.
    assert!(w.to_toml().contains("step 2 (WriteX)"), "{}", w.to_toml());
    // The last byte of the largest file is fine.
    let script = w.groups[0].script.as_mut().unwrap();
    script.steps[1].call = Call::Lock {
        handle: 1,
        offset: u64::MAX,
        len: 0,
    };
    assert!(w.validate().unwrap_err().message.contains("the range ends beyond"));
}

#[test]
fn a_drawn_seed_fits_toml_so_the_compiled_workload_can_be_written_back() {
    // Half of all u64 seeds are above TOML's largest integer: twenty draws all fitting fails
    // once in a million when the draw is not bounded.
    let w = workload(&READS.replace("ops = 10", "ops = 1"));
    let dir = fslab_testkit::tempdir();
    for _ in 0..20 {
        let r = crate::common::run_ok(&w, dir.path());
        assert!(r.seed <= i64::MAX as u64, "seed {}", r.seed);
        let back = Workload::from_toml(&r.workload.to_toml(), "back.toml").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back.seed, Some(r.seed));
    }
}

#[test]
fn a_fileset_its_operations_cannot_work_on_is_refused_at_its_line() {
    let e = load_with(7, "files = 0").unwrap_err().to_string();
    assert!(
        e.starts_with("w.toml:7:9: fileset `data` has no files and no operation creates any"),
        "{e}"
    );
    let e = load_with(8, "size = 0").unwrap_err().to_string();
    assert!(
        e.starts_with("w.toml:8:8: every file of fileset `data` is empty and no operation makes it grow"),
        "{e}"
    );
    // No files is fine when an operation makes them.
    let creates = READS
        .replace("op = \"read\"", "op = \"create\"")
        .replace("files = 1", "files = 0");
    Workload::from_toml(&creates, "w.toml").unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn an_iodepth_above_the_limit_says_what_the_limit_is() {
    let text = READS.replace(
        "fileset = \"data\"\n",
        "fileset = \"data\"\nengine = \"io_uring\"\niodepth = 100000\n",
    );
    let e = Workload::from_toml(&text, "w.toml").unwrap_err().to_string();
    assert!(
        e.starts_with("w.toml:14:11: iodepth 100000 is above fslab's limit of 4096 transfers in flight per thread"),
        "{e}"
    );
    assert!(e.contains("io_uring queue holds at most 32768 entries"), "{e}");
}

#[test]
fn invalid_utf8_names_its_line_column_and_byte() {
    let dir = fslab_testkit::tempdir();
    let path = dir.path().join("u.toml");
    let mut text = READS.as_bytes().to_vec();
    // Line 5 is `name = "data"`: a bad byte in place of its `t`.
    let at = READS.find("name = \"data\"").unwrap() + "name = \"da".len();
    text[at] = 0xff;
    std::fs::write(&path, &text).unwrap();
    let e = Workload::from_file(&path).unwrap_err().to_string();
    assert_eq!(
        e,
        format!(
            "{}:6:11: byte 0xff (at byte offset {at}) is not valid UTF-8; the file must be UTF-8 text",
            path.display()
        )
    );
}

#[test]
fn a_megabyte_of_input_is_echoed_as_an_excerpt() {
    let long = "x".repeat(1 << 20);
    for (line, with) in [
        (8, format!("size = \"4{long}\"")),
        (8, format!("size = \"{long}\"")),
        (12, format!("fileset = \"{long}\"")),
        (6, format!("name = \"data\"\ndir = \"/{long}\"")),
    ] {
        let e = load_with(line, &with).unwrap_err().to_string();
        assert!(e.len() < 400, "{} bytes of error: {}", e.len(), &e[..400]);
        assert!(
            e.contains("… (1048577 characters)") || e.contains("… (1048576 characters)"),
            "{e}"
        );
    }
}

/// More files than the machine's memory could keep track of (8 Ei of them, or as many as
/// `until_bytes` makes of 4 KiB files from 9000 TiB) are refused before anything is made: the run used
/// to panic ("capacity overflow") once it had made the fileset's directory.
#[test]
fn more_files_than_memory_can_track_are_refused_before_anything_is_made() {
    for (line, with) in [(7, "files = 9223372036854775807"), (7, "until_bytes = \"9000t\"")] {
        let w = load_with(line, with).unwrap_or_else(|e| panic!("{with}: {e}"));
        let dir = fslab_testkit::tempdir();
        let e = crate::common::try_run(&w, dir.path()).expect_err(with).to_string();
        assert!(e.starts_with("fileset `data`: "), "{e}");
        assert!(
            e.contains("of memory for fslab to keep track of") && e.contains("give fewer files"),
            "{e}"
        );
        assert_eq!(
            fslab_testkit::entries(dir.path()),
            Vec::<String>::new(),
            "{with}: something was made"
        );
    }
}

/// More data directories than the process may hold open (fslab keeps each open for the run) are
/// refused before any is made: the run used to make them until `open` failed with EMFILE.
#[test]
fn more_directories_than_descriptors_are_refused_before_any_is_made() {
    let hard = rustix::process::getrlimit(rustix::process::Resource::Nofile)
        .maximum
        .expect("a hard limit on open files");
    let w = load_with(7, &format!("files = 2\ndirs = {}", hard + 1));
    let w = w.unwrap_or_else(|e| panic!("{e}"));
    let dir = fslab_testkit::tempdir();
    let e = crate::common::try_run(&w, dir.path())
        .expect_err("too many dirs")
        .to_string();
    assert!(
        e.contains(&format!("dirs = {}", hard + 1)) && e.contains("(ulimit -Hn)"),
        "{e}"
    );
    assert_eq!(
        fslab_testkit::entries(dir.path()),
        Vec::<String>::new(),
        "something was made"
    );
}
