//! Ageing a filesystem: a 64 MiB tmpfs (root: the system tier) kept near its target while its data is
//! deleted and rewritten; specs and roots that cannot work are refused.

use crate::small_fs::{totals, walk};
use fslab_engine::workload::SizeDist;
use fslab_engine::Bytes;
use fslab_lab::age::{age, AgeSpec};
use fslab_lab::fill::overshoot_bound;
use fslab_testkit::Tmpfs;

#[test]
#[ignore = "system tier: root, to mount a tmpfs"]
fn ageing_keeps_a_tmpfs_near_its_target_while_it_rewrites_churn_times_the_data() {
    let fs = Tmpfs::mount("64m");
    let (size, _) = fs.space();
    let spec = AgeSpec {
        to: 0.5,
        churn: 1.5,
        seed: 3,
        sizes: SizeDist::Range {
            min: Bytes(4 << 10),
            max: Bytes(128 << 10),
        },
        delete: 0.05,
    };
    let report = age(fs.path(), &spec).expect("age");

    // Over the target by at most a statvfs interval and a file; below it by about the share
    // deleted each round (5% of the files, 2.5 points on average; which files is random).
    let over = (overshoot_bound(size, 1) + (128 << 10)) as f64 / size as f64;
    assert!(
        report.util_after >= 0.5 && report.util_after <= 0.5 + over,
        "{report:?}"
    );
    assert!(report.util_high <= 0.5 + over, "{report:?}");
    assert!(report.util_low >= 0.5 - 0.05 && report.util_low < 0.5, "{report:?}");
    let (_, used) = fs.space();
    assert_eq!(report.util_after, used as f64 / size as f64);

    // The first fill wrote about half the filesystem; then churn × that was deleted and
    // rewritten, over several rounds.
    let half = size as f64 / 2.0;
    assert!(
        (report.initial_bytes as f64) > half * 0.9 && (report.initial_bytes as f64) < half * 1.1,
        "{report:?}"
    );
    assert!(
        report.bytes_rewritten as f64 >= 1.5 * report.initial_bytes as f64,
        "{report:?}"
    );
    assert_eq!(report.bytes_written, report.initial_bytes + report.bytes_rewritten);
    assert!(report.rounds >= 10, "about 1.5 / 5% rounds: {report:?}");
    assert!(report.bytes_deleted > report.initial_bytes, "{report:?}");

    // What the report says is what is on disk, beneath age/ only.
    let top: Vec<_> = std::fs::read_dir(fs.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(top, vec!["age"]);
    let (dirs, files, bytes) = totals(&walk(&fs.path().join("age")));
    assert_eq!(files, report.files);
    assert_eq!(files, report.files_created - report.files_deleted);
    assert_eq!(bytes, report.bytes_written - report.bytes_deleted);
    assert_eq!(dirs, report.dirs);
    assert!(report.files_deleted > 0 && report.files_created > report.files);
}

#[test]
fn specs_and_roots_that_cannot_be_aged_are_refused() {
    let place = tempfile::tempdir().unwrap();
    let ok = AgeSpec {
        to: 0.0001,
        churn: 0.0,
        ..AgeSpec::default()
    };
    let refused = |spec: &AgeSpec| age(place.path(), spec).expect_err("refused").to_string();
    assert!(refused(&AgeSpec { to: 1.0, ..ok.clone() }).contains("below 100%"));
    assert!(refused(&AgeSpec {
        delete: 0.0,
        ..ok.clone()
    })
    .contains("`delete`"));
    assert!(refused(&AgeSpec {
        churn: -1.0,
        ..ok.clone()
    })
    .contains("`churn`"));
    let zero = AgeSpec {
        sizes: SizeDist::Fixed(Bytes(0)),
        ..ok.clone()
    };
    assert!(refused(&zero).contains("`sizes`"));
    assert!(!place.path().join("age").exists(), "a refused spec makes nothing");

    let file = place.path().join("file");
    std::fs::write(&file, b"").unwrap();
    let err = age(&file, &ok).expect_err("refused").to_string();
    assert!(err.contains("not a directory"), "{err}");

    // The host filesystem is fuller than 0.01%: the first fill writes nothing, and nothing is
    // churned; a second ageing of the same root is refused.
    let report = age(place.path(), &ok).expect("age");
    assert_eq!((report.files, report.bytes_written, report.rounds), (0, 0, 0));
    let err = age(place.path(), &ok).expect_err("refused").to_string();
    assert!(err.contains("exists already"), "{err}");
}
