//! The open files a thread keeps between operations, by file id.

use crate::idmap::IdMap;
use crate::io::OpenFile;

/// Open files a thread keeps between operations (OpenMode::Keep), by file id: every file a
/// thread touches stays open, up to [`FD_CACHE`], as fio and sysbench keep theirs. The file of
/// the last operation is found without hashing.
pub(super) struct FdCache {
    pub(super) entries: Vec<(u64, OpenFile)>,
    index: IdMap<usize>,
    last: usize,
}

/// Open files per thread at most; past it, the oldest entry makes room.
const FD_CACHE: usize = 4096;

impl FdCache {
    pub(super) fn new() -> FdCache {
        FdCache {
            entries: Vec::new(),
            index: IdMap::default(),
            last: 0,
        }
    }

    pub(super) fn find(&mut self, id: u64) -> Option<usize> {
        if self.entries.get(self.last).is_some_and(|e| e.0 == id) {
            return Some(self.last);
        }
        let i = *self.index.get(&id)?;
        self.last = i;
        Some(i)
    }

    pub(super) fn insert(&mut self, id: u64, f: OpenFile) -> usize {
        if self.entries.len() >= FD_CACHE {
            self.remove_at(0);
        }
        self.index.insert(id, self.entries.len());
        self.entries.push((id, f));
        self.last = self.entries.len() - 1;
        self.last
    }

    pub(super) fn evict(&mut self, id: u64) {
        if let Some(&i) = self.index.get(&id) {
            self.remove_at(i);
        }
    }

    fn remove_at(&mut self, i: usize) {
        let (gone, _) = self.entries.swap_remove(i);
        self.index.remove(&gone);
        if let Some(moved) = self.entries.get(i) {
            self.index.insert(moved.0, i);
        }
        self.last = 0;
    }
}
