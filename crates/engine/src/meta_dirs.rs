//! The directories FFSB's metaop makes, removes and renames, kept as FFSB keeps its meta
//! fileset's list (`filelist.c`): `metafile<N>`, numbered from 0 as they are first made; a
//! rename appends an `a` to the name (`rename_file()`); a removed directory's entry, its name
//! with every `a`, waits in a queue of holes that the next mkdir takes from first, oldest first
//! (`add_file()`); rmdir and rename each take one of the live directories at random
//! (`choose_file_writer()`), never one another thread is still working on.

use rand::{Rng, RngExt};
use std::collections::VecDeque;
use std::ffi::CString;

/// The name FFSB gives its meta fileset's entries (`META_BASE` and `FILENAME_BASE`).
const BASE: &str = "metafile";

/// Whether `name` is one metaop makes: `metafile<N>`, then any number of `a`s.
pub(crate) fn is_metaop_name(name: &str) -> bool {
    let Some(rest) = name.strip_prefix(BASE) else {
        return false;
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0 && rest[digits..].bytes().all(|b| b == b'a')
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    /// The `a`s its renames appended.
    renames: u32,
    /// Where it is in [`MetaDirs::live`]; none while it is a hole.
    at: Option<usize>,
    /// Taken by an operation that has not finished with it.
    busy: bool,
}

/// One fileset's metaop directories, shared by its threads (behind the table's lock).
#[derive(Debug, Default)]
pub(crate) struct MetaDirs {
    entries: Vec<Entry>,
    live: Vec<u64>,
    holes: VecDeque<u64>,
}

impl MetaDirs {
    /// The name of entry `n` as it is now.
    pub fn name(&self, n: u64) -> CString {
        let e = &self.entries[n as usize];
        let mut s = format!("{BASE}{n}");
        s.extend(std::iter::repeat_n('a', e.renames as usize));
        CString::new(s).expect("no NUL in a metafile name")
    }

    /// An entry for mkdir to make: the oldest hole, else a new number. It counts as live (and
    /// busy) from now on, as FFSB's list holds it before its mkdir.
    pub fn create(&mut self) -> u64 {
        let n = self.holes.pop_front().unwrap_or_else(|| {
            self.entries.push(Entry {
                renames: 0,
                at: None,
                busy: false,
            });
            self.entries.len() as u64 - 1
        });
        let e = &mut self.entries[n as usize];
        e.at = Some(self.live.len());
        e.busy = true;
        self.live.push(n);
        n
    }

    /// A live entry no operation holds, at random, now held; none when there is none.
    pub fn choose(&mut self, rng: &mut impl Rng) -> Option<u64> {
        if self.live.is_empty() {
            return None;
        }
        // FFSB draws again until it finds a free one; a few draws, then the first free one,
        // so that a list whose entries are all held cannot spin.
        let free = |d: &Self, n: u64| !d.entries[n as usize].busy;
        let n = (0..16)
            .map(|_| self.live[rng.random_range(0..self.live.len())])
            .find(|&n| free(self, n))
            .or_else(|| self.live.iter().copied().find(|&n| free(self, n)))?;
        self.entries[n as usize].busy = true;
        Some(n)
    }

    /// Entry `n` (held) leaves the live ones before its rmdir, as in FFSB's `remove_file()`;
    /// [`hole`](Self::hole) once it is removed.
    pub fn remove(&mut self, n: u64) {
        let at = self.entries[n as usize].at.take().expect("a live entry");
        self.live.swap_remove(at);
        if let Some(&moved) = self.live.get(at) {
            self.entries[moved as usize].at = Some(at);
        }
    }

    /// Entry `n`, removed, becomes the newest hole. (FFSB queues it before its rmdir, where
    /// another thread's mkdir could take the name before it is free.)
    pub fn hole(&mut self, n: u64) {
        self.entries[n as usize].busy = false;
        self.holes.push_back(n);
    }

    /// Entry `n` (held) gets its next name; returns the old one.
    pub fn rename(&mut self, n: u64) -> CString {
        let old = self.name(n);
        self.entries[n as usize].renames += 1;
        old
    }

    /// Entry `n` is free for other operations again.
    pub fn release(&mut self, n: u64) {
        self.entries[n as usize].busy = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn holes_are_taken_again_oldest_first_with_their_names() {
        let mut d = MetaDirs::default();
        let made: Vec<u64> = (0..3).map(|_| d.create()).collect();
        assert_eq!(made, vec![0, 1, 2]);
        made.iter().for_each(|&n| d.release(n));
        assert_eq!(d.name(1).to_str().unwrap(), "metafile1");
        assert_eq!(d.rename(1).to_str().unwrap(), "metafile1");
        assert_eq!(d.rename(1).to_str().unwrap(), "metafile1a");
        assert_eq!(d.name(1).to_str().unwrap(), "metafile1aa");
        for n in [1, 0] {
            d.remove(n);
            d.hole(n);
        }
        assert_eq!(d.live, vec![2]);
        // The first removed is the first made again, under the name it had.
        assert_eq!(d.create(), 1);
        assert_eq!(d.name(1).to_str().unwrap(), "metafile1aa");
        assert_eq!(d.create(), 0);
        assert_eq!(d.create(), 3, "a new number once no hole is left");
        let mut live = d.live.clone();
        live.sort_unstable();
        assert_eq!(live, vec![0, 1, 2, 3]);
    }

    #[test]
    fn metaop_names_are_told_from_others() {
        for yes in ["metafile0", "metafile12", "metafile3aaa"] {
            assert!(is_metaop_name(yes), "{yes}");
        }
        for no in ["metafile", "metafilea", "metafile1b", "metafile1a2", "m3", "xmetafile1"] {
            assert!(!is_metaop_name(no), "{no}");
        }
    }

    #[test]
    fn choices_are_live_free_entries_spread_over_all_of_them() {
        let mut d = MetaDirs::default();
        for _ in 0..8 {
            let n = d.create();
            d.release(n);
        }
        d.remove(3);
        d.hole(3);
        let held = d.choose(&mut rand::rngs::SmallRng::seed_from_u64(9)).unwrap();
        let mut rng = rand::rngs::SmallRng::seed_from_u64(1);
        let mut seen = [0u32; 8];
        for _ in 0..6000 {
            let n = d.choose(&mut rng).unwrap();
            seen[n as usize] += 1;
            d.release(n);
        }
        assert_eq!(seen[3], 0, "a hole is never chosen");
        assert_eq!(seen[held as usize], 0, "nor one another operation holds");
        for (n, &k) in seen.iter().enumerate() {
            if n != 3 && n as u64 != held {
                assert!((850..1150).contains(&k), "entry {n} chosen {k} times of 6000");
            }
        }
        // Once every live entry is held, there is nothing to choose.
        while d.choose(&mut rng).is_some() {}
        assert_eq!(d.choose(&mut rng), None);
    }
}
