//! What the lab's system-tier tests share: loop images with a mount point (`Bed`), disks with a
//! partition table, and checks of what is mounted. Their requirements (root, tools) are
//! testkit's, failing the test with a message naming what is missing.

use fslab_lab::device::LoopImage;
use fslab_lab::filesystem::{mkfs, mount, mountinfo};
use fslab_testkit::{require_root, require_tool, MountGuard};
use std::fs::OpenOptions;
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

pub const MIB: u64 = 1 << 20;

/// Runs `program args...`, failing the test if it fails; returns its stdout.
pub fn sh(program: &str, args: &[&str]) -> String {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("running {program}: {e}"));
    assert!(
        out.status.success(),
        "{program} {args:?} failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Whether anything is mounted at `path`.
pub fn is_mounted(path: &Path) -> bool {
    let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    mountinfo::read().unwrap().iter().any(|m| m.mount_point == path)
}

/// Waits up to two seconds for `cond`.
pub fn eventually(cond: impl Fn() -> bool) -> bool {
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(2) {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    cond()
}

/// A loop image and a mount point in a temporary directory; whatever is mounted there is
/// unmounted when it is dropped (before the image goes).
pub struct Bed {
    _guard: MountGuard,
    pub img: LoopImage,
    pub mnt: PathBuf,
    pub dir: tempfile::TempDir,
}

impl Bed {
    pub fn new(size: u64) -> Bed {
        require_root();
        let dir = tempfile::tempdir().unwrap();
        let mnt = dir.path().join("mnt");
        std::fs::create_dir(&mnt).unwrap();
        let img = LoopImage::create(dir.path(), size).unwrap();
        Bed {
            _guard: MountGuard(mnt.clone()),
            img,
            mnt,
            dir,
        }
    }

    /// With an ext4 filesystem made and mounted.
    pub fn mounted_ext4(size: u64) -> Bed {
        require_tool("mkfs.ext4", "e2fsprogs");
        let bed = Bed::new(size);
        mkfs(bed.img.device(), "ext4", "").unwrap();
        mount(Some(bed.img.device()), &bed.mnt, "ext4", "").unwrap();
        bed
    }
}

/// A sparse image with an MBR partition table holding one Linux partition from 1 MiB to its end,
/// attached with `losetup --partscan` so that `/dev/loopNp1` appears; detached and removed when
/// dropped.
pub struct PartitionedDisk {
    pub image: PathBuf,
    pub disk: PathBuf,
    pub partition: PathBuf,
}

impl PartitionedDisk {
    pub fn create(dir: &Path, size: u64) -> PartitionedDisk {
        require_tool("losetup", "mount");
        let image = dir.join("partitioned.img");
        write_mbr(&image, size);
        let disk = PathBuf::from(sh("losetup", &["--find", "--show", "--partscan", image.to_str().unwrap()]).trim());
        let partition = PathBuf::from(format!("{}p1", disk.display()));
        let me = PartitionedDisk { image, disk, partition };
        // A kernel built without the msdos partition parser (CONFIG_MSDOS_PARTITION) makes no
        // partitions itself; partx reads the table and adds them (BLKPG).
        if !eventually(|| me.partition.exists()) {
            require_tool("partx", "util-linux");
            sh("partx", &["--add", me.disk.to_str().unwrap()]);
        }
        assert!(
            eventually(|| me.partition.exists()),
            "neither the kernel nor partx made {}",
            me.partition.display()
        );
        me
    }
}

impl Drop for PartitionedDisk {
    fn drop(&mut self) {
        let _ = Command::new("losetup").arg("-d").arg(&self.disk).status();
        let _ = std::fs::remove_file(&self.image);
    }
}

/// Writes a sparse `size`-byte image whose MBR has one partition of type 0x83 (Linux) from
/// sector 2048 to the end, as `sfdisk` would with `2048,,L`.
fn write_mbr(image: &Path, size: u64) {
    let sectors = size / 512;
    let mut mbr = [0u8; 512];
    let entry = &mut mbr[446..462];
    entry[0] = 0x00; // not bootable
    entry[1..4].copy_from_slice(&[0xfe, 0xff, 0xff]); // CHS unused: LBA only
    entry[4] = 0x83;
    entry[5..8].copy_from_slice(&[0xfe, 0xff, 0xff]);
    entry[8..12].copy_from_slice(&2048u32.to_le_bytes());
    entry[12..16].copy_from_slice(&((sectors - 2048) as u32).to_le_bytes());
    mbr[510] = 0x55;
    mbr[511] = 0xaa;
    let mut f = OpenOptions::new().write(true).create_new(true).open(image).unwrap();
    f.set_len(size).unwrap();
    f.seek(SeekFrom::Start(0)).unwrap();
    f.write_all(&mbr).unwrap();
}
