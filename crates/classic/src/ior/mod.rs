//! IOR 4.0 (hpc/ior) on fslab: `fslab ior` takes IOR's common options ([`options`]), runs its
//! test on every rank of the job ([`run()`]) and prints what IOR prints ([`mod@print`]): its
//! header and `Options:` block, one table row per phase and repetition, the `-v` lines (`Max
//! Write`, `Max Read`, `remove`) and the `Summary of all tests` table, or its CSV or JSON
//! (`-O summaryFormat=`). Written from IOR's behaviour, read in its source and seen under
//! `strace -f`, not ported from it.
//!
//! # Direct calls, not the engine
//!
//! IOR times each rank's open, transfers and close apart, each between two clock reads, and
//! reduces the six stamps over the ranks (the earliest start, the latest end); the table's
//! `open(s)`, `wr/rd(s)` and `close(s)` are those spans. The engine's runs open files in their
//! setup and time operations, not phases, so fslab makes IOR's calls itself ([`crate::hpc::sys`]),
//! one system call each, timed as IOR times them. Ranks are [`crate::ranks::Ranks`]: IOR's
//! `MPI_Barrier`s are [`Ranks::barrier`](crate::ranks::Ranks::barrier) at the same places, its
//! reductions gathers of every rank's figures, and only rank 0 prints.
//!
//! # The calls each phase makes, per rank
//!
//! `N` is segments × block ÷ transfer; the file is `-o` (shared) or `-o.%08d` of the rank (`-F`).
//!
//! | phase | IOR 4.0 (POSIX) | fslab |
//! |---|---|---|
//! | before the repetitions | `stat(file)` (rank 0, or each with `-F`): warns that it exists | the same |
//! | write | `access`+`unlink` (old file); barrier; `open(O_CREAT\|O_RDWR, 0664)`; N × (`lseek(SEEK_SET)`; `write(t)`); `-e`: `fsync`; `close`; barrier; `stat` | the same |
//! | read | barrier; `open(O_RDONLY)`; N × (`lseek`; `read(t)`); `close`; `stat` | the same |
//! | remove | barrier; `access(F_OK)`; `unlink` (rank 0 for a shared file); barrier | the same |
//! | `-a MMAP` write | `open`; `ftruncate(block × segments × tasks)`; `mmap(MAP_SHARED)`; N copies; `-e`: `msync(MS_SYNC)`; `munmap`; `close` | the same |
//! | `-a MMAP` read | `open(O_RDONLY)`; `mmap(PROT_READ)`; N copies; `munmap`; `close` | the same |
//!
//! Measured with bench/ior.sh (tmpfs, `-w -e -t 64k -b 64m`, 1 rank; the calls on the test
//! file's path and descriptor): per 100 reads+writes both make 100 `lseek`s, 100 `write`s and
//! 0.1 each of `open`, `fsync`, `close` and `access`; `stat`-class calls 0.29 (IOR) and 0.59
//! (fslab): the three more are fslab's resolution of `--dir` (two `statx`, with `readlink`s) and
//! its check that it is a directory, once before the test.
//!
//! Offsets: a shared file is segment-major, each segment one block per rank in rank order
//! (segment `i`, rank `r`: `(i × tasks + r) × block`); with `-F` a rank's file holds its blocks
//! one after another. `-C` reads the data of the rank one node on: `taskPerNodeOffset`
//! (`-Q`, default 1) times the tasks on node 0 when the ranks are placed by slot (rank 1 on rank 0's host),
//! else times 1, modulo the tasks; on one host that is a rank's own data, as IOR 4.0's (seen
//! under strace with `mpirun -np 4` on one host).
//!
//! `-D` stops a phase's transfers once its seconds have passed (checked after each transfer);
//! the read after a stonewalled write then stops after as many transfers as the rank wrote (IOR
//! 4.0's wear-out count), and both print IOR's warnings about the aggregate size. Ctrl-C stops
//! the transfers the same way; the files are then removed as at the end (unless `-k`).
//!
//! `--drop-caches` (fslab's, not IOR's): before each write and read phase the first rank on each
//! host syncs and drops the page cache, dentries and inodes (root only), untimed.
//!
//! # Where fslab deliberately differs
//!
//! - The data is IOR's default (timestamp) pattern, word `i` of a transfer being
//!   `rank << 32 | (seconds since the epoch at the start + i)`, filled once; with the same start
//!   second the bytes are IOR's.
//! - `-z` draws its random offsets with fslab's generator (the same rules: each rank shuffles
//!   its own transfers with `-F`; with a shared file every transfer goes to one rank drawn with
//!   one seed), not glibc's `rand()`, so the order differs.
//! - The test file lies beneath the run directory (`--dir`, else the current one); an absolute
//!   `-o` elsewhere is refused. `Path` and `test filename` print the full path fslab opens.
//! - The JSON (`-O summaryFormat=JSON`) has IOR's keys in its order and nesting, laid out as
//!   ordinary indented JSON (IOR's spacing is irregular); a JSON reader sees the same document.
//! - Only the options listed in [`USAGE`] are taken; the others (HDF5, MPI-IO, `-W`/`-R` checks,
//!   scripts...) are refused by name.

pub mod frontend;
pub mod options;
pub mod print;
pub mod run;

pub use options::{Api, Format, Options, USAGE};
pub use run::{run, Access, Job, Point, Report};
