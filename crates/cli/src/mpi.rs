//! The job a front-end command runs in: alone, or, started by `mpirun`, one rank of many.
//!
//! Which it is comes from the launcher's environment (Open MPI's `OMPI_COMM_WORLD_SIZE`, the
//! PMI's `PMI_SIZE` of MPICH, Intel MPI and Slurm). With several ranks, a binary built with the
//! `mpi` feature initialises MPI (rsmpi over the system's MPI, at `MPI_THREAD_SERIALIZED` at
//! least: a helper thread of `fslab_classic::job` takes part in collectives while the main
//! thread waits on the engine) and hands the front-end an [`MpiRanks`]; one built without it
//! refuses (exit 3) rather than run N uncoordinated copies. Everything else a job does is the
//! library's, against [`Ranks`] (`fslab_classic::job`).

use crate::Failure;
use fslab_classic::ranks::{Alone, Ranks};
use std::sync::Arc;

/// How many ranks the launcher started, when it says so.
pub fn launched() -> Option<usize> {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE"]
        .iter()
        .find_map(|v| std::env::var(v).ok())
        .and_then(|v| v.trim().parse().ok())
}

/// This process's part of the job; MPI is finalised when it is dropped.
pub struct Job {
    pub ranks: Arc<dyn Ranks>,
    #[cfg(feature = "mpi")]
    _universe: Option<mpi::environment::Universe>,
}

/// Joins the job the launcher started, if any.
pub fn join() -> Result<Job, Failure> {
    match launched() {
        Some(n) if n > 1 => join_many(n),
        _ => Ok(Job {
            ranks: Arc::new(Alone),
            #[cfg(feature = "mpi")]
            _universe: None,
        }),
    }
}

#[cfg(not(feature = "mpi"))]
fn join_many(n: usize) -> Result<Job, Failure> {
    Err(Failure::Environment(anyhow::anyhow!(
        "started by mpirun as one of {n} ranks, but this fslab was built without MPI: it would run \
         {n} uncoordinated copies. Build it with `cargo build --release --features mpi` (needs \
         libopenmpi-dev and libclang-dev)"
    )))
}

#[cfg(feature = "mpi")]
fn join_many(_: usize) -> Result<Job, Failure> {
    use mpi::traits::Communicator;
    use mpi::Threading;
    let (universe, level) = mpi::initialize_with_threading(Threading::Multiple)
        .ok_or_else(|| Failure::Environment(anyhow::anyhow!("MPI was already initialised")))?;
    if level < Threading::Serialized {
        return Err(Failure::Environment(anyhow::anyhow!(
            "this MPI gives threads only {level:?} support; fslab needs MPI_THREAD_SERIALIZED"
        )));
    }
    let world = universe.world();
    let ranks = MpiRanks {
        rank: world.rank() as usize,
        size: world.size() as usize,
        host: fslab_engine::sysinfo::host_name(),
        world,
    };
    Ok(Job {
        ranks: Arc::new(ranks),
        _universe: Some(universe),
    })
}

/// The ranks of `MPI_COMM_WORLD`.
#[cfg(feature = "mpi")]
pub struct MpiRanks {
    world: mpi::topology::SimpleCommunicator,
    rank: usize,
    size: usize,
    host: String,
}

// SAFETY: the communicator is a handle to MPI_COMM_WORLD, which MPI lets any thread use once
// initialised with MPI_THREAD_SERIALIZED or more (checked in `join_many`); fslab's job makes one
// collective at a time (the stonewall helper's calls all fall between the start barrier and the
// main thread's gather, which waits for it).
#[cfg(feature = "mpi")]
unsafe impl Send for MpiRanks {}
#[cfg(feature = "mpi")]
unsafe impl Sync for MpiRanks {}

#[cfg(feature = "mpi")]
impl Ranks for MpiRanks {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    fn host(&self) -> String {
        self.host.clone()
    }

    fn barrier(&self) {
        use mpi::collective::CommunicatorCollectives;
        self.world.barrier();
    }

    /// The lengths first (an all-gather of one count each), then the bytes (an all-gather of
    /// varying counts).
    fn all_gather(&self, mine: &[u8]) -> Vec<Vec<u8>> {
        use mpi::collective::CommunicatorCollectives;
        use mpi::datatype::PartitionMut;
        use mpi::Count;
        let len = Count::try_from(mine.len()).expect("a rank's share fits MPI's count (2 GiB)");
        let mut lens: Vec<Count> = vec![0; self.size];
        self.world.all_gather_into(&len, &mut lens[..]);
        let displs: Vec<Count> = lens
            .iter()
            .scan(0, |at, &l| {
                let d = *at;
                *at += l;
                Some(d)
            })
            .collect();
        let mut all = vec![0u8; lens.iter().map(|&l| l as usize).sum()];
        {
            let mut parts = PartitionMut::new(&mut all[..], &lens[..], &displs[..]);
            self.world.all_gather_varcount_into(mine, &mut parts);
        }
        lens.iter()
            .zip(&displs)
            .map(|(&l, &d)| all[d as usize..(d + l) as usize].to_vec())
            .collect()
    }
}
