//! Writing a [`Tree`] into one directory, confined to it.
//!
//! Every directory is opened one name at a time with `O_NOFOLLOW` from the extraction directory's
//! descriptor, and every file, symlink and hard link is made with an `*at` call on one name in
//! such a directory, so nothing can lead out of it: not `..` (refused when the tree was built),
//! not a symlink the tree made, not one planted beforehand. Files are created with `O_EXCL`; a
//! name that exists is unlinked first (the last member wins, as with tar), so a symlink in its
//! place is replaced, never written through.
//!
//! Directories are made 0755 whatever the archive says (a read-only directory would stop the
//! extraction), files keep their permission bits; owners and times are not restored.

use super::gauge::{Gauge, BLOCK};
use super::tree::{DirId, Entry, Extent, Tree, ROOT};
use rustix::fs::{AtFlags, Mode, OFlags};
use rustix::io::Errno;
use std::ffi::OsStr;
use std::io::{self, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};

/// What one extraction wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Extracted {
    pub files: u64,
    /// Directories made (ones that existed already are not counted).
    pub dirs: u64,
    pub links: u64,
    pub bytes: u64,
    /// False when the gauge stopped the extraction before its end.
    pub complete: bool,
}

/// Why an extraction failed: the path (relative to the extraction directory) and the error.
#[derive(Debug)]
pub(crate) struct Failed {
    pub path: PathBuf,
    pub error: io::Error,
}

/// Writes `tree` into the directory `into`, stopping early when `gauge` says so. A failure names
/// the path below `into`.
pub(crate) fn extract(tree: &Tree, into: OwnedFd, gauge: Option<&Gauge>) -> Result<Extracted, Failed> {
    let mut x = Extraction {
        tree,
        gauge,
        stack: vec![(ROOT, into)],
        done: Extracted::default(),
    };
    for entry in &tree.entries {
        if gauge.is_some_and(Gauge::stopped) {
            return Ok(x.done);
        }
        x.entry(entry)?;
    }
    x.done.complete = true;
    Ok(x.done)
}

struct Extraction<'t> {
    tree: &'t Tree,
    gauge: Option<&'t Gauge>,
    /// The open directories from the extraction directory down to the current one.
    stack: Vec<(DirId, OwnedFd)>,
    done: Extracted,
}

impl Extraction<'_> {
    fn entry(&mut self, entry: &Entry) -> Result<(), Failed> {
        let tree = self.tree;
        match entry {
            Entry::Dir(d) => {
                let at = |e| fail(tree.dir_path(*d), e);
                self.enter(*d).map_err(at)?;
                self.count(BLOCK).map_err(at)
            }
            Entry::File { dir, name, mode, data } => {
                let at = |e| fail(tree.dir_path(*dir).join(name), e);
                let fd = self.enter(*dir).map_err(at)?;
                let file = create(fd, name, *mode).map_err(at)?;
                self.done.files += 1;
                self.write(file, *data).map_err(at)
            }
            Entry::Symlink { dir, name, target } => {
                let at = |e| fail(tree.dir_path(*dir).join(name), e);
                let fd = self.enter(*dir).map_err(at)?;
                replacing(fd, name, |fd| rustix::fs::symlinkat(target, fd, name)).map_err(at)?;
                self.done.links += 1;
                Ok(())
            }
            Entry::HardLink {
                dir,
                name,
                target_dir,
                target_name,
            } => {
                let at = |e| fail(tree.dir_path(*dir).join(name), e);
                let from = self.open_existing(*target_dir).map_err(at)?;
                let fd = self.enter(*dir).map_err(at)?;
                replacing(fd, name, |fd| {
                    rustix::fs::linkat(&from, target_name, fd, name, AtFlags::empty())
                })
                .map_err(at)?;
                self.done.links += 1;
                Ok(())
            }
        }
    }

    /// Writes a file's bytes a step at a time, looking at the stop flag before each step; a file
    /// the gauge stops is left short.
    fn write(&mut self, mut file: std::fs::File, data: Extent) -> Result<(), io::Error> {
        let step = self.gauge.map_or(1 << 20, Gauge::step);
        for slice in self.tree.slices(data, step) {
            if self.gauge.is_some_and(Gauge::stopped) {
                return Ok(());
            }
            file.write_all(slice)?;
            self.done.bytes += slice.len() as u64;
            self.count(slice.len() as u64)?;
        }
        // A small file still takes a block.
        self.count(BLOCK.saturating_sub(data.len))
    }

    fn count(&mut self, bytes: u64) -> io::Result<()> {
        match self.gauge {
            Some(g) if bytes > 0 => g.add(bytes),
            _ => Ok(()),
        }
    }

    /// Makes the stack end at directory `d`, making the directories on the way, and returns it.
    fn enter(&mut self, d: DirId) -> io::Result<BorrowedFd<'_>> {
        if self.stack.last().map(|s| s.0) != Some(d) {
            let chain = self.tree.chain(d);
            let keep = chain
                .iter()
                .zip(&self.stack[1..])
                .take_while(|(want, have)| **want == have.0)
                .count();
            self.stack.truncate(keep + 1);
            for &id in &chain[keep..] {
                let name = &self.tree.dirs[id as usize].name;
                let parent = &self.stack.last().expect("the extraction directory").1;
                if make_dir(parent.as_fd(), name)? {
                    self.done.dirs += 1;
                }
                let fd = open_dir(parent.as_fd(), name)?;
                self.stack.push((id, fd));
            }
        }
        Ok(self.stack.last().expect("the extraction directory").1.as_fd())
    }

    /// Opens directory `d`, which an earlier entry made, from the extraction directory.
    fn open_existing(&self, d: DirId) -> io::Result<OwnedFd> {
        let mut fd = open_dir(self.stack[0].1.as_fd(), OsStr::new("."))?;
        for id in self.tree.chain(d) {
            fd = open_dir(fd.as_fd(), &self.tree.dirs[id as usize].name)?;
        }
        Ok(fd)
    }
}

/// Opens (and with `create`, makes) the directories `names` beneath `root`, one name at a time,
/// never through a symlink.
pub(crate) fn open_dirs(root: BorrowedFd<'_>, names: &[&OsStr], create: bool) -> io::Result<OwnedFd> {
    let mut fd = open_dir(root, OsStr::new("."))?;
    for name in names {
        if create {
            make_dir(fd.as_fd(), name)?;
        }
        fd = open_dir(fd.as_fd(), name)?;
    }
    Ok(fd)
}

/// Makes directory `name`; false if it was there already.
fn make_dir(parent: BorrowedFd<'_>, name: &OsStr) -> io::Result<bool> {
    match rustix::fs::mkdirat(parent, name, Mode::from_raw_mode(0o755)) {
        Ok(()) => Ok(true),
        Err(Errno::EXIST) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

fn open_dir(parent: BorrowedFd<'_>, name: &OsStr) -> io::Result<OwnedFd> {
    let flags = OFlags::DIRECTORY | OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    rustix::fs::openat(parent, name, flags, Mode::empty()).map_err(|e| match e {
        Errno::LOOP | Errno::NOTDIR => io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "`{}` is a symlink or not a directory; fslab never writes through a symlink",
                name.to_string_lossy()
            ),
        ),
        e => e.into(),
    })
}

fn create(dir: BorrowedFd<'_>, name: &OsStr, mode: u32) -> io::Result<std::fs::File> {
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = replacing(dir, name, |dir| {
        rustix::fs::openat(dir, name, flags, Mode::from_raw_mode(mode & 0o777))
    })?;
    Ok(std::fs::File::from(fd))
}

/// Runs `make`; if the name exists, unlinks it (never a directory) and runs `make` again.
fn replacing<T>(
    dir: BorrowedFd<'_>,
    name: &OsStr,
    make: impl Fn(BorrowedFd<'_>) -> rustix::io::Result<T>,
) -> io::Result<T> {
    match make(dir) {
        Err(Errno::EXIST) => {
            rustix::fs::unlinkat(dir, name, AtFlags::empty())?;
            Ok(make(dir)?)
        }
        r => Ok(r?),
    }
}

fn fail(path: PathBuf, error: io::Error) -> Failed {
    Failed { path, error }
}

/// `path` below `into`, for messages.
pub(crate) fn shown(into: &Path, f: &Failed) -> String {
    into.join(&f.path).display().to_string()
}
