//! Streams: seqread, seqwrite and rewrite move one block per operation at a cursor, the
//! thread's own over its own file, or one the whole group shares over the whole fileset.

use super::ops::{transactions, Seek};
use super::{Outcome, Worker};
use crate::fileset::FileTable;
use crate::io::{seek_from, Dir, Xfer};
use crate::workload::{EngineKind, Group, OpKind, OpSpec, Scope};
use std::io as stdio;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// The cursors of the mix's streams, one of each kind per entry of the mix.
pub(super) struct Streams<'a> {
    /// This thread's own stream over its own file, once started.
    pub own: Vec<Option<Stream>>,
    /// The cursor the group's threads share over the whole fileset.
    pub shared: &'a [AtomicU64],
}

impl<'a> Streams<'a> {
    pub fn new(group: &Group, shared: &'a [AtomicU64]) -> Streams<'a> {
        Streams {
            own: group.ops.iter().map(|_| None).collect(),
            shared,
        }
    }
}

/// The cursor of a thread's own stream.
pub(super) struct Stream {
    pub(super) file: u64,
    pub(super) block: u64,
    pub(super) pass: u64,
}

impl<'a> Worker<'a> {
    /// Before the clock starts, empties the file of each of this thread's own seqwrite streams,
    /// as IOzone opens its writers' files with O_TRUNC before timing them (`-+F`); a file the
    /// setup has just made empty is only opened, as IOzone's writers open theirs `O_CREAT`.
    pub(super) fn prepare_streams(&mut self) -> stdio::Result<()> {
        let files = self.table.static_len();
        for (i, spec) in self.group.ops.iter().enumerate() {
            if spec.op != OpKind::SeqWrite || spec.scope == Some(Scope::Shared) || files == 0 {
                continue;
            }
            let file = self.thread_on_fileset % files;
            // A file the setup wrote is emptied, a sequential write making it from nothing. One
            // the setup did not write is either empty, made just now, or kept from an earlier
            // run (`reuse`), which the write goes over from its start, as IOzone's initial
            // writers open a file left by `-w`: O_CREAT without O_TRUNC.
            let truncate = self.table.spec.prealloc;
            let r = self.with_file(file, Dir::Write, |_, f, _, _| {
                if truncate {
                    rustix::fs::ftruncate(&f.fd, 0)
                } else {
                    Ok(())
                }
            });
            r.and_then(|r| r.map_err(stdio::Error::from))
                .map_err(|e| self.annotate(file, "seqwrite", e))?;
            // Its size now: 0, emptied or made empty; a kept file's, as it was found.
            let size = if !truncate && self.table.kept() { None } else { Some(0) };
            self.table.release(file, size);
            self.streams.own[i] = Some(Stream {
                file,
                block: 0,
                pass: 0,
            });
        }
        Ok(())
    }

    /// seqread, seqwrite, rewrite: one block per operation at the stream's cursor. A thread's own
    /// stream runs over file (thread mod files); a shared stream runs over the whole fileset with
    /// one cursor for the group. A thread's own seqwrite file was emptied before the clock started.
    pub(super) fn stream(&mut self, i: usize) -> stdio::Result<Outcome> {
        let spec: &OpSpec = &self.group.ops[i];
        let kind = spec.op;
        let bs = spec.block_size();
        let files = self.table.static_len();
        if files == 0 {
            return Ok(Outcome::StreamEnded);
        }
        let block = match spec.scope.unwrap_or_default() {
            Scope::Own => self.own_block(i),
            Scope::Shared => {
                let wrap = spec.wrap.unwrap_or(false);
                // With an extent, each file's first `extent` bytes (sysbench's file size).
                let flen = spec.extent.map_or_else(|| file_len(self.table, kind, 0), |e| e.0);
                let per_file = flen.div_ceil(bs);
                if per_file == 0 {
                    return Ok(Outcome::StreamEnded);
                }
                let blk = self.streams.shared[i].fetch_add(1, Relaxed);
                let pass = blk / (per_file * files);
                if pass > 0 && !wrap {
                    return Ok(Outcome::StreamEnded);
                }
                let within = blk % (per_file * files);
                let off = (within % per_file) * bs;
                Some(Block {
                    file: within / per_file,
                    offset: off,
                    len: bs.min(flen - off),
                    last: within % per_file == per_file - 1,
                })
            }
        };
        match block {
            Some(block) => self.stream_block(i, block),
            None => Ok(Outcome::StreamEnded),
        }
    }

    /// Moves `block` of stream `i` (and syncs its file after its last block, or after each with
    /// `sync_each`, when the stream asks): the operation's outcome.
    pub(super) fn stream_block(&mut self, i: usize, block: Block) -> stdio::Result<Outcome> {
        let spec: &OpSpec = &self.group.ops[i];
        let (kind, bs) = (spec.op, spec.block_size());
        let Block {
            file,
            offset,
            len,
            last,
        } = block;
        let dir = if kind == OpKind::SeqRead { Dir::Read } else { Dir::Write };
        if spec.reverse == Some(true) && self.group.engine == EngineKind::Seek {
            return self.backward_block(i, block);
        }
        self.io.xfers.clear();
        self.io.xfers.push(Xfer {
            offset,
            len: len as u32,
        });
        let sync = spec.sync.filter(|_| last || spec.sync_each == Some(true));
        let moved = self
            .move_blocks(file, dir, sync, Seek::IfNeeded)
            .map_err(|e| self.annotate(file, kind.name(), e))?;
        self.after_block(i, dir, file, offset, moved.bytes);
        Ok(Outcome::Done {
            bytes: moved.bytes,
            transactions: transactions(dir, &moved, &self.io.xfers, bs),
        })
    }

    /// A block of a backward read (`reverse`) on the `seek` engine, with the calls of IOzone
    /// 3.487's backward readers (`revread_perf_test`, `thread_reverse_read_test`): before the
    /// file's last block `lseek(-bs, SEEK_END)`, then after every block `read()` leaves the
    /// position at its end, `lseek(-2 bs, SEEK_CUR)` to the block before it. After block 0 that
    /// seek would go before the start of the file and fails (EINVAL), as IOzone's does; IOzone
    /// does not look, and neither does this.
    fn backward_block(&mut self, i: usize, block: Block) -> stdio::Result<Outcome> {
        use rustix::fs::SeekFrom;
        let spec: &OpSpec = &self.group.ops[i];
        let bs = spec.block_size();
        let Block { file, offset, len, .. } = block;
        let first = offset + len >= file_len(self.table, spec.op, file);
        self.io.xfers.clear();
        self.io.xfers.push(Xfer {
            offset,
            len: len as u32,
        });
        let result = self.with_file(file, Dir::Read, |backend, f, bufs, xfers| {
            if first {
                f.pos = seek_from(f.fd(), SeekFrom::End(-(len as i64)))?;
            }
            let (moved, result) = backend.transfer(f, Dir::Read, xfers, bufs);
            result?;
            match seek_from(f.fd(), SeekFrom::Current(-2 * bs as i64)) {
                Ok(pos) => f.pos = pos,
                Err(rustix::io::Errno::INVAL) => {}
                Err(e) => return Err(e.into()),
            }
            Ok::<_, stdio::Error>(moved)
        });
        let moved = result
            .and_then(|r| r)
            .map_err(|e| self.annotate(file, spec.op.name(), e))?;
        self.after_block(i, Dir::Read, file, offset, moved.bytes);
        Ok(Outcome::Done {
            bytes: moved.bytes,
            transactions: transactions(Dir::Read, &moved, &self.io.xfers, bs),
        })
    }

    /// The next block of this thread's own stream `i` over its own file, the cursor moved past
    /// it; none once the stream has ended (a stream that wraps starts its file again).
    pub(super) fn own_block(&mut self, i: usize) -> Option<Block> {
        let spec = &self.group.ops[i];
        let (kind, bs) = (spec.op, spec.block_size());
        let files = self.table.static_len();
        let first = self.thread_on_fileset % files;
        let s = self.streams.own[i].get_or_insert(Stream {
            file: first,
            block: 0,
            pass: 0,
        });
        let flen = file_len(self.table, kind, s.file);
        if let Some(stride) = spec.stride {
            return stride_block(s, flen, bs, stride);
        }
        if s.block * bs >= flen {
            if !spec.wrap.unwrap_or(false) || flen == 0 {
                return None;
            }
            s.block = 0;
            s.pass += 1;
        }
        let (start, end) = if spec.reverse == Some(true) {
            let end = flen - s.block * bs;
            (end.saturating_sub(bs), end)
        } else {
            (s.block * bs, (s.block * bs + bs).min(flen))
        };
        s.block += 1;
        Some(Block {
            file: s.file,
            offset: start,
            len: end - start,
            last: s.block * bs >= flen,
        })
    }

    /// After a block of stream `i` moved `bytes` at `offset` of `file`: a write that went past
    /// the file's end makes it that long; a read that found nothing ends the file's stream (the
    /// file is shorter than it was).
    fn after_block(&mut self, i: usize, dir: Dir, file: u64, offset: u64, bytes: u64) {
        if dir == Dir::Write && offset + bytes > self.table.static_size(file) {
            self.table.release(file, Some(offset + bytes));
        }
        if dir == Dir::Read && bytes == 0 {
            if let Some(s) = self.streams.own[i].as_mut() {
                s.block = u64::MAX / self.group.ops[i].block_size();
            }
        }
    }
}

/// One block of a stream: where it is, and whether it is its file's last (where a stream's `sync`
/// falls, as IOzone's -e fsyncs each file).
pub(super) struct Block {
    pub file: u64,
    pub offset: u64,
    pub len: u64,
    pub last: bool,
}

/// How long a stream's file is: what a seqwrite writes it to, or what it holds.
pub(super) fn file_len(t: &FileTable, kind: OpKind, file: u64) -> u64 {
    if kind == OpKind::SeqWrite {
        t.spec.size.max()
    } else {
        t.static_size(file)
    }
}

/// The next block of a stride stream (`s.block` the block to read now, `s.pass` the times it
/// started again), the cursor moved past it, as IOzone 3.487's read_stride_perf_test moves
/// `current_position`: one block on, then `stride - 1` more, unless that reaches the file's
/// last block, when it starts again at block `pass` (0 when the stride spans the file).
fn stride_block(s: &mut Stream, flen: u64, bs: u64, stride: u64) -> Option<Block> {
    let blocks = flen / bs;
    if blocks == 0 {
        return None;
    }
    let block = s.block.min(blocks - 1);
    let next = block + 1;
    s.block = if next.saturating_add(stride) >= blocks.saturating_sub(1) {
        s.pass += 1;
        if blocks <= stride {
            0
        } else {
            s.pass % blocks
        }
    } else {
        next + stride - 1
    };
    Some(Block {
        file: s.file,
        offset: block * bs,
        len: bs,
        last: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// IOzone 3.487's stride read of 64 records, stride 4 (its records under strace): 0, 4, ...,
    /// 60, then from 1, 2 and 3, and on again from 4.
    #[test]
    fn a_stride_stream_walks_the_records_as_iozone_does() {
        let mut s = Stream {
            file: 0,
            block: 0,
            pass: 0,
        };
        let records: Vec<u64> = (0..64)
            .map(|_| stride_block(&mut s, 64 * 4096, 4096, 4).unwrap().offset / 4096)
            .collect();
        let iozone: Vec<u64> = [
            (0..=60).step_by(4).collect::<Vec<_>>(),
            (1..=61).step_by(4).collect(),
            (2..=58).step_by(4).collect(),
            (3..=59).step_by(4).collect(),
            vec![4, 8],
        ]
        .concat();
        assert_eq!(records, iozone);
        // A stride past the file reads block 0 again and again; an empty file gives none.
        let mut s = Stream {
            file: 0,
            block: 0,
            pass: 0,
        };
        assert!((0..3).all(|_| stride_block(&mut s, 8192, 4096, u64::MAX).unwrap().offset == 0));
        assert!(stride_block(&mut s, 100, 4096, 4).is_none());
    }
}
