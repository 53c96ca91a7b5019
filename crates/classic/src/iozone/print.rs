//! IOzone's text output: the throughput blocks, the `-R` reports and automatic mode's table.

use super::figures::Figures;
use super::subtest::Test;
use std::fmt::Write;

/// One throughput sub-test, as IOzone prints it (with `-C`, a line per child), preceded by a blank
/// line; `child` is what it calls a child ([`Options::children_word`]).
///
/// [`Options::children_word`]: super::Options::children_word
pub fn throughput_block(f: &Figures, per_child: bool, child: &str) -> String {
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
        "\tMin throughput per {child} \t\t\t= {:10.2} {u}/sec ",
        f.min_throughput
    );
    let _ = writeln!(
        s,
        "\tMax throughput per {child} \t\t\t= {:10.2} {u}/sec",
        f.max_throughput
    );
    let _ = writeln!(
        s,
        "\tAvg throughput per {child} \t\t\t= {:10.2} {u}/sec",
        f.avg_throughput
    );
    let _ = writeln!(s, "\tMin xfer \t\t\t\t\t= {:10.2} {u}", f.min_xfer);
    if let Some(cpu) = f.cpu {
        // IOzone's initial writers say "Utilization" when the wall time is not 0, every other
        // line "utilization".
        let word = if f.test == Test::Write && cpu.wall_secs != 0.0 {
            "Utilization"
        } else {
            "utilization"
        };
        let _ = write!(
            s,
            "\tCPU {word}: Wall time {:8.3}    CPU time {:8.3}    CPU utilization {:6.2} %\n\n",
            cpu.wall_secs, cpu.cpu_secs, cpu.percent
        );
    }
    if per_child {
        for c in &f.per_child {
            let _ = write!(
                s,
                "\tChild[{}] xfer count = {:10.2} {u}, Throughput = {:10.2} {u}/sec",
                c.child, c.xfer, c.throughput
            );
            if let Some(cpu) = c.cpu {
                let _ = write!(
                    s,
                    ", wall={:6.3}, cpu={:6.3}, %={:6.2}",
                    cpu.wall_secs, cpu.cpu_secs, cpu.percent
                );
            }
            s.push('\n');
        }
    }
    s
}

/// Throughput mode's `-R` report: "Children see" of each sub-test, a figure for each number of
/// children, as IOzone 3.487's `dump_throughput` prints it (its X axis says "threads" with `-T`).
pub fn throughput_report(record_kb: u64, rows: &[(&str, Vec<f64>)], ops: bool, threads: bool) -> String {
    let mut s = String::new();
    let axis = if threads { "threads" } else { "processes" };
    let _ = writeln!(
        s,
        "\n\"Throughput report Y-axis is type of test X-axis is number of {axis}\""
    );
    let _ = writeln!(s, "\"Record size = {record_kb} kBytes \"");
    let unit = if ops { "ops/sec" } else { "kBytes/sec" };
    let _ = writeln!(s, "\"Output is in {unit}\"\n");
    throughput_rows(&mut s, rows);
    s
}

/// Throughput mode's `-R` report of CPU use with `-+u` (IOzone's `dump_throughput_cpu`): each
/// sub-test's CPU utilization in %, a figure for each number of children. IOzone 3.487 names
/// row k after the k-th test of its whole list whatever ran; fslab names each row after its own
/// sub-test.
pub fn throughput_cpu_report(record_kb: u64, rows: &[(&str, Vec<f64>)], threads: bool) -> String {
    let axis = if threads { "threads" } else { "processes" };
    let mut s = format!(
        "\n\"CPU utilization report Y-axis is type of test X-axis is number of {axis}\"\n\
         \"Record size = {record_kb} kBytes \"\n\"Output is in CPU%\"\n\n"
    );
    throughput_rows(&mut s, rows);
    s
}

/// The rows of throughput mode's reports: the row's name, then a figure per number of children.
fn throughput_rows(s: &mut String, rows: &[(&str, Vec<f64>)]) {
    for (name, values) in rows {
        let _ = write!(s, "\"{name:>15} \"");
        for v in values {
            let _ = write!(s, " {v:10.2} ");
        }
        s.push_str("\n\n");
    }
}

/// What IOzone 3.487's throughput mode prints after its last sub-test, before its report.
pub const THROUGHPUT_END: &str = "\n\n";

/// The fields of automatic mode's table header, as IOzone 3.487 prints them (its
/// `CONTROL_STRING3`; with `-E` its `CONTROL_STRING2`, whose pwrite and pread columns come
/// last): (a leading space, width, upper line, lower line).
const AUTO_HEADER: [(bool, usize, &str, &str); 19] = [
    (false, 16, " ", "kB"),
    (false, 8, " ", "reclen"),
    (false, 9, " ", "write"),
    (false, 9, " ", "rewrite"),
    (false, 8, " ", "read"),
    (false, 10, " ", "reread"),
    (false, 8, "random", "read"),
    (true, 9, "random", "write"),
    (false, 9, "bkwd", "read"),
    (true, 9, "record", "rewrite"),
    (true, 9, "stride", "read"),
    (false, 9, "", "fwrite"),
    (false, 9, "", "frewrite"),
    (false, 9, "", "fread"),
    (false, 9, "", "freread"),
    (false, 8, " ", "pwrite"),
    (false, 9, " ", "repwrite"),
    (false, 8, " ", "pread"),
    (false, 10, " ", "repread"),
];

/// Automatic mode's table header: IOzone's two lines, the same whatever tests run (with `-E`,
/// `extension`, four more columns), trailing blanks and all.
pub fn auto_header(extension: bool) -> String {
    let fields = if extension {
        &AUTO_HEADER[..]
    } else {
        &AUTO_HEADER[..15]
    };
    let mut s = String::new();
    for line in 0..2 {
        for &(space, w, upper, lower) in fields {
            let text = if line == 0 { upper } else { lower };
            let _ = write!(s, "{}{text:>w$}", if space { " " } else { "" });
        }
        s.push('\n');
    }
    s
}

/// A figure of automatic mode's row as IOzone prints it: its test, a leading space or not, and
/// its width.
type Figure = (Test, bool, usize);

/// Automatic mode's row, test function by test function as IOzone 3.487's `begin()` calls them
/// (write, read, random, backward read, record rewrite, stride read, fwrite, fread, the mixed
/// workload, and with `-E` pwrite and pread): the figures of each that ran, printed as it prints
/// them, or the blanks it prints for one that did not.
const AUTO_ROW: [(&[Figure], usize); 11] = [
    (&[(Test::Write, false, 9), (Test::Rewrite, false, 9)], 18),
    (&[(Test::Read, false, 9), (Test::Reread, false, 9)], 18),
    (&[(Test::RandomRead, false, 9), (Test::RandomWrite, false, 9)], 18),
    (&[(Test::Reverse, false, 9)], 9),
    (&[(Test::RecordRewrite, true, 9)], 10),
    (&[(Test::Stride, true, 9)], 10),
    (&[(Test::Fwrite, false, 9), (Test::Frewrite, false, 9)], 18),
    (&[(Test::Fread, false, 9), (Test::Freread, false, 9)], 17),
    // The mixed workload is a throughput test: in automatic mode it prints nothing.
    (&[], 0),
    (&[(Test::Pwrite, false, 9), (Test::Repwrite, false, 9)], 18),
    (&[(Test::Pread, false, 8), (Test::Repread, false, 9)], 18),
];

/// One row of automatic mode's table: the file and record size and each test's figure, a
/// whole number as IOzone's (kB/s truncated). `figures` holds the tests that ran.
pub fn auto_row(file_kb: u64, record_kb: u64, figures: &[(Test, f64)], extension: bool) -> String {
    let mut s = format!("{file_kb:>16}{record_kb:>8}");
    let functions = if extension { &AUTO_ROW[..] } else { &AUTO_ROW[..9] };
    for &(cells, blanks) in functions {
        let ran = cells.iter().any(|c| figures.iter().any(|f| f.0 == c.0));
        if !ran {
            let _ = write!(s, "{:blanks$}", "");
            continue;
        }
        for &(test, space, w) in cells {
            let space = if space { " " } else { "" };
            match figures.iter().find(|f| f.0 == test) {
                Some(&(_, v)) => {
                    let _ = write!(s, "{space}{:>w$}", v as u64);
                }
                None => {
                    let _ = write!(s, "{space}{:w$}", "");
                }
            }
        }
    }
    s.push('\n');
    s
}

/// One test's figures of automatic mode: (file kB, record kB, value).
pub type AutoCell = (u64, u64, f64);

/// Automatic mode's `-R` report, as IOzone 3.487's `dump_excel` prints it after its last words:
/// per test, the record sizes of the run (`records_kb`, all of them even where a file size
/// skipped some) and a line per file size with the figures it has, in the order they were made.
pub fn auto_report(tests: &[Test], cells: &[(Test, AutoCell)], records_kb: &[u64]) -> String {
    let mut s = String::from("Excel output is below:\n");
    for &t in tests {
        auto_grid(&mut s, t.excel_title(), t, cells, records_kb, |v| {
            format!(" {} ", v as u64)
        });
    }
    s
}

/// Automatic mode's CPU reports with `-+u` and `-R`, after its other reports (IOzone's
/// `dump_cputimes`): per test, the CPU utilization in % of each measurement, laid out as the
/// reports before them.
pub fn auto_cpu_report(tests: &[Test], cells: &[(Test, AutoCell)], records_kb: &[u64]) -> String {
    let mut s = String::new();
    for &t in tests {
        let title = format!(
            "{} CPU utilization report (Zero values should be ignored)",
            t.excel_title().trim_end_matches(" report")
        );
        auto_grid(&mut s, &title, t, cells, records_kb, |v| format!(" {v:6.2}"));
    }
    s
}

/// One of automatic mode's reports: its title, the record sizes, and a line per file size with
/// `cell` of each of test `t`'s figures.
fn auto_grid(
    s: &mut String,
    title: &str,
    t: Test,
    cells: &[(Test, AutoCell)],
    records_kb: &[u64],
    cell: impl Fn(f64) -> String,
) {
    let _ = write!(s, "\n\"{title}\"\n      ");
    for r in records_kb {
        let _ = write!(s, "  \"{r}\"");
    }
    s.push('\n');
    let mut file = None;
    for &(_, (f, _, v)) in cells.iter().filter(|c| c.0 == t) {
        if file != Some(f) {
            if file.is_some() {
                s.push('\n');
            }
            let _ = write!(s, "\"{f}\"  ");
            file = Some(f);
        }
        s.push_str(&cell(v));
    }
    s.push('\n');
}

/// IOzone's warning after its last words when a time was below its clock's resolution, naming
/// the largest record size of such a time (`record`, bytes); nothing when none was.
pub fn poor_resolution(record: Option<u64>) -> String {
    record.map_or_else(String::new, |r| {
        format!(
            "Timer resolution is poor. Some small transfers may have \n\
             reported inaccurate results. Sizes {} kBytes and below.\n",
            r / 1024
        )
    })
}

/// IOzone's last words.
pub const COMPLETE: &str = "\niozone test complete.\n";

#[cfg(test)]
mod tests {
    use super::super::figures::{Child, CpuUse};
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
            cpu: None,
            per_child: vec![
                Child {
                    child: 0,
                    file: "iozone.DUMMY.0".into(),
                    xfer: 14272.0,
                    throughput: 410424.16,
                    secs: 0.03,
                    finished: false,
                    cpu: None,
                },
                Child {
                    child: 1,
                    file: "iozone.DUMMY.1".into(),
                    xfer: 16384.0,
                    throughput: 452695.06,
                    secs: 0.03,
                    finished: true,
                    cpu: None,
                },
            ],
        }
    }

    #[test]
    fn block_matches_iozones_lines() {
        let b = throughput_block(&figures(), true, "process");
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
        assert_eq!(throughput_block(&figures(), false, "process").lines().count(), 7);
    }

    /// With -+u, as IOzone 3.487 prints `-i 0 -i 1 -t 2 -+u -C` (its figures here).
    #[test]
    fn cpu_use_follows_min_xfer_and_ends_each_child_line() {
        let mut f = figures();
        f.cpu = Some(CpuUse {
            wall_secs: 0.000513,
            cpu_secs: 0.001012,
            percent: 197.35,
        });
        for (c, (wall, cpu)) in f.per_child.iter_mut().zip([(0.000381, 0.000378), (0.000412, 0.000407)]) {
            c.cpu = Some(CpuUse::new(wall, cpu));
        }
        let b = throughput_block(&f, true, "process");
        assert!(b.contains(
            "\tMin xfer \t\t\t\t\t=   14272.00 kB\n\
             \tCPU Utilization: Wall time    0.001    CPU time    0.001    CPU utilization 197.35 %\n\n\
             \tChild[0] xfer count =   14272.00 kB, Throughput =  410424.16 kB/sec, wall= 0.000, cpu= 0.000, %= 99.21\n\
             \tChild[1] xfer count =   16384.00 kB, Throughput =  452695.06 kB/sec, wall= 0.000, cpu= 0.000, %= 98.79\n"
        ), "{b}");
        // Every other sub-test says "utilization"; so do initial writers with no wall time.
        let rewriters = Figures {
            test: Test::Rewrite,
            ..f.clone()
        };
        assert!(throughput_block(&rewriters, false, "process").contains("\tCPU utilization: Wall time "));
        f.cpu = Some(CpuUse::new(0.0, 0.0));
        assert!(throughput_block(&f, false, "process")
            .contains("\tCPU utilization: Wall time    0.000    CPU time    0.000    CPU utilization   0.00 %\n\n"));
        // The CPU report, as IOzone prints it after the throughput report.
        let rows = [("Initial write", vec![197.35]), ("Rewrite", vec![180.38])];
        assert_eq!(
            throughput_cpu_report(64, &rows, false),
            "\n\"CPU utilization report Y-axis is type of test X-axis is number of processes\"\n\
             \"Record size = 64 kBytes \"\n\"Output is in CPU%\"\n\n\
             \"  Initial write \"     197.35 \n\n\"        Rewrite \"     180.38 \n\n"
        );
    }

    /// Automatic mode's CPU reports, as IOzone 3.487 prints `-a -n 64k -g 128k -q 8k -i 0 -+u -R`.
    #[test]
    fn auto_cpu_report_is_iozones() {
        let cells = [
            (Test::Write, (64, 4, 28.26)),
            (Test::Write, (64, 8, 37.46)),
            (Test::Write, (128, 4, 27.03)),
            (Test::Write, (128, 8, 40.07)),
            (Test::Rewrite, (64, 4, 25.4)),
        ];
        let r = auto_cpu_report(&[Test::Write, Test::Rewrite], &cells, &[4, 8]);
        assert!(
            r.starts_with(
                "\n\"Writer CPU utilization report (Zero values should be ignored)\"\n        \"4\"  \"8\"\n\
             \"64\"    28.26  37.46\n\"128\"    27.03  40.07\n\
             \n\"Re-writer CPU utilization report (Zero values should be ignored)\"\n"
            ),
            "{r}"
        );
    }

    #[test]
    fn fwriters_parent_line_has_iozones_extra_tab() {
        let f = Figures {
            test: Test::Fwrite,
            name: Test::Fwrite.children_name(),
            ..figures()
        };
        let b = throughput_block(&f, false, "process");
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
            let b = throughput_block(&f, false, "process");
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
        let rows = [
            ("Initial write", vec![863119.22]),
            ("Read", vec![16692531.5]),
            ("Pwrite", vec![1.0]),
            ("Fread", vec![2.0]),
        ];
        let r = throughput_report(64, &rows, false, false);
        assert_eq!(
            r,
            "\n\"Throughput report Y-axis is type of test X-axis is number of processes\"\n\
             \"Record size = 64 kBytes \"\n\
             \"Output is in kBytes/sec\"\n\n\
             \"  Initial write \"  863119.22 \n\n\
             \"           Read \" 16692531.50 \n\n\
             \"         Pwrite \"       1.00 \n\n\
             \"          Fread \"       2.00 \n\n"
        );
        let r = throughput_report(64, &rows, true, true);
        assert!(r.starts_with("\n\"Throughput report Y-axis is type of test X-axis is number of threads\"\n"));
        assert!(r.contains("\"Output is in ops/sec\"\n\n"));
        // With -l 1 -u 2, as IOzone 3.487 printed it: a figure per number of children.
        let two = [
            ("Initial write", vec![3735385.5, 7226385.0]),
            ("Re-read", vec![4178773.75, 4211554.5]),
        ];
        assert!(throughput_report(64, &two, false, false).ends_with(
            "\"  Initial write \" 3735385.50  7226385.00 \n\n\"        Re-read \" 4178773.75  4211554.50 \n\n"
        ));
    }

    /// IOzone 3.487's table for `-a -n 64k -g 64k -q 4k -i 0 -i 2 -i 4 -i 7`, its figures
    /// aside, and with `-E -i 0 -i 9 -i 10`: every column headed whatever runs, blanks kept for
    /// the tests that do not.
    #[test]
    fn auto_table_is_iozones_whatever_runs() {
        let upper = "                                                              random    random     bkwd    record    stride";
        let lower = "              kB  reclen    write  rewrite    read    reread    read     write     read   rewrite      read   fwrite frewrite    fread  freread";
        assert_eq!(auto_header(false), format!("{upper}{:36}\n{lower}\n", ""));
        let figures = [
            (Test::Write, 743988.9),
            (Test::Rewrite, 2561267.0),
            (Test::RandomRead, 2467108.0),
            (Test::RandomWrite, 2467108.0),
            (Test::RecordRewrite, 4564786.0),
            (Test::Fread, 3541098.0),
            (Test::Freread, 8182586.0),
        ];
        assert_eq!(
            auto_row(64, 4, &figures, false),
            "              64       4   743988  2561267                    2467108  2467108            4564786                              3541098  8182586\n"
        );
        // -i 0 alone: the blanks of every other test, to the header's width less one.
        let row = auto_row(64, 4, &figures[..2], false);
        assert_eq!(row.len(), 143, "{row:?}");
        // -E: four more columns, pwrite's and pread's, after the blanks of the ones not run.
        let header = auto_header(true);
        assert!(header
            .lines()
            .nth(1)
            .unwrap()
            .ends_with("freread  pwrite repwrite   pread   repread"));
        assert_eq!(header.lines().next().unwrap().len(), 178);
        let extension = [
            (Test::Write, 863676.0),
            (Test::Rewrite, 2662899.0),
            (Test::Pwrite, 3057153.0),
            (Test::Repwrite, 3541098.0),
            (Test::Pread, 3541098.0),
            (Test::Repread, 7940539.0),
        ];
        assert_eq!(
            auto_row(64, 4, &extension, true),
            format!(
                "              64       4   863676  2662899{:100}  3057153  3541098 3541098  7940539\n",
                ""
            )
        );
    }

    #[test]
    fn a_time_below_the_clocks_resolution_is_noted_after_the_last_words() {
        assert_eq!(
            poor_resolution(Some(64 << 10)),
            "Timer resolution is poor. Some small transfers may have \n\
             reported inaccurate results. Sizes 64 kBytes and below.\n"
        );
        assert_eq!(poor_resolution(None), "");
    }

    #[test]
    fn auto_report_is_iozones_excel_output() {
        let cells = [
            (Test::Write, (64, 4, 1033216.7)),
            (Test::Rewrite, (64, 4, 3203069.0)),
            (Test::Write, (64, 8, 1679761.0)),
            (Test::Rewrite, (64, 8, 4018152.0)),
            (Test::Write, (128, 8, 1878447.0)),
            (Test::Rewrite, (128, 8, 3895854.0)),
        ];
        assert_eq!(
            auto_report(&[Test::Write, Test::Rewrite], &cells, &[4, 8]),
            "Excel output is below:\n\
             \n\"Writer report\"\n        \"4\"  \"8\"\n\"64\"   1033216  1679761 \n\"128\"   1878447 \n\
             \n\"Re-writer report\"\n        \"4\"  \"8\"\n\"64\"   3203069  4018152 \n\"128\"   3895854 \n"
        );
    }
}
