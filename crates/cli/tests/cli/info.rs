//! `fslab info`: the test bed as text and JSON, and the raw read of a named device (as root).

use crate::common::fslab;
use fslab_lab::device::LoopImage;
use fslab_testkit::require_root;
use serde_json::Value;

#[test]
fn json_has_the_test_bed_and_reads_no_disk() {
    let r = fslab(&["info", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("not JSON ({e}):\n{}", r.stdout));
    assert_eq!(v["schema_version"], 1);
    for key in ["hostname", "kernel", "os", "cpu_model", "fslab_version"] {
        assert!(v[key].is_string(), "{key} in {v}");
    }
    assert!(v["cpus"].as_u64().unwrap() >= 1, "{v}");
    assert!(v["memory_bytes"].as_u64().unwrap() > 0, "{v}");
    let tools: Vec<&str> = v["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["tool"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["mkfs.ext4", "mkfs.xfs", "mkfs.btrfs", "mount"]);
    for d in v["devices"].as_array().unwrap() {
        let path = d["path"].as_str().unwrap();
        assert!(
            !path.starts_with("/dev/loop") && !path.starts_with("/dev/ram"),
            "{path}"
        );
        assert!(d["size_bytes"].is_u64() && d["schedulers"].is_array(), "{d}");
        assert!(d["raw_read_mib_s"].is_null(), "a disk was read without --device: {d}");
    }
}

#[test]
#[ignore = "system tier: root, a loop device"]
fn a_named_device_gets_a_raw_read_figure() {
    require_root();
    let dir = tempfile::tempdir().unwrap();
    let img = LoopImage::create(dir.path(), 64 << 20).unwrap();
    let dev = img.device().to_str().unwrap();

    let r = fslab(&["info", "--device", dev, "--read-secs", "1"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.starts_with("Test bed:\n"), "{}", r.stdout);
    assert!(r.stdout.contains(&format!("\nDevice {dev}:\n")), "{}", r.stdout);
    let line = r
        .stdout
        .lines()
        .find(|l| l.trim_start().starts_with("Raw read:"))
        .expect("no raw read line");
    let speed: f64 = line.split_whitespace().nth(2).unwrap().parse().unwrap();
    assert!(speed > 0.0, "{line}");

    let r = fslab(&["info", "--device", dev, "--read-secs", "1", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let d = &v["devices"][0];
    assert_eq!(d["path"], dev);
    assert_eq!(d["size_bytes"], 64 << 20);
    assert!(d["raw_read_mib_s"].as_f64().unwrap() > 0.0, "{d}");
}

#[test]
fn a_device_that_is_not_one_is_bad_input() {
    let r = fslab(&["info", "--device", "/dev/fslab-no-such-device"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("--device /dev/fslab-no-such-device"), "{}", r.stderr);
    let r = fslab(&["info", "--device", "/etc/hostname"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("not a block device"), "{}", r.stderr);
}
