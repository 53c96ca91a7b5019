//! mdtest 4.0 (hpc/ior) on fslab: `fslab mdtest` takes mdtest's common options ([`options`]),
//! runs its phases on every rank of the job ([`run()`]) and prints what mdtest prints: its
//! start and end stamps, the launch and command lines, the file system, the node map, the item
//! count and the `SUMMARY rate` table (Max, Min, Mean, Std Dev in ops/sec). Written from
//! mdtest's behaviour, read in its source and seen under `strace -f`, not ported from it.
//!
//! # Direct calls, not the engine
//!
//! mdtest's phases are runs of one metadata call per item over a tree of directories, timed
//! between two barriers, so fslab makes its calls itself ([`crate::hpc::sys`]), one system call
//! each, on the paths mdtest builds. Ranks are [`crate::ranks::Ranks`]: mdtest's `MPI_Barrier`s
//! are barriers at the same places, its gather of every rank's rates one gather, and only rank
//! 0 prints.
//!
//! # Names
//!
//! In `-d` (default `./out`): `test-dir.I-0` per iteration `I`; in it the tree `mdtest_tree.0`
//! (with `-u`, one per rank: `mdtest_tree.R.0`), its directories `mdtest_tree.K` (`-u`:
//! `mdtest_tree.R.K`) numbered breadth first (directory `K`'s children are `K×b+1`…`K×b+b`);
//! `-I` items in each directory (or `-n` spread evenly), item `n` of rank `R` being
//! `file.mdtest.R.n` / `dir.mdtest.R.n` in directory `n ÷ I`. With `-N s`, phase `k` (create,
//! stat, read, remove) uses the names of rank `R + k×s` and, with `-u`, the tree of rank
//! `R + (k+1)×s`, as mdtest's.
//!
//! # The calls each phase makes, per rank
//!
//! | phase | mdtest 4.0 (POSIX) | fslab |
//! |---|---|---|
//! | tree creation | `access`+`mkdir(test-dir, 0775)` (rank 0); barrier; `mkdir(0775)` per tree directory (rank 0, or each rank with `-u`); barrier | the same |
//! | directory creation | barrier; `mkdir(0775)` per item; barrier | the same |
//! | directory stat | barrier; `stat` per item; barrier | the same |
//! | directory rename | barrier; `rename` per item (each to the previous name, the first aside to `-XX`); barrier | the same |
//! | directory removal | barrier; `rmdir` per item; barrier | the same |
//! | file creation | barrier; per item `open(O_CREAT\|O_RDWR, 0664)`, with `-w` `lseek(0)`+`write` (`-y`: `fsync`), `close`; barrier | the same |
//! | file stat | barrier; `stat` per item; barrier | the same |
//! | file read | barrier; per item `open(O_RDWR)` (mdtest's POSIX back-end opens its read-only request so), with `-e` `lseek(0)`+`read`, `close`; barrier | the same |
//! | file removal | barrier; `unlink` per item; barrier | the same |
//! | tree removal | barrier; `rmdir` per tree directory, children first; barrier; `access`+`rmdir(test-dir)` (rank 0) | the same |
//!
//! Measured with bench/ior.sh (tmpfs, `-F -C -n 1000 -w 4096`, 1 rank; the calls beneath the
//! test directory): per 100 files both make 100 `open`s, `lseek`s, `write`s and `close`s, 0.3
//! `mkdir`s and 0.2 `access`es; `stat`-class calls 0.1 (mdtest's `statfs`) and 0.4 (fslab): the
//! three more are fslab's resolution of `--dir` and its check that it is a directory, once before
//! the test.
//!
//! A rate is a rank's items over its phase's time (barriers included); the table's row for an
//! iteration is the slowest rank's rate × the ranks; the tree's rows are rank 0's.
//!
//! Ctrl-C stops the creates, stats and reads at their next item; the removals still run, so
//! that nothing is left behind, and the outcome is marked interrupted.
//!
//! `--drop-caches` (fslab's, not mdtest's): before each phase the first rank on each host syncs
//! and drops the page cache, dentries and inodes (root only), untimed.
//!
//! # Where fslab deliberately differs
//!
//! - mdtest sleeps a second before its test; fslab does not (nothing is timed across it).
//! - A call that fails: mdtest warns and goes on; fslab goes on too, then fails the run naming
//!   the first failed call (exit 1), so a broken run is not read as a result.
//! - `-n` and `-I` together (mdtest's directory loops) are refused; so are the options not in
//!   [`USAGE`] (`-S`, `-c`, `-L`, `-R`, `-k`, `-W`...).
//! - `-d` lies beneath the run directory (`--dir`, else the current one). The bytes `-w` writes
//!   are mdtest's timestamp pattern (its default), the same as mdtest's within the same second.

pub mod frontend;
pub mod options;
pub mod run;

pub use options::{Options, USAGE};
pub use run::{run, Job, Report};
