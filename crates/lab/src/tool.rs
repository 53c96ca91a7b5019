//! Running the external programs the lab needs (mkfs, fsck, wipefs...) and reading the kernel
//! log, so that a failure carries what the tool printed and what the kernel said about it.

use crate::LabError;
use std::fs::File;
use std::io::{ErrorKind, Read, Seek, SeekFrom};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Where the programs the lab runs live when PATH does not say (a non-root PATH often lacks the
/// sbin directories that hold mkfs and fsck).
const SYSTEM_DIRS: &[&str] = &[
    "/usr/local/sbin",
    "/usr/local/bin",
    "/usr/sbin",
    "/usr/bin",
    "/sbin",
    "/bin",
];

/// The Debian package that provides each program the lab may run.
const PACKAGES: &[(&str, &str)] = &[
    ("mkfs.ext2", "e2fsprogs"),
    ("mkfs.ext3", "e2fsprogs"),
    ("mkfs.ext4", "e2fsprogs"),
    ("fsck.ext4", "e2fsprogs"),
    ("e2fsck", "e2fsprogs"),
    ("mkfs.xfs", "xfsprogs"),
    ("xfs_repair", "xfsprogs"),
    ("mkfs.btrfs", "btrfs-progs"),
    ("btrfs", "btrfs-progs"),
    ("mkfs.jfs", "jfsutils"),
    ("fsck.jfs", "jfsutils"),
    ("mkfs.reiserfs", "reiserfsprogs"),
    ("mkfs.nilfs2", "nilfs-tools"),
    ("mkfs.f2fs", "f2fs-tools"),
    ("fsck.f2fs", "f2fs-tools"),
    ("fsfreeze", "util-linux"),
    ("wipefs", "util-linux"),
    ("losetup", "mount"),
    ("partx", "util-linux"),
    ("mkswap", "util-linux"),
    ("mount", "mount"),
    ("umount", "mount"),
    ("unshare", "util-linux"),
    ("modprobe", "kmod"),
];

/// The Debian package that provides `program`, if fslab knows it.
pub fn package_of(program: &str) -> Option<&'static str> {
    PACKAGES.iter().find(|(p, _)| *p == program).map(|(_, pkg)| *pkg)
}

/// The error for a program that is not installed, with the command that installs it.
pub fn missing(program: &str) -> LabError {
    LabError::Missing {
        tool: program.to_string(),
        remedy: match package_of(program) {
            Some(pkg) => format!("apt-get install {pkg}"),
            None => format!("install the package that provides {program}"),
        },
    }
}

/// The full path of `program`: searched in PATH, then in the system directories.
pub fn find_program(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(SYSTEM_DIRS.iter().map(PathBuf::from))
        .map(|dir| dir.join(program))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Runs `program args...` with no input and the C locale (so its messages are the English ones
/// users search for) and returns its standard output followed by its standard error.
///
/// A program that is not installed is [`LabError::Missing`] with the package to install; one that
/// exits non-zero is [`LabError::Tool`] with its output and the last line the kernel logged while
/// it ran (mkfs and mount failures are often explained only there).
pub fn run_tool(program: &str, args: &[&str]) -> Result<String, LabError> {
    let exe = find_program(program).ok_or_else(|| missing(program))?;
    let kmsg = KernelLog::mark();
    let out = Command::new(&exe)
        .args(args)
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| LabError::io(format!("running {}", exe.display()), e))?;
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    if out.status.success() {
        return Ok(text);
    }
    Err(LabError::Tool {
        command: command_line(program, args),
        status: out.status.to_string(),
        output: text.trim_end().to_string(),
        kernel: kmsg.last_line_about(device_names(args)),
    })
}

/// `program args...` as a user would type it.
pub(crate) fn command_line(program: &str, args: &[&str]) -> String {
    std::iter::once(program)
        .chain(args.iter().copied())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The kernel names (`loop3`) of the devices among a command's arguments: the kernel names a
/// device that way in its messages.
pub(crate) fn device_names<'a>(args: &'a [&'a str]) -> Vec<&'a str> {
    args.iter()
        .filter_map(|a| a.strip_prefix("/dev/"))
        .map(|name| name.rsplit('/').next().unwrap_or(name))
        .collect()
}

/// The last line of the kernel log (`/dev/kmsg`, or `dmesg` when that cannot be read).
pub fn last_kernel_line() -> Option<String> {
    match KernelLog::open() {
        Some(mut kmsg) => kmsg.new_lines().pop(),
        None => last_dmesg_line(),
    }
}

fn last_dmesg_line() -> Option<String> {
    let exe = find_program("dmesg")?;
    let out = Command::new(exe)
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .map(|l| l.trim().to_string())
}

/// A position in the kernel log: what the kernel logs after it can be read back, so that a
/// failure is explained by the kernel's message about it rather than an older one.
pub struct KernelLog {
    /// `/dev/kmsg` opened non-blocking at the end of the log; `None` when it cannot be read
    /// (not root, or a container without it): then `dmesg` is the fallback.
    kmsg: Option<File>,
}

impl KernelLog {
    /// Marks the current end of the kernel log.
    pub fn mark() -> KernelLog {
        let kmsg = KernelLog::open().and_then(|mut k| {
            let mut file = k.kmsg.take()?;
            file.seek(SeekFrom::End(0)).ok()?;
            Some(file)
        });
        KernelLog { kmsg }
    }

    /// `/dev/kmsg` from the oldest record it still holds.
    fn open() -> Option<KernelLog> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open("/dev/kmsg")
            .ok()?;
        Some(KernelLog { kmsg: Some(file) })
    }

    /// The messages logged since the mark, oldest first (one line each).
    fn new_lines(&mut self) -> Vec<String> {
        let Some(file) = self.kmsg.as_mut() else {
            return Vec::new();
        };
        // One read returns one record; a record is at most about 1 KiB of text plus its
        // dictionary, and a buffer too small for a record makes the read fail with EINVAL.
        let mut buf = vec![0u8; 16 * 1024];
        let mut lines = Vec::new();
        loop {
            match file.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => lines.extend(parse_kmsg_record(&buf[..n])),
                // EPIPE: records were overwritten while we read; the next read goes on.
                Err(e) if e.raw_os_error() == Some(libc::EPIPE) => continue,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => break,
            }
        }
        lines
    }

    /// The last message logged since the mark, preferring one that names any of `devices`
    /// (`loop3`): other work on the machine logs too. Without `/dev/kmsg`, the last `dmesg` line.
    pub fn last_line_about(mut self, devices: Vec<&str>) -> Option<String> {
        if self.kmsg.is_none() {
            return last_dmesg_line();
        }
        let lines = self.new_lines();
        let about = lines.iter().rev().find(|l| devices.iter().any(|d| names_device(l, d)));
        about.or(lines.last()).cloned()
    }
}

/// Whether a kernel message names the device `name` (`loop3` but not `loop31`).
fn names_device(line: &str, name: &str) -> bool {
    line.match_indices(name).any(|(i, _)| {
        let after = line[i + name.len()..].chars().next();
        !after.is_some_and(|c| c.is_ascii_alphanumeric())
    })
}

/// The message of one `/dev/kmsg` record: `prio,seq,usec,flags;message\n KEY=value\n...`.
fn parse_kmsg_record(record: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(record);
    let (_, rest) = text.split_once(';')?;
    let message = rest.lines().next()?.trim();
    (!message.is_empty()).then(|| message.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kmsg_records() {
        assert_eq!(
            parse_kmsg_record(b"3,1234,9223301883,-;EXT4-fs (loop0): Unrecognized mount option\n SUBSYSTEM=block\n")
                .as_deref(),
            Some("EXT4-fs (loop0): Unrecognized mount option")
        );
        assert_eq!(parse_kmsg_record(b"no separator"), None);
        assert_eq!(parse_kmsg_record(b"6,1,2,-;\n"), None);
    }

    #[test]
    fn device_names_in_messages() {
        assert!(names_device("EXT4-fs (loop3): bad", "loop3"));
        assert!(!names_device("EXT4-fs (loop31): bad", "loop3"));
        assert!(names_device("loop3: detected capacity change", "loop3"));
        assert_eq!(
            device_names(&["-F", "/dev/loop3", "/dev/mapper/vg-lv"]),
            vec!["loop3", "vg-lv"]
        );
    }

    #[test]
    fn packages_and_missing_tools() {
        assert_eq!(package_of("mkfs.xfs"), Some("xfsprogs"));
        assert_eq!(package_of("e2fsck"), Some("e2fsprogs"));
        let e = missing("mkfs.nilfs2").to_string();
        assert_eq!(e, "mkfs.nilfs2 is not installed: apt-get install nilfs-tools");
        match run_tool("fslab-no-such-tool", &[]) {
            Err(LabError::Missing { tool, .. }) => assert_eq!(tool, "fslab-no-such-tool"),
            other => panic!("expected Missing, got {other:?}"),
        }
    }

    #[test]
    fn tool_output_and_failure() {
        let out = run_tool("sh", &["-c", "echo out; echo err >&2"]).unwrap();
        assert_eq!(out, "out\nerr\n");
        match run_tool("sh", &["-c", "echo broken >&2; exit 3"]) {
            Err(LabError::Tool {
                command,
                status,
                output,
                ..
            }) => {
                assert_eq!(command, "sh -c echo broken >&2; exit 3");
                assert!(status.contains('3'), "{status}");
                assert_eq!(output, "broken");
            }
            other => panic!("expected Tool, got {other:?}"),
        }
    }
}
