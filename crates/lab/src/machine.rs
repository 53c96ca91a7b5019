//! The seam between a study's runner and the machine: everything the runner does to the system
//! (loop images, mkfs, mount, schedulers, fill and ageing, worker processes) goes through
//! [`Machine`]. [`Host`] is this machine, as root; tests put a machine of their own in its place
//! to run the matrix, batching, resume and statuses in seconds without root.

use crate::age::{AgeReport, AgeSpec};
use crate::device::{self, LoopImage};
use crate::filesystem::mountinfo::MountEntry;
use crate::fill::{FillReport, FillSpec, Tree};
use crate::worker::{Ended, Watch};
use crate::{filesystem, queue, LabError};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What the runner asks of the machine.
pub trait Machine {
    /// Whether fslab runs as root here: loop devices, mkfs, mount and dropping the page cache
    /// need it (see `lifecycle::needs_root`).
    fn is_root(&self) -> bool;

    /// Whether this machine can make and mount `fs_type`: unsupported, with the module or
    /// package it lacks, when not.
    fn support(&self, fs_type: &str) -> Result<(), LabError>;

    /// A sparse image of `size` bytes in `dir`, attached to a loop device: detached and removed
    /// when dropped.
    fn attach_image(&self, dir: &Path, size: u64) -> Result<Box<dyn Image>, LabError>;

    /// Erases the signatures of an old filesystem on `dev`.
    fn wipe(&self, dev: &Path) -> Result<(), LabError>;

    /// Makes a filesystem; returns what mkfs printed.
    fn mkfs(&self, dev: &Path, fs_type: &str, options: &str) -> Result<String, LabError>;

    /// Mounts `dev` (none for tmpfs) on `mnt`; returns the options in force, read back.
    fn mount(&self, dev: Option<&Path>, mnt: &Path, fs_type: &str, options: &str) -> Result<String, LabError>;

    fn umount(&self, mnt: &Path) -> Result<(), LabError>;

    /// Detaches a busy mount now; the kernel lets it go when its last user does.
    fn umount_lazy(&self, mnt: &Path);

    /// Thaws a frozen filesystem, which releases a worker blocked writing to it.
    fn thaw(&self, mnt: &Path);

    /// Prepares `log` for the external journal or log of the `fs_type` filesystem made with
    /// `options` (ext3/ext4: `mke2fs -O journal_dev`); returns what the tool printed.
    fn mkfs_log(&self, log: &Path, fs_type: &str, options: &str) -> Result<String, LabError>;

    /// The filesystem's read-only check, with its external log when it has one; returns what it
    /// printed.
    fn fsck(&self, dev: &Path, fs_type: &str, log: Option<&Path>) -> Result<String, LabError>;

    /// Sets `dev`'s I/O scheduler; returns the active one, read back.
    fn set_scheduler(&self, dev: &Path, name: &str) -> Result<String, LabError>;

    /// Writes the scheduler's tunables of `dev` (`queue/iosched/`); returns them read back.
    /// Unsupported when the active scheduler lacks one.
    fn set_iosched(
        &self,
        dev: &Path,
        tunables: &BTreeMap<String, String>,
    ) -> Result<BTreeMap<String, String>, LabError>;

    /// Sets `dev`'s read-ahead; returns the value read back.
    fn set_read_ahead_kb(&self, dev: &Path, kb: u64) -> Result<u64, LabError>;

    /// Fills the filesystem holding `root` from `tree` as `spec` says.
    fn fill(&self, root: &Path, tree: &Tree, spec: &FillSpec) -> Result<FillReport, LabError>;

    /// Ages the filesystem holding `root` as `spec` says.
    fn age(&self, root: &Path, spec: &AgeSpec) -> Result<AgeReport, LabError>;

    /// Runs `fslab ARGS...` as a worker process under the watchdog.
    fn run_worker(&self, args: &[String], watch: &Watch) -> Result<Ended, LabError>;

    /// Runs `fslab ARGS...` as one job of `launch.ranks` ranks (under mpirun) under the
    /// watchdog. A machine that cannot launch ranks runs the one worker.
    fn run_job(&self, launch: &crate::mpi::Launch, args: &[String], watch: &Watch) -> Result<Ended, LabError> {
        let _ = launch;
        self.run_worker(args, watch)
    }

    /// Why this machine cannot run a job of several ranks (no mpirun, an fslab without MPI);
    /// `None` when it can.
    fn mpi_unsupported(&self) -> Option<String> {
        None
    }

    /// Unmounts and detaches what an earlier, killed run left beneath `scratch`, and removes it.
    fn clear_leftovers(&self, scratch: &Path);

    /// The filesystem mounted where `dir` is (a `[device] dir` target): the mount holding it,
    /// read from /proc/self/mountinfo.
    fn mounted_at(&self, dir: &Path) -> Result<MountEntry, LabError> {
        filesystem::mount_containing(dir)
    }

    /// Makes the directory of a cell's runs beneath a `[device] dir` target; refuses one that
    /// is already there (not the lab's to use or remove).
    fn make_dir(&self, path: &Path) -> Result<(), LabError> {
        std::fs::create_dir(path).map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => LabError::Refused {
                device: path.to_path_buf(),
                reason:
                    "it is already there, and the lab uses and removes only what it made: remove it or move it away"
                        .to_string(),
            },
            _ => LabError::io(format!("cannot make {}", path.display()), e),
        })
    }

    /// Removes a directory [`Machine::make_dir`] made, with everything beneath it.
    fn remove_dir(&self, path: &Path) -> Result<(), LabError> {
        std::fs::remove_dir_all(path).map_err(|e| LabError::io(format!("cannot remove {}", path.display()), e))
    }
}

/// A loop image the runner formats.
pub trait Image {
    /// The loop device (`/dev/loopN`).
    fn device(&self) -> &Path;

    /// For a device still busy (a hung run's filesystem, detached lazily): lets go of it
    /// without waiting for the kernel.
    fn detach_later(self: Box<Self>);
}

impl Image for LoopImage {
    fn device(&self) -> &Path {
        LoopImage::device(self)
    }

    fn detach_later(self: Box<Self>) {
        LoopImage::detach_later(*self)
    }
}

/// This machine.
pub struct Host {
    /// The fslab binary the workers run.
    pub exe: PathBuf,
    /// Whether that binary was built with MPI (the `mpi` feature), so it can run under mpirun.
    pub mpi: bool,
}

impl Machine for Host {
    fn is_root(&self) -> bool {
        rustix::process::geteuid().is_root()
    }

    fn support(&self, fs_type: &str) -> Result<(), LabError> {
        filesystem::Support::check(fs_type)
    }

    fn attach_image(&self, dir: &Path, size: u64) -> Result<Box<dyn Image>, LabError> {
        Ok(Box::new(LoopImage::create(dir, size)?))
    }

    fn wipe(&self, dev: &Path) -> Result<(), LabError> {
        device::wipe(dev)
    }

    fn mkfs(&self, dev: &Path, fs_type: &str, options: &str) -> Result<String, LabError> {
        filesystem::mkfs(dev, fs_type, options)
    }

    fn mount(&self, dev: Option<&Path>, mnt: &Path, fs_type: &str, options: &str) -> Result<String, LabError> {
        filesystem::mount(dev, mnt, fs_type, options).map(|m| m.effective_options)
    }

    fn umount(&self, mnt: &Path) -> Result<(), LabError> {
        filesystem::umount(mnt)
    }

    fn umount_lazy(&self, mnt: &Path) {
        let _ = filesystem::umount_lazy(mnt);
    }

    fn thaw(&self, mnt: &Path) {
        let _ = filesystem::thaw(mnt);
    }

    fn mkfs_log(&self, log: &Path, fs_type: &str, options: &str) -> Result<String, LabError> {
        filesystem::mkfs_log(log, fs_type, options)
    }

    fn fsck(&self, dev: &Path, fs_type: &str, log: Option<&Path>) -> Result<String, LabError> {
        filesystem::fsck(dev, fs_type, log)
    }

    fn set_scheduler(&self, dev: &Path, name: &str) -> Result<String, LabError> {
        queue::set_scheduler(dev, name)
    }

    fn set_iosched(
        &self,
        dev: &Path,
        tunables: &BTreeMap<String, String>,
    ) -> Result<BTreeMap<String, String>, LabError> {
        queue::set_iosched(dev, tunables)
    }

    fn set_read_ahead_kb(&self, dev: &Path, kb: u64) -> Result<u64, LabError> {
        queue::set_read_ahead_kb(dev, kb)
    }

    fn fill(&self, root: &Path, tree: &Tree, spec: &FillSpec) -> Result<FillReport, LabError> {
        crate::fill::fill_from(root, tree, spec)
    }

    fn age(&self, root: &Path, spec: &AgeSpec) -> Result<AgeReport, LabError> {
        crate::age::age(root, spec)
    }

    fn run_worker(&self, args: &[String], watch: &Watch) -> Result<Ended, LabError> {
        crate::worker::run_phase(&self.exe, args, watch)
            .map_err(|e| LabError::io(format!("cannot start {}", self.exe.display()), e))
    }

    fn run_job(&self, launch: &crate::mpi::Launch, args: &[String], watch: &Watch) -> Result<Ended, LabError> {
        let mpirun = crate::tool::find_program("mpirun").ok_or_else(|| crate::tool::missing("mpirun"))?;
        let mut words = launch.mpirun_args();
        words.push(self.exe.display().to_string());
        words.extend(args.iter().cloned());
        crate::worker::run_mpirun(&mpirun, &words, watch)
            .map_err(|e| LabError::io(format!("cannot start {}", mpirun.display()), e))
    }

    fn mpi_unsupported(&self) -> Option<String> {
        crate::mpi::unsupported(self.mpi)
    }

    fn clear_leftovers(&self, scratch: &Path) {
        if !scratch.exists() {
            return;
        }
        if let Ok(mounts) = filesystem::mountinfo::read() {
            let mut points: Vec<PathBuf> = mounts
                .into_iter()
                .map(|m| m.mount_point)
                .filter(|p| p.starts_with(scratch))
                .collect();
            // Innermost first.
            points.sort_by_key(|p| std::cmp::Reverse(p.components().count()));
            for p in points {
                let _ = filesystem::umount_lazy(&p);
            }
        }
        device::detach_images_under(scratch);
        let _ = std::fs::remove_dir_all(scratch);
    }
}
