//! IOzone 3.487 on fslab's engine (written from IOzone's behaviour, read in its source and seen
//! under strace, not ported from its source, whose licence forbids derived works).
//!
//! `fslab iozone` takes IOzone's options ([`options`]), plans one engine run per sub-test
//! ([`plan`], [`compile`]), places the children's files ([`layout`]), runs them with IOzone's
//! pauses ([`run()`]) and prints what IOzone prints ([`figures`], [`mod@print`]): its banner and
//! preamble, throughput mode's "Children see" / "Parent sees" blocks with stonewalling, per-child
//! lines (`-C`), the Excel-style report (`-R`), and automatic mode's table, all in kB = 1024 bytes.
//!
//! # The calls each sub-test makes, per child
//!
//! IOzone 3.487 (`make linux-AMD64`) under `strace -f`, and fslab the same way; `R` is the file
//! size ÷ the record size. Every child opens its file before the parent lets it go, and after its
//! figures are taken fsyncs it once more and closes it (IOzone's `fsync()` before `close()`
//! without `-c`), inside the parent's time.
//!
//! | sub-test | IOzone 3.487 | fslab |
//! |---|---|---|
//! | initial writers | `open(O_RDWR\|O_CREAT, 0640)`; R × `write()`; `-e`: `fsync`; `fsync`; `close` | the same: each child makes its own file as it opens it, before the parent lets it go (the setup leaves it to them, `SetupCalls::Iozone`) |
//! | rewriters | `open(O_RDWR)`; R × `write()`; `-e`: `fsync`; `fsync`; `close` | the same |
//! | readers, re-readers | `open(O_RDONLY)`; R × `read()`; `-e`: `fsync`; `fsync`; `close` | the same |
//! | reverse readers | `lseek(-1 record, SEEK_END)`; R × (`read()`; `lseek(-2 records, SEEK_CUR)`), the last `lseek` failing (EINVAL) before the start of the file | the same (the engine's `reverse` on its `seek` engine), in throughput and automatic mode |
//! | record rewrite (`-i 4`) | R × (`write()` of record 0; `lseek(0, SEEK_SET)`) | the same (the engine's `seek_back`) |
//! | stride readers | R × (`read()`; `lseek`): record 0, then `-j` records on each time, and when that would reach the last record, again from record 1, 2, ... | the same records in the same order (the engine's `stride`), without the `lseek` after the last read |
//! | random readers | `open(O_RDONLY)`; R × (`lseek`; `read()`), each record once in the order its Mersenne Twister, keyed with fixed words, shuffles them into (the same every time); `-e`: `fsync`; `fsync`; `close` | the same, in the same order (the engine's `shuffle`, `shuffle_order = "iozone"`) |
//! | random writers | `open(O_RDWR\|O_CREAT, 0640)`; R × (`lseek`; `write()`), each record once in that order; `-e`: `fsync`; `fsync`; `close` | the same |
//! | mixed workload | each child a random reader or a random writer of its file (above): with `-+p N` the first N% of the children read, with `-+K N` the first N, otherwise the even-numbered ones; with `-+B` a reader or an initial writer instead, which opens its file `O_RDWR\|O_CREAT` (with `-+F` also `O_TRUNC`) | the same (each child a group of one, ending as the sub-test it runs as); `-+F`'s writers empty their files with `ftruncate(0)` before the clock |
//! | pwrite writers, pread readers | R × `pwrite()` / `pread()` | the same |
//! | fwriters, freaders | stdio with a one-record buffer: R × `write()` / `read()`; a fwriter `fsync`s once more before its clock; a freader `fsync`s only before its clock, through a second `open()` of its file, never after (`-e` or not) | R × `write()` / `read()`, and the same `fsync`s (the freader's on its one descriptor) |
//! | between sub-tests | `sync()`; `sleep(2)` | the same (`final_sync = "outside"`, `--pause`) |
//! | end of a throughput test | the cleanup's `unlink()`s (unless `-w`); `sync()`; `sleep(2)`; `sync()` | the same |
//! | single-process and automatic mode, before each file and record size | `sync()`; `sync()` | the same |
//! | single-process and automatic mode, random reads and random writes (`random_perf_test()`) | both `open(O_RDWR\|O_CREAT, 0640)` | the same |
//! | single-process and automatic mode, making the file (`write_perf_test()`) | its sanity check: `open(O_CREAT\|O_WRONLY, 0)`, `stat`, `ftruncate(0)`, `close`, `stat`, `unlink`; then `creat(0640)`, `close` | the same (`SetupCalls::IozoneSingle`), with `O_EXCL\|O_NOFOLLOW` added to both opens |
//!
//! Measured per 100 reads+writes (`-i 0 -i 1 -i 2 -t 4 -s 64m -r 64k -e -w -x`, tmpfs): IOzone
//! 33.2 lseeks, 0.2 fsyncs, 49.8 reads, 50.2 writes; fslab 33.0, 0.2, 50.5, 49.5.
//!
//! # Stonewalling and the children's clocks (throughput mode)
//!
//! Each child's clock starts when it is let go and stops when it takes its figures; the parent's
//! runs from letting them go to the last child's end (`stop.child_end` in the engine):
//! - initial and random writers (and throughput mode's pwrite writers): the first to
//!   write its last record raises the stonewall *before* its `-e` fsync; a stopped writer fsyncs
//!   (`-e`), takes its figures, then finishes its file uncounted and fsyncs again, inside the
//!   parent's time, so that the sub-tests after it find whole files;
//! - rewriters and readers: the first to finish fsyncs (`-e`, readers too), takes its figures,
//!   then raises the stonewall; a stopped one fsyncs (`-e`), takes its figures and stops there;
//! - fwriters and freaders (`thread_fwrite_test`, `thread_fread_test`) neither raise the
//!   stonewall nor look at it: each moves its whole file, and Min xfer is the file.
//!
//! # Processes, as IOzone's
//!
//! Throughput mode's children are processes, forked once the files are laid out (the engine's
//! `Workload::processes`), and with `-T` threads of one process, as IOzone's are. The kernel
//! tells the two apart: threads share one descriptor table, so each call on a descriptor takes
//! a reference on its file and read() and write() lock its position, which a single-threaded
//! process skips (on tmpfs, cached 4 KiB reads were 15% slower with a second thread merely
//! alive). The children share the start line, the stonewall and their live counters through
//! shared memory, and hand their figures back through a pipe when they end. Automatic and single
//! mode, where IOzone is one process, make each measurement on fslab's one thread with no other
//! beside it (the engine's `RunOptions::one_process`): the process starts no thread at all, and
//! its fileset's setup is made on that thread too.
//!
//! # Where fslab deliberately differs
//!
//! - Files are made untimed, by the setup or (throughput mode's writers that start from empty
//!   files) by the children as they open them, beside a hidden `.fslab-fileset` marker that the
//!   setup writes first and that lets a later run clear them safely; without `-F` they are
//!   `iozone.DUMMY.<n>` (automatic mode's `iozone.tmp`) in the run directory (`--dir`, by
//!   default the current directory), mode 0640, as IOzone's. Opens add `O_NOFOLLOW|O_CLOEXEC`
//!   and are relative to the run directory. Each sub-test's run, outside the timing, also opens
//!   the run directory and the fileset's directory (two `openat2`), reads the marker (an open
//!   and one read) and checks each file with a `statx()` of its type, links and size, to keep
//!   the files of the sub-test before; a `stat()` there would mark the file's change time as
//!   seen, and the next write (a rewrite) would then stamp it inside its timing. Automatic
//!   mode's runs leave out the machine's CPU split (`/proc/stat`, which their few records' time
//!   cannot split).
//! - The data written is IOzone's: 8 bytes of `m` at the start of every 4 KiB, zeros elsewhere
//!   (the engine's `data = "iozone"`), so a compressing or deduplicating filesystem sees what
//!   IOzone gives it. In throughput mode with processes, IOzone's parent `prepage()`s the first
//!   record of its buffer once it has forked the initial writers (an `m` every 32 bytes), and
//!   the children forked after that whose records start there write it too: every rewriter and
//!   fwriter (`data = "iozone_prepaged"`), and the random, pwrite and mixed writers whose
//!   record in IOzone's 1 MiB buffer is the first, child 0 of each 1 MiB ÷ record
//!   (`"iozone_shared"`, by the engine's worker numbers, which are IOzone's child numbers:
//!   with `-F` naming files in several directories in turn, each child has its own group, in
//!   the children's order).
//! - A file already there (a rerun after `-w`) is written over by the throughput initial
//!   writers without being truncated, as IOzone's, when fslab's marker says it made it at this
//!   size; otherwise it is made again, empty (IOzone would write over a file of another size
//!   too, and refuses none it did not make).
//! - `-c`: IOzone closes each file inside the timing, and leaves out the fsync it otherwise makes
//!   before its untimed close (`if(!include_close)`); fslab leaves out that fsync too, but its
//!   close stays after the timing (a close costs microseconds). A stonewalled initial writer
//!   finishes its file on the descriptor it has, where IOzone's closes and reopens it first.
//! - With `-E` and `-i`, IOzone 3.487's automatic-mode `-R` report puts the mixed workload's two
//!   empty cells under "Pwrite report" and "Re-Pwrite report" (zeros), and each later report
//!   takes the figures of the one before it; fslab prints each report's own figures.
//! - `-+u`: each child reads its process's CPU time (`getrusage(RUSAGE_SELF)`) at its start and
//!   at its figures, as IOzone's do (`RunOptions::process_cpu`), so with `-T` each thread's CPU
//!   time is the whole process's, as in IOzone. The throughput mode's `-R` CPU report names its
//!   rows after their own sub-tests; IOzone 3.487 names row k after the k-th test of its full
//!   list (so with `-i 0 -i 2` its random readers' row says "Read").
//! - Automatic mode times its one process's loop as IOzone does, the file opened before the clock
//!   and without per-operation clock reads (see [`figures::single`]). As IOzone 3.487 it opens
//!   `iozone.tmp` for each test, fsyncs it before the clock, makes the records (with `-e` an
//!   fsync inside the clock), fsyncs it again and closes it (the random tests make no fsync
//!   before the clock; fread and re-fread none after it, and fsync before it on a second
//!   descriptor of the file, which fslab does not open); its readers (read and re-read)
//!   first read one record and `lseek(0)`, untimed, as IOzone's prime the caches; its backward
//!   read is made twice, each pass opening and closing the file, and the first reported. What still
//!   differs is the work around the loop: each measurement is an engine run (its buffers, its
//!   result), and each operation goes through the engine's loop (about 30 ns of its own per
//!   operation, measured on a cached 4 KiB read), where IOzone's loop is a bare read() or
//!   write() (see `bench/fidelity.sh`'s automatic-mode comparison). pwritev/preadv (`-i 11`,
//!   `-i 12`) are not offered (see [`compile`]).

/// What `--explain` says first: where fslab deliberately differs from IOzone 3.487 (the notes
/// for the options given follow the files).
pub const DIFFERENCES: &str = "\
# fslab iozone makes IOzone 3.487's system calls for each test. Where it deliberately differs:
# - files are made untimed, beside a marker .fslab-fileset, and opened with O_NOFOLLOW|O_CLOEXEC
#   relative to the run directory; each test's run checks them (statx) outside its timing;
# - a file there of another size than fslab's marker says is made again, empty, where IOzone
#   writes over it; files fslab did not make are refused;
# - -c: the close stays after the timing (IOzone's is inside it);
# - automatic mode's -R with -E: each report has its own figures;
# - -+u's -R CPU report names its rows after their own tests.
";

pub mod compile;
pub mod figures;
pub mod frontend;
pub mod layout;
pub mod options;
pub mod plan;
pub mod print;
pub mod run;
pub mod subtest;

pub use options::{Options, UsageError, USAGE};
pub use plan::{Mode, Plan};
pub use run::{run, Report, RunFailure, RunWith};
pub use subtest::Test;
