//! What the fill and age tests share: a small tmpfs whose utilisation they can drive, and a
//! listing of a directory tree as it is on disk.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::ffi::CString;
use std::hash::{DefaultHasher, Hasher};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// A tmpfs of the given size mounted on a temporary directory; unmounted when dropped, even when
/// the test fails.
pub struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    /// Mounts a tmpfs of `size` ("64m"). Needs root: the test fails, saying so, without it.
    pub fn mount(size: &str) -> Tmpfs {
        assert!(
            rustix::process::geteuid().is_root(),
            "this test mounts a {size} tmpfs and needs root: run it as root (CI does)"
        );
        let dir = tempfile::tempdir().expect("a temporary directory");
        let target = CString::new(dir.path().as_os_str().as_bytes()).unwrap();
        let options = CString::new(format!("size={size}")).unwrap();
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
            "mounting a tmpfs on {}: {}",
            dir.path().display(),
            std::io::Error::last_os_error()
        );
        Tmpfs { dir }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// (size, used) in bytes, from statvfs.
    pub fn space(&self) -> (u64, u64) {
        let st = rustix::fs::statvfs(self.path()).expect("statvfs");
        (st.f_blocks * st.f_frsize, (st.f_blocks - st.f_bfree) * st.f_frsize)
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let target = CString::new(self.dir.path().as_os_str().as_bytes()).unwrap();
        // SAFETY: a NUL-terminated path that outlives the call.
        if unsafe { libc::umount2(target.as_ptr(), 0) } != 0 {
            // Busy (a failed test left something open): detach it instead.
            unsafe { libc::umount2(target.as_ptr(), libc::MNT_DETACH) };
        }
    }
}

/// An entry of a tree on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    Dir,
    /// Size, permission bits, a hash of the content, and the inode's link count.
    File {
        size: u64,
        mode: u32,
        hash: u64,
        links: u64,
    },
    Symlink(PathBuf),
}

/// Every entry beneath `dir`, by path relative to it (symlinks are listed, not followed).
pub fn walk(dir: &Path) -> BTreeMap<PathBuf, Node> {
    let mut found = BTreeMap::new();
    walk_into(dir, Path::new(""), &mut found);
    found
}

fn walk_into(root: &Path, rel: &Path, found: &mut BTreeMap<PathBuf, Node>) {
    for entry in std::fs::read_dir(root.join(rel)).unwrap_or_else(|e| panic!("listing {}: {e}", rel.display())) {
        let entry = entry.expect("a directory entry");
        let path = rel.join(entry.file_name());
        let meta = std::fs::symlink_metadata(root.join(&path)).expect("lstat");
        let node = if meta.is_dir() {
            walk_into(root, &path, found);
            Node::Dir
        } else if meta.file_type().is_symlink() {
            Node::Symlink(std::fs::read_link(root.join(&path)).expect("readlink"))
        } else {
            let bytes = std::fs::read(root.join(&path)).expect("read");
            let mut h = DefaultHasher::new();
            h.write(&bytes);
            Node::File {
                size: meta.len(),
                mode: meta.mode() & 0o777,
                hash: h.finish(),
                links: meta.nlink(),
            }
        };
        found.insert(path, node);
    }
}

/// (directories, files, bytes of distinct files) in a listing.
pub fn totals(listing: &BTreeMap<PathBuf, Node>) -> (u64, u64, u64) {
    let (mut dirs, mut files, mut bytes) = (0, 0, 0);
    for node in listing.values() {
        match node {
            Node::Dir => dirs += 1,
            Node::File { size, .. } => {
                files += 1;
                bytes += size;
            }
            Node::Symlink(_) => {}
        }
    }
    (dirs, files, bytes)
}
