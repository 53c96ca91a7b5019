//! The `libaio` backend: Linux native AIO, the calls libaio makes for sysbench's
//! `--file-io-mode=async` and fio's `libaio` engine, with up to `iodepth` requests in flight.
//! [`AioOpts`] shapes the calls as fio's batch options do, with fio's defaults:
//! - requests are queued, and one `io_submit()` sends `batch_submit` of them together (1 by
//!   default: each as it comes), or whatever is queued once the context is full;
//! - once `iodepth` are in flight, one `io_getevents()` waits for at least `batch_complete` and
//!   reaps up to `reap_max` of those completed: 1 and 1 by fio's defaults, which keep the queue
//!   full; the whole backlog in sysbench's `file_submit_or_wait()`;
//! - at the end one `io_getevents()` waits for all the rest, asking for up to `reap_max` or
//!   the rest, whichever is more: fio's final call with its default `reap_max`, and sysbench's
//!   (fio asks for no more than the rest, so with a larger `reap_max` its last call's third
//!   argument is smaller than fslab's).
//!
//! fsync is the `fsync()` call, made with requests still in flight, as both make it.
//!
//! On a file opened without O_DIRECT the kernel does the read or write inside `io_submit()`
//! (buffered I/O is not asynchronous under native AIO), so there the calls cost what pread and
//! pwrite cost; with O_DIRECT on a block filesystem the requests are really in flight.
//!
//! A transfer is counted as queued. A request that fails or moves fewer bytes than asked is
//! the error of the transfer (or the [`drain`](Backend::drain)) whose call reaps it, as sysbench
//! fails at its `io_getevents()`. With checked data each request is submitted and reaped before
//! the next, so that its block is claimed, stamped and checked around its own transfer.
//!
//! The requests all use one buffer, as sysbench's do: what a read brings in is not looked at,
//! and what a write sends is the same for every request.

use super::{sync_fd, Backend, Dir, IoBuffers, Moved, OpenFile, Tag, Tags, Xfer};
use crate::workload::{AioOpts, SyncKind};
use std::io;
use std::os::fd::AsRawFd;

/// `struct iocb` of `<linux/aio_abi.h>`. `aio_key` and `aio_rw_flags` share a 64-bit word whose
/// halves swap with the byte order.
#[repr(C)]
#[derive(Default)]
struct Iocb {
    data: u64,
    #[cfg(target_endian = "little")]
    key: u32,
    rw_flags: i32,
    #[cfg(target_endian = "big")]
    key: u32,
    lio_opcode: u16,
    reqprio: i16,
    fildes: u32,
    buf: u64,
    nbytes: u64,
    offset: i64,
    reserved2: u64,
    flags: u32,
    resfd: u32,
}

/// `struct io_event`.
#[repr(C)]
#[derive(Default, Clone, Copy)]
struct IoEvent {
    data: u64,
    obj: u64,
    res: i64,
    res2: i64,
}

const IOCB_CMD_PREAD: u16 = 0;
const IOCB_CMD_PWRITE: u16 = 1;

/// A request in flight: what it asked for, for the message if it fails.
#[derive(Clone, Copy)]
struct Pending {
    dir: Dir,
    offset: u64,
    len: u32,
    /// The operation that ends with this request.
    tag: Option<Tag>,
}

pub struct AioBackend {
    /// The kernel's context (`aio_context_t`), from `io_setup()`.
    ctx: libc::c_ulong,
    depth: usize,
    /// Requests queued before one `io_submit()` sends them.
    batch_submit: usize,
    /// The fewest completions one `io_getevents()` waits for while the thread goes on submitting.
    batch_complete: usize,
    /// The most requests one `io_getevents()` reaps.
    reap_max: usize,
    /// One entry per request the context can hold, queued or submitted; `data` of a request is
    /// its index.
    pending: Vec<Option<Pending>>,
    /// The free indices of `pending`.
    free: Vec<usize>,
    /// Requests queued and not yet submitted, in order.
    queued: Vec<Iocb>,
    /// The addresses of the iocbs an `io_submit()` is given (a `struct iocb **`), kept between
    /// calls so that submitting allocates nothing.
    list: Vec<usize>,
    events: Vec<IoEvent>,
    /// The first failure reaped that no call has returned yet.
    failed: Option<io::Error>,
    tags: Tags,
}

impl AioBackend {
    /// A context for `depth` requests in flight (`io_setup(depth)`), submitted and reaped as
    /// `opts` says.
    pub fn new(depth: u32, opts: &AioOpts) -> io::Result<AioBackend> {
        let depth = depth.max(1) as usize;
        let batch_submit = match opts.batch_submit as usize {
            0 => depth,
            n => n.min(depth),
        };
        let batch_complete = (opts.batch_complete as usize).clamp(1, depth);
        let reap_max = (opts.reap_max() as usize).clamp(batch_complete, depth);
        let mut ctx: libc::c_ulong = 0;
        // SAFETY: io_setup writes the context to `ctx`, which outlives the call.
        let r = unsafe {
            libc::syscall(
                libc::SYS_io_setup,
                depth as libc::c_long,
                &mut ctx as *mut libc::c_ulong,
            )
        };
        if r < 0 {
            let e = io::Error::last_os_error();
            let why = if e.raw_os_error() == Some(libc::EAGAIN) {
                format!(
                    "io_setup({depth}) failed: {e}: the system's limit on requests in flight is reached \
                     (/proc/sys/fs/aio-max-nr)"
                )
            } else {
                format!("io_setup({depth}) failed: {e}")
            };
            return Err(io::Error::new(e.kind(), why));
        }
        Ok(AioBackend {
            ctx,
            depth,
            batch_submit,
            batch_complete,
            reap_max,
            pending: vec![None; depth],
            free: (0..depth).rev().collect(),
            queued: Vec::with_capacity(depth),
            list: Vec::with_capacity(depth),
            events: vec![IoEvent::default(); depth],
            failed: None,
            tags: Tags::default(),
        })
    }

    /// Requests queued or submitted and not yet reaped (fio's `cur_depth`).
    fn in_flight(&self) -> usize {
        self.depth - self.free.len()
    }

    /// Queues one request for the next [`commit`](Self::commit).
    fn queue(&mut self, file: &OpenFile, dir: Dir, x: Xfer, buf: *mut u8, tag: Option<Tag>) {
        let index = self.free.pop().expect("a request queued with the context full");
        self.queued.push(Iocb {
            data: index as u64,
            lio_opcode: if dir == Dir::Read {
                IOCB_CMD_PREAD
            } else {
                IOCB_CMD_PWRITE
            },
            fildes: file.fd.as_raw_fd() as u32,
            buf: buf as u64,
            nbytes: x.len as u64,
            offset: x.offset as i64,
            ..Iocb::default()
        });
        self.pending[index] = Some(Pending {
            dir,
            offset: x.offset,
            len: x.len,
            tag,
        });
    }

    /// `io_submit()` of every queued request, in one call unless the kernel takes fewer. If a
    /// call fails, the requests it did not take are dropped and their operations count as done.
    fn commit(&mut self) -> io::Result<()> {
        let mut sent = 0;
        while sent < self.queued.len() {
            self.list.clear();
            self.list
                .extend(self.queued[sent..].iter_mut().map(|c| c as *mut Iocb as usize));
            // SAFETY: the list holds the addresses of valid iocbs, which the kernel copies; the
            // buffer they name lives in `IoBuffers`, which outlives this backend's requests (the
            // worker drops the backend first, and `Drop` waits for them).
            let r = unsafe {
                libc::syscall(
                    libc::SYS_io_submit,
                    self.ctx,
                    self.list.len() as libc::c_long,
                    self.list.as_mut_ptr(),
                )
            };
            if r > 0 {
                sent += r as usize;
                continue;
            }
            let e = if r < 0 {
                io::Error::last_os_error()
            } else {
                io::Error::other("io_submit() took no request")
            };
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            for c in self.queued.drain(sent..) {
                let index = c.data as usize;
                if let Some(p) = self.pending[index].take() {
                    self.tags.done.extend(p.tag);
                }
                self.free.push(index);
            }
            self.queued.clear();
            return Err(e);
        }
        self.queued.clear();
        Ok(())
    }

    /// `io_getevents()`: waits for at least `min` requests and reaps up to `max` of those that
    /// have completed; the first failure among them is kept for the caller.
    fn reap(&mut self, min: usize, max: usize) -> io::Result<()> {
        let mut min = min.min(self.in_flight());
        while min > 0 {
            // SAFETY: `events` holds `depth` entries for the kernel to fill.
            let r = unsafe {
                libc::syscall(
                    libc::SYS_io_getevents,
                    self.ctx,
                    min as libc::c_long,
                    max.max(min) as libc::c_long,
                    self.events.as_mut_ptr(),
                    std::ptr::null_mut::<libc::timespec>(),
                )
            };
            if r < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            let n = r as usize;
            for k in 0..n {
                let ev = self.events[k];
                let index = ev.data as usize;
                let Some(p) = self.pending.get_mut(index).and_then(Option::take) else {
                    continue;
                };
                self.free.push(index);
                self.tags.done.extend(p.tag);
                if self.failed.is_none() && ev.res != p.len as i64 {
                    self.failed = Some(failure(p, ev.res));
                }
            }
            min = min.saturating_sub(n);
        }
        Ok(())
    }

    /// The failure reaped so far, once.
    fn take_failure(&mut self) -> io::Result<()> {
        self.failed.take().map_or(Ok(()), Err)
    }
}

/// What a request that completed with `res` (bytes, or a negative errno) rather than its length
/// says.
fn failure(p: Pending, res: i64) -> io::Error {
    let what = if p.dir == Dir::Read { "read" } else { "write" };
    if res < 0 {
        let e = io::Error::from_raw_os_error(-res as i32);
        io::Error::new(
            e.kind(),
            format!("asynchronous {what} of {} bytes at offset {}: {e}", p.len, p.offset),
        )
    } else {
        io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!(
                "asynchronous {what} of {} bytes at offset {} moved {res}",
                p.len, p.offset
            ),
        )
    }
}

impl Backend for AioBackend {
    fn transfer(
        &mut self,
        file: &mut OpenFile,
        dir: Dir,
        xfers: &[Xfer],
        bufs: &mut IoBuffers,
    ) -> (Moved, io::Result<()>) {
        let mut moved = Moved::default();
        if let Err(e) = self.take_failure() {
            return (moved, Err(e));
        }
        let checked = bufs.checked();
        for (k, x) in xfers.iter().enumerate() {
            let _claim = bufs.claim(file.ident, x.offset);
            if dir == Dir::Write {
                bufs.stamp(0, x.len as usize, x.offset);
            }
            let buf = bufs.slot(0, x.len as usize).as_mut_ptr();
            let tag = if k + 1 == xfers.len() {
                self.tags.next.take()
            } else {
                None
            };
            self.queue(file, dir, *x, buf, tag);
            // With checked data, this request is submitted and reaped at once; else it is
            // submitted with its batch, or with what is queued once the context is full, and
            // reaped when the context is full.
            let full = self.in_flight() >= self.depth;
            if checked || full || self.queued.len() >= self.batch_submit {
                if let Err(e) = self.commit() {
                    return (moved, Err(e));
                }
            }
            let reaped = if checked {
                self.reap(self.in_flight(), self.depth)
            } else if full {
                self.reap(self.batch_complete, self.reap_max)
            } else {
                Ok(())
            };
            if let Err(e) = reaped {
                return (moved, Err(e));
            }
            if let Err(e) = self.take_failure() {
                return (moved, Err(e));
            }
            moved.add(x.len, x.len as usize);
            if checked && dir == Dir::Read {
                if let Err(e) = bufs.check(0, x.len as usize, x.offset) {
                    return (moved, Err(e));
                }
            }
        }
        (moved, Ok(()))
    }

    /// Requests still queued are submitted first, and one `io_getevents()` waits for
    /// `batch_complete` of them, as fio's libaio engine does when an fsync meets a queue that
    /// has not been submitted yet; then the fsync, with requests still in flight.
    fn sync(&mut self, file: &mut OpenFile, kind: SyncKind) -> io::Result<()> {
        if !self.queued.is_empty() {
            self.commit()?;
            self.reap(self.batch_complete, self.reap_max)?;
        }
        sync_fd(file.fd(), kind)
    }

    fn drain(&mut self) -> io::Result<()> {
        self.commit()?;
        let rest = self.in_flight();
        self.reap(rest, rest.max(self.reap_max))?;
        self.take_failure()
    }

    fn tags(&mut self) -> Option<&mut Tags> {
        Some(&mut self.tags)
    }
}

impl Drop for AioBackend {
    fn drop(&mut self) {
        // io_destroy() waits for every request still in flight, so none writes to a buffer
        // after it is freed.
        // SAFETY: the context is this backend's own and is destroyed once.
        unsafe { libc::syscall(libc::SYS_io_destroy, self.ctx) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::OwnedFd;

    #[test]
    fn the_iocb_and_io_event_have_the_kernels_layout() {
        assert_eq!(std::mem::size_of::<Iocb>(), 64);
        assert_eq!(std::mem::size_of::<IoEvent>(), 32);
        assert_eq!(std::mem::offset_of!(Iocb, lio_opcode), 16);
        assert_eq!(std::mem::offset_of!(Iocb, fildes), 20);
        assert_eq!(std::mem::offset_of!(Iocb, buf), 24);
        assert_eq!(std::mem::offset_of!(Iocb, offset), 40);
        assert_eq!(std::mem::offset_of!(Iocb, flags), 56);
    }

    /// fio's defaults, but reaping up to `max` at a time.
    fn reaping(max: u32) -> AioOpts {
        AioOpts {
            reap_max: Some(max),
            ..AioOpts::default()
        }
    }

    /// A scratch file, one buffer, and ten 4 KiB transfers from its start.
    fn scratch() -> (OpenFile, IoBuffers, Vec<Xfer>) {
        let f = OpenFile::new(OwnedFd::from(tempfile::tempfile().unwrap()));
        let xfers = (0..10)
            .map(|k| Xfer {
                offset: k * 4096,
                len: 4096,
            })
            .collect();
        (f, IoBuffers::new(4096, 1, 7), xfers)
    }

    #[test]
    fn writes_then_reads_move_their_bytes_through_a_full_context() {
        let (mut f, mut bufs, xfers) = scratch();
        let mut aio = AioBackend::new(4, &reaping(4)).unwrap();
        let (moved, r) = aio.transfer(&mut f, Dir::Write, &xfers, &mut bufs);
        r.unwrap();
        assert_eq!((moved.bytes, moved.calls), (40960, 10));
        // A buffered write completes inside io_submit(): the 4th and the 8th submission reap
        // all four, and the last two are left in flight.
        assert_eq!(aio.in_flight(), 2);
        aio.drain().unwrap();
        assert_eq!(aio.in_flight(), 0);
        assert_eq!(rustix::fs::fstat(f.fd()).unwrap().st_size, 40960);
        let written = bufs.slot(0, 4096).to_vec();
        bufs.slot(0, 4096).fill(0);
        let (moved, r) = aio.transfer(&mut f, Dir::Read, &xfers[9..], &mut bufs);
        r.unwrap();
        aio.drain().unwrap();
        assert_eq!(moved.bytes, 4096);
        assert_eq!(bufs.slot(0, 4096), &written[..]);
    }

    #[test]
    fn reaping_one_at_a_time_keeps_the_queue_full() {
        let (mut f, mut bufs, xfers) = scratch();
        let mut aio = AioBackend::new(4, &AioOpts::default()).unwrap();
        aio.transfer(&mut f, Dir::Write, &xfers, &mut bufs).1.unwrap();
        assert_eq!(aio.in_flight(), 3);
        aio.drain().unwrap();
        assert_eq!(aio.in_flight(), 0);
    }

    #[test]
    fn batches_wait_in_the_queue_until_they_are_whole_or_the_context_is_full() {
        let (mut f, mut bufs, xfers) = scratch();
        let batched = AioOpts {
            batch_submit: 4,
            ..AioOpts::default()
        };
        let mut aio = AioBackend::new(8, &batched).unwrap();
        aio.transfer(&mut f, Dir::Write, &xfers[..3], &mut bufs).1.unwrap();
        assert_eq!((aio.queued.len(), aio.in_flight()), (3, 3), "three wait for a fourth");
        aio.transfer(&mut f, Dir::Write, &xfers[3..4], &mut bufs).1.unwrap();
        assert_eq!((aio.queued.len(), aio.in_flight()), (0, 4), "the batch of four went");
        aio.transfer(&mut f, Dir::Write, &xfers[4..], &mut bufs).1.unwrap();
        // The 8th filled the context: the queued 5th to 8th went together, and one was reaped.
        // From then on each request fills it again, so each goes alone (as in fio).
        assert_eq!((aio.queued.len(), aio.in_flight()), (0, 7));
        aio.drain().unwrap();
        assert_eq!((aio.queued.len(), aio.in_flight()), (0, 0));
        assert_eq!(rustix::fs::fstat(f.fd()).unwrap().st_size, 40960);
    }

    #[test]
    fn batch_complete_waits_for_that_many_and_reaps_no_more_by_default() {
        let (mut f, mut bufs, xfers) = scratch();
        let two = AioOpts {
            batch_complete: 2,
            ..AioOpts::default()
        };
        let mut aio = AioBackend::new(4, &two).unwrap();
        aio.transfer(&mut f, Dir::Write, &xfers, &mut bufs).1.unwrap();
        // Full at the 4th, 6th, 8th and 10th; each time two reaped.
        assert_eq!(aio.in_flight(), 2);
        aio.drain().unwrap();
        assert_eq!(aio.in_flight(), 0);
    }

    #[test]
    fn a_read_past_the_end_fails_where_it_is_reaped() {
        let (mut f, mut bufs, _) = scratch();
        let mut aio = AioBackend::new(8, &AioOpts::default()).unwrap();
        let (_, r) = aio.transfer(
            &mut f,
            Dir::Read,
            &[Xfer {
                offset: 8192,
                len: 4096,
            }],
            &mut bufs,
        );
        r.unwrap();
        let e = aio.drain().unwrap_err();
        assert_eq!(e.to_string(), "asynchronous read of 4096 bytes at offset 8192 moved 0");
        // Once said, it is not said again.
        aio.drain().unwrap();
    }
}
