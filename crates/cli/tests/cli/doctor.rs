//! `fslab doctor`: what the machine has, what it lacks with the command that provides it, and
//! an exit status that says whether studies can run here.

use crate::common::{finish, fslab, fslab_command, fslab_without, HANG};
use fslab_testkit::{program, require_root, require_tool};
use std::os::unix::process::CommandExt;

#[test]
#[ignore = "system tier: root, unshare, mkfs.xfs to hide"]
fn doctor_names_what_is_missing_and_how_to_get_it() {
    require_root();
    require_tool("unshare", "util-linux");
    require_tool("mkfs.xfs", "xfsprogs");
    let run = fslab(&["doctor"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let line = |text: &str, start: &str| -> String {
        text.lines()
            .find(|l| l.starts_with(start))
            .unwrap_or_else(|| panic!("no line `{start}` in:\n{text}"))
            .to_string()
    };
    assert!(line(&run.stdout, "  ok  root").contains("running as root"));
    assert!(line(&run.stdout, "  ok  ext4").contains("mkfs.ext4"));
    assert!(line(&run.stdout, "  ok  xfs").contains("mkfs.xfs"));
    assert!(run
        .stdout
        .ends_with("studies can run here; the cells that need what is marked `no` are unsupported\n"));

    // Without xfsprogs' mkfs: xfs is marked, with the package; studies still run.
    let mkfs_xfs = program("mkfs.xfs").expect("mkfs.xfs");
    let args = ["doctor".to_string()];
    let hidden = fslab_without(&[mkfs_xfs.to_str().unwrap()], &args);
    assert_eq!(hidden.code, 0, "{}", hidden.stderr);
    let xfs = line(&hidden.stdout, "  no  xfs");
    assert!(xfs.ends_with("mkfs.xfs not installed"), "{xfs}");
    let after = hidden.stdout.split(&format!("{xfs}\n")).nth(1).unwrap();
    assert!(
        after.lines().next().unwrap().trim() == "fix: apt-get install xfsprogs",
        "{after}"
    );

    // JSON: one finding per line of the table.
    let json = fslab(&["doctor", "--json"]);
    assert_eq!(json.code, 0);
    let found: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON");
    let found = found.as_array().unwrap();
    let ext4 = found.iter().find(|f| f["what"] == "ext4").unwrap();
    assert_eq!(ext4["ok"], true);
    assert_eq!(ext4["area"], "filesystems");

    // As nobody, studies cannot run: exit 3, naming root.
    let mut cmd = fslab_command(None, &[], &["doctor"]);
    cmd.uid(65534).gid(65534);
    let nobody = finish(cmd.spawn().expect("start fslab as nobody"), &["doctor"], HANG);
    assert_eq!(nobody.code, 3, "{}", nobody.stderr);
    assert!(line(&nobody.stdout, "  no  root").contains("run them as root"));
    assert!(
        nobody
            .stdout
            .ends_with("studies cannot run here until these are fixed: root\n"),
        "{}",
        nobody.stdout
    );
}
