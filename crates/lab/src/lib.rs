//! The lab: runs whole comparison studies. A study file names filesystems, their mkfs and mount
//! options, device settings and workloads; the lab expands them into a matrix of cells and, for
//! each cell, prepares a fresh filesystem on a loop image (or a device the user named for
//! destruction), runs the workload in a worker process under a watchdog, and hands every result
//! to the store.
//!
//! System layer (one file per concept): [`device`] (loop images, block-device safety),
//! [`filesystem`] (support checks, mkfs, mount, umount, fsck), [`queue`] (I/O scheduler and
//! read-ahead), [`caches`], [`testbed`], [`tool`] (running external programs), [`fill`] and
//! [`age`] (filling and ageing a filesystem before the workloads).
//! Study layer: [`study`] (the study file), [`matrix`] (cells), [`runner`] (each cell's life),
//! [`invoke`] (each tool's command lines and output), [`worker`] (the worker process and its
//! watchdog). [`step`] times any step of a cell.

pub mod age;
pub mod caches;
pub mod device;
pub mod error;
pub mod filesystem;
pub mod fill;
pub mod invoke;
pub mod matrix;
pub mod queue;
pub mod runner;
pub mod step;
pub mod study;
pub mod testbed;
pub mod tool;
pub mod worker;

pub use error::LabError;
