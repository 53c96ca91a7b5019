//! A block device's request queue: its I/O scheduler and read-ahead. A partition has no queue of
//! its own, so these act on its disk's.

use crate::device::BlockDevice;
use crate::LabError;
use std::collections::BTreeMap;
use std::path::Path;

/// The schedulers the seeds name that Linux has since renamed or removed, and what they became.
const OLD_NAMES: &[(&str, &str)] = &[("noop", "none"), ("deadline", "mq-deadline"), ("cfq", "bfq")];

/// The scheduler names `dev`'s queue offers and the active one.
pub fn schedulers(dev: &Path) -> Result<(Vec<String>, String), LabError> {
    let text = read_queue(dev, "scheduler")?;
    Ok(parse_schedulers(&text))
}

/// `none [mq-deadline] kyber bfq` → the names and the bracketed active one.
fn parse_schedulers(text: &str) -> (Vec<String>, String) {
    let mut active = String::new();
    let names = text
        .split_whitespace()
        .map(|w| match w.strip_prefix('[').and_then(|w| w.strip_suffix(']')) {
            Some(name) => {
                active = name.to_string();
                name.to_string()
            }
            None => w.to_string(),
        })
        .collect();
    (names, active)
}

/// The name this kernel uses for `name`: the seeds' old single-queue schedulers are mapped to
/// their multi-queue successors; anticipatory has none.
pub fn modern_name(name: &str) -> Result<&str, LabError> {
    if name == "anticipatory" {
        return Err(LabError::Unsupported {
            what: "scheduler anticipatory".to_string(),
            reason: "removed from Linux in 2.6.33 (mq-deadline or bfq are the nearest)".to_string(),
        });
    }
    Ok(OLD_NAMES
        .iter()
        .find(|(old, _)| *old == name)
        .map_or(name, |(_, new)| *new))
}

/// Makes `name` (or its modern name) `dev`'s scheduler and returns the active one read back.
/// A scheduler this kernel lacks is Unsupported, listing the ones it offers.
pub fn set_scheduler(dev: &Path, name: &str) -> Result<String, LabError> {
    let name = modern_name(name)?;
    // Writing a name not listed still works when its module can be loaded (bfq is often a
    // module), so the list is consulted only when the write fails.
    if let Err(e) = write_queue(dev, "scheduler", name) {
        let (offered, _) = schedulers(dev)?;
        if offered.iter().any(|s| s == name) {
            return Err(e);
        }
        return Err(LabError::Unsupported {
            what: format!("scheduler {name}"),
            reason: format!("this kernel offers {} for {}", offered.join(", "), dev.display()),
        });
    }
    Ok(schedulers(dev)?.1)
}

/// Writes the scheduler's tunables (`queue/iosched/NAME`) of `dev`'s queue and returns them as
/// read back. A tunable the active scheduler lacks is Unsupported, naming those it has; nothing
/// is written then.
pub fn set_iosched(dev: &Path, tunables: &BTreeMap<String, String>) -> Result<BTreeMap<String, String>, LabError> {
    let dir = queue_file(dev, "iosched")?;
    let (_, active) = schedulers(dev)?;
    let mut offered: Vec<String> = std::fs::read_dir(&dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    offered.sort();
    if let Some(lacking) = tunables.keys().find(|k| !offered.contains(k)) {
        let has = if offered.is_empty() {
            "none".to_string()
        } else {
            offered.join(", ")
        };
        return Err(LabError::Unsupported {
            what: format!("iosched tunable {lacking}"),
            reason: format!(
                "the scheduler {active} of {} has no tunable {lacking} (its tunables: {has})",
                dev.display()
            ),
        });
    }
    let mut back = BTreeMap::new();
    for (name, value) in tunables {
        let file = format!("iosched/{name}");
        write_queue(dev, &file, value)?;
        back.insert(name.clone(), read_queue(dev, &file)?.trim().to_string());
    }
    Ok(back)
}

/// Sets `dev`'s read-ahead to `kb` KiB and returns the value read back.
pub fn set_read_ahead_kb(dev: &Path, kb: u64) -> Result<u64, LabError> {
    write_queue(dev, "read_ahead_kb", &kb.to_string())?;
    read_ahead_kb(dev)
}

/// `dev`'s read-ahead in KiB.
pub fn read_ahead_kb(dev: &Path) -> Result<u64, LabError> {
    let text = read_queue(dev, "read_ahead_kb")?;
    text.trim().parse().map_err(|_| {
        LabError::io(
            format!("read_ahead_kb of {}: `{}`", dev.display(), text.trim()),
            std::io::ErrorKind::InvalidData.into(),
        )
    })
}

/// `queue/FILE` of `dev`'s disk in sysfs.
fn queue_file(dev: &Path, file: &str) -> Result<std::path::PathBuf, LabError> {
    Ok(BlockDevice::open(dev)?.disk().sys.join("queue").join(file))
}

fn read_queue(dev: &Path, file: &str) -> Result<String, LabError> {
    let path = queue_file(dev, file)?;
    std::fs::read_to_string(&path).map_err(|e| LabError::io(format!("reading {}", path.display()), e))
}

fn write_queue(dev: &Path, file: &str, value: &str) -> Result<(), LabError> {
    let path = queue_file(dev, file)?;
    std::fs::write(&path, value).map_err(|e| LabError::io(format!("writing `{value}` to {}", path.display()), e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scheduler_lists() {
        let (names, active) = parse_schedulers("none [mq-deadline] kyber bfq\n");
        assert_eq!(names, vec!["none", "mq-deadline", "kyber", "bfq"]);
        assert_eq!(active, "mq-deadline");
        assert_eq!(
            parse_schedulers("[none] \n"),
            (vec!["none".to_string()], "none".to_string())
        );
    }

    #[test]
    fn old_names() {
        assert_eq!(modern_name("noop").unwrap(), "none");
        assert_eq!(modern_name("deadline").unwrap(), "mq-deadline");
        assert_eq!(modern_name("cfq").unwrap(), "bfq");
        assert_eq!(modern_name("kyber").unwrap(), "kyber");
        let e = modern_name("anticipatory").unwrap_err().to_string();
        assert!(e.contains("removed from Linux in 2.6.33"), "{e}");
    }
}
