//! The front-ends' integration tests, one binary: dbench loadfiles, FFSB profiles, IOzone,
//! sysbench fileio, IOR and mdtest parsed, planned and run for real through the library, in temporary
//! directories. The tests that need root or dbench's loadfile are the system tier.

mod dbench;
mod ffsb;
mod hpc;
mod ior;
mod iozone;
mod job;
mod mdtest;
mod sysbench;
