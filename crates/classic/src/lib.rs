//! The classic filesystem benchmarks on fslab's engine. Each module parses its original's
//! input (an FFSB profile, a dbench loadfile, sysbench's or IOzone's options), compiles it to an
//! engine [`Workload`](fslab_engine::Workload), and prints the figures its original prints,
//! counted the way the original counts them (see ../shared/reference/classic-benchmarks.md).

pub mod dbench;
pub mod ffsb;
pub mod iozone;
pub mod sysbench;
