//! I/O schedulers and read-ahead on loop devices and partitions (as root).

use crate::common::*;
use fslab_lab::device::LoopImage;
use fslab_lab::queue::{read_ahead_kb, schedulers, set_iosched, set_read_ahead_kb, set_scheduler};
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

#[test]
#[ignore = "system tier: root, loop devices"]
fn mq_deadline_tunables_are_written_and_read_back() {
    require_root();
    let dir = tempfile::tempdir().unwrap();
    let img = LoopImage::create(dir.path(), 64 * MIB).unwrap();
    let dev = img.device();
    let seed_004: std::collections::BTreeMap<String, String> = [
        ("front_merges", "0"),
        ("write_expire", "500"),
        ("writes_starved", "1"),
        ("read_expire", "500"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    // A new loop image starts on none, which has no tunables: nothing is written.
    assert_eq!(schedulers(dev).unwrap().1, "none");
    let r = match set_iosched(dev, &seed_004) {
        Err(LabError::Unsupported { reason, .. }) => reason,
        other => panic!("expected Unsupported, got {other:?}"),
    };
    assert!(
        r.contains("the scheduler none") && r.contains("no tunable front_merges"),
        "{r}"
    );

    assert_eq!(set_scheduler(dev, "mq-deadline").unwrap(), "mq-deadline");
    let sys = std::path::Path::new("/sys/block")
        .join(dev.file_name().unwrap())
        .join("queue/iosched");
    let read = |name: &str| std::fs::read_to_string(sys.join(name)).unwrap().trim().to_string();
    assert_eq!(read("front_merges"), "1", "mq-deadline's default");
    assert_eq!(set_iosched(dev, &seed_004).unwrap(), seed_004);
    for (name, value) in &seed_004 {
        assert_eq!(&read(name), value, "{name} in sysfs");
    }
    let mut typo = seed_004.clone();
    typo.insert("front_merge".into(), "0".into());
    let r = match set_iosched(dev, &typo) {
        Err(LabError::Unsupported { reason, .. }) => reason,
        other => panic!("expected Unsupported, got {other:?}"),
    };
    assert!(
        r.contains("no tunable front_merge ") && r.contains("front_merges"),
        "{r}"
    );
    // Loop devices keep their queue settings from one image to the next: leave the defaults.
    set_scheduler(dev, "none").unwrap();
}
