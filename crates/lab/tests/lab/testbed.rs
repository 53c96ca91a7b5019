//! The test bed of a loop device, and its raw read speed (as root).

use crate::common::*;
use fslab_lab::device::LoopImage;
use fslab_lab::testbed::{raw_read_mib_s, system_disks, TestBed};
use fslab_testkit::require_root;
use std::path::PathBuf;
use std::time::Duration;

#[test]
#[ignore = "system tier: root, loop devices"]
fn a_loop_device_is_described() {
    require_root();
    let dir = tempfile::tempdir().unwrap();
    let img = LoopImage::create(dir.path(), 256 * MIB).unwrap();
    let missing = PathBuf::from("/dev/fslab-no-such-device");
    let bed = TestBed::capture(&[img.device().to_path_buf(), missing.clone()]);

    assert!(
        bed.system.cpus >= 1 && bed.system.memory_bytes > 0 && !bed.system.kernel.is_empty(),
        "{bed:?}"
    );
    assert_eq!(bed.fslab_version, env!("CARGO_PKG_VERSION"));
    let tools: Vec<&str> = bed.tools.iter().map(|t| t.tool.as_str()).collect();
    assert_eq!(tools, ["mkfs.ext4", "mkfs.xfs", "mkfs.btrfs", "mount"]);
    let mount = &bed.tools[3];
    assert!(
        mount.version.as_deref().is_some_and(|v| v.contains("util-linux")),
        "{mount:?}"
    );

    let d = &bed.devices[0];
    assert_eq!(d.path, img.device());
    assert_eq!(d.model, format!("loop: {}", img.image().display()));
    assert_eq!(d.size_bytes, 256 * MIB);
    assert!(d.rotational.is_some());
    assert!(
        d.schedulers.contains(&d.scheduler) && d.schedulers.contains(&"none".to_string()),
        "{d:?}"
    );
    assert!(d.read_ahead_kb.is_some());
    assert_eq!(d.raw_read_mib_s, None, "capture must not read the device");
    assert_eq!(d.error, None);
    let e = bed.devices[1].error.as_deref().expect("no error for a missing device");
    assert!(e.contains("/dev/fslab-no-such-device"), "{e}");

    let text = bed.render();
    assert!(
        text.contains(&format!("Device {}:\n  Model:", img.device().display())),
        "{text}"
    );
    let size = text.lines().find(|l| l.starts_with("  Size:")).unwrap_or_default();
    assert!(size.ends_with(&format!(" 256.0 MiB ({} bytes)", 256 * MIB)), "{text}");
}

#[test]
#[ignore = "system tier: root, loop devices"]
fn raw_read_of_a_loop_device() {
    require_root();
    let dir = tempfile::tempdir().unwrap();
    let img = LoopImage::create(dir.path(), 64 * MIB).unwrap();
    let speed = raw_read_mib_s(img.device(), Duration::from_millis(500)).unwrap();
    assert!(speed > 0.0, "{speed}");
    let e = raw_read_mib_s(&PathBuf::from("/dev/fslab-no-such-device"), Duration::from_secs(1)).unwrap_err();
    assert!(e.to_string().starts_with("opening /dev/fslab-no-such-device"), "{e}");
}

#[test]
fn system_disks_leave_out_loop_and_ram() {
    let disks = system_disks();
    for d in &disks {
        let name = d.file_name().unwrap().to_string_lossy();
        assert!(
            !name.starts_with("loop") && !name.starts_with("ram") && !name.starts_with("zram"),
            "{d:?}"
        );
        assert!(std::path::Path::new("/sys/block").join(&*name).exists(), "{d:?}");
    }
}
