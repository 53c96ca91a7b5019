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
//!
//! A script with `full_paths` names its files as dbench does instead: each call takes the whole
//! path from the working directory, `<run dir>/<base>/<path>` (`open`, `stat`, `mkdir`, `unlink`,
//! `rename` of paths, where the others use a directory descriptor and a name), following
//! symlinks as those calls do; its base directories are not made for it (the script makes them,
//! as dbench's loadfile does), a leftover base holding nothing but directories is run over, and
//! the path `..` names the base's parent (`clients`), for the calls that leave it in place, and
//! `{thread}` anywhere in a path (or a list's pattern) is the thread's number. Its
//! paths are still checked to stay beneath the base (no `..` component, nothing absolute), but
//! not against symlinks planted beneath it. Whatever the mode, writes write zeros, every open is
//! followed by an fstat of what it opened, and locks are POSIX record locks (`F_SETLKW`), as
//! dbench's.

use crate::confine;
use crate::marker;
use crate::op::OpKind;
use rustix::fs::{AtFlags, Mode, OFlags, Timestamps, CWD};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};

/// The path that names the thread's base directory itself.
pub const BASE_DIR: &str = ".";

/// The path that names the base directory's parent, in a script with `full_paths`.
pub const PARENT_DIR: &str = "..";

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
    /// Name files by their whole path from the working directory, as dbench does; the script
    /// makes its base directories itself (see the module's documentation).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub full_paths: bool,
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
    /// Sleeps `usec` microseconds, as dbench's `Sleep` (`usleep()`): no operation, so it is
    /// neither timed nor counted as one, but counted apart (`Second::sleeps`); its time passes in
    /// the run's, as in dbench's.
    Sleep {
        usec: u64,
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
            step.call
                .validate(self.full_paths)
                .map_err(|e| format!("step {}: {e}", i + 1))?;
        }
        Ok(())
    }
}

impl Script {
    /// Refuses offsets and lengths above `max` (the largest file Linux holds), naming the step.
    pub(crate) fn check_ranges(&self, max: u64) -> Result<(), String> {
        for (i, step) in self.steps.iter().enumerate() {
            let (what, end) = match step.call {
                Call::Read { offset, len, .. } | Call::Write { offset, len, .. } => {
                    ("offset", offset.checked_add(len as u64))
                }
                Call::Lock { offset, len, .. } | Call::Unlock { offset, len, .. } => ("range", offset.checked_add(len)),
                _ => continue,
            };
            if end.is_none_or(|end| end > max) {
                let label = self.labels.get(step.label as usize).map_or("", |l| l.as_str());
                return Err(format!(
                    "step {} ({label}): the {what} ends beyond {max} bytes (8 EiB, the largest file Linux holds)",
                    i + 1
                ));
            }
        }
        Ok(())
    }
}

impl Call {
    /// The operation type a call counts as in the per-second series; none for a sleep.
    pub fn kind(&self) -> Option<OpKind> {
        Some(match self {
            Call::Sleep { .. } => return None,
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
        })
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
    /// (`.`), or with `full_paths` its parent (`..`), which no call may empty; a list's pattern is
    /// one name, and a list that looks one up has one.
    fn validate(&self, full_paths: bool) -> Result<(), String> {
        let removes = matches!(self, Call::Unlink { .. } | Call::Rmdir { .. } | Call::Rename { .. });
        let pattern = match self {
            Call::List { pattern, .. } => pattern.as_deref(),
            _ => None,
        };
        if let (false, Some(p)) = (
            full_paths,
            self.paths().into_iter().chain(pattern).find(|p| p.contains(THREAD)),
        ) {
            return Err(format!(
                "`{p}`: {THREAD} in a path is the thread's number only in a script with full_paths"
            ));
        }
        for p in self.paths() {
            if p == PARENT_DIR && full_paths {
                if removes || matches!(self, Call::DeleteFiles { .. }) {
                    return Err(
                        "`..` (the parent of the thread's own directory) may be looked up, opened, listed or made, \
                         not emptied, removed or renamed"
                            .into(),
                    );
                }
            } else if p == BASE_DIR {
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

/// The largest buffer a replaying thread holds: a read or write of more (a loadfile may say up
/// to 4 GiB) is made in pieces of this size.
const MAX_CALL_BUFFER: usize = 1 << 20;

/// Where a script thread works: its base directory, opened by the run, or (for a script with
/// `full_paths`) the run directory's path and the base beneath it, which the script makes itself.
pub enum ScriptBase {
    Dir(OwnedFd),
    Path { root: String, base: String, thread: u32 },
}

/// One thread's replay state: where it works, its handles, its buffers.
pub struct Replayer<'s> {
    script: &'s Script,
    place: Place,
    handles: HashMap<u32, Handle>,
    /// What reads read into.
    buf: Vec<u8>,
    /// What writes write: zeros, as dbench writes.
    zeros: Vec<u8>,
    entries: Entries,
    open_flags: OFlags,
    dir_flags: OFlags,
}

/// An open handle, and the path it was opened by (with `full_paths`, for the calls dbench makes
/// by name on an open file).
struct Handle {
    fd: OwnedFd,
    path: String,
}

/// How a thread names its files.
enum Place {
    /// By a directory opened beneath the base and a name in it.
    Beneath(Tree),
    /// By the whole path from the working directory (`full_paths`).
    Walk(Walk),
}

/// A thread's base directory and the directories beneath it that it has opened, by path.
struct Tree {
    base: OwnedFd,
    dirs: HashMap<String, OwnedFd>,
}

/// The paths of a thread that names its files in full: `root/base/path`, built in place.
struct Walk {
    /// The run directory.
    root: String,
    /// `root/base`.
    prefix: String,
    /// The thread's number, for `{thread}` in a path.
    thread: String,
    /// The paths of the current call (two for a rename).
    a: String,
    b: String,
}

impl Walk {
    /// `path` (`.`: the base; `..`: its parent) in full, into `buf`, with `{thread}` in it
    /// replaced by `thread`.
    fn full<'b>(prefix: &str, thread: &str, path: &str, buf: &'b mut String) -> &'b str {
        buf.clear();
        match path {
            BASE_DIR => buf.push_str(prefix),
            PARENT_DIR => buf.push_str(split_parent(prefix).map_or(".", |(p, _)| p)),
            rel => {
                buf.push_str(prefix);
                buf.push('/');
                push_numbered(buf, rel, thread);
            }
        }
        buf
    }
}

/// Appends `s` to `buf` with each `{thread}` in it replaced by `thread` (dbench's `client1`
/// anywhere in a loadfile's path). Most paths have none, and cost one byte search.
fn push_numbered(buf: &mut String, s: &str, thread: &str) {
    if !s.contains('{') {
        buf.push_str(s);
        return;
    }
    let mut rest = s;
    while let Some(at) = rest.find(THREAD) {
        buf.push_str(&rest[..at]);
        buf.push_str(thread);
        rest = &rest[at + THREAD.len()..];
    }
    buf.push_str(rest);
}

/// What a path of a script with `full_paths` may hold in place of the thread's number.
pub const THREAD: &str = "{thread}";

impl Place {
    fn walks(&self) -> bool {
        matches!(self, Place::Walk(_))
    }

    /// The directory and name a call on `path` uses: beneath, the directory holding it (opened
    /// and kept) and its last component; walking, the working directory and the whole path.
    fn at<'p>(&'p mut self, path: &'p str) -> io::Result<(BorrowedFd<'p>, &'p str)> {
        match self {
            Place::Beneath(tree) => tree.parent(path),
            Place::Walk(w) => Ok((CWD, Walk::full(&w.prefix, &w.thread, path, &mut w.a))),
        }
    }

    /// [`Place::at`] for the two paths of a rename.
    #[allow(clippy::type_complexity)]
    fn at2<'p>(
        &'p mut self,
        from: &'p str,
        to: &'p str,
    ) -> io::Result<((BorrowedFd<'p>, &'p str), (BorrowedFd<'p>, &'p str))> {
        match self {
            Place::Beneath(tree) => {
                tree.open_parent(from)?;
                tree.open_parent(to)?;
                Ok((tree.opened_parent(from), tree.opened_parent(to)))
            }
            Place::Walk(w) => Ok((
                (CWD, Walk::full(&w.prefix, &w.thread, from, &mut w.a)),
                (CWD, Walk::full(&w.prefix, &w.thread, to, &mut w.b)),
            )),
        }
    }

    /// Forgets opened directories at or beneath `path` (it was removed or renamed).
    fn forget(&mut self, path: &str) {
        if let Place::Beneath(tree) = self {
            tree.forget(path);
        }
    }
}

impl Tree {
    /// The directory holding `path` (opened beneath the base and kept), and the last component.
    fn parent<'p>(&'p mut self, path: &'p str) -> io::Result<(BorrowedFd<'p>, &'p str)> {
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
    fn opened_parent<'p>(&'p self, path: &'p str) -> (BorrowedFd<'p>, &'p str) {
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
        Replayer::with_base(script, ScriptBase::Dir(base), extra_flags)
    }

    /// A replayer working in `base`; `extra_flags` (O_DIRECT, O_SYNC...) go with every open of
    /// a file.
    pub fn with_base(script: &'s Script, base: ScriptBase, extra_flags: OFlags) -> Replayer<'s> {
        let place = match base {
            ScriptBase::Dir(base) => Place::Beneath(Tree {
                base,
                dirs: HashMap::new(),
            }),
            ScriptBase::Path { root, base, thread } => Place::Walk(Walk {
                prefix: format!("{root}/{base}"),
                thread: thread.to_string(),
                root,
                a: String::new(),
                b: String::new(),
            }),
        };
        // Walking, files are opened as dbench opens them (its flags alone); beneath, no symlink
        // is followed and no descriptor outlives an exec.
        let guard = if place.walks() {
            OFlags::empty()
        } else {
            OFlags::CLOEXEC | OFlags::NOFOLLOW
        };
        let mut open_flags = OFlags::RDWR | guard | extra_flags;
        if script.osync {
            open_flags |= OFlags::SYNC;
        }
        Replayer {
            script,
            entries: Entries::new(place.walks()),
            place,
            handles: HashMap::new(),
            buf: vec![0u8; 1 << 16],
            zeros: vec![0u8; 1 << 16],
            open_flags,
            dir_flags: OFlags::RDONLY | OFlags::DIRECTORY | guard,
        }
    }

    fn handle(&self, h: u32) -> io::Result<&Handle> {
        self.handles.get(&h).ok_or_else(|| not_open(h))
    }

    /// dbench's -S: the directory holding `path` synced. Walking, it is opened by its path
    /// (O_RDONLY, as dbench opens it) and closed again.
    fn sync_parent(&mut self, path: &str) -> io::Result<()> {
        if !self.script.sync_dirs {
            return Ok(());
        }
        match &mut self.place {
            Place::Beneath(tree) => {
                let (dir, _) = tree.parent(path)?;
                rustix::fs::fdatasync(dir)?;
            }
            Place::Walk(w) => {
                let full = Walk::full(&w.prefix, &w.thread, path, &mut w.a);
                let dir = split_parent(full).map_or(".", |(d, _)| d);
                let fd = rustix::fs::openat(CWD, dir, OFlags::RDONLY, Mode::empty())?;
                rustix::fs::fdatasync(&fd)?;
            }
        }
        Ok(())
    }

    /// Runs one call; returns the bytes it counts (a read's or a write's length).
    pub fn call(&mut self, call: &Call) -> io::Result<u64> {
        self.call_expecting(call, Expect::Ok)
    }

    /// Runs one step's call, which `expect` says how it should end: an open expected to fail
    /// that succeeds is closed at once and gives no handle, as dbench's nb_createx does.
    pub fn call_expecting(&mut self, call: &Call, expect: Expect) -> io::Result<u64> {
        let none = 0;
        let walks = self.place.walks();
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
                let (dir, name) = self.place.at(path)?;
                self.entries.look_up(dir, name, *resolve);
                let mode = Mode::from_raw_mode(0o600);
                let fd = if *directory {
                    let _ = rustix::fs::mkdirat(dir, name, Mode::from_raw_mode(0o700));
                    rustix::fs::openat(dir, name, self.dir_flags, mode)?
                } else {
                    match rustix::fs::openat(dir, name, flags, mode) {
                        Err(rustix::io::Errno::ISDIR) => rustix::fs::openat(dir, name, self.dir_flags, mode)?,
                        fd => fd?,
                    }
                };
                if expect == Expect::Fail {
                    return Ok(none);
                }
                // dbench looks at what it opened.
                rustix::fs::fstat(&fd)?;
                let path = if walks { name.to_string() } else { String::new() };
                self.handles.insert(*handle, Handle { fd, path });
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
                    self.buf.resize(len.min(MAX_CALL_BUFFER), 0);
                }
                let fd = &self.handles.get(handle).ok_or_else(|| not_open(*handle))?.fd;
                // A read larger than the buffer goes in pieces, until one comes back short.
                let mut done = 0;
                while done < len {
                    let piece = (len - done).min(self.buf.len());
                    let n = rustix::io::pread(fd, &mut self.buf[..piece], offset + done as u64)?;
                    if n < piece {
                        break;
                    }
                    done += n;
                }
                Ok(len as u64)
            }
            Call::Write { handle, offset, len } => {
                let want = *len as usize;
                if want > self.zeros.len() {
                    self.zeros.resize(want.min(MAX_CALL_BUFFER), 0);
                }
                let fd = &self.handles.get(handle).ok_or_else(|| not_open(*handle))?.fd;
                let mut n = 0;
                while n < want {
                    let piece = (want - n).min(self.zeros.len());
                    let wrote = rustix::io::pwrite(fd, &self.zeros[..piece], offset + n as u64)?;
                    n += wrote;
                    if wrote < piece {
                        break;
                    }
                }
                if n != want {
                    return Err(io::Error::other(format!("wrote {n} of {want} bytes")));
                }
                if self.script.fsync_writes {
                    rustix::fs::fsync(fd)?;
                }
                Ok(want as u64)
            }
            Call::Unlink { path, resolve } => {
                let (dir, name) = self.place.at(path)?;
                self.entries.look_up(dir, name, *resolve);
                // dbench's -S syncs the directory whether or not the call worked.
                let r = rustix::fs::unlinkat(dir, name, AtFlags::empty());
                let synced = self.sync_parent(path);
                r?;
                synced?;
                Ok(none)
            }
            Call::Rmdir { path, resolve } => {
                let (dir, name) = self.place.at(path)?;
                self.entries.look_up(dir, name, *resolve);
                let r = rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR);
                if r.is_ok() {
                    self.place.forget(path);
                }
                let synced = self.sync_parent(path);
                r?;
                synced?;
                Ok(none)
            }
            Call::Mkdir { path, resolve } => {
                let (dir, name) = self.place.at(path)?;
                self.entries.look_up(dir, name, *resolve);
                rustix::fs::mkdirat(dir, name, Mode::from_raw_mode(0o777))?;
                Ok(none)
            }
            Call::Rename { from, to, resolve } => {
                let ((fdir, fname), (tdir, tname)) = self.place.at2(from, to)?;
                self.entries.look_up(fdir, fname, *resolve);
                self.entries.look_up(tdir, tname, *resolve);
                let r = rustix::fs::renameat(fdir, fname, tdir, tname);
                if r.is_ok() {
                    self.place.forget(from);
                }
                let synced = self.sync_parent(to);
                r?;
                synced?;
                Ok(none)
            }
            Call::DeleteFiles { path } => {
                match &mut self.place {
                    Place::Beneath(tree) => {
                        let (dir, name) = tree.parent(path)?;
                        let fd = confine::open_beneath(dir, name)?;
                        // The base keeps the marker that says fslab made it.
                        let keep = (path == BASE_DIR).then_some(marker::SCRIPT);
                        delete_files(&fd, keep)?;
                    }
                    Place::Walk(w) => {
                        let mut full = Walk::full(&w.prefix, &w.thread, path, &mut w.a).to_string();
                        deltree(&mut full);
                    }
                }
                Ok(none)
            }
            Call::Stat { path, resolve } => {
                let (dir, name) = self.place.at(path)?;
                match rustix::fs::statat(dir, name, self.entries.stat_flags()) {
                    Ok(_) => Ok(none),
                    Err(_) if *resolve == Resolve::AnyCase && matches!(self.entries.find(dir, name), Ok(true)) => {
                        Ok(none)
                    }
                    Err(e) => Err(e.into()),
                }
            }
            Call::Fstat { handle } => {
                rustix::fs::fstat(&self.handle(*handle)?.fd)?;
                Ok(none)
            }
            Call::Statfs => {
                match &self.place {
                    Place::Beneath(tree) => {
                        rustix::fs::fstatvfs(&tree.base)?;
                    }
                    // dbench's statvfs of the run directory (a statfs).
                    Place::Walk(w) => {
                        rustix::fs::statfs(w.root.as_str())?;
                    }
                }
                Ok(none)
            }
            Call::SetTimes { handle } => {
                let h = self.handle(*handle)?;
                let st = rustix::fs::fstat(&h.fd)?;
                let ts = |sec: i64| rustix::fs::Timespec {
                    tv_sec: sec,
                    tv_nsec: 0,
                };
                let times = Timestamps {
                    last_access: ts(st.st_atime as i64 - 10),
                    last_modification: ts(st.st_mtime as i64 - 12),
                };
                if walks {
                    // dbench's utime() of the name the handle was opened by.
                    rustix::fs::utimensat(CWD, h.path.as_str(), &times, AtFlags::empty())?;
                } else {
                    rustix::fs::futimens(&h.fd, &times)?;
                }
                Ok(none)
            }
            Call::List {
                path,
                max,
                pattern,
                resolve,
            } => {
                match &mut self.place {
                    Place::Beneath(tree) => {
                        let (dir, name) = tree.parent(path)?;
                        let fd = if name == BASE_DIR {
                            confine::reopen_dir(dir)?
                        } else {
                            confine::open_beneath(dir, name)?
                        };
                        if let Some(pattern) = pattern {
                            self.entries.look_up(fd.as_fd(), pattern, *resolve);
                        }
                        self.entries.read(&fd, *max as usize, |_| false)?;
                    }
                    Place::Walk(w) => {
                        // dbench looks the pattern up by its whole path, then lists the directory.
                        let dir = Walk::full(&w.prefix, &w.thread, path, &mut w.a);
                        if let Some(pattern) = pattern {
                            w.b.clear();
                            w.b.push_str(dir);
                            w.b.push('/');
                            push_numbered(&mut w.b, pattern, &w.thread);
                            self.entries.look_up(CWD, &w.b, *resolve);
                        }
                        let fd = open_listing(dir)?;
                        self.entries.read(&fd, *max as usize, |_| false)?;
                    }
                }
                Ok(none)
            }
            Call::Lock { handle, offset, len } => {
                lock_range(&self.handle(*handle)?.fd, libc::F_WRLCK, *offset, *len)?;
                Ok(none)
            }
            Call::Unlock { handle, offset, len } => {
                lock_range(&self.handle(*handle)?.fd, libc::F_UNLCK, *offset, *len)?;
                Ok(none)
            }
            Call::Fsync { handle } => {
                rustix::fs::fsync(&self.handle(*handle)?.fd)?;
                Ok(none)
            }
            // The replay loop sleeps in slices, watching for the run's stop
            // (`Worker::pause`); this is the whole sleep, for a caller that need not.
            Call::Sleep { usec } => {
                std::thread::sleep(std::time::Duration::from_micros(*usec));
                Ok(none)
            }
        }
    }

    /// Closes every handle: the end of a pass.
    pub fn close_all(&mut self) {
        self.handles.clear();
    }
}

/// Opens directory `path` (from the working directory) to read it, as glibc's opendir does: with
/// O_NONBLOCK, then an fstat of it.
fn open_listing(path: &str) -> io::Result<OwnedFd> {
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::DIRECTORY;
    let fd = rustix::fs::openat(CWD, path, flags, Mode::empty())?;
    rustix::fs::fstat(&fd)?;
    Ok(fd)
}

/// dbench's Deltree by whole paths (`nb_deltree`): the directory `path` read an entry at a time,
/// each entry stat'ed by its path as it comes, a file unlinked and a directory emptied the same
/// way (and kept) before the next entry is read, so that the listing goes on (its getdents as
/// its buffer empties, glibc's readdir) over what was removed, as dbench's does. `path` is
/// restored on return. Nothing it meets stops it, as nothing stops dbench's.
fn deltree(path: &mut String) {
    let Ok(fd) = open_listing(path) else { return };
    // A buffer of its own at each level, as each opendir has one: the levels below are read
    // while this one is open.
    let mut buf = vec![MaybeUninit::uninit(); 32 * 1024];
    let mut dir = rustix::fs::RawDir::new(&fd, &mut buf);
    let len = path.len();
    while let Some(Ok(entry)) = dir.next() {
        let name = entry.file_name().to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        path.push('/');
        path.push_str(&String::from_utf8_lossy(name));
        match rustix::fs::stat(path.as_str()) {
            Ok(st) if rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::Directory => {
                deltree(path)
            }
            Ok(_) => {
                let _ = rustix::fs::unlink(path.as_str());
            }
            Err(_) => {}
        }
        path.truncate(len);
    }
}

/// dbench's cleanup of one client at the end of a run, for a script with `full_paths`: the files
/// beneath `root/base` unlinked (its directories kept), then an rmdir of the base's parent, which
/// fails while any client's directory is left in it.
pub fn walk_cleanup(root: &str, base: &str) {
    let mut path = format!("{root}/{base}");
    deltree(&mut path);
    if let Some((parent, _)) = split_parent(&path) {
        let _ = rustix::fs::unlinkat(CWD, parent, AtFlags::REMOVEDIR);
    }
}

/// Reads directories through one buffer per thread, as large as glibc's readdir buffer: no
/// allocation per listing or name.
struct Entries {
    buf: Vec<MaybeUninit<u8>>,
    /// Names are whole paths from the working directory, and stats follow symlinks (dbench's
    /// stat()).
    walks: bool,
}

impl Entries {
    fn new(walks: bool) -> Entries {
        Entries {
            buf: vec![MaybeUninit::uninit(); 32 * 1024],
            walks,
        }
    }

    fn stat_flags(&self) -> AtFlags {
        if self.walks {
            AtFlags::empty()
        } else {
            AtFlags::SYMLINK_NOFOLLOW
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

    /// Reads the directory holding `name` in `dir` until an entry named as its last component
    /// in any case: whether there is one. Walking, `dir` is the working directory and `name` a
    /// whole path, whose directory is opened by its path as dbench's opendir does.
    fn find(&mut self, dir: BorrowedFd<'_>, name: &str) -> io::Result<bool> {
        let (fd, name) = if self.walks {
            let (parent, leaf) = split_parent(name).unwrap_or((BASE_DIR, name));
            (open_listing(parent)?, leaf)
        } else {
            (confine::reopen_dir(dir)?, name)
        };
        self.read(&fd, usize::MAX, |n| n.eq_ignore_ascii_case(name.as_bytes()))
    }

    /// The look-up `how` of `name` in `dir` before a call; what it finds does not matter, only
    /// the work it does.
    fn look_up(&mut self, dir: BorrowedFd<'_>, name: &str, how: Resolve) {
        if how == Resolve::No || rustix::fs::statat(dir, name, self.stat_flags()).is_ok() {
            return;
        }
        if how == Resolve::AnyCase {
            let _ = self.find(dir, name);
        }
    }
}

/// Sets (`F_WRLCK`) or clears (`F_UNLCK`) a byte-range lock, waiting for the range to be free:
/// `fcntl(F_SETLKW)`, a POSIX record lock, as dbench's LockX. Such locks belong to the process:
/// dbench's front-end makes each client a process of its own (`Workload::processes`), as dbench
/// does. Threads of one process would never block one another on them, but each script thread
/// works in its own base directory, so no two ever lock the same file either way.
fn lock_range(fd: &OwnedFd, kind: libc::c_int, offset: u64, len: u64) -> io::Result<()> {
    let too_far = |_| io::Error::new(io::ErrorKind::InvalidInput, "lock range beyond i64");
    // SAFETY: flock is a plain C struct for which all zeroes is a valid value.
    let mut lock: libc::flock = unsafe { std::mem::zeroed() };
    lock.l_type = kind as libc::c_short;
    lock.l_whence = libc::SEEK_SET as libc::c_short;
    lock.l_start = i64::try_from(offset).map_err(too_far)?;
    lock.l_len = i64::try_from(len).map_err(too_far)?;
    // SAFETY: fd is an open descriptor for the duration of the call and `lock` is a valid flock
    // that outlives it.
    let rc = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETLKW, &lock) };
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
    fn the_parent_of_the_base_is_named_only_with_full_paths_and_only_to_leave_it_in_place() {
        let mkdir = Call::Mkdir {
            path: PARENT_DIR.into(),
            resolve: Resolve::No,
        };
        assert!(mkdir.validate(true).is_ok());
        assert!(mkdir.validate(false).is_err(), "beneath the base, `..` escapes it");
        for call in [
            Call::DeleteFiles {
                path: PARENT_DIR.into(),
            },
            Call::Rmdir {
                path: PARENT_DIR.into(),
                resolve: Resolve::No,
            },
        ] {
            let e = call.validate(true).unwrap_err();
            assert!(e.contains("not emptied, removed or renamed"), "{call:?}: {e}");
        }
        assert!(Call::Unlink {
            path: "../x".into(),
            resolve: Resolve::No
        }
        .validate(true)
        .is_err());
    }

    #[test]
    fn whole_paths_are_the_run_directory_the_base_and_the_path() {
        let mut buf = String::new();
        let prefix = "/mnt/t/clients/client3";
        assert_eq!(
            Walk::full(prefix, "3", "a/b.txt", &mut buf),
            "/mnt/t/clients/client3/a/b.txt"
        );
        assert_eq!(Walk::full(prefix, "3", BASE_DIR, &mut buf), prefix);
        assert_eq!(Walk::full(prefix, "3", PARENT_DIR, &mut buf), "/mnt/t/clients");
        assert_eq!(Walk::full("./clients/client0", "0", PARENT_DIR, &mut buf), "./clients");
    }

    #[test]
    fn thread_in_a_whole_path_is_the_threads_number_each_time() {
        let mut buf = String::new();
        let prefix = "/mnt/t/clients/client12";
        assert_eq!(
            Walk::full(prefix, "12", "client{thread}.dat/x{thread}{thread}y", &mut buf),
            "/mnt/t/clients/client12/client12.dat/x1212y"
        );
        assert_eq!(
            Walk::full(prefix, "12", "{thread", &mut buf),
            "/mnt/t/clients/client12/{thread"
        );
        let list = |path: &str, pattern: &str| Call::List {
            path: path.into(),
            max: 1,
            pattern: Some(pattern.into()),
            resolve: Resolve::Stat,
        };
        assert!(list("d{thread}", "*").validate(true).is_ok());
        assert!(list("d", "f{thread}").validate(true).is_ok());
        let e = list("d{thread}", "*").validate(false).unwrap_err();
        assert!(e.contains("`d{thread}`") && e.contains("full_paths"), "{e}");
        let e = list("d", "f{thread}").validate(false).unwrap_err();
        assert!(e.contains("`f{thread}`"), "{e}");
    }

    #[test]
    fn split_parent_splits_as_rsplit_once_does() {
        for path in ["name", "dir/name", "a/b/c", "a/", "/a", "", "é/ü/name", "a//b"] {
            assert_eq!(split_parent(path), path.rsplit_once('/'), "{path:?}");
        }
    }
}
