//! Running `fslab ior` and `fslab mdtest` as a job of N ranks in this process: one thread per
//! rank, each with its own Context and its rank's handle, as under mpirun each process has its
//! own.

use fslab_classic::ranks::{self, Ranks};
use fslab_classic::{Context, Outcome, Tool};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// A rank that says it runs on a host of its own (`node-R`), as ranks spread over nodes do.
struct OwnHost(Arc<dyn Ranks>);

impl Ranks for OwnHost {
    fn rank(&self) -> usize {
        self.0.rank()
    }
    fn size(&self) -> usize {
        self.0.size()
    }
    fn host(&self) -> String {
        format!("node-{}", self.0.rank())
    }
    fn barrier(&self) {
        self.0.barrier()
    }
    fn all_gather(&self, mine: &[u8]) -> Vec<Vec<u8>> {
        self.0.all_gather(mine)
    }
}

/// Where the job's ranks run.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Hosts {
    /// Every rank on this host (threads of one process).
    One,
    /// Each rank on a host of its own.
    Each,
}

/// Each rank's outcome (or error text) of `fslab TOOL ARGS --dir DIR` run by `n` ranks.
pub fn job(tool: Tool, args: &str, dir: &Path, n: usize, hosts: Hosts) -> Vec<Result<Outcome, String>> {
    job_with(tool, args, dir, n, hosts, false)
}

/// [`job`], with its interrupt flag (Ctrl-C) set from the start when `interrupted`.
pub fn job_with(
    tool: Tool,
    args: &str,
    dir: &Path,
    n: usize,
    hosts: Hosts,
    interrupted: bool,
) -> Vec<Result<Outcome, String>> {
    let mut words: Vec<String> = args.split_whitespace().map(String::from).collect();
    words.extend(["--dir".to_string(), dir.display().to_string()]);
    let what = format!("{tool} {args} on {n} ranks");
    fslab_testkit::within(Duration::from_secs(60), &what.clone(), move || {
        let handles: Vec<_> = ranks::local(n)
            .into_iter()
            .map(|r| {
                let words = words.clone();
                let r: Arc<dyn Ranks> = match hosts {
                    Hosts::One => r,
                    Hosts::Each => Arc::new(OwnHost(r)),
                };
                std::thread::spawn(move || {
                    let (mut fe, common) = tool.parse(&words).map_err(|e| e.to_string())?;
                    let mut out = |_: &str| {};
                    let mut progress = |_: &str, _: &fslab_engine::Progress| {};
                    let mut ctx =
                        Context::new(&common, Arc::new(AtomicBool::new(interrupted)), &mut out, &mut progress);
                    ctx.ranks = r;
                    fe.execute(&mut ctx).map_err(|e| e.to_string())
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a rank panicked"))
            .collect()
    })
}

/// Each rank's outcome, failing the test on any error.
pub fn ok(tool: Tool, args: &str, dir: &Path, n: usize, hosts: Hosts) -> Vec<Outcome> {
    job(tool, args, dir, n, hosts)
        .into_iter()
        .enumerate()
        .map(|(r, o)| o.unwrap_or_else(|e| panic!("rank {r} of `{tool} {args}` failed: {e}")))
        .collect()
}

/// The names in `dir`, sorted (none if it does not exist).
pub fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = match std::fs::read_dir(dir) {
        Ok(rd) => rd
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect(),
        Err(_) => Vec::new(),
    };
    v.sort();
    v
}
