//! I/O backends: how a thread moves the blocks of an operation. One file per backend behind the
//! small [`Backend`] interface; the worker builds the list of transfers and the backend moves them.

mod aio;
pub mod checked;
mod mmap;
mod sync;
pub(crate) mod uring;

pub use aio::AioBackend;
pub(crate) use mmap::Mapping;
pub use mmap::MmapBackend;
pub use sync::{SeekBackend, SyncBackend};
pub use uring::{punted_plan, PuntedPlan, Target, UringBackend, AUTO_SPIN, YIELDING_SPIN};

use crate::calls::{self, Call};
use crate::workload::{Data, EngineKind, Group, OSync, SyncKind};
use rustix::fs::OFlags;
use std::alloc::Layout;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, IntoRawFd, OwnedFd, RawFd};

/// The next of the random words a buffer is filled with (xorshift64, from a nonzero state):
/// cheap, and enough to defeat compression and deduplication.
#[inline]
pub(crate) fn xorshift(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

/// Buffers are aligned for O_DIRECT on any device this engine will meet.
pub const BUFFER_ALIGN: usize = 4096;

/// Direction of a transfer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    Read,
    Write,
}

/// One read() or write() call: `len` bytes at `offset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Xfer {
    pub offset: u64,
    pub len: u32,
}

/// What a batch of transfers moved. `calls` counts the read()/write() calls made; `whole_calls`
/// those that moved their full length (FFSB counts a short final read as no transaction).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Moved {
    pub bytes: u64,
    pub calls: u64,
    pub whole_calls: u64,
    /// A read met the end of the file.
    pub eof: bool,
}

impl Moved {
    pub(crate) fn add(&mut self, want: u32, got: usize) {
        self.bytes += got as u64;
        self.calls += 1;
        if got == want as usize {
            self.whole_calls += 1;
        }
    }
}

/// A thread's descriptor of a file: its own, closed with it, or one the run opened for all its
/// threads (`open = "shared"`), which the run closes once they have all ended.
#[derive(Debug)]
pub enum FileFd {
    Own(OwnedFd),
    /// Open for as long as any thread may use it: the run holds it until every worker has
    /// ended (threads are scoped to the run; a worker process inherits its own copy).
    Shared(RawFd),
}

impl AsFd for FileFd {
    fn as_fd(&self) -> BorrowedFd<'_> {
        match self {
            FileFd::Own(fd) => fd.as_fd(),
            // SAFETY: the run keeps the descriptor open while any worker runs (see above).
            FileFd::Shared(raw) => unsafe { BorrowedFd::borrow_raw(*raw) },
        }
    }
}

impl AsRawFd for FileFd {
    fn as_raw_fd(&self) -> RawFd {
        self.as_fd().as_raw_fd()
    }
}

/// A file the run opened once for every thread of a group (`open = "shared"`) and, for the mmap
/// engine, mapped whole.
pub(crate) struct SharedFile {
    pub fd: OwnedFd,
    pub map: Option<Mapping>,
}

impl SharedFile {
    /// Closes every file in order, then removes every mapping in order, as sysbench's
    /// `file_done()` closes its files and then unmaps them.
    pub fn close_all(files: Vec<SharedFile>) {
        let (fds, maps): (Vec<OwnedFd>, Vec<Option<Mapping>>) = files.into_iter().map(|f| (f.fd, f.map)).unzip();
        drop(fds);
        drop(maps);
    }
}

/// An open file and, for the mmap backend, its mapping.
#[derive(Debug)]
pub struct OpenFile {
    pub fd: FileFd,
    pub(crate) map: Option<Mapping>,
    /// Where the descriptor's file position is (the `seek` backend's read()/write() move it):
    /// 0 once opened.
    pub(crate) pos: u64,
    /// Which file this is, the same in every thread that opens it: what a checked block's claim
    /// is taken on (`checked.rs`).
    pub(crate) ident: u64,
}

impl OpenFile {
    pub fn new(fd: OwnedFd) -> OpenFile {
        OpenFile::with_fd(FileFd::Own(fd))
    }

    /// A file the run opened (and mapped) for every thread: never closed or unmapped by this
    /// thread.
    pub(crate) fn shared(file: &SharedFile) -> OpenFile {
        OpenFile {
            map: file.map.as_ref().map(Mapping::borrow),
            ..OpenFile::with_fd(FileFd::Shared(file.fd.as_raw_fd()))
        }
    }

    fn with_fd(fd: FileFd) -> OpenFile {
        OpenFile {
            fd,
            map: None,
            pos: 0,
            ident: 0,
        }
    }

    /// The file as `ident` names it for the claims on its checked blocks.
    pub(crate) fn with_ident(mut self, ident: u64) -> OpenFile {
        self.ident = ident;
        self
    }

    /// Makes the `seek` backend seek before the next transfer wherever it starts.
    pub fn forget_position(&mut self) {
        self.pos = u64::MAX;
    }

    pub fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// Closes the file: its `close()` timed, for a group that times its calls.
    pub fn close(self) {
        let OpenFile { fd, map, .. } = self;
        drop(map);
        if let FileFd::Own(fd) = fd {
            calls::time(Call::Close, || close_owned(fd));
        }
    }
}

/// Closes `fd` with the system call itself: dropping it would go through libc's `close()`, a
/// thread-cancellation point whose wrapper costs a loop of creates or opens some 40 instructions
/// an operation more (callgrind).
fn close_owned(fd: OwnedFd) {
    // SAFETY: `fd` is owned and consumed here: nothing else can use or close it after.
    unsafe { rustix::io::close(fd.into_raw_fd()) }
}

/// A thread's I/O memory: `slots` buffers of `slot_len` bytes, each aligned for O_DIRECT, filled
/// once with the group's [`Data`] (with [`Data::Checked`], each block again as it is written).
pub struct IoBuffers {
    ptr: *mut u8,
    layout: Layout,
    slot_len: usize,
    slots: usize,
    /// With [`Data::Checked`]: the state of the generator that fills each block written.
    checked: Option<u64>,
}

// The buffers are owned by one thread at a time.
unsafe impl Send for IoBuffers {}

impl IoBuffers {
    /// Buffers of seeded pseudo-random bytes, so that written data does not compress.
    pub fn new(slot_len: usize, slots: usize, seed: u64) -> IoBuffers {
        IoBuffers::with_data(slot_len, slots, Data::Random, seed)
    }

    /// Buffers filled with `data` (its random bytes drawn from `seed`).
    pub fn with_data(slot_len: usize, slots: usize, data: Data, seed: u64) -> IoBuffers {
        let slot_len = slot_len.max(1).next_multiple_of(BUFFER_ALIGN);
        let slots = slots.max(1);
        let layout = Layout::from_size_align(slot_len * slots, BUFFER_ALIGN).expect("buffer layout");
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { std::alloc::alloc(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        // Every byte is written here, whatever the data: a large allocation is fresh pages that
        // the kernel maps only when first touched, and that must happen now, not inside the
        // measured time. The size is a multiple of BUFFER_ALIGN (4 KiB), so of 8, and the pointer
        // is aligned: one store per word.
        let words = ptr.cast::<u64>();
        // SAFETY: the allocation is `layout.size()` bytes.
        let zero = || unsafe { std::ptr::write_bytes(ptr, 0, layout.size()) };
        match data {
            Data::Zeros => zero(),
            Data::Random | Data::Checked => {
                let mut x = seed | 1;
                for i in 0..layout.size() / 8 {
                    let word = xorshift(&mut x);
                    // SAFETY: i < size / 8, and the allocation is aligned to BUFFER_ALIGN >= 8.
                    unsafe { words.add(i).write(word.to_le()) };
                }
            }
            Data::Iozone | Data::IozonePrepaged | Data::IozoneShared => {
                zero();
                if data == Data::IozonePrepaged {
                    for line in (0..layout.size()).step_by(32) {
                        // SAFETY: line < size.
                        unsafe { ptr.add(line).write(b'm') };
                    }
                }
                for page in 0..layout.size() / 4096 {
                    // SAFETY: page * 4096 + 8 <= size, and the allocation is aligned.
                    unsafe { words.add(page * 512).write(u64::from_ne_bytes([b'm'; 8])) };
                }
            }
        }
        IoBuffers {
            ptr,
            layout,
            slot_len,
            slots,
            checked: (data == Data::Checked).then_some(seed | 1),
        }
    }

    /// The blocks are checked ([`Data::Checked`]): each is stamped before it is written
    /// ([`stamp`](Self::stamp)), checked after it is read ([`check`](Self::check)), and claimed
    /// while it moves (`checked.rs`).
    pub(crate) fn checked(&self) -> bool {
        self.checked.is_some()
    }

    /// With checked blocks, fills the first `len` bytes of `slot` as the block written at
    /// `offset`; otherwise leaves the data as it is.
    pub(crate) fn stamp(&mut self, slot: usize, len: usize, offset: u64) {
        if let Some(mut state) = self.checked {
            checked::stamp(self.slot(slot, len), offset, &mut state);
            self.checked = Some(state);
        }
    }

    /// With checked blocks, checks the first `len` bytes of `slot`, read whole at `offset`.
    pub(crate) fn check(&self, slot: usize, len: usize, offset: u64) -> io::Result<()> {
        if self.checked.is_none() {
            return Ok(());
        }
        assert!(len <= self.slot_len);
        // SAFETY: slot_ptr is in bounds, and nothing writes the slot while it is borrowed.
        checked::check(unsafe { std::slice::from_raw_parts(self.slot_ptr(slot), len) }, offset)
    }

    /// With checked blocks, a claim on the block at `offset` of the file `ident` names
    /// ([`OpenFile`]'s), waited for; none otherwise.
    pub(crate) fn claim(&self, ident: u64, offset: u64) -> Option<checked::Claim> {
        self.checked.map(|_| checked::claim(ident, offset))
    }

    pub fn slot_len(&self) -> usize {
        self.slot_len
    }

    pub fn slots(&self) -> usize {
        self.slots
    }

    pub(crate) fn slot_ptr(&self, slot: usize) -> *mut u8 {
        assert!(slot < self.slots);
        // SAFETY: within the allocation.
        unsafe { self.ptr.add(slot * self.slot_len) }
    }

    pub fn slot(&mut self, slot: usize, len: usize) -> &mut [u8] {
        assert!(len <= self.slot_len);
        // SAFETY: slot_ptr is in bounds and the slice borrows self mutably.
        unsafe { std::slice::from_raw_parts_mut(self.slot_ptr(slot), len) }
    }
}

impl Drop for IoBuffers {
    fn drop(&mut self) {
        // SAFETY: allocated with this layout in new().
        unsafe { std::alloc::dealloc(self.ptr, self.layout) };
    }
}

/// How a thread moves data. Transfers within one call are independent of each other, so a
/// backend may run them concurrently; it stops at the first error and reports what it moved.
pub trait Backend: Send {
    fn transfer(
        &mut self,
        file: &mut OpenFile,
        dir: Dir,
        xfers: &[Xfer],
        bufs: &mut IoBuffers,
    ) -> (Moved, io::Result<()>);

    /// fsync or fdatasync (msync for mapped files).
    fn sync(&mut self, file: &mut OpenFile, kind: SyncKind) -> io::Result<()> {
        sync_fd(file.fd(), kind)
    }

    /// Waits for every transfer still in flight, and says the first that failed (a backend that
    /// returns from `transfer` with its transfers done has none).
    fn drain(&mut self) -> io::Result<()> {
        Ok(())
    }

    /// For a backend whose transfers complete after `transfer` returns (libaio's): the mix
    /// entries of its transfers, so that the mix counts an operation done when it completes.
    fn tags(&mut self) -> Option<&mut Tags> {
        None
    }

    /// The io_uring backend itself, for the loop that drives its ring directly.
    fn as_uring(&mut self) -> Option<&mut UringBackend> {
        None
    }
}

/// Which operation each transfer of a deferred backend ends: the worker sets `next` before an
/// operation, the operation's last transfer takes it (an operation that submits none leaves
/// it), and the tags of the transfers completed since are in `done`.
#[derive(Debug, Default)]
pub struct Tags {
    pub next: Option<Tag>,
    pub done: Vec<Tag>,
}

/// An operation of the mix in flight: its entry, and when it started (`clock::now`, 0 when
/// untimed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tag {
    pub entry: u32,
    pub start: u64,
}

pub(crate) fn sync_fd(fd: BorrowedFd<'_>, kind: SyncKind) -> io::Result<()> {
    calls::time(Call::Fsync, || match kind {
        SyncKind::Fsync => rustix::fs::fsync(fd),
        SyncKind::Fdatasync => rustix::fs::fdatasync(fd),
    })?;
    Ok(())
}

/// Makes the backend a group asked for.
pub fn backend(group: &Group) -> io::Result<Box<dyn Backend>> {
    Ok(match group.engine {
        EngineKind::Sync => Box::new(SyncBackend),
        EngineKind::Seek => Box::new(SeekBackend),
        EngineKind::Mmap => Box::new(MmapBackend),
        EngineKind::IoUring => Box::new(UringBackend::new(group.iodepth, &group.uring)?.for_threads(group.threads)),
        EngineKind::Libaio => Box::new(AioBackend::new(group.iodepth, &group.aio)?),
    })
}

/// The open flags of `osync`. rustix's `OFlags::DSYNC` is `O_SYNC` on Linux: `O_DSYNC` comes
/// from libc, so that the kernel sees what sysbench's `--file-extra-flags=dsync` asks for.
pub(crate) fn osync_flags(osync: OSync) -> OFlags {
    match osync {
        OSync::None => OFlags::empty(),
        OSync::Sync => OFlags::SYNC,
        OSync::Dsync => OFlags::from_bits_retain(libc::O_DSYNC as u32),
    }
}

/// The pread()/pwrite() loop shared by the backends that fall back to plain calls: retries a
/// short write, stops a read at end of file.
#[inline]
pub(crate) fn plain_transfer(
    file: &OpenFile,
    dir: Dir,
    xfers: &[Xfer],
    bufs: &mut IoBuffers,
) -> (Moved, io::Result<()>) {
    let fd = file.fd();
    each_call(dir, xfers, bufs, file.ident, |_, buf, offset| match buf {
        Buf::Read(b) => calls::time(Call::Read, || rustix::io::pread(fd, b, offset)),
        Buf::Write(b) => calls::time(Call::Write, || rustix::io::pwrite(fd, b, offset)),
    })
}

/// `read()`/`write()` at the file position `pos` (FFSB's calls), after an `lseek(SEEK_SET)`
/// wherever a transfer does not start there, and before the transfers whose indices `forced`
/// lists (ascending) in any case: FFSB seeks at the start of every run of blocks. With
/// `relative`, a gap ahead of the position between blocks is an `lseek(SEEK_CUR)` by its length
/// instead, as FFSB's read_skip reads skip it.
pub(crate) fn seek_transfer(
    file: &OpenFile,
    dir: Dir,
    xfers: &[Xfer],
    bufs: &mut IoBuffers,
    (pos, mut forced, relative): (&mut u64, &[usize], bool),
) -> (Moved, io::Result<()>) {
    let fd = file.fd();
    each_call(dir, xfers, bufs, file.ident, |k, buf, offset| {
        // A transfer's first call starts at its offset; a retried short write does not.
        let first = offset == xfers[k].offset;
        let force = first && forced.first() == Some(&k);
        if force {
            forced = &forced[1..];
        }
        if relative && !force && offset > *pos {
            seek_by(fd, offset - *pos)?;
            *pos = offset;
        } else if force || *pos != offset {
            seek(fd, offset)?;
            *pos = offset;
        }
        let n = read_or_write(fd, buf)?;
        *pos += n as u64;
        Ok(n)
    })
}

/// `lseek(SEEK_SET)` to `offset`.
pub(crate) fn seek(fd: BorrowedFd<'_>, offset: u64) -> rustix::io::Result<u64> {
    calls::time(Call::Lseek, || {
        rustix::fs::seek(fd, rustix::fs::SeekFrom::Start(offset))
    })
}

/// `lseek(SEEK_CUR)` `gap` bytes on.
pub(crate) fn seek_by(fd: BorrowedFd<'_>, gap: u64) -> rustix::io::Result<u64> {
    calls::time(Call::Lseek, || {
        rustix::fs::seek(fd, rustix::fs::SeekFrom::Current(gap as i64))
    })
}

/// `lseek()` as `from` says (from the end of the file or from the position, back when its
/// offset is negative): the new position.
pub(crate) fn seek_from(fd: BorrowedFd<'_>, from: rustix::fs::SeekFrom) -> rustix::io::Result<u64> {
    calls::time(Call::Lseek, || rustix::fs::seek(fd, from))
}

/// One block moved whole by one kind of call, for blocks that are not checked: `buf` at
/// `offset` by `pread()`/`pwrite()`, or with `seek` by `read()`/`write()` at the descriptor's
/// position (an `lseek()` first where the position is not `offset`). As [`each_call`], a short
/// write goes on with the rest and an interrupted call is made again; a read stops at the end of
/// the file. The bytes moved, and the error that stopped the block.
#[inline]
pub(crate) fn whole_block(
    file: &mut OpenFile,
    seek: bool,
    dir: Dir,
    buf: &mut [u8],
    offset: u64,
) -> (usize, rustix::io::Result<()>) {
    // The one call nearly every block is, kept apart from the rarer rest.
    if seek && file.pos != offset {
        return rest_of_block(file, seek, dir, buf, offset, 0);
    }
    match one_call(file, seek, dir, buf, offset) {
        Ok(n) if n == buf.len() || n == 0 || dir == Dir::Read => (n, Ok(())),
        Ok(n) => rest_of_block(file, seek, dir, buf, offset, n),
        Err(rustix::io::Errno::INTR) => rest_of_block(file, seek, dir, buf, offset, 0),
        Err(e) => (0, Err(e)),
    }
}

/// One `read()`/`write()` (`seek`, at the position, which it moves) or `pread()`/`pwrite()` of
/// `buf` at `offset`.
#[inline]
fn one_call(file: &mut OpenFile, seek: bool, dir: Dir, buf: &mut [u8], offset: u64) -> rustix::io::Result<usize> {
    let n = match (dir, seek) {
        (Dir::Read, false) => rustix::io::pread(&file.fd, buf, offset)?,
        (Dir::Write, false) => rustix::io::pwrite(&file.fd, buf, offset)?,
        (Dir::Read, true) => rustix::io::read(&file.fd, buf)?,
        (Dir::Write, true) => rustix::io::write(&file.fd, buf)?,
    };
    if seek {
        file.pos += n as u64;
    }
    Ok(n)
}

/// [`whole_block`] from `done` bytes on: the seek, the retried call, the rest of a short write.
#[cold]
fn rest_of_block(
    file: &mut OpenFile,
    seek: bool,
    dir: Dir,
    buf: &mut [u8],
    offset: u64,
    mut done: usize,
) -> (usize, rustix::io::Result<()>) {
    while done < buf.len() {
        let at = offset + done as u64;
        if seek && file.pos != at {
            if let Err(e) = self::seek(file.fd(), at) {
                return (done, Err(e));
            }
            file.pos = at;
        }
        match one_call(file, seek, dir, &mut buf[done..], at) {
            Ok(n) => {
                done += n;
                if n == 0 || dir == Dir::Read {
                    break;
                }
            }
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return (done, Err(e)),
        }
    }
    (done, Ok(()))
}

/// `read()` or `write()` at the file position.
pub(crate) fn read_or_write(fd: BorrowedFd<'_>, buf: Buf<'_>) -> rustix::io::Result<usize> {
    match buf {
        Buf::Read(b) => calls::time(Call::Read, || rustix::io::read(fd, b)),
        Buf::Write(b) => calls::time(Call::Write, || rustix::io::write(fd, b)),
    }
}

/// The memory one call moves: read into, or written from.
pub(crate) enum Buf<'a> {
    Read(&'a mut [u8]),
    Write(&'a [u8]),
}

/// Moves each transfer with `call(its index, memory, file offset)` until it is done: retries a
/// short write (and an interrupted call), stops a read at end of file. With checked blocks, each
/// transfer is a block of the file `ident` names: claimed while it moves, stamped before it is
/// written, checked once it is read whole.
#[inline(always)]
pub(crate) fn each_call(
    dir: Dir,
    xfers: &[Xfer],
    bufs: &mut IoBuffers,
    ident: u64,
    mut call: impl FnMut(usize, Buf<'_>, u64) -> rustix::io::Result<usize>,
) -> (Moved, io::Result<()>) {
    let mut moved = Moved::default();
    for (k, x) in xfers.iter().enumerate() {
        let _claim = bufs.claim(ident, x.offset);
        if dir == Dir::Write {
            bufs.stamp(0, x.len as usize, x.offset);
        }
        let buf = bufs.slot(0, x.len as usize);
        let mut done = 0usize;
        while done < buf.len() {
            let b = match dir {
                Dir::Read => Buf::Read(&mut buf[done..]),
                Dir::Write => Buf::Write(&buf[done..]),
            };
            match call(k, b, x.offset + done as u64) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => {
                    moved.add(x.len, done);
                    return (moved, Err(e.into()));
                }
            }
            if dir == Dir::Read {
                break;
            }
        }
        moved.add(x.len, done);
        if dir == Dir::Read && done < x.len as usize {
            moved.eof = true;
            break;
        }
        if dir == Dir::Read {
            if let Err(e) = bufs.check(0, done, x.offset) {
                return (moved, Err(e));
            }
        }
    }
    (moved, Ok(()))
}
