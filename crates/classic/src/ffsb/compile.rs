//! From a profile to engine workloads.
//!
//! Each `[filesystem]` becomes a fileset in `<location>/data` (files in `d<k>/`, as FFSB's in
//! `datadir<k>/`), each `[threadgroup]` a group over every filesystem (or its `bindfs` one) that
//! opens and closes the file in every operation, as FFSB does. Each operation of a mix carries
//! FFSB's name as its label, so that write and write_fsync (create and create_fsync...) are
//! counted apart. The starting files are written in `create_blocksize` blocks. The run stops
//! after `time` seconds with the final `sync()` counted inside the time. A filesystem with
//! `agefs` gets an aging workload of its own: its threadgroup's operations on files in
//! `<location>/fill` until the filesystem is `desired_util` full, starting from ten files written
//! in `age_blocksize` blocks.

use super::grammar::Grammar;
use super::ops::{FfsbOp, Moves};
use super::profile::{FsSpec, Profile, TgSpec};
use super::ProfileError;
use fslab_engine::confine::resolve_dir;
use fslab_engine::workload::{
    Data, Fileset, FinalSync, Group, Names, OpKind, OpSpec, OpenMode, SetupCalls, SizeDist, Stop, SyncKind,
};
use fslab_engine::{Bytes, Span, Workload};
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

/// What the command line changes.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Seconds of benchmark, replacing the profile's `time` (FFSB 5.x's `ffsb profile time`).
    pub time: Option<u64>,
    /// Replaces every location: the only filesystem goes to DIR, several go to DIR/fs<i>.
    pub dir: Option<PathBuf>,
    pub seed: Option<u64>,
    /// Replaces every threadgroup's `num_threads` (a study's thread-count axis).
    pub threads: Option<u32>,
    /// Replaces every filesystem's file sizes (min_filesize, max_filesize, size_weight) with one
    /// size: a study scales a profile to a small machine without editing it. FFSB finishes the
    /// create under way when the time is up, so a profile of 1 GiB creates at 64 threads writes
    /// at least 64 GiB whatever its time.
    pub filesize: Option<u64>,
    /// Drop the caches after the filesets are built, before the benchmark (root only).
    pub drop_caches: bool,
}

/// Everything a run of the profile needs.
#[derive(Debug, Clone)]
pub struct Plan {
    pub profile: Profile,
    /// Seconds of benchmark; 0 only builds the filesets.
    pub time: u64,
    /// The benchmark.
    pub workload: Workload,
    /// Each filesystem's directory (its location, or where --dir put it).
    pub roots: Vec<PathBuf>,
    /// The roots are DIR/fs<i>, which fslab makes when they are missing.
    pub make_roots: bool,
    /// Aging runs, done before the filesets are set up.
    pub aging: Vec<AgingPlan>,
    /// `init_util` of each filesystem: files are made until the filesystem is this full.
    pub init_util: Vec<Option<f64>>,
    pub callout: Option<String>,
    /// The operations of each threadgroup that have a weight, in FFSB's order.
    pub groups: Vec<Vec<FfsbOp>>,
    /// What fslab ignores or does differently from FFSB for this profile.
    pub warnings: Vec<String>,
    /// Drop the caches after the filesets are built, before the benchmark.
    pub drop_caches: bool,
}

/// One filesystem's aging: run `workload` until the filesystem is `desired_util` full.
#[derive(Debug, Clone)]
pub struct AgingPlan {
    pub fs: usize,
    pub desired_util: f64,
    pub workload: Workload,
}

impl Plan {
    /// The plan of rank `rank` of a job of several (`crate::job`): every location, and every
    /// fileset beneath it, moved to its `rank.N` subdirectory, made at the start of the run.
    pub fn for_rank(&self, rank: usize) -> Plan {
        let mine = |root: &Path| root.join(format!("rank.{rank}"));
        let mut plan = self.clone();
        let moved: Vec<(String, String)> = self
            .roots
            .iter()
            .map(|r| (r.display().to_string(), mine(r).display().to_string()))
            .collect();
        let move_sets = |w: &mut Workload| {
            for fs in &mut w.filesets {
                if let Some((_, to)) = moved.iter().find(|(from, _)| fs.root.as_deref() == Some(from)) {
                    fs.root = Some(to.clone());
                }
            }
        };
        move_sets(&mut plan.workload);
        for a in &mut plan.aging {
            move_sets(&mut a.workload);
        }
        plan.roots = self.roots.iter().map(|r| mine(r)).collect();
        // The locations themselves must be there; each rank makes its own beneath them.
        plan.make_roots = true;
        plan
    }
}

/// Where FFSB keeps its files beneath a location.
const DATA_DIR: &str = "data";
/// FFSB's files and directories: `data/datafile<N>` and `data/datadir<k>` (filelist.c names them
/// basename + "file" + N and basename + "dir" + k; the benchmark's basename is "data").
const DATA_PREFIX: &str = "datafile";
const DATA_DIR_PREFIX: &str = "datadir";
/// FFSB's aging files: `data/fillfile<N>` (filelist.c names a file basename + "file" + N;
/// the aging list's basename is "fill"), beside the benchmark's files.
const FILL_PREFIX: &str = "fillfile";
/// FFSB makes every file and directory with S_IRWXU (fh.c's open(), util.c's and
/// metaops.c's mkdir()).
const MODE: u32 = 0o700;
/// How often FFSB's aging checks the utilisation (`age_fs()`: `wait_time = 1`).
const AGING_POLL: Duration = Duration::from_secs(1);
/// FFSB seeds an aging file list with ten files before aging.
const AGING_START_FILES: u64 = 10;

/// Turns a parsed profile into workloads; checks everything the engine would refuse so that the
/// error can name the profile's line.
pub fn compile(profile: &Profile, opts: &Options) -> Result<Plan, ProfileError> {
    let file = profile.file.as_str();
    let time = match (opts.time, profile.time, profile.grammar) {
        (Some(t), _, _) => t,
        (None, Some((t, _)), _) => t,
        (None, None, Grammar::V5) => {
            return Err(ProfileError::whole(
                file,
                "the 5.x grammar needs time=<seconds> (or give --time)".into(),
            ))
        }
        // 6.0 without a time only builds the fileset.
        (None, None, Grammar::V6) => 0,
    };
    let mut warnings = profile.warnings.clone();
    let (roots, make_roots) = roots(profile, opts, &mut warnings)?;
    let mut filesets = Vec::new();
    let mut init_util = Vec::new();
    for (i, fs) in profile.filesystems.iter().enumerate() {
        let (mut set, util) = fileset(profile, i, fs, &roots[i], &mut warnings)?;
        if let Some(size) = opts.filesize {
            set.size = SizeDist::Fixed(Bytes(size));
        }
        filesets.push(set);
        init_util.push(util);
    }
    // FFSB syncs once, when every filesystem is set up: after the last fileset.
    let last = filesets.len().saturating_sub(1);
    for (k, set) in filesets.iter_mut().enumerate() {
        set.setup_calls = SetupCalls::Ffsb { sync: k == last };
    }
    let mut groups = Vec::new();
    let mut group_ops = Vec::new();
    for (i, tg) in profile.threadgroups.iter().enumerate() {
        let targets: Vec<usize> = match tg.bound_to {
            Some(b) => vec![b],
            None => (0..filesets.len()).collect(),
        };
        groups.push(group(
            profile,
            tg,
            &format!("tg{i}"),
            &filesets,
            &targets,
            &mut warnings,
        )?);
        group_ops.push(tg.ops().map(|(op, _)| op).collect());
    }
    if let Some(n) = opts.threads {
        for g in &mut groups {
            g.threads = n;
        }
    }
    let name = Path::new(file)
        .file_stem()
        .map_or_else(|| "ffsb".to_string(), |s| s.to_string_lossy().into_owned());
    let mut workload = Workload {
        description: description(profile),
        seed: opts.seed,
        stop: Stop {
            time: Some(Span(Duration::from_secs(time))),
            final_sync: FinalSync::Inside,
            ..Stop::default()
        },
        filesets,
        groups,
        ..Workload::new(&name)
    };
    internal_check(file, &workload)?;
    let mut aging = Vec::new();
    for (i, fs) in profile.filesystems.iter().enumerate() {
        if let Some(plan) = aging_plan(profile, i, fs, &workload, &name, &mut warnings)? {
            // The aging files stay beside the benchmark's, in data/, as FFSB leaves them.
            workload.filesets[i].neighbours = vec![FILL_PREFIX.to_string()];
            aging.push(plan);
        }
    }
    Ok(Plan {
        profile: profile.clone(),
        time,
        workload,
        roots,
        make_roots,
        aging,
        init_util,
        callout: profile.callout.clone(),
        groups: group_ops,
        warnings,
        drop_caches: opts.drop_caches,
    })
}

/// `--explain`: the benchmark as native TOML, with what runs around it (aging, init_util, the
/// callout) as comments, so that the output stays one TOML document.
pub fn explain(plan: &Plan) -> String {
    let mut out = format!("{}{}", super::DIFFERENCES, plan.workload.to_toml());
    let comment = |out: &mut String, text: &str| {
        for line in text.lines() {
            out.push_str(if line.is_empty() { "#\n" } else { "# " });
            if !line.is_empty() {
                out.push_str(line);
                out.push('\n');
            }
        }
    };
    if plan.time == 0 {
        comment(
            &mut out,
            "\ntime = 0: fslab only builds the filesets (FFSB's fs setup) and measures nothing.",
        );
    }
    for (k, util) in plan.init_util.iter().enumerate() {
        if let Some(util) = util {
            comment(
                &mut out,
                &format!("\nfileset fs{k}: files are made until the filesystem is {util} full (init_util);\nthe total size is worked out from the filesystem's size when the run starts."),
            );
        }
    }
    for a in &plan.aging {
        comment(
            &mut out,
            &format!(
                "\nBefore the filesets are set up, filesystem {} is aged (agefs) with this workload\nuntil it is {} full:\n\n{}",
                a.fs,
                a.desired_util,
                a.workload.to_toml()
            ),
        );
    }
    if let Some(command) = &plan.callout {
        comment(
            &mut out,
            &format!("\nAfter the setup and before the benchmark, the callout runs: sh -c '{command}'"),
        );
    }
    out
}

/// The engine's own check; anything it finds is something the checks here missed.
fn internal_check(file: &str, workload: &Workload) -> Result<(), ProfileError> {
    workload
        .validate()
        .map_err(|e| ProfileError::whole(file, format!("fslab cannot run this profile: {e}")))
}

fn description(profile: &Profile) -> String {
    format!(
        "FFSB {} profile {}: files are opened and closed in every operation, the final sync() \
         counts in the time, and write counts write_size bytes (as FFSB 5.x does)",
        profile.grammar, profile.file
    )
}

/// Each filesystem's directory: its location, or DIR (one filesystem) or DIR/fs<i> (several).
fn roots(profile: &Profile, opts: &Options, warnings: &mut Vec<String>) -> Result<(Vec<PathBuf>, bool), ProfileError> {
    let file = profile.file.as_str();
    let n = profile.filesystems.len();
    if let Some(dir) = &opts.dir {
        let dir =
            std::path::absolute(dir).map_err(|e| ProfileError::whole(file, format!("--dir {}: {e}", dir.display())))?;
        let roots = (0..n)
            .map(|i| {
                if n == 1 {
                    dir.clone()
                } else {
                    dir.join(format!("fs{i}"))
                }
            })
            .collect();
        return Ok((roots, n > 1));
    }
    let mut roots: Vec<PathBuf> = Vec::new();
    for fs in &profile.filesystems {
        let Some(location) = &fs.location else {
            return Err(ProfileError::at(
                file,
                fs.line,
                "this [filesystem] has no location= (or give --dir DIR)".into(),
            ));
        };
        let line = fs.lines.of("location").unwrap_or(fs.line);
        let path = Path::new(location);
        if !path.is_absolute() {
            return Err(ProfileError::at(
                file,
                line,
                format!("location `{location}` is relative; name an absolute directory (or give --dir DIR)"),
            ));
        }
        if path.components().any(|c| c == Component::ParentDir) {
            return Err(ProfileError::at(
                file,
                line,
                format!("location `{location}` contains `..`; fslab refuses paths that climb out of a directory (name the directory itself, or give --dir DIR)"),
            ));
        }
        // A location that is (or passes through) a symlink is resolved once, here: the run works
        // in the directory it leads to, said on stderr, and stays beneath it.
        let path = match resolve_dir(path) {
            Ok((real, Some(link))) => {
                warnings.push(format!(
                    "line {line}: location `{location}` leads through the symlink {}: filesystem {} runs in {} and stays beneath it",
                    link.display(),
                    roots.len(),
                    real.display()
                ));
                real
            }
            _ => path.to_path_buf(),
        };
        if let Some(k) = roots.iter().position(|r| *r == path) {
            return Err(ProfileError::at(
                file,
                line,
                format!(
                    "location `{location}` is also filesystem {k}'s (line {}); each filesystem needs its own",
                    profile.filesystems[k].lines.of("location").unwrap_or(0)
                ),
            ));
        }
        roots.push(path);
    }
    Ok((roots, false))
}

/// The sizes of a filesystem's files: `size_weight`'s table, or uniform in [min, max].
fn size_dist(profile: &Profile, fs: &FsSpec) -> Result<SizeDist, ProfileError> {
    let at = |opt: &str| fs.lines.of(opt).unwrap_or(fs.line);
    if !fs.size_weights.is_empty() {
        if fs.size_weights.iter().all(|w| w.1 == 0) {
            return Err(ProfileError::at(
                &profile.file,
                at("size_weight"),
                "every size_weight has weight 0".into(),
            ));
        }
        let table = fs.size_weights.iter().map(|(s, w)| (Bytes(*s), *w)).collect();
        return Ok(SizeDist::Table { table });
    }
    if fs.min_filesize > fs.max_filesize {
        return Err(ProfileError::at(
            &profile.file,
            at("min_filesize"),
            format!(
                "min_filesize {} is larger than max_filesize {}",
                fs.min_filesize, fs.max_filesize
            ),
        ));
    }
    Ok(if fs.min_filesize == fs.max_filesize {
        SizeDist::Fixed(Bytes(fs.min_filesize))
    } else {
        SizeDist::Range {
            min: Bytes(fs.min_filesize),
            max: Bytes(fs.max_filesize),
        }
    })
}

fn fileset(
    profile: &Profile,
    i: usize,
    fs: &FsSpec,
    root: &Path,
    warnings: &mut Vec<String>,
) -> Result<(Fileset, Option<f64>), ProfileError> {
    let at = |opt: &str| fs.lines.of(opt).unwrap_or(fs.line);
    let mut set = Fileset {
        dir: Some(DATA_DIR.to_string()),
        prefix: DATA_PREFIX.to_string(),
        dir_prefix: DATA_DIR_PREFIX.to_string(),
        root: Some(root.display().to_string()),
        files: fs.num_files,
        dirs: fs.num_dirs,
        size: size_dist(profile, fs)?,
        setup_bs: Some(Bytes(block_size(fs.create_blocksize))),
        // One file at a time, as FFSB's add_files(), never O_DIRECT; FFSB's sync() comes after
        // the last filesystem's (`compile` says which).
        setup_calls: SetupCalls::Ffsb { sync: false },
        // FFSB's buffers are zeroed when allocated (ffsb_malloc) and never filled.
        data: Data::Zeros,
        reuse: fs.reuse,
        mode: Some(MODE),
        // A create after a delete takes the deleted file's name (filelist.c's holes).
        reuse_names: true,
        // Each file in a directory drawn among num_dirs and data/ itself (filelist.c).
        spread: true,
        // metaop's directories in meta/, beside data/ (ffsb_fs.c's fs->meta).
        meta_beside: true,
        ..Fileset::new(&format!("fs{i}"))
    };
    if fs.init_size > 0 && fs.init_util > 0.0 {
        return Err(ProfileError::at(
            &profile.file,
            at("init_util"),
            "give init_size or init_util, not both".into(),
        ));
    }
    if fs.init_size > 0 {
        if fs.num_files > 0 {
            warnings.push(format!(
                "filesystem {i}: init_size replaces num_files={} (files are made until they add up to init_size)",
                fs.num_files
            ));
        }
        set.files = 0;
        set.until_bytes = Some(Bytes(fs.init_size));
    }
    let mut util = None;
    if fs.init_util != 0.0 {
        if !(fs.init_util > 0.0 && fs.init_util <= 1.0) {
            return Err(ProfileError::at(
                &profile.file,
                at("init_util"),
                format!("init_util={} must be a fraction between 0 and 1", fs.init_util),
            ));
        }
        util = Some(fs.init_util);
    }
    Ok((set, util))
}

fn group(
    profile: &Profile,
    tg: &TgSpec,
    name: &str,
    filesets: &[Fileset],
    targets: &[usize],
    warnings: &mut Vec<String>,
) -> Result<Group, ProfileError> {
    let file = profile.file.as_str();
    let at = |opt: &str| tg.lines.of(opt).unwrap_or(tg.line);
    let err = |line: usize, m: String| ProfileError::at(file, line, m);
    let ops: Vec<(FfsbOp, u32)> = tg.ops().collect();
    if tg.num_threads == 0 {
        return Err(err(
            at("num_threads"),
            "a threadgroup needs num_threads=1 or more".into(),
        ));
    }
    if ops.is_empty() {
        return Err(err(
            tg.line,
            "a threadgroup must have at least one weighted operation (e.g. read_weight=1)".into(),
        ));
    }
    let weight_line = |op: FfsbOp| tg.weights.get(&op).map_or(tg.line, |w| w.1);
    for &(op, _) in &ops {
        let line = weight_line(op);
        if op.needs_read_blocksize() && tg.read_blocksize == 0 {
            return Err(err(line, format!("{} needs read_blocksize", op.name())));
        }
        if op.needs_write_blocksize() && tg.write_blocksize == 0 {
            return Err(err(line, format!("{} needs write_blocksize", op.name())));
        }
        if op == FfsbOp::Read && tg.read_size == 0 {
            return Err(err(line, "read needs read_size".into()));
        }
        if op.needs_write_size() && tg.write_size == 0 {
            return Err(err(line, format!("{} needs write_size", op.name())));
        }
    }
    let reads = ops.iter().any(|(op, _)| *op == FfsbOp::Read);
    if reads && tg.read_random && tg.read_skip {
        return Err(err(
            at("read_skip"),
            "read_random and read_skip are mutually exclusive".into(),
        ));
    }
    if reads && tg.read_skip && tg.read_skipsize == 0 {
        return Err(err(at("read_skip"), "read_skip needs read_skipsize".into()));
    }
    let largest = targets.iter().map(|&k| filesets[k].size.max()).min().unwrap_or(0);
    for (op, size, option) in [
        (FfsbOp::Read, tg.read_size, "read_size"),
        (FfsbOp::Write, tg.write_size, "write_size"),
        (FfsbOp::WriteFsync, tg.write_size, "write_size"),
    ] {
        if ops.iter().any(|(o, _)| *o == op) && largest > 0 && size > largest {
            return Err(err(
                at(option),
                format!(
                    "{option} {size} is larger than every file {} works on ({largest} bytes at most)",
                    op.name()
                ),
            ));
        }
    }
    let smallest = targets.iter().map(|&k| filesets[k].size.min()).min().unwrap_or(0);
    if ops.iter().any(|(o, _)| *o == FfsbOp::Read) && tg.read_size > smallest {
        // FFSB 6.0 asserts (and dies) when a read would go past the end of a smaller file.
        warnings.push(format!(
            "line {}: read_size {} is larger than the smallest file read ({smallest} bytes); FFSB 6.0 \
             crashes on such a file, fslab reads the whole file instead (fewer bytes than read_size)",
            at("read_size"),
            tg.read_size
        ));
    }
    if reads && tg.read_skip && tg.read_blocksize > 0 {
        // FFSB's skip reads start at the head of the file and need this much of it (whole
        // blocks, each with its gap, then the rest); FFSB 6.0 stops the run at a file too small.
        let (whole, rest) = (tg.read_size / tg.read_blocksize, tg.read_size % tg.read_blocksize);
        let stride = tg.read_blocksize + tg.read_skipsize;
        let span = match rest {
            0 => (whole - 1) * stride + tg.read_blocksize,
            _ => whole * stride + rest,
        };
        if span > smallest {
            warnings.push(format!(
                "line {}: read_size {} with read_skipsize {} spans {span} bytes, more than the smallest \
                 file read ({smallest} bytes); FFSB stops the run on such a file, fslab reads up to its end",
                at("read_skipsize"),
                tg.read_size,
                tg.read_skipsize
            ));
        } else if rest == 0 && profile.grammar == Grammar::V6 {
            // fileops.c of 6.0 computes `read_blocksize + iterations - 1 * (read_blocksize +
            // read_skipsize)` there, which wraps below zero.
            warnings.push(format!(
                "line {}: read_size {} is a multiple of read_blocksize {}: FFSB 6.0 stops at its first skip read \
                 (\"read size too big\": its size check wraps below zero), fslab reads as FFSB 5.x does",
                at("read_size"),
                tg.read_size,
                tg.read_blocksize
            ));
        }
    }
    if profile.directio {
        for (used, bs, option) in [
            (
                ops.iter().any(|(o, _)| o.needs_read_blocksize()),
                tg.read_blocksize,
                "read_blocksize",
            ),
            (
                ops.iter().any(|(o, _)| o.needs_write_blocksize()),
                tg.write_blocksize,
                "write_blocksize",
            ),
        ] {
            if used && bs % 512 != 0 {
                return Err(err(
                    at(option),
                    format!("directio=1 needs {option} to be a multiple of 512; {bs} is not"),
                ));
            }
        }
    }
    if tg.fsync_file && profile.grammar == Grammar::V6 {
        warnings.push(format!(
            "line {}: fsync_file is deprecated in FFSB 6.0 and has no effect (use write_fsync_weight)",
            at("fsync_file")
        ));
    }
    let align = Bytes(if profile.directio || profile.alignio { 4096 } else { 1 });
    let specs = ops
        .iter()
        .map(|&(op, weight)| op_spec(profile, tg, op, weight, align))
        .collect();
    Ok(Group {
        threads: tg.num_threads as u32,
        fileset: Names(targets.iter().map(|&k| filesets[k].name.clone()).collect()),
        open: OpenMode::PerOp,
        delay: Span(Duration::from_millis(tg.op_delay_ms)),
        direct: profile.directio,
        data: Data::Zeros,
        ops: specs,
        // [stats]: each system call timed, for the latencies printed after the group's table.
        call_latency: tg.stats.is_some(),
        ..Group::new(name, &filesets[targets[0]].name)
    })
}

/// FFSB's create_blocksize and age_blocksize: 0 (or absent) means 4096.
fn block_size(option: u64) -> u64 {
    if option == 0 {
        4096
    } else {
        option
    }
}

/// One FFSB operation as the engine runs it, labelled with FFSB's name so that the engine
/// counts it apart from the other FFSB operations of the same kind (write and write_fsync).
fn op_spec(profile: &Profile, tg: &TgSpec, op: FfsbOp, weight: u32, align: Bytes) -> OpSpec {
    let mut spec = OpSpec {
        label: Some(op.name().to_string()),
        weight,
        // FFSB's calls: stat() once open, lseek() + read()/write() (fileops.c).
        ffsb_calls: true,
        // 5.2.1's fhopencreate() leaves O_DIRECT out; 6.0's adds it with directio=1.
        buffered_create: profile.grammar == Grammar::V5,
        ..OpSpec::new(op.kind())
    };
    let fsync_file = tg.fsync_file && profile.grammar == Grammar::V5 && op == FfsbOp::Write;
    if op.fsyncs() || fsync_file {
        spec.sync = Some(SyncKind::Fsync);
    }
    match op.moves() {
        Moves::Read => spec.bs = Some(Bytes(tg.read_blocksize)),
        Moves::Write => spec.bs = Some(Bytes(tg.write_blocksize)),
        Moves::Nothing => {}
    }
    match op.kind() {
        OpKind::Read => {
            spec.size = Some(Bytes(tg.read_size));
            spec.align = Some(align);
            if tg.read_random {
                // Every block at a random offset of its own.
                spec.seeks = Some((tg.read_size / tg.read_blocksize).clamp(1, u32::MAX as u64) as u32);
            } else if tg.read_skip {
                // From the file's head, a read_skipsize gap after every whole block.
                spec.skip = Some(Bytes(tg.read_skipsize));
                spec.from_start = Some(true);
            }
        }
        OpKind::Write => {
            spec.size = Some(Bytes(tg.write_size));
            spec.align = Some(align);
            if tg.write_random {
                spec.seeks = Some((tg.write_size / tg.write_blocksize).clamp(1, u32::MAX as u64) as u32);
            }
        }
        OpKind::Append => spec.size = Some(Bytes(tg.write_size)),
        _ => {}
    }
    spec
}

fn aging_plan(
    profile: &Profile,
    i: usize,
    fs: &FsSpec,
    bench: &Workload,
    name: &str,
    warnings: &mut Vec<String>,
) -> Result<Option<AgingPlan>, ProfileError> {
    let file = profile.file.as_str();
    let at = |opt: &str| fs.lines.of(opt).unwrap_or(fs.line);
    let Some(ager) = fs.aging.as_ref().filter(|_| fs.agefs) else {
        if let Some(ager) = &fs.aging {
            warnings.push(format!(
                "line {}: this aging [threadgroup] is ignored without agefs=1",
                ager.line
            ));
        }
        return Ok(None);
    };
    if fs.reuse {
        return Err(ProfileError::at(
            file,
            at("reuse"),
            "reuse=1 and agefs=1 are mutually exclusive (FFSB refuses them too)".into(),
        ));
    }
    if !(fs.desired_util > 0.0 && fs.desired_util <= 1.0) {
        return Err(ProfileError::at(
            file,
            at("desired_util"),
            format!(
                "agefs=1 needs desired_util, a fraction between 0 and 1 (it is {})",
                fs.desired_util
            ),
        ));
    }
    for (op, _) in ager.ops() {
        if !op.can_age() {
            return Err(ProfileError::at(
                file,
                ager.weights.get(&op).map_or(ager.line, |w| w.1),
                format!(
                    "{} cannot age a filesystem; aging uses create, append and delete (and their _fsync forms)",
                    op.name()
                ),
            ));
        }
    }
    let main = &bench.filesets[i];
    // FFSB's ten starting files are drawn from min_filesize=0 to max_filesize=0, so they are
    // empty unless size_weight gives their sizes; age_blocksize is what they are written in.
    // The aging creates draw from the filesystem's sizes.
    let seeded = !fs.size_weights.is_empty();
    let fill = Fileset {
        dir: main.dir.clone(),
        prefix: FILL_PREFIX.to_string(),
        neighbours: vec![main.prefix.clone(), main.dir_prefix.clone()],
        root: main.root.clone(),
        files: AGING_START_FILES,
        dirs: 0,
        size: main.size.clone(),
        prealloc: seeded,
        setup_bs: seeded.then(|| Bytes(block_size(fs.age_blocksize))),
        data: Data::Zeros,
        mode: main.mode,
        // FFSB makes them with the same add_files() as the benchmark's files, and goes
        // straight on to age, without a sync().
        setup_calls: SetupCalls::Ffsb { sync: false },
        reuse_names: true,
        ..Fileset::new(&format!("fs{i}-age"))
    };
    let ager_group = Group {
        // FFSB reads [stats] for the benchmark's threadgroups only.
        call_latency: false,
        ..group(
            profile,
            ager,
            &format!("age{i}"),
            std::slice::from_ref(&fill),
            &[0],
            warnings,
        )?
    };
    let workload = Workload {
        description: format!(
            "aging of FFSB filesystem {i} ({}): its aging threadgroup until the filesystem is {} full",
            main.root.as_deref().unwrap_or("?"),
            fs.desired_util
        ),
        seed: bench.seed,
        stop: Stop {
            util: Some(fs.desired_util),
            util_poll: Some(Span(AGING_POLL)),
            ..Stop::default()
        },
        filesets: vec![fill],
        groups: vec![ager_group],
        ..Workload::new(&format!("{name}-age{i}"))
    };
    internal_check(file, &workload)?;
    Ok(Some(AgingPlan {
        fs: i,
        desired_util: fs.desired_util,
        workload,
    }))
}

#[cfg(test)]
mod tests {
    use super::super::parse::parse;
    use super::*;

    fn plan(text: &str, opts: &Options) -> Result<Plan, String> {
        let p = parse(text, "p.ffsb").map_err(|e| e.to_string())?;
        compile(&p, opts).map_err(|e| e.to_string())
    }

    const PROFILE: &str = "time=2
directio=1
[filesystem]
    location=/mnt/a
    num_files=4
    num_dirs=2
    min_filesize=64k
    max_filesize=64k
[end]
[threadgroup]
    num_threads=3
    op_delay=5
    read_weight=2
    read_size=16k
    read_blocksize=4k
    read_random=1
    write_fsync_weight=1
    write_size=8k
    write_blocksize=4k
    createdir_weight=1
[end]
";

    #[test]
    fn a_profile_becomes_a_workload() {
        let p = plan(PROFILE, &Options::default()).unwrap();
        let w = &p.workload;
        assert_eq!(w.stop.time, Some(Span(Duration::from_secs(2))));
        assert_eq!(w.stop.final_sync, FinalSync::Inside);
        let fs = &w.filesets[0];
        assert_eq!(fs.root.as_deref(), Some("/mnt/a"));
        assert_eq!(
            (fs.files, fs.dirs, fs.size.clone()),
            (4, 2, SizeDist::Fixed(Bytes(65536)))
        );
        let g = &w.groups[0];
        assert_eq!((g.threads, g.open, g.direct), (3, OpenMode::PerOp, true));
        assert_eq!(g.delay, Span(Duration::from_millis(5)));
        let read = &g.ops[0];
        assert_eq!(
            (read.op, read.weight, read.size, read.bs, read.seeks, read.align),
            (
                OpKind::Read,
                2,
                Some(Bytes(16384)),
                Some(Bytes(4096)),
                Some(4),
                Some(Bytes(4096))
            )
        );
        // FFSB's order: read, createdir, ..., write_fsync.
        assert_eq!(g.ops[1].op, OpKind::Mkdir);
        let write = &g.ops[2];
        assert_eq!(
            (write.op, write.sync, write.size),
            (OpKind::Write, Some(SyncKind::Fsync), Some(Bytes(8192)))
        );
    }

    #[test]
    fn dir_replaces_every_location() {
        let two = PROFILE.replace("[threadgroup]", "[filesystem]\nlocation=/mnt/b\n[end]\n[threadgroup]");
        let p = plan(
            &two,
            &Options {
                dir: Some("/tmp/x".into()),
                ..Options::default()
            },
        )
        .unwrap();
        assert_eq!(p.roots, vec![PathBuf::from("/tmp/x/fs0"), PathBuf::from("/tmp/x/fs1")]);
        assert!(p.make_roots);
        assert_eq!(p.workload.groups[0].fileset.0, vec!["fs0", "fs1"]);
    }

    #[test]
    fn filesize_replaces_every_size_of_the_profile() {
        let ranged = PROFILE.replace("min_filesize=64k", "min_filesize=32k\nsize_weight 48k 1");
        let opts = Options {
            filesize: Some(1 << 20),
            ..Options::default()
        };
        let p = plan(&ranged, &opts).unwrap();
        assert_eq!(p.workload.filesets[0].size, SizeDist::Fixed(Bytes(1 << 20)));
        // The checks see the new size: a read larger than every file is refused.
        let e = plan(
            PROFILE,
            &Options {
                filesize: Some(8192),
                ..Options::default()
            },
        )
        .unwrap_err();
        assert!(e.contains("read_size 16384 is larger than every file"), "{e}");
    }

    #[test]
    fn a_read_size_larger_than_the_smallest_file_warns() {
        let ranged = PROFILE.replace("min_filesize=64k", "min_filesize=8k");
        let p = plan(&ranged, &Options::default()).unwrap();
        let w: Vec<&String> = p.warnings.iter().filter(|w| w.contains("read_size")).collect();
        assert_eq!(
            w,
            vec![
                "line 14: read_size 16384 is larger than the smallest file read (8192 bytes); FFSB 6.0 \
                  crashes on such a file, fslab reads the whole file instead (fewer bytes than read_size)"
            ]
        );
        // Every file at least as large: no warning.
        let p = plan(PROFILE, &Options::default()).unwrap();
        assert!(p.warnings.iter().all(|w| !w.contains("read_size")), "{:?}", p.warnings);
    }

    #[test]
    fn locations_must_be_absolute_without_dot_dot() {
        let e = plan(&PROFILE.replace("/mnt/a", "mnt/a"), &Options::default()).unwrap_err();
        assert!(e.starts_with("p.ffsb:4: location `mnt/a` is relative"), "{e}");
        let e = plan(&PROFILE.replace("/mnt/a", "/mnt/../etc"), &Options::default()).unwrap_err();
        assert!(e.starts_with("p.ffsb:4: location `/mnt/../etc` contains `..`"), "{e}");
        // --dir replaces them, so they no longer matter.
        let opts = Options {
            dir: Some("/tmp/x".into()),
            ..Options::default()
        };
        assert!(plan(&PROFILE.replace("/mnt/a", "mnt/a"), &opts).is_ok());
    }

    #[test]
    fn ffsb_s_own_checks_name_their_lines() {
        let e = plan(&PROFILE.replace("    read_blocksize=4k\n", ""), &Options::default()).unwrap_err();
        assert!(e.starts_with("p.ffsb:13: read needs read_blocksize"), "{e}");
        let e = plan(&PROFILE.replace("read_size=16k", "read_size=128k"), &Options::default()).unwrap_err();
        assert!(
            e.starts_with("p.ffsb:14: read_size 131072 is larger than every file"),
            "{e}"
        );
        let e = plan(
            &PROFILE.replace("write_blocksize=4k", "write_blocksize=1000"),
            &Options::default(),
        )
        .unwrap_err();
        assert!(
            e.contains("directio=1 needs write_blocksize to be a multiple of 512"),
            "{e}"
        );
        let e = plan(&PROFILE.replace("num_threads=3", "num_threads=0"), &Options::default()).unwrap_err();
        assert!(e.starts_with("p.ffsb:11: a threadgroup needs num_threads"), "{e}");
        let e = plan(
            &PROFILE.replace("min_filesize=64k", "min_filesize=1m"),
            &Options::default(),
        )
        .unwrap_err();
        assert!(
            e.starts_with("p.ffsb:7: min_filesize 1048576 is larger than max_filesize"),
            "{e}"
        );
    }

    #[test]
    fn time_zero_and_missing_time() {
        let p = plan(&PROFILE.replace("time=2", "time=0"), &Options::default()).unwrap();
        assert_eq!(p.time, 0);
        let p = plan(&PROFILE.replace("time=2\n", ""), &Options::default()).unwrap();
        assert_eq!(p.time, 0, "a 6.0 profile without time only builds the fileset");
        let p = plan(
            PROFILE,
            &Options {
                time: Some(7),
                ..Options::default()
            },
        )
        .unwrap();
        assert_eq!(p.workload.stop.time, Some(Span(Duration::from_secs(7))));
    }

    #[test]
    fn agefs_gets_an_aging_workload() {
        let aged = PROFILE.replace(
            "[end]\n[threadgroup]",
            "agefs=1\ndesired_util=0.3\n[threadgroup]\nnum_threads=1\ncreate_weight=1\ndelete_weight=1\nwrite_blocksize=4k\n[end]\n[end]\n[threadgroup]",
        );
        let p = plan(&aged, &Options::default()).unwrap();
        let a = &p.aging[0];
        assert_eq!((a.fs, a.desired_util), (0, 0.3));
        assert_eq!(a.workload.stop.util, Some(0.3));
        // FFSB checks the utilisation once a second, from one thread.
        assert_eq!(a.workload.stop.util_poll, Some(Span(Duration::from_secs(1))));
        // data/fillfile<N>, beside the benchmark's files, each fileset leaving the other's alone.
        let (fill, data) = (&a.workload.filesets[0], &p.workload.filesets[0]);
        assert_eq!((fill.dir.as_deref(), fill.prefix.as_str()), (Some("data"), "fillfile"));
        assert_eq!(data.dir, fill.dir);
        assert_eq!(
            (data.prefix.as_str(), data.dir_prefix.as_str()),
            ("datafile", "datadir")
        );
        assert_eq!(
            (&fill.neighbours, &data.neighbours),
            (
                &vec!["datafile".to_string(), "datadir".to_string()],
                &vec!["fillfile".to_string()]
            )
        );
        let bad = aged.replace("delete_weight=1", "stat_weight=1");
        assert!(plan(&bad, &Options::default())
            .unwrap_err()
            .contains("stat cannot age a filesystem"));
        // FFSB's ten starting files have sizes from 0 to 0: empty, so age_blocksize writes
        // nothing...
        let fill = &a.workload.filesets[0];
        assert_eq!((fill.files, fill.prealloc, fill.setup_bs), (10, false, None));
        // ... unless size_weight gives their sizes; then they are written in age_blocksize blocks.
        let weighted = aged.replace("agefs=1", "agefs=1\nage_blocksize=8k\nsize_weight 64k 1");
        let p = plan(&weighted, &Options::default()).unwrap();
        let fill = &p.aging[0].workload.filesets[0];
        assert_eq!((fill.prealloc, fill.setup_bs), (true, Some(Bytes(8192))));
    }

    #[test]
    fn the_starting_files_are_written_in_create_blocksize_blocks() {
        let bs = |text: &str| plan(text, &Options::default()).unwrap().workload.filesets[0].setup_bs;
        assert_eq!(bs(PROFILE), Some(Bytes(4096)), "FFSB's default");
        let with = |v: &str| PROFILE.replace("num_dirs=2", &format!("num_dirs=2\ncreate_blocksize={v}"));
        assert_eq!(bs(&with("16k")), Some(Bytes(16384)));
        assert_eq!(bs(&with("0")), Some(Bytes(4096)), "0 means the default, as in FFSB");
        // The create operation itself writes in write_blocksize blocks.
        let create = with("16k").replace("createdir_weight=1", "create_weight=1");
        let p = plan(&create, &Options::default()).unwrap();
        let op = p.workload.groups[0]
            .ops
            .iter()
            .find(|o| o.op == OpKind::Create)
            .unwrap();
        assert_eq!(op.bs, Some(Bytes(4096)));
    }

    #[test]
    fn every_operation_is_labelled_with_ffsb_s_name() {
        let p = plan(PROFILE, &Options::default()).unwrap();
        let labels: Vec<_> = p.workload.groups[0].ops.iter().map(|o| o.label.as_deref()).collect();
        assert_eq!(labels, vec![Some("read"), Some("createdir"), Some("write_fsync")]);
        let toml = explain(&p);
        assert!(toml.contains("label = \"write_fsync\""), "{toml}");
    }
}
