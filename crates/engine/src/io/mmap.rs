//! The `mmap` backend: the file is mapped shared and transfers are memcpy, as sysbench's mmap
//! mode does; fsync becomes msync of the mapping, without an fsync() after it. A write past the
//! end of the mapped file falls back to pwrite(), since a mapping cannot grow a file.
//!
//! A thread maps a file at its first transfer to it, unless the run mapped it for every thread
//! (`open = "shared"`, as sysbench maps each file once before its run): then the thread borrows
//! that mapping and never unmaps it.

use super::{plain_transfer, Backend, Dir, IoBuffers, Moved, OpenFile, Xfer};
use crate::calls::{self, Call};
use crate::workload::SyncKind;
use rustix::mm::{MapFlags, MsyncFlags, ProtFlags};
use std::io;
use std::os::fd::BorrowedFd;

/// A shared mapping of a whole file.
#[derive(Debug)]
pub struct Mapping {
    ptr: *mut u8,
    len: usize,
    /// Unmapped when dropped: false for a thread's borrow of the run's mapping.
    owned: bool,
}

// A mapping of a file is memory the kernel shares between every thread and process that maps
// it; fslab only copies blocks in and out of it through raw pointers, as sysbench's threads do.
unsafe impl Send for Mapping {}
unsafe impl Sync for Mapping {}

impl Drop for Mapping {
    fn drop(&mut self) {
        if self.owned {
            // SAFETY: mapped by Mapping::of with this length.
            let _ = unsafe { rustix::mm::munmap(self.ptr.cast(), self.len) };
        }
    }
}

impl Mapping {
    /// The first `len` bytes (more than 0) of the file open as `fd`, mapped shared for reading
    /// and writing, or for reading only where the descriptor is read-only.
    pub(crate) fn of(fd: BorrowedFd<'_>, len: usize) -> io::Result<Mapping> {
        let map = |prot| {
            // SAFETY: a fresh shared mapping of an open file; unmapped on drop.
            unsafe { rustix::mm::mmap(std::ptr::null_mut(), len, prot, MapFlags::SHARED, fd, 0) }
        };
        let ptr = map(ProtFlags::READ | ProtFlags::WRITE).or_else(|_| map(ProtFlags::READ))?;
        Ok(Mapping {
            ptr: ptr.cast(),
            len,
            owned: true,
        })
    }

    /// The same memory, not unmapped when dropped: for a thread of the run that keeps `self`
    /// mapped until every such thread has ended (the run's [`SharedFile`](super::SharedFile)).
    pub(crate) fn borrow(&self) -> Mapping {
        Mapping {
            ptr: self.ptr,
            len: self.len,
            owned: false,
        }
    }
}

pub struct MmapBackend;

impl MmapBackend {
    /// The mapping covering `end` bytes, made or remade when the file grew; None when the file
    /// is shorter than that.
    fn mapping(file: &mut OpenFile, end: u64) -> io::Result<Option<&Mapping>> {
        if file.map.as_ref().is_none_or(|m| (m.len as u64) < end) {
            let size = rustix::fs::fstat(&file.fd)?.st_size as u64;
            if size < end || size == 0 {
                return Ok(None);
            }
            file.map = None;
            file.map = Some(Mapping::of(file.fd(), size as usize)?);
        }
        Ok(file.map.as_ref())
    }
}

impl Backend for MmapBackend {
    fn transfer(
        &mut self,
        file: &mut OpenFile,
        dir: Dir,
        xfers: &[Xfer],
        bufs: &mut IoBuffers,
    ) -> (Moved, io::Result<()>) {
        let end = xfers.iter().map(|x| x.offset + x.len as u64).max().unwrap_or(0);
        let ident = file.ident;
        let map = match Self::mapping(file, end) {
            Ok(Some(m)) => m,
            // Past the end of the file: reads get what there is, writes grow it with pwrite.
            Ok(None) => return plain_transfer(file, dir, xfers, bufs),
            Err(e) => return (Moved::default(), Err(e)),
        };
        let mut moved = Moved::default();
        for x in xfers {
            let _claim = bufs.claim(ident, x.offset);
            if dir == Dir::Write {
                bufs.stamp(0, x.len as usize, x.offset);
            }
            let buf = bufs.slot(0, x.len as usize).as_mut_ptr();
            // SAFETY: offset + len <= map.len, checked by mapping(), and the slot holds len
            // bytes. Other threads may copy to and from the same mapped bytes at once (as
            // sysbench's do): no reference to them is made, only this copy.
            unsafe {
                let mapped = map.ptr.add(x.offset as usize);
                match dir {
                    Dir::Read => std::ptr::copy_nonoverlapping(mapped, buf, x.len as usize),
                    Dir::Write => std::ptr::copy_nonoverlapping(buf, mapped, x.len as usize),
                }
            }
            moved.add(x.len, x.len as usize);
            if dir == Dir::Read {
                if let Err(e) = bufs.check(0, x.len as usize, x.offset) {
                    return (moved, Err(e));
                }
            }
        }
        (moved, Ok(()))
    }

    /// sysbench's mmap mode on a 64-bit machine: `msync(MS_SYNC | MS_INVALIDATE)` of the file's
    /// whole mapping (made now if neither the run nor a transfer has made it), and no fsync()
    /// whichever `kind`; an empty file, which cannot be mapped, is fsynced.
    fn sync(&mut self, file: &mut OpenFile, kind: SyncKind) -> io::Result<()> {
        let Some(m) = MmapBackend::mapping(file, 1)? else {
            return super::sync_fd(file.fd(), kind);
        };
        calls::time(Call::Fsync, || {
            // SAFETY: the range is the live mapping.
            unsafe { rustix::mm::msync(m.ptr.cast(), m.len, MsyncFlags::SYNC | MsyncFlags::INVALIDATE) }
        })?;
        Ok(())
    }
}
