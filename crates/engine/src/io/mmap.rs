//! The `mmap` backend: the file is mapped shared and transfers are memcpy, as sysbench's mmap
//! mode does; fsync becomes msync of the mapping, without an fsync() after it. A write past the end of the mapped file falls back to
//! pwrite(), since a mapping cannot grow a file.

use super::{plain_transfer, Backend, Dir, IoBuffers, Moved, OpenFile, Xfer};
use crate::calls::{self, Call};
use crate::workload::SyncKind;
use rustix::mm::{MapFlags, MsyncFlags, ProtFlags};
use std::io;

/// A shared mapping of a whole file.
#[derive(Debug)]
pub struct Mapping {
    ptr: *mut u8,
    len: usize,
}

// The mapping belongs to the OpenFile of one thread.
unsafe impl Send for Mapping {}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: mapped by map() with this length.
        let _ = unsafe { rustix::mm::munmap(self.ptr.cast(), self.len) };
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
            let prot = ProtFlags::READ | ProtFlags::WRITE;
            // SAFETY: a fresh shared mapping of an open file; unmapped on drop.
            let ptr =
                unsafe { rustix::mm::mmap(std::ptr::null_mut(), size as usize, prot, MapFlags::SHARED, &file.fd, 0) }
                    .or_else(|_| {
                    // A read-only descriptor can still be mapped for reading.
                    unsafe {
                        rustix::mm::mmap(
                            std::ptr::null_mut(),
                            size as usize,
                            ProtFlags::READ,
                            MapFlags::SHARED,
                            &file.fd,
                            0,
                        )
                    }
                })?;
            file.map = Some(Mapping {
                ptr: ptr.cast(),
                len: size as usize,
            });
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
            let buf = bufs.slot(0, x.len as usize);
            // SAFETY: offset + len <= map.len, checked by mapping().
            let mapped = unsafe { std::slice::from_raw_parts_mut(map.ptr.add(x.offset as usize), x.len as usize) };
            match dir {
                Dir::Read => buf.copy_from_slice(mapped),
                Dir::Write => mapped.copy_from_slice(buf),
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
    /// whole mapping (made now if no transfer has made it yet, as sysbench maps every file
    /// before its run), and no fsync() whichever `kind`; an empty file, which cannot be
    /// mapped, is fsynced.
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
