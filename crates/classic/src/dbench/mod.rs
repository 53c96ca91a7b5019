//! dbench 4.0 on fslab's engine: a loadfile (Samba NetBench trace) replayed by NPROCS clients,
//! each in its own directory `clients/client<N>`, with dbench's per-second lines, its per-operation
//! table and its `Throughput` figure (see ../shared/reference/classic-benchmarks.md, section 2).
//!
//! The loadfile is read by [`loadfile`], compiled here into ONE engine [`Script`] that every
//! client thread replays (from the start again at its end), and [`report`] turns the run's
//! once-a-second samples and step statistics into what dbench prints, line for line.
//!
//! Paths: dbench prefixes each loadfile path with `-D` and rewrites every `client1` in it to
//! `client<N>`, so `\clients\client1\client1.dat` is `<dir>/clients/client<N>/client<N>.dat`;
//! the script names it so, by the whole path (`full_paths`, with `{thread}` for the number), as
//! dbench does. `\clients\client1` itself is the script path `.`, `\clients` is `..`. Any other
//! absolute path, and any `..`, is refused with its line.
//!
//! Every line is one step, counted under dbench's name for it, and a step makes the calls dbench
//! makes for its line, the name look-up before the operation included.
//!
//! # The system calls of each operation
//!
//! From dbench 4.0's `fileio.c` (sahlberg/dbench at a03b0f0, the code of Debian's 4.0-2.1) and
//! strace of both on the same loadfile; P is the whole path `<dir>/clients/client<N>/…`, and
//! "look-up" is dbench's `resolve_name`: `stat(P)`, and when that fails (unless `--no-resolve`)
//! an opendir of P's directory (`openat(O_RDONLY|O_NONBLOCK|O_CLOEXEC|O_DIRECTORY)` + `fstat`),
//! `getdents64` until the name is found in any case or the end, `close`.
//!
//! | line | calls (dbench and fslab) |
//! |---|---|
//! | NTCreateX | look-up; `opts & 1`: `mkdir(P, 0700)` then `openat(P, O_RDONLY\|O_DIRECTORY, 0600)`; else `openat(P, O_RDWR [\|O_CREAT disp 2] [\|O_CREAT\|O_TRUNC disp 4,5] [\|O_SYNC -s], 0600)`, again as a directory on EISDIR; then `fstat(fd)` |
//! | Close | `close` |
//! | ReadX | `pread64` of the size (a short read is not an error) |
//! | WriteX | `pwrite64` of zeros (must write the size); `fsync` with `-F` |
//! | Flush | `fsync` |
//! | LockX, UnlockX | `fcntl(F_SETLKW, F_WRLCK / F_UNLCK)` of the range |
//! | Qpathinfo | the look-up alone |
//! | Qfileinfo | `fstat` |
//! | Qfsinfo | `statfs(<dir>)` (glibc's statvfs) |
//! | Sfileinfo | `fstat`, then `utimensat(AT_FDCWD, P)` (utime by the name it was opened by): atime − 10 s, mtime − 12 s |
//! | Find | look-up of the pattern; with a wildcard (`<>*?"`), an opendir of its directory and `getdents64` up to max entries |
//! | Unlink | look-up; `unlink(P)`; with `-S`, `open(dir, O_RDONLY)`, `fdatasync`, `close` |
//! | Rename | look-up of both; `rename(P1, P2)`; `-S` as Unlink (the new name's directory) |
//! | Rmdir | look-up; `rmdir(P)`; `-S` as Unlink |
//! | Mkdir | look-up; `mkdir(P, 0777)`, its status ignored |
//! | Deltree | opendir of P; for each entry as readdir gives it, `stat` of its path, then `unlink` (a file) or the same again (a directory, kept), before the next is read: the listing stays open, and is read on, while its entries go |
//! | Sleep | `usleep(N)`: one `clock_nanosleep()`; not an operation (no row in the table) |
//! | end of run | each client's Deltree of `<dir>/clients/client<N>`, then `rmdir(<dir>/clients)`, which fails while any client's directory is left: the empty tree stays, and a later run goes over it |
//!
//! # Where fslab deliberately differs
//!
//! - Each client is a process, as dbench's, forked once the run is set up (the engine's
//!   `Workload::processes`), so each owns its `F_SETLKW` locks and has a descriptor table of its
//!   own. dbench calls `kill(parent, 0)` before every line to notice that its parent died;
//!   fslab's clients die with it (`PR_SET_PDEATHSIG`), so they make no such call.
//! - The per-second lines come from fslab's monitor; dbench's latency column is the longest gap
//!   between two lines of any client, fslab's the longest step or `Sleep` of that second
//!   (pacing sleeps left out). A `Sleep` longer than 10 ms is slept in slices of 10 ms, so that
//!   the end of the run or a signal is seen within one. dbench prints `k of N processes prepared` every 100 ms until its processes wait
//!   (`0 of N` first, `N of N` last); fslab prints the first and the last.
//! - A line whose outcome differs from its status (dbench: a message, or its client killed for
//!   Unlink, Rename and Rmdir) is counted as a mismatch and the replay goes on; the counts are
//!   printed after dbench's report. As dbench's, a line that fails as its status expects still
//!   syncs its directory with `-S` (Unlink, Rmdir, Rename), and an NTCreateX expected to fail
//!   that opens its file closes it at once, with no handle. Handles a loadfile pass leaves open
//!   are closed at its end, where dbench keeps them (and stops once its table is full).
//! - Before the run, fslab refuses a `clients/client<N>` holding a file (the loadfile's Deltree
//!   would unlink it; dbench would); a tree of directories, what dbench leaves, is run over.
//!   `Deltree "\clients"` (every client's files) is refused too.
//! - A loadfile line dbench skips (a malformed status) or warns about and passes (an unknown
//!   operation) is refused with its line, and so is a path that is neither `\clients` nor
//!   beneath `\clients\client1` (dbench takes it beneath `-D`, shared by every client). None of
//!   them is in client.txt.
//! - dbench rewrites `client1` in `-D` too (`-D /mnt/client1` is another directory per
//!   client); fslab only in the loadfile's path, and runs where `-D` says.
//! - Where glibc makes `mkdir`, `unlink`, `rmdir` and `rename`, fslab makes `mkdirat`,
//!   `unlinkat` (`AT_REMOVEDIR` for rmdir) and `renameat` with `AT_FDCWD`: the same walk of the
//!   same whole path from the working directory.

/// What `--explain` says before the workload, as TOML comments: how the run differs from
/// dbench's on purpose (the module's documentation says more).
pub const DIFFERENCES: &str = "\
# fslab dbench makes dbench 4.0's system calls for each loadfile line, by whole paths from -D.
# Where it deliberately differs from dbench:
# - no kill(parent, 0) before each line (dbench's check that its parent lives): each client
#   process dies with fslab instead;
# - a line whose outcome differs from its status is counted (printed after dbench's report), not
#   fatal;
# - a clients/client<N> holding a file is refused before the run; Deltree of \\clients is refused;
# - client1 becomes client<N> in the loadfile's paths, not in -D;
# - lines dbench skips or warns about are refused, naming their line: an unknown operation, a
#   malformed status, and a path that is neither \\clients nor beneath \\clients\\client1;
# - Sleep is slept in slices of at most 10 ms;
# - mkdirat/unlinkat/renameat with AT_FDCWD where glibc makes mkdir/unlink/rmdir/rename.
";

pub mod frontend;
pub mod loadfile;
pub mod report;

use fslab_engine::script::{Call, Expect, Resolve, Script, Step, BASE_DIR, PARENT_DIR, THREAD};
use fslab_engine::workload::{Group, Names, Stop};
use fslab_engine::{Span, Workload};
use loadfile::{Line, Op, Status};
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
    /// `--no-resolve`: dbench's name look-ups are a stat alone, without the case-insensitive read
    /// of the directory when the stat fails.
    pub no_resolve: bool,
    /// `--skip-cleanup`: skip dbench's cleanup (the clients' files unlinked, their directories
    /// kept), leaving everything in place.
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
    let bytes = match fslab_engine::input::read_file(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && opts.loadfile.is_none() => {
            return Err(Error::MissingDefault { file })
        }
        Err(error) => return Err(Error::Read { file, error }),
    };
    let text = crate::text::decode(bytes).map_err(|e| Error::Loadfile {
        file: file.clone(),
        line: e.line,
        message: e.message(),
    })?;
    loadfile::parse(&text, &file)
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
        // dbench forks a process per client.
        processes: true,
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

impl Target {
    /// The script path of a call that leaves the directory in place: `.` for the client's own
    /// directory, `..` for `\clients` (the script names files by whole paths, as dbench does, so
    /// `..` is `<dir>/clients`).
    fn path(self) -> String {
        match self {
            Target::Base => BASE_DIR.to_string(),
            Target::Parent => PARENT_DIR.to_string(),
            Target::Rel(rel) => rel,
        }
    }
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
    Ok(Target::Rel(numbered(&comps.join("/"))?))
}

/// dbench's `client1` → `client<N>`, anywhere in a path beneath the client's directory: the
/// script's `{thread}` (which a loadfile's own name may therefore not hold).
fn numbered(rel: &str) -> Result<String, String> {
    if rel.contains(THREAD) {
        return Err(format!(
            "the path `{rel}` holds `{THREAD}`, which fslab's script reads as the client's number"
        ));
    }
    Ok(rel.replace("client1", &format!("client{THREAD}")))
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

/// Compiles the lines into the script every client replays, one step a line.
///
/// Name look-ups: dbench 4.0 (Debian's 4.0-2.1, as strace shows) looks the name up before
/// NTCreateX, Unlink, Rename (both names), Rmdir, Mkdir and FIND_FIRST, as a case-insensitive
/// server would: a stat, and when it fails a read of the parent directory for the name in any
/// case (not with `--no-resolve`, which keeps the stat). The steps make that look-up themselves
/// (the calls' `resolve`), so it counts in their latency as in dbench's.
/// QUERY_PATH_INFORMATION, and FIND_FIRST without a wildcard, are nothing but that look-up.
///
/// The client's own directory is the script path `.`: opening it, looking it up, listing it and
/// emptying it (`Deltree`) are made on it as dbench makes them; removing or renaming it is refused.
/// `\clients` is treated as the client's own directory for the calls that leave it in place, and
/// refused for the others.
fn compile_script(opts: &Options, lines: &[Line], source: &str) -> Result<Script, Error> {
    let resolve = if opts.no_resolve {
        Resolve::Stat
    } else {
        Resolve::AnyCase
    };
    let mut steps = Vec::with_capacity(lines.len());
    for line in lines {
        let bad = |message: String| Error::Loadfile {
            file: source.to_string(),
            line: line.number,
            message,
        };
        let path_of = |raw: &str| target(raw).map(Target::path).map_err(bad);
        // A path a call removes or renames: beneath the client's directory.
        let removed = |raw: &str, what: &str| match target(raw).map_err(bad)? {
            Target::Rel(rel) => Ok(rel),
            _ => Err(bad(format!(
                "{what} of the client's own directory (or of \\clients) is refused"
            ))),
        };
        let status = expect(&line.status);
        let (label, expect, call) = match &line.op {
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
                let call = Call::Open {
                    path: path_of(path)?,
                    handle: *handle,
                    create,
                    truncate,
                    directory: options & 1 != 0,
                    resolve,
                };
                (Label::NtCreateX, status, call)
            }
            Op::Close { handle } => (Label::Close, status, Call::Close { handle: *handle }),
            Op::Rename { from, to } => {
                let (from, to) = (removed(from, "Rename")?, removed(to, "Rename")?);
                (Label::Rename, status, Call::Rename { from, to, resolve })
            }
            Op::Unlink { path } => {
                let path = removed(path, "Unlink")?;
                (Label::Unlink, status, Call::Unlink { path, resolve })
            }
            Op::Rmdir { path } => {
                let path = removed(path, "Rmdir")?;
                (Label::Rmdir, status, Call::Rmdir { path, resolve })
            }
            // dbench ignores Deltree's status; it makes no look-up.
            Op::Deltree { path } => match target(path).map_err(bad)? {
                Target::Parent => return Err(bad("Deltree of \\clients (every client's directory) is refused".into())),
                t => (Label::Deltree, Expect::Any, Call::DeleteFiles { path: t.path() }),
            },
            // dbench ignores Mkdir's status.
            Op::Mkdir { path } => (
                Label::Mkdir,
                Expect::Any,
                Call::Mkdir {
                    path: path_of(path)?,
                    resolve,
                },
            ),
            Op::QueryPath { path } => (
                Label::Qpathinfo,
                status,
                Call::Stat {
                    path: path_of(path)?,
                    resolve,
                },
            ),
            Op::QueryFile { handle } => (Label::Qfileinfo, status, Call::Fstat { handle: *handle }),
            Op::QueryFs => (Label::Qfsinfo, status, Call::Statfs),
            Op::SetFile { handle } => (Label::Sfileinfo, status, Call::SetTimes { handle: *handle }),
            // dbench ignores FIND_FIRST's status. With a wildcard: the look-up of the pattern in
            // its directory, then a listing of it, up to max entries. Without: the look-up alone.
            Op::FindFirst { pattern, max } => {
                let call = match pattern.rsplit_once('/').filter(|_| is_wildcard(pattern)) {
                    Some((dir, name)) => Call::List {
                        path: path_of(dir)?,
                        max: *max,
                        pattern: Some(numbered(name).map_err(bad)?),
                        resolve,
                    },
                    None => Call::Stat {
                        path: path_of(pattern)?,
                        resolve,
                    },
                };
                (Label::Find, Expect::Any, call)
            }
            Op::WriteX { handle, offset, size } => (
                Label::WriteX,
                status,
                Call::Write {
                    handle: *handle,
                    offset: *offset,
                    len: *size,
                },
            ),
            Op::ReadX { handle, offset, size } => (
                Label::ReadX,
                status,
                Call::Read {
                    handle: *handle,
                    offset: *offset,
                    len: *size,
                },
            ),
            Op::LockX { handle, offset, size } => (
                Label::LockX,
                status,
                Call::Lock {
                    handle: *handle,
                    offset: *offset,
                    len: *size,
                },
            ),
            Op::UnlockX { handle, offset, size } => (
                Label::UnlockX,
                status,
                Call::Unlock {
                    handle: *handle,
                    offset: *offset,
                    len: *size,
                },
            ),
            Op::Flush { handle } => (Label::Flush, status, Call::Fsync { handle: *handle }),
            // No operation: its step is never counted, under any label.
            Op::Sleep { usec } => (Label::NtCreateX, status, Call::Sleep { usec: *usec }),
        };
        steps.push(Step {
            label: label as u16,
            at: line.at,
            expect,
            call,
        });
    }
    Ok(Script {
        source: source.to_string(),
        base: BASE.to_string(),
        labels: LABELS.iter().map(|s| s.to_string()).collect(),
        paced: lines.iter().any(|l| l.at.is_some()),
        sync_dirs: opts.sync_dirs,
        fsync_writes: opts.fsync,
        osync: opts.sync_open,
        full_paths: true,
        steps,
    })
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
    fn client1_anywhere_in_a_path_becomes_the_clients_number() {
        assert_eq!(
            target("/clients/client1/client1.dat/xclient10client1"),
            Ok(Target::Rel("client{thread}.dat/xclient{thread}0client{thread}".into()))
        );
        assert_eq!(target("/clients/client1/Client1"), Ok(Target::Rel("Client1".into())));
        let e = target("/clients/client1/{thread}").unwrap_err();
        assert!(e.contains("`{thread}`") && e.contains("client's number"), "{e}");
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
            resolve: Resolve::Stat,
        };
        assert_eq!(
            steps(&s),
            vec![
                ("NTCreateX", Expect::Ok, open("d", 1, true, false, true)),
                ("NTCreateX", Expect::Ok, open("d/a", 2, true, false, false)),
                ("NTCreateX", Expect::Ok, open("d/b", 3, true, true, false)),
                ("NTCreateX", Expect::Fail, open("d/c", 4, false, false, false)),
                // Options 0 on a directory: an open as a file, which the engine retries as a
                // directory open when it says EISDIR, as dbench does.
                ("NTCreateX", Expect::Ok, open("d", 5, false, false, false)),
            ]
        );
        assert_eq!(s.base, "clients/client{thread}");
        assert!(!s.paced);
    }

    #[test]
    fn name_lookups_are_part_of_the_operations_dbench_resolves() {
        let text = r#"Unlink "\clients\client1\x" 0x20 NT_STATUS_OK
Rename "\clients\client1\a" "\clients\client1\b" NT_STATUS_OK
QUERY_PATH_INFORMATION "\clients\client1\q" 1004 NT_STATUS_OBJECT_NAME_NOT_FOUND
FIND_FIRST "\clients\client1\d\*" 260 1366 2 NT_STATUS_OK
FIND_FIRST "\clients\client1\d\e.doc" 260 1366 1 NT_STATUS_OK
Mkdir "\clients\client1\m" NT_STATUS_OK
Rmdir "\clients\client1\m" NT_STATUS_OK
Deltree "\clients\client1\m" NT_STATUS_OK
"#;
        let expected = |resolve: Resolve| {
            vec![
                (
                    "Unlink",
                    Expect::Ok,
                    Call::Unlink {
                        path: "x".into(),
                        resolve,
                    },
                ),
                (
                    "Rename",
                    Expect::Ok,
                    Call::Rename {
                        from: "a".into(),
                        to: "b".into(),
                        resolve,
                    },
                ),
                (
                    "Qpathinfo",
                    Expect::Fail,
                    Call::Stat {
                        path: "q".into(),
                        resolve,
                    },
                ),
                (
                    "Find",
                    Expect::Any,
                    Call::List {
                        path: "d".into(),
                        max: 1366,
                        pattern: Some("*".into()),
                        resolve,
                    },
                ),
                (
                    "Find",
                    Expect::Any,
                    Call::Stat {
                        path: "d/e.doc".into(),
                        resolve,
                    },
                ),
                (
                    "Mkdir",
                    Expect::Any,
                    Call::Mkdir {
                        path: "m".into(),
                        resolve,
                    },
                ),
                (
                    "Rmdir",
                    Expect::Ok,
                    Call::Rmdir {
                        path: "m".into(),
                        resolve,
                    },
                ),
                // dbench makes no look-up before a Deltree.
                ("Deltree", Expect::Any, Call::DeleteFiles { path: "m".into() }),
            ]
        };
        // One step a line, with its look-up inside.
        let s = script(text, &Options::default()).unwrap();
        assert_eq!(steps(&s), expected(Resolve::AnyCase));
        // --no-resolve: the look-ups are a stat alone, as dbench's are then.
        let opts = Options {
            no_resolve: true,
            ..Options::default()
        };
        assert_eq!(steps(&script(text, &opts).unwrap()), expected(Resolve::Stat));
    }

    #[test]
    fn the_client_directory_itself_is_the_base_dot() {
        let s = script(
            r#"Deltree "\clients\client1" NT_STATUS_OK
Mkdir "\clients" NT_STATUS_OK
NTCreateX "\clients\client1" 0x1 0x2 9 NT_STATUS_OK
QUERY_PATH_INFORMATION "\clients\client1" 1004 NT_STATUS_OK
FIND_FIRST "\clients\client1\<.JNK" 260 1366 0 NT_STATUS_NO_SUCH_FILE
"#,
            &Options::default(),
        )
        .unwrap();
        let any = Resolve::AnyCase;
        assert_eq!(
            steps(&s),
            vec![
                ("Deltree", Expect::Any, Call::DeleteFiles { path: ".".into() }),
                // \clients is the client directory's parent, `..`, made by this line as dbench
                // makes it (by its whole path).
                (
                    "Mkdir",
                    Expect::Any,
                    Call::Mkdir {
                        path: "..".into(),
                        resolve: any
                    }
                ),
                (
                    "NTCreateX",
                    Expect::Ok,
                    Call::Open {
                        path: ".".into(),
                        handle: 9,
                        create: true,
                        truncate: false,
                        directory: true,
                        resolve: any
                    }
                ),
                (
                    "Qpathinfo",
                    Expect::Ok,
                    Call::Stat {
                        path: ".".into(),
                        resolve: any
                    }
                ),
                (
                    "Find",
                    Expect::Any,
                    Call::List {
                        path: ".".into(),
                        max: 1366,
                        pattern: Some("<.JNK".into()),
                        resolve: any
                    }
                ),
            ]
        );
        let w = compile(
            &Options::default(),
            &loadfile::parse("Deltree \"\\clients\\client1\" NT_STATUS_OK\n", "t.txt").unwrap(),
            Path::new("t.txt"),
        )
        .unwrap();
        assert!(w.validate().is_ok(), "{:?}", w.validate());
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
        for line in [
            r#"Unlink "\clients\client1" 0x20 NT_STATUS_OK"#,
            r#"Rmdir "\clients" NT_STATUS_OK"#,
            r#"Rename "\clients\client1\a" "\clients\client1" NT_STATUS_OK"#,
            r#"Deltree "\clients" NT_STATUS_OK"#,
        ] {
            let e = script(&format!("Close 1 NT_STATUS_OK\n{line}\n"), &Options::default())
                .unwrap_err()
                .to_string();
            assert!(e.starts_with("t.txt:2:") && e.contains("refused"), "{line}: {e}");
        }
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
