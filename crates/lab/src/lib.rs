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
//! Study layer: [`study`] (the study file), [`matrix`] (cells, each named once), [`lifecycle`]
//! (a study's whole life: preflight, record, statuses, resume), [`runner`] (each cell's life),
//! [`machine`] (the seam between the runner and the system), [`worker`] (the worker process and
//! its watchdog). [`step`] times any step of a cell. How a tool runs and what it reports is its
//! front-end's ([`fslab_classic::contract`]): the lab asks it for its command lines and reads
//! back its typed outcome.

pub mod age;
pub mod caches;
pub mod device;
pub mod doctor;
pub mod error;
pub mod filesystem;
pub mod fill;
pub mod lifecycle;
pub mod machine;
pub mod matrix;
pub mod mpi;
pub mod queue;
pub mod runner;
pub mod step;
pub mod study;
pub mod testbed;
pub mod tool;
pub mod worker;

pub use error::LabError;
