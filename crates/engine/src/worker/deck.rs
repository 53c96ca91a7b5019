//! Random offsets without repeats (`shuffle`): each of a file's n aligned slots once per pass,
//! in a pseudo-random order, as IOzone's random readers and writers shuffle their records and
//! fio's random map keeps a block from coming twice.
//!
//! A deck holds no list of the slots: it walks a counter through the smallest power of two
//! 2^b ≥ n and maps each value through a keyed bijection of b-bit numbers, keeping the values
//! below n (cycle walking: at most two tries per slot on average). A pass is therefore every slot
//! exactly once, in constant memory for any file size. Each pass draws new keys from the
//! thread's generator, so the same seed gives the same offsets.
//!
//! A deck in IOzone's order (`shuffle_order = "iozone"`) deals the slots from a list, made once
//! per thread and number of slots as IOzone 3.487 makes its `recnum` array: the slots in order,
//! then slot i swapped with slot (a draw of MT19937-64 mod n), for each i in turn, the generator
//! keyed with IOzone's four words. Every pass, thread and run deals that same order.

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
    /// The counter's next value in [0, 2^b]; 2^b ends the pass. In IOzone's order, the next
    /// place in its list.
    next: u64,
    /// Deals IOzone's order.
    iozone: bool,
}

impl Deck {
    /// The next slot in [0, n). A new n (the file's size changed) begins a new pass. A file has
    /// fewer than 2^63 bytes, so n ≤ 2^63 and the counter cannot overflow.
    #[inline]
    pub fn draw(&mut self, n: u64, rng: &mut SmallRng) -> u64 {
        let n = n.min(1 << 63);
        if n <= 1 {
            return 0;
        }
        if self.iozone {
            if n != self.n {
                self.n = n;
                self.next = 0;
            }
            let slot = IOZONE_ORDER.with_borrow_mut(|o| o.slot(n, self.next));
            self.next = (self.next + 1) % n;
            return slot;
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

thread_local! {
    /// This thread's lists of IOzone's order, for the numbers of slots it deals lately.
    static IOZONE_ORDER: std::cell::RefCell<IozoneOrders> = const {
        std::cell::RefCell::new(IozoneOrders(Vec::new()))
    };
}

/// IOzone's orders (`random_perf_test()`, `thread_ranread_test()`...), by number of slots, the
/// last used first: IOzone's files are all of one size, but a workload's need not be, and a
/// list is made in time and memory proportional to its slots.
struct IozoneOrders(Vec<(u64, Vec<u64>)>);

/// The numbers of slots whose lists a thread keeps.
const KEPT_ORDERS: usize = 4;

impl IozoneOrders {
    /// The slot at place `k` of the order of `n` slots, the list made first when it is not kept.
    fn slot(&mut self, n: u64, k: u64) -> u64 {
        let at = match self.0.iter().position(|(m, _)| *m == n) {
            Some(at) => at,
            None => {
                if self.0.len() == KEPT_ORDERS {
                    self.0.pop();
                }
                self.0.push((n, iozone_order(n)));
                self.0.len() - 1
            }
        };
        if at > 0 {
            let kept = self.0.remove(at);
            self.0.insert(0, kept);
        }
        self.0[0].1[k as usize]
    }
}

/// IOzone's order of `n` slots: 0..n, then slot i swapped with slot (a draw mod n) for each i.
fn iozone_order(n: u64) -> Vec<u64> {
    let mut slots: Vec<u64> = (0..n).collect();
    let mut mt = Mt64::iozone();
    for i in 0..n as usize {
        let j = (mt.next_u64() % n) as usize;
        slots.swap(i, j);
    }
    slots
}

/// MT19937-64 (Matsumoto and Nishimura's 64-bit Mersenne Twister), the generator IOzone builds
/// with (`MERSENNE`), as its `init_by_array64()` and `genrand64_int64()` define it.
struct Mt64 {
    state: Box<[u64; MT_N]>,
    next: usize,
}

const MT_N: usize = 312;
const MT_M: usize = 156;

impl Mt64 {
    /// Keyed with IOzone's `init[4] = {0x12345, 0x23456, 0x34567, 0x45678}`.
    fn iozone() -> Mt64 {
        Mt64::keyed(&[0x12345, 0x23456, 0x34567, 0x45678])
    }

    fn keyed(key: &[u64]) -> Mt64 {
        let mut mt = Box::new([0u64; MT_N]);
        mt[0] = 19_650_218;
        for i in 1..MT_N {
            mt[i] = 6_364_136_223_846_793_005u64
                .wrapping_mul(mt[i - 1] ^ (mt[i - 1] >> 62))
                .wrapping_add(i as u64);
        }
        let (mut i, mut j) = (1, 0);
        for _ in 0..MT_N.max(key.len()) {
            let prev = mt[i - 1] ^ (mt[i - 1] >> 62);
            mt[i] = (mt[i] ^ prev.wrapping_mul(3_935_559_000_370_003_845))
                .wrapping_add(key[j])
                .wrapping_add(j as u64);
            i += 1;
            j += 1;
            if i >= MT_N {
                mt[0] = mt[MT_N - 1];
                i = 1;
            }
            if j >= key.len() {
                j = 0;
            }
        }
        for _ in 0..MT_N - 1 {
            let prev = mt[i - 1] ^ (mt[i - 1] >> 62);
            mt[i] = (mt[i] ^ prev.wrapping_mul(2_862_933_555_777_941_757)).wrapping_sub(i as u64);
            i += 1;
            if i >= MT_N {
                mt[0] = mt[MT_N - 1];
                i = 1;
            }
        }
        mt[0] = 1 << 63;
        Mt64 { state: mt, next: MT_N }
    }

    fn next_u64(&mut self) -> u64 {
        const UPPER: u64 = 0xFFFF_FFFF_8000_0000;
        const LOWER: u64 = 0x7FFF_FFFF;
        const MATRIX_A: u64 = 0xB502_6F5A_A966_19E9;
        if self.next >= MT_N {
            let mt = &mut self.state;
            for i in 0..MT_N {
                let x = (mt[i] & UPPER) | (mt[(i + 1) % MT_N] & LOWER);
                let mag = if x & 1 == 1 { MATRIX_A } else { 0 };
                mt[i] = mt[(i + MT_M) % MT_N] ^ (x >> 1) ^ mag;
            }
            self.next = 0;
        }
        let mut x = self.state[self.next];
        self.next += 1;
        x ^= (x >> 29) & 0x5555_5555_5555_5555;
        x ^= (x << 17) & 0x71D6_7FFF_EDA6_0000;
        x ^= (x << 37) & 0xFFF7_EEE0_0000_0000;
        x ^ (x >> 43)
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
    /// The deck of entry `op` on file `file`, in place, for one operation (the one-block path
    /// draws from it without copying it out and back). `iozone`: the deck deals IOzone's order.
    #[inline]
    pub fn get(&mut self, op: usize, file: u64, iozone: bool) -> &mut Deck {
        let key = (op, file);
        if self.last != Some(key) {
            self.switch(key, iozone);
        }
        &mut self.deck
    }

    /// Puts the last deck lent away and takes out the one of `key`: out of line, as a thread
    /// that stays on one file never comes here.
    #[inline(never)]
    fn switch(&mut self, key: (usize, u64), iozone: bool) {
        if let Some(last) = self.last.replace(key) {
            self.others.insert(last, self.deck);
        }
        self.deck = self.others.get(&key).copied().unwrap_or_default();
        self.deck.iozone = iozone;
    }

    /// The deck of entry `op` on file `file`, lent out for an operation that keeps it beside a
    /// copy of the generator (ops.rs's runs): give it back ([`Decks::give_back`]) before the next
    /// is lent.
    pub fn lend(&mut self, op: usize, file: u64, iozone: bool) -> Deck {
        *self.get(op, file, iozone)
    }

    pub fn give_back(&mut self, deck: Deck) {
        self.deck = deck;
    }

    /// The next slot of entry `op` on file `file`, of `n`.
    pub fn draw(&mut self, op: usize, file: u64, n: u64, iozone: bool, rng: &mut SmallRng) -> u64 {
        self.get(op, file, iozone).draw(n, rng)
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
                seen.push(decks.draw(0, file as u64, 8, false, &mut rng));
            }
        }
        for mut s in seen {
            s.sort_unstable();
            assert!(s.into_iter().eq(0..8));
        }
        let mut deck = decks.lend(0, 0, false);
        let next = deck.draw(8, &mut rng);
        decks.give_back(deck);
        assert!(next < 8);
    }

    #[test]
    fn the_generator_is_the_reference_mersenne_twister() {
        // The first outputs of mt19937-64.c's own test, keyed as IOzone keys it.
        let mut mt = Mt64::iozone();
        assert_eq!(
            [mt.next_u64(), mt.next_u64()],
            [7_266_447_313_870_364_031, 4_946_485_549_665_804_864]
        );
        let mut mt = Mt64::iozone();
        let thousandth = (0..1000).map(|_| mt.next_u64()).last();
        assert_eq!(thousandth, Some(994_412_663_058_993_407), "past the first refill");
    }

    #[test]
    fn an_iozone_deck_deals_iozone_s_order_every_pass_and_in_every_deck() {
        // The records IOzone 3.487 seeks to under strace: 4 MB in 4 kB records (-s 4m -r 4k -i
        // 2: the first and last offsets 2068480 and 266240), and 256 kB (-t 2 -s 256k -r 4k,
        // each child).
        let mut rng = SmallRng::seed_from_u64(3);
        let mut decks = Decks::default();
        let mut deal =
            |file: u64, n: u64| -> Vec<u64> { (0..n).map(|_| decks.draw(0, file, n, true, &mut rng)).collect() };
        let big = deal(0, 1024);
        assert_eq!((&big[..6], big[1023]), (&[505, 56, 602, 672, 161, 94][..], 65));
        let mut sorted = big.clone();
        sorted.sort_unstable();
        assert!(sorted.into_iter().eq(0..1024), "each record once");
        let iozone_64 = [
            1, 55, 28, 7, 18, 58, 39, 3, 22, 0, 34, 10, 19, 13, 26, 21, 42, 41, 47, 16, 23, 15, 31, 9, 24, 33, 25, 40,
            56, 14, 52, 35, 36, 54, 12, 50, 60, 5, 8, 57, 17, 32, 49, 38, 62, 44, 4, 48, 29, 45, 53, 37, 20, 46, 43,
            61, 63, 30, 11, 59, 27, 51, 6, 2,
        ];
        for file in [1, 2, 1] {
            assert_eq!(deal(file, 64), iozone_64, "file {file}: every deck, every pass");
        }
        assert_eq!(deal(0, 1024), big, "its second pass");
        // Two files of two sizes dealt turn about: each deck keeps its own order.
        let (mut small, mut large) = (Vec::new(), Vec::new());
        for _ in 0..64 {
            small.push(decks.draw(0, 5, 64, true, &mut rng));
            large.push(decks.draw(0, 6, 1024, true, &mut rng));
        }
        assert_eq!((small, &large[..]), (iozone_64.to_vec(), &big[..64]));
    }
}
