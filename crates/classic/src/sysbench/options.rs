//! sysbench's command line: `[options]... fileio prepare|run|cleanup`, options written
//! `--name=value` (a boolean also bare: `--file-fsync-all`), with sysbench 1.0.20's names and
//! defaults, the deprecated spellings of the 0.4 era (`--test=fileio`, `--num-threads`,
//! `--max-time`, `--max-requests`). fslab's own flags (`--dir DIR`, `--json`...) are
//! [`Common`](crate::contract::Common)'s.

use super::Error;
use fslab_engine::workload::SyncKind;

/// What to do with the files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    /// Write the test files.
    Prepare,
    /// Run the test on them.
    Run,
    /// Remove them.
    Cleanup,
    /// Print the options and their defaults.
    Help,
}

/// `--file-test-mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TestMode {
    SeqWr,
    SeqRewr,
    SeqRd,
    RndRd,
    RndWr,
    RndRw,
}

impl TestMode {
    pub const ALL: [TestMode; 6] = [
        TestMode::SeqWr,
        TestMode::SeqRewr,
        TestMode::SeqRd,
        TestMode::RndRd,
        TestMode::RndWr,
        TestMode::RndRw,
    ];

    /// The name sysbench takes: `seqwr`, `rndrw`...
    pub fn name(self) -> &'static str {
        match self {
            TestMode::SeqWr => "seqwr",
            TestMode::SeqRewr => "seqrewr",
            TestMode::SeqRd => "seqrd",
            TestMode::RndRd => "rndrd",
            TestMode::RndWr => "rndwr",
            TestMode::RndRw => "rndrw",
        }
    }

    pub fn is_sequential(self) -> bool {
        matches!(self, TestMode::SeqWr | TestMode::SeqRewr | TestMode::SeqRd)
    }

    /// The mode reads (and so, with `--validate`, checks what it reads).
    pub fn reads(self) -> bool {
        matches!(self, TestMode::SeqRd | TestMode::RndRd | TestMode::RndRw)
    }

    /// The mode writes (and so fsyncs); sysbench skips every fsync in the read modes.
    pub fn writes(self) -> bool {
        !matches!(self, TestMode::SeqRd | TestMode::RndRd)
    }
}

/// `--file-io-mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoMode {
    Sync,
    /// sysbench's libaio with `--file-async-backlog` requests in flight (the engine's `libaio`).
    Async,
    Mmap,
}

/// `--file-extra-flags`: flags every test file is opened with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExtraFlags {
    pub sync: bool,
    pub dsync: bool,
    pub direct: bool,
}

/// sysbench fileio's options, with sysbench 1.0.20's defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// Required by `run` only.
    pub test_mode: Option<TestMode>,
    pub file_num: u64,
    pub block_size: u64,
    pub total_size: u64,
    pub io_mode: IoMode,
    pub async_backlog: u32,
    pub extra_flags: ExtraFlags,
    /// Periodic fsync after this many requests; 0: none.
    pub fsync_freq: u64,
    pub fsync_all: bool,
    pub fsync_end: bool,
    pub fsync_mode: SyncKind,
    /// A sequential request is up to this many blocks; 0: one block.
    pub merged_requests: u64,
    pub rw_ratio: f64,
    pub threads: u32,
    /// Seconds; 0: no limit.
    pub time: u64,
    /// Events over all threads; 0: no limit.
    pub events: u64,
    /// 0 disables the percentile.
    pub percentile: u32,
    /// Seconds between intermediate reports; 0: none.
    pub report_interval: u64,
    /// 0: a seed from the current time.
    pub rand_seed: u64,
    /// `--histogram`: print the latency histogram before the report.
    pub histogram: bool,
    /// `--validate`: each block written carries its checksum and offset, each block read is
    /// checked (the engine's `data = "checked"`).
    pub validate: bool,
    /// `--rate`: events per second, arriving at random for all threads; 0: as fast as they go.
    pub rate: u64,
    /// `--verbosity`: 0 to 2 print nothing but errors, 3 (the default) sysbench's text, 4 adds
    /// its informational lines (why the run ended, `Done.`).
    pub verbosity: u32,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            test_mode: None,
            file_num: 128,
            block_size: 16384,
            total_size: 2 << 30,
            io_mode: IoMode::Sync,
            async_backlog: 128,
            extra_flags: ExtraFlags::default(),
            fsync_freq: 100,
            fsync_all: false,
            fsync_end: true,
            fsync_mode: SyncKind::Fsync,
            merged_requests: 0,
            rw_ratio: 1.5,
            threads: 1,
            time: 10,
            events: 0,
            percentile: 95,
            report_interval: 0,
            rand_seed: 0,
            histogram: false,
            validate: false,
            rate: 0,
            verbosity: 3,
        }
    }
}

impl Options {
    /// Bytes of each file as sysbench counts it: the total divided evenly.
    pub fn file_size(&self) -> u64 {
        self.total_size / self.file_num
    }

    /// Bytes of each file on disk: sysbench's prepare writes whole blocks, so a file size that
    /// is not a multiple of the block size is rounded up to one.
    pub fn file_size_on_disk(&self) -> u64 {
        self.file_size().div_ceil(self.block_size) * self.block_size
    }

    /// Bytes of one sequential request: the block size times `--file-merged-requests`.
    pub fn sequential_request(&self) -> u64 {
        self.block_size * self.merged_requests.max(1)
    }

    pub fn mode(&self) -> TestMode {
        self.test_mode.unwrap_or(TestMode::RndRd)
    }

    /// Periodic fsyncs happen: a write mode, a frequency, and not `--file-fsync-all`.
    pub fn periodic_fsync(&self) -> bool {
        self.mode().writes() && self.fsync_freq > 0 && !self.fsync_all
    }

    /// Each thread fsyncs every file at its end: a write mode, `--file-fsync-end`, and not
    /// `--file-fsync-all`.
    pub fn end_fsync(&self) -> bool {
        self.mode().writes() && self.fsync_end && !self.fsync_all
    }

    /// Checks what no single option can: the values together, for `command`.
    pub fn check(&self, command: Command) -> Result<(), Error> {
        let bad = |option: &str, message: String| {
            Err(Error::Option {
                option: option.to_string(),
                message,
            })
        };
        if self.histogram && self.percentile == 0 {
            // sysbench refuses it for every command, as its logger starts.
            return bad("--histogram", "cannot be used with --percentile=0".into());
        }
        if self.file_size() == 0 {
            return bad(
                "--file-total-size",
                format!(
                    "{} bytes cannot be shared by {} files (each would be empty)",
                    self.total_size, self.file_num
                ),
            );
        }
        if self.validate {
            // A checked block ends with a 4-byte checksum and an 8-byte offset; sysbench 1.0.20
            // writes past its buffer with a smaller one.
            if self.block_size < 12 {
                return bad(
                    "--file-block-size",
                    format!(
                        "{} bytes cannot hold --validate's checksum and offset (12 bytes)",
                        self.block_size
                    ),
                );
            }
            if self.merged_requests > 1 && self.mode() == TestMode::SeqRd {
                return bad(
                    "--file-merged-requests",
                    "with --validate each merged request is checked as one block, which the prepared blocks are not \
                     (sysbench fails on the first): leave one of them out"
                        .into(),
                );
            }
        }
        if self.extra_flags.direct && (self.extra_flags.sync || self.extra_flags.dsync) {
            // sysbench 1.0.20's convert_extra_flags() takes the list as a bit mask (sync 1,
            // dsync 2, direct 4) and refuses any value above direct's.
            let value = 4 + u32::from(self.extra_flags.sync) + 2 * u32::from(self.extra_flags.dsync);
            return bad(
                "--file-extra-flags",
                format!("direct does not go with sync or dsync (sysbench: \"Unknown extra flags value: {value}\")"),
            );
        }
        if self.extra_flags.direct {
            if self.io_mode == IoMode::Mmap {
                return bad(
                    "--file-extra-flags",
                    "direct does not go with --file-io-mode=mmap".into(),
                );
            }
            if !self.block_size.is_multiple_of(512) {
                return bad(
                    "--file-block-size",
                    format!(
                        "{} is not a multiple of 512, as --file-extra-flags=direct needs",
                        self.block_size
                    ),
                );
            }
        }
        if command == Command::Run {
            if self.test_mode.is_none() {
                return bad(
                    "--file-test-mode",
                    "missing: run needs one of seqwr, seqrewr, seqrd, rndrd, rndwr, rndrw".into(),
                );
            }
            if self.time == 0 && self.events == 0 {
                return bad(
                    "--time",
                    "--time=0 and --events=0 would run forever (sysbench runs until killed); set one of them".into(),
                );
            }
        }
        Ok(())
    }
}

/// A whole command line: the command and sysbench's options (fslab's own flags, `--dir`,
/// `--json`..., are [`Common`](crate::contract::Common)'s and taken out before).
#[derive(Debug, Clone, PartialEq)]
pub struct Invocation {
    pub command: Command,
    pub options: Options,
}

/// Parses sysbench's command line (without the program name): `fileio` (or `--test=fileio`),
/// options in any order, and the command. Every error names the option or word at fault.
pub fn parse<S: AsRef<str>>(args: &[S]) -> Result<Invocation, Error> {
    let mut options = Options::default();
    let mut help = false;
    let mut test = None;
    let mut command = None;
    for arg in args.iter().map(|a| a.as_ref()) {
        let Some(opt) = arg.strip_prefix("--") else {
            match arg {
                "prepare" | "run" | "cleanup" | "help" if command.is_none() => {
                    command = Some(match arg {
                        "prepare" => Command::Prepare,
                        "run" => Command::Run,
                        "cleanup" => Command::Cleanup,
                        _ => Command::Help,
                    });
                }
                _ if command.is_none() && test.as_deref().is_none_or(|t| t == arg) => test = Some(arg.to_string()),
                _ => {
                    return Err(Error::Usage(format!(
                        "unexpected `{arg}`: the command line is [options]... fileio prepare|run|cleanup"
                    )))
                }
            }
            continue;
        };
        let (name, value) = match opt.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (opt, None),
        };
        let key = name.replace('_', "-");
        let flag = format!("--{name}");
        match key.as_str() {
            "help" => help = switch(&flag, value)?,
            "test" => test = Some(need(&flag, value)?.to_string()),
            _ => options.set(&key, &flag, value)?,
        }
    }
    match test.as_deref() {
        Some("fileio") => {}
        None if help => {}
        None => {
            return Err(Error::Usage(
                "name the test: fslab sysbench fileio [options]... prepare|run|cleanup".into(),
            ))
        }
        Some(other) => {
            return Err(Error::Usage(format!(
                "fslab sysbench runs sysbench's fileio test only, not `{other}`"
            )))
        }
    }
    let command = match command {
        _ if help => Command::Help,
        Some(c) => c,
        None => {
            return Err(Error::Usage(
                "the fileio test needs a command: prepare, run or cleanup (see `fslab sysbench fileio help`)".into(),
            ))
        }
    };
    if command != Command::Help {
        options.check(command)?;
    }
    Ok(Invocation { command, options })
}

impl Options {
    /// Sets the option `key` (its canonical name) from `value`; `flag` is how it was written.
    fn set(&mut self, key: &str, flag: &str, value: Option<&str>) -> Result<(), Error> {
        let bad = |message: String| Error::Option {
            option: flag.to_string(),
            message,
        };
        match key {
            "file-num" => self.file_num = at_least(flag, whole(flag, need(flag, value)?)?, 1)?,
            "file-block-size" => self.block_size = at_least(flag, size(flag, need(flag, value)?)?, 1)?,
            "file-total-size" => self.total_size = at_least(flag, size(flag, need(flag, value)?)?, 1)?,
            "file-test-mode" => {
                let v = need(flag, value)?;
                self.test_mode = Some(TestMode::ALL.into_iter().find(|m| m.name() == v).ok_or_else(|| {
                    bad(format!(
                        "`{v}` is not a test mode (seqwr, seqrewr, seqrd, rndrd, rndwr or rndrw)"
                    ))
                })?);
            }
            "file-io-mode" => {
                self.io_mode = match need(flag, value)? {
                    "sync" => IoMode::Sync,
                    "async" => IoMode::Async,
                    "mmap" => IoMode::Mmap,
                    v => return Err(bad(format!("`{v}` is not an I/O mode (sync, async or mmap)"))),
                }
            }
            "file-async-backlog" => {
                let n = at_least(flag, whole(flag, need(flag, value)?)?, 1)?;
                self.async_backlog = u32::try_from(n).map_err(|_| bad(format!("{n} is too large")))?;
            }
            "file-extra-flags" => {
                let mut flags = ExtraFlags::default();
                for f in need(flag, value)?.split(',').filter(|f| !f.is_empty()) {
                    match f {
                        "sync" => flags.sync = true,
                        "dsync" => flags.dsync = true,
                        "direct" => flags.direct = true,
                        _ => return Err(bad(format!("`{f}` is not a flag (sync, dsync or direct)"))),
                    }
                }
                self.extra_flags = flags;
            }
            "file-fsync-freq" => self.fsync_freq = whole(flag, need(flag, value)?)?,
            "file-fsync-all" => self.fsync_all = switch(flag, value)?,
            "file-fsync-end" => self.fsync_end = switch(flag, value)?,
            "file-fsync-mode" => {
                self.fsync_mode = match need(flag, value)? {
                    "fsync" => SyncKind::Fsync,
                    "fdatasync" => SyncKind::Fdatasync,
                    v => return Err(bad(format!("`{v}` is not an fsync mode (fsync or fdatasync)"))),
                }
            }
            "file-merged-requests" => self.merged_requests = whole(flag, need(flag, value)?)?,
            "file-rw-ratio" => {
                let v = need(flag, value)?;
                let r: f64 = v
                    .parse()
                    .map_err(|_| bad(format!("`{v}` is not a number (e.g. 1.5)")))?;
                if !r.is_finite() || !(0.0..=1e6).contains(&r) {
                    return Err(bad(format!("{v} is not a ratio between 0 and 1000000")));
                }
                self.rw_ratio = r;
            }
            "threads" | "num-threads" => {
                let n = at_least(flag, whole(flag, need(flag, value)?)?, 1)?;
                self.threads = u32::try_from(n).map_err(|_| bad(format!("{n} is too many threads")))?;
            }
            "time" | "max-time" => self.time = whole(flag, need(flag, value)?)?,
            "events" | "max-requests" => self.events = whole(flag, need(flag, value)?)?,
            "percentile" => {
                let p = whole(flag, need(flag, value)?)?;
                if p > 100 {
                    return Err(bad(format!("{p} is not a percentile (0 to 100; 0 disables it)")));
                }
                self.percentile = p as u32;
            }
            "report-interval" => self.report_interval = whole(flag, need(flag, value)?)?,
            "rand-seed" => self.rand_seed = whole(flag, need(flag, value)?)?,
            // sysbench 1.0.20's fileio draws its offsets uniformly whatever these say
            // (file_get_rnd_request's sb_rand_uniform_double): checked, and no effect, as there.
            "rand-type" => {
                let v = need(flag, value)?;
                if !["uniform", "gaussian", "special", "pareto"].contains(&v) {
                    return Err(bad(format!(
                        "`{v}` is not a distribution (uniform, gaussian, special or pareto)"
                    )));
                }
            }
            "rand-spec-iter" | "rand-spec-pct" | "rand-spec-res" => {
                whole(flag, need(flag, value)?)?;
            }
            "rand-pareto-h" => {
                let v = need(flag, value)?;
                v.parse::<f64>()
                    .map_err(|_| bad(format!("`{v}` is not a number (e.g. 0.2)")))?;
            }
            "histogram" => self.histogram = switch(flag, value)?,
            "validate" => self.validate = switch(flag, value)?,
            "rate" | "tx-rate" => self.rate = whole(flag, need(flag, value)?)?,
            "verbosity" => {
                self.verbosity = match whole(flag, need(flag, value)?)? {
                    v @ 0..=4 => v as u32,
                    5 => {
                        return Err(bad(
                            "5 (debug) has sysbench print a line per request, which fslab does not: use 0 to 4".into(),
                        ))
                    }
                    v => return Err(bad(format!("{v} is not a verbosity level (0 to 5)"))),
                }
            }
            _ => {
                return Err(bad(
                    "unknown option (see `fslab sysbench fileio help` for the options fslab takes)".into(),
                ))
            }
        }
        Ok(())
    }
}

fn need<'v>(flag: &str, value: Option<&'v str>) -> Result<&'v str, Error> {
    value.ok_or_else(|| Error::Option {
        option: flag.to_string(),
        message: format!("needs a value: {flag}=VALUE"),
    })
}

/// A boolean as sysbench takes it: bare (on), or `on|off`, `true|false`, `1|0`.
fn switch(flag: &str, value: Option<&str>) -> Result<bool, Error> {
    match value {
        None | Some("on" | "true" | "1") => Ok(true),
        Some("off" | "false" | "0") => Ok(false),
        Some(v) => Err(Error::Option {
            option: flag.to_string(),
            message: format!("`{v}` is not on or off"),
        }),
    }
}

fn whole(flag: &str, v: &str) -> Result<u64, Error> {
    v.parse().map_err(|_| Error::Option {
        option: flag.to_string(),
        message: format!("`{v}` is not a whole number"),
    })
}

fn at_least(flag: &str, n: u64, min: u64) -> Result<u64, Error> {
    if n < min {
        return Err(Error::Option {
            option: flag.to_string(),
            message: format!("{n} is too small (at least {min})"),
        });
    }
    Ok(n)
}

/// A size as sysbench writes it: a whole number with an optional `b`, `k`, `m`, `g` or `t`
/// (binary, either case, optionally followed by `b`): `16384`, `16k`, `2G`, `64MB`.
fn size(flag: &str, v: &str) -> Result<u64, Error> {
    let bad = || Error::Option {
        option: flag.to_string(),
        message: format!("`{v}` is not a size (e.g. 16384, 16K, 2G)"),
    };
    let digits = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    let (num, suffix) = v.split_at(digits);
    let n: u64 = num.parse().map_err(|_| bad())?;
    let shift = match suffix.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" => 10,
        "m" | "mb" => 20,
        "g" | "gb" => 30,
        "t" | "tb" => 40,
        _ => return Err(bad()),
    };
    n.checked_mul(1 << shift).ok_or_else(bad)
}

/// `fslab sysbench fileio help`: the options fslab takes, with sysbench's defaults.
pub fn help() -> &'static str {
    "\
Usage: fslab sysbench [options]... fileio prepare|run|cleanup|help

sysbench 1.0.20's fileio test on fslab's engine. The files are test_file.0, test_file.1...
in --dir DIR, else in the current directory, as sysbench makes them.

fileio options:
  --file-num=N                  number of files to create [128]
  --file-block-size=N           block size to use in all IO operations [16384]
  --file-total-size=SIZE        total size of files to create [2G]
  --file-test-mode=STRING       test mode {seqwr, seqrewr, seqrd, rndrd, rndwr, rndrw}
  --file-io-mode=STRING         file operations mode {sync,async,mmap} [sync]
  --file-async-backlog=N        number of asynchronous operatons to queue per thread [128]
  --file-extra-flags=[LIST,...] list of additional flags to use to open files {sync,dsync,direct} []
  --file-fsync-freq=N           do fsync() after this number of requests (0 - don't use fsync()) [100]
  --file-fsync-all[=on|off]     do fsync() after each write operation [off]
  --file-fsync-end[=on|off]     do fsync() at the end of test [on]
  --file-fsync-mode=STRING      which method to use for synchronization {fsync, fdatasync} [fsync]
  --file-merged-requests=N      merge at most this number of IO requests if possible (0 - don't merge) [0]
  --file-rw-ratio=N             reads/writes ratio for combined test [1.5]

General options:
  --threads=N                   number of threads to use [1]
  --events=N                    limit for total number of events [0]
  --time=N                      limit for total execution time in seconds [10]
  --percentile=N                percentile to calculate in latency statistics (1-100), 0 disables it [95]
  --report-interval=N           report intermediate statistics every N seconds, 0 disables them [0]
  --rand-seed=N                 seed for the random number generator, 0 takes one from the clock [0]
  --rand-type, --rand-spec-iter, --rand-spec-pct, --rand-spec-res, --rand-pareto-h: accepted, no
                                effect (fileio's offsets are uniform, as in sysbench 1.0.20)
  --histogram[=on|off]          print the latency histogram before the report [off]
  --validate[=on|off]           write a checksum and offset into every block, check them on every read [off]
  --rate=N                      average events per second, arriving at random; 0: unlimited [0]
  --verbosity=N                 0-2: errors only, 3: sysbench's text, 4: also why the run ended [3]
  --test=fileio, --num-threads=N, --max-time=N, --max-requests=N, --tx-rate=N: the deprecated spellings

fslab options:
  --dir DIR                     directory of the test files [the current directory]
  --json                        print the outcome as one JSON document (sysbench's figures, the engine's result)
  --explain                     print the workload as fslab will run it (native TOML) and exit
  --check                       check the options, print nothing and exit
  --drop-caches                 (run) drop the page cache before the measured run (root only)

Examples:
  fslab sysbench fileio --file-total-size=1G prepare --dir /mnt/test
  fslab sysbench fileio --file-total-size=1G --file-test-mode=rndrw --time=60 run --dir /mnt/test
  fslab sysbench fileio --file-total-size=1G --threads=4 --file-test-mode=rndrd --explain run
  fslab sysbench fileio cleanup --dir /mnt/test
"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(args: &[&str]) -> Invocation {
        parse(args).unwrap_or_else(|e| panic!("{args:?}: {e}"))
    }

    fn err(args: &[&str]) -> String {
        parse(args).expect_err("an error").to_string()
    }

    #[test]
    fn defaults_are_sysbench_1_0_20s() {
        let inv = ok(&["fileio", "prepare"]);
        let o = &inv.options;
        assert_eq!(inv.command, Command::Prepare);
        assert_eq!(
            (o.file_num, o.block_size, o.total_size, o.fsync_freq),
            (128, 16384, 2 << 30, 100)
        );
        assert!(o.fsync_end && !o.fsync_all);
        assert_eq!(
            (o.rw_ratio, o.threads, o.time, o.events, o.percentile),
            (1.5, 1, 10, 0, 95)
        );
        assert_eq!(o.io_mode, IoMode::Sync);
    }

    #[test]
    fn options_take_sysbench_spellings_in_any_order() {
        let inv = ok(&[
            "--file-num=4",
            "fileio",
            "--file-total-size=64M",
            "--file-block-size=4k",
            "--file-test-mode=rndrw",
            "--file-fsync-all",
            "--file-fsync-end=off",
            "--file-extra-flags=sync,dsync",
            "--file-rw-ratio=2.5",
            "--threads=3",
            "run",
            "--time=2",
        ]);
        let o = &inv.options;
        assert_eq!(inv.command, Command::Run);
        assert_eq!((o.file_num, o.total_size, o.block_size), (4, 64 << 20, 4096));
        assert_eq!(o.test_mode, Some(TestMode::RndRw));
        assert!(o.fsync_all && !o.fsync_end);
        assert_eq!(
            o.extra_flags,
            ExtraFlags {
                sync: true,
                dsync: true,
                direct: false
            }
        );
        assert_eq!((o.rw_ratio, o.threads, o.time), (2.5, 3, 2));
    }

    #[test]
    fn the_old_spellings_work() {
        let inv = ok(&[
            "--test=fileio",
            "--num-threads=16",
            "--max-time=300",
            "--max-requests=0",
            "--file-test-mode=rndrw",
            "run",
        ]);
        assert_eq!(
            (inv.options.threads, inv.options.time, inv.options.events),
            (16, 300, 0)
        );
        let inv = ok(&[
            "--test=fileio",
            "--max-requests=500",
            "--max-time=0",
            "--file-test-mode=seqrd",
            "run",
        ]);
        assert_eq!((inv.options.time, inv.options.events), (0, 500));
    }

    #[test]
    fn bad_values_name_their_option() {
        assert_eq!(
            err(&["fileio", "--threads=abc", "run"]),
            "--threads: `abc` is not a whole number"
        );
        assert!(err(&["fileio", "--foo=1", "run"]).starts_with("--foo: unknown option"));
        // The random generator's options are checked and change nothing in fileio.
        let plain = ok(&["fileio", "--file-test-mode=rndrd", "run"]).options;
        let rand = ok(&[
            "fileio",
            "--rand-type=uniform",
            "--rand-spec-pct=5",
            "--rand-pareto-h=0.3",
            "--histogram=off",
            "--file-test-mode=rndrd",
            "run",
        ]);
        assert_eq!(rand.options, plain);
        assert!(err(&["fileio", "--rand-type=zipf", "run"]).starts_with("--rand-type: `zipf` is not a distribution"));
        assert!(
            ok(&["fileio", "--histogram", "--file-test-mode=rndrd", "run"])
                .options
                .histogram
        );
        assert_eq!(
            err(&["fileio", "--histogram", "--percentile=0", "prepare"]),
            "--histogram: cannot be used with --percentile=0"
        );
        assert!(ok(&["fileio", "--validate", "prepare"]).options.validate);
        assert!(!ok(&["fileio", "--validate=off", "prepare"]).options.validate);
        assert!(err(&[
            "fileio",
            "--validate",
            "--file-merged-requests=4",
            "--file-test-mode=seqrd",
            "run"
        ])
        .starts_with("--file-merged-requests: with --validate each merged request is checked as one block"));
        // Merged writes are stamped as one block each, as sysbench stamps them.
        ok(&[
            "fileio",
            "--validate",
            "--file-merged-requests=4",
            "--file-test-mode=seqwr",
            "run",
        ]);
        assert_eq!(ok(&["fileio", "--verbosity=0", "prepare"]).options.verbosity, 0);
        assert!(err(&["fileio", "--verbosity=5", "prepare"]).starts_with("--verbosity: 5 (debug)"));
        assert!(err(&["fileio", "--verbosity=9", "prepare"]).starts_with("--verbosity: 9 is not"));
        assert!(
            err(&["fileio", "--file-test-mode=bad", "run"]).starts_with("--file-test-mode: `bad` is not a test mode")
        );
        assert!(err(&["fileio", "--file-total-size=1.5M", "prepare"]).starts_with("--file-total-size: `1.5M`"));
        assert!(err(&["fileio", "--file-fsync-all=yes", "prepare"]).starts_with("--file-fsync-all: `yes`"));
        assert!(err(&["fileio", "--percentile=101", "prepare"]).starts_with("--percentile: 101"));
        assert!(err(&["fileio", "--file-num=0", "prepare"]).starts_with("--file-num: 0 is too small"));
        assert!(err(&["fileio", "--file-rw-ratio=-1", "prepare"]).starts_with("--file-rw-ratio:"));
        assert!(err(&["fileio", "--file-extra-flags=odd", "prepare"]).starts_with("--file-extra-flags: `odd`"));
        for (flags, value) in [("sync,direct", 5), ("direct,dsync", 6), ("sync,dsync,direct", 7)] {
            let e = err(&["fileio", &format!("--file-extra-flags={flags}"), "prepare"]);
            assert!(
                e.starts_with("--file-extra-flags: direct does not go with sync or dsync")
                    && e.contains(&format!("Unknown extra flags value: {value}")),
                "{flags}: {e}"
            );
        }
        assert!(err(&["fileio", "--file-num", "prepare"]).starts_with("--file-num: needs a value"));
        assert!(err(&["fileio", "run"]).starts_with("--file-test-mode: missing"));
        assert!(err(&["fileio", "--file-test-mode=rndrd", "--time=0", "run"]).starts_with("--time:"));
        assert!(err(&["fileio", "--file-num=8", "--file-total-size=4", "prepare"]).starts_with("--file-total-size:"));
        assert!(
            err(&["fileio", "--file-io-mode=mmap", "--file-extra-flags=direct", "prepare"])
                .starts_with("--file-extra-flags:")
        );
        assert!(err(&[
            "fileio",
            "--file-block-size=1000",
            "--file-extra-flags=direct",
            "prepare"
        ])
        .starts_with("--file-block-size:"));
    }

    #[test]
    fn the_command_line_needs_the_test_and_a_command() {
        assert!(err(&["prepare"]).contains("name the test"));
        assert!(err(&["cpu", "run"]).contains("fileio test only"));
        assert!(err(&["fileio"]).contains("needs a command"));
        assert!(err(&["fileio", "run", "again"]).contains("unexpected `again`"));
        assert_eq!(ok(&["fileio", "help"]).command, Command::Help);
        assert_eq!(ok(&["--help"]).command, Command::Help);
    }

    #[test]
    fn sizes_take_binary_suffixes() {
        assert_eq!(size("-", "16384").unwrap(), 16384);
        assert_eq!(size("-", "16K").unwrap(), 16384);
        assert_eq!(size("-", "2G").unwrap(), 2 << 30);
        assert_eq!(size("-", "64MB").unwrap(), 64 << 20);
        assert!(size("-", "10x").is_err());
        assert!(size("-", "").is_err());
    }

    #[test]
    fn files_round_up_to_whole_blocks_on_disk() {
        let o = Options {
            total_size: 100 << 20,
            file_num: 3,
            ..Options::default()
        };
        // sysbench 1.0.20 wrote 34963456-byte files for these options.
        assert_eq!((o.file_size(), o.file_size_on_disk()), (34952533, 34963456));
    }
}
