//! A fileset on disk and in memory: its directories, its files, and the table threads pick files
//! from.
//!
//! Layout beneath the run directory: `<fileset>/d<k>/f<id>` (file `id` lives in directory
//! `id mod dirs`), `<fileset>/meta/m<n>` for directories made by `mkdir`, and a marker file
//! `.fslab-fileset` that says fslab made it. fslab only ever clears a fileset directory that
//! carries that marker, and only the names it makes. A fileset with `dir = "."` lies in the run
//! directory itself (sysbench's `test_file.N`): its files and marker sit among the user's own
//! files, and fslab removes only its `<prefix><N>` files there, never the directory. A fileset
//! with `names` (IOzone's `-F`) names its files itself, in its directory, which it may share
//! with the user's files as the run directory is shared: its marker lists the names fslab made,
//! only those are ever removed, and the directory stays. A directory holds one marker, so a
//! fileset in the run directory refuses to lay out its files beside another fileset's files
//! there, whose marker it would replace ([`SetupError::Occupied`]).
//!
//! When no operation adds or removes files, the table is a fixed array of sizes that threads
//! read without a lock. Otherwise it is a list of live files under a mutex held for a few
//! instructions per operation; a file in use by one thread is never deleted or renamed by
//! another.

use crate::confine::{self, ConfineError, RunDir};
use crate::idmap::IdMap;
use crate::io::{Mapping, SharedFile};
use crate::marker;
use crate::meta_dirs::MetaDirs;
use crate::workload::{Data, Fileset, OpKind, SetupCalls, SizeDist, Workload};
use rand::{Rng, RngExt, SeedableRng};
use rustix::fs::{AtFlags, Mode, OFlags};
use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicU64, Ordering::Acquire, Ordering::Relaxed, Ordering::Release};
use std::sync::Mutex;
use std::time::Instant;

/// The most files a dynamic table makes room for ahead of a run (about 40 MB of address space,
/// touched only as files fill it).
const RESERVE_AT_MOST: u64 = 1 << 20;

/// What setting a fileset up did: part of the run's result, also at this path for the crates
/// that name it here.
pub use crate::result::SetupReport;

#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error(transparent)]
    Confine(#[from] ConfineError),
    #[error("fileset `{fileset}`: {path}: {error}")]
    Io {
        fileset: String,
        path: String,
        error: io::Error,
    },
    #[error("fileset `{fileset}`: {path} holds `{entry}`, which fslab did not make; name an empty directory or remove it yourself")]
    Foreign {
        fileset: String,
        path: String,
        entry: String,
    },
    /// The directory holds the files of another fileset fslab made there (its marker describes
    /// them): this fileset's marker would take the marker's place and leave those files to no
    /// one, so that no later run could remove them.
    #[error("fileset `{fileset}`: {path} holds `{entry}`, which fslab made for another fileset there (its marker `.fslab-fileset` says so); run in another directory, or first remove those files with the command that made them")]
    Occupied {
        fileset: String,
        path: String,
        entry: String,
    },
    /// A file fslab would reuse has other names: fslab made none such (its files have one link),
    /// and writing into it would change a file elsewhere.
    #[error("fileset `{fileset}`: {path} has {links} hard links, so fslab did not make it (its files have one); it writes into no file it did not make: remove it yourself")]
    Linked { fileset: String, path: String, links: u64 },
    /// More files than fslab could keep track of in this machine's memory: refused before
    /// anything is made.
    #[error("fileset `{fileset}`: {files} files would take {} of memory for fslab to keep track of, and this machine has {} available; give fewer files", gib(*need), gib(*have))]
    Memory {
        fileset: String,
        files: u64,
        need: u64,
        have: u64,
    },
    /// More directories than the process may hold open: fslab keeps each data directory open
    /// for the run. Refused before anything is made.
    #[error("fileset `{fileset}`: dirs = {dirs}, but fslab keeps each directory open for the run and may hold only {limit} descriptors (ulimit -Hn); give fewer dirs or raise the limit")]
    Descriptors { fileset: String, dirs: u64, limit: u64 },
}

/// Bytes as GiB, for messages.
fn gib(bytes: u64) -> String {
    format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
}

/// What the engine holds in memory for each file of a fileset while it runs, at most: the size
/// drawn for it, its entry in the file table and, when files come and go, its place in the
/// table's index (1,000,000 files take 14.6 MiB in all, `bench/`'s RSS case).
const BYTES_PER_FILE: u64 = 64;

/// Refuses a fileset of more data directories than the process may hold open, or of more files
/// than this machine's memory can keep track of (as drawn for `until_bytes`: that many bytes
/// over the mean size), which would otherwise stop the run with an error (or an allocation
/// failure) once part of it was made.
fn check_resources(spec: &Fileset, available: Option<u64>) -> Result<(), SetupError> {
    // The hard limit: a run raises its own limit to it before it sets up.
    let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile)
        .maximum
        .unwrap_or(u64::MAX);
    // Room for the run's other descriptors: its files, the fileset's own directory, stdio.
    if spec.dirs > limit.saturating_sub(64) {
        return Err(SetupError::Descriptors {
            fileset: spec.name.clone(),
            dirs: spec.dirs,
            limit,
        });
    }
    let files = match spec.until_bytes {
        Some(target) => (target.0 as f64 / spec.size.mean().max(1.0)).ceil() as u64,
        None => spec.files,
    };
    let need = files.saturating_mul(BYTES_PER_FILE);
    match available {
        Some(have) if need > have => Err(SetupError::Memory {
            fileset: spec.name.clone(),
            files,
            need,
            have,
        }),
        _ => Ok(()),
    }
}

/// Room for a name beneath a fileset's directory: a file's (a prefix of up to 40 bytes, 20
/// digits and a NUL), or one in a directory createdir added (the directory's prefix and number,
/// a `/`, then the file's: prefixes of [`ADDED_PREFIXES`] bytes together at most).
pub type NameBuf = [u8; NAME_LEN];

/// The length of a [`NameBuf`].
pub const NAME_LEN: usize = 64;

/// The most bytes a fileset's `dir_prefix` and `prefix` may have together for createdir to add
/// directories to it: the room a path to a file in one leaves, two numbers of up to 20 digits,
/// a `/` and a NUL taken (FFSB's prefixes have 15).
pub const ADDED_PREFIXES: usize = NAME_LEN - 42;

/// "00" to "99", so that a name's digits are written two at a time.
const DIGIT_PAIRS: [u8; 200] = {
    let mut t = [0; 200];
    let mut i = 0;
    while i < 100 {
        t[2 * i] = b'0' + (i / 10) as u8;
        t[2 * i + 1] = b'0' + (i % 10) as u8;
        i += 1;
    }
    t
};

/// A name's prefix laid out once in a [`NameBuf`], for names written on every operation's path
/// ([`FileTable::name`]): each name then starts from a copy of the whole buffer, which the
/// compiler makes a few moves, instead of a copy of the prefix's bytes.
#[derive(Debug, Clone, Copy)]
struct NameHead {
    buf: NameBuf,
    len: usize,
}

impl NameHead {
    /// None when the prefix is too long for a [`NameBuf`] or holds a NUL (a workload's
    /// prefixes are checked for both; [`file_name`] takes any).
    fn new(prefix: &str) -> Option<NameHead> {
        let len = prefix.len();
        if len > 40 || prefix.bytes().any(|b| b == 0) {
            return None;
        }
        let mut buf = [0; NAME_LEN];
        buf[..len].copy_from_slice(prefix.as_bytes());
        Some(NameHead { buf, len })
    }

    fn name<'b>(&self, id: u64, buf: &'b mut NameBuf) -> &'b CStr {
        *buf = self.buf;
        let end = put_digits(buf, self.len, id);
        // SAFETY: `buf[..=end]` ends with its only NUL: the prefix has none (`new`) and digits
        // are never one.
        unsafe { CStr::from_bytes_with_nul_unchecked(&buf[..=end]) }
    }
}

/// Writes `id`'s decimal digits at `buf[start..]` (`start` at most 44) and a NUL after them;
/// returns where the NUL is. The digits are written from the right into a scratch, two at a
/// time, then moved in one copy of fixed size, so their number need not be known first.
#[inline]
fn put_digits(buf: &mut NameBuf, start: usize, id: u64) -> usize {
    let mut tmp = [0u8; 40];
    let mut pos = 20;
    let mut n = id;
    while n >= 100 {
        let k = (n % 100) as usize * 2;
        n /= 100;
        pos -= 2;
        tmp[pos..pos + 2].copy_from_slice(&DIGIT_PAIRS[k..k + 2]);
    }
    if n >= 10 {
        let k = n as usize * 2;
        pos -= 2;
        tmp[pos..pos + 2].copy_from_slice(&DIGIT_PAIRS[k..k + 2]);
    } else {
        pos -= 1;
        tmp[pos] = b'0' + n as u8;
    }
    buf[start..start + 20].copy_from_slice(&tmp[pos..pos + 20]);
    let end = start + 20 - pos;
    buf[end] = 0;
    end
}

/// Writes `<prefix><id>` into `buf` and returns it as a C string, without allocating.
pub fn file_name<'b>(prefix: &str, id: u64, buf: &'b mut NameBuf) -> &'b CStr {
    let p = prefix.len();
    buf[..p].copy_from_slice(prefix.as_bytes());
    let end = put_digits(buf, p, id);
    CStr::from_bytes_with_nul(&buf[..=end]).expect("a prefix without NUL")
}

#[derive(Debug)]
struct Live {
    id: u64,
    size: u64,
    busy: u32,
}

#[derive(Debug, Default)]
struct Dynamic {
    live: Vec<Live>,
    pos: IdMap<usize>,
    /// The next id `order = "sequential"` looks at.
    cursor: u64,
    /// Deleted files' ids, oldest first, for creates to take again (`Fileset::reuse_names`).
    holes: std::collections::VecDeque<u64>,
}

impl Dynamic {
    fn insert(&mut self, id: u64, size: u64) {
        self.pos.insert(id, self.live.len());
        self.live.push(Live { id, size, busy: 0 });
    }

    /// The index of the next live file by id from the cursor on, starting over once after
    /// `end` (the first id not handed out yet); with `idle`, one no operation is using.
    fn next_in_order(&mut self, end: u64, idle: bool) -> Option<usize> {
        if self.live.is_empty() {
            return None;
        }
        let mut wrapped = false;
        loop {
            if self.cursor >= end {
                if wrapped {
                    return None;
                }
                self.cursor = 0;
                wrapped = true;
            }
            let id = self.cursor;
            self.cursor += 1;
            if let Some(&i) = self.pos.get(&id) {
                if !idle || self.live[i].busy == 0 {
                    return Some(i);
                }
            }
        }
    }

    /// Makes room for `more` files without growing: a growing table moves every entry it
    /// holds, which cost a create of a 100,000-file run 23 ns on average.
    fn reserve(&mut self, more: usize) {
        self.live.reserve(more);
        self.pos.reserve(more);
    }

    fn remove_at(&mut self, i: usize) -> Live {
        let gone = self.live.swap_remove(i);
        self.pos.remove(&gone.id);
        if let Some(moved) = self.live.get(i) {
            self.pos.insert(moved.id, i);
        }
        gone
    }
}

#[derive(Debug)]
enum Members {
    /// Files 0..n, always there; only their sizes change.
    Static(Vec<AtomicU64>),
    Dynamic(Mutex<Dynamic>),
}

/// A file picked for an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Picked {
    pub id: u64,
    pub size: u64,
}

#[derive(Debug)]
pub struct FileTable {
    pub spec: Fileset,
    /// The files' names when the fileset gives them (`names`), ready for the system calls;
    /// empty when files are `<prefix><id>`.
    names: Vec<CString>,
    /// The prefix of the `<prefix><id>` names, laid out for [`name`](Self::name); none when
    /// the table names no files that way (a placeholder's, or a prefix that cannot be one).
    head: Option<NameHead>,
    /// The fileset's directory; none when that is `dirs[0]` (a fileset without data
    /// directories).
    root: Option<OwnedFd>,
    /// The directories its files are spread over, file `id` in `dirs[id % len]`.
    dirs: Vec<OwnedFd>,
    meta: Option<OwnedFd>,
    members: Members,
    next_id: AtomicU64,
    /// The next file `order = "sequential"` picks in a static table.
    cursor: AtomicU64,
    made_dirs: Mutex<Vec<u64>>,
    next_dir: AtomicU64,
    /// FFSB's metaop's directories.
    meta_dirs: Mutex<MetaDirs>,
    /// The directories FFSB's createdir added, and the files put in them.
    added: AddedDirs,
    /// The files were found from an earlier run and kept as they were (`reuse`).
    kept: bool,
}

/// The directories FFSB's createdir adds to a fileset while it runs, `<dir_prefix><dirs + k>`
/// beside its data directories, and the files later creates put in them.
#[derive(Debug, Default)]
struct AddedDirs {
    /// How many there are; held while the next one is made, so that no create draws a
    /// directory that is not there yet.
    made: Mutex<u64>,
    /// `made`, for creates and lookups to read without the lock: 0 in any run without
    /// createdir, whose operations then never look further.
    count: AtomicU64,
    /// Files in one of them: the file's id, and `k`.
    placed: Mutex<IdMap<u64>>,
}

/// A random index below `len`, none when `len` is 0.
fn random_index(len: usize, rng: &mut impl Rng) -> Option<u64> {
    match len {
        0 => None,
        1 => Some(0),
        n => Some(rng.random_range(0..n) as u64),
    }
}

/// How far a run's setup has laid out its filesets' files: counters that a caller polls from
/// another thread while the run sets its filesets up (`fslab run`'s progress bar), handed to
/// the run in [`RunOptions::layout`](crate::RunOptions::layout). A fileset kept from an earlier
/// run (`reuse`) adds nothing.
#[derive(Debug, Default)]
pub struct Layout {
    /// Files to make, and bytes to write into them, as each fileset's setup learns them.
    pub planned_files: AtomicU64,
    pub planned_bytes: AtomicU64,
    /// Files made and bytes written so far.
    pub files: AtomicU64,
    pub bytes: AtomicU64,
}

impl FileTable {
    /// Makes (or, with `reuse`, keeps) the fileset beneath `run`. `dynamic` when some operation
    /// creates, deletes or renames files; `meta` when some operation makes directories.
    pub fn setup(
        run: &RunDir,
        spec: &Fileset,
        dynamic: bool,
        meta: bool,
        seed: u64,
    ) -> Result<(FileTable, SetupReport), SetupError> {
        FileTable::setup_counted(run, spec, dynamic, meta, seed, None)
    }

    /// [`setup`](Self::setup), counting the files it makes and the bytes it writes in `layout`.
    pub fn setup_counted(
        run: &RunDir,
        spec: &Fileset,
        dynamic: bool,
        meta: bool,
        seed: u64,
        layout: Option<&Layout>,
    ) -> Result<(FileTable, SetupReport), SetupError> {
        let started = Instant::now();
        let name = spec.dir_name();
        let io_err = |path: &str, error: io::Error| SetupError::Io {
            fileset: spec.name.clone(),
            path: format!("{}/{path}", run.root()),
            error,
        };
        check_resources(spec, crate::sysinfo::memory_available())?;
        let root = if spec.in_run_dir() {
            run.open_dir_self()?
        } else {
            run.open_dir_made(name, Some(spec.dir_mode()))?
        };
        // Sizes are drawn from their own generator so that a run's choices do not depend on them.
        let mut rng = rand::rngs::SmallRng::seed_from_u64(seed ^ 0x5eed_f11e);
        let sizes: Vec<u64> = match spec.until_bytes {
            Some(target) => {
                let mut sizes = Vec::new();
                let mut total = 0;
                while total < target.0 {
                    let s = spec.size.sample(&mut rng).max(1);
                    total += s;
                    sizes.push(s);
                }
                sizes
            }
            None => (0..spec.files).map(|_| spec.size.sample(&mut rng)).collect(),
        };
        let nfiles = sizes.len() as u64;
        let stamp = marker_text(spec);
        let on_disk = if spec.reuse && meta_beside_empty(run, spec) {
            matches_on_disk(&root, spec, nfiles, &stamp, run.root())?
        } else {
            None
        };
        let reused = on_disk.is_some();
        if !reused {
            if spec.meta_beside {
                clear_meta_beside(run, spec, read_marker(&root).is_some())?;
            }
            clear(&root, spec, run.root(), name)?;
        }
        // The data directories; a fileset of none keeps its files in `root` itself.
        let mut dirs = Vec::with_capacity(spec.dirs as usize);
        for k in 0..spec.dirs as usize {
            let mut b: NameBuf = [0; NAME_LEN];
            let dname = file_name(&spec.dir_prefix, k as u64, &mut b)
                .to_str()
                .expect("ascii")
                .to_string();
            match rustix::fs::mkdirat(&root, dname.as_str(), Mode::from_raw_mode(spec.dir_mode())) {
                Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                Err(e) => return Err(io_err(&format!("{name}/{dname}"), e.into())),
            }
            let fd = confine::open_beneath(root.as_fd(), &dname).map_err(|e| io_err(&format!("{name}/{dname}"), e))?;
            dirs.push(fd);
        }
        if spec.spread && !dirs.is_empty() {
            // The fileset's own directory is the last of those its files lie in.
            dirs.push(rustix::io::fcntl_dupfd_cloexec(&root, 0).map_err(|e| io_err(name, e.into()))?);
        }
        let meta = if meta || spec.meta_beside {
            let (parent, at) = if spec.meta_beside {
                (meta_parent(run, name)?, meta_beside_path(name))
            } else {
                (
                    rustix::io::fcntl_dupfd_cloexec(&root, 0).map_err(|e| io_err(name, e.into()))?,
                    format!("{name}/meta"),
                )
            };
            match rustix::fs::mkdirat(&parent, "meta", Mode::from_raw_mode(spec.dir_mode())) {
                Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                Err(e) => return Err(io_err(&at, e.into())),
            }
            Some(confine::open_beneath(parent.as_fd(), "meta").map_err(|e| io_err(&at, e))?)
        } else {
            None
        };
        let mut bytes = 0;
        if !reused {
            if let Some(l) = layout.filter(|_| !spec.made_by_workers()) {
                l.planned_files.fetch_add(nfiles, Relaxed);
                if spec.prealloc {
                    l.planned_bytes.fetch_add(sizes.iter().sum(), Relaxed);
                }
            }
            let file_dirs = if dirs.is_empty() {
                std::slice::from_ref(&root)
            } else {
                &dirs[..]
            };
            let made = Mutex::new(Vec::new());
            let in_order = InOrder::of(spec.setup_calls);
            let written = match &in_order {
                // The workers make them as they open them.
                _ if spec.made_by_workers() => Ok(0),
                None => write_files(file_dirs, spec, &sizes, layout, &made),
                Some(how) => write_files_in_order(file_dirs, spec, &sizes, how, layout, &made),
            };
            let marked = written
                .map_err(|(path, e)| io_err(&format!("{name}/{path}"), e))
                .and_then(|written| write_marker(run, spec, &root, &stamp).map(|()| written));
            if marked.is_err() {
                // No marker says these files are fslab's, so a later run would refuse them: the
                // files this setup made, and no others, are removed.
                unmake(file_dirs, spec, &made.into_inner().unwrap_or_else(|p| p.into_inner()));
            }
            bytes = marked?;
            if let SyncAfter::Filesystem = spec.setup_calls.sync_after() {
                rustix::fs::syncfs(&root).map_err(|e| io_err(name, e.into()))?;
            }
        }
        // FFSB's sync() before its benchmark, whether its files were made or kept.
        if let SyncAfter::Everything = spec.setup_calls.sync_after() {
            rustix::fs::sync();
        }
        let sizes = on_disk.unwrap_or(sizes);
        let members = if dynamic {
            let mut d = Dynamic::default();
            for (id, s) in sizes.iter().enumerate() {
                d.insert(id as u64, *s);
            }
            Members::Dynamic(Mutex::new(d))
        } else {
            Members::Static(sizes.into_iter().map(AtomicU64::new).collect())
        };
        let (root, dirs) = if dirs.is_empty() {
            (None, vec![root])
        } else {
            (Some(root), dirs)
        };
        let table = FileTable {
            spec: spec.clone(),
            names: c_names(spec),
            head: NameHead::new(&spec.prefix),
            root,
            dirs,
            meta,
            members,
            next_id: AtomicU64::new(nfiles),
            cursor: AtomicU64::new(0),
            made_dirs: Mutex::new(Vec::new()),
            next_dir: AtomicU64::new(0),
            meta_dirs: Mutex::default(),
            added: AddedDirs::default(),
            kept: reused,
        };
        let report = SetupReport {
            fileset: spec.name.clone(),
            files: nfiles,
            bytes,
            reused,
            duration: started.elapsed(),
            dirs_added: 0,
        };
        Ok((table, report))
    }

    /// Sets up fileset `k` of `workload` beneath `run` exactly as a run of it does (same seed),
    /// so that a later run with `reuse` keeps what this made.
    pub fn setup_for(
        run: &RunDir,
        workload: &Workload,
        k: usize,
        seed: u64,
    ) -> Result<(FileTable, SetupReport), SetupError> {
        FileTable::setup_for_counted(run, workload, k, seed, None)
    }

    /// [`setup_for`](Self::setup_for), counting in `layout`.
    pub fn setup_for_counted(
        run: &RunDir,
        workload: &Workload,
        k: usize,
        seed: u64,
        layout: Option<&Layout>,
    ) -> Result<(FileTable, SetupReport), SetupError> {
        let fs = &workload.filesets[k];
        let (dynamic, meta) = workload.fileset_use(&fs.name);
        let (table, report) = FileTable::setup_counted(run, fs, dynamic, meta, seed.wrapping_add(k as u64), layout)?;
        if let Members::Dynamic(d) = &table.members {
            // A run that stops after N operations creates at most N files. The memory is
            // reserved, not touched, until files fill it.
            let creates = workload
                .groups
                .iter()
                .any(|g| g.fileset.contains(&fs.name) && g.ops.iter().any(|o| o.op == OpKind::Create));
            let most = workload.stop.ops.filter(|_| creates).unwrap_or(0).min(RESERVE_AT_MOST);
            d.lock().expect("file table").reserve(most as usize);
        }
        Ok((table, report))
    }

    /// A table of no files, for a group that works without a fileset (a script group).
    pub fn placeholder(run: &RunDir) -> Result<FileTable, SetupError> {
        Ok(FileTable {
            spec: Fileset::new("none"),
            names: Vec::new(),
            head: None,
            root: None,
            dirs: vec![run.open_dir_self()?],
            meta: None,
            members: Members::Static(Vec::new()),
            next_id: AtomicU64::new(0),
            cursor: AtomicU64::new(0),
            made_dirs: Mutex::new(Vec::new()),
            next_dir: AtomicU64::new(0),
            meta_dirs: Mutex::default(),
            added: AddedDirs::default(),
            kept: false,
        })
    }

    /// Whether the files were found from an earlier run and kept as they were (`reuse`).
    pub fn kept(&self) -> bool {
        self.kept
    }

    /// The name of file `id`: one of the fileset's `names`, or `<prefix><id>` written into
    /// `buf`. Allocates nothing.
    pub fn name<'s>(&'s self, id: u64, buf: &'s mut NameBuf) -> &'s CStr {
        match (self.names.get(id as usize), &self.head) {
            (Some(name), _) => name.as_c_str(),
            (None, Some(head)) => head.name(id, buf),
            (None, None) => file_name(&self.spec.prefix, id, buf),
        }
    }

    /// File `id` as a path beneath the run directory, for messages.
    pub fn describe(&self, id: u64) -> String {
        let rel = match self.added_dir_of(id) {
            Some(k) => {
                let mut b: NameBuf = [0; NAME_LEN];
                self.added_path(k, id, &mut b).to_string_lossy().into_owned()
            }
            None => rel_path(&self.spec, id),
        };
        if self.spec.dirs == 0 && self.spec.in_run_dir() {
            rel
        } else {
            format!("{}/{rel}", self.spec.dir_name())
        }
    }

    /// Every file of a static table opened with `flags`, in order, for all the run's threads
    /// (`open = "shared"`); each file the setup wrote (`prealloc`) is fstat'ed and refused when
    /// it holds less than its size, as sysbench's run checks its files. With `map` (the mmap
    /// engine), every file is then mapped whole, in order, as sysbench's mmap mode maps its
    /// files before the run; first, when the setup did not write them, each is given its size
    /// with `ftruncate()`, as sysbench does for seqwr.
    pub(crate) fn open_every(&self, flags: OFlags, map: bool) -> Result<Vec<SharedFile>, SetupError> {
        let err = |id: u64, error: io::Error| SetupError::Io {
            fileset: self.spec.name.clone(),
            path: self.describe(id),
            error,
        };
        let mode = Mode::from_raw_mode(self.spec.file_mode());
        let mut buf: NameBuf = [0; NAME_LEN];
        let fds = (0..self.static_len())
            .map(|id| {
                let fd = rustix::fs::openat(self.dir_of(id), self.name(id, &mut buf), flags, mode)
                    .map_err(|e| err(id, e.into()))?;
                if self.spec.prealloc {
                    let (have, want) = (
                        rustix::fs::fstat(&fd).map_err(|e| err(id, e.into()))?.st_size as u64,
                        self.static_size(id),
                    );
                    if have < want {
                        return Err(err(
                            id,
                            io::Error::other(format!("holds {have} bytes, fewer than its {want}")),
                        ));
                    }
                }
                Ok(fd)
            })
            .collect::<Result<Vec<_>, _>>()?;
        if map && !self.spec.prealloc {
            for (id, fd) in (0..).zip(&fds) {
                rustix::fs::ftruncate(fd, self.static_size(id)).map_err(|e| err(id, e.into()))?;
            }
        }
        (0..)
            .zip(fds)
            .map(|(id, fd)| {
                let len = self.static_size(id);
                let map = if map && len > 0 {
                    Some(Mapping::of(fd.as_fd(), len as usize).map_err(|e| err(id, e))?)
                } else {
                    None
                };
                Ok(SharedFile { fd, map })
            })
            .collect()
    }

    pub fn is_static(&self) -> bool {
        matches!(self.members, Members::Static(_))
    }

    /// The directory file `id` lives in.
    #[inline]
    pub fn dir_of(&self, id: u64) -> BorrowedFd<'_> {
        self.dirs[self.spec.file_dir(id) as usize].as_fd()
    }

    pub fn dir(&self, k: usize) -> BorrowedFd<'_> {
        self.dirs[k % self.dirs.len()].as_fd()
    }

    pub fn dir_count(&self) -> usize {
        self.dirs.len()
    }

    pub fn root(&self) -> BorrowedFd<'_> {
        self.root.as_ref().unwrap_or(&self.dirs[0]).as_fd()
    }

    /// Files in a static table (the ids are 0..len).
    pub fn static_len(&self) -> u64 {
        match &self.members {
            Members::Static(v) => v.len() as u64,
            Members::Dynamic(_) => 0,
        }
    }

    /// The size of file `id` of a static table.
    pub fn static_size(&self, id: u64) -> u64 {
        match &self.members {
            Members::Static(v) => v[id as usize].load(Relaxed),
            Members::Dynamic(_) => 0,
        }
    }

    /// Picks a live file for an operation that keeps it (read, write, fsync...). Call
    /// [`release`](Self::release) when done.
    #[inline]
    pub fn pick(&self, rng: &mut impl Rng) -> Option<Picked> {
        match &self.members {
            Members::Static(v) => {
                let id = random_index(v.len(), rng)?;
                Some(Picked {
                    id,
                    size: v[id as usize].load(Relaxed),
                })
            }
            Members::Dynamic(m) => Self::pick_live(m, rng),
        }
    }

    /// [`pick`](Self::pick) in a dynamic table, out of line: a static table's pick (every read's
    /// and write's on files laid out before the run) is then a draw and no call.
    #[inline(never)]
    fn pick_live(m: &Mutex<Dynamic>, rng: &mut impl Rng) -> Option<Picked> {
        let mut d = m.lock().expect("file table");
        if d.live.is_empty() {
            return None;
        }
        let i = rng.random_range(0..d.live.len());
        let e = &mut d.live[i];
        e.busy += 1;
        Some(Picked { id: e.id, size: e.size })
    }

    /// Like [`pick`](Self::pick), for an operation that needs only the file's name (stat,
    /// open): a static table's size is not read. In a table of 100,000 files that read missed
    /// the cache on every stat, a third of fslab's own time per operation.
    pub fn pick_id(&self, rng: &mut impl Rng) -> Option<u64> {
        match &self.members {
            Members::Static(v) => random_index(v.len(), rng),
            Members::Dynamic(_) => self.pick(rng).map(|p| p.id),
        }
    }

    /// Like [`pick_id`](Self::pick_id), the next file in id order instead of a random one: the
    /// files in the order they were made, one cursor for the whole fileset, starting over after
    /// the newest (`order = "sequential"`).
    #[inline]
    pub fn pick_next(&self) -> Option<u64> {
        match &self.members {
            Members::Static(v) => {
                let n = v.len() as u64;
                if n == 0 {
                    return None;
                }
                // The cursor stays below n, wrapping as it passes the newest file: no division
                // on every operation's path, as `fetch_add` then `%` would need.
                let wrap = |c: u64| Some(if c + 1 >= n { 0 } else { c + 1 });
                self.cursor.fetch_update(Relaxed, Relaxed, wrap).ok()
            }
            Members::Dynamic(m) => self.pick_next_live(m),
        }
    }

    /// [`pick_next`](Self::pick_next) in a dynamic table, out of line: a static table's (every
    /// stat's in order) is then a compare-and-swap and no call.
    fn pick_next_live(&self, m: &Mutex<Dynamic>) -> Option<u64> {
        let mut d = m.lock().expect("file table");
        let i = d.next_in_order(self.next_id.load(Relaxed), false)?;
        let e = &mut d.live[i];
        e.busy += 1;
        Some(e.id)
    }

    /// Ends a [`pick`](Self::pick), recording the file's size when the operation changed it.
    #[inline]
    pub fn release(&self, id: u64, new_size: Option<u64>) {
        match &self.members {
            Members::Static(v) => {
                if let Some(s) = new_size {
                    v[id as usize].store(s, Relaxed);
                }
            }
            Members::Dynamic(m) => Self::release_live(m, id, new_size),
        }
    }

    /// [`release`](Self::release) in a dynamic table, out of line: a static table's release
    /// (every stat's and open's) is then a test and no call.
    fn release_live(m: &Mutex<Dynamic>, id: u64, new_size: Option<u64>) {
        let mut d = m.lock().expect("file table");
        if let Some(&i) = d.pos.get(&id) {
            let e = &mut d.live[i];
            e.busy -= 1;
            if let Some(s) = new_size {
                e.size = s;
            }
        }
    }

    /// Takes a file out of the table for delete or rename: one no other thread is using.
    pub fn take(&self, rng: &mut impl Rng) -> Option<Picked> {
        let Members::Dynamic(m) = &self.members else {
            return None;
        };
        let mut d = m.lock().expect("file table");
        let n = d.live.len();
        if n == 0 {
            return None;
        }
        let start = rng.random_range(0..n);
        let i = (0..n).map(|k| (start + k) % n).find(|&i| d.live[i].busy == 0)?;
        let gone = d.remove_at(i);
        Some(Picked {
            id: gone.id,
            size: gone.size,
        })
    }

    /// Like [`take`](Self::take), the oldest file no other thread is using instead of a random
    /// one (`order = "sequential"`).
    pub fn take_next(&self) -> Option<Picked> {
        let Members::Dynamic(m) = &self.members else {
            return None;
        };
        let mut d = m.lock().expect("file table");
        let i = d.next_in_order(self.next_id.load(Relaxed), true)?;
        let gone = d.remove_at(i);
        Some(Picked {
            id: gone.id,
            size: gone.size,
        })
    }

    /// Adds a file made by create or rename.
    pub fn insert(&self, id: u64, size: u64) {
        if let Members::Dynamic(m) = &self.members {
            m.lock().expect("file table").insert(id, size);
        }
    }

    /// A fresh file id, never used before in this run.
    pub fn new_id(&self) -> u64 {
        self.next_id.fetch_add(1, Relaxed)
    }

    /// The id for a create: with `reuse_names` the oldest deleted file's, when there is one,
    /// in the directory it was in; otherwise a fresh one. Once createdir has added directories,
    /// a fresh file goes into one drawn with `rng` among all the fileset's, added ones
    /// included, each as likely, as FFSB's `add_file()` draws one of `numsubdirs + 1`.
    pub fn create_id(&self, rng: &mut impl Rng) -> u64 {
        if let (true, Members::Dynamic(m)) = (self.spec.reuse_names, &self.members) {
            if let Some(id) = m.lock().expect("file table").holes.pop_front() {
                return id;
            }
        }
        let id = self.new_id();
        let added = self.added.count.load(Acquire);
        if added > 0 {
            // Below `n`, the directory file_dir(id) gives, as likely as any of the others.
            let n = self.spec.file_dir_count();
            let r = rng.random_range(0..n + added);
            if r >= n {
                self.added.placed.lock().expect("added directories").insert(id, r - n);
            }
        }
        id
    }

    /// FFSB's createdir (`add_dir()` in filelist.c): makes the next directory,
    /// `<dir_prefix><N>` in the fileset's directory, N counting on from `dirs` as FFSB numbers
    /// the directories it adds; from then on creates may put files in it. Returns N.
    pub fn add_dir(&self) -> io::Result<u64> {
        if self.spec.dir_prefix.len() + self.spec.prefix.len() > ADDED_PREFIXES || !self.names.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "createdir adds directories only to a fileset whose files are numbered and whose prefixes are {ADDED_PREFIXES} bytes together at most"
                ),
            ));
        }
        let mut made = self.added.made.lock().expect("added directories");
        let n = self.spec.dirs + *made;
        let mut b: NameBuf = [0; NAME_LEN];
        let name = file_name(&self.spec.dir_prefix, n, &mut b);
        rustix::fs::mkdirat(self.root(), name, Mode::from_raw_mode(self.spec.dir_mode()))?;
        *made += 1;
        self.added.count.store(*made, Release);
        Ok(n)
    }

    /// How many directories createdir added in this run.
    pub fn dirs_added(&self) -> u64 {
        self.added.count.load(Acquire)
    }

    /// Where file `id` is: the directory to name it from and its name there, written into
    /// `buf`. A file in a directory createdir added is named from the fileset's directory,
    /// `<dir_prefix><N>/<name>`.
    #[inline(always)]
    pub fn locate<'s>(&'s self, id: u64, buf: &'s mut NameBuf) -> (BorrowedFd<'s>, &'s CStr) {
        if self.added.count.load(Relaxed) > 0 {
            if let Some(k) = self.added_dir_of(id) {
                return (self.root(), self.added_path(k, id, buf));
            }
        }
        (self.dir_of(id), self.name(id, buf))
    }

    /// Which added directory file `id` is in, if it is in one.
    #[cold]
    #[inline(never)]
    fn added_dir_of(&self, id: u64) -> Option<u64> {
        self.added.placed.lock().expect("added directories").get(&id).copied()
    }

    /// `<dir_prefix><dirs + k>/<prefix><id>` in `buf` (it fits: [`add_dir`](Self::add_dir)).
    #[cold]
    #[inline(never)]
    fn added_path<'b>(&self, k: u64, id: u64, buf: &'b mut NameBuf) -> &'b CStr {
        let (d, p) = (self.spec.dir_prefix.as_bytes(), self.spec.prefix.as_bytes());
        buf[..d.len()].copy_from_slice(d);
        let slash = put_digits(buf, d.len(), self.spec.dirs + k);
        buf[slash] = b'/';
        buf[slash + 1..slash + 1 + p.len()].copy_from_slice(p);
        let end = put_digits(buf, slash + 1 + p.len(), id);
        CStr::from_bytes_with_nul(&buf[..=end]).expect("prefixes without a NUL")
    }

    /// File `id` is gone from the disk (deleted, or a create of it failed): with
    /// `reuse_names`, a later create takes its name again.
    pub fn gone(&self, id: u64) {
        if let (true, Members::Dynamic(m)) = (self.spec.reuse_names, &self.members) {
            m.lock().expect("file table").holes.push_back(id);
        }
    }

    pub fn live_files(&self) -> u64 {
        match &self.members {
            Members::Static(v) => v.len() as u64,
            Members::Dynamic(m) => m.lock().expect("file table").live.len() as u64,
        }
    }

    /// The directory where mkdir and rmdir work.
    pub fn meta(&self) -> Option<BorrowedFd<'_>> {
        self.meta.as_ref().map(|m| m.as_fd())
    }

    /// A fresh name for mkdir; record it with [`made_dir`](Self::made_dir) once made.
    pub fn new_dir_id(&self) -> u64 {
        self.next_dir.fetch_add(1, Relaxed)
    }

    pub fn made_dir(&self, id: u64) {
        self.made_dirs.lock().expect("dir table").push(id);
    }

    /// Takes a directory made by mkdir, for rmdir.
    pub fn take_dir(&self, rng: &mut impl Rng) -> Option<u64> {
        let mut d = self.made_dirs.lock().expect("dir table");
        if d.is_empty() {
            return None;
        }
        let i = rng.random_range(0..d.len());
        Some(d.swap_remove(i))
    }

    /// FFSB's metaop's directories, for one of its steps.
    pub(crate) fn meta_dirs(&self) -> std::sync::MutexGuard<'_, MetaDirs> {
        self.meta_dirs.lock().expect("meta directory table")
    }
}

/// Removes a fileset fslab made (sysbench's cleanup, or the end of a run with `cleanup`): only
/// the names fslab makes, and then its directory.
pub fn remove(run: &RunDir, spec: &Fileset) -> Result<(), SetupError> {
    let name = spec.dir_name();
    if !spec.names.is_empty() {
        return remove_named(run, spec);
    }
    if spec.in_run_dir() {
        return clear(&run.open_dir_self()?, spec, run.root(), name);
    }
    let root = match run.open_dir(name, false) {
        Ok(fd) => fd,
        Err(ConfineError::Io { error, .. }) if error.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    if spec.meta_beside {
        clear_meta_beside(run, spec, read_marker(&root).is_some())?;
    }
    clear(&root, spec, run.root(), name)?;
    let (parent, last) = match name.rsplit_once('/') {
        Some((p, l)) => (run.open_dir(p, false)?, l),
        None => (run.open_dir_self()?, name),
    };
    match rustix::fs::unlinkat(&parent, last, AtFlags::REMOVEDIR) {
        // A neighbour's files are still there: the directory is theirs to remove.
        Err(rustix::io::Errno::NOTEMPTY) if !spec.neighbours.is_empty() => Ok(()),
        r => r.map_err(|e| SetupError::Io {
            fileset: spec.name.clone(),
            path: format!("{}/{name}", run.root()),
            error: e.into(),
        }),
    }
}

/// What the files of `spec`, made before, were written with, as their marker records it: a run
/// that keeps prepared files (sysbench's) runs with the data they hold. None when the directory
/// holds no marker of this fileset's.
pub fn marked_data(run: &RunDir, spec: &Fileset) -> Option<Data> {
    let root = if spec.in_run_dir() {
        run.open_dir_self().ok()?
    } else {
        run.open_dir(spec.dir_name(), false).ok()?
    };
    let marker = read_marker(&root)?;
    if !marker.starts_with("fslab fileset\n") || marker_prefix(&marker) != marked_prefix(spec) {
        return None;
    }
    // marker_text writes the data only when it is not the default.
    match marker.lines().find_map(|l| l.strip_prefix("data = ")) {
        None => Some(Data::Random),
        Some(name) => Data::named(name),
    }
}

/// Whether the marker in `spec`'s directory says exactly `spec`: a setup with `reuse` would keep
/// the files it finds there, if they are as the marker says (a run's front-end checks this
/// before it starts, to say what is wrong where the setup would make the files again).
pub fn marks(run: &RunDir, spec: &Fileset) -> bool {
    let root = if spec.in_run_dir() {
        run.open_dir_self()
    } else {
        run.open_dir(spec.dir_name(), false)
    };
    root.is_ok_and(|root| marker_is(&root, &marker_text(spec)))
}

fn marker_text(spec: &Fileset) -> String {
    let size = toml::to_string(&SizeHolder {
        size: spec.size.clone(),
    })
    .unwrap_or_default();
    let prefix = marked_prefix(spec);
    let mut text = format!(
        "fslab fileset\nfiles = {}\nuntil_bytes = {:?}\ndirs = {}\nprefix = {prefix}\n{size}",
        spec.files,
        spec.until_bytes.map(|b| b.0),
        spec.dirs,
    );
    // Directories named otherwise than `d<k>` are said, so that a fileset of other directories
    // does not take them for its own; the default leaves markers as they were.
    if spec.dirs > 0 && spec.dir_prefix != "d" {
        text.push_str(&format!("dir_prefix = {}\n", spec.dir_prefix));
    }
    // Files written with other data than the default are not kept for a fileset that asks for
    // random bytes, nor the other way round.
    if spec.prealloc && spec.data != Data::Random {
        text.push_str(&format!("data = {}\n", spec.data.name()));
    }
    // A fileset with names lists them, one TOML string a line: what fslab made and may remove.
    for name in &spec.names {
        text.push_str(&toml::to_string(&NameLine { name: name.clone() }).unwrap_or_default());
    }
    text
}

/// A directory holds one fileset marker. Before a fileset in the run directory writes its own,
/// refuses to go on when the `marker` there describes another fileset whose files are still
/// there (`entries`): sysbench's `test_file.N`, say, when IOzone's files are about to be laid
/// out beside them. Replacing the marker would leave those files to no one.
fn refuse_others(marker: &str, spec: &Fileset, entries: &[String], path: &str) -> Result<(), SetupError> {
    let theirs = marker_prefix(marker);
    let ours = marked_prefix(spec);
    let other = if theirs.is_empty() {
        // A fileset with names (IOzone's -F): another such fileset clears the names it lists
        // ([`clear_named`]), a fileset of `<prefix><N>` files would orphan them.
        let named = marker_names(marker);
        let ours_named = !spec.names.is_empty();
        entries.iter().find(|e| !ours_named && named.contains(e)).cloned()
    } else if theirs != ours {
        entries.iter().find(|e| is_ours(e, theirs)).cloned()
    } else {
        None
    };
    match other {
        Some(entry) => Err(SetupError::Occupied {
            fileset: spec.name.clone(),
            path: path.to_string(),
            entry,
        }),
        None => Ok(()),
    }
}

/// The prefix `spec`'s marker says: a fileset with names made no `<prefix><N>` files, so its
/// marker must not say it did, or a fileset of that prefix in the same directory would take the
/// user's files for its own.
fn marked_prefix(spec: &Fileset) -> &str {
    if spec.names.is_empty() {
        &spec.prefix
    } else {
        ""
    }
}

/// The prefix of the files a marker says fslab made (empty for a fileset with names).
fn marker_prefix(marker: &str) -> &str {
    marker
        .lines()
        .find_map(|l| l.strip_prefix("prefix = "))
        .unwrap_or_default()
}

/// One `name = "..."` line of a marker.
#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
struct NameLine {
    name: String,
}

/// The names a marker lists (see [`marker_text`]).
fn marker_names(marker: &str) -> Vec<String> {
    marker
        .lines()
        .filter(|l| l.starts_with("name = "))
        .filter_map(|l| toml::from_str::<NameLine>(l).ok())
        .map(|l| l.name)
        .collect()
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct SizeHolder {
    size: SizeDist,
}

/// Writes the marker `stamp` in `root`, the directory of `spec`'s files.
fn write_marker(run: &RunDir, spec: &Fileset, root: &OwnedFd, stamp: &str) -> Result<(), SetupError> {
    let marker = |error| SetupError::Io {
        fileset: spec.name.clone(),
        path: format!("{}/{}/{}", run.root(), spec.dir_name(), marker::FILESET),
        error,
    };
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::TRUNC;
    let fd = confine::open_file(root.as_fd(), marker::FILESET, flags, 0o644).map_err(marker)?;
    rustix::io::write(&fd, stamp.as_bytes()).map_err(|e| marker(e.into()))?;
    Ok(())
}

fn read_marker(root: &OwnedFd) -> Option<String> {
    let fd = confine::open_file(root.as_fd(), marker::FILESET, OFlags::RDONLY, 0).ok()?;
    // A marker listing many names outgrows one read.
    let mut text = String::new();
    std::io::Read::read_to_string(&mut std::fs::File::from(fd), &mut text).ok()?;
    Some(text)
}

/// The fileset's marker says exactly `stamp`: one read, of one byte more than `stamp` (a run
/// checks the marker every time; the whole-file read of [`read_marker`] adds a stat, a seek and
/// a read at end of file to the calls it makes).
fn marker_is(root: &OwnedFd, stamp: &str) -> bool {
    let Ok(fd) = confine::open_file(root.as_fd(), marker::FILESET, OFlags::RDONLY, 0) else {
        return false;
    };
    let mut buf = vec![0u8; stamp.len() + 1];
    // A short read of a regular file is its end.
    rustix::io::read(&fd, &mut buf).is_ok_and(|n| &buf[..n] == stamp.as_bytes())
}

/// The directory that holds the fileset's directory `name`: where `meta_beside` puts `meta`.
fn meta_parent(run: &RunDir, name: &str) -> Result<OwnedFd, SetupError> {
    Ok(match name.rsplit_once('/') {
        Some((p, _)) => run.open_dir(p, false)?,
        None => run.open_dir_self()?,
    })
}

/// `meta` beside the fileset's directory `name`, relative to the run directory.
fn meta_beside_path(name: &str) -> String {
    match name.rsplit_once('/') {
        Some((p, _)) => format!("{p}/meta"),
        None => "meta".to_string(),
    }
}

/// Whether a fileset with `meta_beside` finds that directory empty or missing, as a kept
/// fileset needs it (an earlier run's metaop names would collide with this run's); true for
/// any other fileset.
fn meta_beside_empty(run: &RunDir, spec: &Fileset) -> bool {
    if !spec.meta_beside {
        return true;
    }
    let Ok(parent) = meta_parent(run, spec.dir_name()) else {
        return true;
    };
    confine::open_beneath(parent.as_fd(), "meta").map_or(true, |m| list(&m).is_ok_and(|l| l.is_empty()))
}

/// With `meta_beside`: empties the metaop directory beside the fileset's (FFSB's `L/meta`) of
/// what an earlier run's metaop or mkdir made there, checked first, and only when `marked` (the
/// fileset's own directory holds fslab's marker). Anything else there stops the run untouched;
/// the directory itself stays.
fn clear_meta_beside(run: &RunDir, spec: &Fileset, marked: bool) -> Result<(), SetupError> {
    let name = spec.dir_name();
    let at = meta_beside_path(name);
    let fail = |error: io::Error| SetupError::Io {
        fileset: spec.name.clone(),
        path: format!("{}/{at}", run.root()),
        error,
    };
    let parent = meta_parent(run, name)?;
    let meta = match confine::open_beneath(parent.as_fd(), "meta") {
        Ok(fd) => fd,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(fail(e)),
    };
    let entries = list(&meta).map_err(fail)?;
    let ours = |e: &str| is_ours(e, "m") || crate::meta_dirs::is_metaop_name(e);
    if let Some(bad) = entries.iter().find(|e| !marked || !ours(e)) {
        return Err(SetupError::Foreign {
            fileset: spec.name.clone(),
            path: format!("{}/{at}", run.root()),
            entry: bad.clone(),
        });
    }
    for e in &entries {
        rustix::fs::unlinkat(&meta, e.as_str(), AtFlags::REMOVEDIR).map_err(|err| SetupError::Io {
            fileset: spec.name.clone(),
            path: format!("{}/{at}/{e}", run.root()),
            error: err.into(),
        })?;
    }
    Ok(())
}

/// The fileset on disk was made by fslab for this very spec and every file is there at a size
/// the spec allows. A file the run would write into that has another name (a hard link planted
/// in place of fslab's) is refused: fslab made no such file. The sizes found, file by file, when
/// it does; none when the fileset must be made again.
fn matches_on_disk(
    root: &OwnedFd,
    spec: &Fileset,
    files: u64,
    stamp: &str,
    run_root: &str,
) -> Result<Option<Vec<u64>>, SetupError> {
    if !marker_is(root, stamp) {
        return Ok(None);
    }
    let (lo, hi) = (spec.size.min(), spec.size.max());
    let mut sizes = Vec::with_capacity(files as usize);
    for id in 0..files {
        let rel = rel_path(spec, id);
        match look(root.as_fd(), rel.as_str()) {
            Ok(st) if st.regular => {
                if st.links > 1 {
                    let path = if spec.in_run_dir() {
                        format!("{run_root}/{rel}")
                    } else {
                        format!("{run_root}/{}/{rel}", spec.dir_name())
                    };
                    return Err(SetupError::Linked {
                        fileset: spec.name.clone(),
                        path,
                        links: st.links,
                    });
                }
                let size = st.size;
                if size < lo || size > hi {
                    return Ok(None);
                }
                sizes.push(size);
            }
            _ => return Ok(None),
        }
    }
    if !spec.names.is_empty() {
        // Its files are fixed: no create or rename can have left others.
        return Ok(Some(sizes));
    }
    // Files that creates or renames of an earlier run left beside them would collide with the
    // names this run gives new files.
    let ours = |dir: &OwnedFd| list(dir).map(|names| names.iter().filter(|n| is_ours(n, &spec.prefix)).count() as u64);
    let mut count = 0;
    if spec.dirs == 0 || spec.spread {
        count = ours(root).unwrap_or(u64::MAX);
    }
    for k in 0..spec.dirs {
        let mut d: NameBuf = [0; NAME_LEN];
        let name = file_name(&spec.dir_prefix, k, &mut d)
            .to_str()
            .expect("ascii")
            .to_string();
        match confine::open_beneath(root.as_fd(), &name).and_then(|fd| ours(&fd)) {
            Ok(n) => count += n,
            Err(_) => return Ok(None),
        }
    }
    let meta_empty = spec.in_run_dir()
        || confine::open_beneath(root.as_fd(), "meta").map_or(true, |m| list(&m).is_ok_and(|l| l.is_empty()));
    // Directories FFSB's createdir added would collide with the ones this run adds.
    let added_dirs = list(root).is_ok_and(|names| {
        names.iter().any(|n| {
            is_ours(n, &spec.dir_prefix) && n[spec.dir_prefix.len()..].parse::<u64>().is_ok_and(|k| k >= spec.dirs)
        })
    });
    Ok((count == files && meta_empty && !added_dirs).then_some(sizes))
}

/// The name of file `id` of `spec`, for setup and cleanup (it allocates; the run itself uses
/// [`FileTable::name`]).
fn set_file_name(spec: &Fileset, id: u64) -> String {
    match spec.names.get(id as usize) {
        Some(name) => name.clone(),
        None => {
            let mut b: NameBuf = [0; NAME_LEN];
            file_name(&spec.prefix, id, &mut b).to_string_lossy().into_owned()
        }
    }
}

/// File `id`'s path relative to the fileset's directory.
fn rel_path(spec: &Fileset, id: u64) -> String {
    let name = set_file_name(spec, id);
    match spec.file_dir(id) {
        k if k == spec.dirs => name,
        k => format!("{}{k}/{name}", spec.dir_prefix),
    }
}

/// The fileset's names as C strings, once, so that the run never allocates one.
fn c_names(spec: &Fileset) -> Vec<CString> {
    spec.names
        .iter()
        .map(|n| CString::new(n.as_str()).expect("validated: a name holds no NUL"))
        .collect()
}

fn is_ours(name: &str, prefix: &str) -> bool {
    name.len() > prefix.len() && name.starts_with(prefix) && name[prefix.len()..].bytes().all(|b| b.is_ascii_digit())
}

/// Removes what an earlier run of fslab left in a fileset directory: only `d<k>/f<id>`,
/// `f<id>`, `meta/m<n>`, `meta/metafile<n>` (with its renames' `a`s) and the marker. Anything
/// else stops the run untouched.
fn clear(root: &OwnedFd, spec: &Fileset, run_root: &str, name: &str) -> Result<(), SetupError> {
    if !spec.names.is_empty() {
        return clear_named(root, spec, run_root, name);
    }
    if spec.in_run_dir() {
        return clear_in_run_dir(root, spec, run_root);
    }
    let entries = list(root).map_err(|e| SetupError::Io {
        fileset: spec.name.clone(),
        path: format!("{run_root}/{name}"),
        error: e,
    })?;
    if entries.is_empty() {
        return Ok(());
    }
    let foreign = |path: String, entry: &str| SetupError::Foreign {
        fileset: spec.name.clone(),
        path,
        entry: entry.to_string(),
    };
    if read_marker(root).is_none() {
        return Err(foreign(format!("{run_root}/{name}"), &entries[0]));
    }
    let neighbour = |e: &str| spec.neighbours.iter().any(|p| is_ours(e, p));
    // Check everything before removing anything.
    let mut plan: Vec<(String, Vec<String>)> = Vec::new();
    for e in &entries {
        if e == marker::FILESET || is_ours(e, &spec.prefix) || neighbour(e) {
            continue;
        }
        let inner_prefix = if is_ours(e, &spec.dir_prefix) {
            spec.prefix.as_str()
        } else if e == "meta" {
            "m"
        } else {
            return Err(foreign(format!("{run_root}/{name}"), e));
        };
        let sub = confine::open_beneath(root.as_fd(), e).map_err(|err| SetupError::Io {
            fileset: spec.name.clone(),
            path: format!("{run_root}/{name}/{e}"),
            error: err,
        })?;
        let inner = list(&sub).map_err(|err| SetupError::Io {
            fileset: spec.name.clone(),
            path: format!("{run_root}/{name}/{e}"),
            error: err,
        })?;
        // meta/ holds the mkdir op's m<N> and FFSB's metaop's metafile<N>(a...).
        let inner_ours = |i: &str| is_ours(i, inner_prefix) || (e == "meta" && crate::meta_dirs::is_metaop_name(i));
        if let Some(bad) = inner.iter().find(|i| !inner_ours(i)) {
            return Err(foreign(format!("{run_root}/{name}/{e}"), bad));
        }
        plan.push((e.clone(), inner));
    }
    let fail = |path: String, error: io::Error| SetupError::Io {
        fileset: spec.name.clone(),
        path,
        error,
    };
    for (dir, inner) in &plan {
        let sub = confine::open_beneath(root.as_fd(), dir).map_err(|e| fail(format!("{run_root}/{name}/{dir}"), e))?;
        let flags = if dir == "meta" {
            AtFlags::REMOVEDIR
        } else {
            AtFlags::empty()
        };
        for i in inner {
            rustix::fs::unlinkat(&sub, i.as_str(), flags)
                .map_err(|e| fail(format!("{run_root}/{name}/{dir}/{i}"), e.into()))?;
        }
    }
    // The marker stays while a neighbour's files do: they are fslab's too.
    let keep_marker = entries.iter().any(|e| neighbour(e));
    for e in &entries {
        if neighbour(e) || (keep_marker && e == marker::FILESET) {
            continue;
        }
        let flags = if is_ours(e, &spec.dir_prefix) || e == "meta" {
            AtFlags::REMOVEDIR
        } else {
            AtFlags::empty()
        };
        rustix::fs::unlinkat(root, e.as_str(), flags)
            .map_err(|err| fail(format!("{run_root}/{name}/{e}"), err.into()))?;
    }
    Ok(())
}

/// [`clear`] for a fileset in the run directory itself, where other things may lie: removes only
/// the regular files named `<prefix><N>` and the marker, and only when the marker says fslab made
/// files of this prefix there; any other entry is left alone.
fn clear_in_run_dir(root: &OwnedFd, spec: &Fileset, run_root: &str) -> Result<(), SetupError> {
    let fail = |path: &str, error: io::Error| SetupError::Io {
        fileset: spec.name.clone(),
        path: format!("{run_root}/{path}"),
        error,
    };
    let entries = list(root).map_err(|e| fail("", e))?;
    let ours: Vec<&String> = entries.iter().filter(|e| is_ours(e, &spec.prefix)).collect();
    let marker = read_marker(root);
    let marked = marker.as_deref().is_some_and(|m| marker_prefix(m) == spec.prefix);
    let foreign = |entry: &str| SetupError::Foreign {
        fileset: spec.name.clone(),
        path: run_root.to_string(),
        entry: entry.to_string(),
    };
    for name in &ours {
        let regular = look(root.as_fd(), name.as_str()).is_ok_and(|st| st.regular);
        if !marked || !regular {
            return Err(foreign(name));
        }
    }
    if let Some(m) = &marker {
        refuse_others(m, spec, &entries, run_root)?;
    }
    for name in &ours {
        rustix::fs::unlinkat(root, name.as_str(), AtFlags::empty()).map_err(|e| fail(name, e.into()))?;
    }
    if marked {
        rustix::fs::unlinkat(root, marker::FILESET, AtFlags::empty()).map_err(|e| fail(marker::FILESET, e.into()))?;
    }
    Ok(())
}

/// [`clear`] for a fileset with names, whose directory may hold anything else: first checks that
/// none of its names is taken by an entry fslab did not make (the run then stops, untouched),
/// then removes the regular files its marker says fslab made there, and the marker.
fn clear_named(root: &OwnedFd, spec: &Fileset, run_root: &str, name: &str) -> Result<(), SetupError> {
    let marker = read_marker(root);
    let made = marker.as_deref().map(marker_names).unwrap_or_default();
    let dir = if spec.in_run_dir() {
        run_root.to_string()
    } else {
        format!("{run_root}/{name}")
    };
    for n in &spec.names {
        let there = is_regular(root, n).map_err(|e| named_io(spec, &dir, n, e))?;
        let ours = made.contains(n) && there == Some(true);
        if there.is_some() && !ours {
            return Err(SetupError::Foreign {
                fileset: spec.name.clone(),
                path: dir,
                entry: n.clone(),
            });
        }
    }
    // Only a marker of prefix files can be another fileset's (another fileset with names is
    // this one's to clear): the directory is listed only then.
    if let Some(m) = marker
        .as_deref()
        .filter(|m| spec.in_run_dir() && !marker_prefix(m).is_empty())
    {
        let entries = list(root).map_err(|e| named_io(spec, &dir, "", e))?;
        refuse_others(m, spec, &entries, run_root)?;
    }
    remove_made(root, spec, &made, &dir)
}

/// [`remove`] for a fileset with names: the files fslab made (as its marker lists them) and the
/// marker go; everything else in the directory, and the directory itself, stays.
fn remove_named(run: &RunDir, spec: &Fileset) -> Result<(), SetupError> {
    let name = spec.dir_name();
    let opened = if spec.in_run_dir() {
        run.open_dir_self()
    } else {
        run.open_dir(name, false)
    };
    let root = match opened {
        Ok(fd) => fd,
        Err(ConfineError::Io { error, .. }) if error.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    let Some(marker) = read_marker(&root) else {
        return Ok(()); // fslab made nothing here
    };
    if !marker_prefix(&marker).is_empty() {
        return Ok(()); // the marker of another fileset, of `<prefix><N>` files: not ours
    }
    let dir = if spec.in_run_dir() {
        run.root().to_string()
    } else {
        format!("{}/{name}", run.root())
    };
    remove_made(&root, spec, &marker_names(&marker), &dir)
}

/// Removes the regular files among `made` (names fslab's marker lists) and the marker.
fn remove_made(root: &OwnedFd, spec: &Fileset, made: &[String], dir: &str) -> Result<(), SetupError> {
    for n in made {
        if is_regular(root, n).map_err(|e| named_io(spec, dir, n, e))? == Some(true) {
            rustix::fs::unlinkat(root, n.as_str(), AtFlags::empty()).map_err(|e| named_io(spec, dir, n, e.into()))?;
        }
    }
    match rustix::fs::unlinkat(root, marker::FILESET, AtFlags::empty()) {
        Ok(()) | Err(rustix::io::Errno::NOENT) => Ok(()),
        Err(e) => Err(named_io(spec, dir, marker::FILESET, e.into())),
    }
}

/// What fslab's own checks of an entry need: whether it is a regular file (not following a
/// symlink), its links and its size.
struct Look {
    regular: bool,
    links: u64,
    size: u64,
}

/// [`Look`]s at `name` in `dir` with a `statx()` that asks for no timestamps. A `stat()` asks for
/// them, and on a filesystem with fine-grained timestamps on demand (tmpfs, ext4, XFS, btrfs
/// since Linux 6.13) the kernel then marks the file's change time as seen, so that the next
/// write must stamp it anew: a cost inside the first timed write that the original tool, which
/// made no such check, never had (IOzone 3.487's automatic-mode rewrite of a 64 kB file on a
/// tmpfs took 0.5 to 1 µs longer, of 6 to 8, with a `stat()` added before it). Where there is
/// no `statx()`, a `stat()`.
fn look(dir: BorrowedFd<'_>, name: &str) -> rustix::io::Result<Look> {
    use rustix::fs::StatxFlags;
    let mask = StatxFlags::TYPE | StatxFlags::NLINK | StatxFlags::SIZE;
    match rustix::fs::statx(dir, name, AtFlags::SYMLINK_NOFOLLOW, mask) {
        Ok(st) => Ok(Look {
            regular: u32::from(st.stx_mode) & libc::S_IFMT == libc::S_IFREG,
            links: u64::from(st.stx_nlink),
            size: st.stx_size,
        }),
        Err(rustix::io::Errno::NOSYS) => {
            let st = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)?;
            // st_nlink and st_size are of other widths on some targets.
            #[allow(clippy::unnecessary_cast)]
            Ok(Look {
                regular: (st.st_mode & libc::S_IFMT) == libc::S_IFREG,
                links: st.st_nlink as u64,
                size: st.st_size as u64,
            })
        }
        Err(e) => Err(e),
    }
}

/// Whether `name` in `dir` is a regular file (not following a symlink); `None` when absent.
fn is_regular(dir: &OwnedFd, name: &str) -> io::Result<Option<bool>> {
    match look(dir.as_fd(), name) {
        Ok(st) => Ok(Some(st.regular)),
        Err(rustix::io::Errno::NOENT) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

fn named_io(spec: &Fileset, dir: &str, entry: &str, error: io::Error) -> SetupError {
    SetupError::Io {
        fileset: spec.name.clone(),
        path: format!("{dir}/{entry}"),
        error,
    }
}

fn list(dir: &OwnedFd) -> io::Result<Vec<String>> {
    let fd = confine::reopen_dir(dir)?;
    let mut out = Vec::new();
    for entry in rustix::fs::Dir::new(fd)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name != "." && name != ".." {
            out.push(name);
        }
    }
    out.sort();
    Ok(out)
}

/// How the files are made one at a time, in order, as an original benchmark's setup makes them.
struct InOrder {
    /// Flags beyond `O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC`, which keep fslab off files it did not
    /// make.
    flags: OFlags,
    /// The same, for a file made empty (no `prealloc`): sysbench's seqwr run makes each with
    /// `open(O_CREAT|O_EXCL)` alone (`sb_create()`), read-only and without its extra flags.
    empty_flags: OFlags,
    mode: u32,
    /// `lseek(fd, 0, SEEK_END)` before the first write (sysbench).
    seek_end: bool,
    /// Every write is a whole `setup_bs`, even past the size (sysbench); otherwise the last one
    /// is shorter (FFSB's writefile_helper()).
    whole_writes: bool,
    /// `fsync()` each file once written (sysbench).
    fsync: bool,
    /// Before each file is made, IOzone's sanity check makes it with mode 0, stats it, truncates
    /// it, closes it, stats it again and unlinks it.
    sanity: bool,
}

/// What a setup calls once every file is made.
enum SyncAfter {
    Nothing,
    /// `syncfs()` of the fileset's filesystem: fslab's own.
    Filesystem,
    /// `sync()` of every filesystem, as FFSB calls it before its benchmark: also when the
    /// files were kept from an earlier run.
    Everything,
}

impl SetupCalls {
    fn sync_after(self) -> SyncAfter {
        match self {
            SetupCalls::Parallel => SyncAfter::Filesystem,
            // sysbench fsyncs each file instead; IOzone syncs before its measurements, and
            // its front-end makes those calls.
            SetupCalls::SysbenchPrepare { .. }
            | SetupCalls::Ffsb { sync: false }
            | SetupCalls::Iozone
            | SetupCalls::IozoneSingle => SyncAfter::Nothing,
            SetupCalls::Ffsb { sync: true } => SyncAfter::Everything,
        }
    }
}

impl InOrder {
    fn of(calls: SetupCalls) -> Option<InOrder> {
        let direct = |on: bool| if on { OFlags::DIRECT } else { OFlags::empty() };
        match calls {
            SetupCalls::Parallel | SetupCalls::Iozone => None,
            SetupCalls::SysbenchPrepare { direct: d, osync } => Some(InOrder {
                flags: OFlags::WRONLY | crate::io::osync_flags(osync) | direct(d),
                empty_flags: OFlags::RDONLY,
                mode: 0o600,
                seek_end: true,
                whole_writes: true,
                fsync: true,
                sanity: false,
            }),
            SetupCalls::Ffsb { .. } => Some(InOrder {
                flags: OFlags::RDWR | OFlags::TRUNC,
                empty_flags: OFlags::RDWR | OFlags::TRUNC,
                mode: 0o700,
                seek_end: false,
                whole_writes: false,
                fsync: false,
                sanity: false,
            }),
            SetupCalls::IozoneSingle => Some(InOrder {
                flags: OFlags::WRONLY | OFlags::TRUNC,
                empty_flags: OFlags::WRONLY | OFlags::TRUNC,
                mode: 0o640,
                seek_end: false,
                whole_writes: false,
                fsync: false,
                sanity: true,
            }),
        }
    }
}

/// Creates the files one at a time, in order, as `how` says ([`SetupCalls::SysbenchPrepare`],
/// [`SetupCalls::Ffsb`], [`SetupCalls::IozoneSingle`]): each opened, written with `write()`s of
/// `setup_bs` bytes of the fileset's data until its size, and closed.
fn write_files_in_order(
    dirs: &[OwnedFd],
    spec: &Fileset,
    sizes: &[u64],
    how: &InOrder,
    layout: Option<&Layout>,
    made: &Made,
) -> Result<u64, (String, io::Error)> {
    let chunk = spec.setup_bs.map_or(1 << 20, |b| b.0) as usize;
    // Aligned, for O_DIRECT; both front-ends' filesets ask for zeros, as their buffers are
    // (sysbench's with --validate for checked blocks, each stamped as it is written). Files
    // made empty need none, and their run's caches are left as they were.
    let mut buf = spec
        .prealloc
        .then(|| crate::io::IoBuffers::with_data(chunk, 1, spec.data, 0));
    let mut total = 0;
    for (id, &size) in sizes.iter().enumerate() {
        let id = id as u64;
        let name = set_file_name(spec, id);
        let here = |e: rustix::io::Errno| (rel_path(spec, id), io::Error::from(e));
        let dir = &dirs[spec.file_dir(id) as usize];
        let safe = OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        if how.sanity {
            let fd = rustix::fs::openat(dir, name.as_str(), safe | OFlags::WRONLY, Mode::empty()).map_err(here)?;
            made_one(made, id);
            rustix::fs::statat(dir, name.as_str(), AtFlags::SYMLINK_NOFOLLOW).map_err(here)?;
            rustix::fs::ftruncate(&fd, 0).map_err(here)?;
            drop(fd);
            rustix::fs::statat(dir, name.as_str(), AtFlags::SYMLINK_NOFOLLOW).map_err(here)?;
            rustix::fs::unlinkat(dir, name.as_str(), AtFlags::empty()).map_err(here)?;
        }
        let flags = safe | if spec.prealloc { how.flags } else { how.empty_flags };
        let fd = rustix::fs::openat(dir, name.as_str(), flags, Mode::from_raw_mode(how.mode)).map_err(here)?;
        made_one(made, id);
        // Without prealloc the files start empty, as sysbench's seqwr run makes them
        // (`sb_create()`: open, close).
        let Some(buf) = buf.as_mut() else {
            if let Some(l) = layout {
                l.files.fetch_add(1, Relaxed);
            }
            continue;
        };
        let mut off = if how.seek_end {
            rustix::fs::seek(&fd, rustix::fs::SeekFrom::End(0)).map_err(here)?
        } else {
            0
        };
        while off < size {
            let len = if how.whole_writes {
                chunk
            } else {
                chunk.min((size - off) as usize)
            };
            buf.stamp(0, len, off);
            let n = rustix::io::write(&fd, buf.slot(0, len)).map_err(here)?;
            off += n as u64;
            if let Some(l) = layout {
                l.bytes.fetch_add(n as u64, Relaxed);
            }
        }
        total += size;
        if how.fsync {
            rustix::fs::fsync(&fd).map_err(here)?;
        }
        if let Some(l) = layout {
            l.files.fetch_add(1, Relaxed);
        }
    }
    Ok(total)
}

/// A set of files kept as sysbench's `prepare` keeps what it finds ([`top_up_kept`]).
#[derive(Clone, Debug, PartialEq)]
pub struct ToppedUp {
    /// Each file's size before: 0 for one that was not there (made now).
    pub before: Vec<u64>,
    /// The files' sizes now, all at least the size asked for: one size, or a range of them.
    pub size: SizeDist,
    /// What the set holds, as its marker says.
    pub data: Data,
    /// The bytes written.
    pub bytes: u64,
}

/// What sysbench's `prepare` does to the test files it finds (`create_files()`), for a set of
/// `spec`'s files fslab made before (its marker is there): file by file, in order, each opened as
/// it opens a file to write ([`SetupCalls::SysbenchPrepare`]'s flags and mode, with `O_CREAT`, to
/// which fslab adds `O_NOFOLLOW`, and `O_EXCL` for one that is not there), `lseek(SEEK_END)`,
/// whole `setup_bs` writes of the fileset's data from that end for as long as the file is shorter
/// than `least` (none when it is at least that long), `fsync()`, closed. Files of the set beyond
/// `spec.files` (an earlier prepare's, with more files) are removed, where sysbench leaves them:
/// the marker then says the set as it is, for a run to keep it.
///
/// None, having done nothing, when there is no such set to keep: no marker of this fileset's,
/// an entry among its files that is not a regular file of one link, or files to write where the
/// set holds other data than `spec`'s (sysbench would add the new data to the old; a marker says
/// one kind). The caller then sets the fileset up afresh. Nothing for another kind of setup.
pub fn top_up_kept(run: &RunDir, spec: &Fileset, least: u64) -> Result<Option<ToppedUp>, SetupError> {
    let Some(how) = InOrder::of(spec.setup_calls).filter(|h| h.seek_end && h.fsync) else {
        return Ok(None);
    };
    if spec.dirs > 0 || !spec.names.is_empty() || spec.until_bytes.is_some() {
        return Ok(None);
    }
    let Some(data) = marked_data(run, spec) else {
        return Ok(None);
    };
    let root = if spec.in_run_dir() {
        run.open_dir_self()?
    } else {
        run.open_dir(spec.dir_name(), false)?
    };
    let io = |path: &str, error: io::Error| SetupError::Io {
        fileset: spec.name.clone(),
        path: format!("{}/{path}", run.root()),
        error,
    };
    let mut before = Vec::with_capacity(spec.files as usize);
    for id in 0..spec.files {
        match look(root.as_fd(), &rel_path(spec, id)) {
            Ok(st) if st.regular && st.links == 1 => before.push(Some(st.size)),
            Err(rustix::io::Errno::NOENT) => before.push(None),
            _ => return Ok(None),
        }
    }
    let writes = before.iter().any(|b| b.is_none_or(|size| size < least));
    if writes && data != spec.data {
        return Ok(None);
    }
    let chunk = spec.setup_bs.map_or(1 << 20, |b| b.0) as usize;
    let mut buf = writes.then(|| crate::io::IoBuffers::with_data(chunk, 1, spec.data, 0));
    let made = Mutex::new(Vec::new());
    let mut bytes = 0;
    let mut sizes = Vec::with_capacity(before.len());
    let mut each = || -> Result<(), SetupError> {
        for (id, was) in before.iter().enumerate() {
            let id = id as u64;
            let rel = rel_path(spec, id);
            let here = |e: rustix::io::Errno| io(&rel, e.into());
            let new = if was.is_none() { OFlags::EXCL } else { OFlags::empty() };
            let flags = OFlags::CREATE | new | OFlags::NOFOLLOW | OFlags::CLOEXEC | how.flags;
            let fd = rustix::fs::openat(&root, rel.as_str(), flags, Mode::from_raw_mode(how.mode)).map_err(here)?;
            if was.is_none() {
                made_one(&made, id);
            }
            let mut off = rustix::fs::seek(&fd, rustix::fs::SeekFrom::End(0)).map_err(here)?;
            if let Some(buf) = buf.as_mut() {
                while off < least {
                    buf.stamp(0, chunk, off);
                    let n = rustix::io::write(&fd, buf.slot(0, chunk)).map_err(here)?;
                    off += n as u64;
                    bytes += n as u64;
                }
            }
            sizes.push(off);
            rustix::fs::fsync(&fd).map_err(here)?;
        }
        Ok(())
    };
    if let Err(e) = each() {
        // The old marker stays, and a file it does not count would be no one's.
        unmake(
            std::slice::from_ref(&root),
            spec,
            &made.into_inner().unwrap_or_else(|p| p.into_inner()),
        );
        return Err(e);
    }
    // An earlier set's files beyond these.
    let names = list(&root).map_err(|e| io(spec.dir_name(), e))?;
    for name in names.iter().filter(|n| is_ours(n, &spec.prefix)) {
        if name[spec.prefix.len()..]
            .parse::<u64>()
            .is_ok_and(|id| id >= spec.files)
        {
            rustix::fs::unlinkat(&root, name.as_str(), AtFlags::empty()).map_err(|e| io(name, e.into()))?;
        }
    }
    let size = SizeDist::spanning(sizes).unwrap_or(SizeDist::Fixed(crate::Bytes(least)));
    let kept = Fileset {
        size: size.clone(),
        data,
        ..spec.clone()
    };
    let stamp = marker_text(&kept);
    if !marker_is(&root, &stamp) {
        write_marker(run, spec, &root, &stamp)?;
    }
    Ok(Some(ToppedUp {
        before: before.into_iter().map(|b| b.unwrap_or(0)).collect(),
        size,
        data,
        bytes,
    }))
}

/// The ids of the files a setup has made so far (each opened `O_EXCL`: none was there before).
type Made = Mutex<Vec<u64>>;

fn made_one(made: &Made, id: u64) {
    made.lock().unwrap_or_else(|p| p.into_inner()).push(id);
}

/// Removes the files a failed setup made (`made`), as far as it can: the failure is the error
/// to report, not this.
fn unmake(dirs: &[OwnedFd], spec: &Fileset, made: &[u64]) {
    for &id in made {
        let dir = &dirs[spec.file_dir(id) as usize];
        let _ = rustix::fs::unlinkat(dir, set_file_name(spec, id).as_str(), AtFlags::empty());
    }
}

/// Creates the files (writing their contents when `prealloc`), spread over the machine's cores,
/// counting them in `layout` as they go.
///
/// Files with contents go to whichever thread is free next: the writes are the work. Empty
/// files, and any files when there are as many directories as threads, are shared out by
/// directory instead: a directory lets one create through at a time, so a second thread in it
/// only spins on its lock. Each directory's files are then made by one thread, in id order, as
/// a simple loop would make them. On tmpfs, a million empty files in one directory took the same
/// 2.6 s either way, but 2.3 s of CPU instead of 4.7 s; and deleting them in order (`order =
/// "sequential"`) ran 6-8% faster than after two threads had made them interleaved.
fn write_files(
    dirs: &[OwnedFd],
    spec: &Fileset,
    sizes: &[u64],
    layout: Option<&Layout>,
    made: &Made,
) -> Result<u64, (String, io::Error)> {
    let files = sizes.len() as u64;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()).min(8);
    let writes = spec.prealloc && sizes.iter().any(|&size| size > 0);
    let by_dir = !writes || dirs.len() >= cores;
    let workers = if by_dir { cores.min(dirs.len()) } else { cores }.min(sizes.len().max(1));
    let chunk = spec.setup_bs.map_or(1 << 20, |b| b.0 as usize);
    let total = AtomicU64::new(0);
    let next = AtomicU64::new(0);
    // Worker `w` makes its files: its directories' in order, or whichever is next.
    let work = |w: usize| -> Result<(), (String, io::Error)> {
        let mut ids: Box<dyn Iterator<Item = u64>> = if by_dir {
            Box::new((0..files).filter(move |&id| spec.file_dir(id) % workers as u64 == w as u64))
        } else {
            Box::new(std::iter::from_fn(|| {
                Some(next.fetch_add(1, Relaxed)).filter(|&id| id < files)
            }))
        };
        // Only files written whole need the data (1 MiB by default, filled once).
        let mut buf = spec
            .prealloc
            .then(|| crate::io::IoBuffers::with_data(chunk, 1, spec.data, 0x9e37_79b9 ^ w as u64));
        ids.try_for_each(|id| {
            let name = set_file_name(spec, id);
            let here = || rel_path(spec, id);
            let dir = &dirs[spec.file_dir(id) as usize];
            // Every file is new: clearing left none of its names, and a file that appeared
            // since (a hard link, the user's) is not fslab's to write into.
            let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            let mode = Mode::from_raw_mode(spec.file_mode());
            let fd = rustix::fs::openat(dir, name.as_str(), flags, mode).map_err(|e| (here(), e.into()))?;
            made_one(made, id);
            if let Some(buf) = buf.as_mut() {
                let size = sizes[id as usize];
                let mut off = 0u64;
                while off < size {
                    let n = (size - off).min(chunk as u64) as usize;
                    buf.stamp(0, n, off);
                    let wrote = rustix::io::pwrite(&fd, buf.slot(0, n), off).map_err(|e| (here(), e.into()))?;
                    off += wrote as u64;
                    if let Some(l) = layout {
                        l.bytes.fetch_add(wrote as u64, Relaxed);
                    }
                }
                total.fetch_add(size, Relaxed);
            }
            if let Some(l) = layout {
                l.files.fetch_add(1, Relaxed);
            }
            Ok(())
        })
    };
    // One worker makes the files on this thread: a run that sets up a small fileset before
    // each of many short measurements (IOzone's automatic mode) starts no thread for it.
    let result = if workers == 1 {
        work(0)
    } else {
        std::thread::scope(|s| {
            let work = &work;
            let handles: Vec<_> = (0..workers).map(|w| s.spawn(move || work(w))).collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("setup thread"))
                .collect::<Result<Vec<()>, _>>()
                .map(|_| ())
        })
    };
    result.map(|()| total.load(Relaxed))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `pick_next` hands out the files in id order and starts over after the newest: in a static
    /// table, every id below its length; in a dynamic one, the ids still there, skipping those
    /// gone, with each picked file marked busy until it is released.
    #[test]
    fn pick_next_goes_through_the_ids_in_order_in_either_table() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::open(dir.path()).unwrap();
        let mut t = FileTable::placeholder(&run).unwrap();
        assert_eq!(t.pick_next(), None, "an empty static table");
        t.members = Members::Static((0..3).map(|_| AtomicU64::new(0)).collect());
        let picked: Vec<_> = (0..7).map(|_| t.pick_next()).collect();
        assert_eq!(picked, [0, 1, 2, 0, 1, 2, 0].map(Some));

        let mut d = Dynamic::default();
        for id in [0, 1, 3, 4] {
            d.insert(id, 0);
        }
        t.members = Members::Dynamic(Mutex::new(d));
        t.next_id = AtomicU64::new(5);
        let picked: Vec<_> = (0..6).map(|_| t.pick_next()).collect();
        assert_eq!(picked, [0, 1, 3, 4, 0, 1].map(Some));
        let Members::Dynamic(m) = &t.members else {
            unreachable!()
        };
        let busy = |id| {
            let d = m.lock().unwrap();
            d.live[d.pos[&id]].busy
        };
        assert_eq!((busy(0), busy(3)), (2, 1));
        t.release(0, None);
        assert_eq!(busy(0), 1);
        t.members = Members::Dynamic(Mutex::default());
        assert_eq!(t.pick_next(), None, "an empty dynamic table");
    }

    /// Every way a name is written gives `<prefix><id>` in decimal: at each number of digits'
    /// edges, and a stretch where the pairs of digits take every value.
    #[test]
    fn names_are_the_prefix_and_the_id_in_decimal() {
        let edges = (0..20).flat_map(|k| {
            let p = 10u64.pow(k);
            [p - 1, p, p + 1]
        });
        let ids: Vec<u64> = edges.chain(0..20_000).chain([u64::MAX]).collect();
        for prefix in ["f", "test_file.", "a_prefix_of_forty_bytes_is_the_longest_"] {
            let head = NameHead::new(prefix).expect("a plain prefix");
            for &id in &ids {
                let want = format!("{prefix}{id}");
                let (mut a, mut b): (NameBuf, NameBuf) = ([0xff; NAME_LEN], [0xff; NAME_LEN]);
                assert_eq!(head.name(id, &mut a).to_str().unwrap(), want);
                assert_eq!(file_name(prefix, id, &mut b).to_str().unwrap(), want);
            }
        }
        assert!(NameHead::new("a\0b").is_none());
        assert!(NameHead::new(&"x".repeat(41)).is_none());
    }
}
