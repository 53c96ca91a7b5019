//! Memory a run's workers share: the start line, the stop flag, the stream cursors and the live
//! counters. Threads share it on the heap. Workers made as processes (`Workload::processes`,
//! forked after the setup) need it in a shared anonymous mapping instead, so that each sees what
//! the others write.
//!
//! The heap is the default because a mapping is not free: a run that maps and touches a page,
//! then unmaps it, leaves the next run's reads of a cached file some 15% slower for a moment (a
//! megabyte read in 4 KiB records on a tmpfs, measured in C with nothing else between). IOzone's
//! automatic mode times runs that short, one after another.

use std::ops::Deref;
use std::ptr::NonNull;

/// `len` values of `T`, on the heap, or with `Share::Processes` in a mapping of their own that
/// every process forked while it lives shares. Then `T` must hold nothing on the heap that
/// workers change: a forked process changes its own copy of the heap.
pub(crate) enum Shm<T> {
    Heap(Box<[T]>),
    Mapped { ptr: NonNull<T>, len: usize },
}

/// Who shares the memory: threads of this process, or processes forked from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Share {
    Threads,
    Processes,
}

// SAFETY: a `Shm` hands out only shared references to its values, as a `Box<[T]>` would.
unsafe impl<T: Sync> Sync for Shm<T> {}
// SAFETY: as above; a mapping belongs to the `Shm` and is unmapped by its owner alone.
unsafe impl<T: Send + Sync> Send for Shm<T> {}

impl<T> Shm<T> {
    /// Room for `len` values, each written as `make(i)`, which also touches every page now, not
    /// in the measured loop.
    pub fn new(len: usize, share: Share, mut make: impl FnMut(usize) -> T) -> std::io::Result<Shm<T>> {
        if share == Share::Threads {
            return Ok(Shm::Heap((0..len).map(make).collect()));
        }
        use rustix::mm::{mmap_anonymous, MapFlags, ProtFlags};
        assert!(std::mem::align_of::<T>() <= 4096, "a mapping is page-aligned");
        // SAFETY: a new anonymous mapping overlaps nothing; its size is nonzero.
        let p = unsafe {
            mmap_anonymous(
                std::ptr::null_mut(),
                Self::bytes(len),
                ProtFlags::READ | ProtFlags::WRITE,
                MapFlags::SHARED,
            )?
        };
        let ptr = NonNull::new(p.cast::<T>()).ok_or_else(|| std::io::Error::other("mmap gave a null mapping"))?;
        for i in 0..len {
            // SAFETY: `i < len` is within the mapping, aligned (page-aligned base, `T`-sized steps).
            unsafe { ptr.as_ptr().add(i).write(make(i)) };
        }
        Ok(Shm::Mapped { ptr, len })
    }

    fn bytes(len: usize) -> usize {
        (len * std::mem::size_of::<T>()).max(1)
    }
}

impl<T> Deref for Shm<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        match self {
            Shm::Heap(b) => b,
            // SAFETY: the first `len` values were written by `new` and live until `drop`.
            Shm::Mapped { ptr, len } => unsafe { std::slice::from_raw_parts(ptr.as_ptr(), *len) },
        }
    }
}

impl<T> Drop for Shm<T> {
    fn drop(&mut self) {
        if let Shm::Mapped { ptr, len } = *self {
            // SAFETY: the values were written by `new` and nothing borrows them any more; the
            // mapping is the one `new` made, of the same size.
            unsafe {
                std::ptr::drop_in_place(std::ptr::slice_from_raw_parts_mut(ptr.as_ptr(), len));
                let _ = rustix::mm::munmap(ptr.as_ptr().cast(), Self::bytes(len));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Share, Shm};
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

    #[test]
    fn a_forked_process_writes_what_its_parent_reads() {
        let shm = Shm::new(3, Share::Processes, |i| AtomicU64::new(i as u64)).unwrap();
        // SAFETY: the child only stores into the mapping and leaves with _exit.
        match unsafe { libc::fork() } {
            0 => {
                shm[1].store(41, Relaxed);
                unsafe { libc::_exit(0) }
            }
            -1 => panic!("fork: {}", std::io::Error::last_os_error()),
            pid => {
                let mut status = 0;
                assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
                assert_eq!(status, 0);
            }
        }
        let seen: Vec<u64> = shm.iter().map(|a| a.load(Relaxed)).collect();
        assert_eq!(seen, [0, 41, 2]);
    }
}
