//! sysbench 1.0.20 `fileio` on fslab's engine: its options, its three commands (`prepare`,
//! `run`, `cleanup`), its six test modes and its report, counted the way sysbench counts them
//! (see ../shared/reference/classic-benchmarks.md, section 3).
//!
//! - [`options`] reads sysbench's command line (`--file-test-mode=rndrw`, the old
//!   `--num-threads`/`--max-time`/`--max-requests`/`--test=fileio` spellings too).
//! - [`compile`] turns the options into one engine [`Workload`](fslab_engine::Workload): one
//!   fileset `test_file.0..N-1` and one thread group.
//! - [`files`] prepares, checks and removes the files.
//! - [`report`] prints what sysbench prints: the options block, the `--report-interval` lines and
//!   the final figures, and computes those figures from the engine's
//!   [`RunResult`](fslab_engine::RunResult) for `--json`.
//! - [`histogram`] regroups the engine's latencies into sysbench's histogram slots, for
//!   `--histogram` and for percentiles in sysbench's steps.
//!
//! Where the files live: `<DIR>/test_file.N`, as sysbench makes them in its current directory
//! (the engine's fileset with `dir = "."`). A marker file `.fslab-fileset` beside them says that
//! fslab made them: `prepare` and `cleanup` remove only `test_file.N` files fslab made, and
//! refuse to touch ones it did not (the real sysbench's, say); anything else in `<DIR>` is left
//! alone.
//!
//! The system calls, per command, as sysbench 1.0.20 makes them (`sb_fileio.c`) and fslab:
//!
//! | command | sysbench 1.0.20 | fslab |
//! |---|---|---|
//! | `prepare` (every mode, seqwr too) | per file in order: `open(O_CREAT\|O_WRONLY[\|extra], 0600)`, `lseek(0, SEEK_END)`, `write()` of `--file-block-size` zeros from there while the file is shorter than the size (none for a file long enough, "Reusing existing file"; from its end for a shorter one, "Extending existing file"; from 0 for a missing one, "Creating file"), `fsync()`, `close()`; files beyond `--file-num` left | the same (`SetupCalls::SysbenchPrepare`; a set fslab made, whatever its options, `fileset::top_up_kept`), `openat()` beneath DIR with `O_EXCL\|O_NOFOLLOW` added to a file it makes, plus the marker file; an earlier set's files beyond `--file-num` unlinked |
//! | `run`, seqwr | `unlink()` then `open(O_CREAT\|O_EXCL, 0600)`, `close()` per file, then as below | the same calls (`O_RDONLY\|O_CREAT\|O_EXCL\|O_NOFOLLOW`, none of `--file-extra-flags`); only the files fslab made are unlinked |
//! | `run` | `open(O_RDWR[\|extra])` and (seqwr aside) `fstat()` per file in order, before the threads start, every thread using those descriptors; `pread`/`pwrite` of a block (or merged blocks); `fsync`/`fdatasync` bursts and at the end; with `--file-fsync-all` one after every write, in every mode; each file `close()`d once the threads have ended | the same (the engine's `open = "shared"`), `openat()` beneath DIR with `O_NOFOLLOW\|O_CLOEXEC` added |
//! | `run`, `--file-io-mode=mmap` | every file `mmap(MAP_SHARED)` of its whole size before the run; each block a memcpy; each fsync (bursts, end, `--file-fsync-all`) one `msync(MS_SYNC\|MS_INVALIDATE)` of the file's mapping, no `fsync()`; seqwr first gives each file its size with `ftruncate()`; after the run the files are closed, then unmapped | the same (the engine's `mmap` with `open = "shared"`): one mapping of each file, made before the threads start, that every thread uses |
//! | `run`, `--file-io-mode=async` | `io_setup(backlog)` per thread; per event one `io_submit()` of one `pread`/`pwrite` request; once `backlog` are in flight, `io_getevents(1, backlog)`; `fsync()`/`fdatasync()` called as in sync mode, requests still in flight; at the end `io_getevents()` for the rest, then `io_destroy()` | the same (the engine's `libaio`) |
//! | `cleanup` | `unlink()` of `test_file.0..N-1` | `unlink()` of the `test_file.N` fslab made, and its marker |
//!
//! The data, prepared and written, is zeros in both: sysbench's buffers are zeroed when
//! allocated and filled only with `--validate` (the engine's `data = "zeros"`). With
//! `--validate` (the engine's `data = "checked"`), each block written, in prepare and in the
//! run, is random bytes, then their CRC-32 in 4 bytes and the block's offset in 8, as
//! sysbench's `file_fill_buffer` lays it out; each block read is checked, and the first
//! mismatch stops the run with sysbench's `FATAL:` lines and no report (exit 1). Blocks two
//! threads would move at once wait for each other (sysbench draws another block). Prepare and
//! run keep the files they find (see below) with the data their marker says they hold,
//! as sysbench keeps them: a checked read of files prepared without `--validate` fails at its
//! first block, in both (fslab adds a note saying why).
//!
//! `--rate=N`: the events arrive at random, N a second on average (exponential gaps, sysbench's
//! event generator), for all threads; each is taken by the next free thread, and its latency
//! counts from its arrival (the engine's `rate.arrivals = "poisson"`). A thread free before the
//! next event sleeps until it comes and starts it as it wakes. sysbench's idle threads wait on
//! its queue and are woken for each event, and that wake-up (tens of microseconds here) is in
//! its latencies, not in fslab's. Once 131,072 events wait (the engine's `rate.queue`, counted
//! from how long ago the oldest waiting one arrived), the run stops with sysbench's `FATAL: The
//! event queue is full` line.
//!
//! `--file-extra-flags` with direct and sync or dsync is refused, as sysbench 1.0.20 refuses it
//! (`Unknown extra flags value`: it takes the list as a bit mask, and any value above direct's
//! is unknown to it).
//!
//! prepare and run keep a set of test files fslab made (prepare's, or a seqwr run's) when every
//! file is at least sysbench's file size, as sysbench keeps any file at least that long, and use
//! only that first part of each; prepare goes over a set made with other options file by file,
//! as sysbench does: a missing file made, a shorter one extended from its end, one long enough
//! left. Deliberate differences: files without fslab's marker are refused, not used; an earlier
//! set's files beyond `--file-num` are removed by prepare and refused by run, where sysbench
//! leaves them and ignores them; a set changed since fslab made it (a file written to by hand)
//! is refused by run; and prepare writes a set that needs writing but holds other data than the
//! options ask for (zeros or `--validate`'s checked blocks) again from scratch, where sysbench
//! extends each file with whatever it writes now.
//! `--validate` with blocks under 12 bytes is refused (sysbench writes past its buffer), and so
//! are merged sequential reads with it (sysbench checks each merged request as one block and
//! fails). With `--file-io-mode=async` fslab checks each block once its read has completed;
//! sysbench 1.0.20 checks the buffer as soon as the request is queued. When several threads
//! meet bad blocks before the run stops, each prints its `FATAL:` lines, as in sysbench: the
//! first thread's first, then the others' in thread order (sysbench's in the order they fail).
//!
//! When a file's size (`--file-total-size ÷ --file-num`) is not a whole number of blocks, the
//! requests are placed as sysbench places them: random offsets are drawn over the files laid
//! end to end and aligned there (so in every file but the first they fall off the block
//! boundaries), a request is cut short at its file's size, and the sequential modes end each
//! file with a short request. sysbench draws over `--file-total-size` itself, and when that is
//! not a whole number of files an offset past the last file (odds below `--file-num` in the
//! total size) takes a descriptor past the end of its table; fslab draws over the files.
//!
//! Differences not made up yet:
//! - Before it opens the files, fslab finds a prepared fileset through its marker
//!   (`.fslab-fileset`) and a listing of the directory, with a stat of each file.

/// What `--explain` says first: where fslab deliberately differs from sysbench 1.0.20.
pub const DIFFERENCES: &str = "\
# fslab sysbench makes sysbench 1.0.20 fileio's system calls for prepare, run and cleanup.
# Where it deliberately differs:
# - test files are opened beneath --dir with O_NOFOLLOW (O_EXCL added when fslab makes one),
#   beside a marker .fslab-fileset; test files without it (the real sysbench's) are refused;
# - prepare removes an earlier set's test files beyond --file-num, and run refuses them, where
#   sysbench leaves and ignores them; run refuses a set changed since fslab made it;
# - prepare writes again from scratch a set it must add to that holds other data than these
#   options ask for (zeros against --validate's checked blocks);
# - --validate with blocks under 12 bytes or with merged sequential reads is refused; in async
#   mode a block is checked once its read has completed;
# - with --rate, a thread free before the next event sleeps until it arrives, where sysbench's
#   wait on its event queue to be woken;
# - random offsets are drawn over the files, never past the last one (sysbench draws over
#   --file-total-size, and can take a descriptor past the end of its table).
";

pub mod compile;
pub mod files;
mod format;
pub mod frontend;
pub mod histogram;
pub mod options;
pub mod report;

pub use compile::{fileset, workload, FILESET};
pub use options::{parse, Command, Invocation, IoMode, Options, TestMode};

use fslab_engine::confine::ConfineError;
use fslab_engine::fileset::SetupError;

/// Why a sysbench command could not run.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A bad option or value on the command line, naming the option.
    #[error("{option}: {message}")]
    Option { option: String, message: String },
    /// The command line as a whole is wrong (no command, an unknown word...).
    #[error("{0}")]
    Usage(String),
    /// `run` found no prepared files, or files of the wrong number or size.
    #[error("{0}")]
    NotPrepared(String),
    #[error(transparent)]
    Setup(#[from] SetupError),
    #[error(transparent)]
    Confine(#[from] ConfineError),
}

impl Error {
    /// Bad input (exit 2) rather than a failure of the filesystem (exit 1).
    pub fn is_input(&self) -> bool {
        match self {
            Error::Option { .. } | Error::Usage(_) | Error::NotPrepared(_) => true,
            Error::Setup(SetupError::Foreign { .. } | SetupError::Occupied { .. } | SetupError::Linked { .. }) => true,
            Error::Setup(SetupError::Confine(e)) | Error::Confine(e) => {
                matches!(
                    e,
                    ConfineError::Escapes { .. } | ConfineError::RunDir { .. } | ConfineError::Symlink { .. }
                )
            }
            Error::Setup(_) => false,
        }
    }
}
