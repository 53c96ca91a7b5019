//! One rank's IOR test: its repetitions of the write and read phases, with IOR's barriers, its
//! six time stamps per phase, and the figures rank 0 reduces from every rank's.

use super::options::{Api, Options};
use crate::hpc::{self, sys, Clock, Nodes};
use crate::ranks::Ranks;
use serde::Serialize;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Write or read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Access {
    Write,
    Read,
}

impl Access {
    pub fn name(self) -> &'static str {
        match self {
            Access::Write => "write",
            Access::Read => "read",
        }
    }
}

/// What this rank did in one phase.
#[derive(Debug, Clone, Serialize)]
pub struct Mine {
    pub rank: usize,
    /// The rank whose data this rank accessed (its own, or another's with `-C`).
    pub pretend_rank: usize,
    pub file: String,
    /// The file offset of this rank's first transfer.
    pub first_offset: u64,
    pub transfers: u64,
    pub bytes: u64,
}

/// One phase of one repetition, reduced over the ranks as IOR reduces it.
#[derive(Debug, Clone, Serialize)]
pub struct Point {
    pub access: Access,
    pub rep: u32,
    /// Bytes all ranks moved (IOR's aggFileSizeForBW).
    pub bytes: u64,
    /// From the first rank's open to the last rank's close.
    pub total_secs: f64,
    /// From the first rank's first transfer to the last rank's last.
    pub access_secs: f64,
    pub open_secs: f64,
    pub xfer_secs: f64,
    pub close_secs: f64,
    /// Bytes per second over `total_secs`.
    pub bw: f64,
    pub iops: f64,
    /// Rank 0's transfer time over its transfers per block (what IOR 4.0 prints).
    pub latency: f64,
    /// Size the files had afterwards by `stat` (summed with -F).
    pub stat_bytes: u64,
    pub mine: Mine,
}

/// One repetition.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Rep {
    pub write: Option<Point>,
    pub read: Option<Point>,
    /// Seconds removing the files took (between the barriers around it).
    pub remove_secs: Option<f64>,
}

/// Everything this rank's run measured.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub tool: &'static str,
    pub models: &'static str,
    pub tasks: usize,
    pub nodes: usize,
    pub tasks_on_node0: usize,
    pub reps: Vec<Rep>,
}

/// The parts of a run every phase needs.
pub struct Job<'a> {
    pub o: &'a Options,
    /// The test file as `-o` names it beneath the run directory.
    pub root: PathBuf,
    pub ranks: &'a dyn Ranks,
    pub nodes: Nodes,
    pub clock: Clock,
    /// Once set (Ctrl-C), phases stop at their next transfer, as at a stonewall.
    pub interrupt: Option<Arc<AtomicBool>>,
    /// `--drop-caches`: before each phase, untimed.
    pub drop_caches: bool,
}

impl Job<'_> {
    fn interrupted(&self) -> bool {
        self.interrupt.as_ref().is_some_and(|i| i.load(Ordering::Relaxed))
    }

    pub fn tasks(&self) -> usize {
        self.ranks.size()
    }

    /// IOR's expectedAggFileSize: block × segments × tasks.
    pub fn expected(&self) -> u64 {
        self.o.block * self.o.segments * self.tasks() as u64
    }

    /// The rank whose part `rank` accesses with the rank offset (IOR's pretendRank).
    fn pretend(&self, offset: usize) -> usize {
        (self.ranks.rank() + offset) % self.tasks()
    }

    /// IOR's GetTestFileName: `root.%08d` per process with -F, else `root`.
    pub fn file(&self, offset: usize) -> PathBuf {
        if self.o.file_per_proc {
            let mut name = self.root.as_os_str().to_owned();
            name.push(format!(".{:08}", self.pretend(offset)));
            PathBuf::from(name)
        } else {
            self.root.clone()
        }
    }

    /// The rank offset of the read-back: IOR's `-C` moves one node away, which is
    /// `taskPerNodeOffset × tasks on node 0` when the ranks are placed by slot (rank 1 beside
    /// rank 0), else `taskPerNodeOffset`; so on one node `-C` reads a rank's own data, as IOR's.
    pub fn read_offset(&self) -> usize {
        if !self.o.reorder {
            return 0;
        }
        let shift = if self.nodes.block_mapping {
            self.nodes.on_node0 as u64
        } else {
            1
        };
        ((self.o.task_offset * shift) % self.tasks() as u64) as usize
    }

    /// The file offsets this rank accesses, in order, as IOR's WriteOrRead computes them.
    pub fn offsets(&self, pretend: usize, seed: u64) -> Vec<u64> {
        let o = self.o;
        let n = self.tasks() as u64;
        let p = pretend as u64;
        let mut out = Vec::new();
        if o.random {
            // IOR draws a rank for every transfer of a shared file's segment (all ranks with one
            // seed, so each transfer is one rank's), or takes every transfer of its own block,
            // then shuffles its list.
            let mut rng = hpc::Rng::new(if o.file_per_proc { seed + p } else { seed });
            let mut mine: Vec<u64> = if o.file_per_proc {
                (0..o.per_block()).map(|j| j * o.transfer).collect()
            } else {
                (0..o.block * n)
                    .step_by(o.transfer as usize)
                    .filter(|_| rng.below(n) == p)
                    .collect()
            };
            let len = mine.len() as u64;
            for i in 0..mine.len() {
                let j = rng.below(len) as usize;
                mine.swap(i, j);
            }
            for i in 0..o.segments {
                let base = if o.file_per_proc { i * o.block } else { i * n * o.block };
                out.extend(mine.iter().map(|off| off + base));
            }
        } else {
            for i in 0..o.segments {
                let base = if o.file_per_proc {
                    i * o.block
                } else {
                    i * n * o.block + p * o.block
                };
                out.extend((0..o.per_block()).map(|j| base + j * o.transfer));
            }
        }
        out
    }
}

/// An open test file: a descriptor, and with MMAP its mapping.
struct Open {
    fd: sys::Fd,
    map: Option<sys::Map>,
}

impl Open {
    /// IOR's create (`open(O_CREAT|O_RDWR, 0664)`; MMAP: `ftruncate` to the aggregate size and
    /// `mmap`) or open (`open(O_RDONLY)`; MMAP: `mmap`).
    fn new(job: &Job, path: &Path, access: Access) -> io::Result<Open> {
        let fd = match access {
            Access::Write => sys::open(path, libc::O_CREAT | libc::O_RDWR, 0o664)?,
            Access::Read => sys::open(path, libc::O_RDONLY, 0)?,
        };
        let map = match job.o.api {
            Api::Posix => None,
            Api::Mmap => {
                if access == Access::Write {
                    fd.ftruncate(job.expected())?;
                }
                Some(sys::Map::new(&fd, job.expected(), access == Access::Write)?)
            }
        };
        Ok(Open { fd, map })
    }

    /// One transfer: `lseek` and `write()`/`read()` (POSIX), or a copy (MMAP).
    fn xfer(&self, access: Access, offset: u64, buf: &mut [u8]) -> io::Result<u64> {
        if let Some(m) = &self.map {
            m.copy(offset, buf, access == Access::Write)?;
            return Ok(buf.len() as u64);
        }
        self.fd.lseek(offset)?;
        match access {
            Access::Write => self.fd.write_all(buf).map(|()| buf.len() as u64),
            Access::Read => self.fd.read_full(buf).map(|n| n as u64),
        }
    }

    /// `-e`: `fsync` (MMAP: `msync(MS_SYNC)` of the mapping).
    fn fsync(&self) -> io::Result<()> {
        match &self.map {
            Some(m) => m.msync(),
            None => self.fd.fsync(),
        }
    }

    /// `close` (MMAP: `munmap` first).
    fn close(self) -> io::Result<()> {
        if let Some(m) = self.map {
            m.unmap()?;
        }
        self.fd.close()
    }
}

/// The transfer buffer, IOR's timestamp pattern: word `i` is `rank << 32 | (signature + i)`,
/// the signature being the seconds since the epoch when the test starts (rank 0's), filled once
/// and written as it is (IOR 4.0's default packet type changes nothing per transfer).
pub struct Buffer(Vec<u8>);

impl Buffer {
    pub fn new(len: u64, rank: usize, signature: u64) -> Buffer {
        Buffer(hpc::timestamp_pattern(len as usize, rank, signature))
    }
}

/// The six time stamps of a phase, IOR's timer[]: open, transfers, close, start and stop each.
type Timers = [f64; 6];

/// What one rank's phase did, before the reduction.
struct Done {
    timers: Timers,
    moved: u64,
    transfers: u64,
    first: u64,
    error: Option<String>,
}

/// Runs one phase on this rank: IOR's barrier, open, transfers (with `-e` the fsync after
/// them), close, each timed; `-g` barriers between them.
fn phase(job: &Job, access: Access, path: &Path, offsets: &[u64], buf: &mut Buffer) -> Done {
    let c = &job.clock;
    let mut t: Timers = [0.0; 6];
    let mut done = Done {
        timers: t,
        moved: 0,
        transfers: 0,
        first: offsets.first().copied().unwrap_or(0),
        error: None,
    };
    job.ranks.barrier();
    t[0] = c.now();
    let open = Open::new(job, path, access);
    t[1] = c.now();
    if job.o.intra_barriers {
        job.ranks.barrier();
    }
    t[2] = c.now();
    let mut result = open.map(|f| {
        let deadline = job.o.deadline as f64;
        let mut io = Ok(());
        for &off in offsets {
            match f.xfer(access, off, &mut buf.0) {
                Ok(n) => {
                    done.moved += n;
                    done.transfers += 1;
                    if n < buf.0.len() as u64 {
                        io = Err(io::Error::new(io::ErrorKind::UnexpectedEof, "the file ended early"));
                        break;
                    }
                }
                Err(e) => {
                    io = Err(e);
                    break;
                }
            }
            if deadline > 0.0 && c.now() - t[2] > deadline || job.interrupted() {
                break;
            }
        }
        if io.is_ok() && access == Access::Write && job.o.fsync {
            io = f.fsync();
        }
        (f, io)
    });
    t[3] = c.now();
    if job.o.intra_barriers {
        job.ranks.barrier();
    }
    t[4] = c.now();
    let closed = match result.as_mut() {
        Ok(_) => {
            let (f, io) = result.expect("checked");
            io.and_then(|()| f.close())
        }
        Err(_) => result.map(drop),
    };
    t[5] = c.now();
    if let Err(e) = closed {
        done.error = Some(format!("{} {}: {e}", access.name(), path.display()));
    }
    done.timers = t;
    done
}

/// Removes the test file(s) as IOR's RemoveFile: each rank its own with -F, else rank 0 the
/// shared one, each after `access(F_OK)`.
fn remove(job: &Job, path: &Path) {
    if (job.o.file_per_proc || job.ranks.rank() == 0) && sys::exists(path) {
        let _ = sys::unlink(path);
    }
}

/// Reduces a phase over the ranks as IOR's CheckFileSize and ReduceIterResults do; an error on
/// any rank fails every rank.
fn reduce(job: &Job, access: Access, rep: u32, path: &Path, done: Done, pretend: usize) -> Result<Point, String> {
    let size = sys::stat_size(path).unwrap_or(0);
    let failed = u64::from(done.error.is_some());
    let counts = hpc::gather_u64(job.ranks, &[size, done.moved, failed]);
    let times = hpc::gather_f64(job.ranks, &done.timers);
    if let Some(e) = done.error {
        return Err(e);
    }
    if let Some(r) = counts.iter().position(|c| c[2] != 0) {
        return Err(format!("rank {r} failed its {} phase", access.name()));
    }
    let stat_bytes = if job.o.file_per_proc {
        counts.iter().map(|c| c[0]).sum()
    } else {
        counts.iter().map(|c| c[0]).min().unwrap_or(0)
    };
    let bytes: u64 = counts.iter().map(|c| c[1]).sum();
    let reduced: Vec<f64> = (0..6)
        .map(|i| {
            let all = times.iter().map(|t| t[i]);
            if i % 2 == 0 {
                all.fold(f64::INFINITY, f64::min)
            } else {
                all.fold(f64::NEG_INFINITY, f64::max)
            }
        })
        .collect();
    let total = reduced[5] - reduced[0];
    let access_secs = reduced[3] - reduced[2];
    let rank0 = &times[0];
    Ok(Point {
        access,
        rep,
        bytes,
        total_secs: total,
        access_secs,
        open_secs: reduced[1] - reduced[0],
        xfer_secs: reduced[3] - reduced[2],
        close_secs: reduced[5] - reduced[4],
        bw: bytes as f64 / total,
        iops: (bytes / job.o.transfer) as f64 / access_secs,
        latency: (rank0[3] - rank0[2]) / job.o.per_block() as f64,
        stat_bytes,
        mine: Mine {
            rank: job.ranks.rank(),
            pretend_rank: pretend,
            file: path.display().to_string(),
            first_offset: done.first,
            transfers: done.transfers,
            bytes: done.moved,
        },
    })
}

/// What the runner tells its caller as the test goes, for IOR's text (rank 0 prints it).
pub enum Event<'a> {
    /// The first repetition starts: the table's header.
    Table,
    /// A phase is about to start its transfers (`-v`: "Commencing ...").
    Commencing(Access),
    Point(&'a Point),
    Removed {
        secs: f64,
        rep: u32,
    },
    /// IOR's warnings (rank 0's).
    Warning(String),
}

/// Runs the test's repetitions on this rank. `event` hears each phase's figures.
pub fn run(job: &Job, event: &mut dyn FnMut(Event)) -> Result<Report, String> {
    let o = job.o;
    let rank = job.ranks.rank();
    // One seed for the data signature and the random offsets, rank 0's (IOR broadcasts both).
    let seed = hpc::broadcast_u64(job.ranks, o.seed.unwrap_or_else(hpc::epoch_secs));
    let mut wbuf = Buffer::new(o.transfer, rank, seed);
    let mut rbuf = Buffer::new(o.transfer, rank, seed);
    if o.write && (o.file_per_proc || rank == 0) && sys::stat_size(&job.file(0)).is_ok() {
        event(Event::Warning(format!(
            "The file \"{}\" exists already and will be overwritten",
            job.file(0).display()
        )));
    }
    let mut reps = Vec::new();
    event(Event::Table);
    for rep in 0..o.reps {
        let mut r = Rep::default();
        let mut last = job.file(0);
        // After a stonewalled write, IOR's read stops after as many transfers as the rank wrote
        // (its stoneWallingWearOutIterations), so that it reads no further than was written.
        let mut wear_out = None;
        if o.write {
            let path = job.file(0);
            remove(job, &path);
            let pretend = job.pretend(0);
            let offsets = job.offsets(pretend, seed);
            if job.drop_caches {
                hpc::drop_caches(job.ranks, &job.nodes)?;
            }
            event(Event::Commencing(Access::Write));
            let done = phase(job, Access::Write, &path, &offsets, &mut wbuf);
            job.ranks.barrier();
            if o.deadline > 0 {
                wear_out = Some(done.transfers as usize);
            }
            let p = reduce(job, Access::Write, rep, &path, done, pretend)?;
            check_size(job, &p, event);
            event(Event::Point(&p));
            r.write = Some(p);
            last = path;
        }
        if o.read {
            let offset = job.read_offset();
            let path = job.file(offset);
            let pretend = job.pretend(offset);
            let mut offsets = job.offsets(pretend, seed);
            if let Some(n) = wear_out {
                offsets.truncate(n);
            }
            if job.drop_caches {
                hpc::drop_caches(job.ranks, &job.nodes)?;
            }
            event(Event::Commencing(Access::Read));
            let done = phase(job, Access::Read, &path, &offsets, &mut rbuf);
            let p = reduce(job, Access::Read, rep, &path, done, pretend)?;
            check_size(job, &p, event);
            event(Event::Point(&p));
            r.read = Some(p);
            last = path;
        }
        if !o.keep {
            let start = job.clock.now();
            job.ranks.barrier();
            remove(job, &last);
            job.ranks.barrier();
            let secs = job.clock.now() - start;
            event(Event::Removed { secs, rep });
            r.remove_secs = Some(secs);
        } else {
            job.ranks.barrier();
        }
        reps.push(r);
    }
    Ok(Report {
        tool: "ior",
        models: "IOR 4.0.0",
        tasks: job.tasks(),
        nodes: job.nodes.nodes,
        tasks_on_node0: job.nodes.on_node0,
        reps,
    })
}

/// IOR's warnings when the bytes moved are not what the options ask for (a stonewall, MMAP's
/// files per process), or `stat` disagrees.
fn check_size(job: &Job, p: &Point, event: &mut dyn FnMut(Event)) {
    let expected = job.expected();
    if expected != p.bytes || p.stat_bytes != p.bytes {
        event(Event::Warning(format!(
            "Expected aggregate file size       = {expected}"
        )));
        event(Event::Warning(format!(
            "Stat() of aggregate file size      = {}",
            p.stat_bytes
        )));
        event(Event::Warning(format!(
            "Using actual aggregate bytes moved = {}",
            p.bytes
        )));
        if job.o.deadline > 0 {
            event(Event::Warning("Maybe caused by deadlineForStonewalling".into()));
        }
    }
}
