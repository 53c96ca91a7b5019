//! Maps keyed by file ids, hashed by one multiplication. The ids are integers fslab hands out
//! itself, consecutive from 0, so SipHash's defence against chosen keys buys nothing, while the
//! metadata loops (create, delete, stat of a changing fileset) look an id up in every operation.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A HashMap from file id to `V`.
pub(crate) type IdMap<V> = HashMap<u64, V, BuildHasherDefault<IdHasher>>;

/// The id itself in the low bits, which pick the bucket, so that consecutive ids sit in
/// consecutive buckets and a walk through them in order (sequential create, stat, delete) touches
/// memory in order too; Fibonacci hashing (the id times 2^64 / φ) in the top 7 bits, hashbrown's
/// tag, so that the ids sharing a group of buckets are told apart without comparing keys. fslab's
/// ids are consecutive from 0, which fills the buckets evenly.
#[derive(Default, Clone, Copy)]
pub(crate) struct IdHasher(u64);

const PHI: u64 = 0x9E37_79B9_7F4A_7C15;

/// The bits of a hash hashbrown takes its tag from.
const TAG: u64 = 0x7F << 57;

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
        let x = self.0 ^ id;
        self.0 = (x.wrapping_mul(PHI) & TAG) | (x & !TAG);
    }
}

#[cfg(test)]
mod tests {
    use super::{IdHasher, IdMap, TAG};
    use std::hash::Hasher;

    fn hash(id: u64) -> u64 {
        let mut h = IdHasher::default();
        h.write_u64(id);
        h.finish()
    }

    #[test]
    fn consecutive_ids_get_consecutive_buckets_and_varied_tags() {
        let tags: std::collections::HashSet<u64> = (0..1000u64)
            .map(|id| {
                assert_eq!(hash(id) & !TAG, id, "the bucket bits of id {id}");
                hash(id) & TAG
            })
            .collect();
        assert!(tags.len() >= 100, "only {} tags among 1000 ids", tags.len());
    }

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
