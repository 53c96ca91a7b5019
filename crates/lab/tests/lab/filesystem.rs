//! mkfs, mount, umount and fsck for real, on loop images: the system tier (root, the mkfs tools),
//! but for the check of the types this machine lacks.

use crate::common::*;
use fslab_lab::device::wipe;
use fslab_lab::filesystem::{blkdev_of, fsck, mkfs, mount, umount, umount_lazy, Support};
use fslab_lab::tool::package_of;
use fslab_lab::LabError;
use fslab_testkit::{require_root, require_tool, MountGuard};
use std::path::Path;

/// The whole life of a filesystem on a loop image: wipe, mkfs with options that need shell-like
/// splitting, mount with per-mount and filesystem options read back, a file written, umount,
/// and a clean fsck.
fn cell(fs_type: &str, mkfs_options: &str, mount_options: &str, expect_options: &[&str]) {
    let (mkfs_tool, fsck_tool) = match Support::of(fs_type).unwrap() {
        Support {
            mkfs: Some(m),
            fsck: Some((f, _)),
            ..
        } => (*m, *f),
        s => panic!("{s:?} has no mkfs or fsck"),
    };
    require_tool(mkfs_tool, package_of(mkfs_tool).unwrap_or("its mkfs package"));
    require_tool(fsck_tool, package_of(fsck_tool).unwrap_or("its fsck package"));
    require_tool("wipefs", "util-linux");
    require_tool("blkid", "util-linux");
    Support::check(fs_type).unwrap_or_else(|e| panic!("this test needs {fs_type}: {e}"));
    let b = Bed::new(512 * MIB);
    let dev = b.img.device();

    wipe(dev).unwrap();
    mkfs(dev, fs_type, mkfs_options).unwrap();
    let label = sh("blkid", &["-s", "LABEL", "-o", "value", dev.to_str().unwrap()]);
    assert_eq!(label.trim(), "fs lab", "the label given with -L \"fs lab\"");

    let m = mount(Some(dev), &b.mnt, fs_type, mount_options).unwrap();
    assert_eq!(m.mount_point, std::fs::canonicalize(&b.mnt).unwrap());
    let opts: Vec<&str> = m.effective_options.split(',').collect();
    for want in expect_options {
        assert!(
            opts.contains(want),
            "{fs_type}: {want} not in effective options {}",
            m.effective_options
        );
    }
    std::fs::write(b.mnt.join("file"), vec![7u8; 1 << 20]).unwrap();
    assert_eq!(blkdev_of(&b.mnt.join("file")).unwrap().as_deref(), Some(dev));

    umount(&b.mnt).unwrap();
    assert!(!is_mounted(&b.mnt));
    let out = fsck(dev, fs_type, None).unwrap();
    assert!(!out.is_empty(), "{fs_type}: fsck printed nothing");
}

#[test]
#[ignore = "system tier: root, loop devices, mkfs.ext4, e2fsck"]
fn ext4_cell() {
    require_root();
    cell(
        "ext4",
        r#"-L "fs lab" -b 4096"#,
        "noatime,data=writeback",
        &["rw", "noatime", "data=writeback"],
    );
}

#[test]
#[ignore = "system tier: root, loop devices, mkfs.xfs, xfs_repair"]
fn xfs_cell() {
    require_root();
    cell(
        "xfs",
        r#"-L "fs lab""#,
        "noatime,logbufs=4",
        &["rw", "noatime", "logbufs=4"],
    );
}

#[test]
#[ignore = "system tier: root, loop devices, mkfs.btrfs, btrfs"]
fn btrfs_cell() {
    require_root();
    cell(
        "btrfs",
        "-L 'fs lab'",
        "noatime,compress=zstd",
        &["rw", "noatime", "compress=zstd:3"],
    );
}

#[test]
#[ignore = "system tier: root, to mount a tmpfs"]
fn tmpfs_with_a_size() {
    require_root();
    Support::check("tmpfs").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mnt = dir.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    let _guard = MountGuard(mnt.clone());
    assert_eq!(mkfs(Path::new("/nonexistent"), "tmpfs", "").unwrap(), "");

    let m = mount(None, &mnt, "tmpfs", "size=64m,nodev").unwrap();
    let opts: Vec<&str> = m.effective_options.split(',').collect();
    assert!(
        opts.contains(&"size=65536k") && opts.contains(&"nodev"),
        "{}",
        m.effective_options
    );
    assert_eq!(blkdev_of(&mnt).unwrap(), None);
    let e = std::fs::write(mnt.join("big"), vec![0u8; 65 << 20]).unwrap_err();
    assert_eq!(
        e.raw_os_error(),
        Some(libc::ENOSPC),
        "a 65 MiB file in a 64 MiB tmpfs: {e}"
    );
    umount(&mnt).unwrap();
    assert!(!is_mounted(&mnt));
}

/// A type this machine cannot make or mount is Unsupported, naming the kernel module it lacks
/// or the package that has its mkfs; a type it can is accepted.
#[test]
fn types_the_machine_lacks_are_unsupported_with_the_remedy() {
    for (fs_type, module, package) in [
        ("jfs", "jfs", "jfsutils"),
        ("reiserfs", "reiserfs", "reiserfsprogs"),
        ("nilfs2", "nilfs2", "nilfs-tools"),
    ] {
        let r = Support::check(fs_type);
        let in_kernel = std::fs::read_to_string("/proc/filesystems")
            .unwrap()
            .split_whitespace()
            .any(|w| w == fs_type);
        let has_mkfs = fslab_lab::tool::find_program(&format!("mkfs.{fs_type}")).is_some();
        match r {
            Ok(()) => assert!(
                in_kernel && has_mkfs,
                "{fs_type} accepted without kernel support or mkfs"
            ),
            Err(LabError::Unsupported { what, reason }) => {
                assert_eq!(what, fs_type);
                assert!(!in_kernel || !has_mkfs, "{fs_type} refused though it is here: {reason}");
                if !in_kernel {
                    assert!(reason.contains(&format!("the {module} kernel module")), "{reason}");
                }
                if !has_mkfs {
                    assert!(reason.contains(&format!("apt-get install {package}")), "{reason}");
                }
            }
            Err(e) => panic!("{fs_type}: expected Unsupported, got {e:?}"),
        }
    }
    let e = Support::check("ntfs4").unwrap_err().to_string();
    assert!(e.starts_with("ntfs4: unknown filesystem type"), "{e}");
}

#[test]
#[ignore = "system tier: root, loop devices, mkfs.ext4"]
fn a_bad_mount_option_carries_the_kernel_line() {
    require_root();
    require_tool("mkfs.ext4", "e2fsprogs");
    let b = Bed::new(64 * MIB);
    mkfs(b.img.device(), "ext4", "").unwrap();
    match mount(Some(b.img.device()), &b.mnt, "ext4", "data=nonsense") {
        Err(LabError::Tool {
            command,
            output,
            kernel,
            ..
        }) => {
            assert!(command.contains("-o data=nonsense"), "{command}");
            assert!(output.contains("Invalid argument"), "{output}");
            let kernel = kernel.expect("no kernel line");
            assert!(kernel.contains("ext4") || kernel.contains("EXT4"), "{kernel}");
            assert!(kernel.contains("data"), "{kernel}");
        }
        other => panic!("expected a Tool error, got {other:?}"),
    }
    assert!(!is_mounted(&b.mnt));
}

#[test]
#[ignore = "system tier: root, loop devices, mkfs.ext4"]
fn a_bad_mkfs_option_is_a_tool_error_with_its_output() {
    require_root();
    require_tool("mkfs.ext4", "e2fsprogs");
    let b = Bed::new(64 * MIB);
    match mkfs(b.img.device(), "ext4", "-O no_such_feature") {
        Err(LabError::Tool { command, output, .. }) => {
            assert!(
                command.starts_with("mkfs.ext4 -F -q -O no_such_feature /dev/loop"),
                "{command}"
            );
            assert!(output.contains("no_such_feature"), "{output}");
        }
        other => panic!("expected a Tool error, got {other:?}"),
    }
}

#[test]
#[ignore = "system tier: root, loop devices, mkfs.ext4, debugfs"]
fn fsck_reports_errors_found() {
    require_root();
    require_tool("mkfs.ext4", "e2fsprogs");
    require_tool("debugfs", "e2fsprogs");
    let b = Bed::new(64 * MIB);
    let dev = b.img.device();
    mkfs(dev, "ext4", "").unwrap();
    // A file whose inode is then cleared: its directory entry points at nothing.
    let content = b.dir.path().join("content");
    std::fs::write(&content, b"hello").unwrap();
    let put = format!("write {} victim", content.display());
    sh("debugfs", &["-w", "-R", &put, dev.to_str().unwrap()]);
    sh("debugfs", &["-w", "-R", "clri victim", dev.to_str().unwrap()]);
    match fsck(dev, "ext4", None) {
        Err(LabError::Tool {
            command,
            status,
            output,
            ..
        }) => {
            assert!(command.starts_with("e2fsck -f -n /dev/loop"), "{command}");
            assert!(
                status.contains('4'),
                "e2fsck -n exits 4 when it leaves errors: {status}"
            );
            assert!(
                output.contains("Entry 'victim' in / (2) has deleted/unused inode"),
                "{output}"
            );
        }
        other => panic!("expected a Tool error, got {other:?}"),
    }
}

#[test]
#[ignore = "system tier: root, loop devices"]
fn a_busy_filesystem_is_detached_lazily() {
    require_root();
    let b = Bed::new(64 * MIB);
    mount(None, &b.mnt, "tmpfs", "size=1m").unwrap();
    let open = std::fs::File::create(b.mnt.join("held")).unwrap();

    let e = umount(&b.mnt).unwrap_err().to_string();
    assert!(e.contains("busy"), "{e}");
    assert!(is_mounted(&b.mnt));
    umount_lazy(&b.mnt).unwrap();
    assert!(!is_mounted(&b.mnt));
    drop(open);
}
