//! Loop images and the checks that keep fslab from destroying a device by accident (as root: the
//! system tier, but for a regular file's refusal).

use crate::common::*;
use fslab_lab::device::{check_block_device, wipe, LoopImage};
use fslab_lab::filesystem::{mkfs, mount, umount};
use fslab_lab::LabError;
use fslab_testkit::{require_root, require_tool, MountGuard};
use std::fs::OpenOptions;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::Path;
use std::process::Command;

/// The `losetup -a` lines that name `image`.
fn losetup_lines(image: &Path) -> Vec<String> {
    sh("losetup", &["-a"])
        .lines()
        .filter(|l| l.contains(image.to_str().unwrap()))
        .map(str::to_string)
        .collect()
}

fn sys_loop(device: &Path, attr: &str) -> Option<String> {
    let name = device.file_name().unwrap();
    std::fs::read_to_string(Path::new("/sys/block").join(name).join("loop").join(attr))
        .ok()
        .map(|s| s.trim().to_string())
}

#[test]
#[ignore = "system tier: root, loop devices, losetup"]
fn loop_image_is_sparse_attached_and_removed_on_drop() {
    require_root();
    require_tool("losetup", "mount");
    let dir = tempfile::tempdir().unwrap();
    let img = LoopImage::create(dir.path(), 1 << 30).unwrap();
    let (image, device) = (img.image().to_path_buf(), img.device().to_path_buf());

    let meta = std::fs::metadata(&image).unwrap();
    assert_eq!(meta.len(), 1 << 30);
    assert!(
        meta.blocks() < 64,
        "the image is not sparse: {} blocks of 512 bytes",
        meta.blocks()
    );
    assert!(std::fs::metadata(&device).unwrap().file_type().is_block_device());
    assert_eq!(sys_loop(&device, "backing_file").as_deref(), image.to_str());
    assert_eq!(sys_loop(&device, "autoclear").as_deref(), Some("1"));
    assert_eq!(
        fslab_lab::queue::schedulers(&device).unwrap().1,
        "none",
        "not the loop driver's scheduler"
    );
    assert_eq!(
        losetup_lines(&image).len(),
        1,
        "losetup -a does not show {}",
        image.display()
    );

    drop(img);
    assert!(!image.exists(), "{} was not removed", image.display());
    assert_eq!(
        losetup_lines(&image),
        Vec::<String>::new(),
        "a loop device is left for the image"
    );
    assert_ne!(sys_loop(&device, "backing_file").as_deref(), image.to_str());
}

#[test]
#[ignore = "system tier: root, loop devices"]
fn images_get_distinct_devices() {
    require_root();
    let dir = tempfile::tempdir().unwrap();
    let a = LoopImage::create(dir.path(), 64 * MIB).unwrap();
    let b = LoopImage::create(dir.path(), 64 * MIB).unwrap();
    assert_ne!(a.device(), b.device());
    assert_ne!(a.image(), b.image());
}

/// A hung run's filesystem cannot be unmounted at once: the image goes now and the device stays
/// attached until the filesystem lets go of it, then the kernel detaches it by itself.
#[test]
#[ignore = "system tier: root, loop devices, mkfs.ext4"]
fn detach_later_leaves_a_busy_device_to_autoclear() {
    require_root();
    require_tool("mkfs.ext4", "e2fsprogs");
    let b = Bed::mounted_ext4(64 * MIB);
    let (image, device, mnt) = (b.img.image().to_path_buf(), b.img.device().to_path_buf(), b.mnt.clone());

    b.img.detach_later();
    assert!(!image.exists(), "the image file is still there");
    let backing = sys_loop(&device, "backing_file").unwrap_or_default();
    assert_eq!(
        backing,
        format!("{} (deleted)", image.display()),
        "detached while mounted"
    );
    std::fs::write(mnt.join("still-works"), b"data").unwrap();

    umount(&mnt).unwrap();
    assert!(
        eventually(|| !sys_loop(&device, "backing_file")
            .unwrap_or_default()
            .starts_with(image.to_str().unwrap())),
        "{} was not detached after the umount",
        device.display()
    );
}

fn refusal(r: Result<(), LabError>) -> String {
    match r {
        Err(LabError::Refused { reason, .. }) => reason,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
#[ignore = "system tier: root, loop devices"]
fn a_free_device_named_and_confirmed_passes() {
    require_root();
    let dir = tempfile::tempdir().unwrap();
    let img = LoopImage::create(dir.path(), 64 * MIB).unwrap();
    check_block_device(img.device(), Some(img.device()), true).unwrap();
}

#[test]
#[ignore = "system tier: root, loop devices"]
fn refuses_a_device_not_named_or_not_confirmed() {
    require_root();
    let dir = tempfile::tempdir().unwrap();
    let img = LoopImage::create(dir.path(), 64 * MIB).unwrap();
    let other = LoopImage::create(dir.path(), 64 * MIB).unwrap();
    let dev = img.device();

    let r = refusal(check_block_device(dev, None, true));
    assert!(r.contains("does not name it for destruction"), "{r}");
    let r = refusal(check_block_device(dev, Some(dev), false));
    assert!(r.contains("pass --yes"), "{r}");
    let r = refusal(check_block_device(dev, Some(other.device()), true));
    assert!(
        r.contains(&format!(
            "names {} for destruction, not this device",
            other.device().display()
        )),
        "{r}"
    );
}

/// No root needed: the file is refused before anything is opened for writing.
#[test]
fn refuses_a_regular_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("disk.img");
    std::fs::write(&file, b"not a disk").unwrap();
    let r = refusal(check_block_device(&file, Some(&file), true));
    assert_eq!(r, "not a block device");
}

#[test]
#[ignore = "system tier: root, loop devices, mkfs.ext4"]
fn refuses_a_mounted_device() {
    require_root();
    require_tool("mkfs.ext4", "e2fsprogs");
    let b = Bed::mounted_ext4(64 * MIB);
    let r = refusal(check_block_device(b.img.device(), Some(b.img.device()), true));
    assert!(r.starts_with("mounted at ") && r.ends_with("/mnt"), "{r}");
    umount(&b.mnt).unwrap();
}

#[test]
#[ignore = "system tier: root, loop devices, mkfs.ext4"]
fn refuses_a_disk_whose_partition_is_mounted() {
    require_root();
    require_tool("mkfs.ext4", "e2fsprogs");
    require_tool("losetup", "mount");
    let dir = tempfile::tempdir().unwrap();
    let mnt = dir.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    let disk = PartitionedDisk::create(dir.path(), 64 * MIB);
    mkfs(&disk.partition, "ext4", "").unwrap();
    let _guard = MountGuard(mnt.clone());
    mount(Some(&disk.partition), &mnt, "ext4", "").unwrap();

    let r = refusal(check_block_device(&disk.disk, Some(&disk.disk), true));
    assert!(
        r.starts_with(&format!("its partition {} is mounted at ", disk.partition.display())),
        "{r}"
    );
    umount(&mnt).unwrap();
    check_block_device(&disk.disk, Some(&disk.disk), true).unwrap();
}

#[test]
#[ignore = "system tier: root, loop devices"]
fn refuses_a_device_held_open_exclusively() {
    require_root();
    let dir = tempfile::tempdir().unwrap();
    let img = LoopImage::create(dir.path(), 64 * MIB).unwrap();
    let held = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_EXCL)
        .open(img.device())
        .unwrap();

    let r = refusal(check_block_device(img.device(), Some(img.device()), true));
    assert!(r.starts_with("in use: "), "{r}");
    drop(held);
    // Once released it is accepted. Another program may still hold it for a moment (udev probes
    // a new loop device; a CI run once found it busy right after the drop): allowed 2 s.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    loop {
        match check_block_device(img.device(), Some(img.device()), true) {
            Ok(_) => break,
            Err(e) if std::time::Instant::now() < deadline && format!("{e:?}").contains("in use") => {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            Err(e) => panic!("a released device is still refused after 2 s: {e}"),
        }
    }
}

#[test]
#[ignore = "system tier: root, loop devices, mkswap, swapon"]
fn refuses_a_swap_device() {
    require_root();
    require_tool("mkswap", "util-linux");
    require_tool("swapon", "mount");
    let dir = tempfile::tempdir().unwrap();
    let img = LoopImage::create(dir.path(), 64 * MIB).unwrap();
    let dev = img.device().to_str().unwrap().to_string();
    sh("mkswap", &[&dev]);
    sh("swapon", &[&dev]);
    let r = check_block_device(img.device(), Some(img.device()), true);
    let _ = Command::new("swapoff").arg(&dev).status();
    let r = refusal(r);
    assert!(r.starts_with("used as swap"), "{r}");
}

#[test]
#[ignore = "system tier: root, loop devices, wipefs, mkfs.xfs"]
fn wipe_erases_every_signature() {
    require_root();
    require_tool("wipefs", "util-linux");
    require_tool("mkfs.xfs", "xfsprogs");
    let dir = tempfile::tempdir().unwrap();
    let img = LoopImage::create(dir.path(), 512 * MIB).unwrap();
    let dev = img.device().to_str().unwrap();
    mkfs(img.device(), "xfs", "").unwrap();
    assert!(
        sh("wipefs", &["--noheadings", dev]).contains("xfs"),
        "mkfs.xfs left no signature"
    );

    wipe(img.device()).unwrap();
    assert_eq!(sh("wipefs", &["--noheadings", dev]), "", "signatures left after wipe");
    let mnt = dir.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    let _guard = MountGuard(mnt.clone());
    assert!(
        mount(Some(img.device()), &mnt, "xfs", "").is_err(),
        "a wiped device still mounts"
    );
}

/// A filesystem detached lazily holds its device until its last user lets go: wipe waits for
/// the device to be free instead of failing as busy (a resumed study's wipe of the device whose
/// leftover mount it had just detached failed so once).
#[test]
#[ignore = "system tier: root, loop devices, wipefs, mkfs.ext4"]
fn wipe_waits_for_a_lazily_detached_filesystem_to_let_its_device_go() {
    require_root();
    require_tool("wipefs", "util-linux");
    require_tool("mkfs.ext4", "e2fsprogs");
    let dir = tempfile::tempdir().unwrap();
    let img = LoopImage::create(dir.path(), 64 * MIB).unwrap();
    mkfs(img.device(), "ext4", "").unwrap();
    let mnt = dir.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    let _mounted = mount(Some(img.device()), &mnt, "ext4", "").unwrap();
    // A user of the filesystem, kept past the detach and let go 300 ms later.
    let user = std::fs::File::create(mnt.join("held")).unwrap();
    fslab_lab::filesystem::umount_lazy(&mnt).unwrap();
    let start = std::time::Instant::now();
    let release = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(300));
        drop(user);
    });
    wipe(img.device()).unwrap_or_else(|e| panic!("wipe of a device being let go: {e}"));
    release.join().unwrap();
    assert!(
        start.elapsed() >= std::time::Duration::from_millis(300),
        "wipe did not wait"
    );
    let dev = img.device().to_str().unwrap();
    assert_eq!(sh("wipefs", &["--noheadings", dev]), "", "signatures left after wipe");
}

/// What a killed run leaves: an image attached without autoclear, one with a filesystem still
/// mounted. Both are let go; the mounted one when it is unmounted.
#[test]
#[ignore = "system tier: root, loop devices, losetup, mkfs.ext4"]
fn leftover_images_under_a_directory_are_let_go() {
    require_root();
    require_tool("losetup", "mount");
    require_tool("mkfs.ext4", "e2fsprogs");
    let dir = tempfile::tempdir().unwrap();
    let scratch = dir.path().join("scratch");
    std::fs::create_dir(&scratch).unwrap();
    let attach = |name: &str| {
        let image = scratch.join(name);
        std::fs::File::create(&image).unwrap().set_len(64 * MIB).unwrap();
        let dev = sh("losetup", &["--find", "--show", image.to_str().unwrap()])
            .trim()
            .to_string();
        (image, std::path::PathBuf::from(dev))
    };
    let (free_image, free) = attach("free.img");
    let (busy_image, busy) = attach("busy.img");
    let elsewhere = LoopImage::create(dir.path(), 64 * MIB).unwrap();
    mkfs(&busy, "ext4", "").unwrap();
    let mnt = dir.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    let _guard = MountGuard(mnt.clone());
    mount(Some(&busy), &mnt, "ext4", "").unwrap();

    assert_eq!(fslab_lab::device::detach_images_under(&scratch), 2);
    let attached_to = |dev: &Path, image: &Path| sys_loop(dev, "backing_file").as_deref() == image.to_str();
    assert!(
        eventually(|| !attached_to(&free, &free_image)),
        "{} still attached",
        free.display()
    );
    assert!(
        attached_to(&busy, &busy_image),
        "{} detached under a mounted filesystem",
        busy.display()
    );
    assert!(
        attached_to(elsewhere.device(), elsewhere.image()),
        "an image outside the directory was let go"
    );
    umount(&mnt).unwrap();
    assert!(
        eventually(|| !attached_to(&busy, &busy_image)),
        "{} still attached after the umount",
        busy.display()
    );
}
