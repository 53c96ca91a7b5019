//! The Workload: what the engine runs. Every front-end (native TOML, FFSB, dbench, sysbench,
//! IOzone, the ad-hoc command line) compiles to this one model, and `--explain` prints it back as
//! native TOML.
//!
//! A workload has filesets (the files it works on), thread groups (who works, with which mix of
//! operations, through which I/O backend) and stop conditions.

use crate::confine;
use crate::marker;
use crate::units::{Bytes, Span};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::Path;

pub use crate::op::OpKind;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Workload {
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Seed of every random choice; a random one is drawn (and reported) when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    #[serde(default)]
    pub stop: Stop,
    #[serde(rename = "fileset", default, skip_serializing_if = "Vec::is_empty")]
    pub filesets: Vec<Fileset>,
    #[serde(rename = "group")]
    pub groups: Vec<Group>,
    /// Remove the filesets and script directories after the run (untimed), as dbench and IOzone
    /// do; by default they stay, as FFSB's do.
    #[serde(default, skip_serializing_if = "is_false")]
    pub cleanup: bool,
}

/// When the measured phase ends. With several conditions, the first one met ends the run; with
/// none, the run ends when every thread has finished its streams.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stop {
    /// Wall time of the measured phase (after the ramp).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<Span>,
    /// Total operations over all threads (each thread does its even share).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ops: Option<u64>,
    /// Total bytes read plus written over all threads (each thread does its even share).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<Bytes>,
    /// Stop when the filesystem holding the first fileset is this full (0 to 1), as FFSB's
    /// aging runs until `desired_util`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub util: Option<f64>,
    /// Stop every thread as soon as the first one finishes (IOzone's stonewalling).
    #[serde(default, skip_serializing_if = "is_false")]
    pub stonewall: bool,
    /// A warm-up at the start whose operations are left out of the statistics.
    #[serde(default, skip_serializing_if = "is_zero_span")]
    pub ramp: Span,
    /// Where the final sync() falls: inside the measured time (as FFSB counts it), after it, or none.
    #[serde(default, skip_serializing_if = "is_default")]
    pub final_sync: FinalSync,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinalSync {
    #[default]
    None,
    Inside,
    Outside,
}

/// A set of files spread over directories beneath the run directory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fileset {
    pub name: String,
    /// Directory beneath the run directory; the fileset's name when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dir: Option<String>,
    /// An absolute directory to use instead of the run directory (FFSB profiles name each
    /// filesystem's location); the fileset stays confined beneath it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
    /// Files are named `<prefix><id>`: `f0`, `f1`... or sysbench's `test_file.0`.
    #[serde(default = "default_prefix", skip_serializing_if = "is_default_prefix")]
    pub prefix: String,
    /// Instead of `<prefix><id>`: one name per file, in id order (IOzone's `-F`). A fileset with
    /// names keeps its files in its directory itself (`dirs = 0`), may share that directory with
    /// other entries (`dir = "."` is the run directory) and owns only the names it made there.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub names: Vec<String>,
    /// Files present when the measured phase starts (create and delete change that).
    #[serde(default)]
    pub files: u64,
    /// Instead of a number of files: make files until their sizes add up to this (FFSB's
    /// init_size).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until_bytes: Option<Bytes>,
    /// Directories the files are spread over (file i goes to directory i mod dirs); 0 puts them
    /// all in the fileset's directory.
    #[serde(default = "one")]
    pub dirs: u64,
    /// Size of each file, and of each file a `create` makes.
    #[serde(default)]
    pub size: SizeDist,
    /// Write the files before the measured phase (untimed, reported separately). Without it the
    /// files start empty.
    #[serde(default = "yes")]
    pub prealloc: bool,
    /// Bytes per write() call when the files are written before the run (FFSB's
    /// create_blocksize); 1 MiB when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup_bs: Option<Bytes>,
    /// Keep files already there when their number and sizes match, instead of writing them again.
    #[serde(default, skip_serializing_if = "is_false")]
    pub reuse: bool,
}

impl Fileset {
    /// A fileset of no files yet, with every other setting at its default.
    pub fn new(name: &str) -> Fileset {
        Fileset {
            name: name.to_string(),
            dir: None,
            root: None,
            prefix: default_prefix(),
            names: Vec::new(),
            files: 0,
            until_bytes: None,
            dirs: 1,
            size: SizeDist::default(),
            prealloc: true,
            setup_bs: None,
            reuse: false,
        }
    }

    pub fn dir_name(&self) -> &str {
        self.dir.as_deref().unwrap_or(&self.name)
    }

    /// `dir = "."`: the files lie in the run directory itself, among whatever else is there (as
    /// sysbench's test_file.N lie in its current directory). fslab then touches only the names
    /// it makes there (`<prefix><N>` and its marker) and never removes the directory.
    pub fn in_run_dir(&self) -> bool {
        self.dir.as_deref() == Some(".")
    }
}

/// How file sizes are drawn: `"1m"`, `{ min = "4k", max = "1m" }` or
/// `{ table = [["4k", 3], ["1m", 1]] }` (size, weight).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum SizeDist {
    Fixed(Bytes),
    Range { min: Bytes, max: Bytes },
    Table { table: Vec<(Bytes, u32)> },
}

/// Written by hand so that a bad size says what is wrong with it (an untagged enum would only
/// say that nothing matched).
impl<'de> Deserialize<'de> for SizeDist {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Spec {
            min: Option<Bytes>,
            max: Option<Bytes>,
            table: Option<Vec<(Bytes, u32)>>,
        }
        use serde::de::Error;
        let value = toml::Value::deserialize(d)?;
        if let Some(s) = value.as_str() {
            return s.parse().map(SizeDist::Fixed).map_err(D::Error::custom);
        }
        if let Some(n) = value.as_integer() {
            return u64::try_from(n)
                .map(|n| SizeDist::Fixed(Bytes(n)))
                .map_err(|_| D::Error::custom(format!("{n} is negative")));
        }
        if !value.is_table() {
            return Err(D::Error::custom(
                "expected a size (\"1m\"), a range ({ min = \"4k\", max = \"1m\" }) or a table ({ table = [[\"4k\", 3], [\"1m\", 1]] })",
            ));
        }
        let spec = Spec::deserialize(value).map_err(|e| D::Error::custom(e.to_string().trim().replace('\n', " ")))?;
        match spec {
            Spec {
                min: Some(min),
                max: Some(max),
                table: None,
            } => Ok(SizeDist::Range { min, max }),
            Spec {
                min: None,
                max: None,
                table: Some(table),
            } => Ok(SizeDist::Table { table }),
            _ => Err(D::Error::custom(
                "a size range takes both `min` and `max`; a size table takes `table` alone",
            )),
        }
    }
}

impl Default for SizeDist {
    fn default() -> Self {
        SizeDist::Fixed(Bytes(0))
    }
}

impl SizeDist {
    pub fn min(&self) -> u64 {
        match self {
            SizeDist::Fixed(b) => b.0,
            SizeDist::Range { min, .. } => min.0,
            SizeDist::Table { table } => table.iter().map(|e| e.0 .0).min().unwrap_or(0),
        }
    }

    pub fn max(&self) -> u64 {
        match self {
            SizeDist::Fixed(b) => b.0,
            SizeDist::Range { max, .. } => max.0,
            SizeDist::Table { table } => table.iter().map(|e| e.0 .0).max().unwrap_or(0),
        }
    }

    /// Draws a size: uniform in [min, max] for a range, weighted for a table.
    pub fn sample(&self, rng: &mut impl rand::Rng) -> u64 {
        match self {
            SizeDist::Fixed(b) => b.0,
            SizeDist::Range { min, max } => rng.gen_range(min.0..=max.0),
            SizeDist::Table { table } => {
                let total: u64 = table.iter().map(|e| e.1 as u64).sum();
                let mut pick = rng.gen_range(0..total);
                for (size, weight) in table {
                    if pick < *weight as u64 {
                        return size.0;
                    }
                    pick -= *weight as u64;
                }
                table.last().map_or(0, |e| e.0 .0)
            }
        }
    }
}

/// Threads that share a fileset, a mix of operations and an I/O setup.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Group {
    pub name: String,
    #[serde(default = "one_u32")]
    pub threads: u32,
    /// The fileset the threads work on; with several, each operation picks one at random (as
    /// FFSB's threads pick a filesystem). A script group needs none.
    #[serde(default, skip_serializing_if = "Names::is_empty")]
    pub fileset: Names,
    /// How the next operation is chosen: at random by weight, or by `ratio`, keeping the
    /// counts done in proportion to the weights (sysbench's rndrw).
    #[serde(default, skip_serializing_if = "is_default")]
    pub pick: Pick,
    /// sysbench's periodic fsync: after this many read and write operations, when some write
    /// made the files dirty, fsync every file of the fileset, each counted as an `fsync`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fsync_every: Option<u64>,
    /// Each thread fsyncs every file of the fileset when it stops, inside the measured time
    /// (sysbench's end-of-test fsync).
    #[serde(default, skip_serializing_if = "is_false")]
    pub fsync_end: bool,
    /// How `fsync_every` and `fsync_end` sync each file: `fsync` or `fdatasync` (sysbench's
    /// --file-fsync-mode).
    #[serde(default, skip_serializing_if = "is_default")]
    pub fsync_kind: SyncKind,
    /// Pause after each operation (FFSB's op_delay).
    #[serde(default, skip_serializing_if = "is_zero_span")]
    pub delay: Span,
    /// Rate limit of the whole group, shared evenly by its threads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Rate>,
    #[serde(default, skip_serializing_if = "is_default")]
    pub engine: EngineKind,
    /// Transfers in flight per thread (io_uring only).
    #[serde(default = "one_u32", skip_serializing_if = "is_one")]
    pub iodepth: u32,
    /// O_DIRECT, with buffers and offsets aligned.
    #[serde(default, skip_serializing_if = "is_false")]
    pub direct: bool,
    /// O_SYNC or O_DSYNC on every open.
    #[serde(default, skip_serializing_if = "is_default")]
    pub osync: OSync,
    /// Keep files open between operations (as fio does) or open and close them in every
    /// operation (as FFSB does).
    #[serde(default, skip_serializing_if = "is_default")]
    pub open: OpenMode,
    #[serde(rename = "op", default, skip_serializing_if = "Vec::is_empty")]
    pub ops: Vec<OpSpec>,
    /// Instead of a mix of operations: a script each thread replays in order, from the start
    /// again at its end (dbench's loadfiles).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script: Option<crate::script::Script>,
}

impl Group {
    /// One thread on `fileset` with every other setting at its default and no operations yet.
    pub fn new(name: &str, fileset: &str) -> Group {
        Group {
            name: name.to_string(),
            threads: 1,
            fileset: fileset.into(),
            pick: Pick::default(),
            fsync_every: None,
            fsync_end: false,
            fsync_kind: SyncKind::Fsync,
            delay: Span::default(),
            rate: None,
            engine: EngineKind::default(),
            iodepth: 1,
            direct: false,
            osync: OSync::default(),
            open: OpenMode::default(),
            ops: Vec::new(),
            script: None,
        }
    }
}

impl Workload {
    /// An empty workload: add filesets and groups.
    pub fn new(name: &str) -> Workload {
        Workload {
            name: name.to_string(),
            description: String::new(),
            seed: None,
            stop: Stop::default(),
            filesets: Vec::new(),
            groups: Vec::new(),
            cleanup: false,
        }
    }
}

/// One name or several.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Names(pub Vec<String>);

impl Names {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn contains(&self, name: &str) -> bool {
        self.0.iter().any(|n| n == name)
    }

    pub fn first(&self) -> &str {
        self.0.first().map_or("", |s| s.as_str())
    }
}

impl From<&str> for Names {
    fn from(s: &str) -> Names {
        Names(vec![s.to_string()])
    }
}

impl fmt::Display for Names {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.join(", "))
    }
}

impl Serialize for Names {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0.as_slice() {
            [one] => s.serialize_str(one),
            many => many.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Names {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged, expecting = "a fileset name or a list of them")]
        enum Form {
            One(String),
            Many(Vec<String>),
        }
        Ok(match Form::deserialize(d)? {
            Form::One(s) => Names(vec![s]),
            Form::Many(v) => Names(v),
        })
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pick {
    #[default]
    Random,
    Ratio,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rate {
    /// Operations per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ops: Option<u64>,
    /// Bytes per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<Bytes>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EngineKind {
    /// pread/pwrite.
    #[default]
    Sync,
    /// io_uring with `iodepth` transfers in flight.
    IoUring,
    /// mmap and memcpy; msync for fsync.
    Mmap,
}

impl fmt::Display for EngineKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            EngineKind::Sync => "sync",
            EngineKind::IoUring => "io_uring",
            EngineKind::Mmap => "mmap",
        })
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OSync {
    #[default]
    None,
    Sync,
    Dsync,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpenMode {
    #[default]
    Keep,
    PerOp,
}

/// One operation of a group's mix. Which fields apply depends on `op`; `validate` refuses the
/// ones that do not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpSpec {
    pub op: OpKind,
    /// A name for this entry of the mix: labelled entries are counted and reported apart from
    /// the other entries of the same `op` (FFSB's `write` and `write_fsync` are both writes).
    /// Entries with the same `op` and label are counted together, as unlabelled ones are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    #[serde(default = "one_u32")]
    pub weight: u32,
    /// Bytes moved per operation (read, write, append).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<Bytes>,
    /// Bytes per read()/write() call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bs: Option<Bytes>,
    /// read, write: the operation's bytes are split into this many runs, each at a random offset
    /// (1: one seek, then contiguous blocks; size/bs: every block at a random offset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seeks: Option<u32>,
    /// read, write: a gap left between consecutive blocks of a run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip: Option<Bytes>,
    /// read, write: random offsets are multiples of this (default: the block size).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub align: Option<Bytes>,
    /// create, write, writeall, append, seqwrite, rewrite: fsync or fdatasync before close.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync: Option<SyncKind>,
    /// seqread, seqwrite, rewrite: each thread its own file, or one cursor over the whole fileset;
    /// read, write: `own` keeps each thread on its own file (file = thread mod files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<Scope>,
    /// seqread, seqwrite, rewrite: start again at the beginning after the end (default: the
    /// thread is finished).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wrap: Option<bool>,
    /// seqread with own scope: from the end of the file to its start (IOzone's backward read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverse: Option<bool>,
}

impl OpSpec {
    pub fn new(op: OpKind) -> OpSpec {
        OpSpec {
            op,
            label: None,
            weight: 1,
            size: None,
            bs: None,
            seeks: None,
            skip: None,
            align: None,
            sync: None,
            scope: None,
            wrap: None,
            reverse: None,
        }
    }

    /// The block size, 4 KiB when not given.
    pub fn block_size(&self) -> u64 {
        self.bs.map_or(4096, |b| b.0)
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SyncKind {
    #[default]
    Fsync,
    Fdatasync,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    #[default]
    Own,
    Shared,
}

fn default_prefix() -> String {
    "f".to_string()
}
fn is_default_prefix(p: &String) -> bool {
    p == "f"
}
fn one() -> u64 {
    1
}
fn one_u32() -> u32 {
    1
}
fn is_one(n: &u32) -> bool {
    *n == 1
}
fn yes() -> bool {
    true
}
fn is_false(b: &bool) -> bool {
    !*b
}
fn is_zero_span(s: &Span) -> bool {
    s.0.is_zero()
}
fn is_default<T: Default + PartialEq>(t: &T) -> bool {
    *t == T::default()
}

/// A step into the TOML document, for pointing an error at its line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathSeg {
    Key(&'static str),
    /// A key known only at run time (a study's option names).
    Name(String),
    Index(usize),
}

/// A workload that parses but cannot run: what is wrong and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Invalid {
    pub path: Vec<PathSeg>,
    pub message: String,
}

/// A workload file that cannot be used, with the place in the file when there is one.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{file}: {error}")]
    Read { file: String, error: std::io::Error },
    #[error("{file}:{line}:{column}: {message}")]
    At {
        file: String,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{file}: {message}")]
    Whole { file: String, message: String },
}

impl Workload {
    /// Reads and checks a native workload file.
    pub fn from_file(path: &Path) -> Result<Workload, LoadError> {
        let text = std::fs::read_to_string(path).map_err(|error| LoadError::Read {
            file: path.display().to_string(),
            error,
        })?;
        Workload::from_toml(&text, &path.display().to_string())
    }

    /// Parses and checks native TOML; `file` names the source in errors.
    pub fn from_toml(text: &str, file: &str) -> Result<Workload, LoadError> {
        let at = |span: Option<std::ops::Range<usize>>, message: String| match span {
            Some(span) => {
                let (line, column) = line_col(text, span.start);
                LoadError::At {
                    file: file.to_string(),
                    line,
                    column,
                    message,
                }
            }
            None => LoadError::Whole {
                file: file.to_string(),
                message,
            },
        };
        let workload: Workload = toml::from_str(text).map_err(|e| at(e.span(), e.message().to_string()))?;
        workload
            .validate()
            .map_err(|inv| at(span_of(text, &inv.path), inv.message))?;
        Ok(workload)
    }

    /// The workload as native TOML, as `--explain` prints it.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("a workload always serialises")
    }

    /// How the groups use fileset `name`: (some operation creates, deletes or renames files in
    /// it, some operation makes directories in it).
    pub fn fileset_use(&self, name: &str) -> (bool, bool) {
        let ops = || {
            self.groups
                .iter()
                .filter(|g| g.fileset.contains(name))
                .flat_map(|g| &g.ops)
        };
        let dynamic = ops().any(|o| o.op.changes_membership());
        let meta = ops().any(|o| matches!(o.op, OpKind::Mkdir | OpKind::Rmdir | OpKind::MetaOp));
        (dynamic, meta)
    }

    pub fn fileset(&self, name: &str) -> Option<&Fileset> {
        self.filesets.iter().find(|f| f.name == name)
    }

    pub fn total_threads(&self) -> u64 {
        self.groups.iter().map(|g| g.threads as u64).sum()
    }

    /// Checks everything serde cannot: references, ranges and which fields apply to which op.
    pub fn validate(&self) -> Result<(), Invalid> {
        use PathSeg::{Index, Key};
        let bad = |path: Vec<PathSeg>, message: String| Err(Invalid { path, message });
        if self.filesets.is_empty() && self.groups.iter().any(|g| g.script.is_none()) {
            return bad(vec![], "the workload has no [[fileset]]".into());
        }
        if self.groups.is_empty() {
            return bad(vec![], "the workload has no [[group]]".into());
        }
        for (i, fs) in self.filesets.iter().enumerate() {
            let here = |k| vec![Key("fileset"), Index(i), Key(k)];
            if self.filesets[..i].iter().any(|o| o.name == fs.name) {
                return bad(here("name"), format!("a second fileset is named `{}`", fs.name));
            }
            // The directory is `dir` when given, else the name: point at whichever it is.
            let field = if fs.dir.is_some() { "dir" } else { "name" };
            if fs.in_run_dir() {
                check_in_run_dir(self, i).map_err(|(field, message)| Invalid {
                    path: here(field),
                    message,
                })?;
            } else {
                confine::check_relative(fs.dir_name()).map_err(|m| Invalid {
                    path: here(field),
                    message: m,
                })?;
            }
            if let Some(root) = &fs.root {
                if !Path::new(root).is_absolute() {
                    return bad(here("root"), format!("root `{root}` must be an absolute directory"));
                }
            }
            if fs.prefix.is_empty()
                || fs.prefix.contains('/')
                || fs.prefix.starts_with('.')
                || fs.prefix == "d"
                || fs.prefix == "m"
            {
                return bad(
                    here("prefix"),
                    format!(
                        "prefix `{}` cannot name files (it must be a plain name other than `d` and `m`)",
                        fs.prefix
                    ),
                );
            }
            if !fs.names.is_empty() {
                check_names(self, i).map_err(|(field, message)| Invalid {
                    path: here(field),
                    message,
                })?;
            }
            if fs.setup_bs == Some(Bytes(0)) {
                return bad(here("setup_bs"), "setup_bs must be above 0".into());
            }
            if fs.until_bytes.is_some() && fs.files > 0 {
                return bad(here("until_bytes"), "give either files or until_bytes, not both".into());
            }
            match &fs.size {
                SizeDist::Range { min, max } if min > max => {
                    return bad(here("size"), format!("min {min} is larger than max {max}"));
                }
                SizeDist::Table { table } if table.is_empty() || table.iter().all(|e| e.1 == 0) => {
                    return bad(
                        here("size"),
                        "the size table needs at least one entry with a weight above 0".into(),
                    );
                }
                _ => {}
            }
        }
        for (gi, g) in self.groups.iter().enumerate() {
            let here = |k| vec![Key("group"), Index(gi), Key(k)];
            if self.groups[..gi].iter().any(|o| o.name == g.name) {
                return bad(here("name"), format!("a second group is named `{}`", g.name));
            }
            if g.threads == 0 {
                return bad(here("threads"), "threads must be at least 1".into());
            }
            let mut sets = Vec::new();
            for name in &g.fileset.0 {
                let Some(fs) = self.fileset(name) else {
                    let known: Vec<_> = self.filesets.iter().map(|f| f.name.as_str()).collect();
                    return bad(
                        here("fileset"),
                        format!("no fileset is named `{name}` (the filesets are: {})", known.join(", ")),
                    );
                };
                sets.push(fs);
            }
            if sets.is_empty() && g.script.is_none() {
                return bad(here("fileset"), format!("group `{}` names no fileset", g.name));
            }
            if g.fsync_every == Some(0) {
                return bad(here("fsync_every"), "fsync_every must be at least 1".into());
            }
            if g.iodepth == 0 {
                return bad(here("iodepth"), "iodepth must be at least 1".into());
            }
            if g.iodepth > 1 && g.engine != EngineKind::IoUring {
                return bad(
                    here("iodepth"),
                    format!("iodepth {} needs engine = \"io_uring\"", g.iodepth),
                );
            }
            if g.direct && g.engine == EngineKind::Mmap {
                return bad(here("direct"), "O_DIRECT does not apply to the mmap engine".into());
            }
            if let Some(r) = g.rate {
                if r.ops.is_none() == r.bytes.is_none() {
                    return bad(here("rate"), "rate takes one of ops or bytes".into());
                }
                if r.ops == Some(0) || r.bytes == Some(Bytes(0)) {
                    return bad(here("rate"), "a rate of 0 would never run".into());
                }
            }
            if let Some(script) = &g.script {
                if !g.ops.is_empty() {
                    return bad(
                        here("script"),
                        "a group has either a script or [[group.op]], not both".into(),
                    );
                }
                script.validate().map_err(|m| Invalid {
                    path: here("script"),
                    message: m,
                })?;
                continue;
            }
            if g.ops.is_empty() {
                return bad(here("name"), format!("group `{}` has no [[group.op]]", g.name));
            }
            if g.ops.iter().all(|o| o.weight == 0) {
                return bad(here("op"), "every op has weight 0".into());
            }
            for (oi, op) in g.ops.iter().enumerate() {
                let at = |k| vec![Key("group"), Index(gi), Key("op"), Index(oi), Key(k)];
                if op.op.is_stream() && sets.len() > 1 {
                    return Err(Invalid {
                        path: at("op"),
                        message: format!("{} runs over one fileset; this group names {}", op.op, sets.len()),
                    });
                }
                for fs in &sets {
                    check_op(op, fs, g).map_err(|(k, m)| Invalid {
                        path: at(k),
                        message: m,
                    })?;
                }
            }
        }
        for fs in &self.filesets {
            let streams = self
                .groups
                .iter()
                .position(|g| g.fileset.contains(&fs.name) && g.ops.iter().any(|o| o.op.is_stream()));
            if let (Some(gi), (true, _)) = (streams, self.fileset_use(&fs.name)) {
                return bad(
                    vec![Key("group"), Index(gi)],
                    format!(
                        "fileset `{}` is used by streams and by create/delete/rename at once; give the streams a fileset of their own",
                        fs.name
                    ),
                );
            }
        }
        let s = &self.stop;
        let endless = self
            .groups
            .iter()
            .any(|g| g.script.is_some() || g.ops.iter().any(|o| !o.op.is_stream() || o.wrap == Some(true)));
        if s.time.is_none() && s.ops.is_none() && s.bytes.is_none() && s.util.is_none() && endless {
            return bad(
                vec![Key("stop")],
                "the workload never stops: set stop.time, stop.ops or stop.bytes (only streams without wrap end by themselves)".into(),
            );
        }
        if s.util.is_some_and(|u| !(u > 0.0 && u <= 1.0)) {
            return bad(
                vec![Key("stop"), Key("util")],
                "stop.util is a fraction between 0 and 1".into(),
            );
        }
        if s.ops == Some(0) || s.bytes == Some(Bytes(0)) {
            return bad(vec![Key("stop")], "stop.ops and stop.bytes must be above 0".into());
        }
        Ok(())
    }
}

/// Checks one op against its group and fileset; on error, the field at fault and the message.
fn check_op(op: &OpSpec, fs: &Fileset, g: &Group) -> Result<(), (&'static str, String)> {
    let k = op.op;
    if let Some(label) = &op.label {
        check_label(label).map_err(|m| ("label", m))?;
    }
    let not_for = |field: &'static str| Err((field, format!("`{field}` does not apply to {k}")));
    if op.size.is_some() && !takes_size(k) {
        return not_for("size");
    }
    if op.bs.is_some() && !takes_bs(k) {
        return not_for("bs");
    }
    if !takes_pattern(k) {
        for (field, set) in [
            ("seeks", op.seeks.is_some()),
            ("skip", op.skip.is_some()),
            ("align", op.align.is_some()),
        ] {
            if set {
                return not_for(field);
            }
        }
    }
    if op.sync.is_some() && !takes_sync(k) {
        return not_for("sync");
    }
    if !k.is_stream() {
        let own_file = matches!(k, OpKind::Read | OpKind::Write) && op.scope == Some(Scope::Own);
        if op.scope.is_some() && !own_file {
            return Err((
                "scope",
                format!("`scope` does not apply to {k} (read and write take scope = \"own\" only)"),
            ));
        }
        if op.wrap.is_some() {
            return not_for("wrap");
        }
    }
    if op.reverse == Some(true) && (k != OpKind::SeqRead || op.scope == Some(Scope::Shared)) {
        return Err((
            "reverse",
            "`reverse` applies to seqread with scope = \"own\" only".into(),
        ));
    }
    let bs = op.block_size();
    if bs == 0 {
        return Err(("bs", "bs must be above 0".into()));
    }
    if matches!(k, OpKind::Read | OpKind::Write | OpKind::Append) {
        let size = op.size.map_or(bs, |s| s.0);
        if size == 0 {
            return Err(("size", "size must be above 0".into()));
        }
        // Reads and writes are clamped to the file; an op larger than every file is a mistake.
        if k != OpKind::Append && fs.prealloc && fs.size.max() > 0 && size > fs.size.max() {
            return Err((
                "size",
                format!(
                    "size {} is larger than every file of fileset `{}` ({})",
                    Bytes(size),
                    fs.name,
                    Bytes(fs.size.max())
                ),
            ));
        }
        if let Some(seeks) = op.seeks {
            let blocks = size.div_ceil(bs);
            if seeks == 0 || seeks as u64 > blocks {
                return Err((
                    "seeks",
                    format!("seeks must be between 1 and the {blocks} blocks of an operation"),
                ));
            }
        }
        if op.align.is_some_and(|a| a.0 == 0) {
            return Err(("align", "align must be above 0".into()));
        }
    }
    if g.direct && takes_bs(k) {
        if !bs.is_multiple_of(512) {
            return Err((
                "bs",
                format!(
                    "O_DIRECT needs a block size that is a multiple of 512; {} is not",
                    Bytes(bs)
                ),
            ));
        }
        if let Some(a) = op.align {
            if !a.0.is_multiple_of(512) {
                return Err(("align", "O_DIRECT needs align to be a multiple of 512".into()));
            }
        }
    }
    if k.is_stream() && op.scope == Some(Scope::Shared) && !matches!(fs.size, SizeDist::Fixed(_)) {
        return Err((
            "scope",
            format!(
                "a shared stream needs the files of `{}` to have one fixed size",
                fs.name
            ),
        ));
    }
    Ok(())
}

/// The operations a `size` applies to.
fn takes_size(kind: OpKind) -> bool {
    matches!(kind, OpKind::Read | OpKind::Write | OpKind::Append | OpKind::Truncate)
}

/// The operations a `bs` applies to.
fn takes_bs(kind: OpKind) -> bool {
    matches!(
        kind,
        OpKind::Read
            | OpKind::ReadAll
            | OpKind::Write
            | OpKind::WriteAll
            | OpKind::Append
            | OpKind::Create
            | OpKind::SeqRead
            | OpKind::SeqWrite
            | OpKind::Rewrite
    )
}

/// The operations `seeks`, `skip` and `align` apply to.
fn takes_pattern(kind: OpKind) -> bool {
    matches!(kind, OpKind::Read | OpKind::Write)
}

/// The operations a `sync` before close applies to.
fn takes_sync(kind: OpKind) -> bool {
    matches!(
        kind,
        OpKind::Create | OpKind::Write | OpKind::WriteAll | OpKind::Append | OpKind::SeqWrite | OpKind::Rewrite
    )
}

/// Labels name rows of tables and keys of JSON: one line of printable text, not too long.
fn check_label(label: &str) -> Result<(), String> {
    const MAX: usize = 64;
    if label.trim().is_empty() {
        return Err("a label must not be empty".into());
    }
    if label.chars().any(char::is_control) {
        return Err(format!("label {label:?} holds a control character"));
    }
    if label != label.trim() {
        return Err(format!("label {label:?} starts or ends with a space"));
    }
    if label.chars().count() > MAX {
        return Err(format!("label `{label}` is longer than {MAX} characters"));
    }
    Ok(())
}

/// What a fileset in the run directory itself (`dir = "."`) cannot have: subdirectories of its
/// own, operations that make directories, or another fileset there too.
fn check_in_run_dir(w: &Workload, i: usize) -> Result<(), (&'static str, String)> {
    let fs = &w.filesets[i];
    if fs.dirs != 0 {
        return Err((
            "dirs",
            "a fileset in the run directory itself (dir = \".\") keeps its files there: dirs must be 0".into(),
        ));
    }
    if w.fileset_use(&fs.name).1 {
        return Err((
            "dir",
            "mkdir, rmdir and metaop need a fileset directory of its own, not dir = \".\"".into(),
        ));
    }
    if w.filesets[..i].iter().any(|o| o.in_run_dir() && o.root == fs.root) {
        return Err(("dir", "only one fileset can lie in the run directory itself".into()));
    }
    Ok(())
}

/// What a fileset with `names` must be: one plain, distinct name per file, all in its directory
/// itself, and files that no operation adds, removes or renames (the names are fixed).
fn check_names(w: &Workload, i: usize) -> Result<(), (&'static str, String)> {
    let fs = &w.filesets[i];
    if fs.until_bytes.is_some() || fs.names.len() as u64 != fs.files {
        return Err((
            "names",
            format!(
                "names gives {} name(s) for files = {}: give one name per file",
                fs.names.len(),
                fs.files
            ),
        ));
    }
    if fs.dirs != 0 {
        return Err((
            "dirs",
            "a fileset with names keeps its files in its directory itself: dirs must be 0".into(),
        ));
    }
    let (dynamic, meta) = w.fileset_use(&fs.name);
    if dynamic || meta {
        return Err((
            "names",
            "create, delete, rename, mkdir, rmdir and metaop cannot work on a fileset with names (its files are fixed)"
                .into(),
        ));
    }
    for (k, name) in fs.names.iter().enumerate() {
        let plain = !name.is_empty()
            && name.len() <= 255
            && !name.contains('/')
            && !name.chars().any(char::is_control)
            && !matches!(name.as_str(), "." | ".." | marker::FILESET);
        if !plain {
            return Err((
                "names",
                format!(
                    "{name:?} cannot name a file: give a plain file name (no `/`, not `.`, `..` or `{}`)",
                    marker::FILESET
                ),
            ));
        }
        if fs.names[..k].contains(name) {
            return Err(("names", format!("`{name}` is named twice")));
        }
    }
    Ok(())
}

/// The line and column (from 1) of the item `path` points at in the TOML `text`, or of its
/// nearest parent written in the file.
pub fn locate(text: &str, path: &[PathSeg]) -> Option<(usize, usize)> {
    span_of(text, path).map(|s| line_col(text, s.start))
}

fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// Finds the span of the item a validation path points at, walking up to the nearest parent that
/// is written in the file.
fn span_of(text: &str, path: &[PathSeg]) -> Option<std::ops::Range<usize>> {
    let doc: toml_edit::ImDocument<&str> = toml_edit::ImDocument::parse(text).ok()?;
    let mut item: &toml_edit::Item = doc.as_item();
    let mut best = None;
    for seg in path {
        let next = match seg {
            PathSeg::Key(k) => item.get(*k),
            PathSeg::Name(k) => item.get(k.as_str()),
            PathSeg::Index(i) => item.get(*i),
        };
        let Some(next) = next else { break };
        item = next;
        let span = match item {
            toml_edit::Item::Value(v) => v.span(),
            toml_edit::Item::Table(t) => t.span(),
            toml_edit::Item::ArrayOfTables(a) => a.span(),
            toml_edit::Item::None => None,
        };
        if span.is_some() {
            best = span;
        }
    }
    if best.is_none() {
        // Point at the key itself when the value has no span of its own.
        if let Some(PathSeg::Key(k)) = path.last() {
            best = text.find(&format!("{k} ")).map(|s| s..s + k.len());
        }
    }
    best
}
