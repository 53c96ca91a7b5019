//! FFSB (the Flexible Filesystem Benchmark) on fslab's engine.
//!
//! [`parse`] reads a profile in FFSB 6.0's or 5.x's grammar into a [`Profile`] and checks it,
//! [`compile`] turns it into engine workloads (the benchmark, and one aging run per filesystem
//! with `agefs`), [`execute`] runs them as FFSB would (aging, untimed fileset setup, the callout,
//! the timed run with its final sync), and `report` prints what FFSB prints and puts FFSB's
//! figures into [`RunResult::classic`](fslab_engine::RunResult).
//!
//! What FFSB does and how it counts is in ../shared/reference/classic-benchmarks.md (section 1).
//! Deliberate differences: bytes written by `write` count `write_size` (FFSB 5.x; 6.0 counts the
//! whole file), an error stops the run with its message instead of an assertion, and a profile
//! FFSB would misread (an unknown option, a malformed value) is refused with its line.
//!
//! The system calls of each operation, as FFSB makes them (5.2.1 and 6.0, `fileops.c`, `fh.c`,
//! `metaops.c`; `[O_DIRECT]` with `directio=1`) and fslab (OpSpec::ffsb_calls). FFSB makes every
//! file and directory 0700 (`S_IRWXU`), and so does fslab here (`Fileset::mode`):
//!
//! | operation | FFSB | fslab |
//! |---|---|---|
//! | read | `open(O_RDONLY[\|O_DIRECT])`, `stat(name)`, `lseek(SEEK_SET)` to a random offset when the file is longer than `read_size`, `read()` × `read_size / read_blocksize` (and the rest), `close()`; `read_random`: `lseek` + `read` per block; `read_skip`: `read` + `lseek(SEEK_CUR, skipsize)` per block | the same; `openat()` and `newfstatat()` relative to the fileset's directory; a skip read as FFSB's: from offset 0, an `lseek(SEEK_CUR)` after every whole block, and made whole even at the run's end |
//! | readall | `open(O_RDONLY[\|O_DIRECT])`, `stat(name)`, `read()` × size / `read_blocksize` (and the rest), `close()` | the same |
//! | write, write_fsync | `open(O_WRONLY[\|O_DIRECT])`, `stat(name)`, `lseek` (as read), `write()` × `write_size / write_blocksize`, `fsync()` (write_fsync; 5.x write with `fsync_file`), `close()` | the same |
//! | writeall, writeall_fsync (6.0) | `open(O_WRONLY[\|O_DIRECT])`, `stat(name)`, `write()` over the whole file, (`fsync()`), `close()` | the same |
//! | append, append_fsync | `open(O_APPEND\|O_WRONLY[\|O_DIRECT])`, `write()` × `write_size / write_blocksize`, (`fsync()`), `close()` | the same |
//! | create, create_fsync | `open(O_CREAT\|O_RDWR\|O_TRUNC[\|O_DIRECT], 0700)`, `write()`s of `write_blocksize` over a size drawn from min..max, (`fsync()`), `close()` | the same (`openat()`): the name is always a new one, so `O_TRUNC` truncates nothing; as 5.2.1's, a 5.x profile's create opens without `O_DIRECT` even with `directio=1` (6.0 adds it) |
//! | delete | `unlink(name)` | `unlinkat()` |
//! | metaop | in `meta/`: `mkdir(0700)`, `mkdir(0700)`, `rmdir` (a random one), `rename` (a random one, its name and an `a`); a removed name is made again by a later mkdir, the first removed first | the same calls and names (`mkdirat`, `unlinkat(AT_REMOVEDIR)`, `renameat` in the directory), in `meta/` beside `data/` (`Fileset::meta_beside`) |
//! | createdir (6.0) | `mkdir(data/datadir<N>, 0700)`, N counting on from `num_dirs`, and `dirnum: N` printed; later creates may put files in it | the same `mkdir` (`mkdirat()` in `data/`), the same lines (after `Starting Actual Benchmark At`), and later creates draw it as FFSB's do |
//! | stat (6.0) | `stat(name)` | `newfstatat()`, which follows a link as `stat()` does |
//! | open_close (6.0) | `open(O_RDONLY[\|O_DIRECT])`, `close()` | the same |
//!
//! Every path is relative to a directory descriptor (`*at()` calls) where FFSB passes full
//! paths (a file in a directory createdir added: `datadir<N>/datafile<M>` from `data/`); fslab opens nothing through a symlink in the fileset (`O_NOFOLLOW`). The starting files, made before the
//! timed run, are made as FFSB's `add_files()` makes them (`SetupCalls::Ffsb`): one at a time,
//! in order, each `open(O_CREAT|O_RDWR|O_TRUNC, 0700)` (fslab adds `O_EXCL|O_NOFOLLOW`), never
//! with `O_DIRECT` (5.2.1's `fhopencreate()` leaves it out; 6.0's `add_files()` turns `directio`
//! off while it runs), `write()`s of `create_blocksize` (the last one shorter), `close()`. Once
//! every filesystem is set up, one `sync()`, as FFSB's main() makes it: before the callout and
//! the benchmark, also when the files were kept (`reuse=1`), and none when `time=0` ends the run
//! after the setup. One at a time matters beyond the calls: files
//! written side by side interleave their blocks on the disk. The data, in the files the setup
//! and the aging write and in every write of the run, is zeros in both: FFSB's buffers are
//! zeroed when allocated (`ffsb_malloc`) and never filled (the engine's `data = "zeros"`).
//!
//! Aging (`agefs=1`, `ffsb_fs.c`'s `age_fs()`): FFSB removes `data` and `meta`, seeds ten empty
//! files with the same `add_files()` (so fslab makes them as it makes the starting files, but
//! without a sync after them, as FFSB) and runs the aging threadgroup on `data/fillfile<N>`,
//! beside the benchmark's files, checking the utilisation (`statfs`) once a second from one
//! thread, so it overshoots `desired_util` by about a second of writing. fslab does the same:
//! `data/fillfile<N>`, one check a second by the monitor (`Stop::util_poll`); the fill and the
//! benchmark's files leave each other alone (`Fileset::neighbours`). Measured on a 4 GiB ext4
//! image, desired_util 0.20, 4 aging threads: FFSB 5.2.1 ended at 22-37% (df) with 11-19k
//! files, fslab at 25-26% with 12-13k. (FFSB's filesystems carry a `num_age_dirs` for
//! subdirectories of the fill, but neither 5.2.1's nor 6.0's parser sets it: the fill files
//! always sit in `data/` itself.)
//!
//! Names: as FFSB, a file is `data/datafile<N>` and with `num_dirs` the directories are
//! `data/datadir<k>`; `meta/` is made beside `data/`, after its directories, whether or not a
//! metaop works there, as `construct_new_fileset()` makes it. The names are FFSB's so that a
//! `reuse=1` run of either tool takes the other's files. Both put each file in a directory
//! drawn among the `num_dirs` and `data/` itself: FFSB from its random
//! generator, fslab from a hash of the file's number (`Fileset::spread`), the same in every run
//! so that a kept fileset is found again; which files share a directory differs, how full each
//! is does not, beyond chance. Once createdir has added directories, a new file's directory is
//! drawn among all of them, the added ones included, each as likely (`FileTable::create_id`),
//! as FFSB's `add_file()` draws one of `numsubdirs + 1`. A file created
//! after a delete takes the deleted file's name, oldest first, in both (FFSB's list of
//! "holes", `Fileset::reuse_names`); a new number only when no deleted name is left.
//!
//! A 6.0 threadgroup's `[stats]` times each of the calls above that FFSB times (`stats.rs`):
//! the engine's `call_latency` on its group.

/// What `--explain` says first: where fslab deliberately differs from FFSB.
pub const DIFFERENCES: &str = "\
# fslab ffsb makes FFSB's system calls for each operation (5.2.1's or 6.0's, as the profile's
# grammar says). Where it deliberately differs:
# - paths are relative to directory descriptors (*at() calls), never followed through a symlink
#   (O_NOFOLLOW), and the setup adds O_EXCL to the files it makes;
# - a profile FFSB would misread (an unknown option, a malformed value) is refused, naming its
#   line; an error stops the run with its message, where FFSB asserts;
# - bytes written by write count write_size, as FFSB 5.x counts them (6.0 counts the file);
# - a file's directory is drawn from a hash of its number, the same in every run, so that a kept
#   fileset is found again; FFSB draws it from its random generator;
# - dates are printed in UTC; createdir's dirnum lines come after Starting Actual Benchmark At,
#   each filesystem's together.
";

mod compile;
mod execute;
pub mod frontend;
mod grammar;
mod ops;
mod parse;
mod prelude;
mod profile;
mod report;
mod report_v5;
mod stats;
mod validate;

pub use compile::{compile, explain, AgingPlan, Options, Plan};
pub use execute::{execute, preflight, AgingOutcome, ExecError, Outcome, Phase};
pub use grammar::Grammar;
pub use ops::{FfsbOp, Moves};
pub use parse::parse;
pub use profile::{BindFs, FsSpec, Lines, Profile, TgSpec};
pub use report::{figures, render, Figures, Row, Table};

use std::fmt;
use std::path::Path;

/// A profile fslab cannot run: the file, the line when there is one, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ProfileError {
    pub file: String,
    pub line: Option<usize>,
    pub message: String,
}

impl ProfileError {
    pub fn at(file: &str, line: usize, message: String) -> ProfileError {
        ProfileError {
            file: file.to_string(),
            line: Some(line),
            message: crate::text::shorten(&message),
        }
    }

    pub fn whole(file: &str, message: String) -> ProfileError {
        ProfileError {
            file: file.to_string(),
            line: None,
            message: crate::text::shorten(&message),
        }
    }
}

impl fmt::Display for ProfileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}", self.file, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

/// Reads and parses the profile at `path`.
pub fn load(path: &Path) -> Result<Profile, ProfileError> {
    let file = path.display().to_string();
    let bytes = fslab_engine::input::read_file(path).map_err(|e| ProfileError::whole(&file, e.to_string()))?;
    let text = crate::text::decode(bytes).map_err(|e| ProfileError::at(&file, e.line, e.message()))?;
    parse(&text, &file)
}
