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
//! - Files live in a fileset directory fslab makes (`iozone/iozone.DUMMY.<n>`); `-F` keeps the
//!   names' directories but not their last components (see [`layout`]).
//! - A child stopped by the stonewall does not fsync (`-e`) before its time is taken; its file
//!   is finished afterwards, untimed, as IOzone's child finishes it.
//! - `-c` changes nothing: files stay open through a sub-test and are closed after its timing.
//! - Automatic mode times the sum of the operations (see [`figures::single`]).

pub mod compile;
pub mod figures;
pub mod layout;
pub mod options;
pub mod plan;
pub mod print;
pub mod run;
pub mod subtest;

pub use options::{Options, UsageError, USAGE};
pub use plan::{Mode, Plan};
pub use run::{run, Report, RunFailure};
pub use subtest::Test;
