//! Keeping every path beneath the run directory.
//!
//! A path a workload names is first checked by [`check_relative`]: relative, with no `..` or `.`.
//! Directories are opened with `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)` relative to the
//! run directory, so neither `..` nor a symlink can lead out of it. Files are then reached only by
//! `*at` calls on one path component with `O_NOFOLLOW`, so a planted symlink in place of a file is
//! refused too.
//!
//! The run directory itself (and a fileset's `root`) must be a real directory: a path that is, or
//! passes through, a symlink is refused by [`RunDir::open`], naming its target. Front-ends resolve
//! the directory the user names once with [`resolve_dir`], say where they will run, and pass the
//! real path on, so that a symlink swapped in later is not followed either.

use rustix::fs::{Mode, OFlags, ResolveFlags};
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;

/// Why a path was refused or could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum ConfineError {
    #[error("`{path}` leads out of the run directory {root} (through `..`, an absolute path or a symlink); refused")]
    Escapes { root: String, path: String },
    #[error("cannot open the run directory {root}: {error}")]
    RunDir { root: String, error: io::Error },
    #[error("the run directory {root} is (or passes through) a symlink{target}; fslab runs only in a real directory: name it")]
    Symlink { root: String, target: String },
    #[error("`{path}` under {root}: {error}")]
    Io {
        root: String,
        path: String,
        error: io::Error,
    },
}

/// The run directory, opened once; every other path is resolved beneath it.
#[derive(Debug)]
pub struct RunDir {
    fd: OwnedFd,
    root: String,
}

impl RunDir {
    /// Opens the run directory `root`, refusing a path that is or passes through a symlink
    /// ([`resolve_dir`] gives the real path to name instead).
    pub fn open(root: &Path) -> Result<RunDir, ConfineError> {
        let flags = OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC;
        let opened = match rustix::fs::openat2(
            rustix::fs::CWD,
            root,
            flags,
            Mode::empty(),
            ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS,
        ) {
            // Kernels before 5.6 lack openat2: compare the path with its resolution instead.
            Err(rustix::io::Errno::NOSYS) => match resolve_dir(root) {
                Ok((_, Some(_))) => Err(rustix::io::Errno::LOOP),
                _ => rustix::fs::open(root, flags, Mode::empty()),
            },
            other => other,
        };
        let fd = opened.map_err(|e| match e {
            rustix::io::Errno::LOOP => ConfineError::Symlink {
                root: root.display().to_string(),
                target: std::fs::canonicalize(root).map_or(String::new(), |t| format!(" to {}", t.display())),
            },
            e => ConfineError::RunDir {
                root: root.display().to_string(),
                error: e.into(),
            },
        })?;
        Ok(RunDir {
            fd,
            root: root.display().to_string(),
        })
    }

    pub fn root(&self) -> &str {
        &self.root
    }

    pub fn fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// Opens (and with `create`, first makes, 0755) the directory `rel` beneath the run
    /// directory, one component at a time.
    pub fn open_dir(&self, rel: &str, create: bool) -> Result<OwnedFd, ConfineError> {
        self.open_dir_made(rel, create.then_some(0o755))
    }

    /// [`open_dir`](Self::open_dir), making the missing components with the permission bits
    /// `make` when given (the umask applies).
    pub fn open_dir_made(&self, rel: &str, make: Option<u32>) -> Result<OwnedFd, ConfineError> {
        check_relative(rel).map_err(|_| self.escapes(rel))?;
        // Each component is made inside its parent, itself opened beneath the run directory, so a
        // symlinked component is refused before anything is made through it.
        let mut dir: Option<OwnedFd> = None;
        let mut partial = String::new();
        for comp in rel.split('/').filter(|c| !c.is_empty()) {
            if !partial.is_empty() {
                partial.push('/');
            }
            partial.push_str(comp);
            let parent = dir.as_ref().map_or(self.fd.as_fd(), |d| d.as_fd());
            if let Some(mode) = make {
                match rustix::fs::mkdirat(parent, comp, Mode::from_raw_mode(mode)) {
                    Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                    Err(e) => return Err(self.io(&partial, e.into())),
                }
            }
            // Beneath the parent: stricter still than beneath the run directory.
            dir = Some(open_beneath(parent, comp).map_err(|e| self.classify(&partial, e))?);
        }
        match dir {
            Some(dir) => Ok(dir),
            None => self.open_dir_self(),
        }
    }

    /// The run directory itself, opened again.
    pub fn open_dir_self(&self) -> Result<OwnedFd, ConfineError> {
        open_beneath(self.fd.as_fd(), ".").map_err(|e| self.classify(".", e))
    }

    fn escapes(&self, path: &str) -> ConfineError {
        ConfineError::Escapes {
            root: self.root.clone(),
            path: path.to_string(),
        }
    }

    fn io(&self, path: &str, error: io::Error) -> ConfineError {
        ConfineError::Io {
            root: self.root.clone(),
            path: path.to_string(),
            error,
        }
    }

    fn classify(&self, path: &str, e: io::Error) -> ConfineError {
        // openat2 reports an escape through a symlink or `..` as EXDEV.
        if e.raw_os_error() == Some(libc::EXDEV) || e.raw_os_error() == Some(libc::ELOOP) {
            self.escapes(path)
        } else {
            self.io(path, e)
        }
    }
}

/// The directory `path` names, resolved once: its real path, and, when `path` is or passes
/// through a symlink, the symlink (one component of `path`) that led elsewhere. A path that
/// cannot be resolved (a missing directory) is returned as it is, for the caller's own error.
pub fn resolve_dir(path: &Path) -> io::Result<(std::path::PathBuf, Option<std::path::PathBuf>)> {
    let real = std::fs::canonicalize(path)?;
    let link = path
        .ancestors()
        .filter(|a| !a.as_os_str().is_empty())
        .find(|a| std::fs::symlink_metadata(a).is_ok_and(|m| m.file_type().is_symlink()))
        .map(Path::to_path_buf);
    Ok((real, link))
}

/// Refuses absolute paths and `..`: every path stays beneath the run directory.
pub fn check_relative(p: &str) -> Result<(), String> {
    let path = Path::new(p);
    if p.is_empty() {
        return Err("a path is empty".into());
    }
    if path.is_absolute() {
        return Err(format!(
            "`{}` is an absolute path; paths must stay beneath the run directory",
            crate::input::excerpt(p)
        ));
    }
    if path.components().any(|c| !matches!(c, std::path::Component::Normal(_))) {
        return Err(format!(
            "`{}` leaves the run directory (`..` or `.` is not allowed)",
            crate::input::excerpt(p)
        ));
    }
    Ok(())
}

/// Opens directory `rel` beneath `dir`, refusing anything that resolves outside it.
pub fn open_beneath(dir: std::os::fd::BorrowedFd<'_>, rel: &str) -> io::Result<OwnedFd> {
    let flags = OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC;
    let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS;
    match rustix::fs::openat2(dir, rel, flags, Mode::empty(), resolve) {
        Ok(fd) => Ok(fd),
        // Kernels before 5.6 lack openat2: refuse symlinks altogether instead.
        Err(rustix::io::Errno::NOSYS) => {
            let mut fd = rustix::fs::openat(dir, ".", flags, Mode::empty())?;
            for comp in rel.split('/').filter(|c| !c.is_empty()) {
                if comp == ".." {
                    return Err(io::Error::from_raw_os_error(libc::EXDEV));
                }
                fd = rustix::fs::openat(&fd, comp, flags | OFlags::NOFOLLOW, Mode::empty())?;
            }
            Ok(fd)
        }
        Err(e) => Err(e.into()),
    }
}

/// Opens directory `dir` again, for reading its entries (a listing consumes its descriptor's
/// position, so each listing needs a descriptor of its own).
pub fn reopen_dir<Fd: AsFd>(dir: Fd) -> io::Result<OwnedFd> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    Ok(rustix::fs::openat(dir, ".", flags, Mode::empty())?)
}

/// Opens file `name` (one component) in directory `dir` without following a symlink.
pub fn open_file(dir: std::os::fd::BorrowedFd<'_>, name: &str, flags: OFlags, mode: u32) -> io::Result<OwnedFd> {
    debug_assert!(!name.contains('/'));
    rustix::fs::openat(
        dir,
        name,
        flags | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(mode),
    )
    .map_err(|e| {
        if e == rustix::io::Errno::LOOP {
            io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!("`{name}` is a symlink; fslab does not follow symlinks"),
            )
        } else {
            e.into()
        }
    })
}
