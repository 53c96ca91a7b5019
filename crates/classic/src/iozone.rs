//! IOzone 3.487 on fslab's engine (written from a description of IOzone's behaviour, not from its
//! source, whose licence forbids derived works).
//!
//! `fslab iozone` takes IOzone's options ([`options`]), plans one engine run per sub-test
//! ([`plan`], [`compile`]), places the children's files ([`layout`]), runs them with IOzone's
//! pauses ([`run()`]) and prints what IOzone prints ([`figures`], [`mod@print`]): throughput mode's
//! "Children see" / "Parent sees" blocks with stonewalling, per-child lines (`-C`), the Excel-style
//! report (`-R`), and automatic mode's table, all in kB = 1024 bytes.
//!
//! Where fslab differs from IOzone (each also said by `--explain` or on stderr where it applies):
//! - Without `-F`, files live in a fileset directory fslab makes (`iozone/iozone.DUMMY.<n>`);
//!   with `-F` they are exactly the files named (see [`layout`]).
//! - `-c` changes nothing: files stay open through a sub-test and are closed after its timing.
//! - pwrite/pread (`-i 9`, `-i 10`) are the same I/O as write/read: the engine always uses
//!   pwrite()/pread(). fwrite/fread (`-i 6`, `-i 7`) are record-sized write()/read() calls, which
//!   is what stdio makes of them with IOzone's one-record buffer. pwritev/preadv (`-i 11`,
//!   `-i 12`) are not offered (see [`compile`]).

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
