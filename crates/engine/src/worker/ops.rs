//! The operations of a mix, one function each: read and write at random offsets, whole files,
//! append, create, delete, stat, open and close, directories, rename, readdir, fsync, FFSB's
//! metaop and truncate, and how a file is opened (or found open) for them.

use super::error::Annotated;
use super::{Outcome, Worker};
use crate::calls::{self, Call};
use crate::confine;
use crate::fileset::{file_name, NameBuf, Picked, NAME_LEN};
use crate::io::{read_or_write, Backend, Buf, Dir, IoBuffers, Moved, OpenFile, Xfer};
use crate::workload::{EngineKind, OpKind, OpenMode, Order, Scope, ShuffleOrder, SyncKind};
use rand::RngExt;
use rustix::fs::{AtFlags, Mode, OFlags};
use std::ffi::CStr;
use std::io as stdio;
use std::os::fd::BorrowedFd;

/// How the `seek` engine moves a descriptor's position around a transfer (the others move
/// none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Seek {
    /// An `lseek()` before the transfer only where the position is not at its start.
    IfNeeded,
    /// An `lseek()` before the transfer wherever the position is (a random offset's seek, as
    /// IOzone's random children and FFSB make it).
    Before,
    /// Back to the transfer's start after it, so that a transfer there again needs none
    /// (`OpSpec::seek_back`, IOzone's record rewrite).
    Back,
}

impl<'a> Worker<'a> {
    pub(super) fn exec(&mut self, i: usize) -> stdio::Result<Outcome> {
        let spec = &self.group.ops[i];
        match spec.op {
            OpKind::Read | OpKind::Write => self.ranged(i),
            OpKind::ReadAll | OpKind::WriteAll => self.whole(i),
            OpKind::Append => self.append(i),
            OpKind::Create => self.create(i),
            OpKind::Delete => self.delete(i),
            OpKind::Stat => self.stat(i),
            OpKind::OpenClose => self.open_close(i),
            OpKind::Mkdir if spec.ffsb_calls => self.ffsb_createdir(),
            OpKind::Mkdir => self.mkdir(),
            OpKind::Rmdir => self.rmdir(),
            OpKind::Rename => self.rename(),
            OpKind::Readdir => self.readdir(),
            OpKind::Truncate => self.truncate(i),
            OpKind::SeqRead | OpKind::SeqWrite | OpKind::Rewrite => self.stream(i),
            OpKind::Fsync => self.fsync_one(),
            OpKind::MetaOp => self.metaop(),
        }
    }

    pub(super) fn annotate(&self, id: u64, what: &str, e: stdio::Error) -> stdio::Error {
        Annotated::wrap(e, what, self.table.describe(id))
    }

    pub(super) fn open(&self, id: u64, mut flags: OFlags) -> stdio::Result<OpenFile> {
        let mut b: NameBuf = [0; NAME_LEN];
        let (dir, name) = self.table.locate(id, &mut b);
        if self.table.spec.made_by_workers() || self.group.open_creates {
            // The setup left the file to the worker, which makes it as IOzone's child does; or
            // the group opens files as IOzone's random writers do.
            flags |= OFlags::CREATE;
        }
        let mode = Mode::from_raw_mode(self.table.spec.file_mode());
        let ident = self.ident(id);
        calls::time(Call::Open, || rustix::fs::openat(dir, name, flags, mode))
            .map(|fd| OpenFile::new(fd).with_ident(ident))
            .map_err(|e| {
                if e == rustix::io::Errno::LOOP {
                    stdio::Error::new(
                        stdio::ErrorKind::PermissionDenied,
                        "is a symlink; fslab does not follow symlinks",
                    )
                } else {
                    e.into()
                }
            })
    }

    /// File `id` of the current fileset as every thread names it: the table they share, and
    /// the file's id in it.
    fn ident(&self, id: u64) -> u64 {
        (self.table as *const _ as u64).rotate_left(32) ^ id
    }

    /// The key of file `id` of the current fileset in the fd cache.
    fn cache_key(&self, id: u64) -> u64 {
        (self.cur as u64) << 48 | id
    }

    /// Where file `id` is in the cache of open files (`OpenMode::Keep`, `Shared`), opened now
    /// if it is not there yet (with `Shared`, the run's descriptor taken).
    #[inline]
    pub(super) fn kept_open(&mut self, id: u64) -> stdio::Result<usize> {
        match self.io.cache.find(self.cache_key(id)) {
            Some(slot) => Ok(slot),
            None => self.open_kept(id),
        }
    }

    /// [`kept_open`](Self::kept_open) when the file is not in the cache: out of line, so that
    /// the lookup stays small where it is inlined.
    #[inline(never)]
    fn open_kept(&mut self, id: u64) -> stdio::Result<usize> {
        let file = match self.opened.get(id as usize) {
            Some(shared) => OpenFile::shared(shared).with_ident(self.ident(id)),
            None => self.open(id, self.io.keep_flags)?,
        };
        Ok(self.io.cache.insert(self.cache_key(id), file))
    }

    /// Runs `f` on file `id`, open for reading and writing as the group needs: from the cache
    /// when files stay open, or opened and closed around it.
    pub(super) fn with_file<T>(
        &mut self,
        id: u64,
        dir: Dir,
        f: impl FnOnce(&mut dyn Backend, &mut OpenFile, &mut IoBuffers, &mut Vec<Xfer>) -> T,
    ) -> stdio::Result<T> {
        match self.group.open {
            OpenMode::Keep | OpenMode::Shared => {
                let slot = self.kept_open(id)?;
                let file = &mut self.io.cache.entries[slot].1;
                Ok(f(self.io.backend.as_mut(), file, &mut self.io.bufs, &mut self.io.xfers))
            }
            OpenMode::PerOp => {
                let access = match (dir, self.group.engine) {
                    _ if self.group.rdwr => OFlags::RDWR,
                    (Dir::Read, _) => OFlags::RDONLY,
                    // A mapping needs a readable descriptor even to write.
                    (Dir::Write, EngineKind::Mmap) => OFlags::RDWR,
                    (Dir::Write, _) => OFlags::WRONLY,
                };
                let mut file = self.open(id, self.io.base_flags | access)?;
                let out = f(
                    self.io.backend.as_mut(),
                    &mut file,
                    &mut self.io.bufs,
                    &mut self.io.xfers,
                );
                file.close();
                Ok(out)
            }
        }
    }

    /// Moves the transfers in `self.io.xfers` on file `id`, then syncs if the op asks; `seek`
    /// says how the `seek` engine moves the descriptor's position around them.
    #[inline(always)]
    pub(super) fn move_blocks(
        &mut self,
        id: u64,
        dir: Dir,
        sync: Option<SyncKind>,
        seek: Seek,
    ) -> stdio::Result<Moved> {
        let (moved, result) = self.with_file(id, dir, |backend, file, bufs, xfers| {
            if seek == Seek::Before {
                file.forget_position();
            }
            let (moved, mut result) = backend.transfer(file, dir, xfers, bufs);
            if let (Ok(()), Seek::Back) = (&result, seek) {
                match crate::io::seek(file.fd(), xfers[0].offset) {
                    Ok(pos) => file.pos = pos,
                    Err(e) => result = Err(e.into()),
                }
            }
            if let (Ok(()), Some(kind)) = (&result, sync) {
                result = backend.sync(file, kind);
            }
            (moved, result)
        })?;
        result.map(|()| moved)
    }

    /// Moves the transfers `blocks` gives on file `id` for entry `i` of the mix, a batch at a
    /// time, then syncs if the op asks: (what moved, its FFSB transactions). `seek`: the first
    /// transfer seeks even where the descriptor's position already is (the `seek` engine's
    /// random offset, as IOzone's lseek before each random record).
    fn move_all(
        &mut self,
        i: usize,
        id: u64,
        dir: Dir,
        sync: Option<SyncKind>,
        (blocks, bs): (&mut dyn Blocks, u64),
        seek: bool,
    ) -> stdio::Result<(Moved, u64)> {
        let stop = &self.shared.stop;
        let table = self.table;
        let seeking = self.group.ops[i].ffsb_calls;
        // FFSB's read_skip reads skip each gap with lseek(SEEK_CUR), after every whole block.
        let skip = self.group.ops[i].skip.filter(|_| seeking).map_or(0, |s| s.0);
        // A file opened for this operation is at offset 0; a kept one anywhere.
        let start = if self.group.open == OpenMode::PerOp {
            0
        } else {
            u64::MAX
        };
        let (moved, tx, result) = self.with_file(id, dir, |backend, file, bufs, xfers| {
            if seek {
                file.forget_position();
            }
            if seeking {
                // FFSB's ffsb_get_filesize(): stat() by name once the file is open.
                let mut b: NameBuf = [0; NAME_LEN];
                let (at, name) = table.locate(id, &mut b);
                if let Err(e) = rustix::fs::statat(at, name, AtFlags::empty()) {
                    return (Moved::default(), 0, Err(e.into()));
                }
            }
            let pos = seeking.then_some(start);
            let (moved, tx, mut result) =
                transfer_all(backend, file, dir, (xfers, bufs), (blocks, bs, pos, skip), stop);
            if let (Ok(()), Some(kind)) = (&result, sync) {
                result = backend.sync(file, kind);
            }
            (moved, tx, result)
        })?;
        result.map(|()| (moved, tx))
    }

    /// read and write: `size` bytes in `bs` blocks, in `seeks` runs at random offsets, with
    /// `skip` bytes left between blocks. A write never goes past the end of the file.
    fn ranged(&mut self, i: usize) -> stdio::Result<Outcome> {
        let spec = &self.group.ops[i];
        if let Some(extent) = spec.extent.filter(|_| self.table.static_len() > 0) {
            return self.end_to_end(i, extent.0);
        }
        let own = spec.scope == Some(Scope::Own) && self.table.static_len() > 0;
        let picked = if own {
            // The thread's own file, as IOzone's children each work on theirs.
            let id = self.thread_on_fileset % self.table.static_len();
            Some(Picked {
                id,
                size: self.table.static_size(id),
            })
        } else {
            self.table.pick(&mut self.rng)
        };
        let Some(Picked { id, size: fsize }) = picked else {
            return Ok(Outcome::Skipped);
        };
        let dir = if spec.op == OpKind::Read { Dir::Read } else { Dir::Write };
        let bs = spec.block_size();
        let want = spec.size.map_or(bs, |s| s.0).min(fsize);
        if want == 0 {
            // An empty file has nothing to read or overwrite.
            self.table.release(id, None);
            return Ok(Outcome::Skipped);
        }
        let shuffle = spec.shuffle == Some(true);
        let align = spec.align.map_or(bs, |a| a.0).max(1);
        let from_start = spec.from_start == Some(true);
        if want <= bs && !spec.ffsb_calls && !from_start {
            // One block at a random offset, the commonest operation (fio's, sysbench's): the
            // transfer `Runs` would give, moved without its batches; with `shuffle`, from the
            // file's deck. Through `Runs`, a 4 KiB pread ran some 370 instructions more
            // (callgrind).
            let xfer = if shuffle {
                let deck = self.decks.get(i, id, spec.shuffle_order == Some(ShuffleOrder::Iozone));
                one_block(&mut self.rng, Some(deck), fsize, want, align)
            } else {
                one_block(&mut self.rng, None, fsize, want, align)
            };
            return self.one_transfer(i, id, xfer);
        }
        let blocks = want.div_ceil(bs);
        let seeks = spec.seeks.unwrap_or(1).max(1) as u64;
        let mut runs = Runs {
            rng: self.rng.clone(),
            deck: shuffle.then(|| self.decks.lend(i, id, spec.shuffle_order == Some(ShuffleOrder::Iozone))),
            left: want,
            per_run: blocks.div_ceil(seeks).max(1),
            bs,
            skip: spec.skip.map_or(0, |s| s.0),
            from_start,
            align,
            fsize,
            off: 0,
            run_left: 0,
            ended: false,
            starts: std::mem::take(&mut self.io.run_starts),
        };
        let result = self.move_all(i, id, dir, spec.sync, (&mut runs, bs), true);
        // The offsets were drawn from a copy of the thread's generator (and the file's deck): it
        // goes on from there.
        self.rng = runs.rng;
        if let Some(deck) = runs.deck {
            self.decks.give_back(deck);
        }
        self.io.run_starts = runs.starts;
        self.table.release(id, None);
        let (moved, transactions) = result.map_err(|e| self.annotate(id, spec.op.name(), e))?;
        Ok(Outcome::Done {
            bytes: moved.bytes,
            transactions,
        })
    }

    /// read and write with an `extent`: one block at an offset drawn over the files laid end to
    /// end, `extent` bytes each, and aligned there, cut short at the end of the file it falls
    /// in, as sysbench 1.0.20 draws its random requests (`file_get_rand_req()`).
    fn end_to_end(&mut self, i: usize, extent: u64) -> stdio::Result<Outcome> {
        let spec = &self.group.ops[i];
        let bs = spec.block_size();
        let align = spec.align.map_or(bs, |a| a.0).max(1);
        let at = self.rng.random_range(0..extent.saturating_mul(self.table.static_len()));
        let at = at - at % align;
        let (id, offset) = (at / extent, at % extent);
        let len = bs.min(extent - offset) as u32;
        self.one_transfer(i, id, Xfer { offset, len })
    }

    /// Entry `i` of the mix (a read or write) as the one transfer `xfer` on file `id`, which
    /// the operation picked: moved (with the `seek` engine's lseek before it, or with
    /// `seek_back` after it), the file released.
    #[inline(always)]
    fn one_transfer(&mut self, i: usize, id: u64, xfer: Xfer) -> stdio::Result<Outcome> {
        let spec = &self.group.ops[i];
        let dir = if spec.op == OpKind::Read { Dir::Read } else { Dir::Write };
        self.io.xfers.clear();
        self.io.xfers.push(xfer);
        let back = spec.seek_back && self.group.engine == EngineKind::Seek;
        let seek = if back { Seek::Back } else { Seek::Before };
        let result = self.move_blocks(id, dir, spec.sync, seek);
        self.table.release(id, None);
        let moved = result.map_err(|e| self.annotate(id, spec.op.name(), e))?;
        Ok(Outcome::Done {
            bytes: moved.bytes,
            transactions: transactions(dir, &moved, &self.io.xfers, spec.block_size()),
        })
    }

    /// readall and writeall: the whole file.
    fn whole(&mut self, i: usize) -> stdio::Result<Outcome> {
        let Some(Picked { id, size }) = self.table.pick(&mut self.rng) else {
            return Ok(Outcome::Skipped);
        };
        let spec = &self.group.ops[i];
        let dir = if spec.op == OpKind::ReadAll {
            Dir::Read
        } else {
            Dir::Write
        };
        let bs = spec.block_size();
        let result = self.move_all(
            i,
            id,
            dir,
            spec.sync,
            (&mut Sequential { off: 0, to: size, bs }, bs),
            false,
        );
        self.table.release(id, None);
        let (moved, transactions) = result.map_err(|e| self.annotate(id, spec.op.name(), e))?;
        Ok(Outcome::Done {
            bytes: moved.bytes,
            transactions,
        })
    }

    /// append: `size` bytes at the end, through an O_APPEND descriptor.
    fn append(&mut self, i: usize) -> stdio::Result<Outcome> {
        let Some(Picked { id, size }) = self.table.pick(&mut self.rng) else {
            return Ok(Outcome::Skipped);
        };
        let spec = &self.group.ops[i];
        let bs = spec.block_size();
        let want = spec.size.map_or(bs, |s| s.0);
        let result = (|| {
            let mut file = self.open(id, self.io.base_flags | OFlags::WRONLY | OFlags::APPEND)?;
            let mut moved = Moved::default();
            let mut left = want;
            while left > 0 {
                let len = bs.min(left) as usize;
                let n = read_or_write(file.fd(), Buf::Write(self.io.bufs.slot(0, len)))?;
                moved.add(len as u32, n);
                left -= n as u64;
            }
            if let Some(kind) = spec.sync {
                self.io.backend.sync(&mut file, kind)?;
            }
            file.close();
            Ok::<_, stdio::Error>(moved)
        })();
        let grown = result.as_ref().map_or(0, |m| m.bytes);
        self.table.release(id, Some(size + grown));
        let moved = result.map_err(|e| self.annotate(id, "append", e))?;
        Ok(Outcome::Done {
            bytes: moved.bytes,
            transactions: moved.calls,
        })
    }

    /// create: a new file at a size drawn from the fileset, written in `bs` blocks.
    fn create(&mut self, i: usize) -> stdio::Result<Outcome> {
        let spec = &self.group.ops[i];
        let id = self.table.create_id(&mut self.rng);
        let size = self.table.spec.size.sample(&mut self.rng);
        let bs = spec.block_size();
        let mut base = self.io.base_flags;
        if spec.buffered_create {
            base.remove(OFlags::DIRECT);
        }
        let flags = if spec.ffsb_calls {
            // FFSB's fhopencreate(). The name is a fresh one or a deleted file's
            // (`reuse_names`), so O_TRUNC truncates nothing: the kernel skips it for a file
            // the open created. Only what a failed create of this run left is truncated.
            base | OFlags::RDWR | OFlags::CREATE | OFlags::TRUNC
        } else {
            base | OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL
        };
        let stop = &self.shared.stop;
        let result = (|| {
            let mut file = self.open(id, flags)?;
            let mut moved = Moved::default();
            if size > 0 {
                let io = &mut self.io;
                let mut blocks = Sequential { off: 0, to: size, bs };
                let r;
                (moved, _, r) = transfer_all(
                    io.backend.as_mut(),
                    &mut file,
                    Dir::Write,
                    (&mut io.xfers, &mut io.bufs),
                    (&mut blocks, bs, spec.ffsb_calls.then_some(0), 0),
                    stop,
                );
                r?;
            }
            if let Some(kind) = spec.sync {
                self.io.backend.sync(&mut file, kind)?;
            }
            file.close();
            Ok::<_, stdio::Error>(moved)
        })();
        let moved = match result {
            Ok(moved) => moved,
            Err(e) => {
                self.table.gone(id);
                return Err(self.annotate(id, "create", e));
            }
        };
        self.table.insert(id, moved.bytes);
        Ok(Outcome::Done {
            bytes: moved.bytes,
            transactions: moved.calls,
        })
    }

    /// The file for entry `i` of the mix to work on by name and give back: at random, or the
    /// next in order.
    #[inline]
    fn pick_for(&mut self, i: usize) -> Option<u64> {
        match self.group.ops[i].order.unwrap_or_default() {
            Order::Random => self.table.pick_id(&mut self.rng),
            Order::Sequential => self.table.pick_next(),
        }
    }

    fn delete(&mut self, i: usize) -> stdio::Result<Outcome> {
        let taken = match self.group.ops[i].order.unwrap_or_default() {
            Order::Random => self.table.take(&mut self.rng),
            Order::Sequential => self.table.take_next(),
        };
        let Some(Picked { id, size }) = taken else {
            return Ok(Outcome::Skipped);
        };
        self.io.cache.evict(self.cache_key(id));
        let mut b: NameBuf = [0; NAME_LEN];
        let (dir, name) = self.table.locate(id, &mut b);
        match calls::time(Call::Unlink, || rustix::fs::unlinkat(dir, name, AtFlags::empty())) {
            Ok(()) => {
                self.table.gone(id);
                Ok(Outcome::META)
            }
            Err(e) => {
                self.table.insert(id, size);
                Err(self.annotate(id, "delete", e.into()))
            }
        }
    }

    fn stat(&mut self, i: usize) -> stdio::Result<Outcome> {
        let Some(id) = self.pick_for(i) else {
            return Ok(Outcome::Skipped);
        };
        let mut b: NameBuf = [0; NAME_LEN];
        let (dir, name) = self.table.locate(id, &mut b);
        // stat(), which follows a link, as FFSB's, fio's filestat and mdtest's stat.
        let r = calls::time(Call::Stat, || rustix::fs::statat(dir, name, AtFlags::empty()));
        self.table.release(id, None);
        r.map_err(|e| self.annotate(id, "stat", e.into()))?;
        Ok(Outcome::META)
    }

    fn open_close(&mut self, i: usize) -> stdio::Result<Outcome> {
        let Some(id) = self.pick_for(i) else {
            return Ok(Outcome::Skipped);
        };
        let r = self.open(id, self.io.base_flags | OFlags::RDONLY);
        self.table.release(id, None);
        r.map_err(|e| self.annotate(id, "open", e))?.close();
        Ok(Outcome::META)
    }

    fn meta_dir(&self) -> stdio::Result<BorrowedFd<'a>> {
        self.table
            .meta()
            .ok_or_else(|| stdio::Error::other("the fileset has no meta directory"))
    }

    fn mkdir(&mut self) -> stdio::Result<Outcome> {
        let meta = self.meta_dir()?;
        let id = self.table.new_dir_id();
        let mut b: NameBuf = [0; NAME_LEN];
        let mode = Mode::from_raw_mode(self.table.spec.dir_mode());
        rustix::fs::mkdirat(meta, file_name("m", id, &mut b), mode)
            .map_err(|e| stdio::Error::new(stdio::Error::from(e).kind(), format!("mkdir meta/m{id}: {e}")))?;
        self.table.made_dir(id);
        Ok(Outcome::META)
    }

    /// FFSB's createdir: the fileset's next added directory ([`FileTable::add_dir`]).
    fn ffsb_createdir(&mut self) -> stdio::Result<Outcome> {
        self.table.add_dir().map_err(|e| {
            let spec = &self.table.spec;
            let n = spec.dirs + self.table.dirs_added();
            stdio::Error::new(
                e.kind(),
                format!("createdir {}/{}{n}: {e}", spec.dir_name(), spec.dir_prefix),
            )
        })?;
        Ok(Outcome::META)
    }

    fn rmdir(&mut self) -> stdio::Result<Outcome> {
        let meta = self.meta_dir()?;
        let Some(id) = self.table.take_dir(&mut self.rng) else {
            return Ok(Outcome::Skipped);
        };
        let mut b: NameBuf = [0; NAME_LEN];
        rustix::fs::unlinkat(meta, file_name("m", id, &mut b), AtFlags::REMOVEDIR)
            .map_err(|e| stdio::Error::new(stdio::Error::from(e).kind(), format!("rmdir meta/m{id}: {e}")))?;
        Ok(Outcome::META)
    }

    /// rename: a file gets a new name, possibly in another directory of the fileset.
    fn rename(&mut self) -> stdio::Result<Outcome> {
        let Some(Picked { id, size }) = self.table.take(&mut self.rng) else {
            return Ok(Outcome::Skipped);
        };
        self.io.cache.evict(self.cache_key(id));
        let to = self.table.new_id();
        let (mut a, mut b): (NameBuf, NameBuf) = ([0; NAME_LEN], [0; NAME_LEN]);
        let (from_dir, from) = self.table.locate(id, &mut a);
        let (to_dir, to_name) = self.table.locate(to, &mut b);
        let r = rustix::fs::renameat(from_dir, from, to_dir, to_name);
        match r {
            Ok(()) => {
                self.table.insert(to, size);
                Ok(Outcome::META)
            }
            Err(e) => {
                self.table.insert(id, size);
                Err(self.annotate(id, "rename", e.into()))
            }
        }
    }

    /// readdir: lists one of the fileset's directories.
    fn readdir(&mut self) -> stdio::Result<Outcome> {
        let k = self.rng.random_range(0..self.table.dir_count());
        let dir = self.table.dir(k);
        let fd = confine::reopen_dir(dir)?;
        let mut entries = 0u64;
        for e in rustix::fs::Dir::new(fd)? {
            e?;
            entries += 1;
        }
        std::hint::black_box(entries);
        Ok(Outcome::META)
    }

    /// fsync: one file of the fileset.
    fn fsync_one(&mut self) -> stdio::Result<Outcome> {
        let Some(Picked { id, .. }) = self.table.pick(&mut self.rng) else {
            return Ok(Outcome::Skipped);
        };
        let r = self.with_file(id, Dir::Write, |backend, file, _, _| {
            backend.sync(file, SyncKind::Fsync)
        });
        self.table.release(id, None);
        r.and_then(|r| r).map_err(|e| self.annotate(id, "fsync", e))?;
        Ok(Outcome::META)
    }

    /// FFSB's metaop, in the fileset's meta directory (`metaops.c`): two directories made, one
    /// of the live ones removed and one renamed, each chosen at random, named and taken again
    /// as FFSB's list does ([`crate::meta_dirs`]). One transaction, as FFSB counts it.
    fn metaop(&mut self) -> stdio::Result<Outcome> {
        let meta = self.meta_dir()?;
        let table = self.table;
        let fail = |what: &str, name: &CStr, e: rustix::io::Errno| {
            let name = name.to_string_lossy();
            stdio::Error::new(stdio::Error::from(e).kind(), format!("metaop: {what} meta/{name}: {e}"))
        };
        let mode = Mode::from_raw_mode(table.spec.dir_mode());
        for _ in 0..2 {
            let (n, name) = {
                let mut d = table.meta_dirs();
                let n = d.create();
                (n, d.name(n))
            };
            let r = rustix::fs::mkdirat(meta, &name, mode);
            table.meta_dirs().release(n);
            r.map_err(|e| fail("mkdir", &name, e))?;
        }
        let taken = {
            let mut d = table.meta_dirs();
            d.choose(&mut self.rng).map(|n| {
                d.remove(n);
                (n, d.name(n))
            })
        };
        if let Some((n, name)) = taken {
            rustix::fs::unlinkat(meta, &name, AtFlags::REMOVEDIR).map_err(|e| fail("rmdir", &name, e))?;
            table.meta_dirs().hole(n);
        }
        let renamed = {
            let mut d = table.meta_dirs();
            d.choose(&mut self.rng).map(|n| (n, d.rename(n), d.name(n)))
        };
        if let Some((n, old, new)) = renamed {
            let r = rustix::fs::renameat(meta, &old, meta, &new);
            table.meta_dirs().release(n);
            r.map_err(|e| fail("rename", &old, e))?;
        }
        Ok(Outcome::META)
    }

    /// truncate: sets a file's size to `size`, or to one drawn from the fileset.
    fn truncate(&mut self, i: usize) -> stdio::Result<Outcome> {
        let Some(Picked { id, .. }) = self.table.pick(&mut self.rng) else {
            return Ok(Outcome::Skipped);
        };
        let to = match self.group.ops[i].size {
            Some(s) => s.0,
            None => self.table.spec.size.sample(&mut self.rng),
        };
        let r = self.with_file(id, Dir::Write, |_, file, _, _| rustix::fs::ftruncate(&file.fd, to));
        let ok = matches!(r, Ok(Ok(())));
        self.table.release(id, ok.then_some(to));
        r.and_then(|r| r.map_err(stdio::Error::from))
            .map_err(|e| self.annotate(id, "truncate", e))?;
        Ok(Outcome::META)
    }
}

/// FFSB's transactions: every write call counts; a read counts only when it moved a whole
/// block of `bs` (so a short read at the end of a file is none).
pub(super) fn transactions(dir: Dir, moved: &Moved, xfers: &[Xfer], bs: u64) -> u64 {
    match dir {
        Dir::Read => {
            let short = xfers
                .iter()
                .take(moved.calls as usize)
                .filter(|x| (x.len as u64) < bs)
                .count() as u64;
            moved.whole_calls.saturating_sub(short)
        }
        Dir::Write => moved.calls,
    }
}

/// The most transfers a thread holds at once. An operation with more (a file of terabytes
/// written whole) is moved a batch at a time, so that a thread's memory stays its buffers
/// whatever the sizes; the run's stop ends it between two batches.
pub(super) const BATCH: usize = 1024;

/// Where an operation's blocks go, given a batch at a time.
pub(super) trait Blocks {
    /// Appends up to `max` transfers to `xfers`; none when the operation has no more.
    fn fill(&mut self, xfers: &mut Vec<Xfer>, max: usize);

    /// The transfers of the last `fill` (indices, ascending) before which FFSB's calls seek
    /// even when the file offset is already there.
    fn forced_seeks(&self) -> &[usize] {
        &[]
    }
}

/// `[off, to)` in blocks of `bs`.
struct Sequential {
    off: u64,
    to: u64,
    bs: u64,
}

impl Blocks for Sequential {
    fn fill(&mut self, xfers: &mut Vec<Xfer>, max: usize) {
        while self.off < self.to && xfers.len() < max {
            let len = self.bs.min(self.to - self.off);
            xfers.push(Xfer {
                offset: self.off,
                len: len as u32,
            });
            self.off += len;
        }
    }
}

/// read and write: `left` bytes in runs of `per_run` blocks of `bs`, each run at a random
/// offset (a multiple of `align`) with `skip` bytes between its blocks, within a file of `fsize`.
struct Runs {
    rng: rand::rngs::SmallRng,
    /// With `shuffle`, where the runs' starts come from.
    deck: Option<super::deck::Deck>,
    left: u64,
    per_run: u64,
    bs: u64,
    skip: u64,
    /// Runs start at the file's first byte.
    from_start: bool,
    align: u64,
    fsize: u64,
    /// The next block of the current run, and what the run has left to move.
    off: u64,
    run_left: u64,
    ended: bool,
    /// The runs the last fill started at a drawn offset: FFSB seeks there whatever the offset.
    starts: Vec<usize>,
}

impl Blocks for Runs {
    fn forced_seeks(&self) -> &[usize] {
        &self.starts
    }

    fn fill(&mut self, xfers: &mut Vec<Xfer>, max: usize) {
        self.starts.clear();
        while !self.ended && xfers.len() < max {
            if self.run_left == 0 {
                if self.left == 0 {
                    self.ended = true;
                    break;
                }
                let run_blocks = self.per_run.min(self.left.div_ceil(self.bs));
                let run_bytes = (run_blocks * self.bs).min(self.left);
                let span = run_bytes + (run_blocks - 1) * self.skip;
                let room = self.fsize.saturating_sub(span);
                self.off = if room == 0 || self.from_start {
                    0
                } else {
                    self.starts.push(xfers.len());
                    random_start(&mut self.rng, self.deck.as_mut(), room, self.align)
                };
                self.run_left = run_bytes;
            }
            if self.off >= self.fsize {
                // The run does not fit the file: the operation ends here.
                self.ended = true;
                break;
            }
            let len = self.bs.min(self.run_left).min(self.fsize - self.off);
            xfers.push(Xfer {
                offset: self.off,
                len: len as u32,
            });
            self.run_left -= len;
            self.left -= len;
            self.off += len + self.skip;
        }
    }
}

/// A run's start at random, a multiple of `align` from 0 to `room`: from the file's deck (each
/// slot once per pass) when the op shuffles.
#[inline]
fn random_start(rng: &mut rand::rngs::SmallRng, deck: Option<&mut super::deck::Deck>, room: u64, align: u64) -> u64 {
    // A division takes tens of cycles on every operation's path; an alignment is nearly always
    // a power of two.
    let last = if align.is_power_of_two() {
        room >> align.trailing_zeros()
    } else {
        room / align
    };
    let slot = match deck {
        Some(deck) => deck.draw(last + 1, rng),
        None => rng.random_range(0..=last),
    };
    slot * align
}

/// The transfer of a read or write of `want` bytes, at most a block, at a random offset (a
/// multiple of `align`) in a file of `fsize` bytes: what [`Runs`] gives for one block, drawn
/// from `rng` (and the file's `deck`, when the op shuffles) as it draws.
#[inline]
fn one_block(
    rng: &mut rand::rngs::SmallRng,
    deck: Option<&mut super::deck::Deck>,
    fsize: u64,
    want: u64,
    align: u64,
) -> Xfer {
    let offset = match fsize - want {
        0 => 0,
        room => random_start(rng, deck, room, align),
    };
    Xfer {
        offset,
        len: want as u32,
    }
}

/// Moves every transfer `blocks` gives (in blocks of `bs`) on `file`, [`BATCH`] at a time (or the backend's depth,
/// when larger), until they run out, a read meets the end of the file, a transfer fails or the
/// run stops: (what moved, its FFSB transactions, how it ended). With `pos` (the file offset,
/// `u64::MAX` when unknown) it moves them with FFSB's calls instead of the backend's: `lseek()`
/// where needed, then `read()`/`write()`; with a `skip` too, each gap is an `lseek(SEEK_CUR)`,
/// made after every whole block, the last one included, as FFSB's read_skip loop makes it.
fn transfer_all(
    backend: &mut dyn Backend,
    file: &mut OpenFile,
    dir: Dir,
    (xfers, bufs): (&mut Vec<Xfer>, &mut IoBuffers),
    (blocks, bs, mut pos, skip): (&mut dyn Blocks, u64, Option<u64>, u64),
    stop: &std::sync::atomic::AtomicBool,
) -> (Moved, u64, stdio::Result<()>) {
    let batch = BATCH.max(bufs.slots());
    let mut total = Moved::default();
    let mut tx = 0;
    let mut last_whole = false;
    loop {
        xfers.clear();
        blocks.fill(xfers, batch);
        if xfers.is_empty() {
            if let (Some(_), true, true) = (pos, skip > 0, last_whole) {
                if let Err(e) = crate::io::seek_by(file.fd(), skip) {
                    return (total, tx, Err(e.into()));
                }
            }
            return (total, tx, Ok(()));
        }
        last_whole = xfers.last().is_some_and(|x| x.len as u64 == bs);
        let (moved, result) = match pos.as_mut() {
            Some(p) => crate::io::seek_transfer(file, dir, xfers, bufs, (p, blocks.forced_seeks(), skip > 0)),
            None => backend.transfer(file, dir, xfers, bufs),
        };
        total.bytes += moved.bytes;
        total.calls += moved.calls;
        total.whole_calls += moved.whole_calls;
        total.eof |= moved.eof;
        tx += transactions(dir, &moved, xfers, bs);
        // The run's end cuts an operation short between batches, but not FFSB's skip reads,
        // which FFSB makes whole (a few blocks each).
        if result.is_err() || moved.eof || (skip == 0 && stop.load(std::sync::atomic::Ordering::Relaxed)) {
            return (total, tx, result);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::deck::Deck;
    use super::*;
    use rand::SeedableRng;

    /// The one-block path gives the transfer `Runs` gives, and leaves the generator (and the
    /// file's deck, when the op shuffles) where `Runs` leaves them, for every size, block,
    /// alignment and skip, draw after draw.
    #[test]
    fn one_block_is_what_runs_gives_for_one_block() {
        for seed in 0..40u64 {
            for fsize in [1u64, 511, 4096, 4097, 65536, 1 << 30, (1 << 30) + 3] {
                for (bs, align, skip) in [(4096, 4096, 0), (16384, 512, 0), (4096, 1, 8192), (512, 4096, 0)] {
                    for size in [bs, bs / 2, 1] {
                        for shuffle in [false, true] {
                            one_block_against_runs(seed, fsize, (bs, align, skip), size, shuffle);
                        }
                    }
                }
            }
        }
    }

    fn one_block_against_runs(seed: u64, fsize: u64, (bs, align, skip): (u64, u64, u64), size: u64, shuffle: bool) {
        let want = size.min(fsize);
        let mut a = rand::rngs::SmallRng::seed_from_u64(seed);
        let mut b = a.clone();
        let (mut deck_a, mut deck_b) = (Deck::default(), Deck::default());
        // Three draws in a row, so that a deck goes on from where the last left it.
        for draw in 0..3 {
            let mut runs = Runs {
                rng: b.clone(),
                deck: shuffle.then_some(deck_b),
                left: want,
                per_run: 1,
                bs,
                skip,
                from_start: false,
                align,
                fsize,
                off: 0,
                run_left: 0,
                ended: false,
                starts: Vec::new(),
            };
            let mut xfers = Vec::new();
            runs.fill(&mut xfers, BATCH);
            (b, deck_b) = (runs.rng, runs.deck.unwrap_or_default());
            let one = one_block(&mut a, shuffle.then_some(&mut deck_a), fsize, want, align);
            let case = format!("fsize {fsize} bs {bs} size {size} shuffle {shuffle} draw {draw}");
            assert_eq!(xfers.len(), 1, "{case}");
            assert_eq!((one.offset, one.len), (xfers[0].offset, xfers[0].len), "{case}");
            assert!(one.offset.is_multiple_of(align) && one.offset + one.len as u64 <= fsize);
        }
        assert_eq!(
            a.random::<u64>(),
            b.random::<u64>(),
            "the generators part: seed {seed}, shuffle {shuffle}"
        );
    }
}
