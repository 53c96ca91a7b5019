//! What the fill and age tests share: a listing of a directory tree as it is on disk. (The
//! small tmpfs whose utilisation they drive is testkit's `Tmpfs`.)

use std::collections::BTreeMap;
use std::hash::{DefaultHasher, Hasher};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

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
