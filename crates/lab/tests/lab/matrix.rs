//! The matrix a study file expands to: the fill level and a filesystem's own schedulers as axes,
//! exclude rules on them, and what the quick form changes. Nothing here needs root.

use fslab_lab::matrix::{expand, fill_label, Form};
use fslab_lab::study::{Log, Study};
use std::path::Path;

/// A cell's filesystem name, which alone names its configuration when nothing else varies.
fn s_name(c: &fslab_lab::matrix::Cell) -> String {
    c.label.split(' ').next().unwrap_or_default().to_string()
}

fn study(text: &str) -> Study {
    Study::from_toml(text, "study.toml", Path::new("/nonexistent")).unwrap_or_else(|e| panic!("{e}"))
}

/// Seed 004's shape: dbench on the empty and the filled filesystem, IOzone on the filled one only.
const EMPTY_AND_FILLED: &str = r#"
name = "empty and filled"
fresh = "study"

[[filesystem]]
type = "ext2"

[[filesystem]]
type = "xfs"

[fill]
to = ["empty", "40%"]

[[workload]]
name = "iozone"
iozone = { threads = 2, size = "4m", record = "64k" }

[[workload]]
name = "dbench"
dbench = { clients = [1, 4], time = 60 }

[[exclude]]
workload = "iozone"
fill = "empty"

[quick]
fill_to = "10%"
"#;

#[test]
fn the_fill_level_is_an_axis_and_exclude_rules_name_it() {
    let s = study(EMPTY_AND_FILLED);
    assert_eq!(s.fill_to, [0.0, 0.4]);
    let cells = expand(&s, Form::Full);
    let keys: Vec<&str> = cells.iter().map(|c| c.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "ext2|fill=empty|dbench|clients=1|time=60",
            "ext2|fill=empty|dbench|clients=4|time=60",
            "ext2|fill=40%|iozone|record=64k|size=4m|threads=2",
            "ext2|fill=40%|dbench|clients=1|time=60",
            "ext2|fill=40%|dbench|clients=4|time=60",
            "xfs|fill=empty|dbench|clients=1|time=60",
            "xfs|fill=empty|dbench|clients=4|time=60",
            "xfs|fill=40%|iozone|record=64k|size=4m|threads=2",
            "xfs|fill=40%|dbench|clients=1|time=60",
            "xfs|fill=40%|dbench|clients=4|time=60",
        ]
    );
    let levels: Vec<Option<f64>> = cells.iter().map(|c| c.fill_to).collect();
    assert_eq!(&levels[..5], [None, None, Some(0.4), Some(0.4), Some(0.4)]);
    assert_eq!(cells[3].label, "ext2 40% full dbench clients=1");
    assert_eq!(cells[3].configuration, "ext2 40% full");
    assert_eq!(cells[3].axes, [("clients".to_string(), "1".to_string())]);
    assert_eq!(cells[0].label, "ext2 empty dbench clients=1");
    assert_eq!(cells[2].label, "ext2 40% full iozone", "nothing of IOzone's varies");
}

#[test]
fn the_quick_form_fills_to_its_own_level_and_keeps_the_rules_as_written() {
    let s = study(EMPTY_AND_FILLED);
    let cells = expand(&s, Form::Quick);
    assert_eq!(
        cells.len(),
        10,
        "the rule naming \"empty\" still drops IOzone on the empty fs"
    );
    let iozone: Vec<_> = cells.iter().filter(|c| c.key.contains("iozone")).collect();
    assert_eq!(iozone.len(), 2);
    assert!(iozone.iter().all(|c| c.fill_to == Some(0.1)), "{iozone:?}");
    assert!(iozone[0].key.starts_with("ext2|fill=10%|iozone"), "{}", iozone[0].key);
    assert_eq!(fill_label(Some(0.125)), "12.5%");
}

#[test]
fn one_fill_level_is_no_axis_and_without_fill_nothing_is_filled() {
    let one = study(&EMPTY_AND_FILLED.replace(r#"to = ["empty", "40%"]"#, r#"to = "40%""#));
    let cells = expand(&one, Form::Full);
    // The rule naming "empty" matches nothing now.
    assert_eq!(cells.len(), 6);
    assert!(cells.iter().all(|c| c.fill_to == Some(0.4) && !c.key.contains("fill=")));
    assert!(
        cells.iter().all(|c| c.configuration == s_name(c)),
        "one level names no configuration"
    );

    let none = study(
        r#"
name = "no fill"
[[filesystem]]
type = "ext4"
[[workload]]
name = "dbench"
dbench = { clients = 1 }
"#,
    );
    assert!(expand(&none, Form::Full).iter().all(|c| c.fill_to.is_none()));
}

#[test]
fn a_fill_level_is_checked() {
    for (to, says) in [
        (r#"["empty"]"#, "name at least one level to fill to"),
        (r#"["40%", "40%"]"#, "`40%` is named twice"),
        (r#""full""#, "is not a percentage"),
        (r#"["empty", "140%"]"#, "at most 100%"),
    ] {
        let text = EMPTY_AND_FILLED.replace(r#"["empty", "40%"]"#, to);
        let e = Study::from_toml(&text, "study.toml", Path::new("/nonexistent"))
            .expect_err(to)
            .to_string();
        assert!(e.starts_with("study.toml:12:"), "the line of `to`: {to}: {e}");
        assert!(e.contains(says), "{to}: {e}");
    }
}

/// Seed 001's sync-mount runs: each filesystem on the one scheduler that suited it best, with a
/// warm-up run first, beside the plain filesystems on every scheduler.
const OWN_SCHEDULERS: &str = r#"
name = "own schedulers"

[device]
scheduler = ["none", "mq-deadline", "bfq"]

[[filesystem]]
type = "xfs"

[[filesystem]]
name = "xfs-sync"
type = "xfs"
mount = "sync"
scheduler = "none"
warmup = true

[[workload]]
name = "dbench"
dbench = { clients = 5 }
"#;

#[test]
fn a_filesystem_may_name_its_own_schedulers_and_warm_up() {
    let s = study(OWN_SCHEDULERS);
    let cells = expand(&s, Form::Full);
    let keys: Vec<&str> = cells.iter().map(|c| c.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "xfs|sched=none|dbench|clients=5",
            "xfs|sched=mq-deadline|dbench|clients=5",
            "xfs|sched=bfq|dbench|clients=5",
            "xfs-sync|sched=none|dbench|clients=5",
        ]
    );
    // The scheduler varies across the study, so even the one-scheduler filesystem's cell names it.
    assert_eq!(cells[3].label, "xfs-sync none dbench");
    assert_eq!(cells[1].configuration, "xfs mq-deadline");
    assert_eq!(
        s.filesystems.iter().map(|f| f.warmup(&s)).collect::<Vec<_>>(),
        [false, true]
    );
}

#[test]
fn a_zero_timeout_is_refused_at_its_line() {
    for zero in [r#""0s""#, r#""0m""#] {
        let text = format!(
            "name = \"t\"\ntimeout = {zero}\n{}",
            &EMPTY_AND_FILLED[EMPTY_AND_FILLED.find("[[filesystem]]").unwrap()..]
        );
        let e = Study::from_toml(&text, "study.toml", Path::new("/nonexistent"))
            .expect_err(zero)
            .to_string();
        assert!(e.starts_with("study.toml:2:"), "the line of `timeout`: {e}");
        assert!(e.contains("every run as hung"), "{e}");
    }
    let ok = EMPTY_AND_FILLED.replace("fresh = \"study\"", "fresh = \"study\"\ntimeout = \"1s\"");
    assert_eq!(study(&ok).timeout, std::time::Duration::from_secs(1));
}

#[test]
fn iosched_tunables_are_read_as_one_value_each_and_need_a_scheduler() {
    let with = |device: &str| {
        format!(
            "name = \"t\"\n[device]\n{device}\n{}",
            &OWN_SCHEDULERS[OWN_SCHEDULERS.find("[[filesystem]]").unwrap()..]
        )
    };
    let s = study(&with(
        "scheduler = \"mq-deadline\"\niosched = { front_merges = 0, write_expire = 500, fifo_batch = \"16\" }",
    ));
    let got: Vec<(&str, &str)> = s.device.iosched.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    assert_eq!(
        got,
        [("fifo_batch", "16"), ("front_merges", "0"), ("write_expire", "500")]
    );
    // Not an axis: the cells are those of the schedulers alone.
    assert_eq!(expand(&s, Form::Full).len(), 2);

    for (device, line, says) in [
        ("iosched = { front_merges = 0 }", 3, "name one in [device]"),
        (
            "scheduler = \"none\"\niosched = { front_merges = [0, 1] }",
            4,
            "a number or a string",
        ),
        (
            "scheduler = \"none\"\niosched = { \"../x\" = 1 }",
            4,
            "not a tunable's name",
        ),
    ] {
        let e = Study::from_toml(&with(device), "study.toml", Path::new("/nonexistent"))
            .expect_err(device)
            .to_string();
        assert!(e.starts_with(&format!("study.toml:{line}:")), "{device}: {e}");
        assert!(e.contains(says), "{device}: {e}");
    }
}

#[test]
fn an_external_log_is_a_loop_image_or_another_block_device() {
    let with = |device: &str, log: &str| {
        format!("name = \"t\"\n[device]\n{device}\n[[filesystem]]\ntype = \"xfs\"\n{log}\n[[workload]]\nname = \"dbench\"\ndbench = {{ clients = 5 }}\n")
    };
    let s = study(&with("", "log = { size = \"64m\" }"));
    assert_eq!(s.filesystems[0].log, Some(Log::Loop { size: 64 << 20 }));
    let s = study(&with(
        "block = \"/dev/sdb1\"\ndestroy = \"/dev/sdb1\"",
        "log = { block = \"/dev/sda2\", destroy = \"/dev/sda2\" }",
    ));
    assert_eq!(
        s.filesystems[0].log,
        Some(Log::Block {
            path: "/dev/sda2".into(),
            destroy: Some("/dev/sda2".into())
        })
    );
    for (device, log, says) in [
        (
            "block = \"/dev/sdb1\"\ndestroy = \"/dev/sdb1\"",
            "log = { block = \"/dev/sdb1\", destroy = \"/dev/sdb1\" }",
            "the device the filesystem is made on",
        ),
        ("", "log = { size = \"64m\", block = \"/dev/sda2\" }", "not both"),
        (
            "",
            "log = { size = \"64m\", destroy = \"/dev/sda2\" }",
            "there is no `block`",
        ),
        ("", "log = { }", "give the log a `size`"),
        ("", "log = { size = \"4k\" }", "at least 1M"),
    ] {
        let text = with(device, log);
        let e = Study::from_toml(&text, "study.toml", Path::new("/nonexistent"))
            .expect_err(log)
            .to_string();
        assert!(e.contains(says), "{log}: {e}");
        let line = text.lines().position(|l| l.starts_with("log")).unwrap() + 1;
        assert!(e.starts_with(&format!("study.toml:{line}:")), "{log}: {e}");
    }
    let tmpfs = with("", "log = { size = \"64m\" }").replace("\"xfs\"", "\"tmpfs\"");
    let e = Study::from_toml(&tmpfs, "study.toml", Path::new("/nonexistent")).unwrap_err();
    assert!(e.to_string().contains("tmpfs has no device"), "{e}");
}

#[test]
fn a_workload_without_a_tool_is_told_every_tool_there_is() {
    for (workload, says) in [
        ("dbnech = { clients = 1 }", "unknown key `dbnech`: a workload is one of"),
        ("name = \"x\"", "the workload names no tool: give one of"),
    ] {
        let text = format!("name = \"s\"\n[[filesystem]]\ntype = \"ext4\"\n[[workload]]\n{workload}\n");
        let e = Study::from_toml(&text, "study.toml", Path::new("/nonexistent"))
            .expect_err(workload)
            .to_string();
        assert!(e.contains(says), "{workload}: {e}");
        for tool in fslab_classic::Tool::ALL {
            assert!(e.contains(tool.key()), "{workload}: {e} does not name {}", tool.key());
        }
    }
}

/// `[device] dir`: an existing directory on a filesystem already mounted. Its one
/// `[[filesystem]]` names what is mounted there; whatever would make, mount, tune or fill a
/// filesystem is refused at its line.
#[test]
fn a_dir_target_takes_one_filesystem_of_any_type_and_refuses_what_would_format_or_tune() {
    use fslab_lab::study::Target;
    let with = |device: &str, fs: &str, rest: &str| {
        format!(
            "name = \"t\"\n[device]\n{device}\n[[filesystem]]\ntype = \"nfs\"\n{fs}\n[[workload]]\nname = \"dbench\"\ndbench = {{ clients = 5 }}\n{rest}"
        )
    };
    let s = study(&with("dir = \"/mnt/shared/fslab\"", "", ""));
    assert_eq!(
        s.device.target,
        Target::Dir {
            path: "/mnt/shared/fslab".into()
        }
    );
    assert_eq!(
        s.filesystems[0].fs_type, "nfs",
        "any type: it names what is mounted, not what to make"
    );
    // Without dir, an unknown type is still refused.
    assert!(Study::from_toml(&with("", "", ""), "study.toml", Path::new("/x")).is_err());

    for (device, fs, rest, line, says) in [
        ("dir = \"fslab\"", "", "", 3, "`fslab` is relative"),
        (
            "dir = \"/m\"\nloop = { size = \"1G\" }",
            "",
            "",
            4,
            "`loop` cannot go with `dir`",
        ),
        (
            "dir = \"/m\"\nblock = \"/dev/sdz\"",
            "",
            "",
            4,
            "`block` cannot go with `dir`",
        ),
        (
            "dir = \"/m\"\nscheduler = \"none\"",
            "",
            "",
            4,
            "`scheduler` cannot go with `dir`",
        ),
        (
            "dir = \"/m\"\nread_ahead_kb = 0",
            "",
            "",
            4,
            "`read_ahead_kb` cannot go with `dir`",
        ),
        (
            "dir = \"/m\"\niosched = { fifo_batch = 1 }",
            "",
            "",
            4,
            "`iosched` cannot go with `dir`",
        ),
        (
            "dir = \"/m\"",
            "mkfs = \"-b 4096\"",
            "",
            6,
            "`mkfs` acts on a filesystem the lab makes",
        ),
        (
            "dir = \"/m\"",
            "mount = \"noatime\"",
            "",
            6,
            "`mount` acts on a filesystem the lab makes",
        ),
        ("dir = \"/m\"", "fsck = true", "", 6, "`fsck` acts on"),
        ("dir = \"/m\"", "log = { size = \"64m\" }", "", 6, "`log` acts on"),
        ("dir = \"/m\"", "scheduler = \"none\"", "", 6, "`scheduler` acts on"),
        (
            "dir = \"/m\"",
            "",
            "[fill]\nto = \"40%\"",
            10,
            "the lab fills nothing it was not given",
        ),
        ("dir = \"/m\"", "", "[age]\nto = \"40%\"", 10, "[age]"),
        (
            "dir = \"/m\"",
            "[[filesystem]]\ntype = \"tmpfs\"",
            "",
            6,
            "give one [[filesystem]]",
        ),
    ] {
        let text = with(device, fs, rest);
        let e = Study::from_toml(&text, "study.toml", Path::new("/x"))
            .expect_err(&text)
            .to_string();
        assert!(e.starts_with(&format!("study.toml:{line}:")), "{text}\n→ {e}");
        assert!(e.contains(says), "{text}\n→ {e}");
    }
}
