//! The test bed: the machine, its devices and its tools, recorded once per study and shown by
//! `fslab info`, as the seeds' "Test bed" sections describe theirs.

use crate::device::BlockDevice;
use crate::tool::find_program;
use crate::{queue, LabError};
use fslab_engine::sysinfo::SystemInfo;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::fs::OpenOptions;
use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// BLKFLSBUF (linux/fs.h): write back and drop a block device's page cache.
const BLKFLSBUF: libc::c_ulong = 0x1261;
/// The size of each read of the raw read test, as `hdparm -t`.
const RAW_READ_BLOCK: usize = 2 << 20;

/// The tools whose versions a result depends on, and the flag that prints each one's version.
const TOOLS: &[(&str, &str)] = &[
    ("mkfs.ext4", "-V"),
    ("mkfs.xfs", "-V"),
    ("mkfs.btrfs", "--version"),
    ("mount", "--version"),
];

/// The machine a study ran on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestBed {
    /// Host, kernel, distribution (`os`: os-release's PRETTY_NAME), CPUs and memory.
    #[serde(flatten)]
    pub system: SystemInfo,
    pub devices: Vec<DeviceInfo>,
    /// A study's `[device] dir`: the directory and the filesystem mounted there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<DirTarget>,
    pub tools: Vec<ToolVersion>,
    pub fslab_version: String,
}

/// An existing directory a study runs in (`[device] dir`), on a filesystem it did not make.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DirTarget {
    pub dir: PathBuf,
    /// The mounted filesystem's type, source and options in force, from /proc/self/mountinfo.
    pub mounted_type: String,
    pub source: String,
    pub mount_point: PathBuf,
    pub options: String,
}

impl DirTarget {
    pub fn new(dir: &Path, mounted: &crate::filesystem::mountinfo::MountEntry) -> DirTarget {
        DirTarget {
            dir: dir.to_path_buf(),
            mounted_type: mounted.fs_type.clone(),
            source: mounted.source.clone(),
            mount_point: mounted.mount_point.clone(),
            options: mounted.effective_options(),
        }
    }
}

/// One device of the test bed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceInfo {
    pub path: PathBuf,
    /// The disk's model (`/sys/block/X/device/model`), its driver when it has none, or for a
    /// loop device `loop: BACKING_FILE`.
    pub model: String,
    pub size_bytes: u64,
    /// Whether the kernel takes it for a spinning disk; `None` when it does not say.
    pub rotational: Option<bool>,
    /// The schedulers its queue offers, and the active one.
    pub schedulers: Vec<String>,
    pub scheduler: String,
    pub read_ahead_kb: Option<u64>,
    /// Buffered sequential reads from the device, as `hdparm -t` measures them; `None` unless
    /// measured ([`raw_read_mib_s`]).
    pub raw_read_mib_s: Option<f64>,
    /// Why the device could not be described, if it could not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A tool's version line; `None` when it is not installed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolVersion {
    pub tool: String,
    pub version: Option<String>,
}

impl TestBed {
    /// Describes this machine and `devices`. Never fails: what cannot be found is left empty,
    /// and a device that cannot be described says why in its `error`.
    pub fn capture(devices: &[PathBuf]) -> TestBed {
        TestBed {
            system: SystemInfo::collect(),
            devices: devices.iter().map(|d| DeviceInfo::capture(d)).collect(),
            target: None,
            tools: TOOLS
                .iter()
                .map(|(tool, flag)| ToolVersion::capture(tool, flag))
                .collect(),
            fslab_version: env!("CARGO_PKG_VERSION").to_string(),
        }
    }

    /// The test bed as aligned `Key: value` lines, a block per device.
    pub fn render(&self) -> String {
        let s = &self.system;
        let mut lines = vec![
            ("Host".to_string(), s.hostname.clone()),
            ("CPU".to_string(), format!("{} x {}", s.cpus, or_unknown(&s.cpu_model))),
            (
                "Memory".to_string(),
                format!("{} ({} bytes)", human(s.memory_bytes), s.memory_bytes),
            ),
            ("Kernel".to_string(), s.kernel.clone()),
            ("Distribution".to_string(), or_unknown(&s.os).to_string()),
            ("fslab".to_string(), self.fslab_version.clone()),
        ];
        for t in &self.tools {
            lines.push((
                t.tool.clone(),
                t.version.clone().unwrap_or_else(|| "not installed".to_string()),
            ));
        }
        let mut out = String::from("Test bed:\n\n");
        out.push_str(&aligned(&lines, ""));
        if let Some(t) = &self.target {
            let _ = write!(out, "\nTarget directory {}:\n", t.dir.display());
            let lines = [
                (
                    "Mounted".to_string(),
                    format!("{} on {}", t.mounted_type, t.mount_point.display()),
                ),
                ("Source".to_string(), t.source.clone()),
                ("Options".to_string(), t.options.clone()),
            ];
            out.push_str(&aligned(&lines, "  "));
        }
        for d in &self.devices {
            let _ = write!(out, "\nDevice {}:\n", d.path.display());
            out.push_str(&aligned(&d.lines(), "  "));
        }
        out
    }
}

impl DeviceInfo {
    fn capture(path: &Path) -> DeviceInfo {
        let mut info = DeviceInfo {
            path: path.to_path_buf(),
            model: String::new(),
            size_bytes: 0,
            rotational: None,
            schedulers: Vec::new(),
            scheduler: String::new(),
            read_ahead_kb: None,
            raw_read_mib_s: None,
            error: None,
        };
        let dev = match BlockDevice::open(path) {
            Ok(dev) => dev,
            Err(e) => {
                info.error = Some(e.to_string());
                return info;
            }
        };
        let disk = dev.disk();
        info.model = model(&disk);
        info.size_bytes = dev.size_bytes();
        info.rotational = disk.attr("queue/rotational").map(|r| r == "1");
        if let Ok((names, active)) = queue::schedulers(path) {
            info.schedulers = names;
            info.scheduler = active;
        }
        info.read_ahead_kb = queue::read_ahead_kb(path).ok();
        info
    }

    fn lines(&self) -> Vec<(String, String)> {
        if let Some(e) = &self.error {
            return vec![("Error".to_string(), e.clone())];
        }
        let scheduler = self
            .schedulers
            .iter()
            .map(|s| {
                if *s == self.scheduler {
                    format!("[{s}]")
                } else {
                    s.clone()
                }
            })
            .collect::<Vec<_>>()
            .join(" ");
        let rotational = match self.rotational {
            Some(true) => "yes",
            Some(false) => "no",
            None => "unknown",
        };
        let mut lines = vec![
            ("Model".to_string(), or_unknown(&self.model).to_string()),
            (
                "Size".to_string(),
                format!("{} ({} bytes)", human(self.size_bytes), self.size_bytes),
            ),
            ("Rotational".to_string(), rotational.to_string()),
            ("Scheduler".to_string(), or_unknown(&scheduler).to_string()),
        ];
        if let Some(kb) = self.read_ahead_kb {
            lines.push(("Read-ahead".to_string(), format!("{kb} KiB")));
        }
        if let Some(r) = self.raw_read_mib_s {
            lines.push((
                "Raw read".to_string(),
                format!("{r:.2} MiB/s (buffered sequential reads, as hdparm -t)"),
            ));
        }
        lines
    }
}

impl ToolVersion {
    fn capture(tool: &str, flag: &str) -> ToolVersion {
        let version = find_program(tool).and_then(|exe| {
            let out = Command::new(exe)
                .arg(flag)
                .env("LC_ALL", "C")
                .stdin(Stdio::null())
                .output()
                .ok()?;
            // mke2fs prints its version on stderr.
            let text = [out.stdout, out.stderr].concat();
            let text = String::from_utf8_lossy(&text);
            text.lines().map(str::trim).find(|l| !l.is_empty()).map(str::to_string)
        });
        ToolVersion {
            tool: tool.to_string(),
            version,
        }
    }
}

/// A disk's model, its driver when it has none (virtio), or a loop device's backing file.
fn model(disk: &BlockDevice) -> String {
    if let Some(backing) = disk.attr("loop/backing_file") {
        return format!("loop: {backing}");
    }
    if let Some(model) = disk.attr("device/model").filter(|m| !m.is_empty()) {
        return model;
    }
    std::fs::read_link(disk.sys.join("device/driver"))
        .ok()
        .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default()
}

/// The whole disks of this machine (`/sys/block`), leaving out loop, ram and zram devices.
pub fn system_disks() -> Vec<PathBuf> {
    let mut names: Vec<String> = std::fs::read_dir("/sys/block")
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.retain(|n| !["loop", "ram", "zram"].iter().any(|p| n.starts_with(p)));
    names.sort();
    names.into_iter().map(|n| Path::new("/dev").join(n)).collect()
}

/// The device's sequential read speed in MiB/s (2^20 bytes), as `hdparm -t` measures it: its
/// page cache dropped (BLKFLSBUF, which needs root), then buffered reads of 2 MiB from the start
/// for `time` (or to its end if it is smaller).
pub fn raw_read_mib_s(dev: &Path, time: Duration) -> Result<f64, LabError> {
    let mut file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_CLOEXEC)
        .open(dev)
        .map_err(|e| LabError::io(format!("opening {}", dev.display()), e))?;
    // SAFETY: BLKFLSBUF takes no argument.
    if unsafe { libc::ioctl(file.as_raw_fd(), BLKFLSBUF as _, 0) } != 0 {
        let e = std::io::Error::last_os_error();
        return Err(LabError::io(
            format!("dropping the page cache of {} (BLKFLSBUF needs root)", dev.display()),
            e,
        ));
    }
    let mut buf = vec![0u8; RAW_READ_BLOCK];
    let mut bytes = 0u64;
    let t0 = Instant::now();
    while t0.elapsed() < time {
        match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => bytes += n as u64,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(LabError::io(format!("reading {}", dev.display()), e)),
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    Ok(bytes as f64 / (1u64 << 20) as f64 / secs)
}

fn or_unknown(s: &str) -> &str {
    if s.is_empty() {
        "unknown"
    } else {
        s
    }
}

/// A size in the largest binary unit (MiB, GiB or TiB) that leaves at least 1.
fn human(bytes: u64) -> String {
    let units = [("TiB", 1u64 << 40), ("GiB", 1 << 30)];
    let (unit, scale) = units.into_iter().find(|(_, s)| bytes >= *s).unwrap_or(("MiB", 1 << 20));
    format!("{:.1} {unit}", bytes as f64 / scale as f64)
}

/// `Key:   value` lines with the values aligned, each line prefixed with `indent`.
fn aligned(lines: &[(String, String)], indent: &str) -> String {
    let width = lines.iter().map(|(k, _)| k.len() + 1).max().unwrap_or(0);
    lines
        .iter()
        .map(|(k, v)| format!("{indent}{:<width$} {v}\n", format!("{k}:")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_lines() {
        let lines = vec![
            ("Host".to_string(), "vm".to_string()),
            ("Distribution".to_string(), "Debian".to_string()),
        ];
        assert_eq!(aligned(&lines, "  "), "  Host:         vm\n  Distribution: Debian\n");
    }

    #[test]
    fn render_shows_every_field() {
        let bed = TestBed {
            system: SystemInfo {
                hostname: "vm".into(),
                kernel: "6.1.0".into(),
                os: "Debian GNU/Linux 12 (bookworm)".into(),
                cpus: 4,
                cpu_model: "Intel(R) Xeon(TM) CPU 2.80GHz".into(),
                memory_bytes: 2 << 30,
            },
            devices: vec![DeviceInfo {
                path: "/dev/sdc".into(),
                model: "ST373207LC".into(),
                size_bytes: 68 << 30,
                rotational: Some(true),
                schedulers: vec!["none".into(), "mq-deadline".into()],
                scheduler: "mq-deadline".into(),
                read_ahead_kb: Some(128),
                raw_read_mib_s: Some(67.1),
                error: None,
            }],
            target: Some(DirTarget {
                dir: "/mnt/shared/fslab".into(),
                mounted_type: "nfs4".into(),
                source: "srv:/export".into(),
                mount_point: "/mnt/shared".into(),
                options: "rw,relatime,vers=4.2".into(),
            }),
            tools: vec![ToolVersion {
                tool: "mkfs.xfs".into(),
                version: None,
            }],
            fslab_version: "0.1.0".into(),
        };
        let text = bed.render();
        for want in [
            "CPU:          4 x Intel(R) Xeon(TM) CPU 2.80GHz\n",
            "Memory:       2.0 GiB (2147483648 bytes)\n",
            "Distribution: Debian GNU/Linux 12 (bookworm)\n",
            "mkfs.xfs:     not installed\n",
            "Device /dev/sdc:\n",
            "Target directory /mnt/shared/fslab:\n  Mounted: nfs4 on /mnt/shared\n  Source:  srv:/export\n  Options: rw,relatime,vers=4.2\n",
            "  Size:       68.0 GiB (73014444032 bytes)\n",
            "  Rotational: yes\n",
            "  Scheduler:  none [mq-deadline]\n",
            "  Raw read:   67.10 MiB/s",
        ] {
            assert!(text.contains(want), "missing {want:?} in\n{text}");
        }
        let json = serde_json::to_string(&bed).unwrap();
        assert_eq!(serde_json::from_str::<TestBed>(&json).unwrap(), bed);
    }
}
