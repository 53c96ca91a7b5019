//! IOzone's text output: the throughput blocks, the `-R` reports and automatic mode's table.

use super::figures::Figures;
use super::subtest::Test;
use std::fmt::Write;

/// One throughput sub-test, as IOzone prints it (with `-C`, a line per child), preceded by a blank
/// line.
pub fn throughput_block(f: &Figures, per_child: bool) -> String {
    let u = f.unit;
    let mut s = String::from("\n");
    let (n, w) = (f.children, f.test.count_width());
    let _ = writeln!(
        s,
        "\tChildren see throughput for {n:w$} {}{}= {:10.2} {u}/sec",
        f.name,
        f.test.children_gap(),
        f.children_see
    );
    let _ = writeln!(
        s,
        "\tParent sees throughput for {n:w$} {}{}= {:10.2} {u}/sec",
        f.name,
        f.test.parent_gap(),
        f.parent_sees
    );
    let _ = writeln!(
        s,
        "\tMin throughput per process \t\t\t= {:10.2} {u}/sec ",
        f.min_throughput
    );
    let _ = writeln!(
        s,
        "\tMax throughput per process \t\t\t= {:10.2} {u}/sec",
        f.max_throughput
    );
    let _ = writeln!(
        s,
        "\tAvg throughput per process \t\t\t= {:10.2} {u}/sec",
        f.avg_throughput
    );
    let _ = writeln!(s, "\tMin xfer \t\t\t\t\t= {:10.2} {u}", f.min_xfer);
    if per_child {
        for c in &f.per_child {
            let _ = writeln!(
                s,
                "\tChild[{}] xfer count = {:10.2} {u}, Throughput = {:10.2} {u}/sec",
                c.child, c.xfer, c.throughput
            );
        }
    }
    s
}

/// Throughput mode's `-R` report: "Children see" of each sub-test.
pub fn throughput_report(record_kb: u64, rows: &[(Test, f64)], ops: bool) -> String {
    let mut s = String::from("\n");
    s.push_str("\"Throughput report Y-axis is type of test X-axis is number of processes\"\n");
    let _ = writeln!(s, "\"Record size = {record_kb} kBytes \"");
    s.push_str(if ops {
        "\"Output is in ops/sec\"\n"
    } else {
        "\"Output is in kBytes/sec\"\n"
    });
    for (test, value) in rows {
        let _ = writeln!(s, "\n\"{:>15} \" {value:10.2} ", test.report_name());
    }
    s
}

/// Automatic mode's table header for `tests` (two lines, as IOzone's).
pub fn auto_header(tests: &[Test]) -> String {
    let mut upper = format!("{:16}{:8}", "", "");
    let mut lower = format!("{:>16}{:>8}", "kB", "reclen");
    for t in tests {
        let (a, b, w) = t.column();
        let _ = write!(upper, "{a:>w$}");
        let _ = write!(lower, "{b:>w$}");
    }
    let mut s = String::new();
    if tests.iter().any(|t| !t.column().0.is_empty()) {
        s.push_str(upper.trim_end());
        s.push('\n');
    }
    s.push_str(&lower);
    s.push('\n');
    s
}

/// One row of automatic mode's table: throughput per test, as whole numbers (blank when a test
/// did not run).
pub fn auto_row(file_kb: u64, record_kb: u64, tests: &[Test], values: &[Option<f64>]) -> String {
    let mut s = format!("{file_kb:>16}{record_kb:>8}");
    for (t, v) in tests.iter().zip(values) {
        let w = t.column().2;
        match v {
            Some(v) => {
                let _ = write!(s, "{:>w$}", v.round() as u64);
            }
            None => {
                let _ = write!(s, "{:>w$}", "");
            }
        }
    }
    s.push('\n');
    s
}

/// One test's figures of automatic mode: (file kB, record kB, value).
pub type AutoCell = (u64, u64, f64);

/// Automatic mode's `-R` report: per test, a matrix of file sizes (rows) by record sizes
/// (columns).
pub fn auto_report(tests: &[Test], cells: &[(Test, AutoCell)]) -> String {
    let mut s = String::new();
    for &t in tests {
        let mine: Vec<AutoCell> = cells.iter().filter(|c| c.0 == t).map(|c| c.1).collect();
        let mut records: Vec<u64> = mine.iter().map(|c| c.1).collect();
        records.sort_unstable();
        records.dedup();
        let mut files: Vec<u64> = mine.iter().map(|c| c.0).collect();
        files.dedup();
        let _ = write!(s, "\n\"{}\"\n{:8}", t.excel_title(), "");
        for r in &records {
            let _ = write!(s, "{:>10}", format!("\"{r}\""));
        }
        s.push('\n');
        for f in &files {
            let _ = write!(s, "{:<8}", format!("\"{f}\""));
            for r in &records {
                match mine.iter().find(|c| c.0 == *f && c.1 == *r) {
                    Some(c) => {
                        let _ = write!(s, "{:>10}", c.2.round() as u64);
                    }
                    None => {
                        let _ = write!(s, "{:>10}", "");
                    }
                }
            }
            s.push('\n');
        }
    }
    s
}

/// IOzone's last words.
pub const COMPLETE: &str = "\n\niozone test complete.\n";

#[cfg(test)]
mod tests {
    use super::super::figures::Child;
    use super::*;

    fn figures() -> Figures {
        Figures {
            test: Test::Write,
            name: "initial writers",
            children: 2,
            unit: "kB",
            children_see: 863119.22,
            parent_sees: 775119.72,
            min_throughput: 410424.16,
            max_throughput: 452695.06,
            avg_throughput: 431559.61,
            min_xfer: 14272.0,
            wall_secs: 0.04,
            per_child: vec![
                Child {
                    child: 0,
                    file: "iozone.DUMMY.0".into(),
                    xfer: 14272.0,
                    throughput: 410424.16,
                    secs: 0.03,
                    finished: false,
                },
                Child {
                    child: 1,
                    file: "iozone.DUMMY.1".into(),
                    xfer: 16384.0,
                    throughput: 452695.06,
                    secs: 0.03,
                    finished: true,
                },
            ],
        }
    }

    #[test]
    fn block_matches_iozones_lines() {
        let b = throughput_block(&figures(), true);
        let lines: Vec<&str> = b.lines().collect();
        assert_eq!(lines[0], "");
        assert_eq!(
            lines[1],
            "\tChildren see throughput for  2 initial writers \t=  863119.22 kB/sec"
        );
        assert_eq!(
            lines[2],
            "\tParent sees throughput for  2 initial writers \t=  775119.72 kB/sec"
        );
        assert_eq!(lines[3], "\tMin throughput per process \t\t\t=  410424.16 kB/sec ");
        assert_eq!(lines[6], "\tMin xfer \t\t\t\t\t=   14272.00 kB");
        assert_eq!(
            lines[7],
            "\tChild[0] xfer count =   14272.00 kB, Throughput =  410424.16 kB/sec"
        );
        assert_eq!(lines.len(), 9);
        assert_eq!(throughput_block(&figures(), false).lines().count(), 7);
    }

    #[test]
    fn fwriters_parent_line_has_iozones_extra_tab() {
        let f = Figures {
            test: Test::Fwrite,
            name: Test::Fwrite.children_name(),
            ..figures()
        };
        let b = throughput_block(&f, false);
        assert!(
            b.contains("\tChildren see throughput for  2 fwriters \t=  863119.22 kB/sec\n"),
            "{b}"
        );
        assert!(
            b.contains("\tParent sees throughput for  2 fwriters \t\t=  775119.72 kB/sec\n"),
            "{b}"
        );
    }

    #[test]
    fn the_count_and_the_tabs_are_spaced_as_iozone_spaces_each_test() {
        let line = |test: Test| {
            let f = Figures {
                test,
                name: test.children_name(),
                children: 4,
                ..figures()
            };
            let b = throughput_block(&f, false);
            let lines: Vec<String> = b
                .lines()
                .skip(1)
                .take(2)
                .map(|l| l.split('=').next().unwrap().to_string())
                .collect();
            (lines[0].clone(), lines[1].clone())
        };
        assert_eq!(
            line(Test::Read),
            (
                "\tChildren see throughput for  4 readers \t\t".into(),
                "\tParent sees throughput for  4 readers \t\t".into()
            )
        );
        assert_eq!(
            line(Test::Reread),
            (
                "\tChildren see throughput for 4 re-readers \t".into(),
                "\tParent sees throughput for 4 re-readers \t".into()
            )
        );
        for t in [
            Test::Reverse,
            Test::Stride,
            Test::RandomRead,
            Test::Mixed,
            Test::RandomWrite,
            Test::Pwrite,
            Test::Pread,
        ] {
            assert!(line(t).0.starts_with("\tChildren see throughput for 4 "), "{t:?}");
            assert!(line(t).1.ends_with(" \t"), "{t:?}");
        }
        for t in [Test::Write, Test::Rewrite, Test::Fwrite, Test::Fread] {
            assert!(line(t).0.starts_with("\tChildren see throughput for  4 "), "{t:?}");
            assert!(line(t).0.ends_with(" \t"), "{t:?}");
        }
    }

    #[test]
    fn report_matches_iozones_layout() {
        let r = throughput_report(
            64,
            &[
                (Test::Write, 863119.22),
                (Test::Read, 16692531.5),
                (Test::Pwrite, 1.0),
                (Test::Fread, 2.0),
            ],
            false,
        );
        assert!(r.contains("\n\"         Pwrite \"       1.00 \n"), "{r}");
        assert!(r.contains("\n\"          Fread \"       2.00 \n"), "{r}");
        assert!(r.contains("\"Throughput report Y-axis is type of test X-axis is number of processes\"\n"));
        assert!(r.contains("\"Record size = 64 kBytes \"\n"));
        assert!(r.contains("\n\"  Initial write \"  863119.22 \n"));
        assert!(r.contains("\n\"           Read \" 16692531.50 \n"));
    }

    #[test]
    fn auto_table_columns_line_up() {
        let tests = [Test::Write, Test::Rewrite, Test::RandomRead];
        let h = auto_header(&tests);
        let row = auto_row(64, 4, &tests, &[Some(817636.4), Some(2203800.0), None]);
        let lower = h.lines().nth(1).unwrap();
        assert_eq!(lower.len(), row.trim_end_matches('\n').len());
        assert!(lower.ends_with("  rewrite      read"), "{lower}");
        assert!(h.lines().next().unwrap().ends_with("random"));
        assert!(row.starts_with("              64       4   817636  2203800"));
    }
}
