//! Comparisons with planted differences: a 20% drop with little variance is a significant
//! regression; a 2% change with much variance is not significant. See `fslab_testkit::studies`
//! for the figures and the p-values SciPy gives for them.

use fslab_report::compare::{compare, Comparison, Side, Verdict};
use fslab_report::{ReportError, StudyData};
use fslab_testkit::studies::{planted_store, P_NOISY, P_STEADY};

fn load(store: &fslab_store::Store, key: &str) -> StudyData {
    StudyData::load_key(store, key).unwrap_or_else(|e| panic!("{e}"))
}

/// The line of `comparison` about workload `workload`.
fn line<'a>(comparison: &'a Comparison, workload: &str) -> &'a fslab_report::compare::Line {
    comparison
        .lines
        .iter()
        .find(|l| l.cell.contains(workload))
        .unwrap_or_else(|| panic!("no line about {workload}: {comparison:#?}"))
}

fn check_planted(c: &Comparison) {
    assert_eq!(c.lines.len(), 2, "{c:#?}");
    let steady = line(c, "steady");
    assert_eq!(steady.verdict, Verdict::Worse);
    assert!((steady.change_pct.unwrap() + 20.0).abs() < 1e-9, "{steady:?}");
    let p = steady.welch.unwrap().p;
    assert!((p - P_STEADY).abs() < 1e-6 * P_STEADY, "p {p}, SciPy says {P_STEADY}");
    let noisy = line(c, "noisy");
    assert_eq!(noisy.verdict, Verdict::NoSignificantChange);
    assert!((noisy.change_pct.unwrap() - 2.0).abs() < 1e-9, "{noisy:?}");
    let p = noisy.welch.unwrap().p;
    assert!((p - P_NOISY).abs() < 1e-6 * P_NOISY, "p {p}, SciPy says {P_NOISY}");
    assert_eq!(c.regressions_above(5.0).len(), 1);
    assert!(c.regressions_above(25.0).is_empty());
}

#[test]
fn two_studies_a_planted_regression_is_significant_and_noise_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = planted_store(dir.path());
    let (before, after) = (load(&store, "before"), load(&store, "after"));
    let c = compare(Side::new(&before, None).unwrap(), Side::new(&after, None).unwrap(), 1.0).unwrap();
    assert_eq!(
        (c.baseline.as_str(), c.candidate.as_str()),
        ("before (study 1)", "after (study 2)")
    );
    assert_eq!(line(&c, "steady").cell, "ext4 steady");
    check_planted(&c);
    let text = c.text();
    let row = text.lines().find(|l| l.starts_with("ext4 steady")).unwrap();
    assert!(row.contains("-20.0% *") && row.contains("WORSE"), "{text}");
    let row = text.lines().find(|l| l.starts_with("ext4 noisy")).unwrap();
    assert!(
        row.contains("+2.0%") && !row.contains('*') && row.contains("no significant change"),
        "{text}"
    );
}

#[test]
fn two_configurations_of_one_study() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = planted_store(dir.path());
    let data = load(&store, "configs");
    let c = compare(
        Side::new(&data, Some("ext4")).unwrap(),
        Side::new(&data, Some("xfs")).unwrap(),
        1.0,
    )
    .unwrap();
    assert_eq!(c.candidate, "configs (study 3) xfs");
    assert_eq!(
        line(&c, "steady").cell,
        "steady",
        "the configuration is in the header, not each line"
    );
    check_planted(&c);
}

#[test]
fn a_significant_change_below_the_minimum_effect_is_not_marked() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = planted_store(dir.path());
    let (before, after) = (load(&store, "before"), load(&store, "after"));
    let c = compare(
        Side::new(&before, None).unwrap(),
        Side::new(&after, None).unwrap(),
        25.0,
    )
    .unwrap();
    assert_eq!(line(&c, "steady").verdict, Verdict::NoSignificantChange);
}

#[test]
fn an_unknown_configuration_and_a_study_against_itself_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = planted_store(dir.path());
    let data = load(&store, "configs");
    let Err(e) = Side::new(&data, Some("zfs")) else {
        panic!("zfs was accepted")
    };
    assert!(matches!(e, ReportError::NoConfiguration { .. }));
    assert_eq!(
        e.to_string(),
        "study `configs` has no configuration `zfs`; its configurations are: ext4, xfs"
    );
    let side = Side::new(&data, None).unwrap();
    let e = compare(side, side, 1.0).unwrap_err();
    assert!(e.to_string().contains("name two studies"), "{e}");
}

#[test]
fn the_report_and_compare_give_the_same_verdicts_on_the_same_runs() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = planted_store(dir.path());
    let data = load(&store, "configs");
    let c = compare(
        Side::new(&data, Some("ext4")).unwrap(),
        Side::new(&data, Some("xfs")).unwrap(),
        fslab_report::verdict::MIN_EFFECT_PCT,
    )
    .unwrap();
    for w in 0..data.workloads.len() {
        let table = &fslab_report::table::workload_tables(&data, w)[0];
        let line = line(&c, &data.workloads[w].name);
        let standing = |k: usize| match &table.rows[0].cells[k] {
            fslab_report::table::TableCell::Value { standing, .. } => standing.unwrap(),
            other => panic!("{other:?}"),
        };
        use fslab_report::verdict::Standing;
        match line.verdict {
            // The candidate (xfs) is really worse: the report calls ext4 best and xfs N× worse.
            Verdict::Worse => {
                assert_eq!(standing(0), Standing::Best, "{}", table.title);
                assert!(matches!(standing(1), Standing::Worse { .. }), "{}", table.title);
            }
            // No real change: the report names no winner either.
            Verdict::NoSignificantChange => {
                assert!(matches!(standing(0), Standing::Tied { .. }), "{}", table.title);
                assert!(matches!(standing(1), Standing::Tied { .. }), "{}", table.title);
            }
            other => panic!("{}: {other:?}", table.title),
        }
    }
    assert_eq!(line(&c, "steady").verdict, Verdict::Worse);
    assert_eq!(line(&c, "noisy").verdict, Verdict::NoSignificantChange);
}
