//! The devices the lab formats: sparse loop images it creates itself, and block devices a study
//! names for destruction, which are checked so that nothing is destroyed by accident.

use crate::filesystem::mountinfo;
use crate::tool::run_tool;
use crate::LabError;
use std::fs::{File, OpenOptions};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

// The loop driver's ioctls and structures (linux/loop.h); libc does not have them.
const LOOP_SET_FD: libc::c_ulong = 0x4C00;
const LOOP_CLR_FD: libc::c_ulong = 0x4C01;
const LOOP_SET_STATUS64: libc::c_ulong = 0x4C04;
const LOOP_CONFIGURE: libc::c_ulong = 0x4C0A;
const LOOP_CTL_GET_FREE: libc::c_ulong = 0x4C82;
const LO_FLAGS_AUTOCLEAR: u32 = 4;
const LO_NAME_SIZE: usize = 64;

#[repr(C)]
struct LoopInfo64 {
    lo_device: u64,
    lo_inode: u64,
    lo_rdevice: u64,
    lo_offset: u64,
    lo_sizelimit: u64,
    lo_number: u32,
    lo_encrypt_type: u32,
    lo_encrypt_key_size: u32,
    lo_flags: u32,
    lo_file_name: [u8; LO_NAME_SIZE],
    lo_crypt_name: [u8; LO_NAME_SIZE],
    lo_encrypt_key: [u8; 32],
    lo_init: [u64; 2],
}

#[repr(C)]
struct LoopConfig {
    fd: u32,
    block_size: u32,
    info: LoopInfo64,
    reserved: [u64; 8],
}

/// How many times to look for a free loop device when other processes take the one offered.
const LOOP_ATTEMPTS: usize = 20;
/// How long dropping a [`LoopImage`] waits for the kernel to let go of its device.
const DETACH_WAIT: Duration = Duration::from_secs(2);

/// Gives each image this process creates its own name.
static IMAGE_COUNTER: AtomicUsize = AtomicUsize::new(0);

/// A sparse image file attached to a loop device, both made by fslab and so safe to format.
///
/// The device is attached with autoclear: the kernel detaches it when its last user goes. This
/// value is one user (it keeps the device open); a mounted filesystem is another. Dropping it
/// closes the device, waits for the kernel to detach it and removes the image, so nothing is left
/// behind; a filesystem still mounted on it keeps it until it is unmounted.
#[derive(Debug)]
pub struct LoopImage {
    image: PathBuf,
    device: PathBuf,
    size: u64,
    /// The open loop device that keeps it attached; `None` once let go.
    fd: Option<OwnedFd>,
    /// Set by [`LoopImage::detach_later`]: do not wait for the kernel to detach it.
    lazy: bool,
}

impl LoopImage {
    /// Creates a sparse image of `size` bytes in `dir` (a temporary directory the caller made)
    /// and attaches it to a free loop device.
    pub fn create(dir: &Path, size: u64) -> Result<LoopImage, LabError> {
        let n = IMAGE_COUNTER.fetch_add(1, Ordering::Relaxed);
        let image = dir.join(format!("fslab-{}-{n}.img", std::process::id()));
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .custom_flags(libc::O_CLOEXEC)
            .open(&image)
            .map_err(|e| LabError::io(format!("creating loop image {}", image.display()), e))?;
        let attached = file
            .set_len(size)
            .map_err(|e| LabError::io(format!("sizing loop image {} to {size} bytes", image.display()), e))
            .and_then(|()| std::fs::canonicalize(&image).map_err(|e| LabError::io("loop image path", e)))
            .and_then(|canonical| attach(&file, &canonical).map(|(device, fd)| (canonical, device, fd)));
        match attached {
            Ok((image, device, fd)) => {
                reset_scheduler(&device);
                Ok(LoopImage {
                    image,
                    device,
                    size,
                    fd: Some(fd),
                    lazy: false,
                })
            }
            Err(e) => {
                let _ = std::fs::remove_file(&image);
                Err(e)
            }
        }
    }

    /// The loop device (`/dev/loopN`).
    pub fn device(&self) -> &Path {
        &self.device
    }

    /// The image file behind it.
    pub fn image(&self) -> &Path {
        &self.image
    }

    /// Its size in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// For a device still busy (a hung run's filesystem, detached lazily): lets go of the device
    /// without waiting, so the kernel detaches it when its last user goes, and removes the image
    /// file now (the kernel keeps the file's data until then).
    pub fn detach_later(mut self) {
        self.lazy = true;
    }

    /// Whether the loop device is still attached to this image.
    fn still_attached(&self) -> bool {
        let backing = sys_block(&self.device).join("loop/backing_file");
        std::fs::read_to_string(backing).is_ok_and(|b| Path::new(b.trim_end()) == self.image)
    }
}

impl Drop for LoopImage {
    fn drop(&mut self) {
        // Closing the last opener of an autoclear device detaches it.
        drop(self.fd.take());
        if !self.lazy {
            let t0 = Instant::now();
            while self.still_attached() && t0.elapsed() < DETACH_WAIT {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        let _ = std::fs::remove_file(&self.image);
    }
}

/// Lets go of every loop device whose image lies beneath `dir` (what a killed earlier run left
/// attached): each is detached now, or, while a filesystem on it is still mounted, as soon as
/// that goes (the kernel turns LOOP_CLR_FD on a busy device into autoclear). Returns how many
/// devices were let go.
pub fn detach_images_under(dir: &Path) -> usize {
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let Ok(entries) = std::fs::read_dir("/sys/block") else {
        return 0;
    };
    let mut count = 0;
    for entry in entries.flatten() {
        let Ok(backing) = std::fs::read_to_string(entry.path().join("loop/backing_file")) else {
            continue;
        };
        let backing = backing.trim_end();
        let image = Path::new(backing.strip_suffix(" (deleted)").unwrap_or(backing));
        if !image.starts_with(&dir) {
            continue;
        }
        let device = Path::new("/dev").join(entry.file_name());
        if let Ok(fd) = open_device(&device, libc::O_RDONLY) {
            // SAFETY: LOOP_CLR_FD takes no argument.
            if unsafe { libc::ioctl(fd.as_raw_fd(), LOOP_CLR_FD as _, 0) } == 0 {
                count += 1;
            }
        }
    }
    count
}

/// A loop device keeps the scheduler its last user chose: start from the loop driver's own
/// (none); a study that names one sets it afterwards. Written only when it differs, since even
/// an unchanged write freezes the queue for tens of milliseconds.
fn reset_scheduler(loop_device: &Path) {
    let scheduler = sys_block(loop_device).join("queue/scheduler");
    if !std::fs::read_to_string(&scheduler).is_ok_and(|s| s.contains("[none]")) {
        let _ = std::fs::write(&scheduler, "none");
    }
}

/// `/sys/block/loopN` for `/dev/loopN`.
fn sys_block(loop_device: &Path) -> PathBuf {
    Path::new("/sys/block").join(loop_device.file_name().unwrap_or_default())
}

/// Attaches `file` to a free loop device with autoclear; returns the device and its open fd.
fn attach(file: &File, name: &Path) -> Result<(PathBuf, OwnedFd), LabError> {
    let control = open_device(Path::new("/dev/loop-control"), libc::O_RDWR)?;
    let mut last_busy = None;
    for _ in 0..LOOP_ATTEMPTS {
        // SAFETY: LOOP_CTL_GET_FREE takes no argument and returns a device number.
        let n = unsafe { libc::ioctl(control.as_raw_fd(), LOOP_CTL_GET_FREE as _) };
        if n < 0 {
            return Err(LabError::io(
                "finding a free loop device",
                std::io::Error::last_os_error(),
            ));
        }
        let device = PathBuf::from(format!("/dev/loop{n}"));
        let fd = open_device(&device, libc::O_RDWR)?;
        match configure(&fd, file, name) {
            Ok(()) => return Ok((device, fd)),
            // Another process took this device between GET_FREE and now: ask again.
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) => last_busy = Some(e),
            Err(e) => {
                return Err(LabError::io(
                    format!("attaching {} to {}", name.display(), device.display()),
                    e,
                ))
            }
        }
    }
    Err(LabError::io(
        format!(
            "attaching {}: every free loop device was taken by others",
            name.display()
        ),
        last_busy.unwrap_or_else(|| std::io::Error::from_raw_os_error(libc::EBUSY)),
    ))
}

/// Binds the loop device `fd` to `file` with autoclear: LOOP_CONFIGURE, or on kernels before
/// 5.8 LOOP_SET_FD then LOOP_SET_STATUS64.
fn configure(fd: &OwnedFd, file: &File, name: &Path) -> std::io::Result<()> {
    let mut info = LoopInfo64 {
        lo_device: 0,
        lo_inode: 0,
        lo_rdevice: 0,
        lo_offset: 0,
        lo_sizelimit: 0,
        lo_number: 0,
        lo_encrypt_type: 0,
        lo_encrypt_key_size: 0,
        lo_flags: LO_FLAGS_AUTOCLEAR,
        lo_file_name: [0; LO_NAME_SIZE],
        lo_crypt_name: [0; LO_NAME_SIZE],
        lo_encrypt_key: [0; 32],
        lo_init: [0; 2],
    };
    let bytes = name.as_os_str().as_encoded_bytes();
    let len = bytes.len().min(LO_NAME_SIZE - 1);
    info.lo_file_name[..len].copy_from_slice(&bytes[..len]);
    let config = LoopConfig {
        fd: file.as_raw_fd() as u32,
        block_size: 0,
        info,
        reserved: [0; 8],
    };
    // SAFETY: LOOP_CONFIGURE reads a `struct loop_config`, which LoopConfig lays out.
    if unsafe { libc::ioctl(fd.as_raw_fd(), LOOP_CONFIGURE as _, &config) } == 0 {
        return Ok(());
    }
    let err = std::io::Error::last_os_error();
    if !matches!(err.raw_os_error(), Some(libc::EINVAL) | Some(libc::ENOTTY)) {
        return Err(err);
    }
    // SAFETY: LOOP_SET_FD takes the backing file's descriptor.
    if unsafe { libc::ioctl(fd.as_raw_fd(), LOOP_SET_FD as _, file.as_raw_fd()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: LOOP_SET_STATUS64 reads a `struct loop_info64`.
    if unsafe { libc::ioctl(fd.as_raw_fd(), LOOP_SET_STATUS64 as _, &config.info) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

fn open_device(path: &Path, flags: libc::c_int) -> Result<OwnedFd, LabError> {
    let access = flags & libc::O_ACCMODE;
    OpenOptions::new()
        .read(true)
        .write(access == libc::O_RDWR)
        .custom_flags(libc::O_CLOEXEC | (flags & !libc::O_ACCMODE))
        .open(path)
        .map(OwnedFd::from)
        .map_err(|e| LabError::io(format!("opening {}", path.display()), e))
}

/// A block device as the kernel sees it: its device number and its directory in sysfs.
#[derive(Debug, Clone)]
pub struct BlockDevice {
    pub path: PathBuf,
    pub major: u32,
    pub minor: u32,
    /// `/sys/devices/.../block/NAME` (or `.../NAME/PARTNAME` for a partition).
    pub sys: PathBuf,
}

impl BlockDevice {
    /// The block device at `path`; Refused if it is not one.
    pub fn open(path: &Path) -> Result<BlockDevice, LabError> {
        let meta = std::fs::metadata(path).map_err(|e| LabError::io(format!("{}", path.display()), e))?;
        if !meta.file_type().is_block_device() {
            return Err(refused(path, "not a block device"));
        }
        let (major, minor) = (libc::major(meta.rdev()), libc::minor(meta.rdev()));
        let link = PathBuf::from(format!("/sys/dev/block/{major}:{minor}"));
        let sys = std::fs::canonicalize(&link)
            .map_err(|e| LabError::io(format!("{} ({})", link.display(), path.display()), e))?;
        Ok(BlockDevice {
            path: path.to_path_buf(),
            major,
            minor,
            sys,
        })
    }

    /// The kernel's name for it (`loop3`, `sda1`).
    pub fn name(&self) -> String {
        self.sys.file_name().unwrap_or_default().to_string_lossy().into_owned()
    }

    /// `major:minor`, as /proc/self/mountinfo writes it.
    pub fn number(&self) -> String {
        format!("{}:{}", self.major, self.minor)
    }

    /// Whether it is a partition of a disk.
    pub fn is_partition(&self) -> bool {
        self.sys.join("partition").exists()
    }

    /// The whole disk: itself, or for a partition its parent, which owns the request queue
    /// (scheduler, read-ahead) and the model.
    pub fn disk(&self) -> BlockDevice {
        match self.sys.parent() {
            Some(parent) if self.is_partition() => {
                let (major, minor) = read_dev_number(parent).unwrap_or((self.major, self.minor));
                let name = parent.file_name().unwrap_or_default();
                BlockDevice {
                    path: Path::new("/dev").join(name),
                    major,
                    minor,
                    sys: parent.to_path_buf(),
                }
            }
            _ => self.clone(),
        }
    }

    /// The partitions of this disk (`/sys/class/block/X/X*`), each with its device number.
    pub fn partitions(&self) -> Vec<BlockDevice> {
        let Ok(entries) = std::fs::read_dir(&self.sys) else {
            return Vec::new();
        };
        entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.join("partition").exists())
            .filter_map(|sys| {
                let (major, minor) = read_dev_number(&sys)?;
                let path = Path::new("/dev").join(sys.file_name()?);
                Some(BlockDevice {
                    path,
                    major,
                    minor,
                    sys,
                })
            })
            .collect()
    }

    /// A sysfs attribute of it (`size`, `queue/rotational`), trimmed; `None` if absent.
    pub fn attr(&self, name: &str) -> Option<String> {
        std::fs::read_to_string(self.sys.join(name))
            .ok()
            .map(|s| s.trim().to_string())
    }

    /// Its size in bytes (sysfs counts 512-byte sectors whatever the device's block size).
    pub fn size_bytes(&self) -> u64 {
        self.attr("size").and_then(|s| s.parse::<u64>().ok()).unwrap_or(0) * 512
    }

    /// What holds it (`dm-0`, `md127`): LVM, md or device-mapper built on it.
    pub fn holders(&self) -> Vec<String> {
        std::fs::read_dir(self.sys.join("holders"))
            .map(|d| {
                d.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// The `major:minor` in a sysfs block directory's `dev` file.
fn read_dev_number(sys: &Path) -> Option<(u32, u32)> {
    let text = std::fs::read_to_string(sys.join("dev")).ok()?;
    let (major, minor) = text.trim().split_once(':')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

fn refused(device: &Path, reason: impl Into<String>) -> LabError {
    LabError::Refused {
        device: device.to_path_buf(),
        reason: reason.into(),
    }
}

/// Checks that the block device `dev` may be formatted: the study names exactly this device under
/// `destroy` and the user confirmed with `--yes`; it is a block device; neither it nor any of its
/// partitions is mounted or used as swap; nothing (LVM, md, device-mapper) is built on it; and
/// nothing holds it open exclusively. Each refusal says which rule it broke.
pub fn check_block_device(dev: &Path, destroy: Option<&Path>, yes: bool) -> Result<(), LabError> {
    check_named_for_destruction(dev, destroy, yes)?;
    let device = BlockDevice::open(dev)?;
    let mut family = vec![device.clone()];
    family.extend(device.partitions());
    check_not_mounted(dev, &family)?;
    check_not_swap(dev, &family)?;
    check_no_holders(dev, &family)?;
    check_exclusive_open(dev)
}

fn check_named_for_destruction(dev: &Path, destroy: Option<&Path>, yes: bool) -> Result<(), LabError> {
    let Some(destroy) = destroy else {
        return Err(refused(
            dev,
            format!(
                "the study does not name it for destruction (destroy = \"{}\")",
                dev.display()
            ),
        ));
    };
    let real = |p: &Path| std::fs::canonicalize(p).map_err(|e| LabError::io(format!("{}", p.display()), e));
    if real(dev)? != real(destroy)? {
        return Err(refused(
            dev,
            format!("the study names {} for destruction, not this device", destroy.display()),
        ));
    }
    if !yes {
        return Err(refused(dev, "destruction not confirmed: pass --yes"));
    }
    Ok(())
}

fn check_not_mounted(dev: &Path, family: &[BlockDevice]) -> Result<(), LabError> {
    let mounts = mountinfo::read().map_err(|e| LabError::io("reading /proc/self/mountinfo", e))?;
    for m in &mounts {
        // btrfs reports an anonymous device number; its source names the device.
        let source_number = BlockDevice::open(Path::new(&m.source)).ok().map(|b| b.number());
        let hit = family
            .iter()
            .find(|d| m.number == d.number() || source_number.as_deref() == Some(&d.number()));
        if let Some(d) = hit {
            let which = if d.path.as_path() == dev {
                String::new()
            } else {
                format!("its partition {} is ", d.path.display())
            };
            return Err(refused(dev, format!("{which}mounted at {}", m.mount_point.display())));
        }
    }
    Ok(())
}

fn check_not_swap(dev: &Path, family: &[BlockDevice]) -> Result<(), LabError> {
    let swaps = std::fs::read_to_string("/proc/swaps").unwrap_or_default();
    for name in swaps.lines().skip(1).filter_map(|l| l.split_whitespace().next()) {
        let Ok(swap) = BlockDevice::open(Path::new(&name.replace("\\040", " "))) else {
            continue;
        };
        if family.iter().any(|d| d.number() == swap.number()) {
            return Err(refused(dev, format!("used as swap ({name} in /proc/swaps)")));
        }
    }
    Ok(())
}

fn check_no_holders(dev: &Path, family: &[BlockDevice]) -> Result<(), LabError> {
    for d in family {
        let holders = d.holders();
        if !holders.is_empty() {
            return Err(refused(
                dev,
                format!(
                    "{} is held by {} (LVM, md or device-mapper is built on it)",
                    d.name(),
                    holders.join(", ")
                ),
            ));
        }
    }
    Ok(())
}

/// An exclusive open fails with EBUSY while a filesystem, md, LVM or another program holds the
/// device exclusively: the last word on whether it is in use.
fn check_exclusive_open(dev: &Path) -> Result<(), LabError> {
    match open_device(dev, libc::O_RDONLY | libc::O_EXCL) {
        Ok(_) => Ok(()),
        Err(LabError::Io { source, .. }) if source.raw_os_error() == Some(libc::EBUSY) => Err(refused(
            dev,
            "in use: another program holds it open exclusively (an O_EXCL open failed with EBUSY)",
        )),
        Err(e) => Err(e),
    }
}

/// Erases every filesystem, RAID and partition-table signature on `dev` (`wipefs -a`), so the
/// next mkfs starts clean and no tool mistakes old metadata for new. First waits (up to
/// [`FREE_WAIT`]) for the device to be free: a filesystem detached lazily (a killed runner's
/// leftover mount, a hung run's) holds it until the kernel has shut it down, and wipefs would
/// fail on it as busy meanwhile.
pub fn wipe(dev: &Path) -> Result<(), LabError> {
    wait_until_free(dev, FREE_WAIT);
    let dev = dev.to_string_lossy();
    run_tool("wipefs", &["--all", "--quiet", &dev]).map(drop)
}

/// How long [`wipe`] waits for a device a lazily detached filesystem still holds.
const FREE_WAIT: Duration = Duration::from_secs(10);

/// Returns once an exclusive open of `dev` no longer fails with EBUSY, or after `limit`.
fn wait_until_free(dev: &Path, limit: Duration) {
    let start = Instant::now();
    while start.elapsed() < limit {
        match open_device(dev, libc::O_RDONLY | libc::O_EXCL) {
            Err(LabError::Io { source, .. }) if source.raw_os_error() == Some(libc::EBUSY) => {
                std::thread::sleep(Duration::from_millis(50));
            }
            _ => return,
        }
    }
}
