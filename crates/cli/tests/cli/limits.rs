//! Values no run can use, given to any front-end: refused with exit 2 and a message that says
//! where and why, never a panic (exit 101).

use crate::common::{fslab, s};
use fslab_testkit::tempdir;
use std::path::Path;

#[test]
fn a_dbench_offset_above_8_eib_is_refused_not_a_panic_on_explain() {
    let dir = tempdir();
    let load = dir.path().join("load.txt");
    std::fs::write(&load, "WriteX 9938 9223372036854775808 1 1 NT_STATUS_OK\n").unwrap();
    let r = fslab(&["dbench", "-c", s(&load), "--explain", "1"]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    // The loadfile's reader refuses it at its line, before the engine would.
    assert!(
        r.stderr.starts_with(&format!(
            "fslab: {}:1: WriteX: offset 9223372036854775808 is too large",
            load.display()
        )),
        "{}",
        r.stderr
    );
    assert!(r.stdout.is_empty(), "{}", r.stdout);
}

#[test]
fn an_ffsb_file_size_above_8_eib_is_refused_not_a_panic_on_explain() {
    let dir = tempdir();
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../profiles/smallfile.ffsb"))
        .unwrap()
        .replace("max_filesize=524288", "max_filesize=18446744073709551615");
    let profile = dir.path().join("big.ffsb");
    std::fs::write(&profile, text).unwrap();
    let r = fslab(&["ffsb", s(&profile), "--explain"]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    // The profile's reader refuses it at its line, before the engine would.
    assert!(
        r.stderr.starts_with(&format!("fslab: {}:", profile.display()))
            && r.stderr
                .contains("`max_filesize=18446744073709551615`: the size is too large"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_seed_above_toml_s_integers_is_explained_as_digits_that_run_accepts() {
    let dir = tempdir();
    let r = fslab(&[
        "run",
        "--op",
        "randread",
        "--size",
        "64k",
        "--seed",
        "18446744073709551615",
        "--explain",
    ]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("seed = \"18446744073709551615\""), "{}", r.stdout);
    let explained = dir.path().join("explained.toml");
    std::fs::write(&explained, &r.stdout).unwrap();
    let r = fslab(&["run", s(&explained), "--check"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
}

#[test]
fn a_create_of_a_16_tib_file_runs_in_bounded_memory_and_stops_on_time() {
    // One create of a 16 TiB file, written 1 byte a call so that the disk barely notices. fslab
    // once listed every block of a file before writing it (2^44 entries): the address space is
    // held to 4 GiB here, so that such a run fails at once instead of eating the machine's
    // memory. The run's stop ends the create between two batches of blocks.
    let dir = tempdir();
    let workload = dir.path().join("big.toml");
    std::fs::write(
        &workload,
        r#"name = "big"
seed = 1
[stop]
time = "300ms"
[[fileset]]
name = "big"
size = "16t"
[[group]]
name = "makers"
fileset = "big"
[[group.op]]
op = "create"
bs = 1
"#,
    )
    .unwrap();
    let run_dir = dir.path().join("run");
    std::fs::create_dir(&run_dir).unwrap();
    let fslab = env!("CARGO_BIN_EXE_fslab");
    let limited = "ulimit -v 4194304 && exec \"$0\" \"$@\"";
    let r = fslab_testkit::run_binary(
        Path::new("/bin/sh"),
        None,
        &[],
        &[
            "-c",
            limited,
            fslab,
            "run",
            s(&workload),
            "--dir",
            s(&run_dir),
            "--json",
        ],
        crate::common::HANG,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let outcome: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let result = &outcome["phases"][0]["result"];
    assert_eq!(result["stopped_by"], "time", "{result}");
    let written = result["totals"]["bytes_written"].as_u64().unwrap();
    assert!(written > 0 && written < 1 << 30, "{written} bytes written");
    let file = std::fs::metadata(run_dir.join("big/d0/f0")).map(|m| m.len());
    assert_eq!(file.ok(), Some(written), "the file holds what the create wrote");
}

#[test]
fn meaningless_run_flags_are_refused_with_what_to_give() {
    for (flags, says) in [
        (&["--size", "0"][..], "--size 0: each file needs at least one byte"),
        (
            &["--nrfiles", "0"][..],
            "--nrfiles 0: the threads need at least one file",
        ),
        (
            &["--engine", "io_uring", "--iodepth", "100000"][..],
            "iodepth 100000 is above fslab's limit of 4096 transfers in flight per thread",
        ),
        (
            &["--bs", "3", "--direct"][..],
            "O_DIRECT needs a block size that is a multiple of 512; 3 is not",
        ),
        (
            &["--threads", "3", "--size", "18446744073709551615"][..],
            "a file size of 18446744073709551615 is above 9223372036854775807",
        ),
    ] {
        let dir = tempdir();
        let r = fslab(
            &[
                &["run", "--op", "randread", "--time", "1", "--dir", s(dir.path())][..],
                flags,
            ]
            .concat(),
        );
        assert_eq!(r.code, 2, "{flags:?}: {}{}", r.stdout, r.stderr);
        assert!(r.stderr.contains(says), "{flags:?}: {}", r.stderr);
        assert_eq!(
            fslab_testkit::entries(dir.path()),
            Vec::<String>::new(),
            "{flags:?} made files"
        );
    }
}

#[test]
fn an_input_that_never_ends_is_refused_at_its_limit_not_read_until_memory_runs_out() {
    // /dev/zero: each reader stops at 256 MiB and says so, naming the file.
    for args in [
        vec!["run", "/dev/zero", "--explain"],
        vec!["ffsb", "/dev/zero", "--explain"],
        vec!["dbench", "-c", "/dev/zero", "--explain", "1"],
        vec!["study", "run", "/dev/zero", "--dry-run"],
    ] {
        let r = fslab(&args);
        assert_eq!(r.code, 2, "{args:?}: {}{}", r.stdout, r.stderr);
        assert!(
            r.stderr.contains("/dev/zero") && r.stderr.contains("more than the 256 MiB an input may be"),
            "{args:?}: {}",
            r.stderr
        );
    }
}
