//! The contract every front-end implements, and the one document a run produces.
//!
//! A front-end (the native TOML and fio-like flags, FFSB, dbench, sysbench fileio, IOzone) reads
//! its input from a command line ([`Tool::parse`]), compiles it to a [`Plan`] (its ordered
//! phases: untimed setup steps and engine [`Workload`]s), runs the plan ([`FrontEnd::execute`])
//! and returns one typed [`Outcome`]: each phase's [`RunResult`], the tool's own figures as
//! [`Metric`]s with the headline marked, its full figures, and the text its original prints.
//!
//! `fslab TOOL ... --json` prints the Outcome as one versioned JSON document; the lab runs each
//! cell's workload that way in a worker process and reads the same type back
//! ([`Outcome::from_json`]). The lab asks a tool how to run a study's workload with
//! [`Tool::calls`] and checks it before anything is formatted with [`Tool::check`].

use crate::{dbench, ffsb, ior, iozone, mdtest, native, sysbench};
use fslab_engine::result::{FirstError, RunResult, Status};
use fslab_engine::{Metric, Progress, Span, Workload};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Version of the [`Outcome`] document's layout; raised on any change a reader would notice.
pub const SCHEMA_VERSION: u32 = 2;

/// A front-end: one of fslab's commands, and the key of a study's `[[workload]]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Tool {
    /// `fslab run`: a native workload file, or fio-like flags.
    Run,
    Ffsb,
    Dbench,
    Sysbench,
    Iozone,
    Ior,
    Mdtest,
}

impl Tool {
    pub const ALL: [Tool; 7] = [
        Tool::Run,
        Tool::Ffsb,
        Tool::Dbench,
        Tool::Sysbench,
        Tool::Iozone,
        Tool::Ior,
        Tool::Mdtest,
    ];

    /// Its command (`fslab dbench`) and its key in a study file.
    pub fn key(self) -> &'static str {
        match self {
            Tool::Run => "run",
            Tool::Ffsb => "ffsb",
            Tool::Dbench => "dbench",
            Tool::Sysbench => "sysbench",
            Tool::Iozone => "iozone",
            Tool::Ior => "ior",
            Tool::Mdtest => "mdtest",
        }
    }

    pub fn from_key(key: &str) -> Option<Tool> {
        Tool::ALL.into_iter().find(|t| t.key() == key)
    }

    /// Reads the tool's command line (the words after `fslab TOOL`): its own options and the
    /// [`Common`] ones.
    pub fn parse(self, args: &[String]) -> Result<(Box<dyn FrontEnd>, Common), Error> {
        match self {
            Tool::Run => native::parse(args),
            Tool::Ffsb => ffsb::frontend::parse(args),
            Tool::Dbench => dbench::frontend::parse(args),
            Tool::Sysbench => sysbench::frontend::parse(args),
            Tool::Iozone => iozone::frontend::parse(args),
            Tool::Ior => ior::frontend::parse(args),
            Tool::Mdtest => mdtest::frontend::parse(args),
        }
    }

    /// Checks a command line as a run would (its input read, compiled and validated), without
    /// running anything: a study checks every cell's workload so before it formats anything.
    pub fn check(self, args: &[String]) -> Result<(), Error> {
        let (frontend, _) = self.parse(args)?;
        frontend.plan().validate()
    }

    /// The fslab commands that make one run of a study's workload, in order.
    pub fn calls(self, request: &Request) -> Vec<Call> {
        match self {
            Tool::Run => native::calls(request),
            Tool::Ffsb => ffsb::frontend::calls(request),
            Tool::Dbench => dbench::frontend::calls(request),
            Tool::Sysbench => sysbench::frontend::calls(request),
            Tool::Iozone => iozone::frontend::calls(request),
            Tool::Ior => ior::frontend::calls(request),
            Tool::Mdtest => mdtest::frontend::calls(request),
        }
    }

    /// The study option that sets the run time, if the tool has one (the quick form caps it).
    pub fn time_option(self) -> Option<&'static str> {
        match self {
            Tool::Iozone | Tool::Ior | Tool::Mdtest => None,
            _ => Some("time"),
        }
    }

    /// About how long one run of a study's workload takes, for estimates: the front-end's own
    /// estimate from its input where it has one (IOzone's file sizes, FFSB's final sync), else
    /// the time option (dbench adds its warm-up of a fifth; sysbench its prepare), else a
    /// guess. A time of 0 is no limit: sysbench's runs bounded by requests are guessed from the
    /// bytes they move.
    pub fn expected_time(self, request: &Request) -> Duration {
        if let Some(t) = self.expected_from_input(request) {
            return t;
        }
        let options = request.options;
        let t = self
            .time_option()
            .and_then(|k| options.iter().find(|(o, _)| o == k))
            .and_then(|(_, v)| seconds(v))
            .filter(|t| !t.is_zero());
        match (self, t) {
            (Tool::Dbench, Some(t)) => t.saturating_add(t / 5),
            (Tool::Dbench, None) => Duration::from_secs(720),
            (Tool::Sysbench, t) => crate::estimate::sysbench(options, t),
            (_, Some(t)) => t,
            (_, None) => Duration::from_secs(30),
        }
    }

    /// The front-ends' own estimates, from their measured calls read as a run reads them:
    /// IOzone's and FFSB's, whose inputs are small to read (dbench's loadfile is not read for
    /// this). `None` when the tool has none or the input does not parse.
    fn expected_from_input(self, request: &Request) -> Option<Duration> {
        if !matches!(self, Tool::Iozone | Tool::Ffsb) {
            return None;
        }
        let mut total = Duration::ZERO;
        for call in self.calls(request).iter().filter(|c| c.role == Role::Measured) {
            let (frontend, _) = self.parse(&call.args[1..]).ok()?;
            total = total.saturating_add(frontend.expected()?);
        }
        Some(total)
    }

    /// Whether the tool prints lines of its own while it runs (dbench's per-second lines,
    /// IOzone's results as each sub-test ends), so that a progress bar would be in their way.
    pub fn prints_as_it_runs(self) -> bool {
        matches!(
            self,
            Tool::Dbench | Tool::Iozone | Tool::Sysbench | Tool::Ior | Tool::Mdtest
        )
    }
}

impl std::fmt::Display for Tool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.key())
    }
}

/// "60", "60s", "2m" as a duration.
pub fn seconds(v: &str) -> Option<Duration> {
    v.parse::<Span>().ok().map(|s| s.0)
}

/// The flags every front-end's command takes, declared once.
#[derive(Debug, Clone, Default, PartialEq, Eq, clap::Args)]
pub struct Common {
    /// Directory to run in; everything the run touches stays beneath it. Default: dbench,
    /// sysbench and iozone use the current directory, ffsb the profile's locations, run a
    /// temporary directory it removes afterwards.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Print the outcome as one JSON document on stdout (the tool's figures, each engine run's
    /// full result, and the text the original prints).
    #[arg(long)]
    pub json: bool,
    /// Print the outcome in another layout instead: `json` is --json; `fio-json` is fio 3.x's
    /// JSON (json+, with latency bins), which fio's own tools read.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub output_format: Option<OutputFormat>,
    /// Print the workload as fslab will run it (native TOML) and exit.
    #[arg(long)]
    pub explain: bool,
    /// Check the input as a run would, print nothing and exit (a study checks each workload
    /// so before it formats anything).
    #[arg(long, conflicts_with = "explain")]
    pub check: bool,
    /// After the untimed setup, sync and drop the page cache, dentries and inodes (root only),
    /// so that the measured phase starts with a cold cache.
    #[arg(long)]
    pub drop_caches: bool,
    /// What resolving `--dir` found ([`Common::resolve_dir`]): the symlink it led through and the
    /// directory fslab runs in, for stderr.
    #[arg(skip)]
    pub dir_note: Option<String>,
}

/// What `--output-format` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    /// fslab's outcome document (as --json).
    Json,
    /// fio 3.x's JSON layout, with json+'s latency bins.
    FioJson,
}

impl Common {
    /// Whether the outcome is printed as a JSON document rather than as text.
    pub fn prints_json(&self) -> bool {
        self.json || self.output_format.is_some()
    }

    /// Takes the common flags out of a command line whose tool reads the rest itself (sysbench's
    /// `--key=value` options and IOzone's `-i 0` cannot be declared to clap): `--dir DIR`,
    /// `--dir=DIR`, `--json`... as [`Common`] declares them.
    pub fn take(args: &[String]) -> Result<(Common, Vec<String>), Error> {
        use clap::{Args, FromArgMatches};
        let cmd = Common::augment_args(
            clap::Command::new("fslab")
                .no_binary_name(true)
                .args_override_self(true),
        );
        let mut mine: Vec<String> = Vec::new();
        let mut rest = Vec::new();
        let mut words = args.iter();
        while let Some(word) = words.next() {
            let (name, inline) = match word.split_once('=') {
                Some((n, v)) if n.starts_with("--") => (n, Some(v)),
                _ => (word.as_str(), None),
            };
            let long = name.strip_prefix("--");
            let short = name
                .strip_prefix('-')
                .filter(|s| s.len() == 1)
                .and_then(|s| s.chars().next());
            let arg = cmd.get_arguments().find(|a| match (long, short) {
                (Some(l), _) => a.get_long() == Some(l) || a.get_all_aliases().is_some_and(|al| al.contains(&l)),
                (None, Some(c)) => a.get_short() == Some(c),
                (None, None) => false,
            });
            let Some(arg) = arg else {
                rest.push(word.clone());
                continue;
            };
            mine.push(word.clone());
            if inline.is_none() && arg.get_action().takes_values() {
                let value = words
                    .next()
                    .ok_or_else(|| Error::input(format!("{word} needs a value")))?;
                mine.push(value.clone());
            }
        }
        let matches = cmd
            .try_get_matches_from(&mine)
            .map_err(|e| Error::input(e.to_string()))?;
        let common = Common::from_arg_matches(&matches).map_err(|e| Error::input(e.to_string()))?;
        Ok((common, rest))
    }

    /// Resolves `--dir` once: a directory named through a symlink is replaced by the real one
    /// (everything then stays beneath it), and [`dir_note`](Self::dir_note) says so.
    pub fn resolve_dir(&mut self) {
        if let Some(dir) = &self.dir {
            let (real, note) = real_dir("--dir", dir);
            self.dir = Some(real);
            self.dir_note = note.or(self.dir_note.take());
        }
    }

    /// These flags as words, for a worker's command line.
    fn words(&self) -> Vec<String> {
        let mut w = Vec::new();
        if let Some(d) = &self.dir {
            w.extend(["--dir".to_string(), d.display().to_string()]);
        }
        for (on, flag) in [
            (self.json, "--json"),
            (self.explain, "--explain"),
            (self.check, "--check"),
            (self.drop_caches, "--drop-caches"),
        ] {
            if on {
                w.push(flag.to_string());
            }
        }
        if let Some(f) = self.output_format {
            w.push(format!(
                "--output-format={}",
                clap::ValueEnum::to_possible_value(&f)
                    .expect("every format has a name")
                    .get_name()
            ));
        }
        w
    }
}

/// The directory `path` (named by option `flag`) resolved once, and when it is or passes through a
/// symlink, a note saying where fslab will run instead. A path that cannot be resolved stays as
/// it is, for the front-end's own error.
pub fn real_dir(flag: &str, path: &Path) -> (PathBuf, Option<String>) {
    match fslab_engine::confine::resolve_dir(path) {
        Ok((real, Some(link))) => {
            let note = format!(
                "{flag} {} leads through the symlink {}: fslab runs in {} and keeps everything beneath it",
                path.display(),
                link.display(),
                real.display()
            );
            (real, Some(note))
        }
        _ => (path.to_path_buf(), None),
    }
}

/// Parses `args` (after `fslab TOOL`) with a front-end's clap arguments.
pub(crate) fn parse_clap<A: clap::Parser>(tool: Tool, args: &[String]) -> Result<A, Error> {
    A::try_parse_from(std::iter::once(format!("fslab {tool}")).chain(args.iter().cloned()))
        .map_err(|e| Error::input(e.to_string().trim_end().trim_start_matches("error: ").to_string()))
}

/// What a front-end will run, in order: the contract's plan.
#[derive(Debug)]
pub struct Plan<'a> {
    pub tool: Tool,
    pub phases: Vec<Phase<'a>>,
}

/// One step of a plan.
#[derive(Debug)]
pub enum Phase<'a> {
    /// Untimed work the tool does before or between its runs: FFSB's aging and callout,
    /// sysbench's prepare, IOzone's pauses.
    Setup { name: String, what: String },
    /// An engine run.
    Run { name: String, workload: &'a Workload },
}

impl Plan<'_> {
    /// Checks every workload of the plan as the engine will.
    pub fn validate(&self) -> Result<(), Error> {
        for phase in &self.phases {
            if let Phase::Run { name, workload } = phase {
                workload
                    .validate()
                    .map_err(|e| Error::input(format!("{} ({name}): {e}", workload.name)))?;
            }
        }
        Ok(())
    }
}

/// One front-end with its input read: the contract.
pub trait FrontEnd {
    fn tool(&self) -> Tool;

    /// What it will run.
    fn plan(&self) -> Plan<'_>;

    /// The plan as native TOML (`--explain`), with what runs around the workloads as comments.
    fn explain(&self) -> String;

    /// Where fslab does differently from the original with this input, for stderr.
    fn notes(&self) -> Vec<String> {
        Vec::new()
    }

    /// About how long a run of this input takes, where its input says more than the study's
    /// options do (the bytes it must move: [`crate::estimate`]); `None` leaves the estimate to
    /// [`Tool::expected_time`]'s reading of the options.
    fn expected(&self) -> Option<Duration> {
        None
    }

    /// Runs the plan; the text the original prints goes to `ctx` as it becomes known.
    fn execute(&mut self, ctx: &mut Context) -> Result<Outcome, Error>;
}

/// What a run is given besides its input: where to run, where its text and progress go, and the
/// flag that stops it early (Ctrl-C, a closed output).
pub struct Context<'a> {
    pub dir: Option<PathBuf>,
    pub drop_caches: bool,
    /// Where a run that lays out files counts them, for a progress bar (none: not counted).
    pub layout: Option<Arc<fslab_engine::fileset::Layout>>,
    /// The job this run is one rank of ([`Alone`](crate::ranks::Alone) unless set).
    pub ranks: Arc<dyn crate::ranks::Ranks>,
    /// What this job's engine runs leave for the outcome (each rank's figures).
    log: Arc<std::sync::Mutex<crate::job::Log>>,
    interrupt: Arc<AtomicBool>,
    out: &'a mut dyn FnMut(&str),
    progress: &'a mut dyn FnMut(&str, &Progress),
    text: String,
    notes: Vec<String>,
}

impl<'a> Context<'a> {
    /// `out` takes the original's text as it is written (stdout, or nothing with `--json`);
    /// `progress` the engine's once-a-second progress, named by phase (for a progress bar).
    /// `interrupt`, once set, stops the engine run under way and any after it.
    pub fn new(
        common: &Common,
        interrupt: Arc<AtomicBool>,
        out: &'a mut dyn FnMut(&str),
        progress: &'a mut dyn FnMut(&str, &Progress),
    ) -> Context<'a> {
        Context {
            dir: common.dir.clone(),
            drop_caches: common.drop_caches,
            layout: None,
            ranks: Arc::new(crate::ranks::Alone),
            log: Arc::default(),
            interrupt,
            out,
            progress,
            text: String::new(),
            notes: Vec::new(),
        }
    }

    /// The flag that stops the run, for the engine's [`RunOptions`](fslab_engine::RunOptions).
    pub fn interrupt(&self) -> Option<Arc<AtomicBool>> {
        Some(self.interrupt.clone())
    }

    /// Whether the run was stopped from outside.
    pub fn interrupted(&self) -> bool {
        self.interrupt.load(Ordering::Relaxed)
    }

    /// Writes text as the original prints it (only the job's leading rank prints it; every rank
    /// keeps it for [`Outcome::report`]).
    pub fn print(&mut self, text: &str) {
        if self.ranks.leads() {
            (self.out)(text);
        }
        self.text.push_str(text);
    }

    /// The job this run is part of, for [`job::run`](crate::job::run).
    pub fn job(&self) -> crate::job::Job {
        crate::job::Job {
            ranks: self.ranks.clone(),
            log: self.log.clone(),
        }
    }

    pub(crate) fn job_log(&self) -> &std::sync::Mutex<crate::job::Log> {
        &self.log
    }

    /// Reports the engine's progress in phase `phase`.
    pub fn progress(&mut self, phase: &str, p: &Progress) {
        (self.progress)(phase, p);
    }

    /// Something the user should know about the run that is not the original's text (it goes
    /// to stderr once the run ends).
    pub fn note(&mut self, text: impl Into<String>) {
        self.notes.push(text.into());
    }

    /// The notes so far.
    pub fn take_notes(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notes)
    }

    /// Everything printed so far, for [`Outcome::report`].
    pub fn take_text(&mut self) -> String {
        std::mem::take(&mut self.text)
    }
}

/// One engine run of a tool's run, named (`run`, or IOzone's `initial writers`...).
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PhaseResult {
    pub name: String,
    pub result: RunResult,
}

/// Everything one run of a front-end produced: what `--json` prints and the lab stores.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Outcome {
    pub schema_version: u32,
    pub fslab_version: String,
    pub tool: Tool,
    /// Each engine run, in order. None for commands that measure nothing (sysbench's prepare
    /// and cleanup, FFSB with time = 0).
    pub phases: Vec<PhaseResult>,
    /// The tool's own figures in its units, then fslab's; the one a report leads with marked
    /// `headline`.
    pub metrics: Vec<Metric>,
    /// The tool's full figures (dbench's operation table, FFSB's tables, IOzone's sub-tests),
    /// as its module defines them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub figures: Option<serde_json::Value>,
    /// The text the original prints for this run (empty for native runs, which have no
    /// original).
    #[serde(default)]
    pub report: String,
    /// Stopped from outside (Ctrl-C): the figures are those of a partial run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// With several ranks (under MPI): what each rank did, in rank order. Empty alone.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ranks: Vec<crate::job::RankFigures>,
    /// With several ranks: each host, its ranks and its CPU split. Empty alone.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<crate::job::HostFigures>,
}

/// A worker's document that the lab cannot use.
#[derive(Debug, thiserror::Error)]
pub enum OutcomeError {
    #[error("the worker's output is not an fslab outcome: {0}")]
    Json(#[from] serde_json::Error),
    #[error("the worker's outcome is version {found}; this fslab reads version {SCHEMA_VERSION}")]
    Version { found: u32 },
}

impl Outcome {
    /// An outcome with nothing measured yet.
    pub fn new(tool: Tool) -> Outcome {
        Outcome {
            schema_version: SCHEMA_VERSION,
            fslab_version: env!("CARGO_PKG_VERSION").to_string(),
            tool,
            phases: Vec::new(),
            metrics: Vec::new(),
            figures: None,
            report: String::new(),
            interrupted: false,
            ranks: Vec::new(),
            hosts: Vec::new(),
        }
    }

    /// The JSON Schema of the `--json` document (docs/schema/outcome.schema.json).
    pub fn schema() -> String {
        let schema = schemars::schema_for!(Outcome);
        let mut text = serde_json::to_string_pretty(&schema).expect("a schema serialises");
        text.push('\n');
        text
    }

    /// Reads a worker's `--json` document.
    pub fn from_json(text: &str) -> Result<Outcome, OutcomeError> {
        #[derive(Deserialize)]
        struct Version {
            schema_version: u32,
        }
        let v: Version = serde_json::from_str(text)?;
        if v.schema_version != SCHEMA_VERSION {
            return Err(OutcomeError::Version {
                found: v.schema_version,
            });
        }
        Ok(serde_json::from_str(text)?)
    }

    /// The document `--json` prints.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("an outcome always serialises")
    }

    /// Adds an engine run.
    pub fn push(&mut self, name: &str, result: RunResult) {
        self.phases.push(PhaseResult {
            name: name.to_string(),
            result,
        });
    }

    /// Sets the tool's own figures (the headline first), then adds fslab's own figures of the
    /// phase named `run` (or the only one) that the tool does not name itself.
    pub fn set_metrics(&mut self, mut tools: Vec<Metric>) {
        if let Some(first) = tools.first_mut() {
            first.headline = true;
        }
        let engine = match self.phases.as_slice() {
            [only] => only.result.metrics(),
            phases => phases
                .iter()
                .find(|p| p.name == "run")
                .map(|p| p.result.metrics())
                .unwrap_or_default(),
        };
        let headline = tools.is_empty();
        for (i, m) in engine.into_iter().enumerate() {
            if tools.iter().all(|t| t.name != m.name) {
                tools.push(if headline && i == 0 { m.headline() } else { m });
            }
        }
        self.metrics = tools;
    }

    /// Failed when any engine run failed.
    pub fn status(&self) -> Status {
        if self.phases.iter().any(|p| p.result.status == Status::Failed) {
            Status::Failed
        } else {
            Status::Ok
        }
    }

    /// The first error of the first engine run that had one.
    pub fn first_error(&self) -> Option<&FirstError> {
        self.phases.iter().find_map(|p| p.result.first_error.as_ref())
    }

    /// The figure a report leads with.
    pub fn headline(&self) -> Option<&Metric> {
        self.metrics.iter().find(|m| m.headline)
    }
}

/// What went wrong before or while running, and whose fault it is. It reads as the error it
/// wraps (whose own causes follow it in a chain).
#[derive(Debug)]
pub struct Error {
    pub kind: ErrorKind,
    error: Box<dyn std::error::Error + Send + Sync>,
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.kind {
            // Bad input is often echoed back: a megabyte-long option stays a readable message.
            ErrorKind::Input => f.write_str(&crate::text::shorten(&self.error.to_string())),
            _ => self.error.fmt(f),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.error.source()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Bad input or usage: a profile, loadfile or option (exit 2).
    Input,
    /// The machine lacks something (a tool, a file it ships, root) (exit 3).
    Environment,
    /// The run itself failed (exit 1).
    Run,
}

impl Error {
    pub fn new(kind: ErrorKind, error: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Error {
        Error {
            kind,
            error: error.into(),
        }
    }

    pub fn input(error: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Error {
        Error::new(ErrorKind::Input, error)
    }

    pub fn environment(error: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Error {
        Error::new(ErrorKind::Environment, error)
    }

    pub fn run(error: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Error {
        Error::new(ErrorKind::Run, error)
    }

    /// The same error with `context` before its message.
    pub fn context(self, context: impl std::fmt::Display) -> Error {
        Error::new(self.kind, format!("{context}: {}", self.error))
    }
}

impl From<fslab_engine::RunError> for Error {
    /// An engine error is bad input (a workload that is not valid, a path that escapes the run
    /// directory, files fslab did not make), the machine's (dropping caches needs root), or a
    /// failed run.
    fn from(e: fslab_engine::RunError) -> Error {
        use fslab_engine::confine::ConfineError;
        use fslab_engine::fileset::SetupError;
        use fslab_engine::RunError;
        let bad_path = |c: &ConfineError| {
            matches!(
                c,
                ConfineError::Escapes { .. } | ConfineError::RunDir { .. } | ConfineError::Symlink { .. }
            )
        };
        let kind = match &e {
            RunError::Invalid(_) => ErrorKind::Input,
            RunError::Confine(c) | RunError::Setup(SetupError::Confine(c)) if bad_path(c) => ErrorKind::Input,
            RunError::Setup(SetupError::Foreign { .. } | SetupError::Occupied { .. } | SetupError::Linked { .. }) => {
                ErrorKind::Input
            }
            RunError::DropCaches(_) | RunError::Workers { .. } | RunError::Shared(_) => ErrorKind::Environment,
            RunError::Confine(_) | RunError::Setup(_) => ErrorKind::Run,
        };
        Error::new(kind, e)
    }
}

/// A study's workload, as the lab asks a tool to run it.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    /// The workload file or profile.
    pub main: Option<&'a Path>,
    /// One value per option, as the study names them (`clients`, `time`, `file-test-mode`).
    pub options: &'a [(String, String)],
    /// Extra arguments as written (IOzone's `-i 0 -i 1`).
    pub args: &'a [String],
    /// The mounted filesystem to run in.
    pub dir: &'a Path,
    /// Drop caches after the untimed setup, before the measured phase.
    pub drop_caches: bool,
}

impl Request<'_> {
    /// The common flags of a measured call: `--dir`, `--json`, `--drop-caches`.
    pub(crate) fn measured(&self) -> Vec<String> {
        Common {
            dir: Some(self.dir.to_path_buf()),
            json: true,
            drop_caches: self.drop_caches,
            ..Common::default()
        }
        .words()
    }

    /// The study's `time` as whole seconds, as the classic tools take it ("60s", "2m" → "60",
    /// "120"); other options as written.
    pub(crate) fn options_in_seconds(&self) -> Vec<(String, String)> {
        self.options
            .iter()
            .map(|(k, v)| match seconds(v) {
                Some(d) if k == "time" => (k.clone(), d.as_secs_f64().ceil().to_string()),
                _ => (k.clone(), v.clone()),
            })
            .collect()
    }
}

/// One fslab command of a study's run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    pub role: Role,
    /// The words after `fslab`: `dbench -D /mnt/x --json -t 60 4`.
    pub args: Vec<String>,
}

/// What a call is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Untimed setup before the measured call (sysbench's prepare).
    Setup,
    /// The run the lab keeps: it prints the [`Outcome`].
    Measured,
    /// Removes what the setup made (sysbench's cleanup).
    Cleanup,
}

impl Call {
    pub fn measured(args: Vec<String>) -> Call {
        Call {
            role: Role::Measured,
            args,
        }
    }

    /// The command line as a user would type it.
    pub fn command_line(&self) -> String {
        std::iter::once("fslab")
            .chain(self.args.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Option words in a tool's syntax.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Style {
    /// `--key value`; `--key` for true, nothing for false.
    Long,
    /// One-letter keys as `-k value`, others `--key value` (dbench, IOzone).
    Short,
    /// `--key=value` (sysbench).
    Equals,
}

/// An option as words in `style`.
pub(crate) fn option_words(key: &str, value: &str, style: Style) -> Vec<String> {
    let flag = if key.len() == 1 && style == Style::Short {
        format!("-{key}")
    } else {
        format!("--{key}")
    };
    match (style, value) {
        (Style::Equals, _) => vec![format!("{flag}={value}")],
        (_, "true") => vec![flag],
        (_, "false") => vec![],
        _ => vec![flag, value.to_string()],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn input_errors_echo_a_long_word_as_an_excerpt() {
        let long = "a".repeat(100_000);
        for (tool, args) in [
            (
                Tool::Sysbench,
                vec!["fileio".to_string(), format!("--file-test-mode={long}"), "run".into()],
            ),
            (Tool::Sysbench, vec!["fileio".to_string(), long.clone()]),
            (Tool::Iozone, vec!["-s".to_string(), long.clone()]),
            (Tool::Run, vec!["--op".to_string(), long.clone()]),
        ] {
            let e = match tool.parse(&args) {
                Err(e) => e,
                Ok(_) => panic!("{tool} took {} bytes of nonsense", long.len()),
            };
            let m = e.to_string();
            assert!(m.len() < 1000, "{tool}: {} bytes: {}", m.len(), &m[..200]);
            assert!(m.contains("aaaa…aaaa") && m.contains(" bytes)"), "{tool}: {m}");
        }
    }

    #[test]
    fn common_flags_are_taken_out_of_a_tool_s_own_words() {
        let (c, rest) = Common::take(&words("--file-test-mode=rndrw --dir /mnt/x --json fileio --check run")).unwrap();
        assert_eq!(c.dir.as_deref(), Some(Path::new("/mnt/x")));
        assert!(c.json && c.check && !c.explain && !c.drop_caches);
        assert_eq!(rest, words("--file-test-mode=rndrw fileio run"));
        let (c, rest) = Common::take(&words("-i 0 --dir=/d --dir /e --drop-caches -t 4 -s 1m -D")).unwrap();
        assert_eq!(c.dir.as_deref(), Some(Path::new("/e")), "the last --dir wins");
        assert!(c.drop_caches);
        assert_eq!(
            rest,
            words("-i 0 -t 4 -s 1m -D"),
            "values of two letters, and IOzone's -D, are the tool's"
        );
        let e = Common::take(&words("-i 0 --dir")).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Input);
        assert!(e.to_string().contains("--dir needs a value"), "{e}");
    }

    #[test]
    fn the_common_flags_round_trip_through_words() {
        let c = Common {
            dir: Some(PathBuf::from("/mnt/x")),
            json: true,
            drop_caches: true,
            ..Common::default()
        };
        let (back, rest) = Common::take(&c.words()).unwrap();
        assert_eq!(back, c);
        assert!(rest.is_empty());
    }

    #[test]
    fn the_tool_s_figures_lead_and_fslab_s_follow_without_repeating_a_name() {
        let mut o = Outcome::new(Tool::Sysbench);
        o.push("run", fslab_testkit::tiny_result());
        o.set_metrics(vec![
            Metric::new("throughput", 7.0, "MiB/s"),
            Metric::new("reads/s", 3.0, "/s"),
        ]);
        let names: Vec<&str> = o.metrics.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["throughput", "reads/s", "ops/s", "read MiB/s", "write MiB/s"]);
        assert_eq!(
            o.headline().map(|m| m.value),
            Some(7.0),
            "the tool's own throughput leads"
        );
        assert_eq!(o.metrics.iter().filter(|m| m.headline).count(), 1);

        let mut native = Outcome::new(Tool::Run);
        native.push("run", fslab_testkit::tiny_result());
        native.set_metrics(Vec::new());
        assert_eq!(native.headline().map(|m| m.name.as_str()), Some("throughput"));
    }

    #[test]
    fn an_outcome_reads_back_as_it_was_printed_and_another_version_is_refused() {
        let mut o = Outcome::new(Tool::Dbench);
        o.push("run", fslab_testkit::tiny_result());
        o.set_metrics(vec![Metric::new("Throughput", 12.5, "MB/sec")]);
        o.report = "Throughput 12.500 MB/sec\n".into();
        let back = Outcome::from_json(&o.to_json()).unwrap();
        assert_eq!(back.tool, Tool::Dbench);
        assert_eq!(back.metrics, o.metrics);
        assert_eq!(back.report, o.report);
        let old = o
            .to_json()
            .replacen("\"schema_version\": 2", "\"schema_version\": 1", 1);
        let e = Outcome::from_json(&old).unwrap_err().to_string();
        assert!(e.contains("version 1"), "{e}");
        assert!(Outcome::from_json("not json").is_err());
    }

    fn request<'a>(options: &'a [(String, String)], args: &'a [String], main: Option<&'a Path>) -> Request<'a> {
        Request {
            main,
            options,
            args,
            dir: Path::new("/mnt/x"),
            drop_caches: true,
        }
    }

    fn opts(o: &[(&str, &str)]) -> Vec<(String, String)> {
        o.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    fn lines(calls: &[Call]) -> Vec<String> {
        calls.iter().map(|c| c.args.join(" ")).collect()
    }

    #[test]
    fn each_tool_writes_a_study_s_options_in_its_own_syntax() {
        let none: Vec<String> = Vec::new();
        let d = Tool::Dbench.calls(&request(
            &opts(&[("clients", "4"), ("time", "1m"), ("sync", "true")]),
            &none,
            None,
        ));
        assert_eq!(lines(&d), ["dbench --dir /mnt/x --json --drop-caches -t 60 --sync 4"]);
        let s = Tool::Sysbench.calls(&request(
            &opts(&[("file-test-mode", "rndrd"), ("threads", "2")]),
            &none,
            None,
        ));
        let roles: Vec<Role> = s.iter().map(|c| c.role).collect();
        assert_eq!(roles, [Role::Setup, Role::Measured, Role::Cleanup]);
        assert_eq!(
            lines(&s),
            [
                "sysbench fileio --file-test-mode=rndrd --threads=2 --dir /mnt/x prepare",
                "sysbench fileio --file-test-mode=rndrd --threads=2 --dir /mnt/x --json --drop-caches run",
                "sysbench fileio --file-test-mode=rndrd --threads=2 --dir /mnt/x cleanup",
            ]
        );
        let extra = words("-i 0 -e");
        let i = Tool::Iozone.calls(&request(&opts(&[("threads", "16"), ("r", "64k")]), &extra, None));
        assert_eq!(
            lines(&i),
            ["iozone --dir /mnt/x --json --drop-caches -i 0 -e -t 16 -r 64k"]
        );
        let profile = Path::new("/p/x.ffsb");
        let f = Tool::Ffsb.calls(&request(
            &opts(&[("threads", "4"), ("time", "10s")]),
            &none,
            Some(profile),
        ));
        assert_eq!(
            lines(&f),
            ["ffsb /p/x.ffsb --dir /mnt/x --json --drop-caches --threads 4 --time 10"]
        );
        let r = Tool::Run.calls(&request(
            &opts(&[("time", "8s"), ("ramp", "2s")]),
            &none,
            Some(Path::new("/w.toml")),
        ));
        assert_eq!(
            lines(&r),
            ["run /w.toml --dir /mnt/x --json --drop-caches --time 8s --ramp 2s"]
        );
    }

    #[test]
    fn every_tool_reads_back_the_calls_it_writes() {
        let none: Vec<String> = Vec::new();
        let calls = Tool::Sysbench.calls(&request(
            &opts(&[("file-test-mode", "rndrw"), ("time", "8")]),
            &none,
            None,
        ));
        for call in calls {
            let (_, common) = Tool::Sysbench.parse(&call.args[1..]).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(common.dir.as_deref(), Some(Path::new("/mnt/x")));
            assert_eq!(common.json, call.role == Role::Measured);
        }
        let d = Tool::Run.calls(&request(
            &opts(&[("op", "randread"), ("size", "1m"), ("time", "1s")]),
            &none,
            None,
        ));
        let (frontend, common) = Tool::Run.parse(&d[0].args[1..]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(frontend.tool(), Tool::Run);
        assert!(common.json && common.drop_caches);
        assert!(Tool::Run.check(&d[0].args[1..]).is_ok());
        let e = Tool::Run.check(&words("--op randread --bs 3x")).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Input);
        assert!(e.to_string().contains("--bs"), "{e}");
    }

    /// [`Tool::expected_time`] of a study's workload with these options and arguments.
    fn expected(tool: Tool, options: &[(&str, &str)], args: &str, main: Option<&Path>) -> Duration {
        let (options, args) = (opts(options), words(args));
        let dir = std::env::temp_dir();
        tool.expected_time(&Request {
            main,
            options: &options,
            args: &args,
            dir: &dir,
            drop_caches: false,
        })
    }

    #[test]
    fn a_run_s_expected_time_is_its_time_and_a_zero_time_is_unbounded() {
        // sysbench: its prepare (2 GiB by default: 4 s at the estimate's 512 MiB/s), then its
        // time, or with none the blocks its events move, or with neither a guess.
        let sysbench = |o: &[(&str, &str)]| expected(Tool::Sysbench, o, "", None);
        assert_eq!(sysbench(&[("time", "60")]), Duration::from_secs(64));
        assert_eq!(
            sysbench(&[("time", "60"), ("file-total-size", "32M")]),
            Duration::from_micros(60_062_500)
        );
        assert_eq!(
            sysbench(&[("time", "0")]),
            Duration::from_secs(14),
            "time 0 is no limit: the guess, not no time"
        );
        let seq = [("time", "0"), ("events", "131072"), ("file-total-size", "2G")];
        assert_eq!(sysbench(&seq), Duration::from_secs(9));
        assert_eq!(
            sysbench(&[("time", "0"), ("file-block-size", "nonsense")]),
            Duration::from_secs(10),
            "options that do not parse: the guess"
        );
        assert_eq!(
            expected(Tool::Dbench, &[("time", "60")], "", None),
            Duration::from_secs(72)
        );
    }

    #[test]
    fn an_iozone_run_is_estimated_from_its_files() {
        use crate::estimate::{IOZONE_READ_BYTES_PER_S, IOZONE_WRITE_BYTES_PER_S};
        let secs = |bytes: f64, speed: f64| bytes / speed;
        let gib = 1024.0 * 1024.0 * 1024.0;
        // Seed 004's sequential run: 16 children × 128 MiB = 2 GiB per sub-test; the initial
        // writers and rewriters wait for the disk (a sync ends each sub-test), the readers and
        // re-readers read; a pause of 2 s after each sub-test but the last.
        let seq = expected(
            Tool::Iozone,
            &[("threads", "16"), ("size", "128m"), ("record", "64k")],
            "-i 0 -i 1 -C -e -R -w",
            None,
        );
        let want = 2.0 * secs(2.0 * gib, IOZONE_WRITE_BYTES_PER_S)
            + 2.0 * secs(2.0 * gib, IOZONE_READ_BYTES_PER_S)
            + 3.0 * 2.0
            + 4.0 * 0.005;
        assert!((seq.as_secs_f64() - want).abs() < 1e-3, "{seq:?} against {want} s");
        // Twice the children move twice the bytes; without pauses only the bytes are left.
        let wide = expected(
            Tool::Iozone,
            &[("threads", "32"), ("size", "128m"), ("record", "64k")],
            "-i 0 -i 1 -C -e -R -w --pause 0",
            None,
        );
        let want_wide = 2.0 * (want - 6.0 - 0.02) + 0.02;
        assert!(
            (wide.as_secs_f64() - want_wide).abs() < 1e-3,
            "{wide:?} against {want_wide} s"
        );
        // Options that do not parse (which the preflight refuses): the guess.
        assert_eq!(
            expected(Tool::Iozone, &[], "-i nonsense", None),
            Duration::from_secs(30)
        );
    }

    #[test]
    fn an_ffsb_run_is_estimated_from_its_profile_with_the_final_sync_in_its_time() {
        let profiles = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../profiles");
        let large = profiles.join("large-seqwrite.ffsb");
        let run = |threads: &str| {
            expected(
                Tool::Ffsb,
                &[("filesize", "128M"), ("threads", threads), ("time", "5")],
                "",
                Some(&large),
            )
        };
        // Create only: the final sync, in FFSB's time, writes what the 5 s left dirty, and 64
        // threads each finish a 128 MiB file (8 GiB) whatever the time. The model's figures
        // are the estimate module's tests; here, that the study's options reach it.
        assert!(run("4") > Duration::from_secs(5), "{:?}", run("4"));
        assert!(run("64") > run("4"), "{:?} against {:?}", run("64"), run("4"));
        // A profile that cannot be read: the study's time.
        assert_eq!(
            expected(Tool::Ffsb, &[("time", "20")], "", Some(Path::new("/nonexistent.ffsb"))),
            Duration::from_secs(20)
        );
    }

    #[test]
    fn option_words_in_each_style() {
        assert_eq!(option_words("t", "60", Style::Short), ["-t", "60"]);
        assert_eq!(option_words("sync", "true", Style::Short), ["--sync"]);
        assert_eq!(option_words("sync", "false", Style::Long), Vec::<String>::new());
        assert_eq!(option_words("threads", "4", Style::Long), ["--threads", "4"]);
        assert_eq!(
            option_words("file-test-mode", "rndrd", Style::Equals),
            ["--file-test-mode=rndrd"]
        );
    }
}
