//! Scripts: a sequence of file-system calls that each thread replays in order, from the start
//! again at the end, with a table of open handles. dbench's loadfiles compile to this; the
//! engine knows the calls, not where they came from.
//!
//! Each thread works beneath its own base directory (`base`, with `{thread}` replaced by the
//! thread's number), made when the run starts. Paths are relative to it; the directories on a
//! path are opened beneath it with openat2(RESOLVE_BENEATH) and kept open per thread, and the
//! last component is reached with an `*at` call that does not follow a symlink.

use crate::confine;
use crate::workload::OpKind;
use rustix::fs::{AtFlags, FlockOperation, Mode, OFlags, Timestamps};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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

/// What a step's outcome must be; a step that does otherwise is counted as a mismatch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Expect {
    #[default]
    Ok,
    Fail,
    Any,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "call", rename_all = "snake_case", deny_unknown_fields)]
pub enum Call {
    /// open(O_RDWR) into handle; `directory`: mkdir first, then open the directory.
    Open {
        path: String,
        handle: u32,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        create: bool,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        truncate: bool,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        directory: bool,
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
    },
    Rmdir {
        path: String,
    },
    Mkdir {
        path: String,
    },
    Rename {
        from: String,
        to: String,
    },
    /// Unlinks every file beneath `path`, keeping the directories.
    DeleteFiles {
        path: String,
    },
    /// stat; on failure with `resolve`, reads the parent directory looking for the name in any
    /// case, as dbench's name resolution does.
    Stat {
        path: String,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        resolve: bool,
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
    /// Reads up to `max` entries of directory `path`.
    List {
        path: String,
        max: u32,
    },
    Lock {
        handle: u32,
    },
    Unlock {
        handle: u32,
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
        crate::workload::check_relative(&self.base.replace("{thread}", "0"))?;
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
            for p in step.call.paths() {
                crate::workload::check_relative(p).map_err(|e| format!("step {}: {e}", i + 1))?;
            }
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
            | Call::Unlink { path }
            | Call::Rmdir { path }
            | Call::Mkdir { path }
            | Call::DeleteFiles { path }
            | Call::Stat { path, .. }
            | Call::List { path, .. } => vec![path],
            Call::Rename { from, to } => vec![from, to],
            _ => vec![],
        }
    }
}

/// One thread's replay state: its base directory, the directories it has opened, its handles.
pub struct Replayer<'s> {
    script: &'s Script,
    base: OwnedFd,
    dirs: HashMap<String, OwnedFd>,
    handles: HashMap<u32, OwnedFd>,
    buf: Vec<u8>,
    open_flags: OFlags,
}

impl<'s> Replayer<'s> {
    pub fn new(script: &'s Script, base: OwnedFd, extra_flags: OFlags) -> Replayer<'s> {
        let mut open_flags = OFlags::RDWR | OFlags::CLOEXEC | OFlags::NOFOLLOW | extra_flags;
        if script.osync {
            open_flags |= OFlags::SYNC;
        }
        Replayer {
            script,
            base,
            dirs: HashMap::new(),
            handles: HashMap::new(),
            buf: vec![1u8; 1 << 16],
            open_flags,
        }
    }

    /// The directory holding `path` (opened beneath the base and kept), and the last component.
    fn parent<'p>(&mut self, path: &'p str) -> io::Result<(BorrowedFd<'_>, &'p str)> {
        let (dir, name) = match path.rsplit_once('/') {
            Some((d, n)) => (d, n),
            None => return Ok((self.base.as_fd(), path)),
        };
        if !self.dirs.contains_key(dir) {
            let fd = confine::open_beneath(self.base.as_fd(), dir)?;
            self.dirs.insert(dir.to_string(), fd);
        }
        Ok((self.dirs[dir].as_fd(), name))
    }

    /// Forgets opened directories at or beneath `path` (it was removed or renamed).
    fn forget(&mut self, path: &str) {
        if !self.dirs.is_empty() {
            self.dirs
                .retain(|d, _| !(d == path || d.starts_with(path) && d.as_bytes().get(path.len()) == Some(&b'/')));
        }
    }

    fn handle(&self, h: u32) -> io::Result<BorrowedFd<'_>> {
        self.handles.get(&h).map(|f| f.as_fd()).ok_or_else(|| not_open(h))
    }

    fn sync_parent(&mut self, path: &str) -> io::Result<()> {
        if self.script.sync_dirs {
            let (dir, _) = self.parent(path)?;
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
            } => {
                let fd = if *directory {
                    let (dir, name) = self.parent(path)?;
                    let _ = rustix::fs::mkdirat(dir, name, Mode::from_raw_mode(0o700));
                    rustix::fs::openat(
                        dir,
                        name,
                        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC | OFlags::NOFOLLOW,
                        Mode::empty(),
                    )?
                } else {
                    let mut flags = self.open_flags;
                    if *create {
                        flags |= OFlags::CREATE;
                    }
                    if *truncate {
                        flags |= OFlags::CREATE | OFlags::TRUNC;
                    }
                    let (dir, name) = self.parent(path)?;
                    rustix::fs::openat(dir, name, flags, Mode::from_raw_mode(0o600))?
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
            Call::Unlink { path } => {
                let (dir, name) = self.parent(path)?;
                rustix::fs::unlinkat(dir, name, AtFlags::empty())?;
                self.sync_parent(path)?;
                Ok(none)
            }
            Call::Rmdir { path } => {
                let (dir, name) = self.parent(path)?;
                rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR)?;
                self.forget(path);
                self.sync_parent(path)?;
                Ok(none)
            }
            Call::Mkdir { path } => {
                let (dir, name) = self.parent(path)?;
                rustix::fs::mkdirat(dir, name, Mode::from_raw_mode(0o777))?;
                Ok(none)
            }
            Call::Rename { from, to } => {
                let (fdir, fname) = self.parent(from)?;
                let fdir = fdir.try_clone_to_owned()?;
                let (tdir, tname) = self.parent(to)?;
                rustix::fs::renameat(&fdir, fname, tdir, tname)?;
                self.forget(from);
                self.sync_parent(to)?;
                Ok(none)
            }
            Call::DeleteFiles { path } => {
                let (dir, name) = self.parent(path)?;
                let fd = confine::open_beneath(dir, name)?;
                delete_files(&fd)?;
                Ok(none)
            }
            Call::Stat { path, resolve } => {
                let (dir, name) = self.parent(path)?;
                match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
                    Ok(_) => Ok(none),
                    Err(e) => {
                        if *resolve {
                            // Look for the name in any case, as a case-insensitive server would.
                            let fd = confine::reopen_dir(dir)?;
                            for entry in rustix::fs::Dir::new(fd)? {
                                let entry = entry?;
                                if entry.file_name().to_bytes().eq_ignore_ascii_case(name.as_bytes()) {
                                    return Ok(none);
                                }
                            }
                        }
                        Err(e.into())
                    }
                }
            }
            Call::Fstat { handle } => {
                rustix::fs::fstat(self.handle(*handle)?)?;
                Ok(none)
            }
            Call::Statfs => {
                rustix::fs::fstatvfs(&self.base)?;
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
            Call::List { path, max } => {
                let (dir, name) = self.parent(path)?;
                let fd = if name.is_empty() || name == "." {
                    confine::reopen_dir(dir)?
                } else {
                    confine::open_beneath(dir, name)?
                };
                for (n, entry) in rustix::fs::Dir::new(fd)?.enumerate() {
                    entry?;
                    if n + 1 >= *max as usize {
                        break;
                    }
                }
                Ok(none)
            }
            Call::Lock { handle } => {
                rustix::fs::flock(self.handle(*handle)?, FlockOperation::LockExclusive)?;
                Ok(none)
            }
            Call::Unlock { handle } => {
                rustix::fs::flock(self.handle(*handle)?, FlockOperation::Unlock)?;
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

fn not_open(handle: u32) -> io::Error {
    io::Error::new(io::ErrorKind::NotFound, format!("handle {handle} is not open"))
}

/// Unlinks every file beneath `dir`, keeping the directories (dbench's Deltree).
fn delete_files(dir: &OwnedFd) -> io::Result<()> {
    let mut subdirs = Vec::new();
    let mut files = Vec::new();
    for entry in rustix::fs::Dir::read_from(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name == "." || name == ".." {
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
        delete_files(&fd)?;
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
