//! dbench 4.0 on fslab's engine: a loadfile (Samba NetBench trace) replayed by NPROCS clients,
//! each in its own directory `clients/client<N>`, with dbench's per-second lines, its per-operation
//! table and its `Throughput` figure (see ../shared/reference/classic-benchmarks.md, section 2).
//!
//! The loadfile is read by [`loadfile`], compiled here into ONE engine [`Script`] that every
//! client thread replays (from the start again at its end) in its own base directory, and
//! [`report`] turns the run's once-a-second samples and step statistics into what dbench prints.
//!
//! Paths: the loadfile's `\clients\client1\…` is the client's own directory, so a path beneath it
//! becomes relative to the thread's base `clients/client{thread}` (dbench rewrites `client1` to
//! `client<N>` the same way). Any other absolute path, and any `..`, is refused with its line.
//!
//! A few loadfile lines name the client's directory itself (`Deltree "\clients\client1"`, the
//! `NTCreateX` that opens it, `QUERY_PATH_INFORMATION` and `FIND_FIRST` on it) or its parent
//! (`Mkdir "\clients"`). The engine's script paths cannot name the base directory itself yet, so
//! these become the nearest calls it can make (see [`compile_script`]); everything else maps one
//! line to one step, after dbench's name look-up where it makes one.

pub mod loadfile;
pub mod report;

use fslab_engine::script::{Call, Expect, Script, Step};
use fslab_engine::workload::{Group, Names, Stop};
use fslab_engine::{Span, Workload};
use loadfile::{Line, Op, Status};
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Where Debian's dbench package installs its loadfile.
pub const DEFAULT_LOADFILE: &str = "/usr/share/dbench/client.txt";

/// Each client's directory beneath the run directory.
pub const BASE: &str = "clients/client{thread}";

/// dbench's report names, in the order of its table (`Rmdir`, absent from client.txt, has a row of
/// its own when a loadfile has one).
pub const LABELS: [&str; 17] = [
    "NTCreateX",
    "Close",
    "Rename",
    "Unlink",
    "Deltree",
    "Rmdir",
    "Mkdir",
    "Qpathinfo",
    "Qfileinfo",
    "Qfsinfo",
    "Sfileinfo",
    "Find",
    "WriteX",
    "ReadX",
    "LockX",
    "UnlockX",
    "Flush",
];

/// The label of the extra steps a `Deltree` of the client's own directory is split into (beyond
/// its first); they are not a dbench operation and stay out of its table.
pub const DELTREE_REST: &str = "(deltree rest)";

/// The label of the name look-ups dbench makes before an operation (see [`compile_script`]); not
/// a dbench operation, so not in its table.
pub const RESOLVE: &str = "(resolve)";

/// A directory each client opens in place of its own directory (see [`compile_script`]).
pub const BASE_STAND_IN: &str = ".fslab-client-dir";

/// Index of a label in [`LABELS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u16)]
enum Label {
    NtCreateX,
    Close,
    Rename,
    Unlink,
    Deltree,
    Rmdir,
    Mkdir,
    Qpathinfo,
    Qfileinfo,
    Qfsinfo,
    Sfileinfo,
    Find,
    WriteX,
    ReadX,
    LockX,
    UnlockX,
    Flush,
}

/// What went wrong before anything ran.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A line of the loadfile (line 0: the file as a whole).
    #[error("{file}:{line}: {message}")]
    Loadfile { file: String, line: usize, message: String },
    #[error(
        "the loadfile {file} does not exist: install Debian's dbench package (apt-get install dbench), \
         which ships it, or name a loadfile with -c FILE"
    )]
    MissingDefault { file: String },
    #[error("cannot read the loadfile {file}: {error}")]
    Read { file: String, error: std::io::Error },
    /// A command-line option.
    #[error("{option}: {message}")]
    Option { option: String, message: String },
}

/// dbench's options, as `fslab dbench` takes them.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// Number of clients (dbench's NPROCS).
    pub nprocs: u32,
    /// `-t`: seconds of the execute phase (dbench's default is 600).
    pub time: u64,
    /// `--warmup`: seconds of warm-up; dbench's is time / 5.
    pub warmup: Option<u64>,
    /// `-D`: the directory to run in.
    pub dir: PathBuf,
    /// `-c`: the loadfile; [`DEFAULT_LOADFILE`] when not given.
    pub loadfile: Option<PathBuf>,
    /// `-s`: open files with O_SYNC.
    pub sync_open: bool,
    /// `-S`: fsync the parent directory after unlink, rmdir and rename.
    pub sync_dirs: bool,
    /// `-F`: fsync after every write.
    pub fsync: bool,
    /// `--no-resolve`: no case-insensitive look-up after a failed QUERY_PATH_INFORMATION.
    pub no_resolve: bool,
    /// `--skip-cleanup`: leave the clients' directories in place after the run.
    pub skip_cleanup: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            nprocs: 1,
            time: 600,
            warmup: None,
            dir: PathBuf::from("."),
            loadfile: None,
            sync_open: false,
            sync_dirs: false,
            fsync: false,
            no_resolve: false,
            skip_cleanup: false,
        }
    }
}

impl Options {
    /// Refuses options dbench would not run with, naming the option.
    pub fn check(&self) -> Result<(), Error> {
        let bad = |option: &str, message: &str| {
            Err(Error::Option {
                option: option.into(),
                message: message.into(),
            })
        };
        if self.nprocs == 0 {
            return bad("NPROCS", "the number of clients must be at least 1");
        }
        if self.nprocs > 10_000 {
            return bad("NPROCS", "at most 10000 clients");
        }
        if self.time == 0 {
            return bad("-t", "the time limit must be at least 1 second");
        }
        Ok(())
    }

    /// The warm-up: `--warmup`, or dbench's time / 5 (whole seconds).
    pub fn warmup_secs(&self) -> u64 {
        self.warmup.unwrap_or(self.time / 5)
    }

    /// The loadfile to read.
    pub fn loadfile_path(&self) -> PathBuf {
        self.loadfile.clone().unwrap_or_else(|| PathBuf::from(DEFAULT_LOADFILE))
    }
}

/// Reads and parses the loadfile the options name.
pub fn read_loadfile(opts: &Options) -> Result<Vec<Line>, Error> {
    let path = opts.loadfile_path();
    let file = path.display().to_string();
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && opts.loadfile.is_none() => {
            return Err(Error::MissingDefault { file })
        }
        Err(error) => return Err(Error::Read { file, error }),
    };
    loadfile::parse(&String::from_utf8_lossy(&bytes), &file)
}

/// Reads the loadfile and compiles the whole run.
pub fn workload(opts: &Options) -> Result<Workload, Error> {
    opts.check()?;
    let lines = read_loadfile(opts)?;
    compile(opts, &lines, &opts.loadfile_path())
}

/// Compiles parsed loadfile lines into the run's workload: one group of `nprocs` threads
/// replaying one script, `-t` seconds after a warm-up, cleaning up after itself as dbench does.
pub fn compile(opts: &Options, lines: &[Line], source: &Path) -> Result<Workload, Error> {
    opts.check()?;
    let script = compile_script(opts, lines, &source.display().to_string())?;
    let group = Group {
        threads: opts.nprocs,
        fileset: Names::default(),
        script: Some(script),
        ..Group::new("clients", "")
    };
    Ok(Workload {
        description: format!(
            "dbench 4.0: {} client(s) replaying {}, {} s after a {} s warm-up",
            opts.nprocs,
            source.display(),
            opts.time,
            opts.warmup_secs()
        ),
        stop: Stop {
            time: Some(Span(Duration::from_secs(opts.time))),
            ramp: Span(Duration::from_secs(opts.warmup_secs())),
            ..Stop::default()
        },
        groups: vec![group],
        cleanup: !opts.skip_cleanup,
        ..Workload::new("dbench")
    })
}

/// Where a loadfile path leads, relative to the client's own directory.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Target {
    /// The client's own directory, `\clients\client1`.
    Base,
    /// The directory holding every client's, `\clients`.
    Parent,
    /// A path beneath the client's directory.
    Rel(String),
}

/// Maps a loadfile path (already with `/`) to where it leads for each client.
fn target(raw: &str) -> Result<Target, String> {
    let rooted = raw.starts_with('/');
    let mut comps: Vec<&str> = raw.split('/').filter(|c| !c.is_empty() && *c != ".").collect();
    if comps.contains(&"..") {
        return Err(format!(
            "the path `{raw}` has `..`: paths must stay beneath the client's directory"
        ));
    }
    let client = comps.len() >= 2 && comps[0] == "clients" && comps[1] == "client1";
    if client {
        comps.drain(..2);
    } else if rooted && comps == ["clients"] {
        return Ok(Target::Parent);
    } else if rooted {
        return Err(format!(
            "the path `{raw}` is absolute and not beneath /clients/client1 (each client replays the \
             loadfile in its own clients/client<N>, as dbench does)"
        ));
    }
    if comps.is_empty() {
        return Ok(Target::Base);
    }
    Ok(Target::Rel(comps.join("/")))
}

/// What a step expects from the status a line carries.
fn expect(status: &Status) -> Expect {
    match status {
        Status::Ok => Expect::Ok,
        Status::Fail(_) => Expect::Fail,
    }
}

/// Whether a FIND_FIRST pattern has a wildcard (then dbench lists the directory).
fn is_wildcard(pattern: &str) -> bool {
    pattern.contains(['<', '>', '*', '?', '"'])
}

/// What the whole loadfile shows about the client's tree: which paths are directories (opened as
/// directories, made, or holding other paths) and which names it uses at the top of the client's
/// directory.
struct Shape {
    dirs: HashSet<String>,
    /// Top-level names: `true` for a directory.
    top: BTreeMap<String, bool>,
}

impl Shape {
    fn new(lines: &[Line]) -> Shape {
        let mut dirs = HashSet::new();
        let mut names = HashSet::new();
        for l in lines {
            let (paths, dir): (Vec<&String>, bool) = match &l.op {
                Op::NtCreateX { path, options, .. } => (vec![path], options & 1 != 0),
                Op::Mkdir { path } | Op::Rmdir { path } | Op::Deltree { path } => (vec![path], true),
                Op::Rename { from, to } => (vec![from, to], false),
                Op::Unlink { path } | Op::QueryPath { path } => (vec![path], false),
                Op::FindFirst { pattern, .. } => (vec![pattern], false),
                _ => continue,
            };
            for p in paths {
                let Ok(Target::Rel(rel)) = target(p) else { continue };
                let mut end = 0;
                while let Some(i) = rel[end..].find('/') {
                    end += i;
                    dirs.insert(rel[..end].to_string());
                    end += 1;
                }
                let first = rel.split('/').next().unwrap_or_default();
                if !is_wildcard(first) && !names.contains(first) {
                    names.insert(first.to_string());
                }
                if dir {
                    dirs.insert(rel);
                }
            }
        }
        let top = names
            .into_iter()
            .map(|n| {
                let dir = dirs.contains(&n);
                (n, dir)
            })
            .collect();
        Shape { dirs, top }
    }
}

/// The script as it is built: labels are added as they are first needed.
struct Builder {
    labels: Vec<String>,
    steps: Vec<Step>,
}

impl Builder {
    fn label(&mut self, name: &str) -> u16 {
        match self.labels.iter().position(|l| l == name) {
            Some(i) => i as u16,
            None => {
                self.labels.push(name.to_string());
                (self.labels.len() - 1) as u16
            }
        }
    }

    /// The steps of one line: the line's time goes on the first.
    fn line(&mut self, at: Option<f64>, steps: Vec<(u16, Expect, Call)>) {
        for (i, (label, expect, call)) in steps.into_iter().enumerate() {
            self.steps.push(Step {
                label,
                at: if i == 0 { at } else { None },
                expect,
                call,
            });
        }
    }
}

/// Compiles the lines into the script every client replays.
///
/// Name resolution: dbench 4.0 (Debian's 4.0-2.1, as strace shows) looks every name up before
/// NTCreateX, Unlink, Rename (both names), Rmdir, Mkdir and FIND_FIRST, as a case-insensitive
/// server would: a stat, and when it fails a read of the parent directory for the name in any
/// case. QUERY_PATH_INFORMATION and a FIND_FIRST without wildcard are nothing but that look-up.
/// Unless `--no-resolve`, the look-up before an operation is a step of its own, counted under
/// [`RESOLVE`] and left out of dbench's table.
///
/// Calls on the client's own directory (or on `\clients`) are made as follows while the engine's
/// script paths cannot name the base directory itself:
/// - a stat or a listing of it (`QUERY_PATH_INFORMATION`, `FIND_FIRST`) and a `Mkdir` of it or of
///   `\clients` (which exist: dbench's mkdir fails and is ignored) become a statfs of it, the one
///   call the engine makes on the base itself; each succeeds, as those do in dbench;
/// - opening it (`NTCreateX`) opens [`BASE_STAND_IN`] as a directory, made by the first such open
///   (dbench: mkdir, which fails, then open);
/// - `Deltree` of it unlinks the files of every directory and every file the loadfile names at the
///   top of the client's directory: the first of those steps is the `Deltree`, the others are
///   counted under [`DELTREE_REST`].
fn compile_script(opts: &Options, lines: &[Line], source: &str) -> Result<Script, Error> {
    let shape = Shape::new(lines);
    let mut b = Builder {
        labels: LABELS.iter().map(|s| s.to_string()).collect(),
        steps: Vec::with_capacity(lines.len() * 3 / 2),
    };
    let resolve = !opts.no_resolve;
    for line in lines {
        let bad = |message: String| Error::Loadfile {
            file: source.to_string(),
            line: line.number,
            message,
        };
        let path_of = |raw: &str| target(raw).map_err(bad);
        let rel_of = |raw: &str, what: &str| match target(raw).map_err(bad)? {
            Target::Rel(rel) => Ok(rel),
            _ => Err(bad(format!(
                "{what} of the client's own directory (or of \\clients) is refused"
            ))),
        };
        let status = expect(&line.status);
        let l = |label: Label| label as u16;
        // The look-up dbench makes before an operation on `rel`.
        let mut lookups: Vec<(u16, Expect, Call)> = Vec::new();
        let mut lookup = |b: &mut Builder, rel: &str| {
            if resolve {
                let label = b.label(RESOLVE);
                lookups.push((
                    label,
                    Expect::Any,
                    Call::Stat {
                        path: rel.to_string(),
                        resolve: true,
                    },
                ));
            }
        };
        let mut steps: Vec<(u16, Expect, Call)> = Vec::new();
        match &line.op {
            Op::NtCreateX {
                path,
                options,
                disposition,
                handle,
            } => {
                let (create, truncate) = match disposition {
                    2 => (true, false),
                    4 | 5 => (true, true),
                    _ => (false, false),
                };
                let call = match path_of(path)? {
                    Target::Base | Target::Parent => Call::Open {
                        path: BASE_STAND_IN.into(),
                        handle: *handle,
                        create: false,
                        truncate: false,
                        directory: true,
                    },
                    Target::Rel(rel) => {
                        lookup(&mut b, &rel);
                        // dbench opens a directory again as one when open(O_RDWR) says EISDIR:
                        // a path the loadfile shows to be a directory is opened as one.
                        let directory = options & 1 != 0 || (status == Expect::Ok && shape.dirs.contains(&rel));
                        Call::Open {
                            path: rel,
                            handle: *handle,
                            create: create && !directory,
                            truncate: truncate && !directory,
                            directory,
                        }
                    }
                };
                steps.push((l(Label::NtCreateX), status, call));
            }
            Op::Close { handle } => steps.push((l(Label::Close), status, Call::Close { handle: *handle })),
            Op::Rename { from, to } => {
                let (from, to) = (rel_of(from, "Rename")?, rel_of(to, "Rename")?);
                lookup(&mut b, &from);
                lookup(&mut b, &to);
                steps.push((l(Label::Rename), status, Call::Rename { from, to }));
            }
            Op::Unlink { path } => {
                let path = rel_of(path, "Unlink")?;
                lookup(&mut b, &path);
                steps.push((l(Label::Unlink), status, Call::Unlink { path }));
            }
            Op::Rmdir { path } => {
                let path = rel_of(path, "Rmdir")?;
                lookup(&mut b, &path);
                steps.push((l(Label::Rmdir), status, Call::Rmdir { path }));
            }
            Op::Deltree { path } => match path_of(path)? {
                // dbench ignores Deltree's status.
                Target::Rel(path) => steps.push((l(Label::Deltree), Expect::Any, Call::DeleteFiles { path })),
                Target::Parent => return Err(bad("Deltree of \\clients (every client's directory) is refused".into())),
                Target::Base => {
                    let mut calls: Vec<Call> = shape
                        .top
                        .iter()
                        .map(|(name, dir)| match dir {
                            true => Call::DeleteFiles { path: name.clone() },
                            false => Call::Unlink { path: name.clone() },
                        })
                        .collect();
                    // Directories first, as BTreeMap order would interleave them.
                    calls.sort_by_key(|c| !matches!(c, Call::DeleteFiles { .. }));
                    if calls.is_empty() {
                        calls.push(Call::Statfs);
                    }
                    for (i, call) in calls.into_iter().enumerate() {
                        let label = if i == 0 {
                            l(Label::Deltree)
                        } else {
                            b.label(DELTREE_REST)
                        };
                        steps.push((label, Expect::Any, call));
                    }
                }
            },
            Op::Mkdir { path } => {
                // dbench ignores Mkdir's status.
                let call = match path_of(path)? {
                    Target::Rel(path) => {
                        lookup(&mut b, &path);
                        Call::Mkdir { path }
                    }
                    Target::Base | Target::Parent => Call::Statfs,
                };
                steps.push((l(Label::Mkdir), Expect::Any, call));
            }
            Op::QueryPath { path } => {
                let call = match path_of(path)? {
                    Target::Rel(path) => Call::Stat { path, resolve },
                    Target::Base | Target::Parent => Call::Statfs,
                };
                steps.push((l(Label::Qpathinfo), status, call));
            }
            Op::QueryFile { handle } => steps.push((l(Label::Qfileinfo), status, Call::Fstat { handle: *handle })),
            Op::QueryFs => steps.push((l(Label::Qfsinfo), status, Call::Statfs)),
            Op::SetFile { handle } => steps.push((l(Label::Sfileinfo), status, Call::SetTimes { handle: *handle })),
            Op::FindFirst { pattern, max } => {
                // dbench ignores FIND_FIRST's status. With a wildcard: the look-up of the pattern,
                // then a listing of its directory, up to max entries. Without: the look-up alone.
                let call = if is_wildcard(pattern) {
                    let parent = pattern.rsplit_once('/').map_or("", |(d, _)| d);
                    match path_of(parent)? {
                        Target::Rel(dir) => {
                            if let Target::Rel(rel) = path_of(pattern)? {
                                lookup(&mut b, &rel);
                            }
                            Call::List { path: dir, max: *max }
                        }
                        Target::Base | Target::Parent => Call::Statfs,
                    }
                } else {
                    match path_of(pattern)? {
                        Target::Rel(path) => Call::Stat { path, resolve },
                        Target::Base | Target::Parent => Call::Statfs,
                    }
                };
                steps.push((l(Label::Find), Expect::Any, call));
            }
            Op::WriteX { handle, offset, size } => steps.push((
                l(Label::WriteX),
                status,
                Call::Write {
                    handle: *handle,
                    offset: *offset,
                    len: *size,
                },
            )),
            Op::ReadX { handle, offset, size } => steps.push((
                l(Label::ReadX),
                status,
                Call::Read {
                    handle: *handle,
                    offset: *offset,
                    len: *size,
                },
            )),
            Op::LockX { handle } => steps.push((l(Label::LockX), status, Call::Lock { handle: *handle })),
            Op::UnlockX { handle } => steps.push((l(Label::UnlockX), status, Call::Unlock { handle: *handle })),
            Op::Flush { handle } => steps.push((l(Label::Flush), status, Call::Fsync { handle: *handle })),
        }
        lookups.extend(steps);
        b.line(line.at, lookups);
    }
    Ok(Script {
        source: source.to_string(),
        base: BASE.to_string(),
        labels: b.labels,
        paced: lines.iter().any(|l| l.at.is_some()),
        sync_dirs: opts.sync_dirs,
        fsync_writes: opts.fsync,
        osync: opts.sync_open,
        steps: b.steps,
    })
}

/// Loadfile lines per script step: each line is one step counted under a dbench label, plus the
/// look-ups and the rest of a Deltree (dbench's `lines` counts lines, not steps).
pub fn lines_per_step(script: &Script) -> f64 {
    let visible = script
        .steps
        .iter()
        .filter(|s| LABELS.contains(&script.labels[s.label as usize].as_str()))
        .count();
    visible as f64 / script.steps.len().max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn script(text: &str, opts: &Options) -> Result<Script, Error> {
        let lines = loadfile::parse(text, "t.txt")?;
        compile_script(opts, &lines, "t.txt")
    }

    /// (label, expect, call) of each step.
    fn steps(s: &Script) -> Vec<(&str, Expect, Call)> {
        s.steps
            .iter()
            .map(|st| (s.labels[st.label as usize].as_str(), st.expect, st.call.clone()))
            .collect()
    }

    #[test]
    fn client1_paths_become_relative_to_the_client_directory() {
        assert_eq!(
            target("/clients/client1/~dmtmp/A.DOC"),
            Ok(Target::Rel("~dmtmp/A.DOC".into()))
        );
        assert_eq!(target("/clients/client1"), Ok(Target::Base));
        assert_eq!(target("/clients/client1/"), Ok(Target::Base));
        assert_eq!(target("/clients"), Ok(Target::Parent));
        assert_eq!(target("x/./y"), Ok(Target::Rel("x/y".into())));
        assert!(target("/etc/passwd").unwrap_err().contains("absolute"));
        assert!(target("/clients/client1/../../etc").unwrap_err().contains("`..`"));
        assert!(target("/clients/client2/x").is_err());
    }

    #[test]
    fn wildcards_are_dbench_s() {
        assert!(is_wildcard("~dmtmp/<.JNK"));
        assert!(is_wildcard("a/*"));
        assert!(!is_wildcard("a/b.doc"));
    }

    #[test]
    fn ntcreatex_dispositions_and_directories() {
        let opts = Options {
            no_resolve: true,
            ..Options::default()
        };
        let s = script(
            r#"NTCreateX "\clients\client1\d" 0x1 0x2 1 NT_STATUS_OK
NTCreateX "\clients\client1\d\a" 0x40 0x2 2 NT_STATUS_OK
NTCreateX "\clients\client1\d\b" 0x40 0x5 3 NT_STATUS_OK
NTCreateX "\clients\client1\d\c" 0x40 0x1 4 NT_STATUS_OBJECT_NAME_NOT_FOUND
NTCreateX "\clients\client1\d" 0x0 0x1 5 NT_STATUS_OK
"#,
            &opts,
        )
        .unwrap();
        let open = |path: &str, handle, create, truncate, directory| Call::Open {
            path: path.into(),
            handle,
            create,
            truncate,
            directory,
        };
        assert_eq!(
            steps(&s),
            vec![
                ("NTCreateX", Expect::Ok, open("d", 1, false, false, true)),
                ("NTCreateX", Expect::Ok, open("d/a", 2, true, false, false)),
                ("NTCreateX", Expect::Ok, open("d/b", 3, true, true, false)),
                ("NTCreateX", Expect::Fail, open("d/c", 4, false, false, false)),
                // Options 0 on a directory: opened as one, as dbench retries after EISDIR.
                ("NTCreateX", Expect::Ok, open("d", 5, false, false, true)),
            ]
        );
        assert_eq!(s.base, "clients/client{thread}");
        assert!(!s.paced);
    }

    #[test]
    fn name_lookups_precede_the_operations_dbench_resolves() {
        let text = r#"Unlink "\clients\client1\x" 0x20 NT_STATUS_OK
Rename "\clients\client1\a" "\clients\client1\b" NT_STATUS_OK
QUERY_PATH_INFORMATION "\clients\client1\q" 1004 NT_STATUS_OBJECT_NAME_NOT_FOUND
FIND_FIRST "\clients\client1\d\*" 260 1366 2 NT_STATUS_OK
"#;
        let s = script(text, &Options::default()).unwrap();
        let lookup = |p: &str| {
            (
                RESOLVE,
                Expect::Any,
                Call::Stat {
                    path: p.into(),
                    resolve: true,
                },
            )
        };
        assert_eq!(
            steps(&s),
            vec![
                lookup("x"),
                ("Unlink", Expect::Ok, Call::Unlink { path: "x".into() }),
                lookup("a"),
                lookup("b"),
                (
                    "Rename",
                    Expect::Ok,
                    Call::Rename {
                        from: "a".into(),
                        to: "b".into()
                    }
                ),
                (
                    "Qpathinfo",
                    Expect::Fail,
                    Call::Stat {
                        path: "q".into(),
                        resolve: true
                    }
                ),
                lookup("d/*"),
                (
                    "Find",
                    Expect::Any,
                    Call::List {
                        path: "d".into(),
                        max: 1366
                    }
                ),
            ]
        );
        assert_eq!(lines_per_step(&s), 4.0 / 8.0);
        // --no-resolve: no look-ups, and QUERY_PATH_INFORMATION is a bare stat.
        let opts = Options {
            no_resolve: true,
            ..Options::default()
        };
        let s = script(text, &opts).unwrap();
        assert_eq!(s.steps.len(), 4);
        assert_eq!(lines_per_step(&s), 1.0);
        assert_eq!(
            s.steps[2].call,
            Call::Stat {
                path: "q".into(),
                resolve: false
            }
        );
    }

    #[test]
    fn the_client_directory_itself_gets_stand_ins() {
        let opts = Options {
            no_resolve: true,
            ..Options::default()
        };
        let s = script(
            r#"Deltree "\clients\client1" NT_STATUS_OK
Mkdir "\clients" NT_STATUS_OK
NTCreateX "\clients\client1" 0x1 0x2 9 NT_STATUS_OK
QUERY_PATH_INFORMATION "\clients\client1" 1004 NT_STATUS_OK
NTCreateX "\clients\client1\top.txt" 0x40 0x2 1 NT_STATUS_OK
Mkdir "\clients\client1\d" NT_STATUS_OK
Deltree "\clients\client1\d" NT_STATUS_OK
"#,
            &opts,
        )
        .unwrap();
        assert_eq!(
            steps(&s),
            vec![
                ("Deltree", Expect::Any, Call::DeleteFiles { path: "d".into() }),
                (DELTREE_REST, Expect::Any, Call::Unlink { path: "top.txt".into() }),
                ("Mkdir", Expect::Any, Call::Statfs),
                (
                    "NTCreateX",
                    Expect::Ok,
                    Call::Open {
                        path: BASE_STAND_IN.into(),
                        handle: 9,
                        create: false,
                        truncate: false,
                        directory: true
                    }
                ),
                ("Qpathinfo", Expect::Ok, Call::Statfs),
                (
                    "NTCreateX",
                    Expect::Ok,
                    Call::Open {
                        path: "top.txt".into(),
                        handle: 1,
                        create: true,
                        truncate: false,
                        directory: false
                    }
                ),
                ("Mkdir", Expect::Any, Call::Mkdir { path: "d".into() }),
                ("Deltree", Expect::Any, Call::DeleteFiles { path: "d".into() }),
            ]
        );
    }

    #[test]
    fn timestamps_pace_the_script() {
        let s = script(
            "0.5 Close 1 NT_STATUS_OK\n1.5 Close 2 NT_STATUS_OK\n",
            &Options::default(),
        )
        .unwrap();
        assert!(s.paced);
        assert_eq!(
            s.steps.iter().map(|s| s.at).collect::<Vec<_>>(),
            vec![Some(0.5), Some(1.5)]
        );
    }

    #[test]
    fn paths_leaving_the_client_directory_are_refused_with_their_line() {
        let e = script(
            "Close 1 NT_STATUS_OK\nUnlink \"\\clients\\client1\\..\\..\\etc\\passwd\" 0x20 NT_STATUS_OK\n",
            &Options::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("t.txt:2:") && e.contains("`..`"), "{e}");
        let e = script("Mkdir \"\\etc\\x\" NT_STATUS_OK\n", &Options::default())
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("t.txt:1:") && e.contains("absolute"), "{e}");
        let e = script("Unlink \"\\clients\\client1\" 0x20 NT_STATUS_OK\n", &Options::default())
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("t.txt:1:") && e.contains("refused"), "{e}");
    }

    #[test]
    fn sync_options_reach_the_script_and_the_workload_cleans_up() {
        let lines = loadfile::parse("Close 1 NT_STATUS_OK\n", "t.txt").unwrap();
        let opts = Options {
            nprocs: 3,
            time: 30,
            sync_open: true,
            sync_dirs: true,
            fsync: true,
            ..Options::default()
        };
        let w = compile(&opts, &lines, Path::new("t.txt")).unwrap();
        let s = w.groups[0].script.as_ref().unwrap();
        assert!(s.osync && s.sync_dirs && s.fsync_writes);
        assert_eq!(w.groups[0].threads, 3);
        assert!(w.groups[0].fileset.is_empty());
        assert_eq!(w.stop.time, Some(Span(Duration::from_secs(30))));
        assert_eq!(w.stop.ramp, Span(Duration::from_secs(6)));
        assert!(w.cleanup);
        assert!(w.validate().is_ok());
        let w = compile(&Options::default(), &lines, Path::new("t.txt")).unwrap();
        let s = w.groups[0].script.as_ref().unwrap();
        assert!(!s.osync && !s.sync_dirs && !s.fsync_writes);
        let kept = Options {
            skip_cleanup: true,
            ..Options::default()
        };
        assert!(!compile(&kept, &lines, Path::new("t.txt")).unwrap().cleanup);
    }

    #[test]
    fn options_are_checked_by_name() {
        let e = Options {
            nprocs: 0,
            ..Options::default()
        }
        .check()
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("NPROCS:"), "{e}");
        let e = Options {
            time: 0,
            ..Options::default()
        }
        .check()
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("-t:"), "{e}");
        assert_eq!(
            Options {
                time: 60,
                ..Options::default()
            }
            .warmup_secs(),
            12
        );
        assert_eq!(
            Options {
                time: 60,
                warmup: Some(0),
                ..Options::default()
            }
            .warmup_secs(),
            0
        );
    }
}
