//! The checks that turn the study file as written (text.rs) into a [`Study`]: values in range,
//! names that are known and distinct, references that name something (a workload, a file), and
//! the defaults of what is left out. An error is a [`Bad`]: the path of what it is about in the
//! file, and what is wrong.

use super::text::{OneOrMany, RawDevice, RawFilesystem, RawFill, RawLog, RawStudy};
use super::{Adaptive, Device, Filesystem, Fresh, Log, Quick, Study, StudyWorkload, Target, Tool, KNOWN_TYPES};
use fslab_engine::workload::PathSeg;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;
use PathSeg::{Index, Key, Name};

/// A checking error pointing into the file.
pub(super) struct Bad {
    pub(super) path: Vec<PathSeg>,
    pub(super) message: String,
}

fn bad(path: Vec<PathSeg>, message: impl Into<String>) -> Bad {
    Bad {
        path,
        message: message.into(),
    }
}

/// Checks the study as written and makes it a [`Study`]: every error names the place in the file
/// it is about.
pub(super) fn check(raw: RawStudy, base: &Path) -> Result<Study, Bad> {
    if raw.name.trim().is_empty() {
        return Err(bad(vec![Key("name")], "the study needs a name"));
    }
    let (repeat, adaptive) = check_repeat(raw.repeat)?;
    let device = match raw.device {
        None => Device {
            target: Target::Loop { size: 4 << 30 },
            scheduler: Vec::new(),
            read_ahead_kb: Vec::new(),
            iosched: BTreeMap::new(),
        },
        Some(d) => check_device(d)?,
    };
    if raw.filesystem.is_empty() {
        return Err(bad(vec![], "the study names no [[filesystem]]"));
    }
    let on_dir = matches!(device.target, Target::Dir { .. });
    if on_dir && raw.filesystem.len() > 1 {
        return Err(bad(
            vec![Key("filesystem"), Index(1)],
            "with [device] dir the study runs on the one filesystem mounted there: give one [[filesystem]], whose type is what is mounted",
        ));
    }
    let mut filesystems: Vec<Filesystem> = Vec::new();
    for (i, f) in raw.filesystem.into_iter().enumerate() {
        let here = |k| vec![Key("filesystem"), Index(i), Key(k)];
        if on_dir {
            check_on_dir(&f, here)?;
        } else if !KNOWN_TYPES.contains(&f.fs_type.as_str()) {
            return Err(bad(
                here("type"),
                format!(
                    "unknown filesystem type `{}` (fslab knows {})",
                    f.fs_type,
                    KNOWN_TYPES.join(", ")
                ),
            ));
        }
        let name = f.name.unwrap_or_else(|| f.fs_type.clone());
        if filesystems.iter().any(|g| g.name == name) {
            return Err(bad(
                here("name"),
                format!("two filesystems are named `{name}`: give each a distinct name"),
            ));
        }
        if f.fs_type == "tmpfs" && !f.mkfs.is_empty() {
            return Err(bad(
                here("mkfs"),
                "tmpfs has no mkfs; put its options (size=...) in `mount`",
            ));
        }
        let log = match f.log {
            None => None,
            Some(_) if f.fs_type == "tmpfs" => {
                return Err(bad(here("log"), "tmpfs has no device, so no log to put on another"));
            }
            Some(l) => Some(check_log(l, here("log"))?),
        };
        if let (Some(Log::Block { path, .. }), Target::Block { path: data, .. }) = (&log, &device.target) {
            if path == data {
                return Err(bad(
                    here("log"),
                    format!(
                        "the log cannot go on {}, the device the filesystem is made on",
                        path.display()
                    ),
                ));
            }
        }
        filesystems.push(Filesystem {
            log,
            name,
            fs_type: f.fs_type,
            mkfs: f.mkfs,
            mount: f.mount,
            fsck: f.fsck,
            scheduler: f.scheduler.map(OneOrMany::into_vec),
            warmup: f.warmup,
        });
    }
    if !device.iosched.is_empty() && device.scheduler.is_empty() && filesystems.iter().any(|f| f.scheduler.is_none()) {
        return Err(bad(
            vec![Key("device"), Key("iosched")],
            "iosched tunes the scheduler that `scheduler` sets: name one in [device] (or on every filesystem)",
        ));
    }
    if raw.workload.is_empty() {
        return Err(bad(vec![], "the study names no [[workload]]"));
    }
    let mut workloads: Vec<StudyWorkload> = Vec::new();
    for (i, w) in raw.workload.into_iter().enumerate() {
        let wl = check_workload(w, i, base)?;
        if workloads.iter().any(|o| o.name == wl.name) {
            return Err(bad(
                vec![Key("workload"), Index(i), Key("name")],
                format!("two workloads are named `{}`", wl.name),
            ));
        }
        workloads.push(wl);
    }
    let mut exclude = Vec::new();
    for (i, rule) in raw.exclude.into_iter().enumerate() {
        let mut r = BTreeMap::new();
        for (k, v) in rule {
            let here = vec![Key("exclude"), Index(i), Name(k.clone())];
            let v = scalar(&v).ok_or_else(|| bad(here, format!("`{k}` in an exclude rule must be one value")))?;
            r.insert(k, v);
        }
        if r.is_empty() {
            return Err(bad(
                vec![Key("exclude"), Index(i)],
                "an empty exclude rule would drop every cell",
            ));
        }
        exclude.push(r);
    }
    if on_dir {
        let given = [("fill", raw.fill.is_some()), ("age", raw.age.is_some())];
        if let Some((key, _)) = given.into_iter().find(|(_, given)| *given) {
            return Err(bad(
                vec![Key(key)],
                format!("[{key}] writes to a filesystem the lab made; with [device] dir the lab fills nothing it was not given"),
            ));
        }
    }
    let (fill, fill_to) = match raw.fill {
        None => (None, Vec::new()),
        Some(f) => {
            let (spec, levels) = check_fill(f, base)?;
            (Some(spec), levels)
        }
    };
    let age = match raw.age {
        None => None,
        Some(a) => {
            let here = |k| vec![Key("age"), Key(k)];
            let default = crate::age::AgeSpec::default();
            if a.churn < 0.0 {
                return Err(bad(here("churn"), "churn is a multiple of the first fill, 0 or more"));
            }
            Some(crate::age::AgeSpec {
                to: percent(&a.to).map_err(|m| bad(here("to"), m))?,
                churn: a.churn,
                seed: a.seed.unwrap_or(default.seed),
                sizes: a.sizes.unwrap_or(default.sizes),
                delete: match a.delete {
                    Some(d) => percent(&d).map_err(|m| bad(here("delete"), m))?,
                    None => default.delete,
                },
            })
        }
    };
    let quick = match raw.quick {
        None => Quick {
            repeat: 1,
            time: Duration::from_secs(5),
            loop_size: None,
            options: BTreeMap::new(),
            fill_to: None,
        },
        Some(q) => {
            let mut options = BTreeMap::new();
            for (name, table) in q.workload {
                if !workloads.iter().any(|w| w.name == name) {
                    return Err(bad(
                        vec![Key("quick"), Key("workload"), Name(name.clone())],
                        format!("[quick.workload] names `{name}`, which is not a workload of the study"),
                    ));
                }
                let mut opts = Vec::new();
                for (k, v) in table {
                    let here = vec![Key("quick"), Key("workload"), Name(name.clone()), Name(k.clone())];
                    opts.push((k, values(&v).map_err(|m| bad(here, m))?));
                }
                options.insert(name, opts);
            }
            Quick {
                repeat: q.repeat.max(1),
                time: q.time.map_or(Duration::from_secs(5), |t| t.0),
                loop_size: q.loop_size.map(|b| b.0),
                options,
                fill_to: match q.fill_to {
                    None => None,
                    Some(t) => Some(percent(&t).map_err(|m| bad(vec![Key("quick"), Key("fill_to")], m))?),
                },
            }
        }
    };
    let timeout = raw.timeout.map_or(Duration::from_secs(15 * 60), |t| t.0);
    if timeout.is_zero() {
        // A run is hung once it outlasts the timeout: at zero every run would be.
        return Err(bad(
            vec![Key("timeout")],
            "timeout = 0 would count every run as hung; give the longest a run may take (\"15m\")",
        ));
    }
    Ok(Study {
        name: raw.name,
        description: raw.description,
        repeat,
        adaptive,
        timeout,
        fresh: raw.fresh.unwrap_or(Fresh::Repeat),
        drop_caches: raw.drop_caches,
        warmup: raw.warmup,
        device,
        filesystems,
        workloads,
        exclude,
        fill,
        fill_to,
        age,
        quick,
        base: base.to_path_buf(),
    })
}

/// The runs per cell, and the adaptive repeat's limits when the study asks for one:
/// `repeat = 3`, or `repeat = { min = 3, max = 10, until_cov = "3%", budget = "20m" }`.
fn check_repeat(raw: Option<toml::Value>) -> Result<(u32, Option<Adaptive>), Bad> {
    let here = |k: &str| vec![Key("repeat"), Name(k.to_string())];
    let count = |v: &toml::Value, at: Vec<PathSeg>| match v {
        toml::Value::Integer(n) if (1..=i64::from(u32::MAX)).contains(n) => Ok(*n as u32),
        _ => Err(bad(at, "a number of runs, 1 or more")),
    };
    let table = match raw {
        None => return Ok((1, None)),
        Some(toml::Value::Table(t)) => t,
        Some(v) => {
            let n = count(&v, vec![Key("repeat")]).map_err(|_| {
                bad(
                    vec![Key("repeat")],
                    "repeat is a number of runs (1 or more), or { min, max, until_cov, budget }",
                )
            })?;
            return Ok((n, None));
        }
    };
    if let Some(k) = table
        .keys()
        .find(|k| !["min", "max", "until_cov", "budget"].contains(&k.as_str()))
    {
        return Err(bad(
            here(k),
            format!("unknown key `{k}` (an adaptive repeat has min, max, until_cov and budget)"),
        ));
    }
    let min = table.get("min").map_or(Ok(3), |v| count(v, here("min")))?;
    let max = count(
        table
            .get("max")
            .ok_or_else(|| bad(vec![Key("repeat")], "an adaptive repeat needs max"))?,
        here("max"),
    )?;
    if min < 2 {
        return Err(bad(
            here("min"),
            "an adaptive repeat needs 2 runs at least before it can judge their variation",
        ));
    }
    if max < min {
        return Err(bad(here("max"), format!("max ({max}) is below min ({min})")));
    }
    let until_cov = match table.get("until_cov") {
        Some(toml::Value::String(s)) => percent(s).map_err(|m| bad(here("until_cov"), m))?,
        Some(_) => return Err(bad(here("until_cov"), "until_cov is a percentage: \"3%\"")),
        None => return Err(bad(vec![Key("repeat")], "an adaptive repeat needs until_cov (\"3%\")")),
    };
    let budget = match table.get("budget") {
        None => None,
        Some(toml::Value::String(s)) => match s.parse::<fslab_engine::Span>() {
            Ok(b) if !b.0.is_zero() => Some(b.0),
            Ok(_) => {
                return Err(bad(
                    here("budget"),
                    "a budget of 0 allows no extra run: leave it out, or lower max",
                ))
            }
            Err(e) => return Err(bad(here("budget"), e.to_string())),
        },
        Some(_) => return Err(bad(here("budget"), "budget is a duration: \"20m\"")),
    };
    Ok((min, Some(Adaptive { max, until_cov, budget })))
}

/// `[[filesystem]]` on a `[device] dir` target: it names what is mounted there, and asks the lab
/// to make, mount or check nothing.
fn check_on_dir(f: &RawFilesystem, here: impl Fn(&'static str) -> Vec<PathSeg>) -> Result<(), Bad> {
    if f.fs_type.trim().is_empty() {
        return Err(bad(
            here("type"),
            "give the type of the filesystem mounted at [device] dir (\"nfs\", \"ceph\", \"lustre\", \"ext4\")",
        ));
    }
    let given = [
        ("mkfs", !f.mkfs.is_empty()),
        ("mount", !f.mount.is_empty()),
        ("fsck", f.fsck),
        ("log", f.log.is_some()),
        ("scheduler", f.scheduler.is_some()),
    ];
    match given.into_iter().find(|(_, given)| *given) {
        Some((key, _)) => Err(bad(
            here(key),
            format!("`{key}` acts on a filesystem the lab makes; with [device] dir the lab formats, mounts and tunes nothing it was not given"),
        )),
        None => Ok(()),
    }
}

fn check_device(d: RawDevice) -> Result<Device, Bad> {
    if let Some(dir) = &d.dir {
        let here = |k| vec![Key("device"), Key(k)];
        let given = [
            ("loop", d.loop_.is_some()),
            ("block", d.block.is_some()),
            ("destroy", d.destroy.is_some()),
            ("scheduler", d.scheduler.is_some()),
            ("read_ahead_kb", d.read_ahead_kb.is_some()),
            ("iosched", d.iosched.is_some()),
        ];
        if let Some((key, _)) = given.into_iter().find(|(_, given)| *given) {
            return Err(bad(
                here(key),
                format!("`{key}` cannot go with `dir`: the lab formats, mounts and tunes nothing it was not given"),
            ));
        }
        if !dir.is_absolute() {
            return Err(bad(
                here("dir"),
                format!(
                    "`{}` is relative: give the absolute path, the same on every host (\"/mnt/shared/fslab\")",
                    dir.display()
                ),
            ));
        }
        return Ok(Device {
            target: Target::Dir { path: dir.clone() },
            scheduler: Vec::new(),
            read_ahead_kb: Vec::new(),
            iosched: BTreeMap::new(),
        });
    }
    let target = match (d.loop_, d.block) {
        (Some(_), Some(_)) => {
            return Err(bad(
                vec![Key("device"), Key("block")],
                "give either `loop` or `block`, not both",
            ))
        }
        (Some(l), None) => {
            if l.size.0 < 16 << 20 {
                return Err(bad(
                    vec![Key("device"), Key("loop"), Key("size")],
                    "a loop image needs at least 16M (xfs and btrfs refuse smaller)",
                ));
            }
            Target::Loop { size: l.size.0 }
        }
        (None, Some(path)) => Target::Block {
            path,
            destroy: d.destroy.clone(),
        },
        (None, None) => Target::Loop { size: 4 << 30 },
    };
    if d.destroy.is_some() && !matches!(target, Target::Block { .. }) {
        return Err(bad(
            vec![Key("device"), Key("destroy")],
            "`destroy` names the block device the study may format; there is no `block`",
        ));
    }
    let scheduler = d.scheduler.map(OneOrMany::into_vec).unwrap_or_default();
    let read_ahead_kb = d.read_ahead_kb.map(OneOrMany::into_vec).unwrap_or_default();
    let mut iosched = BTreeMap::new();
    for (name, value) in d.iosched.unwrap_or_default() {
        let here = vec![Key("device"), Key("iosched"), Name(name.clone())];
        if name.is_empty() || name.starts_with('.') || name.contains('/') {
            return Err(bad(
                here,
                format!("`{name}` is not a tunable's name (a file in queue/iosched/)"),
            ));
        }
        let value = match value {
            toml::Value::Integer(_) | toml::Value::String(_) => scalar(&value).expect("a scalar"),
            _ => return Err(bad(here, format!("`{name}` is a number or a string"))),
        };
        iosched.insert(name, value);
    }
    Ok(Device {
        target,
        scheduler,
        read_ahead_kb,
        iosched,
    })
}

/// `log = { size = "64m" }` or `log = { block = "/dev/sdb2", destroy = "/dev/sdb2" }`.
fn check_log(l: RawLog, here: Vec<PathSeg>) -> Result<Log, Bad> {
    match (l.size, l.block) {
        (Some(size), None) if l.destroy.is_none() => {
            if size.0 < 1 << 20 {
                return Err(bad(here, "an external log needs at least 1M"));
            }
            Ok(Log::Loop { size: size.0 })
        }
        (None, Some(path)) => Ok(Log::Block {
            path,
            destroy: l.destroy,
        }),
        (Some(_), None) => Err(bad(
            here,
            "`destroy` names the block device the log may go on; there is no `block`",
        )),
        (Some(_), Some(_)) => Err(bad(
            here,
            "give the log either a `size` (a loop image) or a `block`, not both",
        )),
        (None, None) => Err(bad(
            here,
            "give the log a `size` (\"64m\": a loop image) or a `block` with `destroy`",
        )),
    }
}

/// The fill as written, and its levels (0 for `"empty"`).
fn check_fill(f: RawFill, base: &Path) -> Result<(crate::fill::FillSpec, Vec<f64>), Bad> {
    let here = |k| vec![Key("fill"), Key(k)];
    let mut levels: Vec<f64> = Vec::new();
    for t in f.to.into_vec() {
        let level = if t.trim() == "empty" {
            0.0
        } else {
            percent(&t).map_err(|m| bad(here("to"), format!("{m}, or \"empty\"")))?
        };
        if levels.contains(&level) {
            return Err(bad(here("to"), format!("`{t}` is named twice")));
        }
        levels.push(level);
    }
    let Some(to) = levels.iter().copied().reduce(f64::max).filter(|&t| t > 0.0) else {
        return Err(bad(here("to"), "name at least one level to fill to, e.g. \"40%\""));
    };
    let from = match f.from.split_once(':') {
        Some(("tar", p)) => crate::fill::FillSource::Tar(base.join(p)),
        Some(("synthetic", "kernel-tree")) => crate::fill::FillSource::SyntheticKernelTree,
        _ => {
            return Err(bad(
                here("from"),
                format!("`{}`: give \"tar:PATH\" or \"synthetic:kernel-tree\"", f.from),
            ))
        }
    };
    if f.parallel == 0 {
        return Err(bad(here("parallel"), "parallel must be at least 1"));
    }
    if f.layout.contains(&0) {
        return Err(bad(
            here("layout"),
            "every level of the layout needs at least one directory",
        ));
    }
    let spec = crate::fill::FillSpec {
        to,
        from,
        parallel: f.parallel,
        layout: if f.layout.is_empty() { vec![1] } else { f.layout },
        seed: f.seed.unwrap_or(1),
    };
    Ok((spec, levels))
}

/// "40%" or 0.4 as a fraction.
fn percent(s: &str) -> Result<f64, String> {
    let v = match s.trim().strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|p| p / 100.0),
        None => s.trim().parse::<f64>(),
    }
    .map_err(|_| format!("`{s}` is not a percentage (write e.g. \"40%\")"))?;
    if !(0.0..=1.0).contains(&v) || v == 0.0 {
        return Err(format!("`{s}` must be above 0% and at most 100%"));
    }
    Ok(v)
}

/// The keys a `[[workload]]` may have besides the tool's own options.
const WORKLOAD_KEYS: [&str; 4] = ["name", "vary", "args", "mpi"];

fn check_workload(mut w: toml::Table, i: usize, base: &Path) -> Result<StudyWorkload, Bad> {
    let here = |k: &str| vec![Key("workload"), Index(i), Name(k.to_string())];
    let tools: Vec<Tool> = Tool::ALL.into_iter().filter(|t| w.contains_key(t.key())).collect();
    let tool = match tools.as_slice() {
        [t] => *t,
        [] => {
            let tools = Tool::ALL.map(Tool::key).join(", ");
            if let Some(k) = w.keys().find(|k| !WORKLOAD_KEYS.contains(&k.as_str())) {
                return Err(bad(
                    here(k),
                    format!("unknown key `{k}`: a workload is one of {tools}, with name, vary, args and mpi"),
                ));
            }
            return Err(bad(
                vec![Key("workload"), Index(i)],
                format!("the workload names no tool: give one of {tools}"),
            ));
        }
        [a, b, ..] => {
            return Err(bad(
                here(b.key()),
                format!(
                    "a workload runs one tool, but this one names {} and {}",
                    a.key(),
                    b.key()
                ),
            ))
        }
    };
    if let Some(k) = w
        .keys()
        .find(|k| !WORKLOAD_KEYS.contains(&k.as_str()) && k.as_str() != tool.key())
    {
        return Err(bad(
            here(k),
            format!("unknown key `{k}` (a workload has name, vary, args, mpi and one tool)"),
        ));
    }
    let name = match w.remove("name") {
        Some(toml::Value::String(s)) if !s.trim().is_empty() => s,
        Some(_) => return Err(bad(here("name"), "name must be a non-empty string")),
        None => tool.key().to_string(),
    };
    let mut main = None;
    let mut options = Vec::new();
    match w.remove(tool.key()).expect("present") {
        toml::Value::String(s) => main = Some(base.join(s)),
        toml::Value::Table(t) => {
            for (k, v) in t {
                let path = vec![Key("workload"), Index(i), Name(tool.key().to_string()), Name(k.clone())];
                if matches!(k.as_str(), "file" | "profile") {
                    let toml::Value::String(s) = v else {
                        return Err(bad(path, format!("`{k}` is a path")));
                    };
                    main = Some(base.join(s));
                    continue;
                }
                options.push((k, values(&v).map_err(|m| bad(path, m))?));
            }
        }
        _ => {
            return Err(bad(
                here(tool.key()),
                format!("`{}` is a file (\"profiles/x.ffsb\") or a table of options", tool.key()),
            ))
        }
    }
    match (tool, &main) {
        (Tool::Ffsb, None) => return Err(bad(here("ffsb"), "ffsb needs a profile: ffsb = \"PROFILE\"")),
        (Tool::Dbench | Tool::Sysbench | Tool::Iozone | Tool::Ior | Tool::Mdtest, Some(_)) => {
            return Err(bad(
                here(tool.key()),
                format!("{} takes a table of options, not a file", tool.key()),
            ))
        }
        _ => {}
    }
    if let Some(m) = &main {
        if !m.is_file() {
            return Err(bad(here(tool.key()), format!("{} does not exist", m.display())));
        }
    }
    if let Some(v) = w.remove("vary") {
        let toml::Value::Table(t) = v else {
            return Err(bad(here("vary"), "vary is a table of option = [values]"));
        };
        for (k, v) in t {
            let path = vec![Key("workload"), Index(i), Key("vary"), Name(k.clone())];
            if options.iter().any(|(o, _)| *o == k) {
                return Err(bad(
                    path,
                    format!("`{k}` is given twice (in the tool's options and in vary)"),
                ));
            }
            options.push((k, values(&v).map_err(|m| bad(path, m))?));
        }
    }
    let args = match w.remove("args") {
        None => Vec::new(),
        Some(toml::Value::String(s)) => s.split_whitespace().map(str::to_string).collect(),
        Some(_) => return Err(bad(here("args"), "args is one string of extra arguments")),
    };
    let mpi = match w.remove("mpi") {
        None => None,
        Some(v) => Some(crate::mpi::read(v, base).map_err(|m| bad(here("mpi"), m))?),
    };
    Ok(StudyWorkload {
        name,
        tool,
        main,
        options,
        args,
        mpi,
    })
}

/// An option's values: one scalar, or a non-empty list of scalars (an axis).
fn values(v: &toml::Value) -> Result<Vec<String>, String> {
    match v {
        toml::Value::Array(a) if a.is_empty() => Err("an empty list gives no cells".to_string()),
        toml::Value::Array(a) => a
            .iter()
            .map(|x| scalar(x).ok_or_else(|| "a list holds single values (strings, numbers, booleans)".to_string()))
            .collect(),
        _ => scalar(v)
            .map(|s| vec![s])
            .ok_or_else(|| "an option is a value or a list of values".to_string()),
    }
}

fn scalar(v: &toml::Value) -> Option<String> {
    match v {
        toml::Value::String(s) => Some(s.clone()),
        toml::Value::Integer(i) => Some(i.to_string()),
        toml::Value::Float(f) => Some(f.to_string()),
        toml::Value::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}
