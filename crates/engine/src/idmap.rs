//! Maps keyed by file ids, hashed by one multiplication. The ids are integers fslab hands out
//! itself, mostly consecutive, so SipHash's defence against chosen keys buys nothing, while the
//! metadata loops (create, delete, stat of a changing fileset) look an id up in every operation.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A HashMap from file id to `V`.
pub(crate) type IdMap<V> = HashMap<u64, V, BuildHasherDefault<IdHasher>>;

/// Fibonacci hashing: the id times 2^64 / φ. The low bits (the bucket) of consecutive ids are a
/// permutation of theirs, the high bits (hashbrown's tag) are well mixed.
#[derive(Default, Clone, Copy)]
pub(crate) struct IdHasher(u64);

const PHI: u64 = 0x9E37_79B9_7F4A_7C15;

impl Hasher for IdHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }

    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(PHI);
        }
    }

    #[inline]
    fn write_u64(&mut self, id: u64) {
        self.0 = (self.0 ^ id).wrapping_mul(PHI);
    }
}

#[cfg(test)]
mod tests {
    use super::IdMap;

    #[test]
    fn ids_go_in_and_come_out() {
        let mut m: IdMap<usize> = IdMap::default();
        for id in 0..10_000u64 {
            m.insert(id * 3, id as usize);
        }
        assert_eq!(m.len(), 10_000);
        assert_eq!(m.get(&2997), Some(&999));
        assert_eq!(m.remove(&0), Some(0));
        assert_eq!(m.get(&1), None);
    }
}
