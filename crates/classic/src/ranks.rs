//! The ranks of a job: the processes that run one workload together.
//!
//! A front-end run alone is a job of one rank ([`Alone`]). Under `mpirun` (the `mpi` feature of
//! the fslab binary) it is one rank of many, each a process, maybe on another host. Front-ends
//! see only this trait: they wait for one another ([`Ranks::barrier`]) and exchange bytes
//! ([`Ranks::all_gather`]), whatever carries them. [`local`] makes a job of threads in one
//! process, so that the fast tests exercise the many-rank paths without MPI.

use std::sync::{Arc, Barrier, Mutex};

use fslab_engine::sysinfo::host_name;

/// One rank's view of its job.
pub trait Ranks: Send + Sync {
    /// This rank's number, from 0.
    fn rank(&self) -> usize;

    /// How many ranks the job has.
    fn size(&self) -> usize;

    /// The host this rank runs on.
    fn host(&self) -> String;

    /// Returns once every rank has called it.
    fn barrier(&self);

    /// Every rank's `mine`, in rank order, returned on every rank. Each rank calls it at the
    /// same point of the job, as with [`barrier`](Ranks::barrier).
    fn all_gather(&self, mine: &[u8]) -> Vec<Vec<u8>>;

    /// Whether this rank prints the job's report (rank 0 does).
    fn leads(&self) -> bool {
        self.rank() == 0
    }
}

/// A job of one rank: this process.
#[derive(Debug, Default, Clone, Copy)]
pub struct Alone;

impl Ranks for Alone {
    fn rank(&self) -> usize {
        0
    }

    fn size(&self) -> usize {
        1
    }

    fn host(&self) -> String {
        host_name()
    }

    fn barrier(&self) {}

    fn all_gather(&self, mine: &[u8]) -> Vec<Vec<u8>> {
        vec![mine.to_vec()]
    }
}

/// A job of `size` ranks in this process, one per thread that uses it: each returned handle is
/// one rank. For tests, and for anything that wants many-rank behaviour without MPI.
pub fn local(size: usize) -> Vec<Arc<dyn Ranks>> {
    assert!(size > 0, "a job has at least one rank");
    let shared = Arc::new(Shared {
        barrier: Barrier::new(size),
        slots: Mutex::new(vec![Vec::new(); size]),
    });
    (0..size)
        .map(|rank| {
            Arc::new(Local {
                rank,
                size,
                shared: shared.clone(),
            }) as Arc<dyn Ranks>
        })
        .collect()
}

struct Shared {
    barrier: Barrier,
    slots: Mutex<Vec<Vec<u8>>>,
}

struct Local {
    rank: usize,
    size: usize,
    shared: Arc<Shared>,
}

impl Ranks for Local {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    fn host(&self) -> String {
        host_name()
    }

    fn barrier(&self) {
        self.shared.barrier.wait();
    }

    fn all_gather(&self, mine: &[u8]) -> Vec<Vec<u8>> {
        // Everyone writes its slot, everyone reads all slots, and nobody writes the next
        // gather's slot before everyone has read this one.
        self.shared.slots.lock().unwrap_or_else(|e| e.into_inner())[self.rank] = mine.to_vec();
        self.barrier();
        let all = self.shared.slots.lock().unwrap_or_else(|e| e.into_inner()).clone();
        self.barrier();
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alone_is_rank_zero_of_one_and_gathers_itself() {
        assert_eq!((Alone.rank(), Alone.size()), (0, 1));
        assert!(Alone.leads());
        assert_eq!(Alone.all_gather(b"x"), vec![b"x".to_vec()]);
    }

    #[test]
    fn local_ranks_gather_in_rank_order_on_every_rank_twice_over() {
        let ranks = local(4);
        let handles: Vec<_> = ranks
            .into_iter()
            .map(|r| {
                std::thread::spawn(move || {
                    let first = r.all_gather(&[r.rank() as u8]);
                    let second = r.all_gather(&[10 + r.rank() as u8, 0]);
                    (r.rank(), r.leads(), first, second)
                })
            })
            .collect();
        for h in handles {
            let (rank, leads, first, second) = h.join().unwrap();
            assert_eq!(leads, rank == 0);
            assert_eq!(first, vec![vec![0], vec![1], vec![2], vec![3]]);
            assert_eq!(second, vec![vec![10, 0], vec![11, 0], vec![12, 0], vec![13, 0]]);
        }
    }
}
