//! I/O schedulers and read-ahead on loop devices and partitions (as root).

use crate::common::*;
use fslab_lab::device::LoopImage;
use fslab_lab::queue::{read_ahead_kb, schedulers, set_read_ahead_kb, set_scheduler};
use fslab_lab::LabError;
use fslab_testkit::require_root;

fn unsupported(r: Result<String, LabError>) -> String {
    match r {
        Err(LabError::Unsupported { reason, .. }) => reason,
        other => panic!("expected Unsupported, got {other:?}"),
    }
}

#[test]
#[ignore = "system tier: root, loop devices"]
fn schedulers_set_and_read_back() {
    require_root();
    let dir = tempfile::tempdir().unwrap();
    let img = LoopImage::create(dir.path(), 64 * MIB).unwrap();
    let dev = img.device();
    let (offered, active) = schedulers(dev).unwrap();
    assert!(offered.contains(&"none".to_string()), "{offered:?}");
    assert!(offered.contains(&active), "{active} not in {offered:?}");

    for (asked, want) in [
        ("none", "none"),
        ("mq-deadline", "mq-deadline"),
        ("noop", "none"),
        ("deadline", "mq-deadline"),
    ] {
        assert_eq!(set_scheduler(dev, asked).unwrap(), want, "asked for {asked}");
        assert_eq!(schedulers(dev).unwrap().1, want);
    }
    if offered.contains(&"bfq".to_string()) {
        assert_eq!(set_scheduler(dev, "bfq").unwrap(), "bfq");
        assert_eq!(set_scheduler(dev, "none").unwrap(), "none");
        assert_eq!(set_scheduler(dev, "cfq").unwrap(), "bfq", "cfq maps to bfq");
    } else {
        let r = unsupported(set_scheduler(dev, "cfq"));
        assert!(r.contains("none"), "{r}");
    }

    let r = unsupported(set_scheduler(dev, "anticipatory"));
    assert!(r.contains("removed from Linux in 2.6.33"), "{r}");
    let before = schedulers(dev).unwrap().1;
    let r = unsupported(set_scheduler(dev, "elevator-of-doom"));
    assert!(
        r.starts_with(&format!("this kernel offers {}", offered.join(", "))),
        "{r}"
    );
    assert_eq!(
        schedulers(dev).unwrap().1,
        before,
        "a refused scheduler changed the active one"
    );
    // Loop devices keep their queue settings from one image to the next: leave the default.
    assert_eq!(set_scheduler(dev, &active).unwrap(), active);
}

#[test]
#[ignore = "system tier: root, loop devices"]
fn read_ahead_set_and_read_back() {
    require_root();
    let dir = tempfile::tempdir().unwrap();
    let img = LoopImage::create(dir.path(), 64 * MIB).unwrap();
    let before = read_ahead_kb(img.device()).unwrap();
    for kb in [0, 512, before] {
        assert_eq!(set_read_ahead_kb(img.device(), kb).unwrap(), kb);
        assert_eq!(read_ahead_kb(img.device()).unwrap(), kb);
    }
}

/// A partition has no queue of its own: its disk's is set and read.
#[test]
#[ignore = "system tier: root, loop devices"]
fn a_partition_uses_its_disks_queue() {
    require_root();
    let dir = tempfile::tempdir().unwrap();
    let disk = PartitionedDisk::create(dir.path(), 64 * MIB);
    let (active, ra) = (schedulers(&disk.disk).unwrap().1, read_ahead_kb(&disk.disk).unwrap());
    assert_eq!(set_scheduler(&disk.partition, "mq-deadline").unwrap(), "mq-deadline");
    assert_eq!(schedulers(&disk.disk).unwrap().1, "mq-deadline");
    assert_eq!(set_read_ahead_kb(&disk.partition, 256).unwrap(), 256);
    assert_eq!(read_ahead_kb(&disk.disk).unwrap(), 256);
    assert_eq!(set_scheduler(&disk.disk, "none").unwrap(), "none");
    assert_eq!(schedulers(&disk.partition).unwrap().1, "none");
    set_scheduler(&disk.disk, &active).unwrap();
    set_read_ahead_kb(&disk.disk, ra).unwrap();
}
