//! The fio-like command line: `fslab run --op randread --bs 4k --size 1g --threads 4 --time 30s`
//! compiles to a Workload of one fileset and one group.

use fslab_engine::workload::{EngineKind, Fileset, Group, OpKind, OpSpec, Scope, SizeDist, Stop, Workload};
use fslab_engine::{Bytes, Span};

/// fio's `rw` patterns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Pattern {
    Read,
    Write,
    Randread,
    Randwrite,
    Randrw,
}

#[derive(Debug, Clone, clap::Args)]
pub struct AdHoc {
    /// Access pattern, as fio's rw= (instead of a workload file).
    #[arg(long, value_enum)]
    pub op: Option<Pattern>,
    /// Block size of each read()/write().
    #[arg(long, default_value = "4k")]
    pub bs: Bytes,
    /// Size of each file.
    #[arg(long, default_value = "1g")]
    pub size: Bytes,
    /// Number of files the threads share.
    #[arg(long, default_value_t = 1)]
    pub nrfiles: u64,
    /// Worker threads (fio's numjobs).
    #[arg(long, default_value_t = 1)]
    pub threads: u32,
    /// I/O backend.
    #[arg(long, value_enum, default_value = "sync")]
    pub engine: Engine,
    /// Transfers in flight per thread (io_uring).
    #[arg(long, default_value_t = 1)]
    pub iodepth: u32,
    /// O_DIRECT.
    #[arg(long)]
    pub direct: bool,
    /// Percentage of reads for randrw.
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(0..=100))]
    pub rwmixread: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Engine {
    Sync,
    #[value(name = "io_uring")]
    IoUring,
    Mmap,
}

impl AdHoc {
    /// The workload these flags describe. Without a time limit, each thread moves `size` bytes
    /// (random patterns) or runs through its file once (sequential ones), as fio does.
    pub fn workload(&self, op: Pattern, time: Option<Span>) -> Workload {
        let bs = self.bs;
        let one = |kind: OpKind, weight: u32| {
            let mut o = OpSpec::new(kind);
            o.weight = weight;
            o.bs = Some(bs);
            if kind.is_stream() {
                o.scope = Some(Scope::Own);
                o.wrap = time.map(|_| true);
            } else {
                o.size = Some(bs);
            }
            o
        };
        let ops = match op {
            Pattern::Read => vec![one(OpKind::SeqRead, 1)],
            Pattern::Write => vec![one(OpKind::SeqWrite, 1)],
            Pattern::Randread => vec![one(OpKind::Read, 1)],
            Pattern::Randwrite => vec![one(OpKind::Write, 1)],
            Pattern::Randrw => [
                one(OpKind::Read, self.rwmixread),
                one(OpKind::Write, 100 - self.rwmixread),
            ]
            .into_iter()
            .filter(|o| o.weight > 0)
            .collect(),
        };
        let random = matches!(op, Pattern::Randread | Pattern::Randwrite | Pattern::Randrw);
        let engine = match self.engine {
            Engine::Sync => EngineKind::Sync,
            Engine::IoUring => EngineKind::IoUring,
            Engine::Mmap => EngineKind::Mmap,
        };
        let name = format!("{op:?}").to_lowercase();
        Workload {
            description: format!("ad-hoc: {name}, bs {bs}, {} file(s) of {}", self.nrfiles, self.size),
            stop: Stop {
                time,
                bytes: (time.is_none() && random).then(|| Bytes(self.size.0 * self.threads as u64)),
                ..Stop::default()
            },
            filesets: vec![Fileset {
                files: self.nrfiles,
                dirs: 0,
                size: SizeDist::Fixed(self.size),
                prealloc: op != Pattern::Write,
                reuse: true,
                ..Fileset::new("adhoc")
            }],
            groups: vec![Group {
                threads: self.threads,
                engine,
                iodepth: self.iodepth,
                direct: self.direct,
                ops,
                ..Group::new(&name, "adhoc")
            }],
            ..Workload::new(&name)
        }
    }
}
