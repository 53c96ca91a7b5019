//! Checked blocks (`data = "checked"`), sysbench's `--validate` (`file_fill_buffer`,
//! `file_validate_buffer` in sysbench 1.0.20's `sb_fileio.c`): every block written carries
//! random bytes, then the CRC-32 (zlib's) of those bytes in 4 bytes and the block's offset in
//! the file in 8, both little-endian, as sysbench stores an `int` and a `long` on x86-64. Every
//! block read whole is checked against both, and a mismatch fails the read.
//!
//! A block is one transfer: the bytes of one `pwrite()`/`pread()` (or one copy to or from a
//! mapping, one io_uring request). A transfer shorter than the trailer carries random bytes and
//! is not checked; one cut short by the end of the file is not checked either.
//!
//! Two threads must not move the same block at once: a read beside a write may see half of
//! each and fail. sysbench's random requests draw again when another thread holds the block;
//! here a thread holds a claim on the block (a flag in a table shared by the process, picked
//! by the file and the offset) while it moves it, and one that meets a claim waits for it
//! (the pipelined io_uring loop, which has many blocks in flight, draws another instead).

use super::xorshift;
use serde::{Deserialize, Serialize};
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};

/// The checksum and the offset at the end of each block.
pub const TRAILER: usize = 12;

/// Fills `buf` as the block written at `offset`: random bytes from `state` (xorshift64), then
/// their CRC-32 and the offset.
pub fn stamp(buf: &mut [u8], offset: u64, state: &mut u64) {
    let body = buf.len().saturating_sub(TRAILER);
    let mut chunks = buf.chunks_exact_mut(8);
    for c in chunks.by_ref() {
        c.copy_from_slice(&xorshift(state).to_le_bytes());
    }
    let rest = chunks.into_remainder();
    let n = rest.len();
    rest.copy_from_slice(&xorshift(state).to_le_bytes()[..n]);
    if buf.len() < TRAILER {
        return;
    }
    let crc = crc32fast::hash(&buf[..body]);
    buf[body..body + 4].copy_from_slice(&crc.to_le_bytes());
    buf[body + 4..].copy_from_slice(&offset.to_le_bytes());
}

/// Checks `buf`, read whole at `offset`, as [`stamp`] wrote it: the CRC-32 of its bytes, then the
/// offset. A mismatch is `InvalidData`, its message the [`Mismatch`].
pub fn check(buf: &[u8], offset: u64) -> io::Result<()> {
    if buf.len() < TRAILER {
        return Ok(());
    }
    let (len, body) = (buf.len() as u64, buf.len() - TRAILER);
    let computed = crc32fast::hash(&buf[..body]);
    let stored = u32::from_le_bytes(buf[body..body + 4].try_into().expect("4 bytes"));
    let at = u64::from_le_bytes(buf[body + 4..].try_into().expect("8 bytes"));
    let wrong = if computed != stored {
        Mismatch::Checksum {
            len,
            offset,
            computed,
            stored,
        }
    } else if at != offset {
        Mismatch::Offset {
            len,
            offset,
            stored: at,
        }
    } else {
        return Ok(());
    };
    Err(io::Error::new(io::ErrorKind::InvalidData, wrong))
}

/// What a checked read found wrong with a block of `len` bytes at `offset`: the read's error,
/// and the cause the run's first error carries ([`Cause::Mismatch`](crate::result::Cause)), for
/// a front-end to say it as its original does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "found", rename_all = "snake_case")]
pub enum Mismatch {
    /// The CRC-32 of the block's bytes is not the one stored after them.
    Checksum {
        len: u64,
        offset: u64,
        computed: u32,
        stored: u32,
    },
    /// The checksum holds, but the block says it was written at another offset.
    Offset { len: u64, offset: u64, stored: u64 },
}

const CHECKSUM: &str = "checksum mismatch in the block of ";
const OFFSET: &str = "offset mismatch in the block of ";

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Mismatch::Checksum {
                len,
                offset,
                computed,
                stored,
            } => write!(
                f,
                "{CHECKSUM}{len} bytes at offset {offset}: computed 0x{computed:x}, stored 0x{stored:x} (the block \
                 was not written with checked data, or with another block size)"
            ),
            Mismatch::Offset { len, offset, stored } => {
                write!(
                    f,
                    "{OFFSET}{len} bytes at offset {offset}: it says it was written at {stored}"
                )
            }
        }
    }
}

impl std::error::Error for Mismatch {}

/// The table of claims: a block's claim is the flag its file and offset hash to. Blocks that
/// share a flag wait for each other too, which is rare and costs only time.
static CLAIMS: [AtomicBool; 4096] = [const { AtomicBool::new(false) }; 4096];

/// A thread's hold on a block, released when dropped.
#[derive(Debug)]
pub(crate) struct Claim(usize);

impl Drop for Claim {
    fn drop(&mut self) {
        CLAIMS[self.0].store(false, Ordering::Release);
    }
}

fn flag(file: u64, offset: u64) -> usize {
    let h = (file ^ offset.rotate_left(29)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (h >> 52) as usize % CLAIMS.len()
}

/// Claims the block at `offset` of `file` (an [`OpenFile`](super::OpenFile)'s `ident`) unless
/// another thread holds it.
pub(crate) fn try_claim(file: u64, offset: u64) -> Option<Claim> {
    let i = flag(file, offset);
    CLAIMS[i]
        .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
        .is_ok()
        // Made only when taken: a Claim dropped unused would free the other thread's flag.
        .then(|| Claim(i))
}

/// Claims the block, waiting while another thread holds it. A thread holds one such claim at a
/// time, so two waiting threads never hold what the other waits for.
pub(crate) fn claim(file: u64, offset: u64) -> Claim {
    loop {
        if let Some(c) = try_claim(file, offset) {
            return c;
        }
        std::thread::yield_now();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stamped_block_checks_and_a_changed_one_does_not() {
        let mut state = 7;
        let mut buf = vec![0u8; 4096];
        stamp(&mut buf, 8192, &mut state);
        check(&buf, 8192).unwrap();
        // sysbench's layout: CRC-32 of the first 4084 bytes, then the offset, little-endian.
        assert_eq!(buf[4084..4088], crc32fast::hash(&buf[..4084]).to_le_bytes());
        assert_eq!(buf[4088..], 8192u64.to_le_bytes());
        let e = check(&buf, 4096).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        assert!(e.to_string().contains("says it was written at 8192"), "{e}");
        buf[100] ^= 1;
        let e = check(&buf, 8192).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("checksum mismatch in the block of 4096 bytes at offset 8192"),
            "{e}"
        );
        assert_eq!(
            mismatch(&e).map(|m| matches!(m, Mismatch::Checksum { offset: 8192, .. })),
            Some(true)
        );
        // Zeros, as a file written without checksums holds, fail too.
        assert!(check(&[0u8; 512], 0).is_err());
        buf[100] ^= 1;
        let e = check(&buf, 4096).unwrap_err();
        assert_eq!(
            mismatch(&e),
            Some(Mismatch::Offset {
                len: 4096,
                offset: 4096,
                stored: 8192
            })
        );
        // The next block differs: the state goes on.
        let mut other = vec![0u8; 4096];
        stamp(&mut other, 8192, &mut state);
        assert_ne!(buf[..4084], other[..4084]);
    }

    /// The mismatch an error carries.
    fn mismatch(e: &io::Error) -> Option<Mismatch> {
        e.get_ref()?.downcast_ref::<Mismatch>().copied()
    }

    #[test]
    fn blocks_shorter_than_the_trailer_are_random_and_unchecked() {
        let mut state = 1;
        let mut buf = [0u8; 11];
        stamp(&mut buf, 0, &mut state);
        assert_ne!(buf, [0u8; 11]);
        check(&[0u8; 11], 0).unwrap();
    }

    #[test]
    fn a_claim_excludes_others_until_dropped() {
        // Another test's block may share the flag for a moment: claim() waits it out.
        let c = claim(1, 4096);
        assert!(try_claim(1, 4096).is_none());
        // A failed try takes nothing away from the holder.
        assert!(try_claim(1, 4096).is_none());
        drop(c);
        let again = claim(1, 4096);
        drop(again);
    }
}
