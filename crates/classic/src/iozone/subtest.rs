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
    /// `-i 4` (not with `-t`): one record at the start of the file, written again and again.
    RecordRewrite,
    /// `-i 5`: records a stride apart.
    Stride,
    /// `-i 2`: one record at a time at random record-aligned offsets.
    RandomRead,
    /// `-i 8`: random reads and writes mixed.
    Mixed,
    /// `-i 2`: one record written at a time at random offsets.
    RandomWrite,
    /// `-i 9`: the file written with pwrite(), from empty in throughput mode (IOzone creates
    /// it), over the existing file in automatic mode.
    Pwrite,
    /// `-i 9`, automatic mode: the same again.
    Repwrite,
    /// `-i 10`: the file read through with pread().
    Pread,
    /// `-i 10`, automatic mode: the same again.
    Repread,
    /// `-i 6`: the file written through stdio (fwrite) with a one-record buffer: from empty in
    /// throughput mode, over the existing file in automatic mode.
    Fwrite,
    /// `-i 6`, automatic mode: the same again.
    Frewrite,
    /// `-i 7`: the file read through stdio (fread) with a one-record buffer.
    Fread,
    /// `-i 7`, automatic mode: the same again.
    Freread,
}

impl Test {
    /// Throughput mode's order (`-t`): writers, rewriters, readers, re-readers, reverse, stride,
    /// random readers, mixed, random writers, pwrite writers, pread readers, fwriters, freaders.
    pub const THROUGHPUT_ORDER: [Test; 13] = [
        Test::Write,
        Test::Rewrite,
        Test::Read,
        Test::Reread,
        Test::Reverse,
        Test::Stride,
        Test::RandomRead,
        Test::Mixed,
        Test::RandomWrite,
        Test::Pwrite,
        Test::Pread,
        Test::Fwrite,
        Test::Fread,
    ];

    /// Automatic mode's order, which is also its table's columns.
    pub const AUTO_ORDER: [Test; 17] = [
        Test::Write,
        Test::Rewrite,
        Test::Read,
        Test::Reread,
        Test::RandomRead,
        Test::RandomWrite,
        Test::Reverse,
        Test::RecordRewrite,
        Test::Stride,
        Test::Fwrite,
        Test::Frewrite,
        Test::Fread,
        Test::Freread,
        Test::Pwrite,
        Test::Repwrite,
        Test::Pread,
        Test::Repread,
    ];

    /// The `-i` number that selects this test.
    pub fn number(self) -> u32 {
        match self {
            Test::Write | Test::Rewrite => 0,
            Test::Read | Test::Reread => 1,
            Test::RandomRead | Test::RandomWrite => 2,
            Test::Reverse => 3,
            Test::RecordRewrite => 4,
            Test::Stride => 5,
            Test::Fwrite | Test::Frewrite => 6,
            Test::Fread | Test::Freread => 7,
            Test::Mixed => 8,
            Test::Pwrite | Test::Repwrite => 9,
            Test::Pread | Test::Repread => 10,
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
    /// (IOzone prints no such line for the tests of automatic mode alone; their names here only
    /// name the runs.)
    pub fn children_name(self) -> &'static str {
        match self {
            Test::Write => "initial writers",
            Test::Rewrite => "rewriters",
            Test::Read => "readers",
            Test::Reread => "re-readers",
            Test::Reverse => "reverse readers",
            Test::RecordRewrite => "record rewriters",
            Test::Stride => "stride readers",
            Test::RandomRead => "random readers",
            Test::Mixed => "mixed workload",
            Test::RandomWrite => "random writers",
            Test::Pwrite => "pwrite writers",
            Test::Repwrite => "re-pwrite writers",
            Test::Pread => "pread readers",
            Test::Repread => "re-pread readers",
            Test::Fwrite => "fwriters",
            Test::Frewrite => "re-fwriters",
            Test::Fread => "freaders",
            Test::Freread => "re-freaders",
        }
    }

    /// The width IOzone prints the number of children in, in the "Children see" and "Parent
    /// sees" lines: `%2lld` for the initial writers, rewriters, readers, fwriters and freaders,
    /// `%lld` for the others (`for  4 readers`, `for 4 re-readers`).
    pub fn count_width(self) -> usize {
        match self {
            Test::Write | Test::Rewrite | Test::Read | Test::Fwrite | Test::Fread => 2,
            _ => 0,
        }
    }

    /// What stands between the name and the `=` of the "Children see" line: IOzone pads the
    /// readers' with one more tab.
    pub fn children_gap(self) -> &'static str {
        match self {
            Test::Read => " \t\t",
            _ => " \t",
        }
    }

    /// What stands between the name and the `=` of the "Parent sees" line: IOzone pads the
    /// readers', fwriters' and freaders' with one more tab.
    pub fn parent_gap(self) -> &'static str {
        match self {
            Test::Read | Test::Fwrite | Test::Fread => " \t\t",
            _ => " \t",
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
            Test::RecordRewrite => "Record rewrite",
            Test::Stride => "Stride read",
            Test::RandomRead => "Random read",
            Test::Mixed => "Mixed workload",
            Test::RandomWrite => "Random write",
            Test::Pwrite => "Pwrite",
            Test::Repwrite => "Re-Pwrite",
            Test::Pread => "Pread",
            Test::Repread => "Re-Pread",
            Test::Fwrite => "Fwrite",
            Test::Frewrite => "Re-Fwrite",
            Test::Fread => "Fread",
            Test::Freread => "Re-Fread",
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
            Test::RecordRewrite => "Record rewrite report",
            Test::Stride => "Stride read report",
            Test::RandomRead => "Random read report",
            Test::Mixed => "Mixed workload report",
            Test::RandomWrite => "Random write report",
            Test::Pwrite => "Pwrite report",
            Test::Repwrite => "Re-Pwrite report",
            Test::Pread => "Pread report",
            Test::Repread => "Re-Pread report",
            Test::Fwrite => "Fwrite report",
            Test::Frewrite => "Re-Fwrite report",
            Test::Fread => "Fread report",
            Test::Freread => "Re-Fread report",
        }
    }

    /// A short name for workload names and JSON: `initial-writers`.
    pub fn slug(self) -> String {
        self.children_name().replace(' ', "-")
    }

    /// The engine's calls for this test: pwrite()/pread() for the pwrite and pread tests, as
    /// IOzone's; read()/write() at the file position, with an lseek() where IOzone makes one
    /// (random, reverse and stride records), for the others, including fwrite/fread, which
    /// stdio with IOzone's one-record buffer turns into one read()/write() per record.
    pub fn engine(self) -> fslab_engine::workload::EngineKind {
        match self {
            Test::Pwrite | Test::Repwrite | Test::Pread | Test::Repread => fslab_engine::workload::EngineKind::Sync,
            _ => fslab_engine::workload::EngineKind::Seek,
        }
    }

    /// Whether the test writes (where `-e` puts an fsync).
    pub fn writes(self) -> bool {
        matches!(
            self,
            Test::Write
                | Test::Rewrite
                | Test::RandomWrite
                | Test::Mixed
                | Test::RecordRewrite
                | Test::Pwrite
                | Test::Repwrite
                | Test::Fwrite
                | Test::Frewrite
        )
    }

    /// Whether `-o` opens the test's file `O_SYNC`, as IOzone 3.487 does: every throughput
    /// child but the stdio ones; in single-process and automatic mode only the tests that write
    /// and the random reader (random_perf_test opens its file the same for both), not the
    /// sequential, backward, stride and pread readers.
    pub fn osync_with_o(self, throughput: bool) -> bool {
        match self {
            Test::Fwrite | Test::Frewrite | Test::Fread | Test::Freread => false,
            _ if throughput => true,
            Test::Read | Test::Reread | Test::Reverse | Test::Stride | Test::Pread | Test::Repread => false,
            _ => true,
        }
    }

    /// The re-run IOzone makes after this test (rewrite after write, re-read after read; in
    /// automatic mode also re-fwrite, re-fread, re-pwrite and re-pread), which `-+n` leaves out.
    pub fn retest(self, throughput: bool) -> Option<Test> {
        match self {
            Test::Write => Some(Test::Rewrite),
            Test::Read => Some(Test::Reread),
            Test::Fwrite if !throughput => Some(Test::Frewrite),
            Test::Fread if !throughput => Some(Test::Freread),
            Test::Pwrite if !throughput => Some(Test::Repwrite),
            Test::Pread if !throughput => Some(Test::Repread),
            _ => None,
        }
    }

    /// Whether each child writes its file from empty, as IOzone's throughput writers that create
    /// their files do (initial writers, and pwrite writers, whose `creat()` truncates the file);
    /// in automatic mode only the first write starts from empty, the pwrite and fwrite tests
    /// write over the file. A throughput fwriter opens the file there with `fopen("r+")` and
    /// writes over it too.
    pub fn from_empty(self, throughput: bool) -> bool {
        match self {
            Test::Write => true,
            Test::Pwrite => throughput,
            _ => false,
        }
    }
}

/// How the mixed workload (`-i 8`) makes each child a reader or a writer, and how those go
/// through their files, as IOzone 3.487's `thread_mix_test` decides.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Mix {
    /// `-+p N`: the first N × children ÷ 100 children read, the others write.
    pub read_percent: Option<u32>,
    /// `-+K N`: without `-+p`, the first N children read, the others write.
    pub readers: Option<u32>,
    /// `-+B`: the readers read their files from start to end and the writers write them so, as
    /// IOzone's readers and initial writers do, instead of a record at a time at random.
    pub sequential: bool,
    /// `-+F`: the sequential writers empty their files when they open them.
    pub truncate: bool,
}

impl Mix {
    /// What child `child` (0-based) of `children` runs as: a reader or writer, random or (with
    /// `-+B`) sequential. Without `-+p` or `-+K` the even-numbered children read.
    pub fn role(&self, child: usize, children: usize) -> Test {
        let reads = match (self.read_percent, self.readers) {
            (Some(pct), _) => child < pct as usize * children / 100,
            (None, Some(n)) => child < n as usize,
            (None, None) => child.is_multiple_of(2),
        };
        match (reads, self.sequential) {
            (true, false) => Test::RandomRead,
            (false, false) => Test::RandomWrite,
            (true, true) => Test::Read,
            (false, true) => Test::Write,
        }
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
    fn the_new_tests_follow_iozones_orders() {
        let t = Test::selected(&[10, 9, 7, 6, 0], &Test::THROUGHPUT_ORDER);
        assert_eq!(
            t.iter().map(|t| t.children_name()).collect::<Vec<_>>(),
            [
                "initial writers",
                "rewriters",
                "pwrite writers",
                "pread readers",
                "fwriters",
                "freaders"
            ]
        );
        let t = Test::selected(&[9, 4, 6, 5], &Test::AUTO_ORDER);
        assert_eq!(
            t,
            [
                Test::RecordRewrite,
                Test::Stride,
                Test::Fwrite,
                Test::Frewrite,
                Test::Pwrite,
                Test::Repwrite
            ]
        );
        assert!(Test::Pwrite.from_empty(true) && !Test::Pwrite.from_empty(false));
        assert!(Test::Write.from_empty(false) && !Test::Rewrite.from_empty(true));
    }

    #[test]
    fn report_names_fit_iozones_column() {
        for t in Test::AUTO_ORDER.iter().chain(&Test::THROUGHPUT_ORDER) {
            assert!(t.report_name().len() <= 15, "{}", t.report_name());
        }
    }
}
