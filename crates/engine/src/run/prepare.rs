//! Before the clock starts: the run directory and the roots filesets name, the filesets set up
//! (untimed), each script thread's own base directory, and the caches dropped when asked; and,
//! with `cleanup`, the removal of what was made.

use super::RunError;
use crate::confine::{self, ConfineError, RunDir};
use crate::fileset::{self, FileTable, SetupError};
use crate::io::SharedFile;
use crate::marker;
use crate::result::SetupReport;
use crate::script::ScriptBase;
use crate::workload::{EngineKind, Group, OpenMode, Workload};
use std::os::fd::{AsFd, OwnedFd};

/// The run directory and the roots filesets name for themselves, each opened once.
struct Dirs {
    main: RunDir,
    roots: Vec<RunDir>,
    /// Per fileset: its entry in `roots`, or none for the run directory.
    root_of: Vec<Option<usize>>,
}

impl Dirs {
    fn open(workload: &Workload, run_dir: &std::path::Path) -> Result<Dirs, RunError> {
        let main = RunDir::open(run_dir)?;
        let mut roots: Vec<RunDir> = Vec::new();
        let mut root_of = Vec::new();
        for fs in &workload.filesets {
            match &fs.root {
                None => root_of.push(None),
                Some(r) => {
                    roots.push(RunDir::open(std::path::Path::new(r))?);
                    root_of.push(Some(roots.len() - 1));
                }
            }
        }
        Ok(Dirs { main, roots, root_of })
    }

    /// The directory fileset `k` lies beneath: its own root, or the run directory.
    fn of(&self, k: usize) -> &RunDir {
        self.root_of[k].map_or(&self.main, |r| &self.roots[r])
    }
}

/// The directories and filesets a run works in, made ready before its threads start.
pub(super) struct Prepared {
    dirs: Dirs,
    /// One table per fileset, in the workload's order.
    pub tables: Vec<FileTable>,
    /// What setting each fileset up did.
    pub setup: Vec<SetupReport>,
    /// The table of a group that names no fileset (a script group); none when every group
    /// names one.
    no_fileset: Option<FileTable>,
}

impl Prepared {
    /// Opens the run directory and the filesets' roots, and sets every fileset up.
    /// The files made and bytes written are counted in `layout` as they go.
    pub fn new(
        workload: &Workload,
        run_dir: &std::path::Path,
        seed: u64,
        layout: Option<&crate::fileset::Layout>,
    ) -> Result<Prepared, RunError> {
        let dirs = Dirs::open(workload, run_dir)?;
        let mut tables = Vec::new();
        let mut setup = Vec::new();
        for k in 0..workload.filesets.len() {
            let (table, report) = FileTable::setup_for_counted(dirs.of(k), workload, k, seed, layout)?;
            tables.push(table);
            setup.push(report);
        }
        let no_fileset = workload
            .groups
            .iter()
            .any(|g| g.fileset.0.is_empty())
            .then(|| FileTable::placeholder(&dirs.main))
            .transpose()?;
        Ok(Prepared {
            dirs,
            tables,
            setup,
            no_fileset,
        })
    }

    /// For each group with `open = "shared"`, every file of its fileset opened once, in order
    /// (as sysbench's `file_prepare()` opens them); none for the other groups.
    pub fn open_shared(&self, workload: &Workload) -> Result<Vec<Vec<SharedFile>>, RunError> {
        let opened = workload.groups.iter().map(|g| match g.open {
            OpenMode::Shared => {
                let map = g.engine == EngineKind::Mmap;
                self.group_tables(workload, g)[0].open_every(crate::worker::keep_flags(g), map)
            }
            _ => Ok(Vec::new()),
        });
        Ok(opened.collect::<Result<_, _>>()?)
    }

    /// The tables of the filesets group `g` works on; a group that names none (a script group,
    /// which works in its own directories) gets the placeholder.
    pub fn group_tables(&self, workload: &Workload, g: &Group) -> Vec<&FileTable> {
        let table_index = |name: &str| {
            workload
                .filesets
                .iter()
                .position(|f| f.name == name)
                .expect("validated")
        };
        let mut tables: Vec<&FileTable> = g.fileset.0.iter().map(|n| &self.tables[table_index(n)]).collect();
        if tables.is_empty() {
            tables.push(
                self.no_fileset
                    .as_ref()
                    .expect("made for a group that names no fileset"),
            );
        }
        tables
    }

    /// Each script thread's own directory, per group and thread (none for other groups), cleared
    /// of an earlier run's leftovers.
    pub fn script_bases(&self, workload: &Workload) -> Result<Vec<Vec<Option<ScriptBase>>>, RunError> {
        let mut bases = Vec::new();
        for g in &workload.groups {
            let mut per_thread = Vec::new();
            for t in 0..g.threads {
                per_thread.push(match &g.script {
                    Some(s) => {
                        let rel = s.base.replace("{thread}", &t.to_string());
                        Some(if s.full_paths {
                            walked_base(&self.dirs.main, &rel)?;
                            ScriptBase::Path {
                                root: self.dirs.main.root().to_string(),
                                base: rel,
                                thread: t,
                            }
                        } else {
                            ScriptBase::Dir(script_base(&self.dirs.main, &rel)?)
                        })
                    }
                    None => None,
                });
            }
            bases.push(per_thread);
        }
        Ok(bases)
    }

    /// `cleanup`: removes the filesets and the script threads' directories.
    pub fn clean_up(&self, workload: &Workload) -> Result<(), RunError> {
        for fs in workload.filesets.iter().enumerate() {
            fileset::remove(self.dirs.of(fs.0), fs.1)?;
        }
        for g in &workload.groups {
            match &g.script {
                // dbench's own cleanup, client by client: the files go, the directories stay.
                Some(s) if s.full_paths => {
                    for t in 0..g.threads {
                        crate::script::walk_cleanup(self.dirs.main.root(), &s.base.replace("{thread}", &t.to_string()));
                    }
                }
                Some(s) => remove_script_bases(&self.dirs.main, &s.base, g.threads)?,
                None => {}
            }
        }
        Ok(())
    }
}

/// Writes dirty data back and drops the page cache, dentries and inodes (root only).
pub(super) fn drop_caches() -> Result<(), RunError> {
    rustix::fs::sync();
    std::fs::write("/proc/sys/vm/drop_caches", "3").map_err(RunError::DropCaches)
}

/// Filesets of many files with threads that keep them open need more descriptors than the
/// usual soft limit of 1024.
pub(super) fn raise_open_file_limit() {
    use rustix::process::{getrlimit, setrlimit, Resource};
    let mut lim = getrlimit(Resource::Nofile);
    if lim.current < lim.maximum {
        lim.current = lim.maximum;
        let _ = setrlimit(Resource::Nofile, lim);
    }
}

/// Makes a script thread's base directory, clearing what an earlier run of fslab left there
/// (dbench removes its client directories first too). A directory fslab did not make is refused.
fn script_base(run: &RunDir, rel: &str) -> Result<OwnedFd, RunError> {
    let (parent_rel, name) = rel.rsplit_once('/').unwrap_or((".", rel));
    let parent = if parent_rel == "." {
        run.open_dir_self()?
    } else {
        run.open_dir(parent_rel, true)?
    };
    let io = |e: std::io::Error| ConfineError::Io {
        root: run.root().to_string(),
        path: rel.to_string(),
        error: e,
    };
    if let Ok(existing) = confine::open_beneath(parent.as_fd(), name) {
        let marked = rustix::fs::statat(&existing, marker::SCRIPT, rustix::fs::AtFlags::SYMLINK_NOFOLLOW).is_ok();
        let empty = rustix::fs::Dir::read_from(&existing)
            .map(|d| d.filter_map(Result::ok).count() <= 2)
            .unwrap_or(false);
        if !marked && !empty {
            return Err(SetupError::Foreign {
                fileset: "script".into(),
                path: format!("{}/{rel}", run.root()),
                entry: "(its contents)".into(),
            }
            .into());
        }
        crate::script::remove_tree(parent.as_fd(), name).map_err(io)?;
    }
    let base = run.open_dir(rel, true)?;
    confine::open_file(
        base.as_fd(),
        marker::SCRIPT,
        rustix::fs::OFlags::WRONLY | rustix::fs::OFlags::CREATE,
        0o644,
    )
    .map_err(io)?;
    Ok(base)
}

/// Checks the base directory of a script thread that makes its own (`full_paths`): absent, or
/// holding nothing but directories (what dbench, and fslab as dbench, leave behind after a run),
/// which the run goes over as dbench does. A file in it is refused: the script's first Deltree
/// would remove it, and fslab removes no file it did not make.
fn walked_base(run: &RunDir, rel: &str) -> Result<(), RunError> {
    let Ok(existing) = confine::open_beneath(run.fd(), rel) else {
        return Ok(());
    };
    let io = |e: std::io::Error| ConfineError::Io {
        root: run.root().to_string(),
        path: rel.to_string(),
        error: e,
    };
    if let Some(entry) = first_non_directory(existing, rel).map_err(io)? {
        return Err(SetupError::Foreign {
            fileset: "script".into(),
            path: format!("{}/{rel}", run.root()),
            entry,
        }
        .into());
    }
    Ok(())
}

/// The first entry beneath `dir` (named from `rel`) that is not a directory, if any.
fn first_non_directory(dir: OwnedFd, rel: &str) -> std::io::Result<Option<String>> {
    for entry in rustix::fs::Dir::read_from(&dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name == "." || name == ".." {
            continue;
        }
        let path = format!("{rel}/{name}");
        if entry.file_type() != rustix::fs::FileType::Directory {
            return Ok(Some(path));
        }
        if let Some(found) = first_non_directory(confine::open_beneath(dir.as_fd(), &name)?, &path)? {
            return Ok(Some(found));
        }
    }
    Ok(None)
}

/// Removes the script threads' base directories, then their parent if that is left empty.
fn remove_script_bases(run: &RunDir, base: &str, threads: u32) -> Result<(), RunError> {
    let io = |e: std::io::Error| ConfineError::Io {
        root: run.root().to_string(),
        path: base.to_string(),
        error: e,
    };
    for t in 0..threads {
        let rel = base.replace("{thread}", &t.to_string());
        let (parent_rel, name) = rel.rsplit_once('/').unwrap_or((".", rel.as_str()));
        let parent = if parent_rel == "." {
            run.open_dir_self()?
        } else {
            run.open_dir(parent_rel, false)?
        };
        crate::script::remove_tree(parent.as_fd(), name).map_err(io)?;
    }
    if let Some((parent_rel, _)) = base.rsplit_once('/') {
        if let Some((grand, last)) = parent_rel.rsplit_once('/').or(Some((".", parent_rel))) {
            let g = if grand == "." {
                run.open_dir_self()?
            } else {
                run.open_dir(grand, false)?
            };
            // Only if empty: rmdir refuses a directory with anything in it.
            let _ = rustix::fs::unlinkat(&g, last, rustix::fs::AtFlags::REMOVEDIR);
        }
    }
    Ok(())
}
