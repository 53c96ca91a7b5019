//! Labelled mix entries (`[[group.op]] label = ...`) are counted apart from the other entries of
//! their operation type, and a workload of several groups reports each group's operations.

use crate::common::{run_ok, workload};
use fslab_engine::result::OpResult;
use fslab_engine::workload::OpKind;
use fslab_engine::Workload;
use fslab_testkit::tempdir;

/// (type, label, count) of each entry of `ops`, in order.
fn entries(ops: &[OpResult]) -> Vec<(OpKind, Option<&str>, u64)> {
    ops.iter().map(|o| (o.op, o.label.as_deref(), o.count)).collect()
}

/// One group on eight 64 KiB files, stopping after `ops` operations, with `mix` as its
/// `[[group.op]]` tables.
fn one_group(ops: u64, mix: &str) -> Workload {
    workload(&format!(
        r#"
name = "labels"
seed = 5
stop = {{ ops = {ops} }}

[[fileset]]
name = "fs"
files = 8
size = "64k"

[[group]]
name = "g"
fileset = "fs"
threads = 2
{mix}
"#
    ))
}

#[test]
fn two_labelled_write_entries_are_counted_apart() {
    const OPS: u64 = 300;
    let dir = tempdir();
    let w = one_group(
        OPS,
        r#"
[[group.op]]
op = "write"
label = "write_fsync"
sync = "fsync"
size = "4k"

[[group.op]]
op = "write"
label = "write"
weight = 2
size = "8k"
"#,
    );
    let r = run_ok(&w, dir.path());
    // In the order the labels appear, not alphabetically.
    let labels: Vec<_> = r.ops.iter().map(|o| (o.op, o.label.as_deref())).collect();
    assert_eq!(
        labels,
        vec![(OpKind::Write, Some("write_fsync")), (OpKind::Write, Some("write"))]
    );
    let (synced, plain) = (&r.ops[0], &r.ops[1]);
    assert!(synced.count > 0 && plain.count > 0, "{:?}", entries(&r.ops));
    assert_eq!(synced.count + plain.count, OPS, "their counts add up to the run's");
    assert_eq!(r.totals.ops, OPS);
    // Each entry counts its own bytes and transactions (one per 4 KiB block).
    assert_eq!(synced.bytes, 4096 * synced.count);
    assert_eq!(plain.bytes, 8192 * plain.count);
    assert_eq!(
        (synced.transactions, plain.transactions),
        (synced.count, 2 * plain.count)
    );
    assert_eq!(r.totals.bytes_written, synced.bytes + plain.bytes);
    assert!(r.groups.is_empty(), "one group: its figures are `ops`");
}

#[test]
fn unlabelled_entries_come_first_then_labels_in_order_of_appearance() {
    let dir = tempdir();
    let w = one_group(
        400,
        r#"
[[group.op]]
op = "write"
label = "late"
size = "4k"

[[group.op]]
op = "read"
label = "r1"
size = "4k"

[[group.op]]
op = "write"
size = "4k"

[[group.op]]
op = "write"
label = "early"
size = "4k"

[[group.op]]
op = "read"
size = "4k"

[[group.op]]
op = "write"
label = "late"
size = "4k"
"#,
    );
    let r = run_ok(&w, dir.path());
    let order: Vec<_> = r.ops.iter().map(|o| (o.op, o.label.as_deref())).collect();
    assert_eq!(
        order,
        vec![
            (OpKind::Read, None),
            (OpKind::Read, Some("r1")),
            (OpKind::Write, None),
            (OpKind::Write, Some("late")),
            (OpKind::Write, Some("early")),
        ],
        "OpKind::ALL order, unlabelled first, then labels as they first appear; one entry per label"
    );
    assert_eq!(r.ops.iter().map(|o| o.count).sum::<u64>(), 400);
    // `late` has two entries of weight 1 against `early`'s one: it is counted once, with both.
    let late = r.ops[3].count;
    let early = r.ops[4].count;
    assert!(late > early, "late {late} vs early {early}");
}

#[test]
fn without_labels_one_entry_per_type_as_before() {
    let dir = tempdir();
    let w = one_group(
        200,
        r#"
[[group.op]]
op = "write"
size = "4k"

[[group.op]]
op = "write"
sync = "fsync"
size = "4k"

[[group.op]]
op = "stat"
"#,
    );
    let r = run_ok(&w, dir.path());
    let e = entries(&r.ops);
    assert_eq!(
        e.iter().map(|x| (x.0, x.1)).collect::<Vec<_>>(),
        vec![(OpKind::Write, None), (OpKind::Stat, None)]
    );
    assert_eq!(e[0].2 + e[1].2, 200);
    let json = serde_json::to_value(&r.ops[0]).unwrap();
    assert!(json.get("label").is_none(), "no label key without a label: {json}");
}

#[test]
fn several_groups_each_report_their_own_operations() {
    const OPS: u64 = 600;
    let dir = tempdir();
    let w = workload(&format!(
        r#"
name = "groups"
seed = 9
stop = {{ ops = {OPS} }}

[[fileset]]
name = "fs"
files = 8
size = "64k"

[[group]]
name = "readers"
fileset = "fs"
threads = 2

[[group.op]]
op = "read"
size = "4k"

[[group.op]]
op = "stat"

[[group]]
name = "writers"
fileset = "fs"

[[group.op]]
op = "write"
label = "write"
size = "4k"

[[group.op]]
op = "stat"
"#
    ));
    let r = run_ok(&w, dir.path());
    let names: Vec<&str> = r.groups.iter().map(|g| g.name.as_str()).collect();
    assert_eq!(names, vec!["readers", "writers"]);
    let readers = entries(&r.groups[0].ops);
    let writers = entries(&r.groups[1].ops);
    assert_eq!(
        readers.iter().map(|x| (x.0, x.1)).collect::<Vec<_>>(),
        vec![(OpKind::Read, None), (OpKind::Stat, None)]
    );
    assert_eq!(
        writers.iter().map(|x| (x.0, x.1)).collect::<Vec<_>>(),
        vec![(OpKind::Write, Some("write")), (OpKind::Stat, None)]
    );
    // The run's figures are the groups' added together.
    let total = |kind: OpKind, label: Option<&str>| {
        r.ops
            .iter()
            .find(|o| o.op == kind && o.label.as_deref() == label)
            .map_or(0, |o| o.count)
    };
    assert_eq!(total(OpKind::Stat, None), readers[1].2 + writers[1].2);
    assert_eq!(total(OpKind::Read, None), readers[0].2);
    assert_eq!(total(OpKind::Write, Some("write")), writers[0].2);
    assert_eq!(readers.iter().chain(&writers).map(|x| x.2).sum::<u64>(), OPS);
    // Each group's operations are its threads' (ThreadResult.ops).
    for g in &r.groups {
        let by_threads: u64 = r.threads.iter().filter(|t| t.group == g.name).map(|t| t.ops).sum();
        assert_eq!(g.ops.iter().map(|o| o.count).sum::<u64>(), by_threads, "{}", g.name);
    }
}

#[test]
fn a_label_survives_toml_and_a_bad_one_names_its_line() {
    let text = r#"name = "l"
stop = { time = "1s" }

[[fileset]]
name = "fs"
files = 1

[[group]]
name = "g"
fileset = "fs"

[[group.op]]
op = "stat"
label = "look"
"#;
    let w = workload(text);
    assert_eq!(w.groups[0].ops[0].label.as_deref(), Some("look"));
    let back = w.to_toml();
    assert!(back.contains("label = \"look\""), "{back}");
    assert_eq!(Workload::from_toml(&back, "back.toml").unwrap(), w);
    for (bad, says) in [
        ("\"\"", "a label must not be empty"),
        ("\" look\"", "starts or ends with a space"),
        ("\"a\\tb\"", "holds a control character"),
        (&format!("\"{}\"", "x".repeat(65)), "longer than 64 characters"),
    ] {
        let t = text.replace("label = \"look\"", &format!("label = {bad}"));
        let e = Workload::from_toml(&t, "w.toml").expect_err(bad).to_string();
        assert!(e.starts_with("w.toml:14:") && e.contains(says), "{bad}: {e}");
    }
}
