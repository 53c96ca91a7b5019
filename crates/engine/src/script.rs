//! Scripts: a sequence of file-system calls that each thread replays in order, from the start
//! again at the end, with a table of open handles. dbench's loadfiles compile to this; the
//! engine knows the calls, not where they came from.
//!
//! Each thread works beneath its own base directory (`base`, with `{thread}` replaced by the
//! thread's number), made when the run starts. Paths are relative to it; the directories on a
//! path are opened beneath it with openat2(RESOLVE_BENEATH) and kept open per thread, and the
//! last component is reached with an `*at` call that does not follow a symlink. The path `.` is
//! the base directory itself, for the calls that read, open, list, empty or (uselessly) make it;
//! removing or renaming it is refused.

use crate::confine;
use crate::marker;
use crate::op::OpKind;
use rustix::fs::{AtFlags, Mode, OFlags, Timestamps};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};

/// The path that names the thread's base directory itself.
pub const BASE_DIR: &str = ".";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Script {
    /// Where the script came from, for people (e.g. the loadfile's path).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub source: String,
    /// Each thread's directory beneath the run directory; `{thread}` is its number.
    pub base: String,
    /// Names the steps are counted under (dbench: NTCreateX, ReadX...).
    pub labels: Vec<String>,
    /// Sleep until each step's `at` (seconds since the start of the pass) when it has one.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub paced: bool,
    /// fsync the parent directory after unlink, rmdir and rename (dbench -S).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sync_dirs: bool,
    /// fsync after every write (dbench -F).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fsync_writes: bool,
    /// Open files with O_SYNC (dbench -s).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub osync: bool,
    #[serde(rename = "step")]
    pub steps: Vec<Step>,
}

/// (No deny_unknown_fields here: serde cannot combine it with `flatten`; the call's own fields
/// are checked by `Call`.)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Step {
    /// Index into the script's labels.
    pub label: u16,
    /// Target time of the step, seconds since the start of the pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<f64>,
    #[serde(default, skip_serializing_if = "is_ok")]
    pub expect: Expect,
    #[serde(flatten)]
    pub call: Call,
}

fn is_ok(e: &Expect) -> bool {
    *e == Expect::Ok
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The name look-up made before a call on a path, inside the same step (so its time is the
/// step's): dbench's `resolve_name`, which plays a case-insensitive server. Its outcome never
/// decides the step's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Resolve {
    /// No look-up.
    #[default]
    No,
    /// A stat of the path (dbench with --no-resolve).
    Stat,
    /// A stat of the path and, when it fails, a read of its directory looking for the name in
    /// any case (dbench's default).
    AnyCase,
}

impl Resolve {
    fn is_no(&self) -> bool {
        *self == Resolve::No
    }
}

/// What a step's outcome must be; a step that does otherwise is counted as a mismatch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Expect {
    #[default]
    Ok,
    Fail,
    Any,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "call", rename_all = "snake_case", deny_unknown_fields)]
pub enum Call {
    /// open(O_RDWR) into handle, and when that says EISDIR, open(O_RDONLY | O_DIRECTORY), as
    /// dbench's NTCreateX does; `directory`: mkdir first, then open the directory.
    Open {
        path: String,
        handle: u32,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        create: bool,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        truncate: bool,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        directory: bool,
        #[serde(default, skip_serializing_if = "Resolve::is_no")]
        resolve: Resolve,
    },
    Close {
        handle: u32,
    },
    /// pread; `len` bytes are counted, as dbench counts them, whatever the read returned.
    Read {
        handle: u32,
        offset: u64,
        len: u32,
    },
    /// pwrite; it must write `len` bytes.
    Write {
        handle: u32,
        offset: u64,
        len: u32,
    },
    Unlink {
        path: String,
        #[serde(default, skip_serializing_if = "Resolve::is_no")]
        resolve: Resolve,
    },
    Rmdir {
        path: String,
        #[serde(default, skip_serializing_if = "Resolve::is_no")]
        resolve: Resolve,
    },
    Mkdir {
        path: String,
        #[serde(default, skip_serializing_if = "Resolve::is_no")]
        resolve: Resolve,
    },
    /// With `resolve`, both names are looked up, `from` first.
    Rename {
        from: String,
        to: String,
        #[serde(default, skip_serializing_if = "Resolve::is_no")]
        resolve: Resolve,
    },
    /// Unlinks every file beneath `path`, keeping the directories.
    DeleteFiles {
        path: String,
    },
    /// stat; with `resolve = "any_case"`, a failed stat is followed by a read of the parent
    /// directory looking for the name in any case, and finding it there is success (dbench's
    /// QUERY_PATH_INFORMATION is that look-up alone).
    Stat {
        path: String,
        #[serde(default, skip_serializing_if = "Resolve::is_no")]
        resolve: Resolve,
    },
    Fstat {
        handle: u32,
    },
    /// statvfs of the thread's base directory.
    Statfs,
    /// fstat, then set atime and mtime back by 10 and 12 seconds.
    SetTimes {
        handle: u32,
    },
    /// Reads up to `max` entries of directory `path`. With `resolve`, the name `pattern` (one
    /// component, e.g. `*`) is first looked up in it, as dbench's FIND_FIRST looks up its pattern.
    List {
        path: String,
        max: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pattern: Option<String>,
        #[serde(default, skip_serializing_if = "Resolve::is_no")]
        resolve: Resolve,
    },
    /// A write lock of `len` bytes at `offset` (`len` 0: to the end of the file and beyond), an
    /// fcntl byte-range lock that waits for the range to be free, as dbench's LockX.
    Lock {
        handle: u32,
        #[serde(default, skip_serializing_if = "is_zero")]
        offset: u64,
        #[serde(default, skip_serializing_if = "is_zero")]
        len: u64,
    },
    /// Unlocks the range a Lock locked.
    Unlock {
        handle: u32,
        #[serde(default, skip_serializing_if = "is_zero")]
        offset: u64,
        #[serde(default, skip_serializing_if = "is_zero")]
        len: u64,
    },
    Fsync {
        handle: u32,
    },
}

impl Script {
    pub fn validate(&self) -> Result<(), String> {
        if !self.base.contains("{thread}") {
            return Err(format!(
                "script base `{}` must contain {{thread}}, so that each thread has its own",
                self.base
            ));
        }
        confine::check_relative(&self.base.replace("{thread}", "0"))?;
        if self.steps.is_empty() {
            return Err("the script has no steps".into());
        }
        for (i, step) in self.steps.iter().enumerate() {
            if step.label as usize >= self.labels.len() {
                return Err(format!(
                    "step {}: label {} is not among the {} labels",
                    i + 1,
                    step.label,
                    self.labels.len()
                ));
            }
            step.call.validate().map_err(|e| format!("step {}: {e}", i + 1))?;
        }
        Ok(())
    }
}

impl Call {
    /// The operation type a call counts as in the per-second series.
    pub fn kind(&self) -> OpKind {
        match self {
            Call::Open { .. } | Call::Close { .. } => OpKind::OpenClose,
            Call::Read { .. } => OpKind::Read,
            Call::Write { .. } => OpKind::Write,
            Call::Unlink { .. } | Call::DeleteFiles { .. } => OpKind::Delete,
            Call::Rmdir { .. } => OpKind::Rmdir,
            Call::Mkdir { .. } => OpKind::Mkdir,
            Call::Rename { .. } => OpKind::Rename,
            Call::List { .. } => OpKind::Readdir,
            Call::Fsync { .. } => OpKind::Fsync,
            Call::Stat { .. }
            | Call::Fstat { .. }
            | Call::Statfs
            | Call::SetTimes { .. }
            | Call::Lock { .. }
            | Call::Unlock { .. } => OpKind::Stat,
        }
    }

    pub fn paths(&self) -> Vec<&str> {
        match self {
            Call::Open { path, .. }
            | Call::Unlink { path, .. }
            | Call::Rmdir { path, .. }
            | Call::Mkdir { path, .. }
            | Call::DeleteFiles { path }
            | Call::Stat { path, .. }
            | Call::List { path, .. } => vec![path],
            Call::Rename { from, to, .. } => vec![from, to],
            _ => vec![],
        }
    }

    /// Paths stay beneath the base directory; only the calls that leave it in place may name it
    /// (`.`); a list's pattern is one name, and a list that looks one up has one.
    fn validate(&self) -> Result<(), String> {
        let removes = matches!(self, Call::Unlink { .. } | Call::Rmdir { .. } | Call::Rename { .. });
        for p in self.paths() {
            if p == BASE_DIR {
                if removes {
                    return Err(
                        "`.` (the thread's own directory) may be opened, listed, looked up, made or emptied, \
                         not removed or renamed"
                            .into(),
                    );
                }
            } else {
                confine::check_relative(p)?;
            }
        }
        if let Call::List { pattern, resolve, .. } = self {
            match pattern {
                Some(p) if p.is_empty() || p.contains('/') || p == "." || p == ".." => {
                    return Err(format!("the list pattern `{p}` must be one name, without `/`"))
                }
                None if !resolve.is_no() => return Err("a list with `resolve` needs the `pattern` it looks up".into()),
                _ => {}
            }
        }
        Ok(())
    }
}

/// One thread's replay state: its directories, its handles, its buffers.
pub struct Replayer<'s> {
    script: &'s Script,
    tree: Tree,
    handles: HashMap<u32, OwnedFd>,
    buf: Vec<u8>,
    entries: Entries,
    open_flags: OFlags,
}

/// A thread's base directory and the directories beneath it that it has opened, by path.
struct Tree {
    base: OwnedFd,
    dirs: HashMap<String, OwnedFd>,
}

impl Tree {
    /// The directory holding `path` (opened beneath the base and kept), and the last component.
    fn parent<'p>(&mut self, path: &'p str) -> io::Result<(BorrowedFd<'_>, &'p str)> {
        self.open_parent(path)?;
        Ok(self.opened_parent(path))
    }

    /// Opens the directory holding `path` beneath the base, unless it is open already.
    fn open_parent(&mut self, path: &str) -> io::Result<()> {
        if let Some((dir, _)) = split_parent(path) {
            if !self.dirs.contains_key(dir) {
                let fd = confine::open_beneath(self.base.as_fd(), dir)?;
                self.dirs.insert(dir.to_string(), fd);
            }
        }
        Ok(())
    }

    /// The directory holding `path`, opened by [`Tree::open_parent`], and the last component.
    fn opened_parent<'p>(&self, path: &'p str) -> (BorrowedFd<'_>, &'p str) {
        match split_parent(path) {
            Some((dir, name)) => (self.dirs[dir].as_fd(), name),
            None => (self.base.as_fd(), path),
        }
    }

    /// Forgets opened directories at or beneath `path` (it was removed or renamed).
    fn forget(&mut self, path: &str) {
        if !self.dirs.is_empty() {
            self.dirs
                .retain(|d, _| !(d == path || d.starts_with(path) && d.as_bytes().get(path.len()) == Some(&b'/')));
        }
    }
}

/// `path` split at its last `/` into the directory and the last component, as
/// `rsplit_once('/')` does. A plain byte search: every step of a replay calls it, and it stays
/// as cheap whatever the compiler decides to inline around it.
fn split_parent(path: &str) -> Option<(&str, &str)> {
    let at = path.bytes().rposition(|b| b == b'/')?;
    Some((&path[..at], &path[at + 1..]))
}

impl<'s> Replayer<'s> {
    pub fn new(script: &'s Script, base: OwnedFd, extra_flags: OFlags) -> Replayer<'s> {
        let mut open_flags = OFlags::RDWR | OFlags::CLOEXEC | OFlags::NOFOLLOW | extra_flags;
        if script.osync {
            open_flags |= OFlags::SYNC;
        }
        Replayer {
            script,
            tree: Tree {
                base,
                dirs: HashMap::new(),
            },
            handles: HashMap::new(),
            buf: vec![1u8; 1 << 16],
            entries: Entries::new(),
            open_flags,
        }
    }

    fn handle(&self, h: u32) -> io::Result<BorrowedFd<'_>> {
        self.handles.get(&h).map(|f| f.as_fd()).ok_or_else(|| not_open(h))
    }

    fn sync_parent(&mut self, path: &str) -> io::Result<()> {
        if self.script.sync_dirs {
            let (dir, _) = self.tree.parent(path)?;
            rustix::fs::fdatasync(dir)?;
        }
        Ok(())
    }

    /// Runs one call; returns the bytes it counts (a read's or a write's length).
    pub fn call(&mut self, call: &Call) -> io::Result<u64> {
        let none = 0;
        match call {
            Call::Open {
                path,
                handle,
                create,
                truncate,
                directory,
                resolve,
            } => {
                let mut flags = self.open_flags;
                if *create {
                    flags |= OFlags::CREATE;
                }
                if *truncate {
                    flags |= OFlags::CREATE | OFlags::TRUNC;
                }
                let (dir, name) = self.tree.parent(path)?;
                self.entries.look_up(dir, name, *resolve);
                let fd = if *directory {
                    let _ = rustix::fs::mkdirat(dir, name, Mode::from_raw_mode(0o700));
                    open_dir(dir, name)?
                } else {
                    match rustix::fs::openat(dir, name, flags, Mode::from_raw_mode(0o600)) {
                        Err(rustix::io::Errno::ISDIR) => open_dir(dir, name)?,
                        fd => fd?,
                    }
                };
                self.handles.insert(*handle, fd);
                Ok(none)
            }
            Call::Close { handle } => self
                .handles
                .remove(handle)
                .map(|_| none)
                .ok_or_else(|| not_open(*handle)),
            Call::Read { handle, offset, len } => {
                let len = *len as usize;
                if len > self.buf.len() {
                    self.buf.resize(len, 1);
                }
                let fd = self.handles.get(handle).ok_or_else(|| not_open(*handle))?;
                rustix::io::pread(fd, &mut self.buf[..len], *offset)?;
                Ok(len as u64)
            }
            Call::Write { handle, offset, len } => {
                let want = *len as usize;
                if want > self.buf.len() {
                    self.buf.resize(want, 1);
                }
                let fd = self.handles.get(handle).ok_or_else(|| not_open(*handle))?;
                let n = rustix::io::pwrite(fd, &self.buf[..want], *offset)?;
                if n != want {
                    return Err(io::Error::other(format!("wrote {n} of {want} bytes")));
                }
                if self.script.fsync_writes {
                    rustix::fs::fsync(fd)?;
                }
                Ok(want as u64)
            }
            Call::Unlink { path, resolve } => {
                let (dir, name) = self.tree.parent(path)?;
                self.entries.look_up(dir, name, *resolve);
                rustix::fs::unlinkat(dir, name, AtFlags::empty())?;
                self.sync_parent(path)?;
                Ok(none)
            }
            Call::Rmdir { path, resolve } => {
                let (dir, name) = self.tree.parent(path)?;
                self.entries.look_up(dir, name, *resolve);
                rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR)?;
                self.tree.forget(path);
                self.sync_parent(path)?;
                Ok(none)
            }
            Call::Mkdir { path, resolve } => {
                let (dir, name) = self.tree.parent(path)?;
                self.entries.look_up(dir, name, *resolve);
                rustix::fs::mkdirat(dir, name, Mode::from_raw_mode(0o777))?;
                Ok(none)
            }
            Call::Rename { from, to, resolve } => {
                self.tree.open_parent(from)?;
                self.tree.open_parent(to)?;
                let (fdir, fname) = self.tree.opened_parent(from);
                let (tdir, tname) = self.tree.opened_parent(to);
                self.entries.look_up(fdir, fname, *resolve);
                self.entries.look_up(tdir, tname, *resolve);
                rustix::fs::renameat(fdir, fname, tdir, tname)?;
                self.tree.forget(from);
                self.sync_parent(to)?;
                Ok(none)
            }
            Call::DeleteFiles { path } => {
                let (dir, name) = self.tree.parent(path)?;
                let fd = confine::open_beneath(dir, name)?;
                // The base keeps the marker that says fslab made it.
                let keep = (path == BASE_DIR).then_some(marker::SCRIPT);
                delete_files(&fd, keep)?;
                Ok(none)
            }
            Call::Stat { path, resolve } => {
                let (dir, name) = self.tree.parent(path)?;
                match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
                    Ok(_) => Ok(none),
                    Err(_) if *resolve == Resolve::AnyCase && matches!(self.entries.find(dir, name), Ok(true)) => {
                        Ok(none)
                    }
                    Err(e) => Err(e.into()),
                }
            }
            Call::Fstat { handle } => {
                rustix::fs::fstat(self.handle(*handle)?)?;
                Ok(none)
            }
            Call::Statfs => {
                rustix::fs::fstatvfs(&self.tree.base)?;
                Ok(none)
            }
            Call::SetTimes { handle } => {
                let fd = self.handle(*handle)?;
                let st = rustix::fs::fstat(fd)?;
                let ts = |sec: i64| rustix::fs::Timespec {
                    tv_sec: sec,
                    tv_nsec: 0,
                };
                let times = Timestamps {
                    last_access: ts(st.st_atime as i64 - 10),
                    last_modification: ts(st.st_mtime as i64 - 12),
                };
                rustix::fs::futimens(fd, &times)?;
                Ok(none)
            }
            Call::List {
                path,
                max,
                pattern,
                resolve,
            } => {
                let (dir, name) = self.tree.parent(path)?;
                let fd = if name == BASE_DIR {
                    confine::reopen_dir(dir)?
                } else {
                    confine::open_beneath(dir, name)?
                };
                if let Some(pattern) = pattern {
                    self.entries.look_up(fd.as_fd(), pattern, *resolve);
                }
                self.entries.read(&fd, *max as usize, |_| false)?;
                Ok(none)
            }
            Call::Lock { handle, offset, len } => {
                lock_range(self.handle(*handle)?, libc::F_WRLCK, *offset, *len)?;
                Ok(none)
            }
            Call::Unlock { handle, offset, len } => {
                lock_range(self.handle(*handle)?, libc::F_UNLCK, *offset, *len)?;
                Ok(none)
            }
            Call::Fsync { handle } => {
                rustix::fs::fsync(self.handle(*handle)?)?;
                Ok(none)
            }
        }
    }

    /// Closes every handle: the end of a pass.
    pub fn close_all(&mut self) {
        self.handles.clear();
    }
}

/// Opens directory `name` in `dir` as a handle (dbench opens directories O_RDONLY | O_DIRECTORY).
fn open_dir(dir: BorrowedFd<'_>, name: &str) -> rustix::io::Result<OwnedFd> {
    rustix::fs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC | OFlags::NOFOLLOW,
        Mode::empty(),
    )
}

/// Reads directories through one buffer per thread, as large as glibc's readdir buffer: no
/// allocation per listing or name.
struct Entries {
    buf: Vec<MaybeUninit<u8>>,
}

impl Entries {
    fn new() -> Entries {
        Entries {
            buf: vec![MaybeUninit::uninit(); 32 * 1024],
        }
    }

    /// Reads up to `max` entries of directory `fd` (opened afresh, at its start) until `stop`
    /// says so of a name: whether it did.
    fn read(&mut self, fd: &OwnedFd, max: usize, mut stop: impl FnMut(&[u8]) -> bool) -> io::Result<bool> {
        let mut dir = rustix::fs::RawDir::new(fd, &mut self.buf);
        for _ in 0..max {
            match dir.next() {
                None => break,
                Some(entry) => {
                    if stop(entry?.file_name().to_bytes()) {
                        return Ok(true);
                    }
                }
            }
        }
        Ok(false)
    }

    /// Reads directory `dir` until an entry named `name` in any case: whether there is one.
    fn find(&mut self, dir: BorrowedFd<'_>, name: &str) -> io::Result<bool> {
        let fd = confine::reopen_dir(dir)?;
        self.read(&fd, usize::MAX, |n| n.eq_ignore_ascii_case(name.as_bytes()))
    }

    /// The look-up `how` of `name` in `dir` before a call; what it finds does not matter, only
    /// the work it does.
    fn look_up(&mut self, dir: BorrowedFd<'_>, name: &str, how: Resolve) {
        if how == Resolve::No || rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW).is_ok() {
            return;
        }
        if how == Resolve::AnyCase {
            let _ = self.find(dir, name);
        }
    }
}

/// Sets (`F_WRLCK`) or clears (`F_UNLCK`) a byte-range lock, waiting for the range to be free.
/// The lock is an open file description lock: it belongs to the handle, as dbench's belong to its
/// client processes, whereas fslab's clients are threads of one process, which POSIX record locks
/// would not tell apart.
fn lock_range(fd: BorrowedFd<'_>, kind: libc::c_int, offset: u64, len: u64) -> io::Result<()> {
    let too_far = |_| io::Error::new(io::ErrorKind::InvalidInput, "lock range beyond i64");
    // SAFETY: flock is a plain C struct for which all zeroes is a valid value.
    let mut lock: libc::flock = unsafe { std::mem::zeroed() };
    lock.l_type = kind as libc::c_short;
    lock.l_whence = libc::SEEK_SET as libc::c_short;
    lock.l_start = i64::try_from(offset).map_err(too_far)?;
    lock.l_len = i64::try_from(len).map_err(too_far)?;
    // SAFETY: fd is an open descriptor for the duration of the call and `lock` is a valid flock
    // that outlives it.
    let rc = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_OFD_SETLKW, &lock) };
    if rc == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn not_open(handle: u32) -> io::Error {
    io::Error::new(io::ErrorKind::NotFound, format!("handle {handle} is not open"))
}

/// Unlinks every file beneath `dir`, keeping the directories (dbench's Deltree), and the file
/// `keep` of `dir` itself.
fn delete_files(dir: &OwnedFd, keep: Option<&str>) -> io::Result<()> {
    let mut subdirs = Vec::new();
    let mut files = Vec::new();
    for entry in rustix::fs::Dir::read_from(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name == "." || name == ".." || Some(name.as_str()) == keep {
            continue;
        }
        if entry.file_type() == rustix::fs::FileType::Directory {
            subdirs.push(name);
        } else {
            files.push(name);
        }
    }
    for f in files {
        rustix::fs::unlinkat(dir, f.as_str(), AtFlags::empty())?;
    }
    for d in subdirs {
        let fd = confine::open_beneath(dir.as_fd(), &d)?;
        delete_files(&fd, None)?;
    }
    Ok(())
}

/// Removes everything beneath `dir` and then `name` itself (a thread's base directory, made by
/// fslab for the run).
pub fn remove_tree(parent: BorrowedFd<'_>, name: &str) -> io::Result<()> {
    let fd = match confine::open_beneath(parent, name) {
        Ok(fd) => fd,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    let mut entries = Vec::new();
    for entry in rustix::fs::Dir::read_from(&fd)? {
        let entry = entry?;
        let n = entry.file_name().to_string_lossy().into_owned();
        if n != "." && n != ".." {
            entries.push((n, entry.file_type() == rustix::fs::FileType::Directory));
        }
    }
    for (n, is_dir) in entries {
        if is_dir {
            remove_tree(fd.as_fd(), &n)?;
        } else {
            rustix::fs::unlinkat(&fd, n.as_str(), AtFlags::empty())?;
        }
    }
    rustix::fs::unlinkat(parent, name, AtFlags::REMOVEDIR)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_parent_splits_as_rsplit_once_does() {
        for path in ["name", "dir/name", "a/b/c", "a/", "/a", "", "é/ü/name", "a//b"] {
            assert_eq!(split_parent(path), path.rsplit_once('/'), "{path:?}");
        }
    }
}
