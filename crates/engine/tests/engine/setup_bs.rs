//! `setup_bs`: the block size of the writes that fill a fileset before the run (FFSB's
//! create_blocksize). The write sizes themselves are checked under strace by the CLI's FFSB
//! tests.

use crate::common::{data_files, run_ok, workload};
use fslab_engine::{Bytes, Workload};
use fslab_testkit::tempdir;

const TEXT: &str = r#"name = "s"
stop = { ops = 10 }

[[fileset]]
name = "fs"
files = 3
size = "10000"
setup_bs = "4k"

[[group]]
name = "g"
fileset = "fs"

[[group.op]]
op = "stat"
"#;

#[test]
fn files_written_in_small_blocks_have_their_whole_size() {
    let w = workload(TEXT);
    assert_eq!(w.filesets[0].setup_bs, Some(Bytes(4096)));
    let back = w.to_toml();
    assert!(back.contains("setup_bs = \"4k\""), "{back}");
    let dir = tempdir();
    let r = run_ok(&w, dir.path());
    assert_eq!(r.setup[0].bytes, 30000);
    let sizes: Vec<u64> = data_files(dir.path()).iter().map(|f| f.1).collect();
    assert_eq!(sizes, vec![10000; 3]);
}

#[test]
fn a_zero_setup_bs_names_its_line() {
    let e = Workload::from_toml(&TEXT.replace("\"4k\"", "\"0\""), "w.toml")
        .expect_err("setup_bs 0")
        .to_string();
    assert!(
        e.starts_with("w.toml:8:") && e.contains("setup_bs must be above 0"),
        "{e}"
    );
}

#[test]
fn the_setup_makes_files_with_the_fileset_s_mode() {
    use std::os::unix::fs::PermissionsExt;
    let w = workload(&TEXT.replace("setup_bs = \"4k\"", "mode = 0o640"));
    assert_eq!(w.filesets[0].mode, Some(0o640));
    let dir = tempdir();
    run_ok(&w, dir.path());
    let files = data_files(dir.path());
    assert_eq!(files.len(), 3);
    for (path, _) in files {
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        // The umask applies, as to IOzone's open(O_CREAT, 0640).
        assert_eq!(mode, 0o640 & !umask(), "{}", path.display());
    }
    let e = Workload::from_toml(&TEXT.replace("setup_bs = \"4k\"", "mode = 0o17777"), "w.toml")
        .expect_err("mode above 0o7777")
        .to_string();
    assert!(e.contains("mode is a file's permission bits"), "{e}");
}

fn umask() -> u32 {
    let text = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = text.lines().find(|l| l.starts_with("Umask:")).unwrap();
    u32::from_str_radix(line.split_whitespace().nth(1).unwrap(), 8).unwrap()
}
