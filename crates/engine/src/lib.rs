//! fslab's workload engine.
//!
//! A [`Workload`](workload::Workload) names filesets, thread groups with a weighted mix of
//! operations, and stop conditions; [`run::run`] runs it beneath one directory and returns a
//! [`RunResult`](result::RunResult) with per-operation counts, bytes, FFSB transactions, latency
//! histograms, a per-second series and the CPU split. The engine knows nothing of the classic
//! tools, filesystems or studies: every front-end compiles to a `Workload`.

pub mod calls;
pub mod clock;
pub mod confine;
pub mod cpu;
pub mod fileset;
pub mod histogram;
mod idmap;
pub mod input;
pub mod io;
pub mod live_latency;
mod marker;
mod meta_dirs;
pub mod metric;
mod op;
pub mod result;
pub mod run;
pub mod script;
mod shm;
mod space;
pub mod steady;
pub mod sysinfo;
pub mod units;
mod worker;
pub mod workload;

pub use metric::Metric;
pub use result::RunResult;
pub use run::{run, Progress, RunError, RunOptions};
pub use units::{Bytes, Span};
pub use workload::Workload;
