//! Memory a run's workers share, mapped shared and anonymous rather than taken from the heap, so
//! that workers made as processes (`Workload::processes`, forked after the setup) see the same
//! start line, stop flag, stream cursors and live counters as threads of one process do.

use std::ops::Deref;
use std::ptr::NonNull;

/// `len` values of `T` in a mapping of their own, shared with every process forked while it
/// lives. `T` must hold nothing on the heap that workers change: a forked process changes its
/// own copy of the heap.
pub(crate) struct Shm<T> {
    ptr: NonNull<T>,
    len: usize,
}

// SAFETY: a `Shm` hands out only shared references to its values, as a `Box<[T]>` would.
unsafe impl<T: Sync> Sync for Shm<T> {}
// SAFETY: as above; the mapping belongs to the `Shm` and is unmapped by its owner alone.
unsafe impl<T: Send + Sync> Send for Shm<T> {}

impl<T> Shm<T> {
    /// Maps room for `len` values and writes `make(i)` into each, which also touches every page
    /// now, not in the measured loop.
    pub fn new(len: usize, mut make: impl FnMut(usize) -> T) -> std::io::Result<Shm<T>> {
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
        Ok(Shm { ptr, len })
    }

    fn bytes(len: usize) -> usize {
        (len * std::mem::size_of::<T>()).max(1)
    }
}

impl<T> Deref for Shm<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: the first `len` values were written by `new` and live until `drop`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T> Drop for Shm<T> {
    fn drop(&mut self) {
        // SAFETY: the values were written by `new` and nothing borrows them any more; the
        // mapping is the one `new` made, of the same size.
        unsafe {
            std::ptr::drop_in_place(std::ptr::slice_from_raw_parts_mut(self.ptr.as_ptr(), self.len));
            let _ = rustix::mm::munmap(self.ptr.as_ptr().cast(), Self::bytes(self.len));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Shm;
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

    #[test]
    fn a_forked_process_writes_what_its_parent_reads() {
        let shm = Shm::new(3, |i| AtomicU64::new(i as u64)).unwrap();
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
