//! Watching how full a filesystem gets while fill or age writes to it, without asking the
//! filesystem after every write.
//!
//! Writers report the bytes they write; every so many bytes (1/1024 of the filesystem, 64 KiB to
//! 4 MiB) one of them reads statvfs, and the target is reached when statvfs says so. Some
//! filesystems (btrfs) count data in the page cache as used only once it is written back, so the
//! gauge also keeps what was in use at the last reading plus the bytes written since: when that
//! reaches the target and statvfs does not, it syncs the filesystem and reads statvfs again, so a
//! lagging statvfs cannot make a fill overshoot by the size of the page cache.

use crate::LabError;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

/// Bytes assumed per file or directory however small, about what a filesystem allocates for it.
pub(crate) const BLOCK: u64 = 4096;

/// The largest write a writer makes before it looks at the stop flag again.
const MAX_STEP: u64 = 1 << 20;

pub(crate) struct Gauge {
    dir: OwnedFd,
    /// The target utilisation, 0..=1.
    to: f64,
    /// Filesystem size in bytes (statvfs blocks × fragment size).
    size: u64,
    every: u64,
    /// Bytes in use at the last synced reading (or when the gauge was armed).
    base: AtomicU64,
    /// Bytes reported since then.
    counted: AtomicU64,
    /// `counted` at which the next statvfs is due.
    next: AtomicU64,
    stop: AtomicBool,
}

impl Gauge {
    /// A gauge for the filesystem holding `root`, armed at its current use.
    pub(crate) fn open(root: &Path, to: f64) -> Result<Gauge, LabError> {
        let dir = rustix::fs::open(
            root,
            rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        )
        .map_err(|e| LabError::io(format!("opening {}", root.display()), e.into()))?;
        let (size, _) = space(&dir).map_err(|e| LabError::io(format!("statvfs {}", root.display()), e))?;
        let every = check_interval(size);
        let gauge = Gauge {
            dir,
            to,
            size,
            every,
            base: AtomicU64::new(0),
            counted: AtomicU64::new(0),
            next: AtomicU64::new(every),
            stop: AtomicBool::new(false),
        };
        gauge
            .rearm()
            .map_err(|e| LabError::io(format!("statvfs {}", root.display()), e))?;
        Ok(gauge)
    }

    /// The most a writer writes in one call before it looks at the stop flag again.
    pub(crate) fn step(&self) -> usize {
        self.every.min(MAX_STEP) as usize
    }

    /// Utilisation as statvfs reports it now: (blocks - free) / blocks, as the engine's
    /// `stop.util` counts it.
    pub(crate) fn util(&self) -> io::Result<f64> {
        let (size, used) = space(&self.dir)?;
        Ok(used as f64 / size.max(1) as f64)
    }

    /// The filesystem's size and the bytes in use now, as statvfs counts them.
    pub(crate) fn space(&self) -> io::Result<(u64, u64)> {
        space(&self.dir)
    }

    /// Syncs the filesystem, so that what was written is counted (XFS's delayed-allocation
    /// reservations become the blocks they are), and returns the bytes in use.
    pub(crate) fn sync_used(&self) -> io::Result<u64> {
        rustix::fs::syncfs(&self.dir)?;
        Ok(space(&self.dir)?.1)
    }

    /// Syncs the filesystem, so that what was written is counted, and returns its utilisation.
    pub(crate) fn sync_util(&self) -> io::Result<f64> {
        rustix::fs::syncfs(&self.dir)?;
        self.util()
    }

    /// Whether writers should stop: the target was reached, or a writer failed.
    pub(crate) fn stopped(&self) -> bool {
        self.stop.load(Relaxed)
    }

    /// Tells every writer to stop (after an error).
    pub(crate) fn halt(&self) {
        self.stop.store(true, Relaxed);
    }

    /// Lets writers go on after a stop that a later reading did not confirm: XFS counts its
    /// delayed-allocation reservations as used until they are written back, so one reading can
    /// pass the target and the next fall below it again.
    pub(crate) fn resume(&self) {
        self.stop.store(false, Relaxed);
    }

    /// Starts counting afresh from the filesystem's current use (after a sync or a deletion).
    pub(crate) fn rearm(&self) -> io::Result<()> {
        let (_, used) = space(&self.dir)?;
        self.base.store(used, Relaxed);
        self.counted.store(0, Relaxed);
        self.next.store(self.every, Relaxed);
        self.stop.store(false, Relaxed);
        Ok(())
    }

    /// Records `bytes` written; every check interval, the writer whose write crossed the mark
    /// checks the utilisation and sets the stop flag once the target is reached.
    pub(crate) fn add(&self, bytes: u64) -> io::Result<()> {
        let counted = self.counted.fetch_add(bytes, Relaxed) + bytes;
        let next = self.next.load(Relaxed);
        if counted >= next
            && self
                .next
                .compare_exchange(next, counted + self.every, Relaxed, Relaxed)
                .is_ok()
        {
            self.check()?;
        }
        Ok(())
    }

    /// Whether statvfs says the target is reached; sets the stop flag if so. When the bytes
    /// written say it should be and statvfs does not, syncs first and counts afresh from there.
    pub(crate) fn check(&self) -> io::Result<bool> {
        let target = self.to * self.size as f64;
        let (_, mut used) = space(&self.dir)?;
        if (used as f64) < target && (self.base.load(Relaxed) + self.counted.load(Relaxed)) as f64 >= target {
            rustix::fs::syncfs(&self.dir)?;
            used = space(&self.dir)?.1;
            self.base.store(used, Relaxed);
            self.counted.store(0, Relaxed);
        }
        let reached = used as f64 >= target;
        if reached {
            self.halt();
        }
        Ok(reached)
    }
}

/// One statvfs reading per 1/1024 of the filesystem, between 64 KiB and 4 MiB: often enough to
/// stop close to the target on a small test filesystem, rarely enough to cost nothing on a big one.
fn check_interval(size: u64) -> u64 {
    (size / 1024).clamp(64 << 10, 4 << 20)
}

/// How far past the target a fill with `writers` writers may go on a filesystem of `size` bytes:
/// one check interval (the bytes written between the last statvfs below the target and the one
/// above it) plus one step of every writer (each finishes the write it began before it saw the
/// stop flag). Bytes are counted as written, at least [`BLOCK`] per file or directory; a
/// filesystem that allocates more than that per byte overshoots by as much more.
pub fn overshoot_bound(size: u64, writers: u32) -> u64 {
    let every = check_interval(size);
    every + writers as u64 * every.clamp(BLOCK, MAX_STEP)
}

/// (size, used) in bytes of the filesystem holding `fd`.
fn space(fd: &OwnedFd) -> io::Result<(u64, u64)> {
    let st = rustix::fs::fstatvfs(fd.as_fd())?;
    let unit = st.f_frsize.max(1);
    Ok((st.f_blocks * unit, st.f_blocks.saturating_sub(st.f_bfree) * unit))
}
