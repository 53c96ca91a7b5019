//! IOzone's command line: single-dash letters in getopt style, values attached or separate
//! (`-s2000m` and `-s 2000m`, `-i0`, `-t16`), flags that may be grouped (`-eCRw`), and the few
//! `-+x` options. Sizes are in kB (1024 bytes) unless they carry a `k`, `m` or `g` suffix.
//!
//! fslab's own options are long ones: `--seed N` and the hidden `--pause SPAN` (the pause
//! between throughput sub-tests, 2 s as in IOzone); `--dir DIR`, `--json` and the other flags
//! every front-end takes are [`Common`](crate::contract::Common)'s, taken out before.

use super::subtest::Mix;
use fslab_engine::Span;
use std::time::Duration;

const KB: u64 = 1024;

/// Everything the command line asks for. Sizes are bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// `-i N`, in the order given (duplicates kept out).
    pub tests: Vec<u32>,
    /// `-s`: file size (default 512 kB).
    pub file_size: u64,
    /// `-r`: record size (default 4 kB).
    pub record: u64,
    /// Whether `-s` and `-r` were given (automatic mode then tests only that size).
    pub file_size_given: bool,
    pub record_given: bool,
    /// Each `-t N`, in order: throughput mode, a run of every sub-test with N children for each.
    pub t_counts: Vec<u32>,
    /// `-l N`, `-u N`: throughput mode with N children for each N from the lower (default 1) to
    /// the upper (default the lower).
    pub lower: Option<u32>,
    pub upper: Option<u32>,
    /// `-a`: automatic mode.
    pub auto: bool,
    /// `-n`, `-g`: smallest and largest file size of automatic mode (64 kB, 512 MB).
    pub min_file: u64,
    pub max_file: u64,
    /// `-y`, `-q`: smallest and largest record size of automatic mode (4 kB, 16 MB).
    pub min_record: u64,
    pub max_record: u64,
    /// `-z`: in automatic mode, keep small records for large files too.
    pub all_records: bool,
    /// `-e`: fsync inside the write timing.
    pub fsync: bool,
    /// `-c`: close inside the timing, with no untimed fsync before it.
    pub close: bool,
    /// `-C`: a line per child.
    pub per_child: bool,
    /// `-R`: the Excel-style report.
    pub excel: bool,
    /// `-w`: keep the files.
    pub keep: bool,
    /// `-I`: O_DIRECT.
    pub direct: bool,
    /// `-o`: O_SYNC.
    pub osync: bool,
    /// `-x`: no stonewalling.
    pub no_stonewall: bool,
    /// `-T`: throughput mode's children are threads of one process (POSIX threads), not
    /// processes.
    pub posix_threads: bool,
    /// `-O`: results in operations per second.
    pub ops_mode: bool,
    /// `-+n`: no re-runs (rewrite, re-read and the others [`Test::retest`] names): IOzone
    /// reports them as 0.
    ///
    /// [`Test::retest`]: super::Test::retest
    pub no_retests: bool,
    /// `-+u`: each child's (or automatic mode's process's) CPU use, and with `-R` its reports.
    pub cpu_util: bool,
    /// `-E`: IOzone's extension tests, pwrite and pread (`-i 9`, `-i 10`), in automatic mode.
    pub extension: bool,
    /// `-j N`: the stride of the stride read, in records (default 17).
    pub stride: u64,
    /// `-+p N`, `-+K N`, `-+B`, `-+F`: which of the mixed workload's children read and which
    /// write, and how.
    pub mix: Mix,
    /// `-F name...`: one file per child.
    pub files: Vec<String>,
    /// `-f name`: the file of automatic and single-process mode.
    pub file: Option<String>,
    /// `-h`: print the usage.
    pub help: bool,
    pub seed: Option<u64>,
    /// `--pause`: between throughput sub-tests, after the sync.
    pub pause: Duration,
    /// What IOzone says about each option as it reads it, in order (its preamble).
    pub notes: Vec<String>,
    /// The command line as given, for the preamble.
    pub command_line: String,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            tests: Vec::new(),
            file_size: 512 * KB,
            record: 4 * KB,
            file_size_given: false,
            record_given: false,
            t_counts: Vec::new(),
            lower: None,
            upper: None,
            auto: false,
            min_file: 64 * KB,
            max_file: 512 * KB * KB,
            min_record: 4 * KB,
            max_record: 16 * KB * KB,
            all_records: false,
            fsync: false,
            close: false,
            per_child: false,
            excel: false,
            keep: false,
            direct: false,
            osync: false,
            no_stonewall: false,
            posix_threads: false,
            ops_mode: false,
            no_retests: false,
            cpu_util: false,
            extension: false,
            stride: 17,
            mix: Mix::default(),
            files: Vec::new(),
            file: None,
            help: false,
            seed: None,
            pause: Duration::from_secs(2),
            notes: Vec::new(),
            command_line: String::new(),
        }
    }
}

/// A command line that cannot be run: the option at fault and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

fn usage(msg: impl Into<String>) -> UsageError {
    UsageError(msg.into())
}

/// Options that take a value (the rest of their word, or the next word).
const WITH_VALUE: &[char] = &['i', 's', 'r', 't', 'l', 'u', 'n', 'g', 'y', 'q', 'j', 'f'];
/// Options that take no value.
const FLAGS: &[char] = &['a', 'z', 'e', 'c', 'C', 'R', 'w', 'I', 'o', 'x', 'O', 'h', 'T', 'E'];
/// IOzone options fslab knows but does not offer, with the reason.
const NOT_OFFERED: &[(char, &str)] = &[
    ('b', "the binary Excel file; use -R for the report on stdout"),
    ('A', "use -a"),
    ('m', "multiple buffers are not modelled"),
    ('M', "use fslab's system information in --json"),
    ('k', "POSIX async I/O is not modelled"),
    ('K', "use -i 2"),
    ('p', "cache purging is not modelled"),
    ('Q', "offset/latency files are not written; use --json for latencies"),
    ('U', "remounting is the lab's job"),
    ('B', "use the mmap engine of `fslab run`"),
    ('D', "use the mmap engine of `fslab run`"),
    ('G', "use the mmap engine of `fslab run`"),
    ('L', "cache line sizes are not modelled"),
    ('S', "cache sizes are not modelled"),
    ('W', "file locking is not modelled"),
    ('Z', "mixing mmap and file I/O is not modelled"),
    ('N', "use -O for ops/s; latencies are in --json"),
    ('P', "CPU binding is not modelled"),
    ('X', "telemetry files are not read"),
    ('Y', "telemetry files are not read"),
    ('V', "use the engine's seeded data"),
    ('v', "this is fslab iozone, modelled on IOzone 3.487"),
    ('d', "use -t; children start together at a barrier"),
    ('J', "use -t"),
    ('H', "POSIX async I/O is not modelled"),
];

impl Options {
    /// Parses IOzone's options (everything after `fslab iozone`).
    pub fn parse(args: &[String]) -> Result<Options, UsageError> {
        let mut o = Options::default();
        // IOzone's own words, for "Command line used" (fslab's long options left out).
        let mut iozone_words: Vec<&str> = vec!["iozone"];
        let mut i = 0;
        let mut start = 0;
        while i < args.len() {
            iozone_words.extend(args[start..i].iter().map(String::as_str));
            start = i;
            let word = &args[i];
            i += 1;
            if let Some(long) = word.strip_prefix("--") {
                let (name, inline) = match long.split_once('=') {
                    Some((n, v)) => (n, Some(v.to_string())),
                    None => (long, None),
                };
                let mut value = |what: &str| -> Result<String, UsageError> {
                    if let Some(v) = &inline {
                        return Ok(v.clone());
                    }
                    let v = args
                        .get(i)
                        .ok_or_else(|| usage(format!("option --{name} needs {what}")))?;
                    i += 1;
                    Ok(v.clone())
                };
                match name {
                    "help" => o.help = true,
                    "seed" => {
                        let v = value("a number")?;
                        o.seed = Some(
                            v.parse()
                                .map_err(|_| usage(format!("option --seed: `{v}` is not a number")))?,
                        );
                    }
                    "pause" => {
                        let v = value("a duration")?;
                        o.pause = v
                            .parse::<Span>()
                            .map_err(|e| usage(format!("option --pause: {e}")))?
                            .get();
                    }
                    _ => return Err(usage(format!("unknown option `--{name}` (see fslab iozone -h)"))),
                }
                start = i;
                continue;
            }
            let Some(letters) = word.strip_prefix('-').filter(|l| !l.is_empty()) else {
                return Err(usage(format!(
                    "unexpected argument `{word}`: IOzone takes options only (see fslab iozone -h)"
                )));
            };
            if let Some(plus) = letters.strip_prefix('+') {
                i = o.plus_option(plus, args, i)?;
                continue;
            }
            let chars: Vec<char> = letters.chars().collect();
            let mut k = 0;
            while k < chars.len() {
                let c = chars[k];
                k += 1;
                if FLAGS.contains(&c) {
                    o.flag(c);
                    continue;
                }
                if WITH_VALUE.contains(&c) {
                    let attached: String = chars[k..].iter().collect();
                    let value = if !attached.is_empty() {
                        attached
                    } else {
                        let v = args
                            .get(i)
                            .filter(|v| !v.starts_with('-') || v[1..].starts_with(|d: char| d.is_ascii_digit()))
                            .ok_or_else(|| usage(format!("option -{c} needs a value")))?;
                        i += 1;
                        v.clone()
                    };
                    o.valued(c, &value)?;
                    k = chars.len();
                    continue;
                }
                if c == 'F' {
                    // One name per child: every word up to the next option.
                    let attached: String = chars[k..].iter().collect();
                    if !attached.is_empty() {
                        o.files.push(attached);
                    }
                    while let Some(name) = args.get(i).filter(|a| !a.starts_with('-')) {
                        o.files.push(name.clone());
                        i += 1;
                    }
                    if o.files.is_empty() {
                        return Err(usage("option -F needs one file name per child (-t)"));
                    }
                    k = chars.len();
                    continue;
                }
                if let Some((_, why)) = NOT_OFFERED.iter().find(|(n, _)| *n == c) {
                    return Err(usage(format!("option -{c} is not offered by fslab iozone: {why}")));
                }
                return Err(usage(format!("unknown option `-{c}` (see fslab iozone -h)")));
            }
        }
        iozone_words.extend(args[start..].iter().map(String::as_str));
        o.command_line = iozone_words.join(" ");
        o.check()?;
        Ok(o)
    }

    fn flag(&mut self, c: char) {
        let note = match c {
            'a' => {
                self.auto = true;
                "Auto Mode"
            }
            'z' => {
                self.all_records = true;
                "Cross over of record size disabled."
            }
            'e' => {
                self.fsync = true;
                "Include fsync in write timing"
            }
            'c' => {
                self.close = true;
                "Include close in write timing"
            }
            'C' => {
                self.per_child = true;
                return;
            }
            'R' => {
                self.excel = true;
                "Excel chart generation enabled"
            }
            'w' => {
                self.keep = true;
                "Setting no_unlink"
            }
            'I' => {
                self.direct = true;
                "O_DIRECT feature enabled"
            }
            'o' => {
                self.osync = true;
                "SYNC Mode. "
            }
            'x' => {
                self.no_stonewall = true;
                "Stonewall disabled"
            }
            'O' => {
                self.ops_mode = true;
                "OPS Mode. Output is in operations per second."
            }
            'h' => {
                self.help = true;
                return;
            }
            'T' => {
                // IOzone prints nothing for it.
                self.posix_threads = true;
                return;
            }
            'E' => {
                // IOzone prints nothing for it either.
                self.extension = true;
                return;
            }
            _ => return,
        };
        self.notes.push(note.to_string());
    }

    fn valued(&mut self, c: char, v: &str) -> Result<(), UsageError> {
        match c {
            'i' => {
                let n: u32 = v
                    .parse()
                    .map_err(|_| usage(format!("option -i: `{v}` is not a test number (0 to 12)")))?;
                if n > 12 {
                    return Err(usage(format!(
                        "option -i: there is no test {n} (the tests are 0 to 12)"
                    )));
                }
                if !self.tests.contains(&n) {
                    self.tests.push(n);
                }
            }
            's' => {
                self.file_size = kb_size('s', v)?;
                self.file_size_given = true;
                self.notes.push(format!("File size set to {} kB", self.file_size / KB));
            }
            'r' => {
                self.record = kb_size('r', v)?;
                self.record_given = true;
                self.notes.push(format!("Record Size {} kB", self.record / KB));
            }
            't' | 'l' | 'u' => {
                let n: u32 = v
                    .parse()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| usage(format!("option -{c}: `{v}` is not a number of children (1 or more)")))?;
                if n > MAX_CHILDREN {
                    return Err(usage(format!(
                        "option -{c}: {n} children is more than IOzone's maximum of {MAX_CHILDREN} (its MAXSTREAMS)"
                    )));
                }
                match c {
                    't' => self.t_counts.push(n),
                    'l' => self.lower = Some(n),
                    _ => self.upper = Some(n),
                }
            }
            'n' => {
                self.min_file = kb_size('n', v)?;
                self.notes
                    .push(format!("Using minimum file size of {} kilobytes.", self.min_file / KB));
            }
            'g' => {
                self.max_file = kb_size('g', v)?;
                self.notes
                    .push(format!("Using maximum file size of {} kilobytes.", self.max_file / KB));
            }
            'y' => {
                self.min_record = kb_size('y', v)?;
                self.notes
                    .push(format!("Using Minimum Record Size {} kB", self.min_record / KB));
            }
            'q' => {
                self.max_record = kb_size('q', v)?;
                self.notes
                    .push(format!("Using Maximum Record Size {} kB", self.max_record / KB));
            }
            'j' => {
                self.stride = v
                    .parse()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| usage(format!("option -j: `{v}` is not a stride (1 or more records)")))?;
                // IOzone prints no note for it: its preamble's stride line says it.
            }
            'f' => self.file = Some(v.to_string()),
            _ => unreachable!("listed in WITH_VALUE"),
        }
        Ok(())
    }

    /// `-+x` options; returns the index of the next word.
    fn plus_option(&mut self, rest: &str, args: &[String], mut i: usize) -> Result<usize, UsageError> {
        let mut chars = rest.chars();
        let Some(c) = chars.next() else {
            return Err(usage("option `-+` names no option"));
        };
        // The value of -+p and -+K: the rest of the word, or the next word.
        let mut value = |what: &str| -> Result<String, UsageError> {
            let attached: String = chars.clone().collect();
            if !attached.is_empty() {
                return Ok(attached);
            }
            let v = args.get(i).ok_or_else(|| usage(format!("option -+{c} needs {what}")))?;
            i += 1;
            Ok(v.clone())
        };
        match c {
            'p' => {
                let v = value("a percentage")?;
                let percent: u32 = v
                    .parse()
                    .ok()
                    .filter(|p| *p <= 100)
                    .ok_or_else(|| usage(format!("option -+p: `{v}` is not a percentage (0 to 100)")))?;
                // IOzone 3.487 raises 0 to 1.
                let percent = percent.max(1);
                self.mix.read_percent = Some(percent);
                self.notes.push(format!("Percent read in mix test is {percent}"));
            }
            'K' => {
                let v = value("a number of readers")?;
                let readers: u32 = v
                    .parse()
                    .map_err(|_| usage(format!("option -+K: `{v}` is not a number of readers")))?;
                // IOzone 3.487 raises 0 to 1.
                self.mix.readers = Some(readers.max(1));
                self.notes
                    .push("Manual control of test 8. >>> Very Experimental. Sony special <<<".into());
            }
            'B' => {
                self.mix.sequential = true;
                self.notes.push(">>> Sequential Mixed workload. <<<".into());
            }
            // IOzone prints nothing for it.
            'F' => self.mix.truncate = true,
            'n' => {
                self.no_retests = true;
                self.notes.push("No retest option selected".into());
            }
            'u' => {
                self.cpu_util = true;
                // IOzone measures getrusage()'s resolution: on Linux it counts microseconds.
                self.notes.push("CPU utilization Resolution = 0.000 seconds.".into());
                self.notes.push("CPU utilization Excel chart enabled".into());
            }
            _ => return Err(usage(format!("unknown option `-+{c}` (see fslab iozone -h)"))),
        }
        Ok(i)
    }

    /// Checks the options against each other.
    fn check(&self) -> Result<(), UsageError> {
        if self.help {
            return Ok(());
        }
        let ranged = self.lower.is_some() || self.upper.is_some();
        if ranged && !self.t_counts.is_empty() {
            // IOzone then runs -t's counts only, yet prints -l's and -u's.
            return Err(usage(
                "options -l/-u and -t cannot be combined: give either -t N (repeatable) or the range -l MIN -u MAX",
            ));
        }
        if let (Some(l), Some(u)) = (self.lower, self.upper) {
            if u < l {
                return Err(usage(format!(
                    "option -u: the most children ({u}) is below the fewest (-l {l})"
                )));
            }
        }
        if self.auto && self.throughput() {
            return Err(usage(
                "options -a and -t (or -l/-u) cannot be combined: -a is single-process, -t is throughput mode",
            ));
        }
        if !self.files.is_empty() {
            let Some(t) = self.most_children() else {
                return Err(usage("option -F names one file per child: give -t too"));
            };
            if self.files.len() != t as usize {
                return Err(usage(format!(
                    "option -F names {} file(s) but {} asks for {t} children: give one name per child",
                    self.files.len(),
                    if ranged { format!("-u {t}") } else { format!("-t {t}") },
                )));
            }
        }
        if self.file.is_some() && self.throughput() {
            return Err(usage("option -f names the file of a single process: with -t, use -F"));
        }
        for &n in &self.tests {
            let why = match n {
                11 | 12 => Some(
                    "pwritev/preadv (vectored I/O, several records per call) cannot be expressed by fslab's engine",
                ),
                _ => None,
            };
            if let Some(why) = why {
                return Err(usage(format!("option -i {n}: {why}")));
            }
        }
        if self.throughput() || !self.auto {
            if self.record > self.file_size {
                return Err(usage(format!(
                    "option -r: the record size ({} kB) is larger than the file size ({} kB)",
                    self.record / KB,
                    self.file_size / KB
                )));
            }
        } else {
            if self.min_file > self.max_file {
                return Err(usage(format!(
                    "option -n: the smallest file size ({} kB) is above the largest (-g, {} kB)",
                    self.min_file / KB,
                    self.max_file / KB
                )));
            }
            if self.min_record > self.max_record {
                return Err(usage(format!(
                    "option -y: the smallest record size ({} kB) is above the largest (-q, {} kB)",
                    self.min_record / KB,
                    self.max_record / KB
                )));
            }
        }
        Ok(())
    }

    /// Throughput mode's numbers of children, a run of every sub-test for each, in order: each
    /// `-t`, or every number from `-l` to `-u` (IOzone's `multi_throughput_test`). Empty
    /// outside throughput mode.
    pub fn child_counts(&self) -> Vec<u32> {
        if self.lower.is_none() && self.upper.is_none() {
            return self.t_counts.clone();
        }
        let lower = self.lower.unwrap_or(1);
        (lower..=self.upper.unwrap_or(lower)).collect()
    }

    /// `-t`, `-l` or `-u` was given.
    pub fn throughput(&self) -> bool {
        !self.t_counts.is_empty() || self.lower.is_some() || self.upper.is_some()
    }

    /// The most children a run has: the number of files `-F` names.
    pub fn most_children(&self) -> Option<u32> {
        self.child_counts().into_iter().max()
    }

    /// The number of children IOzone names in its preamble's "Throughput test with N": the
    /// last `-t`, or the fewest of a range.
    pub fn announced_children(&self) -> Option<u32> {
        match (self.lower, self.upper) {
            (None, None) => self.t_counts.last().copied(),
            (l, _) => Some(l.unwrap_or(1)),
        }
    }

    /// What IOzone calls its children in its text: processes, or with `-T` threads.
    pub fn children_word(&self, plural: bool) -> &'static str {
        match (self.posix_threads, plural) {
            (false, false) => "process",
            (false, true) => "processes",
            (true, false) => "thread",
            (true, true) => "threads",
        }
    }

    /// The tests selected: those given with -i, or those IOzone runs without -i: every
    /// throughput test with -t (pwritev/preadv aside), the columns of its table (0 to 7, with -E
    /// also pwrite and pread) without.
    pub fn selected_tests(&self) -> Vec<u32> {
        if !self.tests.is_empty() {
            return self.tests.clone();
        }
        if self.throughput() {
            vec![0, 1, 2, 3, 5, 6, 7, 8, 9, 10]
        } else if self.extension {
            vec![0, 1, 2, 3, 4, 5, 6, 7, 9, 10]
        } else {
            vec![0, 1, 2, 3, 4, 5, 6, 7]
        }
    }
}

/// A size in IOzone's terms: kB by default, or with a `k`, `m` or `g` suffix.
fn kb_size(option: char, v: &str) -> Result<u64, UsageError> {
    let bad = || {
        usage(format!(
            "option -{option}: `{v}` is not a size (kB, or a number with a k, m or g suffix)"
        ))
    };
    let split = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    let (num, suffix) = v.split_at(split);
    let n: u64 = num.parse().map_err(|_| bad())?;
    let unit = match suffix {
        "" | "k" | "K" => KB,
        "m" | "M" => KB * KB,
        "g" | "G" => KB * KB * KB,
        _ => return Err(bad()),
    };
    let bytes = n.checked_mul(unit).ok_or_else(bad)?;
    if bytes == 0 {
        return Err(usage(format!("option -{option}: the size must be above 0")));
    }
    Ok(bytes)
}

/// The most children `-t` may ask for: IOzone 3.487's MAXSTREAMS, past which it exits.
pub const MAX_CHILDREN: u32 = 1024;

/// The usage text of `fslab iozone -h`.
pub const USAGE: &str = "\
Usage: fslab iozone [IOzone options] [--dir DIR] [--json] [--explain] [--check] [--seed N]

IOzone 3.487's throughput and automatic modes on fslab's engine. Sizes are in kB
(1024 bytes) unless suffixed with k, m or g.

  -i N      test to run (repeatable): 0 write/rewrite, 1 read/re-read,
            2 random read/write, 3 read backwards, 4 record rewrite (not with -t),
            5 stride read, 6 fwrite/re-fwrite, 7 fread/re-fread, 8 mixed (-t only),
            9 pwrite/re-pwrite, 10 pread/re-pread (11 and 12 are not offered)
  -s SIZE   file size (default 512k)        -r SIZE   record size (default 4k)
  -t N      throughput mode with N children (processes); repeat it to run each count
  -l N, -u M  throughput mode with N, N+1, ..., M children in turn
  -T        the children are threads of one process (POSIX threads)
  -F NAME.. one file per child, beneath --dir, in directories that exist
  -a        automatic mode: file sizes -n..-g (64k..512m), records -y..-q (4k..16m)
  -n -g -y -q SIZE   limits of automatic mode     -z   all record sizes in -a
  -f NAME   the file of automatic/single-process mode
  -e        include fsync in the timing        -c   include close (and no fsync before it)
  -C        a line per child                   -R   Excel-style report
  -w        keep the files                     -x   no stonewalling
  -I        O_DIRECT                           -o   O_SYNC
  -O        results in operations per second   -j N stride of test 5 (default 17)
  -E        automatic mode runs pwrite and pread (-i 9, -i 10) too, as IOzone's
            extension tests (without -E, as in IOzone, it does not)
  -+p N     the mixed workload's first N% of children read, the rest write
            (default: even children read, odd ones write)
  -+K N     the mixed workload's first N children read, the rest write
  -+B       the mixed workload reads and writes sequentially, not at random
  -+F       -+B's writers empty their files first (O_TRUNC)
  -+n       no re-runs (rewrite, re-read, ...): reported as 0, as IOzone does
  -+u       CPU utilization of each child (and with -R its reports)
  -h        this text

fslab's options:
  --dir DIR     where the files go (default: the current directory)
  --json        one JSON document on stdout: IOzone's figures and each run's full result
  --explain     print the workloads as fslab will run them (native TOML); run nothing
  --check       check the options and plan the runs; print nothing, run nothing
  --drop-caches drop the page cache before the first sub-test (root only)
  --seed N      the engine's seed (recorded; random records come in IOzone's own fixed order)

Examples:
  fslab iozone -i 0 -i 1 -s 512m -r 64k --dir /mnt/test
  fslab iozone -t 4 -i 0 -i 1 -i 2 -s 256m -r 4k --dir /mnt/test
  fslab iozone -a -n 64k -g 16m --dir /mnt/test
";

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Options, UsageError> {
        let args: Vec<String> = s.split_whitespace().map(String::from).collect();
        Options::parse(&args)
    }

    #[test]
    fn seed_004_command_line_parses() {
        let o = parse("-i 0 -i 1 -i 2 -t 16 -s 2000m -r 64k -e -C -R -w").unwrap();
        assert_eq!(o.tests, vec![0, 1, 2]);
        assert_eq!(o.child_counts(), vec![16]);
        assert_eq!(o.file_size, 2000 * 1024 * 1024);
        assert_eq!(o.record, 64 * 1024);
        assert!(o.fsync && o.per_child && o.excel && o.keep);
        assert!(!o.no_stonewall && !o.direct && !o.osync);
    }

    #[test]
    fn values_may_be_attached() {
        let o = parse("-i0 -i1 -t16 -s2000m -r64k").unwrap();
        assert_eq!(o.tests, vec![0, 1]);
        assert_eq!(o.child_counts(), vec![16]);
        assert_eq!(o.file_size, 2000 * 1024 * 1024);
        assert_eq!(o.record, 64 * 1024);
    }

    #[test]
    fn flags_may_be_grouped_and_end_in_a_valued_option() {
        let o = parse("-eCRw -t2 -Is16m").unwrap();
        assert!(o.fsync && o.per_child && o.excel && o.keep && o.direct);
        assert_eq!(o.file_size, 16 * 1024 * 1024);
    }

    #[test]
    fn sizes_are_kilobytes_by_default() {
        assert_eq!(parse("-s 100").unwrap().file_size, 100 * 1024);
        assert_eq!(parse("-s 1g -r 1m").unwrap().file_size, 1 << 30);
        assert_eq!(parse("").unwrap().file_size, 512 * 1024);
        assert_eq!(parse("").unwrap().record, 4 * 1024);
    }

    #[test]
    fn unknown_and_bad_options_name_the_option() {
        assert!(parse("-i 0 -9").unwrap_err().0.contains("unknown option `-9`"));
        assert!(parse("-i 0 -Z").unwrap_err().0.contains("option -Z is not offered"));
        assert!(parse("-+%").unwrap_err().0.contains("`-+%`"));
        assert!(parse("--frobnicate").unwrap_err().0.contains("`--frobnicate`"));
        assert!(parse("-s 12x").unwrap_err().0.contains("option -s"));
        assert!(parse("-t 0").unwrap_err().0.contains("option -t"));
        // IOzone's MAXSTREAMS; the fuzzer's -t 1844674407 had fslab allocate 14 GB for children.
        assert!(parse("-t 1024").is_ok());
        assert_eq!(
            parse("-t 1844674407").unwrap_err().0,
            "option -t: 1844674407 children is more than IOzone's maximum of 1024 (its MAXSTREAMS)"
        );
        assert!(parse("-i 13").unwrap_err().0.contains("option -i"));
        // As IOzone 3.487, the plan leaves them out (with a warning): plan.rs's tests.
        assert!(parse("-t 2 -i 4").is_ok());
        assert!(parse("-i 11").unwrap_err().0.contains("pwritev/preadv"));
        assert!(parse("-t 2 -i 8").is_ok() && parse("-i 8").is_ok());
        for n in [4, 6, 7, 9, 10] {
            assert!(parse(&format!("-a -i {n}")).is_ok(), "-i {n} in automatic mode");
        }
        assert!(parse("-s").unwrap_err().0.contains("option -s needs a value"));
        assert!(parse("-b out.xls").unwrap_err().0.contains("option -b"));
    }

    #[test]
    fn the_mixed_workloads_plus_options() {
        let o = parse("-t 4 -i 8 -+B -+F -+K 3").unwrap();
        assert_eq!(
            o.mix,
            Mix {
                read_percent: None,
                readers: Some(3),
                sequential: true,
                truncate: true
            }
        );
        // IOzone's preamble lines, in order; -+F has none.
        assert_eq!(
            o.notes,
            vec![
                ">>> Sequential Mixed workload. <<<",
                "Manual control of test 8. >>> Very Experimental. Sony special <<<"
            ]
        );
        assert_eq!(o.command_line, "iozone -t 4 -i 8 -+B -+F -+K 3");
        let o = parse("-t 1 -+n").unwrap();
        assert!(o.no_retests);
        assert_eq!(o.notes, vec!["No retest option selected"]);
        assert_eq!(
            parse("-t 4 -i 8 -+K0").unwrap().mix.readers,
            Some(1),
            "as IOzone, 0 is 1"
        );
        assert_eq!(parse("-t 4 -+K").unwrap_err().0, "option -+K needs a number of readers");
        assert_eq!(
            parse("-t 4 -+K x").unwrap_err().0,
            "option -+K: `x` is not a number of readers"
        );
    }

    #[test]
    fn f_takes_one_name_per_child() {
        let o = parse("-t 2 -F a b -i 0").unwrap();
        assert_eq!(o.files, vec!["a", "b"]);
        assert_eq!(o.tests, vec![0]);
        assert!(parse("-t 3 -F a b").unwrap_err().0.contains("-F names 2"));
        assert!(parse("-F a").unwrap_err().0.contains("give -t"));
    }

    #[test]
    fn record_larger_than_file_is_refused() {
        assert!(parse("-t 1 -s 4k -r 64k")
            .unwrap_err()
            .0
            .contains("larger than the file size"));
    }

    #[test]
    fn fslab_options_and_notes() {
        let o = parse("-t 1 -e --pause 0 --seed 7").unwrap();
        assert_eq!(o.pause, Duration::ZERO);
        assert_eq!(o.seed, Some(7));
        assert_eq!(o.notes, vec!["Include fsync in write timing"]);
        assert_eq!(o.command_line, "iozone -t 1 -e");
        assert_eq!(parse("--pause=500ms").unwrap().pause, Duration::from_millis(500));
    }

    #[test]
    fn auto_mode_limits() {
        let o = parse("-a -n 64k -g 1m -y 4k -q 64k -+p 70").unwrap();
        assert!(o.auto);
        assert_eq!((o.min_file, o.max_file), (64 * 1024, 1 << 20));
        assert_eq!((o.min_record, o.max_record), (4 * 1024, 64 * 1024));
        assert_eq!(o.mix.read_percent, Some(70));
        assert_eq!(parse("-t 2 -i 8 -+p 0").unwrap().mix.read_percent, Some(1));
        assert_eq!(parse("-t 2 -i 8").unwrap().mix, Mix::default());
        assert!(parse("-a -n 1m -g 64k").unwrap_err().0.contains("option -n"));
        assert!(parse("-a -t 2").is_err());
    }
}
