//! What a workload must be beyond what serde checks: names that refer to something, sizes and
//! counts in range, paths that stay beneath the run directory, and only the fields that apply to
//! each operation.

use super::{
    AioOpts, Arrivals, Data, EngineKind, Fileset, Group, OpKind, OpSpec, OpenMode, Scope, SizeDist, Taskrun, UringOpts,
    Workload,
};
use crate::confine;
use crate::marker;
use crate::units::Bytes;
use std::path::Path;

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

impl Workload {
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
        self.check_ranges()?;
        for (i, fs) in self.filesets.iter().enumerate() {
            let here = |k| vec![Key("fileset"), Index(i), Key(k)];
            if self.filesets[..i].iter().any(|o| o.name == fs.name) {
                return bad(
                    here("name"),
                    format!("a second fileset is named `{}`", crate::input::excerpt(&fs.name)),
                );
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
                    return bad(
                        here("root"),
                        format!("root `{}` must be an absolute directory", crate::input::excerpt(root)),
                    );
                }
            }
            let plain = |p: &str| !p.is_empty() && !p.contains('/') && !p.starts_with('.') && p != "m";
            // The same name for files and directories is the fault of the one not left at its
            // default.
            let dir_default = fs.dir_prefix == "d";
            if !plain(&fs.prefix) || (fs.prefix == fs.dir_prefix && dir_default) {
                return bad(
                    here("prefix"),
                    format!(
                        "prefix `{}` cannot name files (it must be a plain name other than `m` and the directories' `{}`)",
                        crate::input::excerpt(&fs.prefix),
                        crate::input::excerpt(&fs.dir_prefix)
                    ),
                );
            }
            if !plain(&fs.dir_prefix) || fs.prefix == fs.dir_prefix {
                return bad(
                    here("dir_prefix"),
                    format!(
                        "dir_prefix `{}` cannot name directories (it must be a plain name other than `m` and the files' `{}`)",
                        crate::input::excerpt(&fs.dir_prefix),
                        crate::input::excerpt(&fs.prefix)
                    ),
                );
            }
            // A name is written into a fixed buffer on every operation's path (`NameBuf`).
            for (field, p) in [("prefix", &fs.prefix), ("dir_prefix", &fs.dir_prefix)] {
                if p.len() > MAX_PREFIX || p.chars().any(char::is_control) {
                    return bad(
                        here(field),
                        format!(
                            "{field} `{}` is {} bytes long{}: a prefix is at most {MAX_PREFIX} bytes, without control characters",
                            crate::input::excerpt(p),
                            p.len(),
                            if p.chars().any(char::is_control) { " and holds a control character" } else { "" }
                        ),
                    );
                }
            }
            if !fs.names.is_empty() {
                check_names(self, i).map_err(|(field, message)| Invalid {
                    path: here(field),
                    message,
                })?;
            }
            if fs.mode.is_some_and(|m| m > 0o7777) {
                return bad(here("mode"), "mode is a file's permission bits, at most 0o7777".into());
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
                return bad(
                    here("name"),
                    format!("a second group is named `{}`", crate::input::excerpt(&g.name)),
                );
            }
            if g.threads == 0 {
                return bad(here("threads"), "threads must be at least 1".into());
            }
            let all = self.total_threads();
            if all > MAX_THREADS {
                return bad(
                    here("threads"),
                    format!("the workload asks for {all} threads in all; fslab runs at most {MAX_THREADS} (as dbench's clients)"),
                );
            }
            let mut sets = Vec::new();
            for name in &g.fileset.0 {
                let Some(fs) = self.fileset(name) else {
                    let known: Vec<_> = self.filesets.iter().map(|f| f.name.as_str()).collect();
                    return bad(
                        here("fileset"),
                        format!(
                            "no fileset is named `{}` (the filesets are: {})",
                            crate::input::excerpt(name),
                            crate::input::excerpt(&known.join(", "))
                        ),
                    );
                };
                sets.push(fs);
            }
            if sets.is_empty() && g.script.is_none() {
                return bad(
                    here("fileset"),
                    format!("group `{}` names no fileset", crate::input::excerpt(&g.name)),
                );
            }
            if g.fsync_every == Some(0) {
                return bad(here("fsync_every"), "fsync_every must be at least 1".into());
            }
            if g.iodepth == 0 {
                return bad(here("iodepth"), "iodepth must be at least 1".into());
            }
            if g.iodepth > MAX_IODEPTH {
                return bad(
                    here("iodepth"),
                    format!(
                        "iodepth {} is above fslab's limit of {MAX_IODEPTH} transfers in flight per thread (each has a buffer of its own; the kernel's io_uring queue holds at most 32768 entries)",
                        g.iodepth
                    ),
                );
            }
            if g.iodepth > 1 && !matches!(g.engine, EngineKind::IoUring | EngineKind::Libaio) {
                return bad(
                    here("iodepth"),
                    format!("iodepth {} needs engine = \"io_uring\" or \"libaio\"", g.iodepth),
                );
            }
            if g.uring != UringOpts::default() {
                let u = &g.uring;
                let at = |k| vec![Key("group"), Index(gi), Key("uring"), Key(k)];
                if g.engine != EngineKind::IoUring {
                    return bad(here("uring"), "[group.uring] needs engine = \"io_uring\"".into());
                }
                if let Some(b) = u.batch_submit.filter(|&b| b > g.iodepth) {
                    return bad(
                        at("batch_submit"),
                        format!("batch_submit {b} is above iodepth {}", g.iodepth),
                    );
                }
                if u.batch_complete == 0 || u.batch_complete > g.iodepth {
                    return bad(
                        at("batch_complete"),
                        format!("batch_complete must be from 1 to iodepth ({})", g.iodepth),
                    );
                }
                if u.hipri && !g.direct {
                    return bad(at("hipri"), "hipri (polled completions) needs direct = true".into());
                }
                if u.sqpoll && u.taskrun != Taskrun::default() {
                    return bad(
                        at("taskrun"),
                        "with sqpoll the kernel's polling thread runs the task work: leave taskrun out".into(),
                    );
                }
            }
            if g.aio != AioOpts::default() {
                let a = &g.aio;
                let at = |k| vec![Key("group"), Index(gi), Key("aio"), Key(k)];
                if g.engine != EngineKind::Libaio {
                    return bad(here("aio"), "[group.aio] needs engine = \"libaio\"".into());
                }
                if a.batch_submit > g.iodepth {
                    return bad(
                        at("batch_submit"),
                        format!("batch_submit {} is above iodepth {}", a.batch_submit, g.iodepth),
                    );
                }
                if a.batch_complete == 0 || a.batch_complete > g.iodepth {
                    return bad(
                        at("batch_complete"),
                        format!("batch_complete must be from 1 to iodepth ({})", g.iodepth),
                    );
                }
                if a.reap_max.is_some_and(|r| r < a.batch_complete || r > g.iodepth) {
                    return bad(
                        at("reap_max"),
                        format!(
                            "reap_max must be from batch_complete ({}) to iodepth ({})",
                            a.batch_complete, g.iodepth
                        ),
                    );
                }
            }
            if g.direct && g.engine == EngineKind::Mmap {
                return bad(here("direct"), "O_DIRECT does not apply to the mmap engine".into());
            }
            if g.child_end.is_some() && self.stop.child_end.is_none() {
                return bad(
                    here("child_end"),
                    "a group's child_end takes the place of stop.child_end: set that too".into(),
                );
            }
            if let Some(r) = g.rate {
                if r.ops.is_none() == r.bytes.is_none() {
                    return bad(here("rate"), "rate takes one of ops or bytes".into());
                }
                if r.ops == Some(0) || r.bytes == Some(Bytes(0)) {
                    return bad(here("rate"), "a rate of 0 would never run".into());
                }
                if r.arrivals == Arrivals::Poisson {
                    let why = if r.ops.is_none() {
                        Some("arrivals = \"poisson\" counts operations: give the rate in ops")
                    } else if g.script.is_some() {
                        Some("arrivals = \"poisson\" paces a mix of [[group.op]], not a script")
                    } else if self.stop.child_end.is_some() {
                        Some("arrivals = \"poisson\" does not apply to IOzone's children (stop.child_end)")
                    } else {
                        None
                    };
                    if let Some(why) = why {
                        return bad(here("rate"), why.into());
                    }
                }
                if r.queue.is_some() && r.arrivals != Arrivals::Poisson {
                    return bad(here("rate"), "queue applies to arrivals = \"poisson\"".into());
                }
                if r.queue == Some(0) {
                    return bad(here("rate"), "a queue of 0 would fail at the first arrival".into());
                }
            }
            if g.data == Data::Checked {
                if self.processes {
                    return bad(
                        here("data"),
                        "checked blocks are claimed by the threads of one process: leave out `processes`".into(),
                    );
                }
                if g.script.is_some() {
                    return bad(
                        here("data"),
                        "a script writes its own data: checked blocks need [[group.op]]".into(),
                    );
                }
                if let Some((oi, o)) = g
                    .ops
                    .iter()
                    .enumerate()
                    .find(|(_, o)| matches!(o.op, OpKind::Append | OpKind::Truncate))
                {
                    return bad(
                        vec![Key("group"), Index(gi), Key("op"), Index(oi), Key("op")],
                        format!(
                            "{} leaves blocks without checksums (or where none was written), which data = \"checked\" \
                             would then fail to read: use random or zeros",
                            o.op
                        ),
                    );
                }
            }
            if g.open == OpenMode::Shared {
                let moves_data = |k: OpKind| {
                    matches!(
                        k,
                        OpKind::Read
                            | OpKind::ReadAll
                            | OpKind::Write
                            | OpKind::WriteAll
                            | OpKind::SeqRead
                            | OpKind::SeqWrite
                            | OpKind::Rewrite
                            | OpKind::Fsync
                    )
                };
                let why = if g.script.is_some() {
                    Some("open = \"shared\" opens a fileset's files, which a script does not use".to_string())
                } else if sets.len() != 1 {
                    Some("open = \"shared\" opens the files of one fileset: name one".to_string())
                } else if self.fileset_use(&sets[0].name).0 {
                    Some(format!(
                        "open = \"shared\" opens every file of `{}` once, so no group may create, delete or rename \
                         its files",
                        sets[0].name
                    ))
                } else if g.engine == EngineKind::Seek {
                    Some(
                        "the seek engine moves each descriptor's position, which threads sharing it would move \
                          under each other: use the sync engine with open = \"shared\""
                            .to_string(),
                    )
                } else {
                    g.ops.iter().find(|o| !moves_data(o.op)).map(|o| {
                        format!(
                            "open = \"shared\" takes reads, writes and fsyncs of the files it opened, not {}",
                            o.op
                        )
                    })
                };
                if let Some(why) = why {
                    return bad(here("open"), why);
                }
            }
            if g.shared_requests {
                use crate::worker::requests::{MAX_EVERY, MAX_FILES};
                let files = sets.iter().map(|fs| fs.files).max().unwrap_or(0);
                let why = if g.script.is_some() {
                    Some("shared_requests draws a mix of [[group.op]] from one generator, not a script".to_string())
                } else if self.stop.child_end.is_some() {
                    Some("shared_requests does not apply to IOzone's children (stop.child_end)".to_string())
                } else if g.fsync_every.is_some_and(|n| n > MAX_EVERY) {
                    Some(format!("shared_requests takes an fsync_every of at most {MAX_EVERY}"))
                } else if g.fsync_every.is_some() && files > MAX_FILES {
                    Some(format!("shared_requests syncs filesets of at most {MAX_FILES} files"))
                } else {
                    None
                };
                if let Some(why) = why {
                    return bad(here("shared_requests"), why);
                }
            }
            if g.call_latency {
                let why = if !matches!(g.engine, EngineKind::Sync | EngineKind::Seek) {
                    Some(format!(
                        "call_latency times the sync and seek engines' calls; the {} engine does not make one call \
                         per transfer",
                        g.engine
                    ))
                } else if g.script.is_some() {
                    Some("call_latency times the calls of [[group.op]], not of a script".to_string())
                } else {
                    None
                };
                if let Some(why) = why {
                    return bad(here("call_latency"), why);
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
                return bad(
                    here("name"),
                    format!("group `{}` has no [[group.op]]", crate::input::excerpt(&g.name)),
                );
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
                let shapes =
                    op.op.changes_membership() || matches!(op.op, OpKind::Mkdir | OpKind::Rmdir | OpKind::MetaOp);
                if self.processes && shapes {
                    return bad(
                        at("op"),
                        format!(
                            "{} changes what fileset `{}` holds, which only threads share: leave out `processes`",
                            op.op,
                            crate::input::excerpt(&sets[0].name)
                        ),
                    );
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
        // A group's threads finish by themselves when all they do is streams without wrap. The run
        // then ends when every thread has finished, or with stonewall when the first one has.
        let finite = |g: &Group| g.script.is_none() && g.ops.iter().all(|o| o.op.is_stream() && o.wrap != Some(true));
        let ends_itself = if s.stonewall {
            self.groups.iter().any(finite)
        } else {
            self.groups.iter().all(finite)
        };
        if s.time.is_none() && s.ops.is_none() && s.bytes.is_none() && s.util.is_none() && !ends_itself {
            return bad(
                vec![Key("stop")],
                "the workload never stops: set stop.time, stop.ops or stop.bytes (only streams without wrap end by themselves; with stonewall, one group of them is enough)".into(),
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
        if let Some(steady) = &s.steady {
            let here = vec![Key("stop"), Key("steady")];
            if s.time.is_none() {
                return bad(
                    here,
                    "stop.steady needs stop.time, the longest the run may take when it never levels off".into(),
                );
            }
            if steady.within.is_none() && steady.slope.is_none() {
                return bad(
                    here,
                    "stop.steady needs `within` (\"2%\": every second within 2% of the window's mean) or `slope` (\"0.5%\": the mean changes less than that per second)".into(),
                );
            }
            if steady.window.0 < std::time::Duration::from_secs(2) {
                return bad(here, "stop.steady's window needs 2 seconds at least".into());
            }
        }
        Ok(())
    }
}

impl Workload {
    /// What a workload file must also be, beyond [`validate`](Self::validate): filesets its
    /// operations can work on. (A front-end's workload may leave a fileset empty for the run to
    /// fill, as FFSB's `init_util`: this applies to workload files only.)
    pub(super) fn check_filesets_have_work(&self) -> Result<(), Invalid> {
        use PathSeg::{Index, Key};
        for (i, fs) in self.filesets.iter().enumerate() {
            check_has_work(self, fs).map_err(|(field, message)| Invalid {
                path: vec![Key("fileset"), Index(i), Key(field)],
                message,
            })?;
        }
        Ok(())
    }
}

/// The largest size, offset or count a workload may give: the largest file Linux holds
/// (`MAX_LFS_FILESIZE`, 8 EiB less a byte) and the largest integer TOML can write. Anything above
/// it means nothing to a filesystem, and `--explain` could not print it.
pub const MAX_VALUE: u64 = i64::MAX as u64;

/// The longest `prefix` or `dir_prefix`, in bytes: a name is written with its number into a
/// fixed buffer ([`NameBuf`](crate::fileset::NameBuf)).
pub const MAX_PREFIX: usize = 40;

/// The largest block size (`bs`, `setup_bs`): each thread holds a buffer this large, and one
/// read() or write() moves less than 2 GiB on Linux.
pub const MAX_BLOCK: u64 = 1 << 30;

impl Workload {
    /// Refuses sizes, offsets and counts above [`MAX_VALUE`] and blocks above [`MAX_BLOCK`],
    /// naming the field.
    fn check_ranges(&self) -> Result<(), Invalid> {
        use PathSeg::{Index, Key};
        fn at_most(path: Vec<PathSeg>, what: &str, value: u64, max: u64, why: &str) -> Result<(), Invalid> {
            if value <= max {
                return Ok(());
            }
            let message = if max == MAX_BLOCK {
                format!(
                    "{what} {} is larger than fslab's largest block, {}",
                    Bytes(value),
                    Bytes(max)
                )
            } else {
                format!("{what} {value} is above {max} ({why})")
            };
            Err(Invalid { path, message })
        }
        let big = |path: Vec<PathSeg>, what: &str, value: u64| {
            at_most(path, what, value, MAX_VALUE, "8 EiB, the largest file Linux holds")
        };
        let many = |path: Vec<PathSeg>, what: &str, value: u64| {
            at_most(
                path,
                what,
                value,
                MAX_VALUE,
                "the largest integer a workload file can hold",
            )
        };
        let block = |path: Vec<PathSeg>, what: &str, value: u64| at_most(path, what, value, MAX_BLOCK, "");
        for (i, fs) in self.filesets.iter().enumerate() {
            let here = |k| vec![Key("fileset"), Index(i), Key(k)];
            many(here("files"), "files", fs.files)?;
            many(here("dirs"), "dirs", fs.dirs)?;
            if let Some(b) = fs.until_bytes {
                big(here("until_bytes"), "until_bytes", b.0)?;
            }
            big(here("size"), "a file size of", fs.size.max())?;
            if let Some(b) = fs.setup_bs {
                block(here("setup_bs"), "setup_bs", b.0)?;
            }
        }
        let stop = |k| vec![Key("stop"), Key(k)];
        if let Some(ops) = self.stop.ops {
            many(stop("ops"), "stop.ops", ops)?;
        }
        if let Some(bytes) = self.stop.bytes {
            big(stop("bytes"), "stop.bytes", bytes.0)?;
        }
        for (gi, g) in self.groups.iter().enumerate() {
            let here = |k| vec![Key("group"), Index(gi), Key(k)];
            if let Some(n) = g.fsync_every {
                many(here("fsync_every"), "fsync_every", n)?;
            }
            if let Some(r) = g.rate {
                many(here("rate"), "rate", r.ops.or(r.bytes.map(|b| b.0)).unwrap_or(0))?;
            }
            for (oi, op) in g.ops.iter().enumerate() {
                let at = |k| vec![Key("group"), Index(gi), Key("op"), Index(oi), Key(k)];
                for (field, value) in [("size", op.size), ("skip", op.skip), ("align", op.align)] {
                    if let Some(v) = value {
                        big(at(field), field, v.0)?;
                    }
                }
                if let Some(bs) = op.bs {
                    block(at("bs"), "bs", bs.0)?;
                }
            }
            if let Some(script) = &g.script {
                script.check_ranges(MAX_VALUE).map_err(|message| Invalid {
                    path: here("script"),
                    message,
                })?;
            }
        }
        Ok(())
    }
}

/// The most transfers a thread keeps in flight (`iodepth`): each has a buffer of its own, and
/// the kernel's io_uring queue holds at most 32768 entries.
pub const MAX_IODEPTH: u32 = 4096;

/// The most threads a run may have: each takes a stack and a few memory mappings, and the
/// kernel's default of 65530 mappings a process runs out near 16,000 threads.
pub const MAX_THREADS: u64 = 10_000;

/// Checks one op against its group and fileset; on error, the field at fault and the message.
fn check_op(op: &OpSpec, fs: &Fileset, g: &Group) -> Result<(), (&'static str, String)> {
    let k = op.op;
    if let Some(label) = &op.label {
        check_label(label).map_err(|m| ("label", m))?;
    }
    let not_for = |field: &'static str| Err((field, format!("`{field}` does not apply to {k}")));
    if g.data == Data::Checked && matches!(k, OpKind::Read | OpKind::ReadAll | OpKind::SeqRead) && fs.prealloc {
        let name = crate::input::excerpt(&fs.name);
        // Files kept from an earlier run (`reuse`) hold what that run wrote, checked blocks
        // perhaps (sysbench's seqwr --validate): their reads are checked as they come.
        if fs.data != Data::Checked && !fs.reuse {
            return Err((
                "op",
                format!(
                    "{k} checks each block it reads (the group's data = \"checked\"), but fileset `{name}` is \
                     written with {} data, whose blocks carry no checksums: give the fileset data = \"checked\" too",
                    fs.data.name()
                ),
            ));
        }
        let setup = fs.setup_bs.map_or(1 << 20, |b| b.0);
        if fs.data == Data::Checked && op.block_size() != setup {
            return Err((
                "bs",
                format!(
                    "{k} checks blocks of {}, but fileset `{name}` is written in blocks of {} (its setup_bs): give \
                     both the same size",
                    Bytes(op.block_size()),
                    Bytes(setup)
                ),
            ));
        }
    }
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
            ("from_start", op.from_start.is_some()),
            ("align", op.align.is_some()),
            ("shuffle", op.shuffle.is_some()),
            ("shuffle_order", op.shuffle_order.is_some()),
        ] {
            if set {
                return not_for(field);
            }
        }
    }
    if op.sync.is_some() && !takes_sync(k) {
        return not_for("sync");
    }
    if op.sync_each.is_some() {
        if !matches!(k, OpKind::SeqWrite | OpKind::Rewrite) {
            return not_for("sync_each");
        }
        if op.sync.is_none() {
            return Err(("sync_each", "sync_each needs sync (\"fsync\" or \"fdatasync\")".into()));
        }
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
    if let Some(stride) = op.stride {
        if k != OpKind::SeqRead || op.scope == Some(Scope::Shared) || op.reverse == Some(true) {
            return Err((
                "stride",
                "`stride` applies to seqread with scope = \"own\", forwards, only".into(),
            ));
        }
        if stride == 0 {
            return Err(("stride", "stride must be at least 1 block".into()));
        }
    }
    if let Some(extent) = op.extent {
        let one_random_block = matches!(k, OpKind::Read | OpKind::Write)
            && op.size.is_none_or(|s| s.0 == op.block_size())
            && op.scope.is_none()
            && op.seeks.unwrap_or(1) == 1
            && op.skip.is_none()
            && op.from_start != Some(true)
            && op.shuffle != Some(true);
        let shared_stream = k.is_stream() && op.scope == Some(Scope::Shared);
        if !(one_random_block || shared_stream) {
            return Err((
                "extent",
                "`extent` applies to read and write of one block at a random offset, and to seqread, seqwrite \
                 and rewrite with scope = \"shared\""
                    .into(),
            ));
        }
        if extent.0 == 0 {
            return Err(("extent", "extent must be above 0".into()));
        }
    }
    if op.order.is_some() && !matches!(k, OpKind::Stat | OpKind::Delete | OpKind::OpenClose) {
        return Err((
            "order",
            format!("`order` does not apply to {k} (only to stat, delete and open_close)"),
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
        if op.from_start == Some(true) && (op.seeks.unwrap_or(1) > 1 || op.shuffle == Some(true)) {
            return Err((
                "from_start",
                "from_start reads or writes one run from the file's head: it takes no seeks above 1 and no shuffle"
                    .into(),
            ));
        }
        if op.shuffle_order.is_some() && op.shuffle != Some(true) {
            return Err((
                "shuffle_order",
                "shuffle_order orders a shuffled deck: it needs shuffle = true".into(),
            ));
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

/// The operations `seeks`, `skip`, `align` and `shuffle` apply to.
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
    let quoted = crate::input::excerpt(label);
    if label.chars().any(char::is_control) {
        return Err(format!("label {quoted:?} holds a control character"));
    }
    if label != label.trim() {
        return Err(format!("label {quoted:?} starts or ends with a space"));
    }
    if label.chars().count() > MAX {
        return Err(format!("label `{quoted}` is longer than {MAX} characters"));
    }
    Ok(())
}

/// A fileset its operations can work on: with no files, some operation makes them (or works on
/// directories); with files all empty, some operation writes into them.
fn check_has_work(w: &Workload, fs: &Fileset) -> Result<(), (&'static str, String)> {
    let ops: Vec<OpKind> = w
        .groups
        .iter()
        .filter(|g| g.fileset.contains(&fs.name))
        .flat_map(|g| g.ops.iter().map(|o| o.op))
        .collect();
    if ops.is_empty() {
        return Ok(());
    }
    let no_files = fs.files == 0 && fs.until_bytes.is_none();
    let makes = |k: &OpKind| {
        matches!(
            k,
            OpKind::Create | OpKind::Mkdir | OpKind::Rmdir | OpKind::MetaOp | OpKind::Readdir
        )
    };
    if no_files && !ops.iter().any(makes) {
        return Err((
            "files",
            format!(
                "fileset `{}` has no files and no operation creates any: give files = 1 or more",
                fs.name
            ),
        ));
    }
    // Reads and in-place writes stay within a file: on empty files they have nothing to do.
    let within = |k: &OpKind| matches!(k, OpKind::Read | OpKind::Write | OpKind::ReadAll | OpKind::SeqRead);
    if !no_files && fs.size.max() == 0 && ops.iter().all(within) {
        return Err((
            "size",
            format!(
                "every file of fileset `{}` is empty and no operation makes it grow: give a size above 0",
                fs.name
            ),
        ));
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
                    "{:?} cannot name a file: give a plain file name (no `/`, not `.`, `..` or `{}`)",
                    crate::input::excerpt(name),
                    marker::FILESET
                ),
            ));
        }
        if fs.names[..k].contains(name) {
            return Err(("names", format!("`{}` is named twice", crate::input::excerpt(name))));
        }
    }
    Ok(())
}
