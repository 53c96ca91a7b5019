//! Mutations of an input, driven by a seeded random number generator so that a run can be
//! repeated: bit flips, interesting bytes and numbers, insertions and deletions, duplicated and
//! spliced ranges, the target's dictionary words, and lines repeated or made very long.

use rand::rngs::SmallRng;
use rand::RngExt;

/// Numbers that break parsers: limits of every width, floats beyond a Duration, negatives.
const NUMBERS: &[&str] = &[
    "0",
    "1",
    "-1",
    "255",
    "256",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "1e30",
    "1e308",
    "-0",
    "0.0",
    "NaN",
    "inf",
    "0x",
    "0xffffffffffffffff",
    "1.5",
    "99999999999999999999999999",
];

/// Returns a mutation of `input`, at most `max_len` bytes long (`other` is another corpus entry
/// to splice from; `dict` the target's words).
pub fn mutate(rng: &mut SmallRng, input: &[u8], other: &[u8], dict: &[&str], max_len: usize) -> Vec<u8> {
    let mut out = input.to_vec();
    let rounds = 1 + rng.random_range(0..4);
    for _ in 0..rounds {
        once(rng, &mut out, other, dict, max_len);
    }
    out.truncate(max_len);
    out
}

fn once(rng: &mut SmallRng, out: &mut Vec<u8>, other: &[u8], dict: &[&str], max_len: usize) {
    let pos = |rng: &mut SmallRng, len: usize| if len == 0 { 0 } else { rng.random_range(0..=len) };
    match rng.random_range(0..12) {
        // A bit flipped.
        0 if !out.is_empty() => {
            let i = rng.random_range(0..out.len());
            out[i] ^= 1 << rng.random_range(0..8);
        }
        // A byte replaced by an interesting one (invalid UTF-8, NUL, newline, brackets...).
        1 if !out.is_empty() => {
            const BYTES: &[u8] = b"\x00\xff\xc3\xe2\x80\n\r\t []=#\"\\'{}.,-+0123456789";
            let i = rng.random_range(0..out.len());
            out[i] = BYTES[rng.random_range(0..BYTES.len())];
        }
        // A range deleted.
        2 if !out.is_empty() => {
            let a = rng.random_range(0..out.len());
            let b = (a + rng.random_range(1..=64)).min(out.len());
            out.drain(a..b);
        }
        // A number replaced by an interesting one.
        3 | 4 => {
            let number = NUMBERS[rng.random_range(0..NUMBERS.len())].as_bytes();
            match find_number(rng, out) {
                Some((a, b)) => {
                    out.splice(a..b, number.iter().copied());
                }
                None => {
                    let at = pos(rng, out.len());
                    out.splice(at..at, number.iter().copied());
                }
            }
        }
        // A dictionary word inserted, or put in place of a word.
        5 | 6 if !dict.is_empty() => {
            let word = dict[rng.random_range(0..dict.len())].as_bytes();
            let at = pos(rng, out.len());
            if rng.random_bool(0.5) {
                let end = out[at..]
                    .iter()
                    .position(|b| b.is_ascii_whitespace() || *b == b'=')
                    .map_or(out.len(), |k| at + k);
                out.splice(at..end, word.iter().copied());
            } else {
                out.splice(at..at, word.iter().copied());
            }
        }
        // A range of this input copied elsewhere.
        7 if !out.is_empty() => {
            let a = rng.random_range(0..out.len());
            let b = (a + rng.random_range(1..=128)).min(out.len());
            let piece = out[a..b].to_vec();
            let at = pos(rng, out.len());
            out.splice(at..at, piece);
        }
        // A range of another entry spliced in.
        8 if !other.is_empty() => {
            let a = rng.random_range(0..other.len());
            let b = (a + rng.random_range(1..=256)).min(other.len());
            let at = pos(rng, out.len());
            let end = (at + rng.random_range(0..64)).min(out.len());
            out.splice(at..end, other[a..b].iter().copied());
        }
        // A line repeated many times.
        9 if !out.is_empty() => {
            let (a, b) = line_at(out, rng.random_range(0..out.len()));
            let line = out[a..b].to_vec();
            let times = rng.random_range(2..200).min(max_len / line.len().max(1));
            for _ in 0..times {
                out.splice(a..a, line.iter().copied());
            }
        }
        // A very long run of one byte (an overlong line, name or number).
        10 => {
            let byte = [b'a', b'9', b' ', b'[', b'"', b'\\', b'x'][rng.random_range(0..7)];
            let n = rng.random_range(100..=max_len.clamp(101, 1 << 16));
            let at = pos(rng, out.len());
            out.splice(at..at, std::iter::repeat_n(byte, n));
        }
        // Random bytes inserted.
        _ => {
            let n = rng.random_range(1..=8);
            let at = pos(rng, out.len());
            let bytes: Vec<u8> = (0..n).map(|_| rng.random()).collect();
            out.splice(at..at, bytes);
        }
    }
}

/// A run of digits somewhere in `out`.
fn find_number(rng: &mut SmallRng, out: &[u8]) -> Option<(usize, usize)> {
    if out.is_empty() {
        return None;
    }
    let start = rng.random_range(0..out.len());
    let a = (start..out.len()).chain(0..start).find(|&i| out[i].is_ascii_digit())?;
    let a = (0..=a)
        .rev()
        .take_while(|&i| out[i].is_ascii_digit())
        .last()
        .unwrap_or(a);
    let b = (a..out.len()).find(|&i| !out[i].is_ascii_digit()).unwrap_or(out.len());
    Some((a, b))
}

/// The line holding byte `i`, with its newline.
fn line_at(out: &[u8], i: usize) -> (usize, usize) {
    let a = out[..i].iter().rposition(|&b| b == b'\n').map_or(0, |k| k + 1);
    let b = out[i..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(out.len(), |k| i + k + 1);
    (a, b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn mutations_repeat_with_the_seed_and_stay_within_the_length() {
        let seed = b"time=1\n[filesystem]\nnum_files=10\n[end]\n";
        let run = |s| {
            let mut rng = SmallRng::seed_from_u64(s);
            (0..500)
                .map(|_| mutate(&mut rng, seed, b"other", &["[end]"], 4096))
                .collect::<Vec<_>>()
        };
        let a = run(1);
        assert_eq!(a, run(1));
        assert_ne!(a, run(2));
        assert!(a.iter().all(|m| m.len() <= 4096));
        assert!(a.iter().filter(|m| m.as_slice() != seed).count() > 400);
    }
}
