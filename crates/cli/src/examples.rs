//! fslab's examples, built into the binary: the example studies, the native workloads and the
//! FFSB profiles the studies use, as they are in the repository (`studies/`, `workloads/`,
//! `profiles/`). An installed fslab runs them from any directory (`fslab study run quick`,
//! `fslab run fileserver`), and `fslab examples DIR` writes them out to edit.
//!
//! A name resolves so: a file of that name exists → that file; otherwise a bare name (no `/`)
//! that names an example (with or without `.toml`) → the example, written with the others into
//! fslab's data directory (`$XDG_DATA_HOME/fslab/examples`, else
//! `~/.local/share/fslab/examples`) so that the paths a study names between them (a workload
//! file, a profile) and `fslab study resume` work as in the repository.

use crate::{out, Failure};
use anyhow::anyhow;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Each example: its path as in the repository, and its text.
pub const FILES: &[(&str, &str)] = &[
    ("studies/quick.toml", include_str!("../../../studies/quick.toml")),
    (
        "studies/seed-000-ffsb-large-seqwrite.toml",
        include_str!("../../../studies/seed-000-ffsb-large-seqwrite.toml"),
    ),
    (
        "studies/seed-001-dbench.toml",
        include_str!("../../../studies/seed-001-dbench.toml"),
    ),
    (
        "studies/seed-002-ffsb-smallfile.toml",
        include_str!("../../../studies/seed-002-ffsb-smallfile.toml"),
    ),
    (
        "studies/seed-003-sysbench-fileio.toml",
        include_str!("../../../studies/seed-003-sysbench-fileio.toml"),
    ),
    (
        "studies/seed-004-ibm-journaling.toml",
        include_str!("../../../studies/seed-004-ibm-journaling.toml"),
    ),
    (
        "workloads/fileserver.toml",
        include_str!("../../../workloads/fileserver.toml"),
    ),
    (
        "workloads/metadata.toml",
        include_str!("../../../workloads/metadata.toml"),
    ),
    ("workloads/quick.toml", include_str!("../../../workloads/quick.toml")),
    (
        "workloads/randread.toml",
        include_str!("../../../workloads/randread.toml"),
    ),
    (
        "workloads/seqwrite-sync.toml",
        include_str!("../../../workloads/seqwrite-sync.toml"),
    ),
    (
        "profiles/large-seqwrite.ffsb",
        include_str!("../../../profiles/large-seqwrite.ffsb"),
    ),
    (
        "profiles/smallfile.ffsb",
        include_str!("../../../profiles/smallfile.ffsb"),
    ),
];

/// `fslab examples`'s arguments.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  fslab examples ./fslab-examples
  fslab examples . --force
  fslab examples my-lab && fslab study run my-lab/studies/quick.toml --dry-run")]
pub struct Args {
    /// The directory to write them in, as studies/, workloads/ and profiles/ (made if missing).
    dir: PathBuf,
    /// Overwrite files that already exist (without it, fslab writes nothing when one does).
    #[arg(long)]
    force: bool,
}

/// Writes every example into `args.dir` and lists what it wrote.
pub fn main(args: Args) -> Result<ExitCode, Failure> {
    if !args.force {
        let there: Vec<String> = FILES
            .iter()
            .map(|(name, _)| args.dir.join(name))
            .filter(|p| p.exists())
            .map(|p| p.display().to_string())
            .collect();
        if !there.is_empty() {
            return Err(Failure::Input(anyhow!(
                "not overwriting what exists ({}); --force overwrites it",
                there.join(", ")
            )));
        }
    }
    for path in write_all(&args.dir)? {
        out::print(&format!("{}\n", path.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes every example beneath `dir` (overwriting); the paths written.
fn write_all(dir: &Path) -> Result<Vec<PathBuf>, Failure> {
    let mut written = Vec::new();
    for (name, text) in FILES {
        let path = dir.join(name);
        let parent = path.parent().expect("a file in a directory");
        std::fs::create_dir_all(parent)
            .map_err(|e| Failure::Environment(anyhow!("cannot make {}: {e}", parent.display())))?;
        // Unchanged files are left alone: a study running from them is not disturbed.
        if std::fs::read_to_string(&path).ok().as_deref() != Some(*text) {
            std::fs::write(&path, text)
                .map_err(|e| Failure::Environment(anyhow!("cannot write {}: {e}", path.display())))?;
        }
        written.push(path);
    }
    Ok(written)
}

/// The example that a bare `name` means among `kind`'s (`studies`, `workloads`).
fn find(kind: &str, name: &str) -> Option<&'static str> {
    if name.contains('/') {
        return None;
    }
    let stem = name.strip_suffix(".toml").unwrap_or(name);
    FILES
        .iter()
        .map(|(path, _)| *path)
        .find(|path| *path == format!("{kind}/{stem}.toml"))
}

/// The file `arg` names: itself when it exists (with a note when an example has its name too),
/// else the example of that name among `kind`'s, written out (with a note saying so).
pub fn resolve(arg: &Path, kind: &str) -> Result<PathBuf, Failure> {
    let Some(example) = arg.to_str().and_then(|name| find(kind, name)) else {
        return Ok(arg.to_path_buf());
    };
    if arg.exists() {
        eprintln!(
            "fslab: note: running the file {}, not the built-in example {example}",
            arg.display()
        );
        return Ok(arg.to_path_buf());
    }
    let dir = data_dir()?;
    write_all(&dir)?;
    let path = dir.join(example);
    eprintln!(
        "fslab: note: no file {} here: running the built-in example {example}, as written to {} \
         (`fslab examples DIR` writes them out to edit)",
        arg.display(),
        path.display()
    );
    Ok(path)
}

/// Where built-in examples are written to run: fslab's data directory.
fn data_dir() -> Result<PathBuf, Failure> {
    let var = |name| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    let data = var("XDG_DATA_HOME")
        .filter(|p| p.is_absolute())
        .or_else(|| var("HOME").map(|h| h.join(".local/share")))
        .ok_or_else(|| {
            Failure::Environment(anyhow!(
                "neither XDG_DATA_HOME nor HOME is set: nowhere to write the examples"
            ))
        })?;
    Ok(data.join("fslab").join("examples"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every file of the repository's example directories is built in.
    #[test]
    fn every_example_of_the_repository_is_built_in() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut there = Vec::new();
        for dir in ["studies", "workloads", "profiles"] {
            for entry in std::fs::read_dir(root.join(dir)).unwrap() {
                let name = format!("{dir}/{}", entry.unwrap().file_name().to_string_lossy());
                there.push(name);
            }
        }
        there.sort();
        let mut built_in: Vec<String> = FILES.iter().map(|(n, _)| n.to_string()).collect();
        built_in.sort();
        assert_eq!(built_in, there, "FILES lists each file of the example directories");
    }

    #[test]
    fn a_bare_name_finds_its_kind_s_example() {
        assert_eq!(find("studies", "quick"), Some("studies/quick.toml"));
        assert_eq!(find("studies", "quick.toml"), Some("studies/quick.toml"));
        assert_eq!(find("workloads", "fileserver"), Some("workloads/fileserver.toml"));
        assert_eq!(find("workloads", "seed-001-dbench"), None);
        assert_eq!(find("studies", "./quick"), None);
        assert_eq!(find("studies", "studies/quick.toml"), None);
    }
}
