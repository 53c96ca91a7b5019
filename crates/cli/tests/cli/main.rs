//! The cli's integration tests, one binary: the `fslab` binary run from the outside (exit codes,
//! what goes to stdout and stderr, --json and --explain of each front-end, reports and
//! comparisons), and whole studies on loop devices: the system tier, with the seed studies.

mod common;
mod confine;
mod dbench;
mod doctor;
mod examples;
mod ffsb;
mod fio_flags;
mod fio_json;
mod help;
mod hpc;
mod info;
mod interrupt;
mod iozone;
mod lab;
mod limits;
mod mpi;
mod report;
mod run;
mod schema;
mod seeds;
mod study;
mod sysbench;
