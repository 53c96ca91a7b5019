//! The engine's integration tests, one binary: workloads run for real in temporary directories.
//! The tests that need root or a system tool are `#[ignore]`d as the system tier (see
//! CONTRIBUTING.md).

mod arrivals;
mod backends;
mod call_latency;
mod checked;
mod children;
mod common;
mod confine;
mod fsyncs;
mod labels;
mod layout;
mod limits;
mod named_files;
mod one_process;
mod operations;
mod placement;
mod processes;
mod ranks;
mod script;
mod series;
mod setup_bs;
mod shared_open;
mod steady;
mod stop;
mod stopped_sync;
mod uring_settings;
mod workload_files;
