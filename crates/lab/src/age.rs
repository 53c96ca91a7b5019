//! Ageing a filesystem before the workloads, in the spirit of FFSB's `agefs`, Impressions and
//! fsperf: fill it to a utilisation with files of a realistic mix of sizes, then delete a random
//! share of them and write new ones (their sizes drawn afresh) until the filesystem is back at
//! that utilisation, round after round, until `churn` times the first fill's bytes have been
//! rewritten. Files die at random places all over the tree and their space is reused by files of
//! other sizes, so free space ends up fragmented as on a filesystem that has been in use.
//!
//! In the study file:
//!
//! ```toml
//! [age]
//! to = "60%"        # utilisation to fill to and to keep near, as statvfs counts it
//! churn = 2.0       # bytes deleted and rewritten, as a multiple of the first fill's (default 1)
//! delete = "5%"     # share of the files deleted each round (default 5%)
//! sizes = { table = [["4k", 25], ["64k", 18], ["1m", 7]] }   # file sizes, as a workload's fileset
//! seed = 1
//! ```
//!
//! Each round's deletions lower the utilisation by about `delete × to` (3 points at 60% with
//! the default 5%); its writes bring it back to `to`, overshooting by at most one file and one
//! statvfs interval (see [`overshoot_bound`](crate::fill::overshoot_bound)). The report gives the
//! lowest and highest utilisation seen between rounds.
//!
//! It is plain file I/O in one thread rather than an engine workload: it alternates between
//! deleting and writing by utilisation and by bytes rewritten, which no stop condition of the
//! engine says. Everything goes beneath `ROOT/age/`: `age/D/N`, 256 files to a directory.

use crate::fill::gauge::{Gauge, BLOCK};
use crate::fill::{check_root, invalid};
use crate::LabError;
use fslab_engine::workload::SizeDist;
use fslab_engine::Bytes;
use rand::rngs::SmallRng;
use rand::{Rng, RngExt, SeedableRng};
use serde::Serialize;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The directory beneath the filesystem's root that holds the aged files.
pub const AGE_DIR: &str = "age";
const FILES_PER_DIR: u64 = 256;
const PATTERN: usize = 1 << 20;

#[derive(Debug, Clone, PartialEq)]
pub struct AgeSpec {
    /// Utilisation to fill to and keep near, above 0 and below 1 (`to = "60%"`).
    pub to: f64,
    /// Bytes deleted and rewritten, as a multiple of the bytes the first fill wrote
    /// (`churn = 2.0`); 0 only fills.
    pub churn: f64,
    pub seed: u64,
    /// File sizes (`sizes = ...`, as a workload's fileset says them); by default
    /// [`AgeSpec::default_sizes`].
    pub sizes: SizeDist,
    /// Share of the files deleted each round, above 0 and at most 1 (`delete = "5%"`).
    pub delete: f64,
}

impl Default for AgeSpec {
    fn default() -> Self {
        AgeSpec {
            to: 0.5,
            churn: 1.0,
            seed: 1,
            sizes: AgeSpec::default_sizes(),
            delete: 0.05,
        }
    }
}

impl AgeSpec {
    /// Most files small, most bytes in big files, as on file servers and desktops (Agrawal et al.,
    /// "A five-year study of file-system metadata", whose findings Impressions reproduces): half
    /// the files 16 KiB or less, half the bytes in files of 4 MiB or more; 365 KiB on average.
    pub fn default_sizes() -> SizeDist {
        const KIB: u64 = 1024;
        let table = [
            (KIB, 10),
            (4 * KIB, 25),
            (16 * KIB, 25),
            (64 * KIB, 18),
            (256 * KIB, 12),
            (1024 * KIB, 7),
            (4096 * KIB, 2),
            (16384 * KIB, 1),
        ];
        SizeDist::Table {
            table: table.iter().map(|&(size, weight)| (Bytes(size), weight)).collect(),
        }
    }

    fn check(&self) -> Result<(), LabError> {
        let problem = if !(self.to > 0.0 && self.to < 1.0) {
            format!(
                "`to` is {}; ageing needs free space to churn: above 0% and below 100%",
                self.to
            )
        } else if !(self.churn >= 0.0 && self.churn.is_finite()) {
            format!("`churn` is {}; it must be 0 or more", self.churn)
        } else if !(self.delete > 0.0 && self.delete <= 1.0) {
            format!("`delete` is {}; it must be above 0% and at most 100%", self.delete)
        } else if self.sizes.max() == 0 {
            "`sizes` are all 0 bytes: such files would never fill anything".to_string()
        } else {
            return Ok(());
        };
        Err(invalid("age", problem))
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct AgeReport {
    /// Files and directories beneath `age/` at the end.
    pub files: u64,
    pub dirs: u64,
    /// Bytes the first fill wrote.
    pub initial_bytes: u64,
    /// Bytes written in all, the first fill's included.
    pub bytes_written: u64,
    /// Bytes written after the first fill: at least `churn × initial_bytes`.
    pub bytes_rewritten: u64,
    pub bytes_deleted: u64,
    pub files_created: u64,
    pub files_deleted: u64,
    /// Rounds of deleting and rewriting.
    pub rounds: u64,
    pub util_before: f64,
    pub util_after: f64,
    /// The lowest utilisation seen, after a round's deletions.
    pub util_low: f64,
    /// The highest utilisation seen, after a fill or a round's writes.
    pub util_high: f64,
    #[serde(with = "fslab_engine::result::secs")]
    pub duration: Duration,
}

/// Ages the filesystem holding `root` as `spec` says; see the module documentation.
pub fn age(root: &Path, spec: &AgeSpec) -> Result<AgeReport, LabError> {
    spec.check()?;
    check_root(root)?;
    let start = Instant::now();
    let dir = root.join(AGE_DIR);
    std::fs::create_dir(&dir).map_err(|e| match e.kind() {
        io::ErrorKind::AlreadyExists => invalid(
            "age",
            format!(
                "{} exists already: age a fresh filesystem, or remove it first",
                dir.display()
            ),
        ),
        _ => LabError::io(format!("making {}", dir.display()), e),
    })?;
    let mut ager = Ager::new(root, dir, spec)?;
    ager.fill()?;
    let initial = ager.report.bytes_written;
    ager.report.initial_bytes = initial;
    while (ager.report.bytes_written - initial) < (spec.churn * initial as f64).ceil() as u64 {
        ager.round()?;
    }
    let util_after = ager.gauge.sync_util().map_err(ager.statvfs())?;
    Ok(AgeReport {
        bytes_rewritten: ager.report.bytes_written - initial,
        files: ager.live.len() as u64,
        util_after,
        duration: start.elapsed(),
        ..ager.report
    })
}

/// An ageing under way.
struct Ager<'a> {
    root: &'a Path,
    dir: PathBuf,
    spec: &'a AgeSpec,
    gauge: Gauge,
    rng: SmallRng,
    /// Random bytes every file's content is cut from.
    pattern: Vec<u8>,
    /// The files that exist: (number, size).
    live: Vec<(u64, u64)>,
    next: u64,
    report: AgeReport,
}

impl<'a> Ager<'a> {
    fn new(root: &'a Path, dir: PathBuf, spec: &'a AgeSpec) -> Result<Ager<'a>, LabError> {
        let gauge = Gauge::open(root, spec.to)?;
        let mut rng = SmallRng::seed_from_u64(spec.seed ^ 0x0a9e);
        let mut pattern = vec![0; PATTERN];
        rng.fill_bytes(&mut pattern);
        let util = gauge
            .util()
            .map_err(|e| LabError::io(format!("statvfs {}", root.display()), e))?;
        Ok(Ager {
            root,
            dir,
            spec,
            gauge,
            rng,
            pattern,
            live: Vec::new(),
            next: 0,
            report: AgeReport {
                files: 0,
                dirs: 0,
                initial_bytes: 0,
                bytes_written: 0,
                bytes_rewritten: 0,
                bytes_deleted: 0,
                files_created: 0,
                files_deleted: 0,
                rounds: 0,
                util_before: util,
                util_after: util,
                util_low: util,
                util_high: util,
                duration: Duration::ZERO,
            },
        })
    }

    /// One round: delete a share of the files, then write new ones until the filesystem is as
    /// full as before.
    fn round(&mut self) -> Result<(), LabError> {
        let (files, bytes) = self.delete_some()?;
        let util = self.gauge.sync_util().map_err(self.statvfs())?;
        self.report.util_low = self.report.util_low.min(util);
        let written = self.fill()?;
        self.report.rounds += 1;
        if written == 0 {
            let why = format!(
                "deleting {files} files ({bytes} bytes) freed no space on {} (it stays at {:.1}%)",
                self.root.display(),
                util * 100.0
            );
            return Err(invalid("age", why));
        }
        Ok(())
    }

    /// Writes files until the filesystem reaches the target; the bytes written.
    fn fill(&mut self) -> Result<u64, LabError> {
        let before = self.report.bytes_written;
        self.gauge.rearm().map_err(self.statvfs())?;
        while !self.gauge.check().map_err(self.statvfs())? {
            while !self.gauge.stopped() {
                self.create()?;
            }
            // Stopped by the bytes counted: sync and look again, in case the filesystem
            // allocates less than was counted.
            if self.gauge.sync_util().map_err(self.statvfs())? >= self.spec.to {
                break;
            }
            self.gauge.rearm().map_err(self.statvfs())?;
        }
        let util = self.gauge.sync_util().map_err(self.statvfs())?;
        self.report.util_high = self.report.util_high.max(util);
        if self.report.rounds == 0 {
            self.report.util_low = util;
        }
        Ok(self.report.bytes_written - before)
    }

    /// Writes one new file, of a size drawn from the spec's sizes.
    fn create(&mut self) -> Result<(), LabError> {
        let n = self.next;
        self.next += 1;
        if n.is_multiple_of(FILES_PER_DIR) {
            let d = self.dir.join((n / FILES_PER_DIR).to_string());
            std::fs::create_dir(&d).map_err(|e| LabError::io(format!("making {}", d.display()), e))?;
            self.report.dirs += 1;
        }
        let size = self.spec.sizes.sample(&mut self.rng);
        let path = self.path(n);
        let start = self.rng.random_range(0..PATTERN);
        self.write(&path, size, start)
            .map_err(|e| LabError::io(format!("writing {}", path.display()), e))?;
        self.live.push((n, size));
        self.report.files_created += 1;
        self.report.bytes_written += size;
        Ok(())
    }

    /// Writes `size` bytes of the pattern, from `start` on and round again, to a new file.
    fn write(&self, path: &Path, size: u64, mut start: usize) -> io::Result<()> {
        let mut file = std::fs::File::create_new(path)?;
        let mut left = size;
        while left > 0 {
            let n = (PATTERN - start).min(usize::try_from(left).unwrap_or(usize::MAX));
            file.write_all(&self.pattern[start..start + n])?;
            start = (start + n) % PATTERN;
            left -= n as u64;
        }
        self.gauge.add(size.max(BLOCK))
    }

    /// Deletes `delete` of the files, at least one, chosen at random; (files, bytes) deleted.
    fn delete_some(&mut self) -> Result<(u64, u64), LabError> {
        if self.live.is_empty() {
            return Ok((0, 0));
        }
        let count = ((self.live.len() as f64 * self.spec.delete).ceil() as usize).clamp(1, self.live.len());
        let mut bytes = 0;
        for _ in 0..count {
            let (n, size) = self.live.swap_remove(self.rng.random_range(0..self.live.len()));
            let path = self.path(n);
            std::fs::remove_file(&path).map_err(|e| LabError::io(format!("deleting {}", path.display()), e))?;
            bytes += size;
        }
        self.report.files_deleted += count as u64;
        self.report.bytes_deleted += bytes;
        Ok((count as u64, bytes))
    }

    fn path(&self, n: u64) -> PathBuf {
        self.dir.join((n / FILES_PER_DIR).to_string()).join(n.to_string())
    }

    fn statvfs(&self) -> impl Fn(io::Error) -> LabError + '_ {
        move |e| LabError::io(format!("statvfs {}", self.root.display()), e)
    }
}
