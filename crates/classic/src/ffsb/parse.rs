//! Reading FFSB profiles, in either of FFSB's two grammars.
//!
//! **6.0** (`parser.c`): lines are `name=value` with all whitespace stripped and `#` starting a
//! comment; `[filesystem]`, `[threadgroup]` and `[stats]` sections end with `[end]` and are
//! recognised by substring, so `[filesystem0]`/`[end0]` work too; sizes take K/KB/M/MB/G/GB
//! (binary, any case); `size_weight <size> <weight>` and `msec_range <a> <b>` take spaces, not
//! `=`. A filesystem may hold one nested `[threadgroup]` to age it with.
//!
//! **5.x** (FFSB 5.2.1): `num_filesystems`, `num_threadgroups` and `time` first, then numbered
//! `[filesystemN]...[endN]` sections, then `[threadgroupN]...[endN]`; plain numbers only;
//! `meta_weight` instead of `metaop_weight`, `bindfs` by number; and every section starts from the
//! values of the section before it.
//!
//! The grammar is detected: anything only 6.0 knows (an unnumbered section, `[stats]`, a 6.0-only
//! option, `size_weight`) makes it 6.0; otherwise `num_filesystems`, `num_threadgroups`,
//! `meta_weight` or `bufferedio` make it 5.x; otherwise 6.0.
//!
//! Unlike FFSB, every unknown option and malformed value is an error naming its line, and an
//! unknown option's message suggests the closest known one.
//!
//! What is read becomes a [`Profile`] (profile.rs), which validate.rs then checks as a whole.

use super::grammar::Grammar;
use super::ops::FfsbOp;
use super::profile::{BindFs, FsSpec, Profile, TgSpec};
use super::stats::{StatsSpec, Syscall};
use super::validate;
use super::ProfileError;
use std::collections::BTreeMap;

/// Where an option is set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Global,
    Filesystem,
    Threadgroup,
    Stats,
}

impl Scope {
    const ALL: [Scope; 4] = [Scope::Global, Scope::Filesystem, Scope::Threadgroup, Scope::Stats];

    fn describe(self) -> &'static str {
        match self {
            Scope::Global => "the global part of the profile",
            Scope::Filesystem => "[filesystem]",
            Scope::Threadgroup => "[threadgroup]",
            Scope::Stats => "[stats]",
        }
    }
}

/// The kind of value an option takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A plain number.
    Int,
    /// 0 or 1 (6.0 refuses anything else).
    Bool,
    /// A number; anything but 0 is on (5.x's flags, 6.0's read_skip).
    Flag,
    Float,
    /// Bytes, with K/KB/M/MB/G/GB in 6.0.
    Size,
    Str,
    /// `size_weight <size> <weight>`.
    SizeWeight,
    /// `msec_range <a> <b>`.
    Range,
    /// Accepted with a warning and ignored.
    Deprecated,
}

use Kind::*;

/// The largest `msec_range` bound: FFSB keeps bounds as microseconds in 32 bits.
const MAX_RANGE_MS: f64 = u32::MAX as f64 / 1000.0;

const V6_GLOBAL: &[(&str, Kind)] = &[
    ("num_filesystems", Deprecated),
    ("num_threadgroups", Deprecated),
    ("verbose", Bool),
    ("time", Int),
    ("directio", Bool),
    ("bufferio", Bool),
    ("alignio", Bool),
    ("callout", Str),
];

const V6_FILESYSTEM: &[(&str, Kind)] = &[
    ("location", Str),
    ("num_files", Int),
    ("num_dirs", Int),
    ("reuse", Bool),
    ("min_filesize", Size),
    ("max_filesize", Size),
    ("create_blocksize", Size),
    ("age_blocksize", Size),
    ("desired_util", Float),
    ("agefs", Bool),
    ("size_weight", SizeWeight),
    ("init_util", Float),
    ("init_size", Size),
    ("clone", Str),
];

const V6_THREADGROUP: &[(&str, Kind)] = &[
    ("bindfs", Str),
    ("num_threads", Int),
    ("read_weight", Int),
    ("readall_weight", Int),
    ("read_random", Bool),
    ("read_skip", Flag),
    ("read_size", Size),
    ("read_blocksize", Size),
    ("read_skipsize", Size),
    ("write_weight", Int),
    ("write_random", Bool),
    ("fsync_file", Bool),
    ("write_size", Size),
    ("write_blocksize", Size),
    ("create_weight", Int),
    ("delete_weight", Int),
    ("append_weight", Int),
    ("metaop_weight", Int),
    ("createdir_weight", Int),
    ("op_delay", Int),
    ("stat_weight", Int),
    ("writeall_weight", Int),
    ("writeall_fsync_weight", Int),
    ("open_close_weight", Int),
    ("write_fsync_weight", Int),
    ("create_fsync_weight", Int),
    ("append_fsync_weight", Int),
];

const V6_STATS: &[(&str, Kind)] = &[
    ("enable_stats", Bool),
    ("enable_range", Bool),
    ("ignore", Str),
    ("msec_range", Range),
];

const V5_GLOBAL: &[(&str, Kind)] = &[
    ("num_filesystems", Int),
    ("num_threadgroups", Int),
    ("verbose", Flag),
    ("directio", Flag),
    ("bufferedio", Flag),
    ("alignio", Flag),
    ("time", Int),
    ("callout", Str),
];

const V5_FILESYSTEM: &[(&str, Kind)] = &[
    ("location", Str),
    ("num_files", Int),
    ("num_dirs", Int),
    ("reuse", Flag),
    ("max_filesize", Size),
    ("min_filesize", Size),
    ("create_blocksize", Size),
    ("age_blocksize", Size),
    ("desired_util", Float),
    ("agefs", Flag),
];

const V5_THREADGROUP: &[(&str, Kind)] = &[
    ("bindfs", Int),
    ("num_threads", Int),
    ("read_weight", Int),
    ("readall_weight", Int),
    ("read_random", Flag),
    ("read_skip", Flag),
    ("read_size", Size),
    ("read_blocksize", Size),
    ("read_skipsize", Size),
    ("write_weight", Int),
    ("write_random", Flag),
    ("fsync_file", Flag),
    ("write_size", Size),
    ("write_blocksize", Size),
    ("create_weight", Int),
    ("delete_weight", Int),
    ("append_weight", Int),
    ("meta_weight", Int),
    ("op_delay", Int),
];

fn options(grammar: Grammar, scope: Scope) -> &'static [(&'static str, Kind)] {
    match (grammar, scope) {
        (Grammar::V6, Scope::Global) => V6_GLOBAL,
        (Grammar::V6, Scope::Filesystem) => V6_FILESYSTEM,
        (Grammar::V6, Scope::Threadgroup) => V6_THREADGROUP,
        (Grammar::V6, Scope::Stats) => V6_STATS,
        (Grammar::V5, Scope::Global) => V5_GLOBAL,
        (Grammar::V5, Scope::Filesystem) => V5_FILESYSTEM,
        (Grammar::V5, Scope::Threadgroup) => V5_THREADGROUP,
        (Grammar::V5, Scope::Stats) => &[],
    }
}

fn lookup(grammar: Grammar, scope: Scope, name: &str) -> Option<(&'static str, Kind)> {
    options(grammar, scope).iter().copied().find(|(n, _)| *n == name)
}

fn known_anywhere(grammar: Grammar, name: &str) -> bool {
    Scope::ALL.iter().any(|s| lookup(grammar, *s, name).is_some())
}

// ---------------------------------------------------------------------------------------------
// Lines

/// What one non-empty line of a profile says.
#[derive(Debug, Clone, PartialEq)]
enum Token {
    /// `[...]`: the text between the brackets, whitespace removed.
    Header { inner: String, closed: bool },
    /// `name=value`: `value` with whitespace removed, `raw` as written (for callout).
    Setting { name: String, value: String, raw: String },
    /// `size_weight 4k 10`, `msec_range 0 1`.
    Pair { name: String, args: Vec<String> },
    /// A word with no `=`.
    Bare { name: String },
}

#[derive(Debug, Clone)]
struct Line {
    no: usize,
    token: Token,
}

fn tokenize(text: &str) -> Vec<Line> {
    let mut lines = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let content = raw.split('#').next().unwrap_or("").trim();
        if content.is_empty() {
            continue;
        }
        let squeeze = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
        let token = if let Some(rest) = content.strip_prefix('[') {
            Token::Header {
                inner: squeeze(rest.split(']').next().unwrap_or("")),
                closed: rest.contains(']'),
            }
        } else if let Some((name, rest)) = ["size_weight", "msec_range"]
            .iter()
            .find_map(|n| content.strip_prefix(n).map(|rest| (*n, rest)))
            .filter(|(_, rest)| rest.starts_with(char::is_whitespace))
        {
            Token::Pair {
                name: name.to_string(),
                args: rest.split_whitespace().map(str::to_string).collect(),
            }
        } else {
            match content.split_once('=') {
                Some((name, value)) => Token::Setting {
                    name: squeeze(name),
                    value: squeeze(value),
                    raw: value.trim().to_string(),
                },
                None => Token::Bare { name: squeeze(content) },
            }
        };
        lines.push(Line { no: i + 1, token });
    }
    lines
}

/// What a section header opens or closes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Header {
    Filesystem,
    Threadgroup,
    End,
    Stats,
}

impl Header {
    fn name(self) -> &'static str {
        match self {
            Header::Filesystem => "filesystem",
            Header::Threadgroup => "threadgroup",
            Header::End => "end",
            Header::Stats => "stats",
        }
    }
}

/// 6.0 matches section names anywhere in the brackets, in this order (`strstr`).
fn classify_v6(inner: &str) -> Option<(Header, Option<u32>)> {
    let kind = [Header::Filesystem, Header::Threadgroup, Header::End, Header::Stats]
        .into_iter()
        .find(|h| inner.contains(h.name()))?;
    let digits: String = inner.chars().rev().take_while(char::is_ascii_digit).collect();
    let number = digits.chars().rev().collect::<String>().parse().ok();
    Some((kind, number))
}

/// 5.x takes exactly `filesystemN`, `threadgroupN` and `endN`.
fn classify_v5(inner: &str) -> Option<(Header, Option<u32>)> {
    [Header::Filesystem, Header::Threadgroup, Header::End]
        .into_iter()
        .find_map(|h| {
            let digits = inner.strip_prefix(h.name())?;
            (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())).then(|| (h, digits.parse().ok()))
        })
}

/// Which grammar the profile is written in (see the module documentation).
fn detect(lines: &[Line]) -> Grammar {
    let only_v6 = |n: &str| known_anywhere(Grammar::V6, n) && !known_anywhere(Grammar::V5, n);
    let only_v5 = |n: &str| known_anywhere(Grammar::V5, n) && !known_anywhere(Grammar::V6, n);
    let (mut v6, mut v5) = (false, false);
    for line in lines {
        match &line.token {
            Token::Header { inner, .. } => v6 |= classify_v5(inner).is_none(),
            Token::Pair { .. } => v6 = true,
            Token::Setting { name, value, .. } => {
                v6 |= only_v6(name) || (name == "bindfs" && value.parse::<u32>().is_err());
                v5 |= only_v5(name) || name == "num_filesystems" || name == "num_threadgroups";
            }
            Token::Bare { name } => {
                v6 |= only_v6(name);
                v5 |= only_v5(name);
            }
        }
    }
    if !v6 && v5 {
        Grammar::V5
    } else {
        Grammar::V6
    }
}

// ---------------------------------------------------------------------------------------------
// Sections

#[derive(Debug, Clone, PartialEq)]
enum Value {
    Int(u64),
    Float(f64),
    Str(String),
    SizeWeight(u64, u32),
    /// Milliseconds.
    Range(f64, f64),
    Ignored,
}

#[derive(Debug, Clone)]
struct Opt {
    name: &'static str,
    value: Value,
    line: usize,
}

/// A section as written: its options in order and the sections nested in it.
#[derive(Debug, Clone)]
struct Section {
    scope: Scope,
    line: usize,
    number: Option<u32>,
    /// Whether an `[end]` closed it (rather than the end of the file).
    closed: bool,
    opts: Vec<Opt>,
    children: Vec<Section>,
}

impl Section {
    fn new(scope: Scope, line: usize, number: Option<u32>) -> Section {
        Section {
            scope,
            line,
            number,
            closed: false,
            opts: Vec::new(),
            children: Vec::new(),
        }
    }

    /// The last setting of `name`.
    fn get(&self, name: &str) -> Option<&Opt> {
        self.opts.iter().rev().find(|o| o.name == name)
    }
}

/// Reads the lines into sections, checking every option and value.
struct Builder<'a> {
    file: &'a str,
    grammar: Grammar,
    warnings: Vec<String>,
}

impl Builder<'_> {
    fn err(&self, line: usize, message: String) -> ProfileError {
        ProfileError::at(self.file, line, message)
    }

    fn build(&mut self, lines: &[Line]) -> Result<Section, ProfileError> {
        let mut stack = vec![Section::new(Scope::Global, 0, None)];
        let mut seen_threadgroup = false;
        for line in lines {
            let no = line.no;
            let scope = stack.last().expect("the root").scope;
            match &line.token {
                Token::Header { inner, closed } => {
                    if !closed {
                        return Err(self.err(no, format!("`[{inner}` has no closing `]`")));
                    }
                    let (header, number) = match self.grammar {
                        Grammar::V6 => classify_v6(inner),
                        Grammar::V5 => classify_v5(inner),
                    }
                    .ok_or_else(|| self.unknown_section(no, inner))?;
                    match header {
                        Header::End => {
                            if stack.len() == 1 {
                                return Err(self.err(no, format!("`[{inner}]` closes no open section")));
                            }
                            let mut done = stack.pop().expect("an open section");
                            done.closed = true;
                            if self.grammar == Grammar::V5 && number != done.number {
                                self.warnings.push(format!(
                                    "line {no}: `[{inner}]` closes the section opened at line {} with another number",
                                    done.line
                                ));
                            }
                            stack.last_mut().expect("the root").children.push(done);
                        }
                        Header::Filesystem => {
                            if scope != Scope::Global {
                                return Err(self.nested(no, inner, &stack));
                            }
                            if self.grammar == Grammar::V5 && seen_threadgroup {
                                return Err(self.err(
                                    no,
                                    "in the 5.x grammar every [filesystemN] comes before the first [threadgroupN]"
                                        .into(),
                                ));
                            }
                            stack.push(Section::new(Scope::Filesystem, no, number));
                        }
                        Header::Threadgroup => {
                            match scope {
                                Scope::Global => seen_threadgroup = true,
                                Scope::Filesystem => {} // the filesystem's aging threadgroup
                                _ => return Err(self.nested(no, inner, &stack)),
                            }
                            stack.push(Section::new(Scope::Threadgroup, no, number));
                        }
                        Header::Stats => {
                            if !matches!(scope, Scope::Threadgroup | Scope::Global) {
                                return Err(self.nested(no, inner, &stack));
                            }
                            if scope == Scope::Global {
                                self.warnings.push(format!(
                                    "line {no}: a [stats] section outside a [threadgroup] has no effect"
                                ));
                            }
                            stack.push(Section::new(Scope::Stats, no, number));
                        }
                    }
                }
                Token::Setting { name, value, raw } => {
                    if self.grammar == Grammar::V5 && scope == Scope::Global && !stack[0].children.is_empty() {
                        if lookup(self.grammar, Scope::Global, name).is_some() {
                            return Err(self.err(
                                no,
                                format!("in the 5.x grammar `{name}` must come before the first section"),
                            ));
                        }
                        return Err(self.unknown_option(no, scope, name));
                    }
                    let (name, kind) =
                        lookup(self.grammar, scope, name).ok_or_else(|| self.unknown_option(no, scope, name))?;
                    let text = if name == "callout" { raw } else { value };
                    let value = self.value(no, name, kind, text)?;
                    stack
                        .last_mut()
                        .expect("a section")
                        .opts
                        .push(Opt { name, value, line: no });
                }
                Token::Pair { name, args } => {
                    let (name, kind) =
                        lookup(self.grammar, scope, name).ok_or_else(|| self.unknown_option(no, scope, name))?;
                    let value = self.pair(no, name, kind, args)?;
                    stack
                        .last_mut()
                        .expect("a section")
                        .opts
                        .push(Opt { name, value, line: no });
                }
                Token::Bare { name } => {
                    return Err(match lookup(self.grammar, scope, name) {
                        Some((n, SizeWeight)) => self.err(no, format!("`{n}` takes a size and a weight: `{n} 4k 10`")),
                        Some((n, Range)) => self.err(no, format!("`{n}` takes two numbers: `{n} 0.0 1.0`")),
                        Some((n, _)) => self.err(no, format!("`{n}` needs a value: `{n}=...`")),
                        None => self.unknown_option(no, scope, name),
                    });
                }
            }
        }
        while stack.len() > 1 {
            let open = stack.pop().expect("an open section");
            let what = open.scope.describe();
            if self.grammar == Grammar::V5 {
                return Err(self.err(open.line, format!("{what} opened here is never closed by [endN]")));
            }
            self.warnings.push(format!(
                "line {}: {what} is never closed by [end]; it ends with the file (as FFSB reads it)",
                open.line
            ));
            stack.last_mut().expect("the root").children.push(open);
        }
        Ok(stack.pop().expect("the root"))
    }

    fn nested(&self, line: usize, inner: &str, stack: &[Section]) -> ProfileError {
        let open = stack.last().expect("a section");
        self.err(
            line,
            format!(
                "`[{inner}]` cannot go inside {} (opened at line {}); close that with [end] first",
                open.scope.describe(),
                open.line
            ),
        )
    }

    fn unknown_section(&self, line: usize, inner: &str) -> ProfileError {
        let names: &[&str] = match self.grammar {
            Grammar::V6 => &["filesystem", "threadgroup", "stats", "end"],
            Grammar::V5 => &["filesystem0", "threadgroup0", "end0"],
        };
        let hint = match closest(inner, names) {
            Some(s) => format!(" (did you mean `[{s}]`?)"),
            None => format!(
                " (sections are {})",
                names.iter().map(|n| format!("[{n}]")).collect::<Vec<_>>().join(", ")
            ),
        };
        self.err(
            line,
            format!("unknown section `[{inner}]` in a {} profile{hint}", self.grammar),
        )
    }

    fn unknown_option(&self, line: usize, scope: Scope, name: &str) -> ProfileError {
        if let Some(other) = Scope::ALL
            .iter()
            .find(|s| **s != scope && lookup(self.grammar, **s, name).is_some())
        {
            return self.err(
                line,
                format!(
                    "`{name}` is a {} option; it cannot be set in {}",
                    other.describe(),
                    scope.describe()
                ),
            );
        }
        let names: Vec<&str> = options(self.grammar, scope).iter().map(|o| o.0).collect();
        let mut message = format!("unknown option `{name}` in {}", scope.describe());
        if let Some(s) = closest(name, &names) {
            message.push_str(&format!(" (did you mean `{s}`?)"));
        }
        let other = match self.grammar {
            Grammar::V5 => Grammar::V6,
            Grammar::V6 => Grammar::V5,
        };
        if known_anywhere(other, name) {
            message.push_str(&format!(
                "; `{name}` belongs to FFSB {other}'s grammar, and this profile reads as {}",
                self.grammar
            ));
        }
        self.err(line, message)
    }

    fn value(&mut self, line: usize, name: &'static str, kind: Kind, text: &str) -> Result<Value, ProfileError> {
        let bad = |what: &str| self.err(line, format!("`{name}={text}`: {what}"));
        if text.is_empty() && kind != Deprecated {
            return Err(self.err(line, format!("`{name}` has no value")));
        }
        Ok(match kind {
            Int => Value::Int(parse_int(text, self.grammar).map_err(|m| bad(&m))?),
            Size => Value::Int(parse_size(text, self.grammar).map_err(|m| bad(&m))?),
            Flag => Value::Int(parse_int(text, self.grammar).map_err(|m| bad(&m))?),
            Bool => match text {
                "0" => Value::Int(0),
                "1" => Value::Int(1),
                _ => return Err(bad("FFSB takes 0 or 1 here")),
            },
            Float => match text.parse::<f64>() {
                Ok(f) if f.is_finite() => Value::Float(f),
                _ => return Err(bad("not a number")),
            },
            Str => Value::Str(text.to_string()),
            Deprecated => {
                self.warnings.push(format!(
                    "line {line}: the \"{name}\" option is deprecated in FFSB 6.0 and ignored"
                ));
                Value::Ignored
            }
            SizeWeight | Range => {
                return Err(self.err(line, format!("`{name}` takes two values after a space, not `=`")))
            }
        })
    }

    fn pair(&self, line: usize, name: &'static str, kind: Kind, args: &[String]) -> Result<Value, ProfileError> {
        let [a, b] = args else {
            return Err(self.err(
                line,
                match kind {
                    SizeWeight => format!("`{name}` takes a size and a weight: `{name} 4k 10`"),
                    _ => format!("`{name}` takes two numbers: `{name} 0.0 1.0`"),
                },
            ));
        };
        match kind {
            SizeWeight => {
                let size =
                    parse_size(a, self.grammar).map_err(|m| self.err(line, format!("{name} size `{a}`: {m}")))?;
                let weight = b
                    .parse::<u32>()
                    .map_err(|_| self.err(line, format!("{name} weight `{b}` is not a whole number")))?;
                Ok(Value::SizeWeight(size, weight))
            }
            _ => {
                // FFSB keeps each bound as whole microseconds in 32 bits.
                let ms = |v: &String| match v.parse::<f64>() {
                    Ok(f) if (0.0..=MAX_RANGE_MS).contains(&f) => Ok(f),
                    Ok(_) => Err(self.err(
                        line,
                        format!("{name}: `{v}` is outside 0 to {MAX_RANGE_MS} milliseconds"),
                    )),
                    Err(_) => Err(self.err(line, format!("{name}: `{v}` is not a number"))),
                };
                Ok(Value::Range(ms(a)?, ms(b)?))
            }
        }
    }
}

/// A whole number. 5.x reads `4k` as 4 and drops the rest; fslab refuses it instead.
fn parse_int(text: &str, grammar: Grammar) -> Result<u64, String> {
    if text.bytes().all(|b| b.is_ascii_digit()) {
        return text.parse().map_err(|_| "the number is too large".to_string());
    }
    if grammar == Grammar::V5 && parse_size(text, Grammar::V6).is_ok() {
        return Err("5.x profiles take plain byte counts; size suffixes need the 6.0 grammar".into());
    }
    Err("not a whole number".into())
}

/// Bytes: a number with an optional binary suffix K, KB, M, MB, G or GB in any case (6.0's
/// `size64_convert`); 5.x takes plain numbers only.
fn parse_size(text: &str, grammar: Grammar) -> Result<u64, String> {
    let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (num, suffix) = text.split_at(split);
    if num.is_empty() {
        return Err("not a size (e.g. 4096, 4k, 64KB, 1g)".into());
    }
    if grammar == Grammar::V5 && !suffix.is_empty() {
        return parse_int(text, grammar);
    }
    let mult: u64 = match suffix.to_ascii_uppercase().as_str() {
        "" => 1,
        "K" | "KB" => 1 << 10,
        "M" | "MB" => 1 << 20,
        "G" | "GB" => 1 << 30,
        _ => {
            return Err(format!(
                "unknown size suffix `{suffix}` (FFSB knows K, KB, M, MB, G, GB)"
            ))
        }
    };
    let n: u64 = num.parse().map_err(|_| "the number is too large".to_string())?;
    n.checked_mul(mult)
        // A file's size and offsets are signed 64-bit numbers (off_t).
        .filter(|&b| b <= i64::MAX as u64)
        .ok_or_else(|| format!("the size is too large (a file holds at most {} bytes)", i64::MAX))
}

/// The known name closest to `name` by edit distance, when it is close enough to be a typo.
pub(crate) fn closest<'a>(name: &str, known: &[&'a str]) -> Option<&'a str> {
    let near = |k: &&&str| name.len().abs_diff(k.len()) <= (name.len().max(k.len()) / 3).max(2);
    let (best, d) = known
        .iter()
        // The distance is at least the difference in length: a megabyte-long name skips the
        // quadratic work.
        .filter(near)
        .map(|k| (*k, levenshtein(name, k)))
        .min_by_key(|(_, d)| *d)?;
    (d <= (name.len().max(best.len()) / 3).max(2)).then_some(best)
}

/// Edit distance: insertions, deletions and substitutions.
pub(crate) fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let here = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(here + 1);
            prev = here;
        }
    }
    row[b.len()]
}

/// Parses a profile; `file` names it in errors.
pub fn parse(text: &str, file: &str) -> Result<Profile, ProfileError> {
    let lines = tokenize(text);
    let grammar = detect(&lines);
    // Rust's trim and split take a no-break space (a copy from a web page or a PDF) for white
    // space; FFSB's parser does not, and stops at the line.
    let nbsp: Vec<String> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.split('#').next().unwrap_or("").contains('\u{a0}'))
        .map(|(i, _)| (i + 1).to_string())
        .collect();
    let mut warnings = Vec::new();
    if let Some(first) = nbsp.first() {
        let lines = match nbsp.len() {
            1 => format!("line {first}"),
            2..=5 => format!("lines {}", nbsp.join(", ")),
            n => format!("lines {}, … ({n} lines)", nbsp[..5].join(", ")),
        };
        warnings.push(format!(
            "{lines}: a no-break space (U+00A0): fslab reads it as a space, FFSB does not and \
             stops at it; replace it with a plain space"
        ));
    }
    let mut builder = Builder {
        file,
        grammar,
        warnings,
    };
    let root = builder.build(&lines)?;
    let mut profile = Profile {
        file: file.to_string(),
        grammar,
        time: None,
        directio: false,
        alignio: false,
        bufferio: false,
        verbose: false,
        callout: None,
        filesystems: Vec::new(),
        threadgroups: Vec::new(),
        warnings: builder.warnings,
    };
    for opt in &root.opts {
        match (opt.name, &opt.value) {
            ("time", Value::Int(n)) => profile.time = Some((u32_value(file, opt, *n)?, opt.line)),
            ("directio", Value::Int(n)) => profile.directio = *n != 0,
            ("alignio", Value::Int(n)) => profile.alignio = *n != 0,
            ("bufferio" | "bufferedio", Value::Int(n)) => profile.bufferio = *n != 0,
            ("verbose", Value::Int(n)) => profile.verbose = *n != 0,
            ("callout", Value::Str(s)) => profile.callout = Some(s.clone()),
            _ => {}
        }
    }
    let mut previous_fs = FsSpec::default();
    let mut previous_tg = TgSpec::default();
    for section in &root.children {
        match section.scope {
            Scope::Filesystem => {
                // 5.x starts each section from the one before it; 6.0 from the defaults.
                let base = match grammar {
                    Grammar::V5 => previous_fs.clone(),
                    Grammar::V6 => FsSpec::default(),
                };
                let fs = filesystem(file, grammar, section, base)?;
                previous_fs = fs.clone();
                profile.filesystems.push(fs);
            }
            Scope::Threadgroup => {
                let base = match grammar {
                    Grammar::V5 => previous_tg.clone(),
                    Grammar::V6 => TgSpec::default(),
                };
                let tg = threadgroup(file, grammar, section, base)?;
                previous_tg = tg.clone();
                profile.threadgroups.push(tg);
            }
            _ => {}
        }
    }
    if grammar == Grammar::V6 {
        resolve_clones(&mut profile, &root)?;
    }
    if grammar == Grammar::V5 {
        let declared = |name| match root.get(name) {
            Some(Opt {
                value: Value::Int(n),
                line,
                ..
            }) => Some((*n, *line)),
            _ => None,
        };
        validate::declared_counts(&profile, declared("num_filesystems"), declared("num_threadgroups"))?;
    }
    no_threadgroup_inside(file, &profile, &root)?;
    validate::sections_present(&profile)?;
    validate::resolve_bindfs(&mut profile)?;
    Ok(profile)
}

/// A profile whose only [threadgroup]s sit inside a [filesystem] (where they age it) most likely
/// lacks that filesystem's `[end]`: say so at the line where the section went wrong, rather than
/// "the profile has no [threadgroup] section".
fn no_threadgroup_inside(file: &str, profile: &Profile, root: &Section) -> Result<(), ProfileError> {
    if !profile.threadgroups.is_empty() {
        return Ok(());
    }
    let Some((fs, tg)) = root
        .children
        .iter()
        .filter(|s| s.scope == Scope::Filesystem)
        .find_map(|fs| {
            fs.children
                .iter()
                .find(|c| c.scope == Scope::Threadgroup)
                .map(|tg| (fs, tg))
        })
    else {
        return Ok(());
    };
    let (line, message) = if fs.closed {
        (
            tg.line,
            format!(
                "the profile has no [threadgroup] to run: this one is inside the [filesystem] opened at line {}, \
                 where it only ages that filesystem; close the [filesystem] with [end] before line {}",
                fs.line, tg.line
            ),
        )
    } else {
        (
            fs.line,
            format!(
                "this [filesystem] is never closed by [end], so the [threadgroup] at line {} is read as its \
                 aging threadgroup and the profile has no [threadgroup] to run; put [end] before line {}",
                tg.line, tg.line
            ),
        )
    };
    Err(ProfileError::at(file, line, message))
}

fn u32_value(file: &str, opt: &Opt, n: u64) -> Result<u64, ProfileError> {
    if n > u32::MAX as u64 {
        return Err(ProfileError::at(
            file,
            opt.line,
            format!("`{}={n}` is too large (FFSB keeps it in 32 bits)", opt.name),
        ));
    }
    Ok(n)
}

fn filesystem(file: &str, grammar: Grammar, section: &Section, base: FsSpec) -> Result<FsSpec, ProfileError> {
    let mut fs = FsSpec {
        line: section.line,
        location: None,
        clone: None,
        ..base
    };
    for opt in &section.opts {
        fs.lines.0.insert(opt.name, opt.line);
        match (opt.name, &opt.value) {
            ("location", Value::Str(s)) => fs.location = Some(s.clone()),
            ("clone", Value::Str(s)) => fs.clone = Some(s.clone()),
            ("num_files", Value::Int(n)) => fs.num_files = u32_value(file, opt, *n)?,
            ("num_dirs", Value::Int(n)) => fs.num_dirs = u32_value(file, opt, *n)?,
            ("min_filesize", Value::Int(n)) => fs.min_filesize = *n,
            ("max_filesize", Value::Int(n)) => fs.max_filesize = *n,
            ("reuse", Value::Int(n)) => fs.reuse = *n != 0,
            ("agefs", Value::Int(n)) => fs.agefs = *n != 0,
            ("desired_util", Value::Float(f)) => fs.desired_util = *f,
            ("create_blocksize", Value::Int(n)) => fs.create_blocksize = u32_value(file, opt, *n)?,
            ("age_blocksize", Value::Int(n)) => fs.age_blocksize = u32_value(file, opt, *n)?,
            ("size_weight", Value::SizeWeight(size, weight)) => fs.size_weights.push((*size, *weight)),
            ("init_size", Value::Int(n)) => fs.init_size = *n,
            ("init_util", Value::Float(f)) => fs.init_util = *f,
            _ => {}
        }
    }
    let agers: Vec<&Section> = section
        .children
        .iter()
        .filter(|c| c.scope == Scope::Threadgroup)
        .collect();
    if let Some(extra) = agers.get(1) {
        let mut message = "a [filesystem] holds at most one aging [threadgroup]".to_string();
        if !section.closed {
            message.push_str(&format!(
                "; the [filesystem] opened at line {} is never closed by [end]: put [end] before line {}",
                section.line, agers[0].line
            ));
        }
        return Err(ProfileError::at(file, extra.line, message));
    }
    if let Some(ager) = agers.first() {
        fs.aging = Some(threadgroup(file, grammar, ager, TgSpec::default())?);
    }
    Ok(fs)
}

fn threadgroup(file: &str, grammar: Grammar, section: &Section, base: TgSpec) -> Result<TgSpec, ProfileError> {
    let mut tg = TgSpec {
        line: section.line,
        bindfs: None,
        bound_to: None,
        weights: BTreeMap::new(),
        stats: None,
        ..base
    };
    for opt in &section.opts {
        tg.lines.0.insert(opt.name, opt.line);
        let n = match &opt.value {
            Value::Int(n) => *n,
            _ => 0,
        };
        match opt.name {
            "bindfs" => {
                tg.bindfs = Some(match &opt.value {
                    Value::Str(s) => BindFs::Location(s.clone()),
                    _ => BindFs::Index(n),
                })
            }
            "num_threads" => tg.num_threads = u32_value(file, opt, n)?,
            "op_delay" => tg.op_delay_ms = u32_value(file, opt, n)?,
            "read_size" => tg.read_size = n,
            "read_blocksize" => tg.read_blocksize = u32_value(file, opt, n)?,
            "read_random" => tg.read_random = n != 0,
            "read_skip" => tg.read_skip = n != 0,
            "read_skipsize" => tg.read_skipsize = u32_value(file, opt, n)?,
            "write_size" => tg.write_size = u32_value(file, opt, n)?,
            "write_blocksize" => tg.write_blocksize = u32_value(file, opt, n)?,
            "write_random" => tg.write_random = n != 0,
            "fsync_file" => tg.fsync_file = n != 0,
            other => {
                if let Some(op) = FfsbOp::from_weight_option(other, grammar) {
                    tg.weights.insert(op, (u32_value(file, opt, n)? as u32, opt.line));
                }
            }
        }
    }
    for stats in section.children.iter().filter(|c| c.scope == Scope::Stats) {
        tg.stats = stats_spec(file, stats)?;
    }
    Ok(tg)
}

/// A `[stats]` section, as FFSB's `init_tg_stats` reads it: nothing unless `enable_stats=1`;
/// every `ignore` names a call; the `msec_range` lines count only with `enable_range=1`, in
/// reverse.
fn stats_spec(file: &str, section: &Section) -> Result<Option<StatsSpec>, ProfileError> {
    let on = |name| {
        matches!(
            section.get(name),
            Some(Opt {
                value: Value::Int(1),
                ..
            })
        )
    };
    if !on("enable_stats") {
        return Ok(None);
    }
    let mut spec = StatsSpec::default();
    for opt in &section.opts {
        match (&opt.value, opt.name) {
            (Value::Str(text), "ignore") => {
                // FFSB warns of a name it does not know, then ignores whichever call its
                // uninitialised variable happens to hold.
                let call = Syscall::from_ignore(text).ok_or_else(|| {
                    let names: Vec<&str> = Syscall::ALL.iter().map(|s| s.name()).collect();
                    ProfileError::at(
                        file,
                        opt.line,
                        format!("`ignore={text}` names no system call FFSB times: {}", names.join(", ")),
                    )
                })?;
                spec.ignore.push(call);
            }
            (Value::Range(a, b), _) if on("enable_range") => {
                spec.ranges.push((StatsSpec::micros(*a), StatsSpec::micros(*b)));
            }
            _ => {}
        }
    }
    // FFSB's parser keeps a list option's values last first: its msec_range[0] is the last
    // line, and a call on the bound of two ranges counts in the later line's.
    spec.ranges.reverse();
    Ok(Some(spec))
}

/// 6.0's `clone=<location>`: the filesystem takes every setting of the one at that location,
/// keeping its own location.
fn resolve_clones(profile: &mut Profile, root: &Section) -> Result<(), ProfileError> {
    let sections: Vec<&Section> = root.children.iter().filter(|c| c.scope == Scope::Filesystem).collect();
    for i in 0..profile.filesystems.len() {
        let Some(target) = profile.filesystems[i].clone.clone() else {
            continue;
        };
        let fs = &profile.filesystems[i];
        let line = fs.lines.of("clone").unwrap_or(fs.line);
        let Some(j) = profile
            .filesystems
            .iter()
            .position(|o| o.location.as_deref() == Some(target.as_str()))
        else {
            return Err(ProfileError::at(
                &profile.file,
                line,
                format!("clone=`{target}` names no filesystem's location"),
            ));
        };
        let mut cloned = filesystem(&profile.file, profile.grammar, sections[j], FsSpec::default())?;
        cloned.location = profile.filesystems[i].location.clone();
        cloned.line = profile.filesystems[i].line;
        cloned.clone = None;
        profile.filesystems[i] = cloned;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_ok(text: &str) -> Profile {
        parse(text, "p.ffsb").unwrap_or_else(|e| panic!("{e}"))
    }

    fn parse_err(text: &str) -> String {
        parse(text, "p.ffsb").expect_err("a bad profile").to_string()
    }

    const V6: &str = "time=5
[filesystem]
    location=/mnt/a
    num_files=10
    min_filesize=4k
    max_filesize=1MB
[end]
[threadgroup]
    num_threads=2
    read_weight=1
    read_size=8K
    read_blocksize=4k
[end]
";

    #[test]
    fn a_6_0_profile_reads_with_suffixes() {
        let p = parse_ok(V6);
        assert_eq!(p.grammar, Grammar::V6);
        assert_eq!(p.time, Some((5, 1)));
        let fs = &p.filesystems[0];
        assert_eq!(fs.location.as_deref(), Some("/mnt/a"));
        assert_eq!((fs.min_filesize, fs.max_filesize), (4096, 1 << 20));
        assert_eq!(p.threadgroups[0].read_size, 8192);
        assert_eq!(p.threadgroups[0].ops().collect::<Vec<_>>(), vec![(FfsbOp::Read, 1)]);
    }

    #[test]
    fn size_suffixes_are_binary_and_case_insensitive() {
        for (text, want) in [
            ("4096", 4096),
            ("4k", 4096),
            ("4K", 4096),
            ("4kb", 4096),
            ("4KB", 4096),
            ("2m", 2 << 20),
            ("2Mb", 2 << 20),
            ("1g", 1 << 30),
            ("1GB", 1 << 30),
        ] {
            assert_eq!(parse_size(text, Grammar::V6), Ok(want), "{text}");
        }
        assert!(parse_size("4q", Grammar::V6)
            .unwrap_err()
            .contains("unknown size suffix `q`"));
        assert!(parse_size("4k", Grammar::V5).unwrap_err().contains("6.0 grammar"));
    }

    #[test]
    fn whitespace_and_comments_are_stripped() {
        let p = parse_ok(
            "time = 3 # seconds\n[ filesystem0 ]\n location = /mnt/a\n\tnum_files = 1 0\n[end0]\n[threadgroup]\nnum_threads=1\nstat_weight=1\n[end]\n",
        );
        assert_eq!(p.time, Some((3, 1)));
        assert_eq!(p.filesystems[0].num_files, 10);
    }

    #[test]
    fn a_no_break_space_is_a_warning_at_its_line() {
        let text = V6.replacen("location", "\u{a0}\u{a0}location", 1);
        let line = text.lines().position(|l| l.contains('\u{a0}')).unwrap() + 1;
        let p = parse_ok(&text);
        let w: Vec<&String> = p.warnings.iter().filter(|w| w.contains("U+00A0")).collect();
        assert_eq!(w.len(), 1, "{:?}", p.warnings);
        assert!(w[0].starts_with(&format!("line {line}: a no-break space")), "{}", w[0]);
        // Many lines are one warning.
        let many = V6.replace("\n", "\n\u{a0}");
        let p = parse_ok(&many);
        let w: Vec<&String> = p.warnings.iter().filter(|w| w.contains("U+00A0")).collect();
        assert_eq!(w.len(), 1, "{:?}", p.warnings);
        assert!(w[0].starts_with("lines 2, 3, 4, 5, 6, … ("), "{}", w[0]);
        // In a comment it is no one's business.
        let p = parse_ok(&V6.replacen("\n", "\n# \u{a0}\n", 1));
        assert!(!p.warnings.iter().any(|w| w.contains("U+00A0")), "{:?}", p.warnings);
    }

    #[test]
    fn the_grammar_is_detected() {
        let v5 = "num_filesystems=1\nnum_threadgroups=1\ntime=1\n[filesystem0]\nlocation=/a\n[end0]\n[threadgroup0]\nnum_threads=1\nmeta_weight=1\n[end0]\n";
        assert_eq!(parse_ok(v5).grammar, Grammar::V5);
        // The same with a 6.0-only option reads as 6.0, where num_filesystems is deprecated.
        let v6 = v5.replace("meta_weight", "metaop_weight");
        let p = parse_ok(&v6);
        assert_eq!(p.grammar, Grammar::V6);
        assert!(p
            .warnings
            .iter()
            .any(|w| w.contains("\"num_filesystems\" option is deprecated")));
        // No evidence either way: 6.0.
        assert_eq!(parse_ok(V6).grammar, Grammar::V6);
    }

    #[test]
    fn a_5x_name_in_a_6_0_profile_is_explained() {
        let e = parse_err(&V6.replace("read_weight=1", "read_weight=1\nmeta_weight=1"));
        assert!(e.contains("did you mean `metaop_weight`?"), "{e}");
        assert!(e.contains("belongs to FFSB 5.x's grammar"), "{e}");
    }

    #[test]
    fn a_5x_profile_inherits_from_the_section_before() {
        let p = parse_ok(
            "num_filesystems=2\nnum_threadgroups=2\ntime=1\n\
             [filesystem0]\nlocation=/a\nnum_files=7\nmin_filesize=100\nmax_filesize=200\n[end0]\n\
             [filesystem1]\nlocation=/b\n[end1]\n\
             [threadgroup0]\nnum_threads=3\nread_blocksize=512\nreadall_weight=1\n[end0]\n\
             [threadgroup1]\nbindfs=1\ndelete_weight=1\n[end1]\n",
        );
        assert_eq!(p.filesystems[1].num_files, 7);
        assert_eq!(p.filesystems[1].location.as_deref(), Some("/b"));
        assert_eq!(p.threadgroups[1].num_threads, 3);
        assert_eq!(p.threadgroups[1].read_blocksize, 512);
        assert_eq!(p.threadgroups[1].ops().collect::<Vec<_>>(), vec![(FfsbOp::Delete, 1)]);
        assert_eq!(p.threadgroups[1].bound_to, Some(1));
    }

    #[test]
    fn size_weights_and_nested_aging_threadgroups_read() {
        let p = parse_ok(
            "[filesystem]\nlocation=/a\nsize_weight 4k 3\nsize_weight 1M 1\nagefs=1\ndesired_util=0.5\n\
             [threadgroup]\nnum_threads=1\ncreate_weight=1\nwrite_blocksize=4k\n[end]\n[end]\n\
             [threadgroup]\nnum_threads=1\nstat_weight=1\n[stats]\nenable_stats=1\nmsec_range 0.0 1.0\n[end]\n[end]\n",
        );
        let fs = &p.filesystems[0];
        assert_eq!(fs.size_weights, vec![(4096, 3), (1 << 20, 1)]);
        assert!(fs.agefs);
        assert_eq!(fs.aging.as_ref().map(|a| a.num_threads), Some(1));
        assert_eq!(
            p.threadgroups[0].stats,
            Some(StatsSpec::default()),
            "msec_range without enable_range"
        );
    }

    #[test]
    fn stats_sections_read_as_ffsb_reads_them() {
        // One threadgroup whose [stats] section holds `stats`, from line 8.
        let profile = |stats: &str| {
            format!(
                "[filesystem]\nlocation=/a\n[end]\n[threadgroup]\nnum_threads=1\nstat_weight=1\n[stats]\n{stats}[end]\n[end]\n"
            )
        };
        let tg = |stats: &str| parse_ok(&profile(stats)).threadgroups[0].stats.clone();
        assert_eq!(tg("enable_stats=0\nmsec_range 0 1\n"), None);
        // FFSB keeps the ranges last first, each bound as truncated microseconds; `ignore` names
        // a call by its first letters.
        assert_eq!(
            tg("enable_stats=1\nenable_range=1\nignore=READ\nignore=lseek\nmsec_range 0.00 0.01\nmsec_range 0.01 2.5\n"),
            Some(StatsSpec {
                ignore: vec![Syscall::Read, Syscall::Lseek],
                ranges: vec![(10, 2500), (0, 10)],
            })
        );
        assert_eq!(
            tg("enable_stats=1\nmsec_range 0 1\n").unwrap().ranges,
            vec![],
            "ranges need enable_range"
        );
        let bad = |stats: &str| parse_err(&profile(stats));
        let e = bad("enable_stats=1\nignore=fsync\n");
        assert!(
            e.starts_with("p.ffsb:9: `ignore=fsync` names no system call FFSB times: open, read"),
            "{e}"
        );
        let e = bad("enable_stats=1\nenable_range=1\nmsec_range -1 1\n");
        assert!(
            e.starts_with("p.ffsb:10: msec_range: `-1` is outside 0 to 4294967.295 milliseconds"),
            "{e}"
        );
        let e = bad("enable_stats=1\nmsec_range 0 5000000\n");
        assert!(e.contains("`5000000` is outside"), "{e}");
    }

    #[test]
    fn bindfs_and_clone_name_locations() {
        let p = parse_ok(
            "[filesystem]\nlocation=/a\nnum_files=3\n[end]\n[filesystem]\nlocation=/b\nclone=/a\n[end]\n\
             [threadgroup]\nnum_threads=1\nbindfs=/b\nstat_weight=1\n[end]\n",
        );
        assert_eq!(p.filesystems[1].num_files, 3);
        assert_eq!(p.filesystems[1].location.as_deref(), Some("/b"));
        assert_eq!(p.threadgroups[0].bound_to, Some(1));
        let e = parse_err("[filesystem]\nlocation=/a\n[end]\n[threadgroup]\nbindfs=/c\n[end]\n");
        assert!(e.starts_with("p.ffsb:5: bindfs=`/c` names no filesystem"), "{e}");
    }

    #[test]
    fn sections_must_nest_and_close() {
        let e = parse_err("[filesystem]\nlocation=/a\n[filesystem]\n");
        assert!(
            e.starts_with("p.ffsb:3: `[filesystem]` cannot go inside [filesystem]"),
            "{e}"
        );
        let e = parse_err("[end]\n");
        assert!(e.starts_with("p.ffsb:1: `[end]` closes no open section"), "{e}");
        let e = parse_err("[filesytem]\n");
        assert!(
            e.contains("unknown section `[filesytem]`") && e.contains("did you mean `[filesystem]`?"),
            "{e}"
        );
    }

    #[test]
    fn a_filesystem_missing_its_end_is_named_at_its_line() {
        // The [end] of the [filesystem] is missing: its [threadgroup] becomes the aging one.
        let e = parse_err("time=1\n[filesystem]\nlocation=/a\n[threadgroup]\nnum_threads=1\nread_weight=1\n[end]\n");
        assert!(
            e.starts_with("p.ffsb:2: this [filesystem] is never closed by [end], so the [threadgroup] at line 4"),
            "{e}"
        );
        assert!(e.contains("put [end] before line 4"), "{e}");
        // Closed after the threadgroup: the threadgroup's line says where it is.
        let e = parse_err("[filesystem]\nlocation=/a\n[threadgroup]\nnum_threads=1\n[end]\n[end]\n");
        assert!(
            e.starts_with("p.ffsb:3: the profile has no [threadgroup] to run: this one is inside the [filesystem] opened at line 1"),
            "{e}"
        );
        // Two threadgroups swallowed by an unclosed filesystem.
        let e = parse_err(
            "[filesystem]\nlocation=/a\n[threadgroup]\nnum_threads=1\n[end]\n[threadgroup]\nnum_threads=1\n[end]\n",
        );
        assert!(
            e.starts_with("p.ffsb:6: a [filesystem] holds at most one aging [threadgroup]; the [filesystem] opened at line 1 is never closed by [end]: put [end] before line 3"),
            "{e}"
        );
        // Without any threadgroup, the whole-file message stays.
        let e = parse_err("[filesystem]\nlocation=/a\n[end]\n");
        assert_eq!(e, "p.ffsb: the profile has no [threadgroup] section");
    }

    #[test]
    fn a_megabyte_line_is_echoed_as_an_excerpt() {
        let long = "a".repeat(1 << 20);
        let started = std::time::Instant::now();
        let e = parse_err(&V6.replace("read_size=8K", &format!("{long}=1")));
        assert!(e.starts_with("p.ffsb:11: unknown option `aaaa"), "{e}");
        assert!(e.contains(&format!("({} bytes)", (1 << 20) + 2)), "{e}");
        assert!(e.len() < 300, "{} bytes", e.len());
        let e = parse_err(&V6.replace("read_size=8K", &format!("read_size={long}")));
        assert!(e.starts_with("p.ffsb:11: `read_size=aaaa"), "{e}");
        assert!(e.len() < 300, "{} bytes", e.len());
        // Not a measure of speed: the quadratic edit distance on a megabyte would take minutes.
        assert!(started.elapsed() < std::time::Duration::from_secs(60));
    }

    #[test]
    fn sizes_beyond_a_files_largest_are_refused() {
        let e = parse_err(&V6.replace("max_filesize=1MB", "max_filesize=18446744073709551615"));
        assert!(
            e.starts_with("p.ffsb:6: `max_filesize=18446744073709551615`: the size is too large"),
            "{e}"
        );
        let e = parse_err(&V6.replace("max_filesize=1MB", "max_filesize=8589934592G"));
        assert!(e.contains("the size is too large"), "{e}");
        assert_eq!(parse_size("8589934591G", Grammar::V6), Ok(8589934591 << 30));
    }

    #[test]
    fn unknown_options_name_their_line_and_the_closest_option() {
        let e = parse_err(&V6.replace("read_size=8K", "read_sise=8K"));
        assert!(
            e.starts_with("p.ffsb:11: unknown option `read_sise` in [threadgroup]"),
            "{e}"
        );
        assert!(e.contains("did you mean `read_size`?"), "{e}");
    }

    #[test]
    fn options_in_the_wrong_section_say_where_they_belong() {
        let e = parse_err(&V6.replace("read_size=8K", "num_files=8"));
        assert!(e.contains("p.ffsb:11: `num_files` is a [filesystem] option"), "{e}");
    }

    #[test]
    fn malformed_values_name_their_line() {
        let e = parse_err(&V6.replace("num_files=10", "num_files=ten"));
        assert!(e.starts_with("p.ffsb:4: `num_files=ten`: not a whole number"), "{e}");
        let e = parse_err(&V6.replace("time=5", "time=5x"));
        assert!(e.starts_with("p.ffsb:1: "), "{e}");
        let e = parse_err(&V6.replace("location=/mnt/a", "location=/mnt/a\nreuse=2"));
        assert!(e.contains("p.ffsb:4: `reuse=2`: FFSB takes 0 or 1"), "{e}");
    }

    #[test]
    fn levenshtein_counts_edits() {
        assert_eq!(levenshtein("read_sise", "read_size"), 1);
        assert_eq!(levenshtein("", "abc"), 3);
        assert_eq!(levenshtein("kitten", "sitting"), 3);
        assert_eq!(
            closest("nmu_threads", &["num_threads", "op_delay"]),
            Some("num_threads")
        );
        assert_eq!(closest("zzzzzzzz", &["num_threads", "op_delay"]), None);
    }
}
