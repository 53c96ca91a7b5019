//! IOzone's sub-tests: what each `-i` selects, the order IOzone runs them in, and the names it
//! prints them under.

use serde::Serialize;

/// One measured phase of IOzone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Test {
    /// `-i 0`: each child writes its file from empty (created or truncated).
    Write,
    /// `-i 0`: each child writes over its existing file.
    Rewrite,
    /// `-i 1`: each child reads its file from start to end.
    Read,
    /// `-i 1`: the same again, now from the cache.
    Reread,
    /// `-i 3`: each child reads its file from the end to the start.
    Reverse,
    /// `-i 5`: records a stride apart.
    Stride,
    /// `-i 2`: one record at a time at random record-aligned offsets.
    RandomRead,
    /// `-i 8`: random reads and writes mixed.
    Mixed,
    /// `-i 2`: one record written at a time at random offsets.
    RandomWrite,
}

impl Test {
    /// Throughput mode's order (`-t`): writers, rewriters, readers, re-readers, reverse, stride,
    /// random readers, mixed, random writers.
    pub const THROUGHPUT_ORDER: [Test; 9] = [
        Test::Write,
        Test::Rewrite,
        Test::Read,
        Test::Reread,
        Test::Reverse,
        Test::Stride,
        Test::RandomRead,
        Test::Mixed,
        Test::RandomWrite,
    ];

    /// Automatic mode's order, which is also its table's columns.
    pub const AUTO_ORDER: [Test; 8] = [
        Test::Write,
        Test::Rewrite,
        Test::Read,
        Test::Reread,
        Test::RandomRead,
        Test::RandomWrite,
        Test::Reverse,
        Test::Stride,
    ];

    /// The `-i` number that selects this test.
    pub fn number(self) -> u32 {
        match self {
            Test::Write | Test::Rewrite => 0,
            Test::Read | Test::Reread => 1,
            Test::RandomRead | Test::RandomWrite => 2,
            Test::Reverse => 3,
            Test::Stride => 5,
            Test::Mixed => 8,
        }
    }

    /// The tests `selection` (-i numbers) asks for, in the order of `order`.
    pub fn selected(selection: &[u32], order: &[Test]) -> Vec<Test> {
        order
            .iter()
            .copied()
            .filter(|t| selection.contains(&t.number()))
            .collect()
    }

    /// As throughput mode names the children: "Children see throughput for 16 initial writers".
    pub fn children_name(self) -> &'static str {
        match self {
            Test::Write => "initial writers",
            Test::Rewrite => "rewriters",
            Test::Read => "readers",
            Test::Reread => "re-readers",
            Test::Reverse => "reverse readers",
            Test::Stride => "stride readers",
            Test::RandomRead => "random readers",
            Test::Mixed => "mixed workload",
            Test::RandomWrite => "random writers",
        }
    }

    /// The row name of the `-R` throughput report.
    pub fn report_name(self) -> &'static str {
        match self {
            Test::Write => "Initial write",
            Test::Rewrite => "Rewrite",
            Test::Read => "Read",
            Test::Reread => "Re-read",
            Test::Reverse => "Reverse Read",
            Test::Stride => "Stride read",
            Test::RandomRead => "Random read",
            Test::Mixed => "Mixed workload",
            Test::RandomWrite => "Random write",
        }
    }

    /// The title of automatic mode's `-R` report for this test.
    pub fn excel_title(self) -> &'static str {
        match self {
            Test::Write => "Writer report",
            Test::Rewrite => "Re-writer report",
            Test::Read => "Reader report",
            Test::Reread => "Re-Reader report",
            Test::Reverse => "Backward read report",
            Test::Stride => "Stride read report",
            Test::RandomRead => "Random read report",
            Test::Mixed => "Mixed workload report",
            Test::RandomWrite => "Random write report",
        }
    }

    /// Automatic mode's column: (upper header line, lower header line, width).
    pub fn column(self) -> (&'static str, &'static str, usize) {
        match self {
            Test::Write => ("", "write", 9),
            Test::Rewrite => ("", "rewrite", 9),
            Test::Read => ("", "read", 9),
            Test::Reread => ("", "reread", 9),
            Test::RandomRead => ("random", "read", 10),
            Test::RandomWrite => ("random", "write", 10),
            Test::Reverse => ("bkwd", "read", 9),
            Test::Stride => ("stride", "read", 10),
            Test::Mixed => ("mixed", "", 10),
        }
    }

    /// A short name for workload names and JSON: `initial-writers`.
    pub fn slug(self) -> String {
        self.children_name().replace(' ', "-")
    }

    /// Whether the test writes (where `-e` puts an fsync).
    pub fn writes(self) -> bool {
        matches!(self, Test::Write | Test::Rewrite | Test::RandomWrite | Test::Mixed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throughput_order_follows_iozone() {
        let t = Test::selected(&[2, 1, 0], &Test::THROUGHPUT_ORDER);
        assert_eq!(
            t,
            vec![
                Test::Write,
                Test::Rewrite,
                Test::Read,
                Test::Reread,
                Test::RandomRead,
                Test::RandomWrite
            ]
        );
        let t = Test::selected(&[0, 2, 8, 3], &Test::THROUGHPUT_ORDER);
        assert_eq!(
            t.iter().map(|t| t.children_name()).collect::<Vec<_>>(),
            [
                "initial writers",
                "rewriters",
                "reverse readers",
                "random readers",
                "mixed workload",
                "random writers"
            ]
        );
    }

    #[test]
    fn report_names_fit_iozones_column() {
        for t in Test::THROUGHPUT_ORDER {
            assert!(t.report_name().len() <= 15, "{}", t.report_name());
        }
    }
}
