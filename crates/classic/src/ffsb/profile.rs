//! A profile as fslab holds it once read: its global settings, each `[filesystem]` ([`FsSpec`])
//! and each `[threadgroup]` ([`TgSpec`]), with the line every setting came from so that later
//! errors can point at it. Reading the text into this is parse.rs's work; checking it as a whole
//! is validate.rs's.

use super::grammar::Grammar;
use super::ops::FfsbOp;
use super::stats::StatsSpec;
use std::collections::BTreeMap;

/// The line each option was set on, to point errors found later at it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Lines(pub(super) BTreeMap<&'static str, usize>);

impl Lines {
    pub fn of(&self, option: &str) -> Option<usize> {
        self.0.get(option).copied()
    }
}

/// One `[filesystem]`.
#[derive(Debug, Clone, PartialEq)]
pub struct FsSpec {
    /// The line of the section header.
    pub line: usize,
    pub location: Option<String>,
    pub num_files: u64,
    pub num_dirs: u64,
    pub min_filesize: u64,
    pub max_filesize: u64,
    pub reuse: bool,
    pub agefs: bool,
    pub desired_util: f64,
    /// The nested threadgroup that ages the filesystem.
    pub aging: Option<TgSpec>,
    pub create_blocksize: u64,
    pub age_blocksize: u64,
    /// `size_weight` lines: (size, weight) for the files `create` makes.
    pub size_weights: Vec<(u64, u32)>,
    pub init_size: u64,
    pub init_util: f64,
    pub clone: Option<String>,
    pub lines: Lines,
}

impl Default for FsSpec {
    fn default() -> FsSpec {
        FsSpec {
            line: 0,
            location: None,
            num_files: 0,
            num_dirs: 0,
            min_filesize: 0,
            max_filesize: 0,
            reuse: false,
            agefs: false,
            desired_util: 0.0,
            aging: None,
            create_blocksize: 4096,
            age_blocksize: 4096,
            size_weights: Vec::new(),
            init_size: 0,
            init_util: 0.0,
            clone: None,
            lines: Lines::default(),
        }
    }
}

/// Which filesystem a threadgroup is bound to, as written.
#[derive(Debug, Clone, PartialEq)]
pub enum BindFs {
    /// 6.0: the filesystem's location.
    Location(String),
    /// 5.x: the filesystem's number.
    Index(u64),
}

/// One `[threadgroup]`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TgSpec {
    pub line: usize,
    pub num_threads: u64,
    pub bindfs: Option<BindFs>,
    /// Filled in once every filesystem is known: the index `bindfs` names.
    pub bound_to: Option<usize>,
    pub op_delay_ms: u64,
    pub read_size: u64,
    pub read_blocksize: u64,
    pub read_random: bool,
    pub read_skip: bool,
    pub read_skipsize: u64,
    pub write_size: u64,
    pub write_blocksize: u64,
    pub write_random: bool,
    pub fsync_file: bool,
    /// The weight of each operation given one, in FFSB's order, with the line that set it.
    pub weights: BTreeMap<FfsbOp, (u32, usize)>,
    /// A `[stats]` section with enable_stats=1: the system calls to time and how to count them.
    pub stats: Option<StatsSpec>,
    pub lines: Lines,
}

impl TgSpec {
    /// The operations with a weight above 0, in FFSB's order.
    pub fn ops(&self) -> impl Iterator<Item = (FfsbOp, u32)> + '_ {
        self.weights.iter().filter(|(_, w)| w.0 > 0).map(|(op, w)| (*op, w.0))
    }
}

/// A whole profile, read and checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    /// The file name, as errors name it.
    pub file: String,
    pub grammar: Grammar,
    /// `time` and its line.
    pub time: Option<(u64, usize)>,
    pub directio: bool,
    pub alignio: bool,
    pub bufferio: bool,
    pub verbose: bool,
    pub callout: Option<String>,
    pub filesystems: Vec<FsSpec>,
    pub threadgroups: Vec<TgSpec>,
    /// What FFSB would accept but fslab ignores or treats differently.
    pub warnings: Vec<String>,
}
