//! The Workload: what the engine runs. Every front-end (native TOML, FFSB, dbench, sysbench,
//! IOzone, the ad-hoc command line) compiles to this one model, and `--explain` prints it back as
//! native TOML.
//!
//! A workload has filesets (the files it works on), thread groups (who works, with which mix of
//! operations, through which I/O backend) and stop conditions. This file holds that model; its
//! TOML form is in `text.rs`, and what serde cannot check is in `validate.rs`.

use crate::units::{Bytes, Span};
use serde::{Deserialize, Serialize};
use std::fmt;

mod text;
mod validate;

pub use crate::op::OpKind;
pub use text::{locate, LoadError};
pub use validate::{Invalid, PathSeg, MAX_PREFIX};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Workload {
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Seed of every random choice; a random one is drawn (and reported) when absent.
    // A seed above TOML's largest integer is written as a string of its digits (`to_toml`).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "seed_from")]
    #[schemars(with = "Option<u64>")]
    pub seed: Option<u64>,
    #[serde(default)]
    pub stop: Stop,
    #[serde(rename = "fileset", default, skip_serializing_if = "Vec::is_empty")]
    pub filesets: Vec<Fileset>,
    #[serde(rename = "group")]
    pub groups: Vec<Group>,
    /// Remove the filesets and script directories after the run (untimed), as dbench and IOzone
    /// do; by default they stay, as FFSB's do.
    #[serde(default, skip_serializing_if = "is_false")]
    pub cleanup: bool,
    /// Make each thread a process of its own, forked once the filesets are set up, as fio's jobs
    /// are (without its `thread`), and dbench's clients and IOzone's throughput children. Each
    /// then has its own descriptor table, and the kernel takes a single-threaded process's
    /// lighter path for every call on a descriptor: no reference count on the file and no lock
    /// on its position. Operations that change which files a fileset holds (create, delete,
    /// rename) or make its directories keep threads, which share the fileset's table.
    #[serde(default, skip_serializing_if = "is_false")]
    pub processes: bool,
}

/// When the measured phase ends. With several conditions, the first one met ends the run; with
/// none, the run ends when every thread has finished its streams.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Stop {
    /// Wall time of the measured phase (after the ramp).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<Span>,
    /// Total operations over all threads (each thread does its even share).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ops: Option<u64>,
    /// Total bytes read plus written over all threads (each thread does its even share).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<Bytes>,
    /// Stop when the filesystem holding the first fileset is this full (0 to 1), as FFSB's
    /// aging runs until `desired_util`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub util: Option<f64>,
    /// How often `util` is checked: only by the monitor, this often (FFSB's aging polls once a
    /// second). When absent, ten times a second and by every thread each fourth operation. Set
    /// by the front-ends; not part of a workload file.
    #[serde(skip)]
    #[schemars(skip)]
    pub util_poll: Option<Span>,
    /// Stop every thread as soon as the first one finishes (IOzone's stonewalling).
    #[serde(default, skip_serializing_if = "is_false")]
    pub stonewall: bool,
    /// How each thread ends, as an IOzone 3.487 child does (see [`ChildEnd`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub child_end: Option<ChildEnd>,
    /// Stop before `time` once a figure has levelled off over a window of seconds (fio's
    /// `steadystate`); `time` is then the longest the run may take.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady: Option<crate::steady::Steady>,
    /// A warm-up at the start whose operations are left out of the statistics.
    #[serde(default, skip_serializing_if = "is_zero_span")]
    pub ramp: Span,
    /// Where the final sync() falls: inside the measured time (as FFSB counts it), after it, or none.
    #[serde(default, skip_serializing_if = "is_default")]
    pub final_sync: FinalSync,
}

/// How each thread of a stonewalled run ends, as the children of IOzone 3.487's throughput mode
/// do. Every thread works on its own file (its one fileset's file `thread mod files`, the thread
/// numbered as [`Workload::thread_on_fileset`] says). Its figures
/// (bytes and seconds, `RunResult.threads`) run from its own start, after the start line, to the
/// moment they are taken; the run's duration runs on to the last thread's very end.
///
/// - A thread that finishes its work raises the stonewall (with `stonewall`), before its `fsync` when
///   `raise_before_sync` (IOzone's initial and random writers), after it otherwise; then takes its
///   figures.
/// - A thread the stonewall stops fsyncs (with `fsync`), takes its figures, then with
///   `finish_uncounted` goes on to the end of its work (its file, or its share of `stop.ops`)
///   uncounted and fsyncs again (with `fsync`): IOzone's initial and random writers finish their
///   files so that the readers after them find whole files.
/// - Then every thread fsyncs its file once more, outside its figures (IOzone's fsync before
///   close), when `close_fsync`.
///
/// These fsyncs count among the run's `fsync` operations.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChildEnd {
    /// fsync the thread's file at its end, inside its figures (IOzone's `-e`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub fsync: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub raise_before_sync: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub finish_uncounted: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub close_fsync: bool,
    /// fsync the thread's file once it is opened, before the start, uncounted (IOzone's
    /// automatic mode).
    #[serde(default, skip_serializing_if = "is_false")]
    pub open_fsync: bool,
    /// Once the file is open (and fsynced), read its first record with `read()` and `lseek()`
    /// back to 0, before the start, uncounted: IOzone's automatic-mode readers prime the caches
    /// and the TLB so. The record is the first operation's `bs` (else its `size`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub prime: bool,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FinalSync {
    #[default]
    None,
    Inside,
    Outside,
}

/// A set of files spread over directories beneath the run directory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Fileset {
    pub name: String,
    /// Directory beneath the run directory; the fileset's name when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dir: Option<String>,
    /// An absolute directory to use instead of the run directory (FFSB profiles name each
    /// filesystem's location); the fileset stays confined beneath it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
    /// Files are named `<prefix><id>`: `f0`, `f1`... or sysbench's `test_file.0`. At most 40
    /// bytes ([`MAX_PREFIX`](crate::workload::MAX_PREFIX)), as `dir_prefix`.
    #[serde(default = "default_prefix", skip_serializing_if = "is_default_prefix")]
    pub prefix: String,
    /// With `dirs`, the directories are named `<dir_prefix><k>`: `d0`, `d1`... or FFSB's
    /// `datadir0`.
    #[serde(default = "default_dir_prefix", skip_serializing_if = "is_default_dir_prefix")]
    pub dir_prefix: String,
    /// Instead of `<prefix><id>`: one name per file, in id order (IOzone's `-F`). A fileset with
    /// names keeps its files in its directory itself (`dirs = 0`), may share that directory with
    /// other entries (`dir = "."` is the run directory) and owns only the names it made there.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub names: Vec<String>,
    /// Files present when the measured phase starts (create and delete change that).
    #[serde(default)]
    pub files: u64,
    /// Instead of a number of files: make files until their sizes add up to this (FFSB's
    /// init_size).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until_bytes: Option<Bytes>,
    /// Directories the files are spread over (file i goes to directory i mod dirs); 0 puts them
    /// all in the fileset's directory.
    #[serde(default = "one")]
    pub dirs: u64,
    /// Size of each file, and of each file a `create` makes.
    #[serde(default)]
    pub size: SizeDist,
    /// Write the files before the measured phase (untimed, reported separately). Without it the
    /// files start empty.
    #[serde(default = "yes")]
    pub prealloc: bool,
    /// Bytes per write() call when the files are written before the run (FFSB's
    /// create_blocksize); 1 MiB when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup_bs: Option<Bytes>,
    /// What the files are written with before the run (`prealloc`).
    #[serde(default, skip_serializing_if = "is_default")]
    pub data: Data,
    /// Permission bits of the files the setup and the run's creates make (IOzone's 0640,
    /// sysbench's 0600, FFSB's 0700); 0644 when absent. Its directories (`dirs`, `meta` and
    /// what mkdir makes there) get the same bits with search added wherever read is given
    /// ([`dir_mode`](Self::dir_mode)). The umask applies, as to any open(O_CREAT) or mkdir().
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<u32>,
    /// Keep files already there when their number and sizes match, instead of writing them again.
    /// Without `prealloc` as well, a sequential write of a thread's own file goes over a kept
    /// file from its start, without emptying it first (IOzone's initial writers, fio's).
    #[serde(default, skip_serializing_if = "is_false")]
    pub reuse: bool,
    /// Which system calls write the files before the run: fslab's own, or an original's (set by
    /// the front-ends; not part of a workload file).
    #[serde(skip)]
    #[schemars(skip)]
    pub setup_calls: SetupCalls,
    /// A create takes the name of the oldest file deleted and not yet made again, and a new
    /// name only when there is none, as FFSB's file lists do (their "holes"). Set by the FFSB
    /// front-end; not part of a workload file. Off: every create makes a name never used in
    /// the run.
    #[serde(skip)]
    #[schemars(skip)]
    pub reuse_names: bool,
    /// Each file in a directory drawn from the data directories and the fileset's own, as FFSB
    /// places its files (filelist.c's add_file(): one of `num_dirs + 1`, the first being the
    /// fileset's directory), instead of file N in data directory N mod `dirs`. The draw is a
    /// hash of the file's number, the same in every run, so that a kept fileset is found again.
    /// Set by the FFSB front-end; not part of a workload file.
    #[serde(skip)]
    #[schemars(skip)]
    pub spread: bool,
    /// The directory where `mkdir` and FFSB's `metaop` work, `meta`, lies beside the fileset's
    /// directory instead of in it (FFSB's `L/meta`, beside `L/data`), and is made with the
    /// fileset whether or not an operation works there, as FFSB makes it. Set by the
    /// front-ends; not part of a workload file.
    #[serde(skip)]
    #[schemars(skip)]
    pub meta_beside: bool,
    /// Prefixes of another fileset's files that share this fileset's directory (FFSB's aging
    /// `fillfile<N>` beside its `data` files): setup and removal leave them, and the directory,
    /// alone. Set by the front-ends; not part of a workload file.
    #[serde(skip)]
    #[schemars(skip)]
    pub neighbours: Vec<String>,
}

/// The system calls that write a fileset's files before the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SetupCalls {
    /// fslab's: several files at a time, each opened `O_CREAT|O_EXCL` with mode 0644 and written
    /// with `pwrite()` of `setup_bs` bytes of the fileset's `data`, then one `syncfs()`.
    #[default]
    Parallel,
    /// sysbench 1.0.20's `prepare` (`create_files()` in sb_fileio.c): one file at a time, in
    /// order, each opened `O_CREAT|O_WRONLY` (fslab adds `O_EXCL|O_NOFOLLOW`) with mode 0600,
    /// `lseek(fd, 0, SEEK_END)`, `write()` of `setup_bs` bytes (its zeros: `data = "zeros"`) until the size is reached,
    /// `fsync()`, `close()`; no `syncfs()`. `direct` and `osync` add sysbench's
    /// `--file-extra-flags` (`O_DIRECT`, `O_SYNC`, `O_DSYNC`) to that open, as sysbench does.
    SysbenchPrepare { direct: bool, osync: OSync },
    /// FFSB's fs setup (`add_files()` in ffsb_fs.c): one file at a time, in order, each opened
    /// `O_CREAT|O_RDWR|O_TRUNC` (fslab adds `O_EXCL|O_NOFOLLOW`) with mode 0700, written with
    /// `write()`s of `setup_bs` bytes (the last one shorter), closed. Never `O_DIRECT`: 5.2.1's
    /// `fhopencreate()` leaves it out, and 6.0 turns `directio` off while `add_files()` runs.
    /// `sync`: then one `sync()`, as FFSB calls it once its setup is done, also when the files
    /// were kept (`reuse`); aging's ten starting files get none.
    Ffsb { sync: bool },
    /// IOzone's throughput mode: as `Parallel`, with no sync after (IOzone calls `sync()` before
    /// each of its measurements, and its front-end makes those calls); but files that start
    /// empty (no `prealloc`) are not made by the setup: each worker makes its own as it first
    /// opens it, with `O_CREAT` and the fileset's mode, as IOzone's children create theirs
    /// (`open(O_RDWR|O_CREAT, 0640)`), all at once. The setup clears what an earlier run left
    /// and writes the marker, so that the names are free and the files fslab's.
    Iozone,
    /// IOzone's single-process and automatic modes (`write_perf_test()`): one file at a time,
    /// in order, each first made and removed by IOzone's sanity check (`open(O_CREAT|O_WRONLY)`
    /// with mode 0, `ftruncate(0)`, `close()`, `stat()`, `unlink()`), then made again with
    /// `creat()` (`O_CREAT|O_WRONLY|O_TRUNC`) and the fileset's mode, and closed; fslab adds
    /// `O_EXCL|O_NOFOLLOW` to both opens. A file with contents (`prealloc`) is then written
    /// with `write()`s of `setup_bs` bytes. No sync after, as `Iozone`.
    IozoneSingle,
}

impl Fileset {
    /// The workers make the files as they open them, not the setup (see [`SetupCalls::Iozone`]).
    pub fn made_by_workers(&self) -> bool {
        self.setup_calls == SetupCalls::Iozone && !self.prealloc
    }

    /// A fileset of no files yet, with every other setting at its default.
    pub fn new(name: &str) -> Fileset {
        Fileset {
            name: name.to_string(),
            dir: None,
            root: None,
            prefix: default_prefix(),
            dir_prefix: default_dir_prefix(),
            names: Vec::new(),
            files: 0,
            until_bytes: None,
            dirs: 1,
            size: SizeDist::default(),
            prealloc: true,
            setup_bs: None,
            data: Data::default(),
            mode: None,
            reuse: false,
            setup_calls: SetupCalls::Parallel,
            reuse_names: false,
            spread: false,
            meta_beside: false,
            neighbours: Vec::new(),
        }
    }

    /// Permission bits of the files the fileset's files are made with ([`mode`](Self::mode)).
    pub fn file_mode(&self) -> u32 {
        self.mode.unwrap_or(0o644)
    }

    /// Permission bits of the directories of the fileset: the files' with search added wherever
    /// read is given (0644: 0755; FFSB's 0700: 0700).
    pub fn dir_mode(&self) -> u32 {
        let m = self.file_mode();
        m | ((m & 0o444) >> 2)
    }

    /// How many directories the files lie in: the data directories (the fileset's own when
    /// there are none), and with [`spread`](Self::spread) the fileset's own as well.
    pub fn file_dir_count(&self) -> u64 {
        match self.dirs {
            0 => 1,
            n => n + self.spread as u64,
        }
    }

    /// The directory file `id` lies in, below [`file_dir_count`](Self::file_dir_count): data
    /// directory `k` for `k < dirs`, the fileset's own for `dirs` (and when there are none).
    #[inline]
    pub fn file_dir(&self, id: u64) -> u64 {
        let n = self.file_dir_count();
        if n == 1 {
            // One directory, the usual case: no division on every operation's path.
            return 0;
        }
        if self.spread {
            // splitmix64's finaliser, then scaled to 0..n: uniform, and no division.
            let mut z = id.wrapping_add(0x9e37_79b9_7f4a_7c15);
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            ((z as u128 * n as u128) >> 64) as u64
        } else {
            id % n
        }
    }

    pub fn dir_name(&self) -> &str {
        self.dir.as_deref().unwrap_or(&self.name)
    }

    /// `dir = "."`: the files lie in the run directory itself, among whatever else is there (as
    /// sysbench's test_file.N lie in its current directory). fslab then touches only the names
    /// it makes there (`<prefix><N>` and its marker) and never removes the directory.
    pub fn in_run_dir(&self) -> bool {
        self.dir.as_deref() == Some(".")
    }
}

/// How file sizes are drawn: `"1m"`, `{ min = "4k", max = "1m" }` or
/// `{ table = [["4k", 3], ["1m", 1]] }` (size, weight).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum SizeDist {
    Fixed(Bytes),
    Range { min: Bytes, max: Bytes },
    Table { table: Vec<(Bytes, u32)> },
}

/// Written by hand so that a bad size says what is wrong with it (an untagged enum would only
/// say that nothing matched).
impl<'de> Deserialize<'de> for SizeDist {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Spec {
            min: Option<Bytes>,
            max: Option<Bytes>,
            table: Option<Vec<(Bytes, u32)>>,
        }
        use serde::de::Error;
        let value = toml::Value::deserialize(d)?;
        if let Some(s) = value.as_str() {
            return s.parse().map(SizeDist::Fixed).map_err(D::Error::custom);
        }
        if let Some(n) = value.as_integer() {
            return u64::try_from(n)
                .map(|n| SizeDist::Fixed(Bytes(n)))
                .map_err(|_| D::Error::custom(format!("{n} is negative")));
        }
        if !value.is_table() {
            return Err(D::Error::custom(
                "expected a size (\"1m\"), a range ({ min = \"4k\", max = \"1m\" }) or a table ({ table = [[\"4k\", 3], [\"1m\", 1]] })",
            ));
        }
        let spec = Spec::deserialize(value).map_err(|e| D::Error::custom(e.to_string().trim().replace('\n', " ")))?;
        match spec {
            Spec {
                min: Some(min),
                max: Some(max),
                table: None,
            } => Ok(SizeDist::Range { min, max }),
            Spec {
                min: None,
                max: None,
                table: Some(table),
            } => Ok(SizeDist::Table { table }),
            _ => Err(D::Error::custom(
                "a size range takes both `min` and `max`; a size table takes `table` alone",
            )),
        }
    }
}

impl Default for SizeDist {
    fn default() -> Self {
        SizeDist::Fixed(Bytes(0))
    }
}

impl SizeDist {
    /// The narrowest sizes that hold every one of `sizes`: the one size they all are, or the
    /// range from the least to the greatest (None for no sizes).
    pub fn spanning(sizes: impl IntoIterator<Item = u64>) -> Option<SizeDist> {
        let (lo, hi) = sizes.into_iter().fold(None, |span: Option<(u64, u64)>, s| match span {
            None => Some((s, s)),
            Some((lo, hi)) => Some((lo.min(s), hi.max(s))),
        })?;
        Some(if lo == hi {
            SizeDist::Fixed(Bytes(lo))
        } else {
            SizeDist::Range {
                min: Bytes(lo),
                max: Bytes(hi),
            }
        })
    }

    pub fn min(&self) -> u64 {
        match self {
            SizeDist::Fixed(b) => b.0,
            SizeDist::Range { min, .. } => min.0,
            SizeDist::Table { table } => table.iter().map(|e| e.0 .0).min().unwrap_or(0),
        }
    }

    pub fn max(&self) -> u64 {
        match self {
            SizeDist::Fixed(b) => b.0,
            SizeDist::Range { max, .. } => max.0,
            SizeDist::Table { table } => table.iter().map(|e| e.0 .0).max().unwrap_or(0),
        }
    }

    /// The mean size the draws tend to: the middle of a range, the weighted mean of a table.
    pub fn mean(&self) -> f64 {
        match self {
            SizeDist::Fixed(b) => b.0 as f64,
            SizeDist::Range { min, max } => (min.0 as f64 + max.0 as f64) / 2.0,
            SizeDist::Table { table } => {
                let weights: f64 = table.iter().map(|e| f64::from(e.1)).sum();
                if weights == 0.0 {
                    return 0.0;
                }
                table.iter().map(|e| e.0 .0 as f64 * f64::from(e.1)).sum::<f64>() / weights
            }
        }
    }

    /// Draws a size: uniform in [min, max] for a range, weighted for a table.
    pub fn sample(&self, rng: &mut impl rand::Rng) -> u64 {
        use rand::RngExt;
        match self {
            SizeDist::Fixed(b) => b.0,
            SizeDist::Range { min, max } => rng.random_range(min.0..=max.0),
            SizeDist::Table { table } => {
                let total: u64 = table.iter().map(|e| e.1 as u64).sum();
                let mut pick = rng.random_range(0..total);
                for (size, weight) in table {
                    if pick < *weight as u64 {
                        return size.0;
                    }
                    pick -= *weight as u64;
                }
                table.last().map_or(0, |e| e.0 .0)
            }
        }
    }
}

/// Threads that share a fileset, a mix of operations and an I/O setup.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Group {
    pub name: String,
    #[serde(default = "one_u32")]
    pub threads: u32,
    /// The fileset the threads work on; with several, each operation picks one at random (as
    /// FFSB's threads pick a filesystem). A script group needs none.
    #[serde(default, skip_serializing_if = "Names::is_empty")]
    pub fileset: Names,
    /// How the next operation is chosen: at random by weight, or by `ratio`, keeping the
    /// counts done in proportion to the weights (sysbench's rndrw).
    #[serde(default, skip_serializing_if = "is_default")]
    pub pick: Pick,
    /// sysbench's periodic fsync: after this many read and write operations, when some write
    /// made the files dirty, fsync every file of the fileset, each counted as an `fsync`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fsync_every: Option<u64>,
    /// The threads draw their operations from one generator, as sysbench's do: `stop.ops` is
    /// the group's, claimed an operation at a time by whichever thread is free; `fsync_every`
    /// counts the group's operations, and its fsyncs are taken one file at a time by the
    /// threads that ask next; `pick = "ratio"` keeps the group's counts, not each thread's, in
    /// proportion. The weighted mix only: not with a script, `stop.child_end` or io_uring.
    #[serde(default, skip_serializing_if = "is_false")]
    pub shared_requests: bool,
    /// Each thread fsyncs every file of the fileset when it stops, inside the measured time
    /// (sysbench's end-of-test fsync).
    #[serde(default, skip_serializing_if = "is_false")]
    pub fsync_end: bool,
    /// How `fsync_every` and `fsync_end` sync each file: `fsync` or `fdatasync` (sysbench's
    /// --file-fsync-mode).
    #[serde(default, skip_serializing_if = "is_default")]
    pub fsync_kind: SyncKind,
    /// Pause after each operation (FFSB's op_delay).
    #[serde(default, skip_serializing_if = "is_zero_span")]
    pub delay: Span,
    /// Rate limit of the whole group, shared evenly by its threads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Rate>,
    #[serde(default, skip_serializing_if = "is_default")]
    pub engine: EngineKind,
    /// Transfers in flight per thread (io_uring only).
    #[serde(default = "one_u32", skip_serializing_if = "is_one")]
    pub iodepth: u32,
    /// How an io_uring group uses its ring (io_uring only; fio's io_uring engine options).
    #[serde(default, skip_serializing_if = "is_default")]
    pub uring: UringOpts,
    /// How a libaio group submits, reaps and times its requests (libaio only; fio's batch
    /// options, sysbench's async mode).
    #[serde(default, skip_serializing_if = "is_default")]
    pub aio: AioOpts,
    /// O_DIRECT, with buffers and offsets aligned.
    #[serde(default, skip_serializing_if = "is_false")]
    pub direct: bool,
    /// O_SYNC or O_DSYNC on every open.
    #[serde(default, skip_serializing_if = "is_default")]
    pub osync: OSync,
    /// Keep files open between operations (as fio does), open and close them in every
    /// operation (as FFSB does), or open them once for all the threads (as sysbench does).
    #[serde(default, skip_serializing_if = "is_default")]
    pub open: OpenMode,
    /// Files are opened `O_RDWR` even to be read, as sysbench opens every test file; otherwise a
    /// file is opened `O_RDONLY` when the group (or, opened per operation, the operation) only
    /// reads it.
    #[serde(default, skip_serializing_if = "is_false")]
    pub rdwr: bool,
    /// Every open adds `O_CREAT` (with the fileset's mode), though the files are there, as
    /// IOzone 3.487's random writers open theirs (`open(O_RDWR|O_CREAT, 0640)`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub open_creates: bool,
    /// What the group's writes carry.
    #[serde(default, skip_serializing_if = "is_default")]
    pub data: Data,
    #[serde(rename = "op", default, skip_serializing_if = "Vec::is_empty")]
    pub ops: Vec<OpSpec>,
    /// Instead of a mix of operations: a script each thread replays in order, from the start
    /// again at its end (dbench's loadfiles).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script: Option<crate::script::Script>,
    /// How this group's threads end, in place of the run's `stop.child_end` (which it needs):
    /// IOzone's mixed workload ends its writers as random writers, its readers as random readers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub child_end: Option<ChildEnd>,
    /// Time each system call the operations make, apart, per kind (open, read, write, lseek,
    /// close, stat, unlink, fsync): the result's `calls` (FFSB 6.0's `[stats]`). The `sync` and
    /// `seek` engines only, with `[[group.op]]`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub call_latency: bool,
}

impl Group {
    /// One thread on `fileset` with every other setting at its default and no operations yet.
    pub fn new(name: &str, fileset: &str) -> Group {
        Group {
            name: name.to_string(),
            threads: 1,
            fileset: fileset.into(),
            pick: Pick::default(),
            fsync_every: None,
            shared_requests: false,
            fsync_end: false,
            fsync_kind: SyncKind::Fsync,
            delay: Span::default(),
            rate: None,
            engine: EngineKind::default(),
            iodepth: 1,
            uring: UringOpts::default(),
            aio: AioOpts::default(),
            direct: false,
            osync: OSync::default(),
            open: OpenMode::default(),
            rdwr: false,
            open_creates: false,
            data: Data::default(),
            ops: Vec::new(),
            script: None,
            child_end: None,
            call_latency: false,
        }
    }
}

impl Workload {
    /// An empty workload: add filesets and groups.
    pub fn new(name: &str) -> Workload {
        Workload {
            name: name.to_string(),
            description: String::new(),
            seed: None,
            stop: Stop::default(),
            filesets: Vec::new(),
            groups: Vec::new(),
            cleanup: false,
            processes: false,
        }
    }

    /// How the groups use fileset `name`: (some operation creates, deletes or renames files in
    /// it, some operation makes directories in it).
    pub fn fileset_use(&self, name: &str) -> (bool, bool) {
        let ops = || {
            self.groups
                .iter()
                .filter(|g| g.fileset.contains(name))
                .flat_map(|g| &g.ops)
        };
        let dynamic = ops().any(|o| o.op.changes_membership());
        let meta = ops().any(|o| matches!(o.op, OpKind::Mkdir | OpKind::Rmdir | OpKind::MetaOp));
        (dynamic, meta)
    }

    pub fn fileset(&self, name: &str) -> Option<&Fileset> {
        self.filesets.iter().find(|f| f.name == name)
    }

    pub fn total_threads(&self) -> u64 {
        self.groups.iter().map(|g| g.threads as u64).sum()
    }

    /// Thread `t` of group `gi`'s number among the threads working on the same filesets: the
    /// threads of the groups before it on those filesets come first. Its own file (`scope =
    /// "own"`, and each IOzone child's) is this number modulo the files, so that two groups on
    /// one fileset (IOzone's mixed workload: a group of one per child) take files of their own.
    pub fn thread_on_fileset(&self, gi: usize, t: u32) -> u64 {
        let same = |g: &Group| g.fileset == self.groups[gi].fileset;
        let before: u64 = self.groups[..gi]
            .iter()
            .filter(|g| same(g))
            .map(|g| g.threads as u64)
            .sum();
        before + t as u64
    }
}

/// One name or several.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Names(pub Vec<String>);

impl Names {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn contains(&self, name: &str) -> bool {
        self.0.iter().any(|n| n == name)
    }

    pub fn first(&self) -> &str {
        self.0.first().map_or("", |s| s.as_str())
    }
}

impl From<&str> for Names {
    fn from(s: &str) -> Names {
        Names(vec![s.to_string()])
    }
}

impl fmt::Display for Names {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.join(", "))
    }
}

/// One fileset's name, or a list of them.
impl schemars::JsonSchema for Names {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Names".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "one name, or a list of names",
            "anyOf": [
                { "type": "string" },
                { "type": "array", "items": { "type": "string" } }
            ]
        })
    }
}

impl Serialize for Names {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0.as_slice() {
            [one] => s.serialize_str(one),
            many => many.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Names {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged, expecting = "a fileset name or a list of them")]
        enum Form {
            One(String),
            Many(Vec<String>),
        }
        Ok(match Form::deserialize(d)? {
            Form::One(s) => Names(vec![s]),
            Form::Many(v) => Names(v),
        })
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Pick {
    #[default]
    Random,
    Ratio,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Rate {
    /// Operations per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ops: Option<u64>,
    /// Bytes per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<Bytes>,
    /// How the operations come: evenly, each thread its share; or at random for the whole group.
    #[serde(default, skip_serializing_if = "is_default")]
    pub arrivals: Arrivals,
    /// With Poisson arrivals: the most operations that may have arrived and wait for a thread;
    /// more fails the run, as sysbench's full event queue does (131,072 events).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<u64>,
}

/// The start of the error that ends a run whose arrivals overflow `rate.queue`.
pub const QUEUE_FULL: &str = "the queue of operations waiting for a thread is full";

/// When a rate's operations come.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Arrivals {
    /// Each thread paces its share of the rate evenly; an operation's latency is its own time.
    #[default]
    Even,
    /// sysbench's `--rate`: the group's operations arrive at random (exponential gaps, a
    /// Poisson process of the rate), each taken by the next free thread, and each one's latency
    /// counts from its arrival, its wait for a thread included.
    Poisson,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EngineKind {
    /// pread/pwrite.
    #[default]
    Sync,
    /// io_uring with `iodepth` transfers in flight.
    IoUring,
    /// Linux native AIO (`io_submit`, `io_getevents`), as libaio: up to `iodepth` transfers in
    /// flight, each submitted on its own (sysbench's async mode, fio's libaio).
    Libaio,
    /// mmap and memcpy; msync for fsync.
    Mmap,
    /// read()/write() at the file's position, with an lseek() first when a transfer does not
    /// start where the last one on that descriptor ended: the calls IOzone (and FFSB) make.
    Seek,
}

impl fmt::Display for EngineKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            EngineKind::Sync => "sync",
            EngineKind::IoUring => "io_uring",
            EngineKind::Libaio => "libaio",
            EngineKind::Mmap => "mmap",
            EngineKind::Seek => "seek",
        })
    }
}

/// How an io_uring group sets up and drives its rings: `[group.uring]`. Each setting is named
/// after fio's io_uring engine option it matches, where there is one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UringOpts {
    /// Register the group's open files with the ring, sparing the kernel a file lookup per
    /// transfer (fio's registerfiles).
    #[serde(default, skip_serializing_if = "is_false")]
    pub registerfiles: bool,
    /// Register the I/O buffers with the ring, sparing the kernel a page pin per transfer
    /// (fio's fixedbufs). When absent: registered unless transfers go to io-wq marked async,
    /// where each worker takes the ring's lock to look its buffer up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixedbufs: Option<bool>,
    /// How the kernel runs the completions' task work in the submitting thread (see
    /// [`Taskrun`]).
    #[serde(default, skip_serializing_if = "is_default")]
    pub taskrun: Taskrun,
    /// IOSQE_ASYNC on every transfer, handing it to the kernel's io-wq workers at once instead
    /// of trying it inline first (fio's force_async = 1). When absent: on a file the kernel punts
    /// to io-wq anyway (preadv2 with RWF_NOWAIT fails with EOPNOTSUPP, as on tmpfs), unless the
    /// processors leave each ring exactly one beyond its thread's own (see
    /// `io::uring::punted_plan`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub force_async: Option<bool>,
    /// The most io-wq workers the ring's thread may have for bounded work (regular files);
    /// 0 leaves the kernel's limit.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub iowq_workers: u32,
    /// Transfers queued before they are submitted together (fio's iodepth_batch_submit); 0
    /// submits whatever is queued once every free slot has been filled. When absent: each
    /// transfer as it is queued where transfers are tried inline (the device starts on each at
    /// once, as with fio's default of 1), all that fit where they go to io-wq marked async
    /// (a submission there only queues work for io-wq's threads).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_submit: Option<u32>,
    /// Completions waited for in one system call (fio's iodepth_batch_complete_min); at most
    /// the transfers in flight.
    #[serde(default = "one_u32", skip_serializing_if = "is_one")]
    pub batch_complete: u32,
    /// How long a thread that waits for completions first keeps checking for them (running the
    /// ring's task work) before it sleeps; `0s` sleeps at once. When absent (see
    /// `io::uring::UringBackend::settle`): on a file a device completes, 50 µs, yielding between
    /// checks, unless its transfers are forced async or `hipri` polls; on a file whose transfers
    /// go to io-wq workers (tmpfs), 20 µs when the processors leave each ring one or more beyond
    /// its thread's own, else 50 µs yielding from iodepth 2 on when transfers are marked async
    /// by the ring's own plan.
    pub spin: Option<Span>,
    /// Whether a spinning thread yields its processor (sched_yield) between checks, to whatever
    /// else is ready to run there: the device's worker, the thread that completes its
    /// transfers, another thread of the run. When absent, it does except where the ring's plan
    /// leaves its thread a processor of its own beside its io-wq worker (tmpfs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spin_yield: Option<bool>,
    /// A kernel thread polls the submission queue, so that submitting takes no system call
    /// (fio's sqthread_poll); it keeps a processor busy.
    #[serde(default, skip_serializing_if = "is_false")]
    pub sqpoll: bool,
    /// Polled completions for O_DIRECT on devices that poll (fio's hipri, IORING_SETUP_IOPOLL).
    #[serde(default, skip_serializing_if = "is_false")]
    pub hipri: bool,
}

impl Default for UringOpts {
    fn default() -> Self {
        UringOpts {
            registerfiles: false,
            fixedbufs: None,
            taskrun: Taskrun::default(),
            force_async: None,
            iowq_workers: 0,
            batch_submit: None,
            batch_complete: 1,
            spin: None,
            spin_yield: None,
            sqpoll: false,
            hipri: false,
        }
    }
}

/// How a libaio group submits, reaps and times its requests: `[group.aio]`. The batch settings
/// are named as `[group.uring]`'s and mean what fio's options of the same names mean for its
/// libaio engine; their defaults are fio's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AioOpts {
    /// Requests queued before one `io_submit()` sends them together (fio's
    /// iodepth_batch_submit); 0: as many as the context has room for. Whatever is queued is also
    /// sent once the context is full, before the thread waits for a completion.
    #[serde(default = "one_u32", skip_serializing_if = "is_one")]
    pub batch_submit: u32,
    /// Completions one `io_getevents()` waits for once `iodepth` requests are in flight (fio's
    /// iodepth_batch_complete_min).
    #[serde(default = "one_u32", skip_serializing_if = "is_one")]
    pub batch_complete: u32,
    /// The most requests that `io_getevents()` reaps (fio's iodepth_batch_complete_max). When
    /// absent, `batch_complete`, as in fio: with the defaults each completion frees one slot for
    /// the next request and the queue stays full. sysbench's async mode reaps up to its whole
    /// backlog.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reap_max: Option<u32>,
    /// An operation's latency is its `io_submit()` and any wait for a free slot, as sysbench
    /// times its events, instead of the time until its request is reaped (fio's, submission to
    /// completion).
    #[serde(default, skip_serializing_if = "is_false")]
    pub submit_latency: bool,
}

impl Default for AioOpts {
    fn default() -> Self {
        AioOpts {
            batch_submit: 1,
            batch_complete: 1,
            reap_max: None,
            submit_latency: false,
        }
    }
}

impl AioOpts {
    /// The most requests one `io_getevents()` reaps: `reap_max`, else `batch_complete`.
    pub fn reap_max(&self) -> u32 {
        self.reap_max.unwrap_or(self.batch_complete)
    }
}

/// When the kernel runs the task work that turns finished transfers into completions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Taskrun {
    /// Whenever the kernel interrupts the thread for it (the kernel's default).
    Signal,
    /// At the thread's next system call, without interrupting it (IORING_SETUP_COOP_TASKRUN).
    Coop,
    /// Only when the thread waits for completions (IORING_SETUP_SINGLE_ISSUER and
    /// DEFER_TASKRUN, as fio sets up its rings); the default.
    #[default]
    Defer,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OSync {
    #[default]
    None,
    Sync,
    Dsync,
}

/// The bytes a group writes: its threads' buffers are filled once, at the start.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Data {
    /// Seeded pseudo-random bytes, which neither compress nor deduplicate.
    #[default]
    Random,
    /// Zero bytes.
    Zeros,
    /// IOzone 3.487's (`fill_buffer` without `-V`): 8 bytes of `m` (0x6d) at the start of every
    /// 4 KiB, zeros elsewhere.
    Iozone,
    /// IOzone 3.487's record buffer once its throughput parent has `prepage()`d it (it does so
    /// when it has forked the initial writers, without `-T`): [`Iozone`](Data::Iozone)'s, and
    /// an `m` at every 32nd byte (one per cache line), 135 bytes of `m` in every 4 KiB. IOzone's
    /// rewriters and fwriters write it.
    IozonePrepaged,
    /// IOzone 3.487's 1 MiB buffer as its random, pwrite and mixed writers forked after the
    /// prepage use it: the run's worker number n writes from record n % (1 MiB ÷ its block) of
    /// it (the first when the block is 1 MiB or more), and only the first record was prepaged:
    /// [`IozonePrepaged`](Data::IozonePrepaged) for the workers whose record is the first,
    /// [`Iozone`](Data::Iozone) for the others. A fileset's setup writes `Iozone`'s.
    IozoneShared,
    /// sysbench's `--validate`: each block written (one write call) is random bytes, then their
    /// CRC-32 and the block's offset in the file; each block that a group with this data reads
    /// whole is checked, and a mismatch fails the read.
    Checked,
}

impl Data {
    /// Every kind of data.
    pub const ALL: [Data; 6] = [
        Data::Random,
        Data::Zeros,
        Data::Iozone,
        Data::IozonePrepaged,
        Data::IozoneShared,
        Data::Checked,
    ];

    /// The data a workload file names `name`.
    pub fn named(name: &str) -> Option<Data> {
        Data::ALL.into_iter().find(|d| d.name() == name)
    }

    /// What worker number `worker` of the run writes, its blocks being `block` bytes: the
    /// data itself, but for [`IozoneShared`](Data::IozoneShared).
    pub(crate) fn for_worker(self, worker: u64, block: u64) -> Data {
        const IOZONE_BUFFER: u64 = 1 << 20;
        match self {
            Data::IozoneShared if block >= IOZONE_BUFFER || worker.is_multiple_of(IOZONE_BUFFER / block.max(1)) => {
                Data::IozonePrepaged
            }
            Data::IozoneShared => Data::Iozone,
            data => data,
        }
    }

    /// As a workload file writes it.
    pub fn name(self) -> &'static str {
        match self {
            Data::Random => "random",
            Data::Zeros => "zeros",
            Data::Iozone => "iozone",
            Data::IozonePrepaged => "iozone_prepaged",
            Data::IozoneShared => "iozone_shared",
            Data::Checked => "checked",
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OpenMode {
    /// Each thread opens a file at its first operation on it and keeps it open (fio).
    #[default]
    Keep,
    /// Each operation opens its file and closes it again (FFSB).
    PerOp,
    /// The run opens every file of the group's one fileset once, in order, before the threads
    /// start (an fstat of each checks the size of a file the setup wrote), and every thread
    /// uses those descriptors; they are closed once the threads have ended (sysbench's
    /// `file_prepare()` and `file_done()`). With the mmap engine the run then maps every file
    /// whole, in order (a file the setup did not write is first given its size with
    /// `ftruncate()`), the threads share the mappings, and they are unmapped after the closes,
    /// as sysbench's mmap mode does.
    Shared,
}

/// One operation of a group's mix. Which fields apply depends on `op`; `validate` refuses the
/// ones that do not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OpSpec {
    pub op: OpKind,
    /// A name for this entry of the mix: labelled entries are counted and reported apart from
    /// the other entries of the same `op` (FFSB's `write` and `write_fsync` are both writes).
    /// Entries with the same `op` and label are counted together, as unlabelled ones are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    #[serde(default = "one_u32")]
    pub weight: u32,
    /// Bytes moved per operation (read, write, append).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<Bytes>,
    /// Bytes per read()/write() call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bs: Option<Bytes>,
    /// read, write: the operation's bytes are split into this many runs, each at a random offset
    /// (1: one seek, then contiguous blocks; size/bs: every block at a random offset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seeks: Option<u32>,
    /// read, write: a gap left between consecutive blocks of a run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip: Option<Bytes>,
    /// read, write: the operation starts at the file's first byte, not at a random offset
    /// (FFSB's read_skip reads, each a stride from the head of its file); one run only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_start: Option<bool>,
    /// read, write: random offsets are multiples of this (default: the block size).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub align: Option<Bytes>,
    /// read, write: each thread deals a file's aligned offsets as a shuffled deck, every one
    /// once before any comes again (IOzone's random readers and writers; fio's random map).
    /// Without it each offset is drawn on its own, so some come twice before others once (fio's
    /// `norandommap`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shuffle: Option<bool>,
    /// read, write with `shuffle`: the order of the deck. `keyed` (the default) deals a new
    /// order every pass, drawn from the thread's generator. `iozone` deals IOzone 3.487's: its
    /// records shuffled by swapping record i with record (a draw of MT19937-64, keyed as IOzone
    /// keys it) mod n, for i from 0 to n; the same order for every thread, pass and run, as each
    /// of IOzone's random children and tests makes it again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shuffle_order: Option<ShuffleOrder>,
    /// create, write, writeall, append, seqwrite, rewrite: fsync or fdatasync before close.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync: Option<SyncKind>,
    /// seqwrite, rewrite: the `sync` after every block, not only after the file's last
    /// (sysbench's --file-fsync-all in its sequential modes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync_each: Option<bool>,
    /// seqread, seqwrite, rewrite: each thread its own file, or one cursor over the whole fileset;
    /// read, write: `own` keeps each thread on its own file (file = thread mod files, the threads
    /// of every group on the fileset numbered together, in the groups' order).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<Scope>,
    /// seqread, seqwrite, rewrite: start again at the beginning after the end (default: the
    /// thread is finished).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wrap: Option<bool>,
    /// seqread with own scope: from the end of the file to its start (IOzone's backward read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverse: Option<bool>,
    /// seqread with own scope: IOzone's stride read, `stride` blocks apart. From block 0, each
    /// next block is `stride` on; when that would reach the file's last block, the stream
    /// starts again one block further in (block 1, then 2, ...), so that it touches every block.
    /// It never ends: a quota of operations stops it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stride: Option<u64>,
    /// read and write of one block at a random offset, and seqread, seqwrite and rewrite with a
    /// shared scope: only each file's first `extent` bytes, the files taken as laid end to end,
    /// as sysbench lays out its test files (`--file-total-size` ÷ `--file-num` each, which need
    /// not be a whole number of blocks). A random offset is drawn over the whole and aligned to
    /// `align` there, then falls in the file and at the offset it lands on (so that in every file
    /// but the first it may be off the block boundaries); a transfer stops at its file's extent,
    /// and a shared stream walks each file's extent, its last transfer cut short there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extent: Option<Bytes>,
    /// stat, delete, open_close: which file is next, a random one (the default) or the files in
    /// the order they were made (see [`Order`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<Order>,
    /// FFSB's calls for read, readall, write, writeall and create (set by the FFSB front-end; not
    /// part of a workload file): the file is `stat()`ed by name once open (read, readall, write,
    /// writeall), and blocks move with `read()`/`write()` at the file offset, an `lseek()`
    /// wherever the next block is not where the last one ended, instead of `pread`/`pwrite`;
    /// create opens with `O_CREAT | O_RDWR | O_TRUNC` instead of `O_CREAT | O_WRONLY | O_EXCL`
    /// (the name is a fresh one or a deleted file's, so nothing is truncated); mkdir is
    /// createdir's, `<dir_prefix><N>` in the fileset's directory, N counting on from `dirs`,
    /// where later creates may put files.
    /// Sync engine only.
    #[serde(skip)]
    #[schemars(skip)]
    pub ffsb_calls: bool,
    /// read and write of one block on the `seek` engine: instead of an `lseek()` to the
    /// block before the transfer, one back to its start after it, so that a block there again
    /// needs none, as IOzone 3.487's record rewrite (`rewriterec_perf_test`) writes record 0
    /// again and again: `write()`, `lseek(0, SEEK_SET)` (set by the IOzone front-end; not part
    /// of a workload file).
    #[serde(skip)]
    #[schemars(skip)]
    pub seek_back: bool,
    /// create: open without `O_DIRECT` even in a `direct` group, as FFSB 5.2.1's
    /// `fhopencreate()` does (set by the FFSB front-end; not part of a workload file).
    #[serde(skip)]
    #[schemars(skip)]
    pub buffered_create: bool,
}

/// The order of a shuffled deck (`OpSpec::shuffle_order`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ShuffleOrder {
    /// A new order every pass, from the thread's generator.
    #[default]
    Keyed,
    /// IOzone 3.487's order of its records, the same every time.
    Iozone,
}

/// The order in which an operation goes through the files of its fileset.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Order {
    /// A file drawn at random.
    #[default]
    Random,
    /// The files by id, oldest first, as fio's file_service_type = sequential and mdtest go
    /// through theirs: one cursor for the fileset, starting over after the newest file (stat,
    /// open_close); delete takes the oldest file left.
    Sequential,
}

impl OpSpec {
    pub fn new(op: OpKind) -> OpSpec {
        OpSpec {
            op,
            label: None,
            weight: 1,
            size: None,
            bs: None,
            seeks: None,
            skip: None,
            from_start: None,
            stride: None,
            sync_each: None,
            align: None,
            shuffle: None,
            shuffle_order: None,
            sync: None,
            scope: None,
            wrap: None,
            reverse: None,
            extent: None,
            order: None,
            ffsb_calls: false,
            seek_back: false,
            buffered_create: false,
        }
    }

    /// The block size, 4 KiB when not given.
    pub fn block_size(&self) -> u64 {
        self.bs.map_or(4096, |b| b.0)
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SyncKind {
    #[default]
    Fsync,
    Fdatasync,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    #[default]
    Own,
    Shared,
}

/// A seed: an integer, or a string of digits (how a workload file holds one above i64::MAX).
fn seed_from<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged, expecting = "a seed: an integer from 0, or a string of its digits")]
    enum Seed {
        Number(u64),
        Digits(String),
    }
    match Seed::deserialize(d)? {
        Seed::Number(n) => Ok(Some(n)),
        Seed::Digits(t) => t.trim().parse().map(Some).map_err(|_| {
            serde::de::Error::custom(format!(
                "`{}` is not a seed (an integer from 0 to 18446744073709551615)",
                crate::input::excerpt(&t)
            ))
        }),
    }
}

fn default_prefix() -> String {
    "f".to_string()
}
fn is_default_prefix(p: &String) -> bool {
    p == "f"
}
fn default_dir_prefix() -> String {
    "d".to_string()
}
fn is_default_dir_prefix(p: &String) -> bool {
    p == "d"
}
fn one() -> u64 {
    1
}
fn one_u32() -> u32 {
    1
}
fn is_one(n: &u32) -> bool {
    *n == 1
}
fn is_zero_u32(n: &u32) -> bool {
    *n == 0
}
fn yes() -> bool {
    true
}
fn is_false(b: &bool) -> bool {
    !*b
}
fn is_zero_span(s: &Span) -> bool {
    s.0.is_zero()
}
fn is_default<T: Default + PartialEq>(t: &T) -> bool {
    *t == T::default()
}

#[cfg(test)]
mod tests {
    use super::{Bytes, Data, SizeDist};

    #[test]
    fn sizes_are_spanned_by_one_size_or_the_range_from_least_to_greatest() {
        assert_eq!(SizeDist::spanning([]), None);
        assert_eq!(SizeDist::spanning([7, 7, 7]), Some(SizeDist::Fixed(Bytes(7))));
        assert_eq!(
            SizeDist::spanning([9, 4, 7]),
            Some(SizeDist::Range {
                min: Bytes(4),
                max: Bytes(9)
            })
        );
    }

    #[test]
    fn data_is_named_as_workload_files_spell_it() {
        for data in Data::ALL {
            assert_eq!(serde_json::to_string(&data).unwrap(), format!("\"{}\"", data.name()));
            assert_eq!(Data::named(data.name()), Some(data));
        }
    }

    #[test]
    fn an_iozone_child_writes_the_prepaged_record_where_its_own_is_the_first() {
        let k = 1024;
        let of = |worker, block| Data::IozoneShared.for_worker(worker, block);
        // 16 KiB records: 64 to IOzone's 1 MiB buffer, child n writing record n % 64.
        assert_eq!(of(0, 16 * k), Data::IozonePrepaged);
        assert_eq!(of(1, 16 * k), Data::Iozone);
        assert_eq!(of(63, 16 * k), Data::Iozone);
        assert_eq!(of(64, 16 * k), Data::IozonePrepaged);
        // Records of 1 MiB or more: every child writes from the buffer's start.
        assert_eq!(of(5, 1024 * k), Data::IozonePrepaged);
        assert_eq!(of(5, 4096 * k), Data::IozonePrepaged);
        assert_eq!(Data::IozonePrepaged.for_worker(3, 4 * k), Data::IozonePrepaged);
        assert_eq!(Data::Iozone.for_worker(0, 4 * k), Data::Iozone);
    }
}
