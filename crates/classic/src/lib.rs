//! fslab's front-ends: every way of describing a workload, behind one contract ([`contract`]).
//! Each front-end reads its input (a native workload file or fio-like flags, an FFSB profile, a
//! dbench loadfile, sysbench's or IOzone's options), compiles it to engine
//! [`Workload`](fslab_engine::Workload)s, runs them and returns one typed
//! [`Outcome`](contract::Outcome): the engine's results, the tool's own figures counted the way
//! its original counts them, and the text its original prints.

pub mod contract;
pub mod dbench;
pub mod estimate;
pub mod ffsb;
pub mod fio_json;
pub mod hpc;
pub mod ior;
pub mod iozone;
pub mod job;
pub mod mdtest;
pub mod native;
pub mod ranks;
pub mod sysbench;
pub mod text;

pub use contract::{Common, Context, Error, ErrorKind, FrontEnd, Outcome, Tool};

/// `sync()`: every filesystem's dirty data written back, as IOzone and FFSB call it.
pub fn sync() {
    // SAFETY: sync() takes no arguments and cannot fail.
    unsafe { libc::sync() }
}
