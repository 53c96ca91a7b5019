//! One rank's mdtest: per iteration the tree, the directory phases and the file phases, with
//! mdtest's names, barriers and clocks, and the rates rank 0 summarises from every rank's.

use super::options::Options;
use crate::hpc::{self, sys, Clock};
use crate::ranks::Ranks;
use serde::Serialize;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// mdtest's operations, in its order (its `MDTEST_*_NUM`).
pub const OPERATIONS: [&str; 11] = [
    "Directory creation",
    "Directory stat",
    "Directory read",
    "Directory rename",
    "Directory removal",
    "File creation",
    "File stat",
    "File read",
    "File removal",
    "Tree creation",
    "Tree removal",
];
pub const DIR_CREATE: usize = 0;
pub const DIR_STAT: usize = 1;
pub const DIR_READ: usize = 2;
pub const DIR_RENAME: usize = 3;
pub const DIR_REMOVE: usize = 4;
pub const FILE_CREATE: usize = 5;
pub const FILE_STAT: usize = 6;
pub const FILE_READ: usize = 7;
pub const FILE_REMOVE: usize = 8;
pub const TREE_CREATE: usize = 9;
pub const TREE_REMOVE: usize = 10;

/// mdtest's directory mode (0775).
const DIRMODE: libc::mode_t = 0o775;

/// One rank's rates and times of one iteration, per operation (0 where it did not run).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Iteration {
    pub rate: [f64; 11],
    pub time: [f64; 11],
    pub items: [u64; 11],
}

/// Everything one rank measured, and what it made.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub tool: &'static str,
    pub models: &'static str,
    pub rank: usize,
    pub tasks: usize,
    /// This rank's own iterations.
    pub mine: Vec<Iteration>,
    /// Every rank's, in rank order (on every rank).
    pub all: Vec<Vec<Iteration>>,
    /// Calls that failed (mdtest warns and goes on).
    pub failures: Vec<String>,
}

/// The names one rank uses: mdtest's `mk_name`, `stat_name`... and its tree's directories.
pub struct Names {
    /// `mdtest_tree`, or `mdtest_tree.R` with `-u`.
    pub base: String,
    /// `mdtest.R.` for create, stat, read and remove: the rank `N`, `2N`, `3N` on.
    pub create: String,
    pub stat: String,
    pub read: String,
    pub remove: String,
    /// The tree's top directory each phase works in (`mdtest_tree.0`, `mdtest_tree.R.0`).
    pub create_dir: String,
    pub stat_dir: String,
    pub read_dir: String,
    pub remove_dir: String,
}

impl Names {
    pub fn of(o: &Options, rank: usize, tasks: usize) -> Names {
        let s = o.stride;
        let name = |k: usize| format!("mdtest.{}.", (rank + k * s) % tasks);
        let top = |k: usize| {
            if o.unique {
                format!("mdtest_tree.{}.0", (rank + k * s) % tasks)
            } else {
                "mdtest_tree.0".to_string()
            }
        };
        Names {
            base: if o.unique {
                format!("mdtest_tree.{rank}")
            } else {
                "mdtest_tree".into()
            },
            create: name(0),
            stat: name(1),
            read: name(2),
            remove: name(3),
            // mdtest creates in its `unique_chdir_dir`, one stride on.
            create_dir: top(1),
            stat_dir: top(2),
            read_dir: top(3),
            remove_dir: top(4),
        }
    }
}

/// What a rank's phase does to each item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Create,
    Remove,
}

/// The parts of a run every phase needs.
pub struct Job<'a> {
    pub o: &'a Options,
    /// `-d` beneath the run directory.
    pub root: PathBuf,
    pub ranks: &'a dyn Ranks,
    pub clock: Clock,
    pub names: Names,
    /// Once set (Ctrl-C), the phases under way and after it stop at their next item.
    pub interrupt: Option<Arc<AtomicBool>>,
    /// `--drop-caches`: the job's hosts, whose caches are dropped before each phase, untimed.
    pub drop_caches: Option<hpc::Nodes>,
    failures: Vec<String>,
    buf: Vec<u8>,
}

impl<'a> Job<'a> {
    /// A rank's job; its data is mdtest's timestamp pattern with rank 0's start second.
    pub fn new(o: &'a Options, root: PathBuf, ranks: &'a dyn Ranks, clock: Clock) -> Job<'a> {
        let names = Names::of(o, ranks.rank(), ranks.size());
        let signature = hpc::broadcast_u64(ranks, hpc::epoch_secs());
        let buf = hpc::timestamp_pattern(o.write_bytes as usize, ranks.rank(), signature);
        Job {
            o,
            root,
            ranks,
            clock,
            names,
            interrupt: None,
            drop_caches: None,
            failures: Vec::new(),
            buf,
        }
    }

    fn interrupted(&self) -> bool {
        self.interrupt.as_ref().is_some_and(|i| i.load(Ordering::Relaxed))
    }

    /// `test-dir.I-0` beneath `-d`.
    pub fn testdir(&self, iteration: u32) -> String {
        let mut s = self.root.display().to_string();
        if !s.ends_with('/') {
            s.push('/');
        }
        format!("{s}test-dir.{iteration}-0")
    }

    fn fail(&mut self, what: &str, path: &str, e: io::Error) {
        self.failures.push(format!("unable to {what} {path}: {e}"));
    }

    /// mdtest's create_remove_directory_tree: the tree's directories, depth first (`mkdir`
    /// parent before children; `rmdir` children before parent).
    fn tree(&mut self, testdir: &str, op: Op) {
        let top = format!("{testdir}/{}.0/", self.names.base);
        if op == Op::Create {
            self.mkdir(&top, "create tree directory");
        }
        self.subtree(&top, 1, 1, op);
        if op == Op::Remove {
            self.rmdir(&top, "remove directory");
        }
    }

    fn subtree(&mut self, path: &str, depth: u32, first: u64, op: Op) {
        if depth > self.o.depth {
            return;
        }
        for k in 0..self.o.branch {
            let dir = first + k;
            let p = format!("{path}{}.{dir}/", self.names.base);
            if op == Op::Create {
                self.mkdir(&p, "create directory");
            }
            self.subtree(&p, depth + 1, self.o.branch * dir + 1, op);
            if op == Op::Remove {
                self.rmdir(&p, "remove directory");
            }
        }
    }

    fn mkdir(&mut self, p: &str, what: &str) {
        if let Err(e) = sys::mkdir(Path::new(p), DIRMODE) {
            self.fail(what, p, e);
        }
    }

    fn rmdir(&mut self, p: &str, what: &str) {
        if let Err(e) = sys::rmdir(Path::new(p)) {
            self.fail(what, p, e);
        }
    }

    /// mdtest's create_remove_items: `items_per_dir` items in every directory of the tree,
    /// numbered by directory, from `path` (the tree's top).
    fn items(&mut self, path: &str, dirs: bool, op: Op) {
        self.items_in(path, 0, dirs, op);
        if self.o.depth > 0 {
            self.items_below(path, 1, 1, dirs, op);
        }
    }

    fn items_below(&mut self, path: &str, depth: u32, first: u64, dirs: bool, op: Op) {
        if depth > self.o.depth {
            return;
        }
        for k in 0..self.o.branch {
            let dir = first + k;
            let p = format!("{path}/{}.{dir}/", self.names.base);
            self.items_in(&p, dir * self.o.items_per_dir, dirs, op);
            self.items_below(&p, depth + 1, dir * self.o.branch + 1, dirs, op);
        }
    }

    fn items_in(&mut self, path: &str, first: u64, dirs: bool, op: Op) {
        for i in 0..self.o.items_per_dir {
            // Interrupted, the creates stop; the removals go on, to leave nothing behind.
            if op == Op::Create && self.interrupted() {
                return;
            }
            let n = first + i;
            match (dirs, op) {
                (true, Op::Create) => {
                    let p = format!("{path}/dir.{}{n}", self.names.create);
                    self.mkdir(&p, "create directory");
                }
                (true, Op::Remove) => {
                    let p = format!("{path}/dir.{}{n}", self.names.remove);
                    self.rmdir(&p, "remove directory");
                }
                (false, Op::Create) => {
                    let p = format!("{path}/file.{}{n}", self.names.create);
                    if let Err(e) = self.create_file(&p) {
                        self.fail("create file", &p, e);
                    }
                }
                (false, Op::Remove) => {
                    let p = format!("{path}/file.{}{n}", self.names.remove);
                    if let Err(e) = sys::unlink(Path::new(&p)) {
                        self.fail("remove file", &p, e);
                    }
                }
            }
        }
    }

    /// mdtest's create_file on POSIX: `open(O_CREAT|O_RDWR, 0664)`; with `-w`, `lseek(0)` and
    /// `write()` (`-y`: `fsync`); `close`.
    fn create_file(&self, p: &str) -> io::Result<()> {
        let fd = sys::open(Path::new(p), libc::O_CREAT | libc::O_RDWR, 0o664)?;
        if self.o.write_bytes > 0 {
            fd.lseek(0)?;
            fd.write_all(&self.buf[..self.o.write_bytes as usize])?;
            if self.o.sync {
                fd.fsync()?;
            }
        }
        fd.close()
    }

    /// The path of item `n` below the tree's top `path`, as mdtest's stat and read find it:
    /// `mdtest_tree.P/…/dir.mdtest.R.n` up the tree from its directory.
    fn item_path(&self, path: &str, kind: &str, name: &str, n: u64) -> String {
        let mut item = format!("{kind}.{name}{n}");
        let mut parent = n / self.o.items_per_dir.max(1);
        if parent > 0 {
            item = format!("{}.{parent}/{item}", self.names.base);
            while parent > self.o.branch {
                parent = (parent - 1) / self.o.branch;
                item = format!("{}.{parent}/{item}", self.names.base);
            }
        }
        format!("{path}/{item}")
    }

    fn stat_all(&mut self, path: &str, dirs: bool) {
        let kind = if dirs { "dir" } else { "file" };
        for n in 0..self.o.items {
            if self.interrupted() {
                return;
            }
            let p = self.item_path(path, kind, &self.names.stat, n);
            if let Err(e) = sys::stat_size(Path::new(&p)) {
                self.fail(&format!("stat {}", if dirs { "directory" } else { "file" }), &p, e);
            }
        }
    }

    /// mdtest's read on POSIX: `open(O_RDWR)` (its back-end opens read-only requests so);
    /// with `-e`, `lseek(0)` and `read()`; `close`.
    fn read_all(&mut self, path: &str) {
        let mut buf = vec![0u8; self.o.read_bytes as usize];
        for n in 0..self.o.items {
            if self.interrupted() {
                return;
            }
            let p = self.item_path(path, "file", &self.names.read, n);
            let r = sys::open(Path::new(&p), libc::O_RDWR, 0).and_then(|fd| {
                if !buf.is_empty() {
                    fd.lseek(0)?;
                    if fd.read_full(&mut buf)? < buf.len() {
                        return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "short read"));
                    }
                }
                fd.close()
            });
            if let Err(e) = r {
                self.fail("read file", &p, e);
            }
        }
    }

    /// mdtest's rename_dir_test: each directory renamed to the previous one's name, the first
    /// moved aside to `-XX` and back last.
    fn rename_all(&mut self, path: &str) {
        let stop = self.o.items;
        if stop <= 1 {
            return;
        }
        let mut first = String::new();
        let mut last = String::new();
        for n in 0..stop {
            let mut item = self.item_path(path, "dir", &self.names.stat, n);
            if n == 0 {
                first = format!("{item}-XX");
                last = first.clone();
            } else if n == stop - 1 {
                item = first.clone();
            }
            if let Err(e) = sys::rename(Path::new(&item), Path::new(&last)) {
                self.fail("rename directory", &item, e);
            }
            last = item;
        }
    }

    /// One timed phase: barrier, start, the work, barrier, end (mdtest's phase_prepare and
    /// phase_end); the rate is this rank's items over that time.
    fn timed(&mut self, it: &mut Iteration, op: usize, work: &mut dyn FnMut(&mut Self)) {
        self.cold();
        self.ranks.barrier();
        let start = self.clock.now();
        work(self);
        self.ranks.barrier();
        let secs = self.clock.now() - start;
        it.time[op] = secs;
        it.items[op] = self.o.items;
        it.rate[op] = if self.o.items == 0 {
            0.0
        } else {
            self.o.items as f64 / secs
        };
    }

    /// `--drop-caches`, before a phase's first barrier.
    fn cold(&mut self) {
        if let Some(nodes) = &self.drop_caches {
            if let Err(e) = hpc::drop_caches(self.ranks, nodes) {
                self.failures.push(e);
            }
        }
    }

    fn top(&self, iteration: u32, dir: &str) -> String {
        format!("{}/{dir}", self.testdir(iteration))
    }

    /// mdtest's directory_test.
    fn directory_test(&mut self, i: u32, it: &mut Iteration) {
        let o = self.o;
        self.ranks.barrier();
        if o.create {
            let p = self.top(i, &self.names.create_dir.clone());
            self.timed(it, DIR_CREATE, &mut |j| j.items(&p, true, Op::Create));
        }
        if o.stat {
            let p = self.top(i, &self.names.stat_dir.clone());
            self.timed(it, DIR_STAT, &mut |j| j.stat_all(&p, true));
        }
        if o.read {
            // mdtest reads no directories: the phase is its barriers.
            self.timed(it, DIR_READ, &mut |_| {});
        }
        if o.rename && o.items > 1 {
            let p = self.top(i, &self.names.stat_dir.clone());
            self.timed(it, DIR_RENAME, &mut |j| j.rename_all(&p));
        }
        if o.remove {
            let p = self.top(i, &self.names.remove_dir.clone());
            self.timed(it, DIR_REMOVE, &mut |j| j.items(&p, true, Op::Remove));
        }
    }

    /// mdtest's file_test.
    fn file_test(&mut self, i: u32, it: &mut Iteration) {
        let o = self.o;
        self.ranks.barrier();
        if o.create {
            let p = self.top(i, &self.names.create_dir.clone());
            self.timed(it, FILE_CREATE, &mut |j| j.items(&p, false, Op::Create));
        }
        if o.stat {
            let p = self.top(i, &self.names.stat_dir.clone());
            self.timed(it, FILE_STAT, &mut |j| j.stat_all(&p, false));
        }
        if o.read {
            let p = self.top(i, &self.names.read_dir.clone());
            self.timed(it, FILE_READ, &mut |j| j.read_all(&p));
        }
        if o.remove {
            let p = self.top(i, &self.names.remove_dir.clone());
            self.timed(it, FILE_REMOVE, &mut |j| j.items(&p, false, Op::Remove));
        }
    }

    /// mdtest_iteration: the test directory and tree, the phases, the tree's removal.
    fn iteration(&mut self, i: u32) -> Iteration {
        let o = self.o;
        let rank = self.ranks.rank();
        let mut it = Iteration::default();
        let testdir = self.testdir(i);
        // Rank 0 alone makes and removes the test directory; every rank its own tree with -u,
        // else rank 0 the one tree.
        let tree_rank = o.unique || rank == 0;
        if o.create {
            if rank == 0 && !sys::exists(Path::new(&testdir)) {
                self.mkdir(&testdir.clone(), "create test directory");
            }
            self.cold();
            self.ranks.barrier();
            let start = self.clock.now();
            if tree_rank {
                self.tree(&testdir, Op::Create);
            }
            self.ranks.barrier();
            let secs = self.clock.now() - start;
            it.time[TREE_CREATE] = secs;
            it.items[TREE_CREATE] = o.tree_dirs;
            it.rate[TREE_CREATE] = o.tree_dirs as f64 / secs;
        }
        if o.dirs {
            self.directory_test(i, &mut it);
        }
        if o.files {
            self.file_test(i, &mut it);
        }
        self.ranks.barrier();
        if o.remove {
            self.cold();
            let start = self.clock.now();
            if tree_rank {
                self.tree(&testdir, Op::Remove);
            }
            self.ranks.barrier();
            let secs = self.clock.now() - start;
            it.time[TREE_REMOVE] = secs;
            it.items[TREE_REMOVE] = o.tree_dirs;
            it.rate[TREE_REMOVE] = o.tree_dirs as f64 / secs;
            if rank == 0 && sys::exists(Path::new(&testdir)) {
                self.rmdir(&testdir.clone(), "remove directory");
            }
        }
        it
    }
}

/// Runs every iteration on this rank, then gathers every rank's figures.
pub fn run(job: &mut Job) -> Report {
    let o = job.o;
    let mut created_root = false;
    if job.ranks.rank() == 0 && !sys::exists(&job.root) {
        let root = job.root.display().to_string();
        job.mkdir(&root, "create test directory path");
        created_root = true;
    }
    let mine: Vec<Iteration> = (0..o.iterations).map(|i| job.iteration(i)).collect();
    let flat: Vec<f64> = mine
        .iter()
        .flat_map(|it| it.rate.iter().chain(&it.time).copied())
        .collect();
    let all: Vec<Vec<Iteration>> = hpc::gather_f64(job.ranks, &flat)
        .into_iter()
        .map(|v| {
            v.chunks_exact(22)
                .map(|c| Iteration {
                    rate: c[..11].try_into().expect("11 rates"),
                    time: c[11..].try_into().expect("11 times"),
                    items: [0; 11],
                })
                .collect()
        })
        .collect();
    if created_root && o.remove {
        let _ = sys::rmdir(&job.root);
    }
    Report {
        tool: "mdtest",
        models: "mdtest 4.0.0",
        rank: job.ranks.rank(),
        tasks: job.ranks.size(),
        mine,
        all,
        failures: std::mem::take(&mut job.failures),
    }
}

/// One row of mdtest's SUMMARY rate table: max, min, mean and standard deviation (over
/// iterations − 1) of each iteration's rate, which is the slowest rank's × the ranks (the tree's
/// rows: rank 0's own).
pub fn summary_row(report: &Report, op: usize) -> [f64; 4] {
    let n = report.tasks as f64;
    let per_iter: Vec<f64> = if op >= TREE_CREATE {
        report.all[0].iter().map(|it| it.rate[op]).collect()
    } else {
        (0..report.mine.len())
            .map(|j| report.all.iter().map(|r| r[j].rate[op]).fold(f64::INFINITY, f64::min) * n)
            .collect()
    };
    let k = per_iter.len() as f64;
    let mean = per_iter.iter().sum::<f64>() / k;
    let sd = if per_iter.len() == 1 {
        0.0
    } else {
        (per_iter.iter().map(|v| (mean - v).powi(2)).sum::<f64>() / (k - 1.0)).sqrt()
    };
    [
        per_iter.iter().copied().fold(0.0, f64::max),
        per_iter.iter().copied().fold(f64::INFINITY, f64::min),
        mean,
        sd,
    ]
}
