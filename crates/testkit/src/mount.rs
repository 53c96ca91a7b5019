//! Mounts a test makes, released when it ends, even when it fails.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Whether anything is mounted at `path` (by /proc/self/mounts).
pub fn is_mounted(path: &Path) -> bool {
    let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let table = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    table
        .lines()
        .filter_map(|l| l.split_whitespace().nth(1))
        .any(|p| Path::new(&unescape(p)) == path)
}

/// /proc/self/mounts writes a space, a tab, a newline and a backslash as octal escapes.
fn unescape(field: &str) -> String {
    field
        .replace("\\040", " ")
        .replace("\\011", "\t")
        .replace("\\012", "\n")
        .replace("\\134", "\\")
}

/// Unmounts what is mounted at a path when dropped, lazily if it is busy, so that a failing
/// test leaves nothing mounted.
pub struct MountGuard(pub PathBuf);

impl Drop for MountGuard {
    fn drop(&mut self) {
        if !is_mounted(&self.0) {
            return;
        }
        let Ok(target) = CString::new(self.0.as_os_str().as_bytes()) else {
            return;
        };
        // SAFETY: a NUL-terminated path that outlives the calls.
        if unsafe { libc::umount2(target.as_ptr(), 0) } != 0 {
            // Busy (a failed test left something open): detach it instead.
            unsafe { libc::umount2(target.as_ptr(), libc::MNT_DETACH) };
        }
    }
}

/// A tmpfs of a given size mounted on a temporary directory of its own; unmounted when dropped,
/// even when the test fails. Tests fill it up, or measure how full it is.
pub struct Tmpfs {
    // Dropped in this order: unmounted, then the directory removed.
    _guard: MountGuard,
    dir: tempfile::TempDir,
}

impl Tmpfs {
    /// Mounts a tmpfs of `size` ("64m"). Needs root: without it the test fails, saying so.
    pub fn mount(size: &str) -> Tmpfs {
        crate::require_root();
        let dir = crate::tempdir();
        let target = CString::new(dir.path().as_os_str().as_bytes()).expect("a path without NUL");
        let options = CString::new(format!("size={size}")).expect("a size without NUL");
        // SAFETY: every pointer is a NUL-terminated string that outlives the call.
        let r = unsafe {
            libc::mount(
                c"fslab-test".as_ptr(),
                target.as_ptr(),
                c"tmpfs".as_ptr(),
                0,
                options.as_ptr().cast(),
            )
        };
        assert_eq!(
            r,
            0,
            "mounting a {size} tmpfs on {}: {}",
            dir.path().display(),
            std::io::Error::last_os_error()
        );
        Tmpfs {
            _guard: MountGuard(dir.path().to_path_buf()),
            dir,
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// (size, used) in bytes, from statvfs.
    pub fn space(&self) -> (u64, u64) {
        let path = CString::new(self.path().as_os_str().as_bytes()).expect("a path without NUL");
        // SAFETY: statvfs fills the zeroed struct it is given; the path is NUL-terminated.
        let st = unsafe {
            let mut st: libc::statvfs = std::mem::zeroed();
            assert_eq!(
                libc::statvfs(path.as_ptr(), &mut st),
                0,
                "statvfs {}: {}",
                self.path().display(),
                std::io::Error::last_os_error()
            );
            st
        };
        let (blocks, free, frsize) = (st.f_blocks as u64, st.f_bfree as u64, st.f_frsize as u64);
        (blocks * frsize, (blocks - free) * frsize)
    }
}
