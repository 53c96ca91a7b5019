//! The lab's integration tests, one binary: study files and matrices, the study runner behind
//! its `Machine` seam, fill and ageing, and (the system tier: root, loop devices, the mkfs
//! tools) devices, filesystems, queues and the test bed for real.

mod age;
mod caches;
mod common;
mod device;
mod filesystem;
mod fill;
mod fill_xfs;
mod matrix;
mod queue;
mod runner;
mod small_fs;
mod testbed;
