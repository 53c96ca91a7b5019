//! Filling a filesystem before the workloads, as seed 004 did: the same tree (a kernel source
//! archive, or a generated look-alike) extracted again and again into the leaves of a directory
//! hierarchy, several at a time, until the filesystem is as full as asked.
//!
//! In the study file:
//!
//! ```toml
//! [fill]
//! to = "40%"                  # utilisation to reach, as statvfs counts it: (blocks - free) / blocks
//! from = "tar:/usr/src/linux-source-6.1.tar.xz"   # .tar, .tar.gz or .tar.xz; or "synthetic:kernel-tree"
//! parallel = 21               # extractions at once
//! layout = [10, 11, 21]       # directories per level: 10 × 11 × 21 = 2310 leaves
//! ```
//!
//! Everything goes beneath `ROOT/fill/`: the leaves are `fill/0/0/0`, `fill/0/0/1` ... in that
//! order, `parallel` at a time (with seed 004's settings, the 21 leaves of one level-2 directory
//! together, then the next 21), one extraction in each. When every leaf has one and the
//! filesystem is still not full enough, the fill goes round again into `LEAF/1`, then `LEAF/2`...
//! so a small layout still fills a big filesystem.
//!
//! The fill reaches `to` in whole extractions, as the document's did (its 2310 extractions were
//! all complete). Before each batch it syncs the filesystem and reads statvfs, so that what was
//! written is counted (XFS counts its delayed-allocation reservations as used until they are
//! written back, so an unsynced reading runs ahead of the data), and it begins only as many
//! extractions as fit below the target, at least one: as many as the space left to the target
//! holds at the space one extraction takes, measured on the last batch (before the first, from
//! the tree: each file rounded up to a 4 KiB block, a block per directory). The batches are thus
//! `parallel` wide until the target is near, then narrower, and the last extraction is the one
//! that reaches the target: the final utilisation is at or above `to`, by less than one
//! extraction's share of the filesystem. The report gives the extractions begun and completed
//! (the same number), and the space one took (`per_extraction`).
//!
//! A filesystem with less free space than one extraction takes cannot be filled in whole
//! extractions (a 64 MiB test filesystem and a 235 MiB tree): the extractions then stop part-way,
//! as soon as the filesystem reaches `to`. The fill checks before every batch and, while
//! extracting, every 1/1024 of the filesystem written (64 KiB to 4 MiB); a stopped extraction is
//! left as it is, its last file possibly short, and `complete` is below `extractions`. The final
//! utilisation may then overshoot `to` by at most [`overshoot_bound`] bytes: one check interval
//! plus one write (at most 1 MiB) by each extraction still running; `util_after` in the report
//! says where it ended. A filesystem that counts written data late (btrfs) is held to the same
//! bound: between two statvfs readings the fill counts the bytes it wrote itself, and it syncs
//! and looks again before it stops.

mod archive;
mod extract;
pub(crate) mod gauge;
mod synthetic;
mod tree;

pub use extract::Extracted;
pub use gauge::overshoot_bound;
pub use synthetic::{BYTES as KERNEL_BYTES, DIRS as KERNEL_DIRS, FILES as KERNEL_FILES};
pub use tree::{Listed, Tree, TreeCounts, What};

use crate::LabError;
use extract::{extract, open_dirs, shown};
use gauge::Gauge;
use serde::Serialize;
use std::ffi::OsStr;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The directory beneath the filesystem's root that holds everything a fill writes.
pub const FILL_DIR: &str = "fill";

#[derive(Debug, Clone, PartialEq)]
pub struct FillSpec {
    /// Utilisation to reach, above 0 and at most 1 (`to = "40%"`). At 1 the fill goes on until
    /// the filesystem is full.
    pub to: f64,
    pub from: FillSource,
    /// Extractions at once (seed 004: 21).
    pub parallel: u32,
    /// Directories per level of the hierarchy (seed 004: `[10, 11, 21]`).
    pub layout: Vec<u32>,
    /// Seeds the synthetic tree; a tar archive does not use it.
    pub seed: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FillSource {
    /// A tar archive, plain, gzip- or xz-compressed (`from = "tar:PATH"`).
    Tar(PathBuf),
    /// A generated tree shaped like the Linux 2.6.19 sources (`from = "synthetic:kernel-tree"`).
    SyntheticKernelTree,
}

#[derive(Debug, Clone, Serialize)]
pub struct FillReport {
    /// Extractions begun, the last batch's included.
    pub extractions: u64,
    /// Extractions that ran to their end: all of them, unless the filesystem had less free space
    /// than one extraction takes (then the last batch stopped part-way at the target) or it
    /// filled up.
    pub complete: u64,
    /// The bytes one whole extraction took on this filesystem, as statvfs counted them after a
    /// sync (the last batch's mean); 0 when the extractions stopped part-way.
    pub per_extraction: u64,
    pub files: u64,
    /// Directories the extractions made (the layout's own are not counted).
    pub dirs: u64,
    /// Symlinks and hard links.
    pub links: u64,
    /// Bytes of file content written.
    pub bytes: u64,
    pub util_before: f64,
    /// After a final sync, so that everything written is counted.
    pub util_after: f64,
    /// From the first extraction to the end of the final sync (reading the archive is not in it).
    #[serde(with = "fslab_engine::result::secs")]
    pub duration: Duration,
}

/// Fills the filesystem holding `root` as `spec` says; see the module documentation.
pub fn fill(root: &Path, spec: &FillSpec) -> Result<FillReport, LabError> {
    spec.check()?;
    check_root(root)?;
    let tree = Tree::load(&spec.from, spec.seed)?;
    fill_from(root, &tree, spec)
}

/// [`fill`] with a tree already loaded (a study loads the archive once for all its cells);
/// `spec.from` is not used.
pub fn fill_from(root: &Path, tree: &Tree, spec: &FillSpec) -> Result<FillReport, LabError> {
    spec.check()?;
    check_root(root)?;
    if tree.entries.is_empty() {
        return Err(invalid("fill", format!("{} has nothing to extract", tree.source)));
    }
    let statvfs = |e| LabError::io(format!("statvfs {}", root.display()), e);
    let probe = Gauge::open(root, spec.to)?;
    let (size, used) = probe.space().map_err(statvfs)?;
    let whole = tree.footprint() <= size.saturating_sub(used);
    // In whole extractions the fill stops between batches, never within one: the gauge is then
    // given a target no reading reaches, and only carries the stop after an error.
    let gauge = if whole {
        Gauge::open(root, f64::INFINITY)?
    } else {
        probe
    };
    let mut filling = Filling {
        root,
        root_fd: open_path(root)?,
        tree,
        gauge: &gauge,
        leaves: Leaves::new(&spec.layout),
        parallel: spec.parallel as u64,
        next: 0,
        report: FillReport {
            extractions: 0,
            complete: 0,
            per_extraction: 0,
            files: 0,
            dirs: 0,
            links: 0,
            bytes: 0,
            util_before: gauge.util().map_err(statvfs)?,
            util_after: 0.0,
            duration: Duration::ZERO,
        },
    };
    let start = Instant::now();
    if whole {
        return filling.whole(spec.to, size, start);
    }
    let mut util_at_round = filling.report.util_before;
    loop {
        // Fill until the gauge says the target is reached...
        while !gauge.check().map_err(statvfs)? {
            // The last batch may have stopped on a reading this check did not confirm.
            gauge.resume();
            if let Err(e) = filling.batch(filling.parallel) {
                return filling.ended_by(e, spec.to, start);
            }
            if filling.next.is_multiple_of(filling.leaves.count) {
                util_at_round = filling.check_round(util_at_round)?;
            }
        }
        // ...then make sure it is, with everything written counted.
        if gauge.sync_util().map_err(statvfs)? >= spec.to {
            break;
        }
        gauge.rearm().map_err(statvfs)?;
    }
    filling.finish(start)
}

impl FillSpec {
    fn check(&self) -> Result<(), LabError> {
        let problem = if !(self.to > 0.0 && self.to <= 1.0) {
            format!("`to` is {}; it must be above 0% and at most 100%", self.to)
        } else if self.parallel == 0 {
            "`parallel` must be at least 1".to_string()
        } else if self.layout.is_empty() || self.layout.contains(&0) {
            format!(
                "`layout` {:?} needs at least one level and one directory per level",
                self.layout
            )
        } else if self
            .layout
            .iter()
            .try_fold(1u64, |n, &l| n.checked_mul(l as u64))
            .is_none()
        {
            format!("`layout` {:?} has too many leaves", self.layout)
        } else {
            return Ok(());
        };
        Err(invalid("fill", problem))
    }
}

impl Tree {
    /// The tree `from` names: reads and checks the whole archive, or generates the synthetic
    /// tree from `seed`.
    pub fn load(from: &FillSource, seed: u64) -> Result<Tree, LabError> {
        match from {
            FillSource::Tar(path) => Tree::from_archive(path),
            FillSource::SyntheticKernelTree => Ok(Tree::synthetic_kernel(seed)),
        }
    }

    /// Reads a tar archive (plain, gzip or xz, told by its first bytes) into memory. A member
    /// with an absolute path or `..`, one that would be written through a symlink of the
    /// archive, or a hard link to anything but an earlier file refuses the whole archive, with
    /// the member's number and name.
    pub fn from_archive(path: &Path) -> Result<Tree, LabError> {
        archive::load(path)
    }

    /// The tree shaped like seed 004's kernel 2.6.19 ([`KERNEL_DIRS`] directories,
    /// [`KERNEL_FILES`] files, [`KERNEL_BYTES`] bytes), the same for the same seed.
    pub fn synthetic_kernel(seed: u64) -> Tree {
        synthetic::kernel_tree(seed)
    }

    /// Writes the whole tree into the existing directory `dir`, confined to it.
    pub fn extract_into(&self, dir: &Path) -> Result<Extracted, LabError> {
        let fd = open_path(dir)?;
        extract(self, fd, None)
            .map_err(|f| LabError::io(format!("extracting {} into {}", self.source, shown(dir, &f)), f.error))
    }
}

/// The path, relative to the filesystem's root, of leaf `n` (counting from 0) of `layout`:
/// `fill/0/0/0`, `fill/0/0/1`...; past the last leaf, the next round's `fill/0/0/0/1`...
pub fn leaf(layout: &[u32], n: u64) -> PathBuf {
    let count: u64 = layout.iter().map(|&l| l as u64).product::<u64>().max(1);
    let (round, mut i) = (n / count, n % count);
    let mut digits = Vec::with_capacity(layout.len());
    for &l in layout.iter().rev() {
        digits.push(i % l.max(1) as u64);
        i /= l.max(1) as u64;
    }
    let mut path = PathBuf::from(FILL_DIR);
    path.extend(digits.iter().rev().map(u64::to_string));
    if round > 0 {
        path.push(round.to_string());
    }
    path
}

/// The layout's leaves, a round at a time.
struct Leaves {
    layout: Vec<u32>,
    count: u64,
}

impl Leaves {
    fn new(layout: &[u32]) -> Leaves {
        Leaves {
            layout: layout.to_vec(),
            count: layout.iter().map(|&l| l as u64).product(),
        }
    }

    /// Up to `parallel` leaves from leaf `next`, not past the end of a round.
    fn batch(&self, next: u64, parallel: u64) -> Vec<PathBuf> {
        let end = (next + parallel).min((next / self.count + 1) * self.count);
        (next..end).map(|n| leaf(&self.layout, n)).collect()
    }
}

/// A fill under way.
struct Filling<'a> {
    root: &'a Path,
    root_fd: OwnedFd,
    tree: &'a Tree,
    gauge: &'a Gauge,
    leaves: Leaves,
    parallel: u64,
    /// The next leaf to extract into.
    next: u64,
    report: FillReport,
}

impl Filling<'_> {
    /// Whole extractions until utilisation `to` of the `size` bytes: each batch as wide as the
    /// space left to the target holds (at least one, at most `parallel`), measured after a sync.
    fn whole(mut self, to: f64, size: u64, start: Instant) -> Result<FillReport, LabError> {
        let target = to * size as f64;
        let statvfs = |e| LabError::io(format!("statvfs {}", self.root.display()), e);
        let mut per = self.tree.footprint().max(gauge::BLOCK);
        let mut used = self.gauge.sync_used().map_err(statvfs)?;
        let mut util_at_round = self.report.util_before;
        while (used as f64) < target {
            let fit = ((target - used as f64) / per as f64).floor() as u64;
            let begun = self.report.extractions;
            if let Err(e) = self.batch(fit.clamp(1, self.parallel)) {
                return self.ended_by(e, to, start);
            }
            // The batch may have been cut short at the end of a round of the layout's leaves.
            let n = self.report.extractions - begun;
            let now = self.gauge.sync_used().map_err(statvfs)?;
            if now > used {
                per = ((now - used) / n).max(gauge::BLOCK);
            }
            self.report.per_extraction = per;
            used = now;
            if self.next.is_multiple_of(self.leaves.count) {
                util_at_round = self.check_round(util_at_round)?;
            }
        }
        self.finish(start)
    }

    /// A batch of up to `n` extractions, each in a thread of its own; the first error, if any.
    fn batch(&mut self, n: u64) -> Result<(), LabError> {
        let leaves = self.leaves.batch(self.next, n);
        self.next += leaves.len() as u64;
        self.report.extractions += leaves.len() as u64;
        let this = &*self;
        let results: Vec<Result<Extracted, LabError>> = std::thread::scope(|s| {
            let threads: Vec<_> = leaves
                .iter()
                .map(|leaf| s.spawn(move || this.extract_leaf(leaf)))
                .collect();
            threads
                .into_iter()
                .map(|t| t.join().expect("an extraction thread panicked"))
                .collect()
        });
        let mut first_error = None;
        for r in results {
            match r {
                Ok(x) => {
                    self.report.complete += x.complete as u64;
                    self.report.files += x.files;
                    self.report.dirs += x.dirs;
                    self.report.links += x.links;
                    self.report.bytes += x.bytes;
                }
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    fn extract_leaf(&self, leaf: &Path) -> Result<Extracted, LabError> {
        let at = self.root.join(leaf);
        let names: Vec<&OsStr> = leaf.iter().collect();
        let result = open_dirs(self.root_fd.as_fd(), &names, true)
            .map_err(|e| LabError::io(format!("making {}", at.display()), e))
            .and_then(|fd| {
                extract(self.tree, fd, Some(self.gauge)).map_err(|f| {
                    LabError::io(
                        format!("extracting {} into {}", self.tree.source, shown(&at, &f)),
                        f.error,
                    )
                })
            });
        if result.is_err() {
            self.gauge.halt();
        }
        result
    }

    /// At the end of a round: the filesystem must be fuller than at its start (`before`), or
    /// going round again would never end. Returns the utilisation now.
    fn check_round(&self, before: f64) -> Result<f64, LabError> {
        let util = self
            .gauge
            .util()
            .map_err(|e| LabError::io(format!("statvfs {}", self.root.display()), e))?;
        if util > before {
            return Ok(util);
        }
        let why = format!(
            "{} extractions of {} left {} no fuller ({:.1}%)",
            self.leaves.count,
            self.tree.source,
            self.root.display(),
            util * 100.0
        );
        Err(invalid("fill", why))
    }

    /// A batch failed. Running out of space once the target is reached (or when the target is
    /// a full filesystem) ends the fill; anything else fails it.
    fn ended_by(self, e: LabError, to: f64, start: Instant) -> Result<FillReport, LabError> {
        let full = matches!(&e, LabError::Io { source, .. }
            if matches!(source.raw_os_error(), Some(libc::ENOSPC) | Some(libc::EDQUOT)));
        if !full {
            return Err(e);
        }
        let util = self
            .gauge
            .sync_util()
            .map_err(|e| LabError::io(format!("statvfs {}", self.root.display()), e))?;
        if util >= to || to >= 1.0 {
            return self.finish(start);
        }
        Err(LabError::io(
            format!(
                "{} filled up at {:.1}%, short of the {:.1}% asked for (no space or no inodes left)",
                self.root.display(),
                util * 100.0,
                to * 100.0
            ),
            io::Error::other(e.to_string()),
        ))
    }

    fn finish(mut self, start: Instant) -> Result<FillReport, LabError> {
        self.report.util_after = self
            .gauge
            .sync_util()
            .map_err(|e| LabError::io(format!("statvfs {}", self.root.display()), e))?;
        self.report.duration = start.elapsed();
        Ok(self.report)
    }
}

/// Refuses a root that is not a directory.
pub(crate) fn check_root(root: &Path) -> Result<(), LabError> {
    match std::fs::metadata(root) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(LabError::io(
            root.display().to_string(),
            io::Error::new(io::ErrorKind::InvalidInput, "not a directory"),
        )),
        Err(e) => Err(LabError::io(root.display().to_string(), e)),
    }
}

/// Opens directory `dir`.
fn open_path(dir: &Path) -> Result<OwnedFd, LabError> {
    rustix::fs::open(
        dir,
        rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )
    .map_err(|e| LabError::io(format!("opening {}", dir.display()), e.into()))
}

/// A spec that cannot be run: `what` is the study-file section.
pub(crate) fn invalid(what: &str, problem: String) -> LabError {
    LabError::io(what, io::Error::new(io::ErrorKind::InvalidInput, problem))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leaves_are_numbered_in_order_then_rounds_go_one_level_down() {
        let layout = [10, 11, 21];
        assert_eq!(leaf(&layout, 0), Path::new("fill/0/0/0"));
        assert_eq!(leaf(&layout, 20), Path::new("fill/0/0/20"));
        assert_eq!(leaf(&layout, 21), Path::new("fill/0/1/0"));
        assert_eq!(leaf(&layout, 2309), Path::new("fill/9/10/20"));
        assert_eq!(leaf(&layout, 2310), Path::new("fill/0/0/0/1"));
        assert_eq!(leaf(&layout, 2 * 2310 + 22), Path::new("fill/0/1/1/2"));
    }

    #[test]
    fn a_batch_never_crosses_into_the_next_round() {
        let leaves = Leaves::new(&[2, 3]);
        assert_eq!(leaves.batch(0, 4).len(), 4);
        assert_eq!(leaves.batch(4, 4), vec![leaf(&[2, 3], 4), leaf(&[2, 3], 5)]);
        assert_eq!(leaves.batch(6, 4)[0], Path::new("fill/0/0/1"));
    }

    #[test]
    fn a_spec_that_cannot_run_is_refused() {
        let spec = FillSpec {
            to: 0.4,
            from: FillSource::SyntheticKernelTree,
            parallel: 21,
            layout: vec![10, 11, 21],
            seed: 1,
        };
        assert!(spec.check().is_ok());
        let bad = |s: FillSpec| s.check().unwrap_err().to_string();
        assert!(bad(FillSpec {
            to: 0.0,
            ..spec.clone()
        })
        .contains("`to`"));
        assert!(bad(FillSpec {
            to: 1.5,
            ..spec.clone()
        })
        .contains("at most 100%"));
        assert!(bad(FillSpec {
            parallel: 0,
            ..spec.clone()
        })
        .contains("`parallel`"));
        assert!(bad(FillSpec {
            layout: vec![10, 0],
            ..spec.clone()
        })
        .contains("`layout`"));
        assert!(bad(FillSpec { layout: vec![], ..spec }).contains("`layout`"));
    }
}
