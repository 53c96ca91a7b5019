//! The tree one extraction writes: directories, files, symlinks and hard links in the order the
//! archive lists them, checked once when it is built and held in memory for every extraction.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

/// A directory of the tree, by its index in `Tree::dirs`; [`ROOT`] is the directory the tree is
/// extracted into.
pub(crate) type DirId = u32;
pub(crate) const ROOT: DirId = 0;

pub(crate) struct DirNode {
    pub parent: DirId,
    pub name: OsString,
}

/// Where a file's bytes are in [`Tree`]'s content: `len` bytes from `start`, wrapping round to the
/// beginning of the content (only synthetic trees, whose content is a pattern, wrap).
#[derive(Clone, Copy)]
pub(crate) struct Extent {
    pub start: u64,
    pub len: u64,
}

pub(crate) enum Entry {
    Dir(DirId),
    File {
        dir: DirId,
        name: OsString,
        mode: u32,
        data: Extent,
    },
    Symlink {
        dir: DirId,
        name: OsString,
        target: OsString,
    },
    HardLink {
        dir: DirId,
        name: OsString,
        target_dir: DirId,
        target_name: OsString,
    },
}

/// A tree to extract: from a tar archive ([`Tree::from_archive`]) or generated
/// ([`Tree::synthetic_kernel`]). Every path in it is relative, free of `..`, and passes through
/// no symlink of the tree: that is checked when it is built.
pub struct Tree {
    pub(crate) source: String,
    pub(crate) dirs: Vec<DirNode>,
    pub(crate) entries: Vec<Entry>,
    pub(crate) content: Vec<u8>,
    pub(crate) skipped: u64,
}

/// What a tree holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TreeCounts {
    pub dirs: u64,
    pub files: u64,
    /// Symlinks and hard links.
    pub links: u64,
    /// Bytes of file content.
    pub bytes: u64,
    /// Archive members that are not written: devices, fifos, sparse files.
    pub skipped: u64,
}

/// One entry of [`Tree::listing`], with its path relative to the extraction directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    pub path: PathBuf,
    pub what: What,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum What {
    Dir,
    File { size: u64, mode: u32 },
    Symlink(PathBuf),
    HardLink(PathBuf),
}

impl Tree {
    /// What the tree was made from, for messages.
    pub fn source(&self) -> &str {
        &self.source
    }

    pub fn counts(&self) -> TreeCounts {
        let mut c = TreeCounts {
            skipped: self.skipped,
            ..TreeCounts::default()
        };
        for e in &self.entries {
            match e {
                Entry::Dir(_) => c.dirs += 1,
                Entry::File { data, .. } => {
                    c.files += 1;
                    c.bytes += data.len;
                }
                Entry::Symlink { .. } | Entry::HardLink { .. } => c.links += 1,
            }
        }
        c
    }

    /// About the space one extraction takes on a filesystem: each file's bytes rounded up to a
    /// block, and a block for each directory (what the fill's gauge counts).
    pub(crate) fn footprint(&self) -> u64 {
        let block = super::gauge::BLOCK;
        self.entries
            .iter()
            .map(|e| match e {
                Entry::Dir(_) => block,
                Entry::File { data, .. } => data.len.div_ceil(block).max(1) * block,
                Entry::Symlink { .. } | Entry::HardLink { .. } => 0,
            })
            .sum()
    }

    /// Every entry in extraction order.
    pub fn listing(&self) -> Vec<Listed> {
        self.entries
            .iter()
            .map(|e| match e {
                Entry::Dir(d) => Listed {
                    path: self.dir_path(*d),
                    what: What::Dir,
                },
                Entry::File { dir, name, mode, data } => Listed {
                    path: self.dir_path(*dir).join(name),
                    what: What::File {
                        size: data.len,
                        mode: *mode,
                    },
                },
                Entry::Symlink { dir, name, target } => Listed {
                    path: self.dir_path(*dir).join(name),
                    what: What::Symlink(PathBuf::from(target)),
                },
                Entry::HardLink {
                    dir,
                    name,
                    target_dir,
                    target_name,
                } => Listed {
                    path: self.dir_path(*dir).join(name),
                    what: What::HardLink(self.dir_path(*target_dir).join(target_name)),
                },
            })
            .collect()
    }

    /// The bytes of the file at `path` (relative to the extraction directory), if the tree has
    /// such a file.
    pub fn file_content(&self, path: &std::path::Path) -> Option<Vec<u8>> {
        self.entries.iter().find_map(|e| match e {
            Entry::File { dir, name, data, .. } if self.dir_path(*dir).join(name) == path => {
                Some(self.slices(*data, usize::MAX).flatten().copied().collect())
            }
            _ => None,
        })
    }

    /// The path of directory `d` relative to the extraction directory.
    pub(crate) fn dir_path(&self, d: DirId) -> PathBuf {
        self.chain(d)
            .iter()
            .map(|&id| self.dirs[id as usize].name.as_os_str())
            .collect()
    }

    /// The directories from just below [`ROOT`] down to `d`.
    pub(crate) fn chain(&self, mut d: DirId) -> Vec<DirId> {
        let mut chain = Vec::new();
        while d != ROOT {
            chain.push(d);
            d = self.dirs[d as usize].parent;
        }
        chain.reverse();
        chain
    }

    /// A file's bytes as consecutive slices of at most `step` bytes.
    pub(crate) fn slices(&self, data: Extent, step: usize) -> impl Iterator<Item = &[u8]> {
        let content = &self.content[..];
        let mut at = if content.is_empty() {
            0
        } else {
            (data.start % content.len() as u64) as usize
        };
        let mut left = if content.is_empty() { 0 } else { data.len };
        std::iter::from_fn(move || {
            if left == 0 {
                return None;
            }
            let n = (content.len() - at)
                .min(step)
                .min(usize::try_from(left).unwrap_or(usize::MAX));
            let slice = &content[at..at + n];
            at = (at + n) % content.len();
            left -= n as u64;
            Some(slice)
        })
    }
}

/// What a name in the tree is, while it is being built.
#[derive(Clone, Copy)]
enum Node {
    Dir(DirId),
    File,
    Symlink,
}

/// Builds a [`Tree`], refusing anything that would write outside the extraction directory or
/// through a symlink. Problems are returned as text for the caller to place (archive, entry).
pub(crate) struct Builder {
    dirs: Vec<DirNode>,
    entries: Vec<Entry>,
    names: HashMap<(DirId, OsString), Node>,
    skipped: u64,
}

impl Builder {
    pub(crate) fn new() -> Builder {
        Builder {
            dirs: vec![DirNode {
                parent: ROOT,
                name: OsString::new(),
            }],
            entries: Vec::new(),
            names: HashMap::new(),
            skipped: 0,
        }
    }

    pub(crate) fn finish(self, source: String, content: Vec<u8>) -> Tree {
        Tree {
            source,
            dirs: self.dirs,
            entries: self.entries,
            content,
            skipped: self.skipped,
        }
    }

    /// A member that is not written (device, fifo, sparse file).
    pub(crate) fn skip(&mut self) {
        self.skipped += 1;
    }

    /// The directory at `path`, made (with an entry of its own) if the tree does not have it yet.
    pub(crate) fn dir(&mut self, path: &[&OsStr]) -> Result<DirId, String> {
        let mut d = ROOT;
        for (i, name) in path.iter().enumerate() {
            d = match self.names.get(&(d, name.to_os_string())) {
                Some(Node::Dir(id)) => *id,
                Some(Node::Symlink) => return Err(through(path, i, "a symlink")),
                Some(Node::File) => return Err(through(path, i, "a file")),
                None => self.mkdir_in(d, name),
            };
        }
        Ok(d)
    }

    /// A new directory `name` in `parent`; the caller has checked that the name is free.
    pub(crate) fn mkdir_in(&mut self, parent: DirId, name: &OsStr) -> DirId {
        let id = DirId::try_from(self.dirs.len()).expect("fewer than 2^32 directories");
        self.dirs.push(DirNode {
            parent,
            name: name.to_os_string(),
        });
        self.names.insert((parent, name.to_os_string()), Node::Dir(id));
        self.entries.push(Entry::Dir(id));
        id
    }

    pub(crate) fn add_dir(&mut self, path: &[&OsStr]) -> Result<(), String> {
        self.dir(path).map(|_| ())
    }

    pub(crate) fn add_file(&mut self, path: &[&OsStr], mode: u32, data: Extent) -> Result<(), String> {
        let (dir, name) = self.place(path, Node::File)?;
        self.file_in(dir, name, mode, data);
        Ok(())
    }

    /// A file in a directory the builder made; the caller has checked that the name is free.
    pub(crate) fn file_in(&mut self, dir: DirId, name: &OsStr, mode: u32, data: Extent) {
        self.names.insert((dir, name.to_os_string()), Node::File);
        self.entries.push(Entry::File {
            dir,
            name: name.to_os_string(),
            mode,
            data,
        });
    }

    /// A symlink is made as a symlink, whatever it points at: nothing is ever written through it.
    pub(crate) fn add_symlink(&mut self, path: &[&OsStr], target: &OsStr) -> Result<(), String> {
        let (dir, name) = self.place(path, Node::Symlink)?;
        self.entries.push(Entry::Symlink {
            dir,
            name: name.to_os_string(),
            target: target.to_os_string(),
        });
        Ok(())
    }

    /// A hard link to a regular file earlier in the tree.
    pub(crate) fn add_hardlink(&mut self, path: &[&OsStr], target: &[&OsStr]) -> Result<(), String> {
        let Some((target_name, target_parent)) = target.split_last() else {
            return Err("is a hard link without a target".into());
        };
        let target_dir = match self.find_dir(target_parent) {
            Some(d) if matches!(self.names.get(&(d, target_name.to_os_string())), Some(Node::File)) => d,
            _ => {
                return Err(format!(
                    "is a hard link to `{}`, which is not a regular file earlier in the archive",
                    show(target)
                ))
            }
        };
        let (dir, name) = self.place(path, Node::File)?;
        self.entries.push(Entry::HardLink {
            dir,
            name: name.to_os_string(),
            target_dir,
            target_name: target_name.to_os_string(),
        });
        Ok(())
    }

    /// The directory of a new file, symlink or hard link at `path`, and its name; `node` is what
    /// the name becomes. A later member may replace a file or symlink (the last one wins, as
    /// with tar), never a directory.
    fn place<'p>(&mut self, path: &[&'p OsStr], node: Node) -> Result<(DirId, &'p OsStr), String> {
        let Some((name, parent)) = path.split_last() else {
            return Err("names the extraction directory itself".into());
        };
        let dir = self.dir(parent)?;
        let key = (dir, name.to_os_string());
        if let Some(Node::Dir(_)) = self.names.get(&key) {
            return Err("would replace a directory of the archive".into());
        }
        self.names.insert(key, node);
        Ok((dir, name))
    }

    fn find_dir(&self, path: &[&OsStr]) -> Option<DirId> {
        path.iter()
            .try_fold(ROOT, |d, name| match self.names.get(&(d, name.to_os_string())) {
                Some(Node::Dir(id)) => Some(*id),
                _ => None,
            })
    }
}

/// Splits a member's path into its names, refusing an absolute path and `..` (which could lead
/// out of the extraction directory); empty names and `.` are dropped.
pub(crate) fn components(raw: &[u8]) -> Result<Vec<&OsStr>, String> {
    if raw.first() == Some(&b'/') {
        return Err("is an absolute path".into());
    }
    let mut names = Vec::new();
    for part in raw.split(|&b| b == b'/') {
        match part {
            b"" | b"." => {}
            b".." => return Err("contains `..`, which leads out of the extraction directory".into()),
            _ => names.push(OsStr::from_bytes(part)),
        }
    }
    Ok(names)
}

fn through(path: &[&OsStr], i: usize, what: &str) -> String {
    let why = if what == "a symlink" {
        " (fslab never writes through a symlink)"
    } else {
        ""
    };
    format!(
        "passes through `{}`, which is {what} earlier in the archive{why}",
        show(&path[..=i])
    )
}

fn show(path: &[&OsStr]) -> String {
    path.iter().map(|n| n.to_string_lossy()).collect::<Vec<_>>().join("/")
}
