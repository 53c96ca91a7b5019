//! Filesystems: whether this machine can make and mount a type, and mkfs, mount, umount and fsck.

pub mod mountinfo;

use crate::device::BlockDevice;
use crate::tool::{self, find_program, run_tool, KernelLog};
use crate::LabError;
use rustix::mount::{MountFlags, UnmountFlags};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What fslab knows about a filesystem type: the program that makes it, the flags that make that
/// program overwrite an old signature without asking and print little, and its read-only check.
#[derive(Debug)]
pub struct Support {
    pub fs_type: &'static str,
    /// `None` for a type with nothing to make (tmpfs).
    pub mkfs: Option<&'static str>,
    pub mkfs_flags: &'static [&'static str],
    /// The read-only check and its flags, when the type has one fslab knows.
    pub fsck: Option<(&'static str, &'static [&'static str])>,
}

const EXT_FLAGS: &[&str] = &["-F", "-q"];
const E2FSCK: Option<(&str, &[&str])> = Some(("e2fsck", &["-f", "-n"]));

/// The filesystem types a study may name.
const KNOWN: &[Support] = &[
    Support {
        fs_type: "ext2",
        mkfs: Some("mkfs.ext2"),
        mkfs_flags: EXT_FLAGS,
        fsck: E2FSCK,
    },
    Support {
        fs_type: "ext3",
        mkfs: Some("mkfs.ext3"),
        mkfs_flags: EXT_FLAGS,
        fsck: E2FSCK,
    },
    Support {
        fs_type: "ext4",
        mkfs: Some("mkfs.ext4"),
        mkfs_flags: EXT_FLAGS,
        fsck: E2FSCK,
    },
    Support {
        fs_type: "xfs",
        mkfs: Some("mkfs.xfs"),
        mkfs_flags: &["-f", "-q"],
        fsck: Some(("xfs_repair", &["-n"])),
    },
    Support {
        fs_type: "btrfs",
        mkfs: Some("mkfs.btrfs"),
        mkfs_flags: &["-f", "-q"],
        fsck: Some(("btrfs", &["check", "--readonly"])),
    },
    Support {
        fs_type: "tmpfs",
        mkfs: None,
        mkfs_flags: &[],
        fsck: None,
    },
    Support {
        fs_type: "jfs",
        mkfs: Some("mkfs.jfs"),
        // -q: quiet, and do not ask for confirmation.
        mkfs_flags: &["-q"],
        fsck: Some(("fsck.jfs", &["-n", "-f"])),
    },
    Support {
        fs_type: "reiserfs",
        mkfs: Some("mkfs.reiserfs"),
        // One -f overwrites an old filesystem; the second stops it asking first.
        mkfs_flags: &["-f", "-f", "-q"],
        fsck: None,
    },
    Support {
        fs_type: "nilfs2",
        mkfs: Some("mkfs.nilfs2"),
        mkfs_flags: &["-f", "-q"],
        fsck: None,
    },
    Support {
        fs_type: "f2fs",
        mkfs: Some("mkfs.f2fs"),
        mkfs_flags: &["-f", "-q"],
        fsck: Some(("fsck.f2fs", &["--dry-run"])),
    },
];

impl Support {
    /// Every filesystem type a study may name.
    pub fn known() -> &'static [Support] {
        KNOWN
    }

    /// What fslab knows about `fs_type`; Unsupported for a type it does not know.
    pub fn of(fs_type: &str) -> Result<&'static Support, LabError> {
        KNOWN
            .iter()
            .find(|s| s.fs_type == fs_type)
            .ok_or_else(|| LabError::Unsupported {
                what: fs_type.to_string(),
                reason: format!(
                    "unknown filesystem type (fslab knows {})",
                    KNOWN.iter().map(|s| s.fs_type).collect::<Vec<_>>().join(", ")
                ),
            })
    }

    /// Whether this machine can make and mount `fs_type`: the kernel has it (after one
    /// `modprobe`) and its mkfs is installed. Unsupported otherwise, naming the kernel module
    /// and the Debian package it lacks.
    pub fn check(fs_type: &str) -> Result<(), LabError> {
        let support = Support::of(fs_type)?;
        let mut lacks = Vec::new();
        if !kernel_has(fs_type) {
            lacks.push(format!(
                "the kernel has no {fs_type} filesystem (not in /proc/filesystems, and `modprobe {fs_type}` \
                 could not load the {fs_type} kernel module)"
            ));
        }
        if let Some(mkfs) = support.mkfs.filter(|m| find_program(m).is_none()) {
            lacks.push(tool::missing(mkfs).to_string());
        }
        if lacks.is_empty() {
            return Ok(());
        }
        Err(LabError::Unsupported {
            what: fs_type.to_string(),
            reason: lacks.join("; "),
        })
    }
}

/// Whether the kernel lists `fs_type` in /proc/filesystems, trying `modprobe` once if not.
pub(crate) fn kernel_has(fs_type: &str) -> bool {
    let listed = || {
        std::fs::read_to_string("/proc/filesystems")
            .unwrap_or_default()
            .lines()
            .any(|l| l.split_whitespace().last() == Some(fs_type))
    };
    listed() || (run_tool("modprobe", &["-q", fs_type]).is_ok() && listed())
}

/// Splits an option string as a shell would (`-L "my label" -O ^has_journal`).
pub fn split_options(options: &str) -> Result<Vec<String>, LabError> {
    shlex::split(options).ok_or_else(|| LabError::Unsupported {
        what: format!("options `{options}`"),
        reason: "unbalanced quotes".to_string(),
    })
}

/// Makes a `fs_type` filesystem on `dev` with the study's `options`, overwriting whatever was
/// there; returns what the tool printed. tmpfs has nothing to make.
pub fn mkfs(dev: &Path, fs_type: &str, options: &str) -> Result<String, LabError> {
    let support = Support::of(fs_type)?;
    let Some(program) = support.mkfs else {
        return Ok(String::new());
    };
    let options = split_options(options)?;
    let dev = dev.to_string_lossy();
    let args: Vec<&str> = support
        .mkfs_flags
        .iter()
        .copied()
        .chain(options.iter().map(String::as_str))
        .chain([dev.as_ref()])
        .collect();
    run_tool(program, &args)
}

/// Whether fslab can put `fs_type`'s journal or log on a device of its own: ext3 and ext4 (an
/// external journal, `mke2fs -O journal_dev`) and xfs (`-l logdev=`). Unsupported otherwise,
/// saying why.
pub fn log_support(fs_type: &str) -> Result<(), LabError> {
    let reason = match fs_type {
        "ext3" | "ext4" | "xfs" => return Ok(()),
        "ext2" => "ext2 has no journal".to_string(),
        "tmpfs" => "tmpfs has no device".to_string(),
        other => format!(
            "fslab knows no external log for {other} (it puts the log of ext3, ext4 and xfs on a second device)"
        ),
    };
    Err(LabError::Unsupported {
        what: format!("an external log for {fs_type}"),
        reason,
    })
}

/// The block size an ext filesystem made with `options` gets when it has an external journal:
/// the one `-b` names, else 4096 (mke2fs would pick 1024 for a small filesystem, and the journal
/// device must have the filesystem's block size, so the lab names it).
fn ext_block_size(options: &[String]) -> Option<String> {
    let mut words = options.iter();
    while let Some(w) = words.next() {
        if w == "-b" {
            return words.next().cloned();
        }
        if let Some(n) = w.strip_prefix("-b") {
            return Some(n.to_string());
        }
    }
    None
}

/// The mkfs options for a filesystem whose log is on `log`: the study's, then what points at
/// the log (`-b 4096 -J device=LOG` for ext3/ext4 when no `-b` is given, `-l logdev=LOG` for xfs).
pub fn mkfs_options_with_log(fs_type: &str, options: &str, log: &Path) -> Result<String, LabError> {
    log_support(fs_type)?;
    let log = log.display();
    let added = match fs_type {
        "xfs" => format!("-l logdev={log}"),
        _ => match ext_block_size(&split_options(options)?) {
            Some(_) => format!("-J device={log}"),
            None => format!("-b 4096 -J device={log}"),
        },
    };
    Ok(format!("{options} {added}").trim().to_string())
}

/// The mount options for a filesystem whose log is on `log`: xfs is told where it is
/// (`logdev=LOG`); ext3/ext4 find their journal device by the number mkfs recorded.
pub fn mount_options_with_log(fs_type: &str, options: &str, log: &Path) -> String {
    match fs_type {
        "xfs" => [options.to_string(), format!("logdev={}", log.display())]
            .into_iter()
            .filter(|o| !o.is_empty())
            .collect::<Vec<_>>()
            .join(","),
        _ => options.to_string(),
    }
}

/// Prepares `log` to hold the journal of the `fs_type` filesystem made with `options`: for
/// ext3/ext4 an external journal device of the filesystem's block size (`mke2fs -O journal_dev
/// -b N`); xfs writes its log itself when the filesystem is made. Returns what the tool printed.
pub fn mkfs_log(log: &Path, fs_type: &str, options: &str) -> Result<String, LabError> {
    log_support(fs_type)?;
    if fs_type == "xfs" {
        return Ok(String::new());
    }
    let block = ext_block_size(&split_options(options)?).unwrap_or_else(|| "4096".to_string());
    let log = log.to_string_lossy();
    run_tool("mke2fs", &["-F", "-q", "-O", "journal_dev", "-b", &block, &log])
}

/// A filesystem the lab mounted.
#[derive(Debug, Clone)]
pub struct Mounted {
    pub mount_point: PathBuf,
    /// The options in force, read back from /proc/self/mountinfo: the mount's, then the
    /// filesystem's (`rw,noatime,data=writeback`).
    pub effective_options: String,
}

/// Mounts `dev` (none for tmpfs) on `mnt` with the study's `options` (`noatime,data=writeback`,
/// `size=1g`), and reads back the options in force. A mount the kernel refuses is
/// [`LabError::Tool`] with the error and the kernel's message about it.
pub fn mount(dev: Option<&Path>, mnt: &Path, fs_type: &str, options: &str) -> Result<Mounted, LabError> {
    let source = dev.map_or_else(|| fs_type.to_string(), |d| d.to_string_lossy().into_owned());
    let (flags, data) = mount_flags(options);
    let kmsg = KernelLog::mark();
    // A NUL in the options is refused as the kernel refuses bad options: EINVAL.
    let mounted = match std::ffi::CString::new(data) {
        Ok(data) => rustix::mount::mount(source.as_str(), mnt, fs_type, flags, Some(data.as_c_str())),
        Err(_) => Err(rustix::io::Errno::INVAL),
    };
    if let Err(errno) = mounted {
        let err = std::io::Error::from(errno);
        let command = format!("mount -t {fs_type} -o {options} {source} {}", mnt.display());
        return Err(LabError::Tool {
            command,
            status: format!("errno {}", err.raw_os_error().unwrap_or(0)),
            output: format!("mount(2): {err}"),
            kernel: kmsg.last_line_about(tool::device_names(&[source.as_str()])),
        });
    }
    let mount_point = std::fs::canonicalize(mnt).map_err(|e| LabError::io(format!("{}", mnt.display()), e))?;
    let entry = mount_entry(&mount_point)?.ok_or_else(|| {
        LabError::io(
            format!(
                "{} is not in /proc/self/mountinfo after mounting it",
                mount_point.display()
            ),
            std::io::Error::from(std::io::ErrorKind::NotFound),
        )
    })?;
    Ok(Mounted {
        mount_point,
        effective_options: entry.effective_options(),
    })
}

/// The per-mount flags the mount syscall takes as bits, as mount(8) knows them.
const FLAGS: &[(&str, MountFlags, bool)] = &[
    ("ro", MountFlags::RDONLY, true),
    ("rw", MountFlags::RDONLY, false),
    ("noatime", MountFlags::NOATIME, true),
    ("atime", MountFlags::NOATIME, false),
    ("relatime", MountFlags::RELATIME, true),
    ("norelatime", MountFlags::RELATIME, false),
    ("strictatime", MountFlags::STRICTATIME, true),
    ("nostrictatime", MountFlags::STRICTATIME, false),
    ("nodiratime", MountFlags::NODIRATIME, true),
    ("diratime", MountFlags::NODIRATIME, false),
    ("lazytime", MountFlags::LAZYTIME, true),
    ("nolazytime", MountFlags::LAZYTIME, false),
    ("sync", MountFlags::SYNCHRONOUS, true),
    ("async", MountFlags::SYNCHRONOUS, false),
    ("dirsync", MountFlags::DIRSYNC, true),
    ("nosuid", MountFlags::NOSUID, true),
    ("suid", MountFlags::NOSUID, false),
    ("nodev", MountFlags::NODEV, true),
    ("dev", MountFlags::NODEV, false),
    ("noexec", MountFlags::NOEXEC, true),
    ("exec", MountFlags::NOEXEC, false),
    ("silent", MountFlags::SILENT, true),
    ("loud", MountFlags::SILENT, false),
];

/// Splits a mount(8) option list into the syscall's flags and the filesystem's own options
/// (the data string), as mount(8) does: later options win (`ro,rw` is rw).
fn mount_flags(options: &str) -> (MountFlags, String) {
    let mut flags = MountFlags::empty();
    let mut data = Vec::new();
    for opt in split_mount_options(options) {
        match FLAGS.iter().find(|(name, _, _)| *name == opt) {
            Some((_, flag, true)) => flags.insert(*flag),
            Some((_, flag, false)) => flags.remove(*flag),
            None if opt == "defaults" => {}
            None => data.push(opt),
        }
    }
    (flags, data.join(","))
}

/// The comma-separated options of a mount option list; a comma inside double quotes
/// (`context="a,b"`) does not separate.
fn split_mount_options(options: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut start, mut quoted) = (0, false);
    for (i, c) in options.char_indices() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => {
                out.push(options[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(options[start..].trim());
    out.retain(|o| !o.is_empty());
    out
}

/// The mount table's entry for `mount_point` (the topmost, if several are stacked).
/// The mount that holds `path` (the innermost of those whose mount point it lies beneath; the
/// latest where several are stacked on one point).
pub fn mount_containing(path: &Path) -> Result<mountinfo::MountEntry, LabError> {
    let path = path
        .canonicalize()
        .map_err(|e| LabError::io(path.display().to_string(), e))?;
    let mounts = mountinfo::read().map_err(|e| LabError::io("reading /proc/self/mountinfo", e))?;
    mountinfo::containing(&mounts, &path)
        .cloned()
        .ok_or_else(|| LabError::Unsupported {
            what: path.display().to_string(),
            reason: "no mount in /proc/self/mountinfo holds it".to_string(),
        })
}

fn mount_entry(mount_point: &Path) -> Result<Option<mountinfo::MountEntry>, LabError> {
    let mounts = mountinfo::read().map_err(|e| LabError::io("reading /proc/self/mountinfo", e))?;
    Ok(mounts.into_iter().rev().find(|m| m.mount_point == mount_point))
}

/// How long [`umount`] retries while the filesystem is busy (a process that just ended may
/// still hold it for a moment).
const UMOUNT_RETRIES: u32 = 20;
const UMOUNT_PAUSE: Duration = Duration::from_millis(100);

/// Unmounts `mnt`, retrying for two seconds while it is busy.
pub fn umount(mnt: &Path) -> Result<(), LabError> {
    let mut tries = 0;
    loop {
        match rustix::mount::unmount(mnt, UnmountFlags::empty()) {
            Ok(()) => return Ok(()),
            Err(rustix::io::Errno::BUSY) if tries < UMOUNT_RETRIES => {
                tries += 1;
                std::thread::sleep(UMOUNT_PAUSE);
            }
            Err(e) => return Err(LabError::io(format!("unmounting {}", mnt.display()), e.into())),
        }
    }
}

/// Thaws a filesystem frozen with fsfreeze (FITHAW); harmless on one that is not frozen.
pub fn thaw(mnt: &Path) -> Result<(), LabError> {
    let dir = std::fs::File::open(mnt).map_err(|e| LabError::io(format!("cannot open {}", mnt.display()), e))?;
    // FITHAW is _IOWR('X', 120, int).
    const FITHAW: libc::c_ulong = 0xC004_5878;
    let mut zero: libc::c_int = 0;
    // SAFETY: FITHAW takes a pointer to an int and only reads it; the fd is open for the call.
    let r = unsafe { libc::ioctl(std::os::fd::AsRawFd::as_raw_fd(&dir), FITHAW, &mut zero) };
    if r != 0 {
        return Err(LabError::io(
            format!("cannot thaw {}", mnt.display()),
            std::io::Error::last_os_error(),
        ));
    }
    Ok(())
}

/// Detaches `mnt` now and lets the kernel finish unmounting when its last user goes (a hung
/// run's filesystem).
pub fn umount_lazy(mnt: &Path) -> Result<(), LabError> {
    rustix::mount::unmount(mnt, UnmountFlags::DETACH)
        .map_err(|e| LabError::io(format!("detaching {}", mnt.display()), e.into()))
}

/// Checks the unmounted `fs_type` filesystem on `dev` without changing it (`e2fsck -fn`,
/// `xfs_repair -n`, `btrfs check --readonly`), with its external journal or log on `log` when it
/// has one (`e2fsck -j LOG`, `xfs_repair -l LOG`); returns the checker's output. Errors found
/// are [`LabError::Tool`] with that output.
pub fn fsck(dev: &Path, fs_type: &str, log: Option<&Path>) -> Result<String, LabError> {
    let Some((program, flags)) = Support::of(fs_type)?.fsck else {
        return Err(LabError::Unsupported {
            what: format!("fsck of {fs_type}"),
            reason: "fslab knows no read-only check for it".to_string(),
        });
    };
    let dev = dev.to_string_lossy();
    let log = log.map(|l| l.to_string_lossy());
    let log_flag = match program {
        "xfs_repair" => "-l",
        _ => "-j",
    };
    let log_args = log.as_deref().map(|l| [log_flag, l]);
    let args: Vec<&str> = flags
        .iter()
        .copied()
        .chain(log_args.into_iter().flatten())
        .chain([dev.as_ref()])
        .collect();
    run_tool(program, &args)
}

/// The block device the filesystem holding `path` is on; `None` for one on no device (tmpfs).
/// The filesystem is the mount whose mount point is the path's nearest ancestor, as `df` finds
/// it (btrfs gives its files a device number of its own, so the number cannot tell), and its
/// device the mount's source; failing that (`/dev/root`), the device with the path's number.
pub fn blkdev_of(path: &Path) -> Result<Option<PathBuf>, LabError> {
    use std::os::unix::fs::MetadataExt;
    let path = std::fs::canonicalize(path).map_err(|e| LabError::io(format!("{}", path.display()), e))?;
    let mounts = mountinfo::read().map_err(|e| LabError::io("reading /proc/self/mountinfo", e))?;
    // The topmost of the nearest: max_by_key keeps the last of equals, and later lines are on top.
    let source = mounts
        .iter()
        .filter(|m| path.starts_with(&m.mount_point))
        .max_by_key(|m| m.mount_point.components().count())
        .map(|m| PathBuf::from(&m.source))
        .filter(|source| BlockDevice::open(source).is_ok());
    if source.is_some() {
        return Ok(source);
    }
    let dev = std::fs::metadata(&path)
        .map_err(|e| LabError::io(format!("{}", path.display()), e))?
        .dev();
    let sys = PathBuf::from(format!("/sys/dev/block/{}:{}", libc::major(dev), libc::minor(dev)));
    Ok(std::fs::canonicalize(sys)
        .ok()
        .and_then(|real| real.file_name().map(|name| Path::new("/dev").join(name))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mount_options_split_into_flags_and_data() {
        let (flags, data) = mount_flags("noatime,data=writeback,ro,barrier=0");
        assert_eq!(flags, MountFlags::NOATIME | MountFlags::RDONLY);
        assert_eq!(data, "data=writeback,barrier=0");
        let (flags, data) = mount_flags("ro,rw,defaults,size=1g");
        assert_eq!(flags, MountFlags::empty());
        assert_eq!(data, "size=1g");
        let (_, data) = mount_flags(r#"context="a,b",nodev"#);
        assert_eq!(data, r#"context="a,b""#);
        assert_eq!(mount_flags(""), (MountFlags::empty(), String::new()));
    }

    #[test]
    fn shell_like_mkfs_options() {
        assert_eq!(
            split_options(r#"-L "my label" -O ^has_journal"#).unwrap(),
            vec!["-L", "my label", "-O", "^has_journal"]
        );
        assert!(split_options("-L \"open").is_err());
    }

    #[test]
    fn an_external_log_is_named_to_mkfs_and_mount() {
        let log = Path::new("/dev/loop9");
        assert_eq!(
            mkfs_options_with_log("xfs", "-l size=64m,lazy-count=1 -d agcount=8", log).unwrap(),
            "-l size=64m,lazy-count=1 -d agcount=8 -l logdev=/dev/loop9"
        );
        assert_eq!(
            mkfs_options_with_log("ext4", "", log).unwrap(),
            "-b 4096 -J device=/dev/loop9"
        );
        assert_eq!(
            mkfs_options_with_log("ext3", "-b 1024 -O dir_index", log).unwrap(),
            "-b 1024 -O dir_index -J device=/dev/loop9"
        );
        assert_eq!(
            ext_block_size(&split_options("-b2048").unwrap()).as_deref(),
            Some("2048")
        );
        assert_eq!(
            mount_options_with_log("xfs", "noatime,logbufs=8", log),
            "noatime,logbufs=8,logdev=/dev/loop9"
        );
        assert_eq!(mount_options_with_log("xfs", "", log), "logdev=/dev/loop9");
        assert_eq!(mount_options_with_log("ext4", "noatime", log), "noatime");
        for (fs, says) in [
            ("btrfs", "fslab knows no external log for btrfs"),
            ("ext2", "ext2 has no journal"),
        ] {
            let e = mkfs_options_with_log(fs, "", log).unwrap_err().to_string();
            assert!(e.contains(says), "{e}");
        }
    }

    #[test]
    fn known_types() {
        assert_eq!(Support::of("xfs").unwrap().mkfs, Some("mkfs.xfs"));
        let e = Support::of("zfs").unwrap_err().to_string();
        assert!(e.starts_with("zfs: unknown filesystem type"), "{e}");
        assert!(Support::of("tmpfs").unwrap().mkfs.is_none());
    }
}
