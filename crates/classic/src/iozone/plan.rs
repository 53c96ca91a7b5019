//! From IOzone's options to the list of engine runs:
//! - throughput mode (`-t`): each sub-test one run of all children; with `-l`/`-u` or several
//!   `-t`, every sub-test again for each number of children, as IOzone's `multi_throughput_test`;
//! - automatic mode (`-a`): each file size × record size × test one run of one process;
//! - IOzone's plain single-process mode: one file size, one record size.

use super::compile::{self, Params};
use super::layout::Layout;
use super::options::{Options, UsageError};
use super::subtest::{Mix, Test};
use fslab_engine::workload::FinalSync;
use fslab_engine::Workload;
use std::fmt::Write;
use std::path::Path;

const KB: u64 = 1024;
/// Automatic mode leaves out records below 64 kB for files above 32 MB unless `-z` (as IOzone).
const CROSSOVER_FILE: u64 = 32 * KB * KB;
const CROSSOVER_RECORD: u64 = 64 * KB;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `-t N` (or `-l`/`-u`); `children` is the number IOzone's preamble names
    /// ([`Options::announced_children`]).
    Throughput { children: u32 },
    /// `-a`.
    Auto,
    /// Neither: one file size, one record size, one process, printed as automatic mode's table.
    Single,
}

/// One engine run.
#[derive(Debug, Clone)]
pub struct Step {
    pub test: Test,
    /// Throughput mode's children in this run (1 outside it).
    pub children: u32,
    /// The file size the user asked for (automatic mode's `kB` column).
    pub file_size: u64,
    pub record: u64,
    pub workload: Workload,
    /// Whether IOzone prints its figure: all but automatic mode's second backward read.
    pub reported: bool,
}

#[derive(Debug, Clone)]
pub struct Plan {
    pub opts: Options,
    pub mode: Mode,
    /// The files of the most children a run has ([`Layout::first`] gives a run's own).
    pub layout: Layout,
    /// The tests, in the order they run for each file and record size (with `-+n`, the re-runs
    /// are listed but have no steps: IOzone reports them as 0).
    pub tests: Vec<Test>,
    pub steps: Vec<Step>,
    /// What fslab does differently from IOzone for these options, for stderr.
    pub warnings: Vec<String>,
}

impl Plan {
    /// Plans the runs; `run_dir` is where the files go (`-F` names must lie beneath it).
    pub fn new(opts: &Options, run_dir: &Path) -> Result<Plan, UsageError> {
        let mode = match (opts.announced_children(), opts.auto) {
            (Some(children), _) => Mode::Throughput { children },
            (None, true) => Mode::Auto,
            (None, false) => Mode::Single,
        };
        let throughput = matches!(mode, Mode::Throughput { .. });
        let mut selection = opts.selected_tests();
        let mut warnings = Vec::new();
        // IOzone 3.487's automatic (and single) mode runs pwrite and pread only with -E.
        let extension_only = |n: &u32| matches!(n, 9 | 10);
        if !throughput && !opts.extension && selection.iter().any(extension_only) {
            const WHY: &str = "-i 9 and -i 10 (pwrite, pread) run without -t only with -E, as in IOzone 3.487";
            selection.retain(|n| !extension_only(n));
            if selection.is_empty() {
                return Err(UsageError(format!("{WHY}: add -E")));
            }
            warnings.push(format!("{WHY}: not run"));
        }
        // IOzone 3.487 leaves out, without a word, a test that has no place in its mode: record
        // rewrite in throughput mode, the mixed workload outside it.
        let (misplaced, why) = if throughput {
            (4, "-i 4 (record rewrite) runs only without -t")
        } else {
            (8, "-i 8 (the mixed workload) runs only with -t")
        };
        if selection.contains(&misplaced) {
            selection.retain(|&n| n != misplaced);
            if selection.is_empty() {
                return Err(UsageError(format!("{why}: nothing is left to run")));
            }
            warnings.push(format!("{why}, and IOzone 3.487 leaves it out: not run"));
        }
        let order: &[Test] = match mode {
            Mode::Throughput { .. } => &Test::THROUGHPUT_ORDER,
            _ => &Test::AUTO_ORDER,
        };
        let tests = Test::selected(&selection, order);
        let layout = match opts.most_children() {
            Some(children) => {
                if opts.files.is_empty() {
                    Layout::simple(children, "iozone.DUMMY.")
                } else {
                    Layout::named(&opts.files, run_dir, "-F")?
                }
            }
            _ => match &opts.file {
                None => Layout::single("iozone.tmp"),
                Some(f) => Layout::named(std::slice::from_ref(f), run_dir, "-f")?,
            },
        };
        warnings.extend(engine_notes(&tests));
        if opts.close && throughput && tests.contains(&Test::Write) && !opts.no_stonewall {
            warnings.push(
                "-c: a stonewalled initial writer finishes its file on the descriptor it has, where IOzone closes the \
                 file and opens it again first"
                    .into(),
            );
        }
        if opts.mix != Mix::default() && !tests.contains(&Test::Mixed) {
            warnings.push("-+p, -+K, -+B and -+F shape the mixed workload (-i 8), which is not run".into());
        } else if opts.mix.truncate && !opts.mix.sequential {
            warnings.push("-+F empties the files of -+B's sequential writers: without -+B it changes nothing".into());
        }
        if !selection.contains(&0) {
            warnings.push(
                "without -i 0 the files are written before the first test, untimed (or kept from an earlier run with -w)"
                    .into(),
            );
        }
        let base = Params {
            file_size: 0,
            record: 0,
            fsync: opts.fsync,
            close: opts.close,
            direct: opts.direct,
            osync: opts.osync,
            stonewall: throughput && !opts.no_stonewall,
            stride: opts.stride,
            mix: opts.mix,
            seed: opts.seed,
            final_sync: if throughput {
                FinalSync::Outside
            } else {
                FinalSync::None
            },
            throughput,
            processes: throughput && !opts.posix_threads,
            origin: opts.command_line.clone(),
        };
        let counts = if throughput { opts.child_counts() } else { vec![1] };
        let several = counts.len() > 1;
        let mut steps = Vec::new();
        for &children in &counts {
            let layout = layout.first(children as usize);
            for (file_size, record) in combinations(opts, mode) {
                let whole = file_size / record * record;
                if whole != file_size && mode != Mode::Auto {
                    let note = format!(
                        "the file size is taken as {} kB, a whole number of {} kB records",
                        whole / KB,
                        record / KB
                    );
                    if !warnings.contains(&note) {
                        warnings.push(note);
                    }
                }
                let p = Params {
                    file_size: whole,
                    record,
                    ..base.clone()
                };
                for &test in &tests {
                    // -+n: IOzone makes no re-runs (and reports them as 0).
                    if opts.no_retests && tests.iter().any(|t| t.retest(throughput) == Some(test)) {
                        continue;
                    }
                    let name = match mode {
                        Mode::Throughput { .. } if several => format!("iozone-{children}-{}", test.slug()),
                        Mode::Throughput { .. } => format!("iozone-{}", test.slug()),
                        _ => format!("iozone-{}k-{}k-{}", file_size / KB, record / KB, test.slug()),
                    };
                    let workload = compile::workload(test, &p, &layout, &name);
                    // IOzone 3.487's automatic (and single) mode reads the file backwards twice,
                    // each pass opening, timing and closing it, and reports the first.
                    let again = test == Test::Reverse && !throughput && !opts.no_retests;
                    steps.push(Step {
                        test,
                        children,
                        file_size,
                        record,
                        workload: workload.clone(),
                        reported: true,
                    });
                    if again {
                        steps.push(Step {
                            test,
                            children,
                            file_size,
                            record,
                            workload: Workload {
                                name: format!("{name}-again"),
                                ..workload
                            },
                            reported: false,
                        });
                    }
                }
            }
            // The last run of each number of children removes its files, as IOzone's cleanup
            // after each throughput test.
            if !opts.keep {
                if let Some(last) = steps.last_mut() {
                    last.workload.cleanup = true;
                }
            }
        }
        Ok(Plan {
            opts: opts.clone(),
            mode,
            layout,
            tests,
            steps,
            warnings,
        })
    }

    /// The record sizes automatic mode's `-R` report heads each test with: the one record size
    /// (`-r`, or outside automatic mode), or every size from `-y` to `-q`, as IOzone 3.487 lists
    /// them, including those a file size skipped.
    pub fn report_records(&self) -> Vec<u64> {
        if self.mode == Mode::Auto && !self.opts.record_given {
            doubling(self.opts.min_record, self.opts.max_record)
        } else {
            vec![self.opts.record]
        }
    }

    /// `--explain`: every run as native TOML, in order, each headed by a comment.
    pub fn explain(&self) -> String {
        let mut s = String::from(super::DIFFERENCES);
        let _ = writeln!(s, "# {}", self.opts.command_line);
        let _ = writeln!(
            s,
            "# {} engine run(s); the children's files (beneath the run directory):",
            self.steps.len()
        );
        for i in 0..self.layout.children() {
            let _ = writeln!(s, "#   child {i}: {}", self.layout.child_file(i));
        }
        if matches!(self.mode, Mode::Throughput { .. }) {
            let _ = writeln!(
                s,
                "# between runs: sync() (final_sync = \"outside\") and a pause of {:?}; after the last, sync(), the pause and sync() again",
                self.opts.pause
            );
        } else {
            let _ = writeln!(
                s,
                "# each run made by fslab's one thread, with no other beside it, as by IOzone's one process"
            );
            let _ = writeln!(s, "# before the first run of each file and record size: sync() twice");
        }
        let _ = writeln!(
            s,
            "# times are IOzone's: the clock's less its resolution (1 us), never less than 1 us"
        );
        for w in &self.warnings {
            let _ = writeln!(s, "# note: {w}");
        }
        for (k, step) in self.steps.iter().enumerate() {
            let _ = writeln!(
                s,
                "\n# ---- run {}: {} ({} kB file, {} kB records) ----",
                k + 1,
                self.step_name(step),
                step.file_size / KB,
                step.record / KB
            );
            s.push_str(&step.workload.to_toml());
        }
        s
    }

    /// What IOzone prints before its results, line for line: its banner, when the run began,
    /// what it made of the options, the command line, the units, its clock's resolution, the
    /// cache sizes it assumes, the stride and the shape of the test. A job of `ranks` ranks
    /// (`crate::job`) has every rank's children.
    pub fn preamble(&self, ranks: usize) -> String {
        self.preamble_at(&ctime_now(), ranks)
    }

    /// [`preamble`](Self::preamble) with `began` (a ctime(3) string) as the start of the run.
    pub fn preamble_at(&self, began: &str, ranks: usize) -> String {
        let mut s = String::from(BANNER);
        let _ = writeln!(s, "\tRun began: {began}\n");
        for n in &self.opts.notes {
            let _ = writeln!(s, "\t{n}");
        }
        let _ = writeln!(s, "\tCommand line used: {}", self.opts.command_line);
        if !self.opts.ops_mode {
            // With -O, the note "OPS Mode. Output is in operations per second." says it.
            s.push_str("\tOutput is in kBytes/sec\n");
        }
        // IOzone measures gettimeofday()'s resolution (a microsecond on Linux) and assumes a
        // 1 MB processor cache of 32-byte lines unless -S and -L say otherwise.
        s.push_str("\tTime Resolution = 0.000001 seconds.\n");
        s.push_str("\tProcessor cache size set to 1024 kBytes.\n");
        s.push_str("\tProcessor cache line size set to 32 bytes.\n");
        let _ = writeln!(s, "\tFile stride size set to {} * record size.", self.opts.stride);
        if self.opts.lower.is_some() || self.opts.upper.is_some() {
            let counts = self.opts.child_counts();
            let word = self.opts.children_word(false);
            let _ = writeln!(s, "\tMin {word} = {} ", counts[0]);
            let _ = writeln!(s, "\tMax {word} = {} ", counts[counts.len() - 1]);
        }
        if let Mode::Throughput { children } = self.mode {
            // "1 process", "2 processes"; with -T "thread(s)".
            let children = children as usize * ranks.max(1);
            let word = self.opts.children_word(children > 1);
            let _ = writeln!(s, "\tThroughput test with {children} {word}");
            s.push_str(&self.each_writes());
        }
        s
    }

    /// The line IOzone's throughput test begins with, for each number of children.
    pub fn each_writes(&self) -> String {
        format!(
            "\tEach {} writes a {} kByte file in {} kByte records\n",
            self.opts.children_word(false),
            self.opts.file_size / self.opts.record * self.opts.record / KB,
            self.opts.record / KB
        )
    }

    /// A step's name in the outcome's phases and metrics: IOzone's name for its children
    /// ("initial writers"), with their number in front when the plan runs several numbers
    /// ("4 initial writers").
    pub fn step_name(&self, step: &Step) -> String {
        let name = step.test.children_name();
        if self.opts.child_counts().len() > 1 {
            format!("{} {name}", step.children)
        } else {
            name.to_string()
        }
    }
}

/// IOzone 3.487's banner, as its 64-bit Linux build (`make linux-AMD64`) prints it.
pub const BANNER: &str = "\tIozone: Performance Test of File I/O
\t        Version $Revision: 3.487 $
\t\tCompiled for 64 bit mode.
\t\tBuild: linux-AMD64 

\tContributors:William Norcott, Don Capps, Isom Crawford, Kirby Collins
\t             Al Slater, Scott Rhine, Mike Wisner, Ken Goss
\t             Steve Landherr, Brad Smith, Mark Kelly, Dr. Alain CYR,
\t             Randy Dunlap, Mark Montague, Dan Million, Gavin Brebner,
\t             Jean-Marc Zucconi, Jeff Blomberg, Benny Halevy, Dave Boone,
\t             Erik Habbinga, Kris Strecker, Walter Wong, Joshua Root,
\t             Fabrice Bacchella, Zhenghua Xue, Qin Li, Darren Sawyer,
\t             Vangel Bojaxhi, Ben England, Vikentsi Lapa,
\t             Alexey Skidanov, Sudhir Kumar.

";

/// The local time now as ctime(3) gives it, without its newline: `Wed Nov 25 18:36:47 2026`.
fn ctime_now() -> String {
    let mut buf = [0u8; 64];
    // SAFETY: time() with a null pointer only returns; localtime_r() writes the struct given;
    // strftime() writes at most buf.len() bytes into buf and returns how many it wrote.
    let n = unsafe {
        let t = libc::time(std::ptr::null_mut());
        let mut tm: libc::tm = std::mem::zeroed();
        if libc::localtime_r(&t, &mut tm).is_null() {
            return String::new();
        }
        libc::strftime(
            buf.as_mut_ptr().cast(),
            buf.len(),
            c"%a %b %e %H:%M:%S %Y".as_ptr(),
            &tm,
        )
    };
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

/// How the engine runs the tests IOzone makes with other system calls.
fn engine_notes(tests: &[Test]) -> Vec<String> {
    let mut notes = Vec::new();
    if tests.iter().any(|t| t.number() == 6 || t.number() == 7) {
        notes.push(
            "-i 6/-i 7: IOzone gives stdio a one-record buffer, so each fwrite()/fread() is one write()/read() of a record; fslab makes those calls, without stdio"
                .to_string(),
        );
    }
    notes
}

/// The (file size, record size) pairs to run.
fn combinations(opts: &Options, mode: Mode) -> Vec<(u64, u64)> {
    if mode != Mode::Auto {
        return vec![(opts.file_size, opts.record)];
    }
    let sizes: Vec<u64> = if opts.file_size_given {
        vec![opts.file_size]
    } else {
        doubling(opts.min_file, opts.max_file)
    };
    let mut out = Vec::new();
    for size in sizes {
        let records: Vec<u64> = if opts.record_given {
            vec![opts.record]
        } else {
            doubling(opts.min_record, opts.max_record.min(size))
        };
        for r in records {
            if r > size {
                continue;
            }
            if !opts.all_records && !opts.record_given && size > CROSSOVER_FILE && r < CROSSOVER_RECORD {
                continue;
            }
            out.push((size, r));
        }
    }
    out
}

fn doubling(from: u64, to: u64) -> Vec<u64> {
    let mut v = Vec::new();
    let mut x = from;
    while x <= to {
        v.push(x);
        // Sizes near the top of u64 end the list rather than wrap around to 0 (and loop).
        match x.checked_mul(2) {
            Some(next) => x = next,
            None => break,
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(s: &str) -> Plan {
        let args: Vec<String> = s.split_whitespace().map(String::from).collect();
        Plan::new(&Options::parse(&args).unwrap(), Path::new(".")).unwrap()
    }

    #[test]
    fn seed_004_plans_six_sub_tests() {
        let p = plan("-i 0 -i 1 -i 2 -t 16 -s 2000m -r 64k -e -C -R -w");
        let names: Vec<_> = p.steps.iter().map(|s| s.test.children_name()).collect();
        assert_eq!(
            names,
            [
                "initial writers",
                "rewriters",
                "readers",
                "re-readers",
                "random readers",
                "random writers"
            ]
        );
        assert!(p.steps.iter().all(|s| s.workload.stop.stonewall));
        assert!(p.steps.iter().all(|s| !s.workload.cleanup), "-w keeps the files");
        assert_eq!(p.layout.children(), 16);
        assert!(p
            .preamble(1)
            .contains("Each process writes a 2048000 kByte file in 64 kByte records"));
    }

    #[test]
    fn the_preamble_is_iozones_line_for_line() {
        let p = plan("-i 0 -t 2 -s 1m -r 64k -w");
        let text = p.preamble_at("Wed Nov 25 18:36:47 2026", 1);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "\tIozone: Performance Test of File I/O");
        assert_eq!(lines[1], "\t        Version $Revision: 3.487 $");
        assert_eq!(lines[3], "\t\tBuild: linux-AMD64 ");
        assert_eq!(lines[4], "");
        assert!(lines[5].starts_with("\tContributors:William Norcott, Don Capps"));
        assert_eq!(lines[13], "\t             Alexey Skidanov, Sudhir Kumar.");
        assert_eq!(
            &lines[14..],
            [
                "",
                "\tRun began: Wed Nov 25 18:36:47 2026",
                "",
                "\tFile size set to 1024 kB",
                "\tRecord Size 64 kB",
                "\tSetting no_unlink",
                "\tCommand line used: iozone -i 0 -t 2 -s 1m -r 64k -w",
                "\tOutput is in kBytes/sec",
                "\tTime Resolution = 0.000001 seconds.",
                "\tProcessor cache size set to 1024 kBytes.",
                "\tProcessor cache line size set to 32 bytes.",
                "\tFile stride size set to 17 * record size.",
                "\tThroughput test with 2 processes",
                "\tEach process writes a 1024 kByte file in 64 kByte records",
            ]
        );
        // With -O the note says the unit; -j sets the stride.
        let text = plan("-i 0 -t 2 -O -j 5").preamble_at("x", 1);
        assert!(text.contains("\tOPS Mode. Output is in operations per second.\n"));
        assert!(!text.contains("Output is in kBytes/sec"));
        assert!(text.contains("\tFile stride size set to 5 * record size.\n"));
        assert_eq!(
            text.matches("File stride size").count(),
            1,
            "no note of -j's own: {text}"
        );
        // The real clock gives ctime's shape: `Wed Nov 25 18:36:47 2026`.
        let began = ctime_now();
        assert_eq!(began.len(), 24, "{began:?}");
        assert_eq!(began.as_bytes()[19], b' ');
    }

    /// Why [`Plan::new`] refuses the options `args` (which parse).
    fn refused(args: &str) -> String {
        let args: Vec<String> = args.split(' ').map(String::from).collect();
        Plan::new(&Options::parse(&args).unwrap(), Path::new("."))
            .unwrap_err()
            .0
    }

    /// Asserts that one of `plan`'s warnings starts with `start`.
    fn warns(plan: &Plan, start: &str) {
        assert!(
            plan.warnings.iter().any(|w| w.starts_with(start)),
            "{:?}",
            plan.warnings
        );
    }

    #[test]
    fn pwrite_and_pread_run_in_automatic_mode_only_with_e() {
        let without = plan("-a -n 64k -g 64k -i 0 -i 9 -i 10");
        assert_eq!(without.tests, vec![Test::Write, Test::Rewrite]);
        warns(&without, "-i 9 and -i 10 (pwrite, pread) run without -t only with -E");
        let with = plan("-a -E -n 64k -g 64k -i 0 -i 9");
        assert_eq!(
            with.tests,
            vec![Test::Write, Test::Rewrite, Test::Pwrite, Test::Repwrite]
        );
        // Without -i, -E adds them to the tests IOzone runs.
        assert!(plan("-a -E -n 64k -g 64k").tests.contains(&Test::Pread));
        assert!(!plan("-a -n 64k -g 64k").tests.contains(&Test::Pread));
        // Throughput mode runs them either way; alone, without -E, there is nothing to run.
        assert!(plan("-t 1 -i 9").tests.contains(&Test::Pwrite));
        assert!(refused("-a -i 9").ends_with("add -E"));
    }

    #[test]
    fn a_test_out_of_its_mode_is_left_out_with_a_warning_as_iozone_leaves_it() {
        let single = plan("-s 64k -i 0 -i 8");
        assert_eq!(single.tests, vec![Test::Write, Test::Rewrite]);
        warns(&single, "-i 8 (the mixed workload) runs only with -t");
        let throughput = plan("-t 2 -s 64k -i 0 -i 4");
        assert_eq!(throughput.tests, vec![Test::Write, Test::Rewrite]);
        warns(&throughput, "-i 4 (record rewrite) runs only without -t");
        // Where they belong they run, without a word.
        assert!(plan("-t 2 -s 64k -i 0 -i 8").tests.contains(&Test::Mixed));
        assert!(plan("-s 64k -i 0 -i 4").warnings.iter().all(|w| !w.contains("-i 4")));
        // Alone, nothing is left.
        assert!(refused("-i 8").ends_with("nothing is left to run"));
    }

    #[test]
    fn automatic_mode_reads_backwards_twice_and_reports_the_first() {
        let reverse = |p: &Plan| {
            p.steps
                .iter()
                .filter(|s| s.test == Test::Reverse)
                .map(|s| (s.reported, s.workload.name.clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            reverse(&plan("-a -n 64k -g 64k -y 4k -q 4k -i 0 -i 3")),
            vec![
                (true, "iozone-64k-4k-reverse-readers".to_string()),
                (false, "iozone-64k-4k-reverse-readers-again".to_string())
            ]
        );
        assert_eq!(reverse(&plan("-i 0 -i 3 -s 64k -r 4k")).len(), 2, "single mode too");
        assert_eq!(
            reverse(&plan("-t 2 -i 0 -i 3 -s 64k -r 4k")),
            vec![(true, "iozone-reverse-readers".to_string())],
            "throughput mode's reverse readers read once"
        );
    }

    #[test]
    fn no_retests_leaves_the_re_runs_out() {
        let tests = |p: &Plan| p.steps.iter().map(|s| s.test).collect::<Vec<_>>();
        let p = plan("-t 2 -i 0 -i 1 -i 6 -+n");
        assert_eq!(tests(&p), vec![Test::Write, Test::Read, Test::Fwrite]);
        assert!(p.tests.contains(&Test::Rewrite), "listed, for the report's 0");
        let p = plan("-a -E -n 64k -g 64k -y 4k -q 4k -i 0 -i 3 -i 6 -i 7 -i 9 -i 10 -+n");
        assert_eq!(
            tests(&p),
            vec![
                Test::Write,
                Test::Reverse,
                Test::Fwrite,
                Test::Fread,
                Test::Pwrite,
                Test::Pread
            ],
            "one backward read too"
        );
    }

    #[test]
    fn mixed_workload_options_without_it_are_named() {
        let unused = "-+p, -+K, -+B and -+F shape the mixed workload (-i 8), which is not run";
        assert!(plan("-i 0 -i 2 -t 2 -+B").warnings.iter().any(|w| w == unused));
        let no_b = "-+F empties the files of -+B's sequential writers: without -+B it changes nothing";
        assert!(plan("-i 0 -i 8 -t 2 -+F").warnings.iter().any(|w| w == no_b));
        let p = plan("-i 0 -i 8 -t 2 -+B -+F");
        assert!(!p.warnings.iter().any(|w| w.contains("-+")), "{:?}", p.warnings);
    }

    #[test]
    fn without_w_the_last_run_removes_the_files() {
        let p = plan("-i 0 -t 2 -x");
        assert!(p.steps.last().unwrap().workload.cleanup);
        assert!(!p.steps[0].workload.cleanup);
        assert!(p.steps.iter().all(|s| !s.workload.stop.stonewall));
    }

    #[test]
    fn doubling_stops_at_the_top_of_u64() {
        assert_eq!(doubling(1 << 62, u64::MAX), vec![1 << 62, 1 << 63]);
        assert_eq!(doubling(3, 20), vec![3, 6, 12]);
    }

    #[test]
    fn auto_mode_doubles_sizes_and_records() {
        let p = plan("-a -n 64k -g 256k -y 4k -q 128k -i 0");
        let combos: Vec<(u64, u64)> = p
            .steps
            .iter()
            .filter(|s| s.test == Test::Write)
            .map(|s| (s.file_size / KB, s.record / KB))
            .collect();
        assert_eq!(
            combos,
            [
                (64, 4),
                (64, 8),
                (64, 16),
                (64, 32),
                (64, 64),
                (128, 4),
                (128, 8),
                (128, 16),
                (128, 32),
                (128, 64),
                (128, 128),
                (256, 4),
                (256, 8),
                (256, 16),
                (256, 32),
                (256, 64),
                (256, 128)
            ]
        );
        assert_eq!(p.steps.len(), 2 * combos.len());
    }

    #[test]
    fn auto_mode_skips_small_records_for_large_files_unless_z() {
        let p = plan("-a -n 64m -g 64m -i 0");
        assert!(p.steps.iter().all(|s| s.record >= 64 * KB));
        let p = plan("-a -n 64m -g 64m -i 0 -z");
        assert!(p.steps.iter().any(|s| s.record == 4 * KB));
    }
}
