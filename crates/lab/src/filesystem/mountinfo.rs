//! The mount table as the kernel reports it to this process (`/proc/self/mountinfo`).

use std::path::PathBuf;

/// One line of `/proc/self/mountinfo`.
#[derive(Debug, Clone, PartialEq)]
pub struct MountEntry {
    /// `major:minor` of the filesystem (an anonymous `0:N` for tmpfs and btrfs).
    pub number: String,
    pub mount_point: PathBuf,
    /// Per-mount options (`rw,noatime`).
    pub mount_options: String,
    pub fs_type: String,
    /// What was mounted (`/dev/loop3`, `tmpfs`).
    pub source: String,
    /// The filesystem's own options (`rw,data=writeback`).
    pub super_options: String,
}

impl MountEntry {
    /// The options in force: the mount's then the filesystem's, each once.
    pub fn effective_options(&self) -> String {
        let mut seen: Vec<&str> = Vec::new();
        for opt in self.mount_options.split(',').chain(self.super_options.split(',')) {
            if !opt.is_empty() && !seen.contains(&opt) {
                seen.push(opt);
            }
        }
        seen.join(",")
    }
}

/// The current mount table, in mount order.
pub fn read() -> std::io::Result<Vec<MountEntry>> {
    Ok(parse(&std::fs::read_to_string("/proc/self/mountinfo")?))
}

/// The entry of `mounts` (in mount order) holding the absolute, canonical `path`: the deepest
/// mount point above it, the last mounted where several are stacked on one point.
pub fn containing<'a>(mounts: &'a [MountEntry], path: &std::path::Path) -> Option<&'a MountEntry> {
    mounts
        .iter()
        .enumerate()
        .filter(|(_, m)| path.starts_with(&m.mount_point))
        .max_by_key(|(i, m)| (m.mount_point.components().count(), *i))
        .map(|(_, m)| m)
}

/// Parses mountinfo text; malformed lines (none in practice) are skipped.
pub fn parse(text: &str) -> Vec<MountEntry> {
    text.lines().filter_map(parse_line).collect()
}

/// `36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue`: id, parent,
/// major:minor, root, mount point, mount options, optional fields up to `-`, type, source, super
/// options.
fn parse_line(line: &str) -> Option<MountEntry> {
    let (head, tail) = line.split_once(" - ")?;
    let head: Vec<&str> = head.split(' ').collect();
    let mut tail = tail.split(' ');
    Some(MountEntry {
        number: head.get(2)?.to_string(),
        mount_point: PathBuf::from(unescape(head.get(4)?)),
        mount_options: head.get(5)?.to_string(),
        fs_type: tail.next()?.to_string(),
        source: unescape(tail.next()?),
        super_options: tail.next().unwrap_or_default().to_string(),
    })
}

/// Undoes the kernel's octal escapes of space, tab, newline and backslash (`\040`).
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes
            .get(i + 1..i + 4)
            .filter(|d| bytes[i] == b'\\' && d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match octal {
            Some(d) => {
                out.push(d.iter().fold(0u8, |acc, c| acc.wrapping_mul(8).wrapping_add(c - b'0')));
                i += 4;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines() {
        let text = "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard\n\
                    36 35 0:41 / /mnt/my\\040dir rw,noatime shared:1 master:2 - btrfs /dev/loop3 rw,ssd,space_cache=v2\n\
                    garbage\n";
        let m = parse(text);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].number, "254:0");
        assert_eq!(m[0].source, "/dev/vda");
        assert_eq!(m[1].mount_point, PathBuf::from("/mnt/my dir"));
        assert_eq!(m[1].fs_type, "btrfs");
        assert_eq!(m[1].source, "/dev/loop3");
        assert_eq!(m[1].effective_options(), "rw,noatime,ssd,space_cache=v2");
    }

    #[test]
    fn the_mount_holding_a_path_is_the_deepest_and_the_last_stacked() {
        let m = parse(
            "1 0 254:0 / / rw - ext4 /dev/vda rw\n\
             2 1 0:50 / /mnt/shared rw - nfs4 srv:/export rw\n\
             3 1 0:51 / /mnt/sharedx rw - tmpfs tmpfs rw\n\
             4 2 0:52 / /mnt/shared rw - tmpfs tmpfs rw\n",
        );
        let at = |p: &str| containing(&m, std::path::Path::new(p)).map(|e| e.fs_type.as_str());
        assert_eq!(
            at("/mnt/shared/fslab/x"),
            Some("tmpfs"),
            "the later mount on the same point hides the first"
        );
        assert_eq!(
            at("/mnt/sharedy"),
            Some("ext4"),
            "a prefix of the name is not a parent directory"
        );
        assert_eq!(at("/mnt/sharedx/a"), Some("tmpfs"));
        assert_eq!(at("/"), Some("ext4"));
        assert_eq!(containing(&m[1..2], std::path::Path::new("/home")), None);
    }

    #[test]
    fn escapes() {
        assert_eq!(unescape(r"a\040b\011c\134d\\"), "a b\tc\\d\\\\");
        assert_eq!(unescape(r"\04"), r"\04");
    }
}
