//! Where the children's files go.
//!
//! IOzone writes `iozone.DUMMY.<n>` in the current directory, or the files `-F` names, one per
//! child, in directories that must exist. The mapping onto the engine's filesets:
//!
//! - without `-F`: child n's file is `iozone.DUMMY.<n>` in the run directory itself (`--dir`, by
//!   default the current directory), as IOzone writes it in its current directory; fslab touches
//!   only those names there (and the hidden marker `.fslab-fileset` that lets it clear them
//!   safely); automatic mode's one file is `iozone.tmp`;
//! - with `-F` (or `-f`): every name must resolve beneath the run directory (`--dir`, by default
//!   the current directory; relative names are taken relative to it) and its directory must
//!   exist. The children whose files share a directory `D` get one fileset with `names` in `D`
//!   itself (`.` for the run directory), so each file is exactly the path given; `D` may hold
//!   anything else, which fslab leaves alone, and fslab never removes `D`.

use super::options::UsageError;
use std::path::{Component, Path, PathBuf};

/// One fileset: the files of the children whose names share a directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// The fileset's name in the workload.
    pub fileset: String,
    /// The group of threads working on it.
    pub group: String,
    /// Its directory beneath the run directory (`.`: the run directory itself).
    pub dir: String,
    /// File names `<prefix><k>`, when `names` is empty.
    pub prefix: String,
    /// The children's file names in `dir` (`-F`), in the order of `children`.
    pub names: Vec<String>,
    /// The children (0-based, in command-line order) whose files it holds.
    pub children: Vec<usize>,
}

impl Place {
    /// The file name of the k-th child of this place, in its directory.
    pub fn file_name(&self, k: usize) -> String {
        match self.names.get(k) {
            Some(name) => name.clone(),
            None => format!("{}{k}", self.prefix),
        }
    }

    /// The `k`-th file of this place, relative to the run directory.
    pub fn file_path(&self, k: usize) -> String {
        let name = self.file_name(k);
        if self.dir == "." {
            name
        } else {
            format!("{}/{name}", self.dir)
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    pub places: Vec<Place>,
}

impl Layout {
    /// `children` files `<prefix><n>` in the run directory.
    pub fn simple(children: u32, prefix: &str) -> Layout {
        Layout {
            places: vec![Place {
                fileset: "iozone".into(),
                group: "children".into(),
                dir: ".".into(),
                prefix: prefix.into(),
                names: Vec::new(),
                children: (0..children as usize).collect(),
            }],
        }
    }

    /// One file named `name` in the run directory (automatic mode's `iozone.tmp`).
    pub fn single(name: &str) -> Layout {
        Layout {
            places: vec![Place {
                names: vec![name.into()],
                ..Layout::simple(1, "").places.remove(0)
            }],
        }
    }

    /// The files `-F` names (or `-f`, with one name), checked to lie beneath `run_dir` in
    /// directories that exist.
    pub fn named(names: &[String], run_dir: &Path, option: &str) -> Result<Layout, UsageError> {
        let root = run_dir
            .canonicalize()
            .map_err(|e| UsageError(format!("--dir {}: {e}", run_dir.display())))?;
        let mut dirs: Vec<String> = Vec::new();
        let mut seen: Vec<Vec<String>> = Vec::new();
        let mut places: Vec<Place> = Vec::new();
        for (child, name) in names.iter().enumerate() {
            let parts = beneath(&root, name).map_err(|why| {
                UsageError(format!(
                    "option {option}: `{name}` {why}; the files must lie beneath {} (--dir)",
                    root.display()
                ))
            })?;
            if seen.contains(&parts) {
                return Err(UsageError(format!(
                    "option {option}: `{name}` is named twice; each child needs a file of its own"
                )));
            }
            seen.push(parts.clone());
            let (file, parent) = parts.split_last().expect("a name has a last component");
            let parent = if parent.is_empty() {
                ".".to_string()
            } else {
                parent.join("/")
            };
            if !root.join(&parent).is_dir() {
                return Err(UsageError(format!(
                    "option {option}: `{name}`: its directory {} does not exist (IOzone's {option} names files in existing directories)",
                    root.join(&parent).display()
                )));
            }
            match dirs.iter().position(|d| *d == parent) {
                Some(k) => {
                    places[k].children.push(child);
                    places[k].names.push(file.clone());
                }
                None => {
                    dirs.push(parent.clone());
                    places.push(Place {
                        fileset: String::new(),
                        group: String::new(),
                        dir: parent,
                        prefix: String::new(),
                        names: vec![file.clone()],
                        children: vec![child],
                    });
                }
            }
        }
        let single = places.len() == 1;
        for (k, p) in places.iter_mut().enumerate() {
            (p.fileset, p.group) = if single {
                ("iozone".into(), "children".into())
            } else {
                (format!("iozone-{k}"), format!("children-{k}"))
            };
        }
        Ok(Layout { places })
    }

    /// The layout of the first `n` children only (a run with fewer children than `-F` names,
    /// with `-l`/`-u`): places keep their filesets' names, and a place left without a child
    /// goes.
    pub fn first(&self, n: usize) -> Layout {
        let places = self
            .places
            .iter()
            .filter_map(|p| {
                let keep = p.children.iter().take_while(|&&c| c < n).count();
                (keep > 0).then(|| Place {
                    children: p.children[..keep].to_vec(),
                    names: p.names.iter().take(keep).cloned().collect(),
                    ..p.clone()
                })
            })
            .collect();
        Layout { places }
    }

    /// Number of children.
    pub fn children(&self) -> usize {
        self.places.iter().map(|p| p.children.len()).sum()
    }

    /// Whether the places, read in order, hold the children in order (0, 1, 2, ...): so they do
    /// but with `-F` naming files in several directories in turn.
    pub fn in_child_order(&self) -> bool {
        self.places
            .iter()
            .flat_map(|p| &p.children)
            .enumerate()
            .all(|(i, &c)| i == c)
    }

    /// Child `i`'s place and its index there.
    pub fn of_child(&self, i: usize) -> (&Place, u32) {
        for p in &self.places {
            if let Some(k) = p.children.iter().position(|&c| c == i) {
                return (p, k as u32);
            }
        }
        panic!("child {i} has no file")
    }

    /// Child `i`'s file, relative to the run directory.
    pub fn child_file(&self, i: usize) -> String {
        let (p, k) = self.of_child(i);
        p.file_path(k as usize)
    }
}

/// The components of `name` relative to `root` (canonical), or why it is refused.
fn beneath(root: &Path, name: &str) -> Result<Vec<String>, String> {
    if name.is_empty() {
        return Err("is empty".into());
    }
    let path = Path::new(name);
    let full = if path.is_absolute() {
        normalise(path)?
    } else {
        normalise(&root.join(path))?
    };
    let rel = match full.strip_prefix(root) {
        Ok(r) => r.to_path_buf(),
        // The name may reach the run directory through a symlink of its own (/var/run, say):
        // resolve the part of it that exists.
        Err(_) => {
            let resolved = resolve_existing(&full);
            resolved
                .strip_prefix(root)
                .map_err(|_| "is not beneath the run directory".to_string())?
                .to_path_buf()
        }
    };
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_str().map(String::from).ok_or("is not valid UTF-8"))
        .collect::<Result<_, _>>()?;
    if parts.is_empty() {
        return Err("names the run directory itself, not a file".into());
    }
    // Directories on the way that exist must not lead out through a symlink.
    let mut at = root.to_path_buf();
    for p in &parts[..parts.len() - 1] {
        at.push(p);
        if let Ok(real) = at.canonicalize() {
            if !real.starts_with(root) {
                return Err(format!("leads out of the run directory through `{}`", at.display()));
            }
        }
    }
    Ok(parts)
}

/// `path` with `.` and `..` worked out lexically; a `..` above the root is refused.
fn normalise(path: &Path) -> Result<PathBuf, String> {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::RootDir | Component::Prefix(_) => out.push(c.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return Err("climbs above /".into());
                }
            }
            Component::Normal(n) => out.push(n),
        }
    }
    Ok(out)
}

/// The longest existing ancestor of `path` resolved (symlinks followed), with the rest appended.
fn resolve_existing(path: &Path) -> PathBuf {
    let mut head = path.to_path_buf();
    let mut tail = Vec::new();
    loop {
        if let Ok(real) = head.canonicalize() {
            let mut out = real;
            for t in tail.iter().rev() {
                out.push(t);
            }
            return out;
        }
        match (head.file_name().map(|n| n.to_os_string()), head.parent()) {
            (Some(n), Some(p)) => {
                tail.push(n);
                head = p.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn default_layout_is_one_fileset() {
        let l = Layout::simple(3, "iozone.DUMMY.");
        assert_eq!(l.children(), 3);
        assert_eq!(l.child_file(2), "iozone.DUMMY.2");
        assert_eq!(l.places[0].dir, ".");
        assert_eq!(Layout::single("iozone.tmp").child_file(0), "iozone.tmp");
    }

    #[test]
    fn names_are_grouped_by_directory_and_kept() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("a")).unwrap();
        std::fs::create_dir_all(d.path().join("b")).unwrap();
        let abs = d.path().join("b/f2").display().to_string();
        let l = Layout::named(&names(&["a/f0", &abs, "a/./f1", "top"]), d.path(), "-F").unwrap();
        assert_eq!(l.places.len(), 3);
        assert_eq!(l.places[0].dir, "a");
        assert_eq!(l.places[0].children, vec![0, 2]);
        assert_eq!(l.places[0].names, ["f0", "f1"]);
        assert_eq!(l.places[1].dir, "b");
        assert_eq!(l.places[2].dir, ".");
        assert_eq!(l.child_file(1), "b/f2");
        assert_eq!(l.child_file(2), "a/f1");
        assert_eq!(l.child_file(3), "top");
        assert_eq!(l.places[1].fileset, "iozone-1");
        // A run of two children (-l/-u) uses the first two names, in their places.
        let two = l.first(2);
        assert_eq!(two.children(), 2);
        assert_eq!((two.child_file(0), two.child_file(1)), ("a/f0".into(), "b/f2".into()));
        assert_eq!(two.places.len(), 2);
        assert_eq!(
            (two.places[0].fileset.as_str(), two.places[1].fileset.as_str()),
            ("iozone-0", "iozone-1")
        );
        assert_eq!(l.first(4), l);
    }

    #[test]
    fn a_name_in_a_directory_that_does_not_exist_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let e = Layout::named(&names(&["nowhere/f0"]), d.path(), "-F").unwrap_err();
        assert!(e.0.contains("`nowhere/f0`") && e.0.contains("does not exist"), "{e}");
        assert!(!d.path().join("nowhere").exists());
    }

    #[test]
    fn names_outside_the_run_directory_are_refused() {
        let d = tempfile::tempdir().unwrap();
        for bad in ["/etc/passwd", "../x", "a/../../x", ".", ""] {
            let e = Layout::named(&names(&[bad]), d.path(), "-F").unwrap_err();
            assert!(e.0.contains("option -F"), "{bad}: {e}");
        }
        std::os::unix::fs::symlink("/tmp", d.path().join("out")).unwrap();
        let e = Layout::named(&names(&["out/f"]), d.path(), "-F").unwrap_err();
        assert!(e.0.contains("leads out"), "{e}");
        let e = Layout::named(&names(&["f", "./f"]), d.path(), "-F").unwrap_err();
        assert!(e.0.contains("named twice"), "{e}");
    }
}
