//! The `io_uring` backend: up to `iodepth` transfers in flight per thread, set up and driven as
//! the group's `[group.uring]` asks: fixed buffers (registered once, sparing the kernel a page
//! pin per transfer), registered files, when the completions' task work runs, IOSQE_ASYNC, the
//! io-wq worker limit, SQPOLL and IOPOLL.

use super::{Backend, Dir, IoBuffers, Moved, OpenFile, Xfer};
use crate::workload::{SyncKind, Taskrun, UringOpts};
use io_uring::{opcode, squeue, types, IoUring};
use std::io;
use std::os::fd::{AsRawFd, RawFd};

/// IORING_SETUP_* flags, as the kernel's uapi header numbers them.
pub const SETUP_IOPOLL: u32 = 1 << 0;
pub const SETUP_SQPOLL: u32 = 1 << 1;
pub const SETUP_COOP_TASKRUN: u32 = 1 << 8;
pub const SETUP_SINGLE_ISSUER: u32 = 1 << 12;
pub const SETUP_DEFER_TASKRUN: u32 = 1 << 13;

/// How long the SQPOLL thread spins without work before it sleeps, in milliseconds.
const SQPOLL_IDLE_MS: u32 = 1000;

pub struct UringBackend {
    ring: IoUring,
    depth: usize,
    opts: UringOpts,
    /// The buffers registered with the ring, by address: fixed transfers need them to stay put.
    registered: Option<(*mut u8, usize)>,
    /// The files registered with the ring, in the order of their fixed indexes.
    files: Vec<RawFd>,
    /// Flags of every transfer's submission (IOSQE_ASYNC when forced).
    sqe_flags: squeue::Flags,
    /// How the ring treats a file the kernel punts to io-wq is settled (on the first file).
    settled: bool,
    /// The IORING_SETUP_* flags the ring was made with.
    setup_flags: u32,
    /// The threads of the ring's group, each with a ring of its own.
    threads: u32,
    /// How long a wait for completions checks for them before it sleeps, in nanoseconds.
    spin_ns: u64,
    /// Whether those checks yield the processor between them.
    spin_yield: bool,
}

// The ring is used by the one thread that owns the backend.
unsafe impl Send for UringBackend {}

/// Where a transfer's file is: a plain descriptor or an index among the registered files.
#[derive(Debug, Clone, Copy)]
pub enum Target {
    Fd(RawFd),
    Fixed(u32),
}

impl UringBackend {
    /// A ring for `iodepth` transfers in flight, set up as `opts` says. A kernel too old for
    /// DEFER_TASKRUN or COOP_TASKRUN gets a ring without them, as fio does.
    pub fn new(iodepth: u32, opts: &UringOpts) -> io::Result<UringBackend> {
        let depth = iodepth.max(1) as usize;
        let entries = depth.next_power_of_two() as u32;
        // The ring and the IORING_SETUP_* flags it was made with.
        let build = |taskrun: Option<Taskrun>| {
            let mut b = IoUring::builder();
            let mut flags = 0;
            if opts.sqpoll {
                b.setup_sqpoll(SQPOLL_IDLE_MS);
                flags |= SETUP_SQPOLL;
            }
            if opts.hipri {
                b.setup_iopoll();
                flags |= SETUP_IOPOLL;
            }
            match taskrun {
                Some(Taskrun::Defer) => {
                    b.setup_coop_taskrun().setup_single_issuer().setup_defer_taskrun();
                    flags |= SETUP_COOP_TASKRUN | SETUP_SINGLE_ISSUER | SETUP_DEFER_TASKRUN;
                }
                Some(Taskrun::Coop) => {
                    b.setup_coop_taskrun();
                    flags |= SETUP_COOP_TASKRUN;
                }
                Some(Taskrun::Signal) | None => {}
            }
            b.build(entries).map(|r| (r, flags))
        };
        let first = if opts.sqpoll { None } else { Some(opts.taskrun) };
        let (ring, setup_flags) = match build(first) {
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) && first.is_some() => build(None),
            r => r,
        }
        .map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("io_uring is not available ({e}); use engine = \"sync\""),
            )
        })?;
        if opts.iowq_workers > 0 {
            // [bounded (regular files), unbounded]; 0 leaves a limit as it is.
            let mut max = [opts.iowq_workers, 0];
            ring.submitter().register_iowq_max_workers(&mut max)?;
        }
        let sqe_flags = if opts.force_async == Some(true) {
            squeue::Flags::ASYNC
        } else {
            squeue::Flags::empty()
        };
        Ok(UringBackend {
            ring,
            depth,
            opts: *opts,
            registered: None,
            files: Vec::new(),
            sqe_flags,
            settled: false,
            setup_flags,
            threads: 1,
            spin_ns: opts.spin.map_or(0, |s| s.get().as_nanos() as u64),
            spin_yield: opts.spin_yield.unwrap_or(true),
        })
    }

    /// The ring of one of `threads` threads of a group (see `settle`).
    pub fn for_threads(mut self, threads: u32) -> UringBackend {
        self.threads = threads.max(1);
        self
    }

    pub fn depth(&self) -> usize {
        self.depth
    }

    /// The IORING_SETUP_* flags the ring was made with.
    pub fn setup_flags(&self) -> u32 {
        self.setup_flags
    }

    /// The ring's file descriptor.
    pub fn ring_fd(&self) -> RawFd {
        self.ring.as_raw_fd()
    }

    /// Transfers use buffers registered with the ring.
    pub fn fixed_buffers(&self) -> bool {
        self.registered.is_some()
    }

    /// Registers `bufs` with the ring, once, when the group uses fixed buffers; later transfers
    /// into them use fixed buffers. Without `fixedbufs`, buffers are registered unless transfers
    /// are marked async: an io-wq worker takes the ring's lock to look a fixed buffer up, and
    /// contends for it with the submitting thread (`settle` comes first).
    pub fn register(&mut self, bufs: &IoBuffers) {
        if !self.opts.fixedbufs.unwrap_or(!self.forces_async()) {
            return;
        }
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

    /// Registers `fds` with the ring when the group asks for registered files: transfers then
    /// name file `i` as `Target::Fixed(i)`. Says whether it did.
    pub fn register_files(&mut self, fds: &[RawFd]) -> io::Result<bool> {
        if !self.opts.registerfiles {
            return Ok(false);
        }
        self.ring.submitter().register_files(fds)?;
        self.files = fds.to_vec();
        Ok(true)
    }

    /// Settles, on the first file, how the ring waits, unless `force_async` and `spin` are both
    /// given. A file the kernel cannot read without blocking (tmpfs; the probe is a one-block
    /// preadv2 with RWF_NOWAIT, refused with EOPNOTSUPP by exactly the files io_uring cannot try
    /// inline) has every transfer punted to an io-wq worker, which hands the completion back
    /// within microseconds: see [`punted_plan`] for what the ring does then. A thread the plan
    /// leaves a processor of its own spins ([`AUTO_SPIN`]) without yielding; one whose transfers
    /// the plan marks async spins yielding ([`YIELDING_SPIN`]) from iodepth 2 on. Any other
    /// file's transfers are tried inline and completed by the device or its driver's worker,
    /// and the ring spins yielding at every iodepth, unless its transfers are forced async
    /// (io-wq workers need the processors) or `hipri` polls.
    pub fn settle(&mut self, fd: RawFd, bufs: &IoBuffers) {
        if self.settled {
            return;
        }
        self.settled = true;
        if self.opts.force_async.is_some() && self.opts.spin.is_some() {
            return;
        }
        if supports_nowait(fd, bufs) {
            if self.opts.spin.is_none() && !self.opts.hipri && !self.forces_async() {
                self.spin_ns = YIELDING_SPIN.as_nanos() as u64;
            }
            return;
        }
        let cpus = crate::sysinfo::online_cpus() as u32;
        let plan = punted_plan(cpus, self.threads);
        let marked_by_plan = self.opts.force_async.is_none() && plan.mark_async;
        if marked_by_plan {
            self.sqe_flags |= squeue::Flags::ASYNC;
            if self.opts.iowq_workers == 0 && plan.async_workers > 0 {
                let mut max = [plan.async_workers, 0];
                let _ = self.ring.submitter().register_iowq_max_workers(&mut max);
            }
        }
        // A thread that spins without yielding needs its processor to itself: not with more
        // async workers than the plan leaves room for.
        let workers = if !self.forces_async() {
            1
        } else if self.opts.iowq_workers > 0 {
            self.opts.iowq_workers
        } else if marked_by_plan && plan.async_workers > 0 {
            plan.async_workers
        } else {
            u32::MAX // up to the kernel's limit
        };
        let own_processor = plan.spin && workers <= plan.async_workers.max(1);
        self.spin_yield = self.opts.spin_yield.unwrap_or(!own_processor);
        if self.opts.spin.is_none() {
            if own_processor {
                self.spin_ns = AUTO_SPIN.as_nanos() as u64;
            } else if marked_by_plan && self.depth > 1 {
                self.spin_ns = YIELDING_SPIN.as_nanos() as u64;
            }
        }
    }

    /// How long a wait for completions checks for them before it sleeps, in nanoseconds.
    pub fn spin_ns(&self) -> u64 {
        self.spin_ns
    }

    /// Whether a wait's checks yield the processor between them.
    pub fn spin_yields(&self) -> bool {
        self.spin_yield
    }

    /// Transfers are marked IOSQE_ASYNC.
    pub fn forces_async(&self) -> bool {
        self.sqe_flags.contains(squeue::Flags::ASYNC)
    }

    /// Queues one transfer into or out of buffer `slot`; its completion is tagged with `tag`.
    #[inline]
    pub fn push(&mut self, file: Target, dir: Dir, x: Xfer, bufs: &IoBuffers, slot: usize, tag: u64) {
        let Xfer { offset, len } = x;
        let ptr = bufs.slot_ptr(slot);
        let fixed = self.registered.is_some_and(|(base, _)| base == bufs.slot_ptr(0));
        macro_rules! build {
            ($fd:expr) => {
                match (dir, fixed) {
                    (Dir::Read, true) => opcode::ReadFixed::new($fd, ptr, len, slot as u16)
                        .offset(offset)
                        .build(),
                    (Dir::Read, false) => opcode::Read::new($fd, ptr, len).offset(offset).build(),
                    (Dir::Write, true) => opcode::WriteFixed::new($fd, ptr, len, slot as u16)
                        .offset(offset)
                        .build(),
                    (Dir::Write, false) => opcode::Write::new($fd, ptr, len).offset(offset).build(),
                }
            };
        }
        let entry: squeue::Entry = match file {
            Target::Fd(fd) => build!(types::Fd(fd)),
            Target::Fixed(i) => build!(types::Fixed(i)),
        };
        let entry = entry.flags(self.sqe_flags).user_data(tag);
        // SAFETY: the buffer stays valid until the completion is reaped. Callers keep at most
        // `depth` transfers in flight, so the queue has room, except under SQPOLL: its thread
        // can post a completion before it moves the queue's head past the entry.
        while unsafe { self.ring.submission().push(&entry) }.is_err() {
            let sub = self.ring.submitter();
            let _ = if self.opts.sqpoll {
                sub.squeue_wait()
            } else {
                sub.submit()
            };
        }
    }

    /// Submits what is queued without waiting (no system call while an SQPOLL thread is awake).
    /// On a ring that defers its task work, the same call runs the task work of the transfers
    /// finished so far, so that their completions are there to reap without a wait (as fio
    /// submits).
    pub fn submit(&mut self) -> io::Result<()> {
        let defers = self.setup_flags & SETUP_DEFER_TASKRUN != 0;
        loop {
            let submitted = if defers {
                let queued = self.ring.submission().len() as u32;
                // SAFETY: no argument is passed; the queued entries are valid (see `push`).
                unsafe {
                    self.ring.submitter().enter::<libc::sigset_t>(
                        queued,
                        0,
                        io_uring::EnterFlags::GETEVENTS.bits(),
                        None,
                    )
                }
            } else {
                self.ring.submit()
            };
            match submitted {
                Ok(_) => return Ok(()),
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// Submits what is queued and waits for at least `want` completions: first by checking for
    /// them for up to the ring's spin (each check runs the task work of transfers finished so
    /// far), yielding the processor between checks when the ring does, then asleep in the
    /// kernel.
    pub fn submit_and_wait(&mut self, want: usize) -> io::Result<()> {
        if self.spin_ns > 0 {
            let start = crate::clock::now();
            loop {
                self.submit()?;
                if self.ring.completion().len() >= want {
                    return Ok(());
                }
                if crate::clock::since_ns(start) >= self.spin_ns {
                    break;
                }
                if self.spin_yield {
                    std::thread::yield_now();
                }
            }
        }
        loop {
            match self.ring.submit_and_wait(want) {
                Ok(_) => return Ok(()),
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// Completions are waiting in the completion queue (without entering the kernel).
    #[inline]
    pub fn has_completions(&mut self) -> bool {
        !self.ring.completion().is_empty()
    }

    /// Hands every available completion to `f` as (tag, result).
    #[inline]
    pub fn reap(&mut self, mut f: impl FnMut(u64, i32)) {
        for cqe in self.ring.completion() {
            f(cqe.user_data(), cqe.result());
        }
    }
}

/// How long a thread that has a processor to spare beside its io-wq worker checks for
/// completions before it sleeps, without yielding. The worker turns a cached read of a punted
/// file around in a few microseconds, and a sleep and wake-up cost more than that (the worker
/// spent a fifth of its time waking the thread, at iodepth 8 on a tmpfs). Yielding between
/// checks there made fewer IOPS (one thread on 2 processors, iodepth 8: 0.75 to 0.94 times).
pub const AUTO_SPIN: std::time::Duration = std::time::Duration::from_micros(20);

/// How long a thread that shares the processors with what completes its transfers checks for
/// completions before it sleeps, yielding its processor between checks
/// (`std::thread::yield_now`, sched_yield) to whatever is ready to run there.
///
/// A device's completion passes through others before it reaches the ring: for ext4 on a loop
/// device, the loop device's worker reads the image and ksoftirqd completes the request. A
/// thread that sleeps at once leaves its processor idle, and on a VM the host wakes an idle
/// processor late; one that spins without yielding keeps those others from its processor (4
/// threads on 2 processors made 0.63 to 0.78 times fio's IOPS at iodepth 1). Yielding between
/// checks does neither. On this 2-processor VM, 4 KiB O_DIRECT reads from ext4 on a loop device,
/// medians of 5 to 8 alternating runs against the earlier policy (a 20 µs spin without
/// yielding, at iodepth 1 with a processor per thread or below iodepth 32 with one to spare,
/// else none): at iodepth 1, 1 thread 1.0 to 1.1 times its IOPS, 2 threads 1.6 to 1.7, 4
/// threads 1.3 (50 µs 147k, 100 µs 139k, 1 ms 129k); at iodepth 8 and 32, 1.0 to 1.1; at 128 the
/// same. On tmpfs, with transfers marked async on 2 and 4 threads, 1.1 to 1.8 times from
/// iodepth 4 on, but 0.75 to 0.9 times at iodepth 1, where the ring sleeps at once.
pub const YIELDING_SPIN: std::time::Duration = std::time::Duration::from_micros(50);

/// What a ring does, unless told, with a file whose every transfer the kernel punts to io-wq,
/// for one of `threads` threads on `cpus` processors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PuntedPlan {
    /// Transfers are marked IOSQE_ASYNC, straight to io-wq without a try inline first.
    pub mark_async: bool,
    /// Marked async, they spread over at most this many workers (0: the kernel's limit).
    pub async_workers: u32,
    /// The thread has a processor of its own and checks for completions for [`AUTO_SPIN`],
    /// without yielding, before it sleeps.
    pub spin: bool,
}

/// Each thread keeps a processor for itself, and its ring's workers share the rest: that
/// leaves `(cpus - threads) / threads` processors per ring.
/// - None (more threads than half the processors): transfers are marked async, with the
///   kernel's limit on workers. The threads and workers then take turns on the processors,
///   and a thread that hands each transfer straight to io-wq, without a try inline that the
///   file refuses, leaves them more of their time (on 2 processors, 2 and 4 threads: 1.1 to
///   1.4 times the IOPS of unmarked transfers at iodepth 1 to 128). From iodepth 2 on, the
///   thread spins yielding ([`YIELDING_SPIN`]).
/// - One: transfers are not marked, so the ring has one worker at a time, and the thread spins
///   before it sleeps: it is never in its worker's way, and a sleep and a wake-up per
///   completion cost the worker more than the read (on 2 processors, one thread, iodepth 8:
///   1.5 times the IOPS of async transfers on two workers, whose thread sleeps).
/// - Two or more: the thread spins, and transfers are marked async over that many workers, so
///   that a lone thread does not leave processors idle (unmarked, a ring gets one worker, and
///   another only when that one blocks, which a read from the page cache never does).
pub fn punted_plan(cpus: u32, threads: u32) -> PuntedPlan {
    let threads = threads.max(1);
    match cpus.saturating_sub(threads) / threads {
        0 => PuntedPlan {
            mark_async: true,
            async_workers: 0,
            spin: false,
        },
        1 => PuntedPlan {
            mark_async: false,
            async_workers: 0,
            spin: true,
        },
        spare => PuntedPlan {
            mark_async: true,
            async_workers: spare,
            spin: true,
        },
    }
}

/// Whether `fd` takes non-blocking reads (FMODE_NOWAIT): a one-block preadv2 at offset 0 with
/// RWF_NOWAIT is refused with EOPNOTSUPP, before any I/O, when it does not. Any other outcome
/// (data, EAGAIN, end of file, EINVAL for an O_DIRECT misfit, EBADF on a write-only file) says
/// nothing against it.
fn supports_nowait(fd: RawFd, bufs: &IoBuffers) -> bool {
    let iov = libc::iovec {
        iov_base: bufs.slot_ptr(0).cast(),
        iov_len: bufs.slot_len().min(super::BUFFER_ALIGN),
    };
    // SAFETY: the iovec points into the thread's own buffer, valid for its length.
    let r = unsafe { libc::preadv2(fd, &iov, 1, 0, libc::RWF_NOWAIT) };
    !(r < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::EOPNOTSUPP))
}

impl Backend for UringBackend {
    fn transfer(
        &mut self,
        file: &mut OpenFile,
        dir: Dir,
        xfers: &[Xfer],
        bufs: &mut IoBuffers,
    ) -> (Moved, io::Result<()>) {
        self.settle(file.fd.as_raw_fd(), bufs);
        self.register(bufs);
        let fd = Target::Fd(file.fd.as_raw_fd());
        let mut moved = Moved::default();
        let mut first_err: Option<io::Error> = None;
        // Checked blocks move one at a time, each claimed while it moves (`checked.rs`).
        let per_chunk = if bufs.checked() {
            1
        } else {
            self.depth.min(bufs.slots())
        };
        for chunk in xfers.chunks(per_chunk) {
            let _claim = bufs.claim(file.ident, chunk[0].offset);
            for (slot, x) in chunk.iter().enumerate() {
                if dir == Dir::Write {
                    bufs.stamp(slot, x.len as usize, x.offset);
                }
                self.push(fd, dir, *x, bufs, slot, slot as u64);
            }
            let mut pending = chunk.len();
            while pending > 0 {
                if let Err(e) = self.submit_and_wait(1) {
                    return (moved, Err(e));
                }
                self.reap(|tag, res| {
                    pending -= 1;
                    let Xfer { offset, len: want } = chunk[tag as usize];
                    if res < 0 {
                        first_err.get_or_insert(io::Error::from_raw_os_error(-res));
                    } else {
                        moved.add(want, res as usize);
                        if dir == Dir::Read && (res as u32) < want {
                            moved.eof = true;
                        } else if dir == Dir::Read {
                            if let Err(e) = bufs.check(tag as usize, want as usize, offset) {
                                first_err.get_or_insert(e);
                            }
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

    fn as_uring(&mut self) -> Option<&mut UringBackend> {
        Some(self)
    }
}

#[cfg(test)]
mod tests {
    use super::{punted_plan, PuntedPlan};

    /// Marked async over `workers` (None: not marked; 0: the kernel's limit), spinning or not.
    fn plan(workers: Option<u32>, spin: bool) -> PuntedPlan {
        PuntedPlan {
            mark_async: workers.is_some(),
            async_workers: workers.unwrap_or(0),
            spin,
        }
    }

    #[test]
    fn a_punted_ring_spins_with_a_processor_to_spare_and_goes_async_without_or_with_two() {
        let kernels = Some(0);
        // (processors, threads) -> what the ring does
        let cases = [
            ((1, 1), plan(kernels, false)),
            ((2, 1), plan(None, true)),
            ((2, 2), plan(kernels, false)),
            ((2, 4), plan(kernels, false)),
            ((3, 1), plan(Some(2), true)),
            ((3, 2), plan(kernels, false)),
            ((4, 1), plan(Some(3), true)),
            ((4, 2), plan(None, true)),
            ((4, 3), plan(kernels, false)),
            ((16, 1), plan(Some(15), true)),
            ((16, 4), plan(Some(3), true)),
            ((16, 5), plan(Some(2), true)),
            ((16, 6), plan(None, true)),
            ((16, 8), plan(None, true)),
            ((16, 9), plan(kernels, false)),
        ];
        for ((cpus, threads), want) in cases {
            assert_eq!(punted_plan(cpus, threads), want, "{cpus} processors, {threads} threads");
        }
        assert_eq!(punted_plan(4, 0), punted_plan(4, 1), "no threads counts as one");
    }
}
