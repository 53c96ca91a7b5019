//! Random offsets without repeats (`shuffle`): each of a file's n aligned slots once per pass,
//! in a pseudo-random order, as IOzone's random readers and writers shuffle their records and
//! fio's random map keeps a block from coming twice.
//!
//! A deck holds no list of the slots: it walks a counter through the smallest power of two
//! 2^b ≥ n and maps each value through a keyed bijection of b-bit numbers, keeping the values
//! below n (cycle walking: at most two tries per slot on average). A pass is therefore every slot
//! exactly once, in constant memory for any file size. Each pass draws new keys from the
//! thread's generator, so the same seed gives the same offsets.

use rand::rngs::SmallRng;
use rand::RngExt;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Rounds of the bijection; each adds a key, multiplies by an odd number made from it and folds
/// the high half into the low one, all modulo 2^b, so each is a bijection and so is their
/// composition.
const ROUNDS: usize = 3;

/// One pass's state: small and `Copy`, as it is lent to every operation that shuffles.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Deck {
    /// Slots in a pass (0: no pass begun).
    n: u64,
    /// 2^b − 1, and the fold's shift.
    mask: u64,
    shift: u32,
    keys: [u64; ROUNDS],
    /// The counter's next value in [0, 2^b]; 2^b ends the pass.
    next: u64,
}

impl Deck {
    /// The next slot in [0, n). A new n (the file's size changed) begins a new pass. A file has
    /// fewer than 2^63 bytes, so n ≤ 2^63 and the counter cannot overflow.
    pub fn draw(&mut self, n: u64, rng: &mut SmallRng) -> u64 {
        let n = n.min(1 << 63);
        if n <= 1 {
            return 0;
        }
        if n != self.n {
            let bits = u64::BITS - (n - 1).leading_zeros();
            self.n = n;
            self.mask = u64::MAX >> (u64::BITS - bits);
            self.shift = bits.div_ceil(2);
            self.next = self.mask + 1;
        }
        loop {
            if self.next > self.mask {
                self.keys = std::array::from_fn(|_| rng.random());
                self.next = 0;
            }
            let slot = self.permute(self.next);
            self.next += 1;
            if slot < n {
                return slot;
            }
        }
    }

    /// The keyed bijection of [0, 2^b).
    fn permute(&self, mut x: u64) -> u64 {
        for key in self.keys {
            x = x.wrapping_add(key) & self.mask;
            x = x.wrapping_mul(key.rotate_left(32) | 1) & self.mask;
            x ^= x >> self.shift;
        }
        x
    }
}

/// A thread's decks: one per entry of its mix and file it shuffles on. The last one lent is
/// kept apart, so that a thread on one file (IOzone's children, fio's jobs) hashes nothing; the
/// others are found by a multiplicative hash of the entry and file, a few nanoseconds where
/// the standard SipHash took tens, per operation of a thread that moves between files.
#[derive(Debug, Default)]
pub(crate) struct Decks {
    /// The entry and file of `deck`, the last lent.
    last: Option<(usize, u64)>,
    deck: Deck,
    others: HashMap<(usize, u64), Deck, BuildHasherDefault<KeyHasher>>,
}

/// Hashes the (entry, file) keys of [`Decks`]: small integers, from fslab itself.
#[derive(Debug, Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(26) ^ n).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
}

impl Decks {
    /// The deck of entry `op` on file `file`, lent out for one operation: give it back
    /// ([`Decks::give_back`]) before the next is lent.
    pub fn lend(&mut self, op: usize, file: u64) -> Deck {
        let key = (op, file);
        if self.last != Some(key) {
            if let Some(last) = self.last.replace(key) {
                self.others.insert(last, self.deck);
            }
            self.deck = self.others.get(&key).copied().unwrap_or_default();
        }
        self.deck
    }

    pub fn give_back(&mut self, deck: Deck) {
        self.deck = deck;
    }

    /// The next slot of entry `op` on file `file`, of `n`.
    pub fn draw(&mut self, op: usize, file: u64, n: u64, rng: &mut SmallRng) -> u64 {
        let mut deck = self.lend(op, file);
        let slot = deck.draw(n, rng);
        self.give_back(deck);
        slot
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn pass(deck: &mut Deck, n: u64, rng: &mut SmallRng) -> Vec<u64> {
        (0..n).map(|_| deck.draw(n, rng)).collect()
    }

    #[test]
    fn every_pass_is_each_slot_once() {
        let mut rng = SmallRng::seed_from_u64(7);
        for n in [1, 2, 3, 4, 5, 7, 8, 9, 255, 256, 257, 1000, 4096, 65_537] {
            let mut deck = Deck::default();
            for round in 0..3 {
                let mut got = pass(&mut deck, n, &mut rng);
                got.sort_unstable();
                assert!(
                    got.iter().copied().eq(0..n),
                    "n = {n}, pass {round}: not every slot once"
                );
            }
        }
    }

    #[test]
    fn the_order_is_scattered_and_changes_from_pass_to_pass() {
        let mut rng = SmallRng::seed_from_u64(1);
        let n = 4096;
        let mut deck = Deck::default();
        let first = pass(&mut deck, n, &mut rng);
        let second = pass(&mut deck, n, &mut rng);
        assert_ne!(first, second);
        for order in [&first, &second] {
            // A uniform shuffle has about one slot followed by its neighbour; a counter or a
            // weak mix has many.
            let runs = order.windows(2).filter(|w| w[1] == w[0] + 1).count();
            assert!(runs < 10, "{runs} slots followed by the next one");
            // Slots from the first half and the second come mixed, not one half then the other.
            let low_early = order[..n as usize / 2].iter().filter(|&&s| s < n / 2).count();
            assert!((900..=1150).contains(&low_early), "{low_early} of 2048");
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_slots_and_a_new_size_begins_a_new_pass() {
        let draw = |seed| {
            let mut rng = SmallRng::seed_from_u64(seed);
            pass(&mut Deck::default(), 100, &mut rng)
        };
        assert_eq!(draw(3), draw(3));
        assert_ne!(draw(3), draw(4));
        let mut rng = SmallRng::seed_from_u64(5);
        let mut deck = Deck::default();
        for _ in 0..4 {
            deck.draw(10, &mut rng);
        }
        let mut grown = pass(&mut deck, 20, &mut rng);
        grown.sort_unstable();
        assert!(grown.into_iter().eq(0..20));
    }

    #[test]
    fn decks_are_kept_per_entry_and_file() {
        let mut rng = SmallRng::seed_from_u64(9);
        let mut decks = Decks::default();
        let mut seen = [Vec::new(), Vec::new()];
        for _ in 0..8 {
            for (file, seen) in seen.iter_mut().enumerate() {
                seen.push(decks.draw(0, file as u64, 8, &mut rng));
            }
        }
        for mut s in seen {
            s.sort_unstable();
            assert!(s.into_iter().eq(0..8));
        }
        let mut deck = decks.lend(0, 0);
        let next = deck.draw(8, &mut rng);
        decks.give_back(deck);
        assert!(next < 8);
    }
}
