//! The `io_uring` backend: up to `iodepth` transfers in flight per thread, into buffers
//! registered with the ring once (fixed buffers spare the kernel a page pin per I/O).

use super::{Backend, Dir, IoBuffers, Moved, OpenFile, Xfer};
use crate::workload::SyncKind;
use io_uring::{opcode, squeue, types, IoUring};
use std::io;
use std::os::fd::{AsRawFd, RawFd};

pub struct UringBackend {
    ring: IoUring,
    depth: usize,
    /// The buffers registered with the ring, by address: fixed transfers need them to stay put.
    registered: Option<(*mut u8, usize)>,
}

// The ring is used by the one thread that owns the backend.
unsafe impl Send for UringBackend {}

impl UringBackend {
    pub fn new(iodepth: u32) -> io::Result<UringBackend> {
        let depth = iodepth.max(1) as usize;
        let ring = IoUring::builder()
            .build(depth.next_power_of_two() as u32)
            .map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!("io_uring is not available ({e}); use engine = \"sync\""),
                )
            })?;
        Ok(UringBackend {
            ring,
            depth,
            registered: None,
        })
    }

    pub fn depth(&self) -> usize {
        self.depth
    }

    /// Registers `bufs` with the ring, once; later transfers into them use fixed buffers.
    pub fn register(&mut self, bufs: &IoBuffers) {
        let key = (bufs.slot_ptr(0), bufs.slot_len() * bufs.slots());
        if self.registered == Some(key) {
            return;
        }
        let iovecs: Vec<libc::iovec> = (0..bufs.slots())
            .map(|s| libc::iovec {
                iov_base: bufs.slot_ptr(s).cast(),
                iov_len: bufs.slot_len(),
            })
            .collect();
        let sub = self.ring.submitter();
        if self.registered.is_some() {
            let _ = sub.unregister_buffers();
        }
        // SAFETY: the buffers outlive their registration: the worker keeps them for the run.
        self.registered = unsafe { sub.register_buffers(&iovecs) }.ok().map(|_| key);
    }

    /// Queues one transfer into or out of buffer `slot`; its completion is tagged with the slot.
    pub fn push(&mut self, fd: RawFd, dir: Dir, x: Xfer, bufs: &IoBuffers, slot: usize) {
        let Xfer { offset, len } = x;
        let tag = slot as u64;
        let ptr = bufs.slot_ptr(slot);
        let fixed = self.registered.is_some_and(|(base, _)| base == bufs.slot_ptr(0));
        let fd = types::Fd(fd);
        let entry: squeue::Entry = match (dir, fixed) {
            (Dir::Read, true) => opcode::ReadFixed::new(fd, ptr, len, slot as u16).offset(offset).build(),
            (Dir::Read, false) => opcode::Read::new(fd, ptr, len).offset(offset).build(),
            (Dir::Write, true) => opcode::WriteFixed::new(fd, ptr, len, slot as u16)
                .offset(offset)
                .build(),
            (Dir::Write, false) => opcode::Write::new(fd, ptr, len).offset(offset).build(),
        };
        // SAFETY: the buffer stays valid until the completion is reaped; the queue has room
        // because callers keep at most `depth` transfers in flight.
        unsafe { self.ring.submission().push(&entry.user_data(tag)) }.expect("submission queue has room");
    }

    /// Submits what is queued and waits for at least `want` completions.
    pub fn submit_and_wait(&mut self, want: usize) -> io::Result<()> {
        loop {
            match self.ring.submit_and_wait(want) {
                Ok(_) => return Ok(()),
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// Hands every available completion to `f` as (tag, result).
    pub fn reap(&mut self, mut f: impl FnMut(u64, i32)) {
        for cqe in self.ring.completion() {
            f(cqe.user_data(), cqe.result());
        }
    }
}

impl Backend for UringBackend {
    fn transfer(
        &mut self,
        file: &mut OpenFile,
        dir: Dir,
        xfers: &[Xfer],
        bufs: &mut IoBuffers,
    ) -> (Moved, io::Result<()>) {
        self.register(bufs);
        let fd = file.fd.as_raw_fd();
        let mut moved = Moved::default();
        let mut first_err: Option<io::Error> = None;
        for chunk in xfers.chunks(self.depth.min(bufs.slots())) {
            for (slot, x) in chunk.iter().enumerate() {
                self.push(fd, dir, *x, bufs, slot);
            }
            let mut pending = chunk.len();
            while pending > 0 {
                if let Err(e) = self.submit_and_wait(1) {
                    return (moved, Err(e));
                }
                self.reap(|tag, res| {
                    pending -= 1;
                    let want = chunk[tag as usize].len;
                    if res < 0 {
                        first_err.get_or_insert(io::Error::from_raw_os_error(-res));
                    } else {
                        moved.add(want, res as usize);
                        if dir == Dir::Read && (res as u32) < want {
                            moved.eof = true;
                        }
                    }
                });
            }
            if let Some(e) = first_err.take() {
                return (moved, Err(e));
            }
            if moved.eof {
                break;
            }
        }
        (moved, Ok(()))
    }

    fn sync(&mut self, file: &mut OpenFile, kind: SyncKind) -> io::Result<()> {
        let flags = match kind {
            SyncKind::Fsync => types::FsyncFlags::empty(),
            SyncKind::Fdatasync => types::FsyncFlags::DATASYNC,
        };
        let entry = opcode::Fsync::new(types::Fd(file.fd.as_raw_fd()))
            .flags(flags)
            .build()
            .user_data(u64::MAX);
        // SAFETY: no buffer is involved.
        unsafe { self.ring.submission().push(&entry) }.expect("submission queue has room");
        self.submit_and_wait(1)?;
        let mut res = 0;
        self.reap(|_, r| res = r);
        if res < 0 {
            return Err(io::Error::from_raw_os_error(-res));
        }
        Ok(())
    }
}
