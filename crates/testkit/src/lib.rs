//! Helpers shared by fslab's tests: a dev-dependency of every crate, never of the binary.
//!
//! What more than one crate's tests need lives here, once; what one crate's tests need stays in
//! that crate's test binary (`tests/<crate>/`).
//!
//! - What a test needs: [`require_root`], [`require_tool`], [`require_file`] fail the test with
//!   a message naming what is missing (the system tier's tests begin with them).
//! - Hangs: [`within`] fails a test whose work does not end in time instead of hanging it;
//!   [`run_within`] does so for an engine run, [`run_binary`] for a program.
//! - Real results: [`tiny_result`], a real engine run that ends at once; [`studies`], the
//!   report's stored studies with hand-checked figures and planted differences.
//! - Files and mounts: [`tempdir`], [`entries`], [`MountGuard`] (unmounts when dropped) and
//!   [`Tmpfs`] (a small tmpfs of a test's own; needs root).
//! - Traces: [`strace::whole_calls`] reads an `strace -f` log, joining the calls strace split.
//!
//! It depends on the engine and the store, never on the lab: the lab's unit tests would then
//! see two copies of the lab's types.

mod binary;
mod engine;
mod files;
mod mount;
mod require;
pub mod strace;
pub mod studies;
mod within;

pub use binary::{binary_command, finish, run_binary, Run};
pub use engine::{run_within, short_and_long, tiny_result, TINY_OPS, TINY_READS, TWO_WRITERS};
pub use files::{entries, tempdir};
pub use mount::{is_mounted, MountGuard, Tmpfs};
pub use require::{program, require_file, require_root, require_tool};
pub use within::within;
