//! A study's workload run as a job of several ranks under `mpirun`.
//!
//! `mpi = { ranks = [1, 2, 4], hostfile = "hosts" }` on a `[[workload]]` is an axis: each rank
//! count is a cell (`ranks=2` in its row), and each run of the cell is one job, started as
//! `mpirun -np N [--hostfile F] --oversubscribe [--allow-run-as-root] fslab TOOL ... --json`
//! ([`Launch`]). The job's ranks run one workload together, each in its own `rank.N` directory
//! beneath the cell's mount point (`fslab_classic::job`), and rank 0 prints the one outcome the
//! lab stores. Without a hostfile the ranks run on this machine. With one, every host must see
//! the target directory at the same path (a shared filesystem); the lab formats and mounts only
//! what the study gives it, here.

use std::path::{Path, PathBuf};

/// The study's `mpi` table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mpi {
    /// Rank counts, an axis when several.
    pub ranks: Vec<u32>,
    /// mpirun's `--hostfile`, resolved against the study's directory.
    pub hostfile: Option<PathBuf>,
}

/// The name of the axis in a cell's options and row (`ranks=4`); the tool never sees it.
pub const RANKS: &str = "ranks";

/// How one run of a cell is launched: its rank count and hostfile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    pub ranks: u32,
    pub hostfile: Option<PathBuf>,
}

impl Launch {
    /// mpirun's words before the fslab binary: `-np N [--hostfile F] --oversubscribe
    /// [--allow-run-as-root]` (the last as root, which mpirun otherwise refuses).
    pub fn mpirun_args(&self) -> Vec<String> {
        let mut words = vec!["-np".to_string(), self.ranks.to_string()];
        if let Some(h) = &self.hostfile {
            words.extend(["--hostfile".to_string(), h.display().to_string()]);
        }
        words.push("--oversubscribe".into());
        if rustix::process::geteuid().is_root() {
            words.push("--allow-run-as-root".into());
        }
        words
    }

    /// The command line a user would type to run `fslab_line` (`fslab dbench ...`) so.
    pub fn command_line(&self, fslab_line: &str) -> String {
        format!("mpirun {} {fslab_line}", self.mpirun_args().join(" "))
    }
}

/// Reads a workload's `mpi` value; `base` is the study's directory.
pub fn read(v: toml::Value, base: &Path) -> Result<Mpi, String> {
    let toml::Value::Table(mut t) = v else {
        return Err("mpi is a table: mpi = { ranks = [1, 2, 4], hostfile = \"hosts\" }".into());
    };
    let ranks = match t.remove("ranks") {
        Some(toml::Value::Integer(n)) => vec![n],
        Some(toml::Value::Array(a)) if !a.is_empty() => a
            .iter()
            .map(|x| {
                x.as_integer()
                    .ok_or_else(|| "mpi.ranks holds whole numbers".to_string())
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err("mpi.ranks is a rank count or a non-empty list of them".into()),
        None => return Err("mpi needs ranks: mpi = { ranks = [1, 2, 4] }".into()),
    };
    let ranks = ranks
        .into_iter()
        .map(|n| u32::try_from(n).ok().filter(|&n| n >= 1))
        .collect::<Option<Vec<u32>>>()
        .ok_or("mpi.ranks are at least 1")?;
    let hostfile = match t.remove("hostfile") {
        None => None,
        Some(toml::Value::String(s)) => {
            let path = base.join(s);
            if !path.is_file() {
                return Err(format!("mpi.hostfile {} does not exist", path.display()));
            }
            Some(path)
        }
        Some(_) => return Err("mpi.hostfile is a path".into()),
    };
    if let Some(k) = t.keys().next() {
        return Err(format!("unknown key `{k}` in mpi (it has ranks and hostfile)"));
    }
    Ok(Mpi { ranks, hostfile })
}

/// Why this machine cannot start a job: mpirun missing, or an fslab built without MPI.
pub fn unsupported(fslab_has_mpi: bool) -> Option<String> {
    if !fslab_has_mpi {
        return Some("this fslab was built without MPI: build it with `cargo build --release --features mpi`".into());
    }
    crate::tool::find_program("mpirun")
        .is_none()
        .then(|| "mpirun is not installed: apt-get install openmpi-bin".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(s: &str) -> toml::Value {
        toml::from_str::<toml::Table>(&format!("mpi = {s}"))
            .unwrap()
            .remove("mpi")
            .unwrap()
    }

    #[test]
    fn the_mpi_table_gives_rank_counts_and_a_hostfile() {
        let base = std::env::temp_dir();
        assert_eq!(
            read(value("{ ranks = [1, 2, 4] }"), &base),
            Ok(Mpi {
                ranks: vec![1, 2, 4],
                hostfile: None
            })
        );
        assert_eq!(read(value("{ ranks = 3 }"), &base).unwrap().ranks, [3]);
        for (bad, says) in [
            ("{ ranks = [] }", "non-empty"),
            ("{ ranks = [0] }", "at least 1"),
            ("{ hostfile = \"h\" }", "needs ranks"),
            ("{ ranks = 2, hostfile = \"/no/such/hosts\" }", "does not exist"),
            ("{ ranks = 2, np = 3 }", "unknown key `np`"),
            ("4", "is a table"),
        ] {
            let e = read(value(bad), &base).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn a_launch_names_its_ranks_and_hostfile_before_fslab() {
        let l = Launch {
            ranks: 4,
            hostfile: Some(PathBuf::from("/etc/hosts.mpi")),
        };
        let args = l.mpirun_args();
        assert_eq!(
            args[..5],
            ["-np", "4", "--hostfile", "/etc/hosts.mpi", "--oversubscribe"]
        );
        assert!(l
            .command_line("fslab run w.toml")
            .starts_with("mpirun -np 4 --hostfile"));
        assert!(l.command_line("fslab run w.toml").ends_with(" fslab run w.toml"));
    }
}
