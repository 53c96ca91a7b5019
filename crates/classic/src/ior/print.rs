//! IOR 4.0's text: its header and options block, the per-iteration table, the `-v` lines, and
//! the summary (`Max Write`/`Max Read` with `-v`, `Summary of all tests`), in its default layout,
//! CSV or JSON (`-O summaryFormat`).

use super::options::{Api, Format, Options};
use super::run::{Access, Job, Point, Rep};
use crate::hpc;
use std::fmt::Write;

const MIB: f64 = 1048576.0;
const MB: f64 = 1_000_000.0;

/// IOR's `%-20s: value` line.
fn kv(out: &mut String, key: &str, value: impl std::fmt::Display) {
    let _ = writeln!(out, "{key:<20}: {value}");
}

/// IOR's HumanReadable in powers of two ("1 MiB", "1.50 GiB", "65536 bytes").
pub fn human(v: u64) -> String {
    for (unit, name) in [(1u64 << 40, "TiB"), (1 << 30, "GiB"), (1 << 20, "MiB")] {
        if v >= unit {
            return if !v.is_multiple_of(unit) {
                format!("{:.2} {name}", v as f64 / unit as f64)
            } else {
                format!("{} {name}", v / unit)
            };
        }
    }
    format!("{v} bytes")
}

/// IOR's PPDouble: left-justified in 10, 6 decimals under 1, 2 under 3600, else none.
fn pp(out: &mut String, v: f64, append: &str) {
    if v < 0.0 {
        let _ = write!(out, "   -      {append}");
        return;
    }
    let precision = if v < 1.0 {
        6
    } else if v < 3600.0 {
        2
    } else {
        0
    };
    let _ = write!(out, "{v:<10.precision$}{append}");
}

/// The header, the test's start and its options block, up to the table's header.
pub fn preamble(job: &Job, began: &str) -> String {
    let o = job.o;
    let mut s = String::new();
    if o.format != Format::Default {
        return s;
    }
    if o.api == Api::Mmap {
        // IOR 4.0's MMAP back-end borrows these calls from POSIX and says so first.
        for call in ["statfs", "mkdir", "rmdir", "access", "stat"] {
            let _ = writeln!(s, "WARNING: assuming POSIX-based backend for MMAP {call} call");
        }
    }
    s.push_str("IOR-4.0.0: MPI Coordinated Test of Parallel I/O\n");
    kv(&mut s, "Began", began);
    kv(&mut s, "Command line", &o.command_line);
    kv(&mut s, "Machine", hpc::machine());
    kv(&mut s, "TestID", 0);
    kv(&mut s, "StartTime", hpc::ctime_now());
    s.push_str(&hpc::filesystem_lines(&job.file(0)));
    if o.verbose >= 1 {
        kv(&mut s, "Participating tasks", job.tasks());
        if o.reorder {
            s.push_str("Using reorderTasks '-C' (useful to avoid read cache in client)\n");
        }
    }
    s.push_str("\nOptions: \n");
    for (k, v) in options(job) {
        kv(&mut s, k, v);
    }
    s.push_str("\nResults: \n");
    s
}

/// The table's header, before the first repetition.
pub fn table_header(o: &Options) -> String {
    let mut s = String::new();
    match o.format {
        Format::Csv => s.push_str(
            "access,bw(MiB/s),IOPS,Latency,block(KiB),xfer(KiB),open(s),wr/rd(s),close(s),total(s),numTasks,iter\n",
        ),
        Format::Json => {}
        Format::Default => s.push_str(TABLE),
    }
    s
}

const TABLE: &str = concat!(
    "\naccess    bw(MiB/s)  IOPS       Latency(s)  block(KiB) xfer(KiB)  open(s)    wr/rd(s)   close(s)   total(s)   iter\n",
    "------    ---------  ----       ----------  ---------- ---------  --------   --------   --------   --------   ----\n"
);

/// IOR's `Options:` block, key by key.
fn options(job: &Job) -> Vec<(&'static str, String)> {
    let o = job.o;
    let mut v = vec![
        ("api", o.api.name().to_string()),
        ("apiVersion", String::new()),
        ("test filename", job.root.display().to_string()),
        (
            "access",
            if o.file_per_proc {
                "file-per-process"
            } else {
                "single-shared-file"
            }
            .into(),
        ),
        ("type", "independent".into()),
        ("segments", o.segments.to_string()),
        (
            "ordering in a file",
            if o.random { "random" } else { "sequential" }.into(),
        ),
    ];
    if o.reorder {
        v.push(("ordering inter file", "constant task offset".into()));
        v.push(("task offset", o.task_offset.to_string()));
    } else {
        v.push(("ordering inter file", "no tasks offsets".into()));
    }
    v.extend([
        ("nodes", job.nodes.nodes.to_string()),
        ("tasks", job.tasks().to_string()),
        ("clients per node", job.nodes.on_node0.to_string()),
        ("repetitions", o.reps.to_string()),
        ("xfersize", human(o.transfer)),
        ("blocksize", human(o.block)),
        ("aggregate filesize", human(job.expected())),
    ]);
    if o.verbose > 0 {
        v.push(("verbose", o.verbose.to_string()));
    }
    if o.deadline > 0 {
        v.push(("stonewallingTime", o.deadline.to_string()));
        v.push(("stoneWallingWearOut", "0".into()));
    }
    v
}

/// `-v`: the line before a phase's transfers.
pub fn commencing(o: &Options, access: Access) -> String {
    if o.verbose < 1 || o.format != Format::Default {
        return String::new();
    }
    match access {
        Access::Write => format!("Commencing write performance test: {}\n", hpc::ctime_now()),
        Access::Read => format!("Commencing read performance test: {}\n\n", hpc::ctime_now()),
    }
}

/// One row of the table.
pub fn point(job: &Job, p: &Point) -> String {
    let o = job.o;
    let mut s = String::new();
    match o.format {
        Format::Default => {
            let _ = write!(s, "{:<10}", p.access.name());
            pp(&mut s, p.bw / MIB, " ");
            pp(&mut s, p.iops, " ");
            pp(&mut s, p.latency, "  ");
            pp(&mut s, o.block as f64 / 1024.0, " ");
            pp(&mut s, o.transfer as f64 / 1024.0, " ");
            pp(&mut s, p.open_secs, " ");
            pp(&mut s, p.xfer_secs, " ");
            pp(&mut s, p.close_secs, " ");
            pp(&mut s, p.total_secs, " ");
            let _ = writeln!(s, "{:<4}", p.rep);
        }
        Format::Csv => {
            let _ = write!(s, "{},", p.access.name());
            for v in [
                p.bw / MIB,
                p.iops,
                p.latency,
                o.block as f64 / 1024.0,
                o.transfer as f64 / 1024.0,
                p.open_secs,
                p.xfer_secs,
                p.close_secs,
                p.total_secs,
            ] {
                let _ = write!(s, "{v:.4},");
            }
            let _ = writeln!(s, "{},{}", job.tasks(), p.rep);
        }
        Format::Json => {}
    }
    s
}

/// `-v`: the time removing the files took.
pub fn removed(o: &Options, secs: f64, rep: u32) -> String {
    if o.verbose < 1 || o.format != Format::Default {
        return String::new();
    }
    let mut s = String::from(
        "remove    -          -          -           -          -          -          -          -          ",
    );
    pp(&mut s, secs, " ");
    let _ = writeln!(s, "{rep:<4}");
    s
}

/// Max, min, mean and standard deviation (over n) of a list.
pub struct Stats {
    pub max: f64,
    pub min: f64,
    pub mean: f64,
    pub sd: f64,
}

impl Stats {
    pub fn of(v: &[f64]) -> Stats {
        let n = v.len() as f64;
        let mean = v.iter().sum::<f64>() / n;
        Stats {
            max: v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            min: v.iter().copied().fold(f64::INFINITY, f64::min),
            mean,
            sd: (v.iter().map(|x| (mean - x).powi(2)).sum::<f64>() / n).sqrt(),
        }
    }
}

fn points(reps: &[Rep], access: Access) -> Vec<&Point> {
    reps.iter()
        .filter_map(|r| match access {
            Access::Write => r.write.as_ref(),
            Access::Read => r.read.as_ref(),
        })
        .collect()
}

/// The summary of one access over the repetitions: bandwidth and operations per second (over
/// each repetition's total time), and the mean time.
pub struct Summary {
    pub bw: Stats,
    pub ops: Stats,
    pub mean_secs: f64,
    pub bytes: u64,
}

pub fn summary(job: &Job, reps: &[Rep], access: Access) -> Option<Summary> {
    let ps = points(reps, access);
    let first = ps.first()?;
    let bw: Vec<f64> = ps.iter().map(|p| p.bytes as f64 / p.total_secs).collect();
    let ops: Vec<f64> = ps
        .iter()
        .map(|p| p.bytes as f64 / job.o.transfer as f64 / p.total_secs)
        .collect();
    let times: Vec<f64> = ps.iter().map(|p| p.total_secs).collect();
    Some(Summary {
        bw: Stats::of(&bw),
        ops: Stats::of(&ops),
        mean_secs: times.iter().sum::<f64>() / times.len() as f64,
        bytes: first.bytes,
    })
}

/// The end: `-v`'s Max Write/Read, the `Summary of all tests` table and `Finished`.
pub fn ending(job: &Job, reps: &[Rep]) -> String {
    let o = job.o;
    let mut s = String::new();
    if o.format == Format::Json {
        return String::new();
    }
    if o.format == Format::Csv {
        return s;
    }
    if o.verbose >= 1 {
        for (access, label) in [(Access::Write, "Max Write: "), (Access::Read, "Max Read:  ")] {
            if let Some(sum) = summary(job, reps, access) {
                let _ = writeln!(
                    s,
                    "{label}{:.2} MiB/sec ({:.2} MB/sec)",
                    sum.bw.max / MIB,
                    sum.bw.max / MB
                );
            }
        }
    }
    s.push_str("\nSummary of all tests:");
    let _ = write!(
        s,
        "\n{:<9} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>13}",
        "Operation",
        "Max(MiB)",
        "Min(MiB)",
        "Mean(MiB)",
        "StdDev",
        "Max(OPs)",
        "Min(OPs)",
        "Mean(OPs)",
        "StdDev",
        "Mean(s)",
        "Stonewall(s)",
        "Stonewall(MiB)"
    );
    s.push_str(" Test# #Tasks tPN reps fPP reord reordoff reordrand seed segcnt ");
    let _ = writeln!(
        s,
        "{:>8} {:>8} {:>9} {:>5} RefNum",
        " blksiz", "xsize", "aggs(MiB)", "API"
    );
    for access in [Access::Write, Access::Read] {
        let Some(sum) = summary(job, reps, access) else {
            continue;
        };
        let _ = write!(s, "{:<9} ", access.name());
        for v in [sum.bw.max, sum.bw.min, sum.bw.mean, sum.bw.sd] {
            let _ = write!(s, "{:10.2} ", v / MIB);
        }
        for v in [sum.ops.max, sum.ops.min, sum.ops.mean, sum.ops.sd] {
            let _ = write!(s, "{v:10.2} ");
        }
        let _ = write!(s, "{:10.5} {:>10} {:>13} ", sum.mean_secs, "NA", "NA");
        let _ = writeln!(
            s,
            "{:5} {:6} {:3} {:4} {:3} {:5} {:8} {:9} {:4} {:6} {:8} {:8} {:9.1} {:>3} {:6}",
            0,
            job.tasks(),
            job.nodes.on_node0,
            o.reps,
            u8::from(o.file_per_proc),
            u8::from(o.reorder),
            o.task_offset,
            0,
            0,
            o.segments,
            o.block,
            o.transfer,
            sum.bytes as f64 / MIB,
            o.api.name(),
            0
        );
    }
    kv(&mut s, "Finished", hpc::ctime_now());
    s
}

/// A JSON value whose objects keep their keys in order (IOR's order).
enum J {
    Obj(Vec<(&'static str, J)>),
    Arr(Vec<J>),
    Str(String),
    Num(String),
}

fn jstr(v: impl std::fmt::Display) -> J {
    J::Str(v.to_string())
}

fn jint(v: impl std::fmt::Display) -> J {
    J::Num(v.to_string())
}

fn jf(v: f64) -> J {
    if v.is_finite() {
        J::Num(format!("{v:.4}"))
    } else {
        J::Str(format!("{v:.4}"))
    }
}

impl J {
    fn write(&self, out: &mut String, indent: usize) {
        let pad = |n: usize| "  ".repeat(n);
        match self {
            J::Str(s) => {
                let _ = write!(out, "{}", serde_json::Value::String(s.clone()));
            }
            J::Num(n) => out.push_str(n),
            J::Arr(items) => {
                out.push_str("[\n");
                for (i, it) in items.iter().enumerate() {
                    out.push_str(&pad(indent + 1));
                    it.write(out, indent + 1);
                    out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
                }
                let _ = write!(out, "{}]", pad(indent));
            }
            J::Obj(fields) => {
                out.push_str("{\n");
                for (i, (k, v)) in fields.iter().enumerate() {
                    let _ = write!(out, "{}\"{k}\": ", pad(indent + 1));
                    v.write(out, indent + 1);
                    out.push_str(if i + 1 < fields.len() { ",\n" } else { "\n" });
                }
                let _ = write!(out, "{}}}", pad(indent));
            }
        }
    }
}

/// `-O summaryFormat=JSON`: IOR's document, with its keys in its order and nesting (laid out
/// as ordinary indented JSON, where IOR's own spacing is irregular).
pub fn json(job: &Job, reps: &[Rep], began: &str, start: &str) -> String {
    let o = job.o;
    let fs = hpc::filesystem_lines(&job.file(0));
    let field = |name: &str| {
        fs.lines()
            .find_map(|l| l.strip_prefix(name))
            .map(|r| r.trim_start_matches([' ', ':']).to_string())
            .unwrap_or_default()
    };
    let fsline = field("FS");
    let part = |after: &str, until: &str| {
        fsline
            .split_once(after)
            .map(|(_, r)| r.split(until).next().unwrap_or("").trim().to_string())
            .unwrap_or_default()
    };
    let capacity = fsline.split("   ").next().unwrap_or("").to_string();
    let results: Vec<J> = reps
        .iter()
        .flat_map(|r| [r.write.as_ref(), r.read.as_ref()])
        .flatten()
        .map(|p| {
            J::Obj(vec![
                ("access", jstr(p.access.name())),
                ("bwMiB", jf(p.bw / MIB)),
                ("blockKiB", jf(o.block as f64 / 1024.0)),
                ("xferKiB", jf(o.transfer as f64 / 1024.0)),
                ("iops", jf(p.iops)),
                ("latency", jf(p.latency)),
                ("openTime", jf(p.open_secs)),
                ("wrRdTime", jf(p.xfer_secs)),
                ("closeTime", jf(p.close_secs)),
                ("totalTime", jf(p.total_secs)),
            ])
        })
        .collect();
    let b = |v: bool| jint(u8::from(v));
    let parameters = J::Obj(vec![
        ("testID", jint(0)),
        ("refnum", jint(0)),
        ("api", jstr(o.api.name())),
        ("platform", jstr(format!("{}(Linux)", job.ranks.host()))),
        ("testFileName", jstr(job.root.display())),
        ("deadlineForStonewall", jint(o.deadline)),
        ("stoneWallingWearOut", jint(0)),
        ("maxTimeDuration", jint(0)),
        ("outlierThreshold", jint(0)),
        ("options", jstr("(null)")),
        ("dryRun", jint(0)),
        ("nodes", jint(job.nodes.nodes)),
        ("memoryPerTask", jint(0)),
        ("memoryPerNode", jint(0)),
        ("tasksPerNode", jint(job.nodes.on_node0)),
        ("repetitions", jint(o.reps)),
        ("multiFile", jint(0)),
        ("interTestDelay", jint(0)),
        ("fsync", b(o.fsync)),
        ("fsyncperwrite", jint(0)),
        ("useExistingTestFile", jint(0)),
        ("uniqueDir", jint(0)),
        ("singleXferAttempt", jint(0)),
        ("readFile", b(o.read)),
        ("writeFile", b(o.write)),
        ("filePerProc", b(o.file_per_proc)),
        ("reorderTasks", b(o.reorder)),
        ("reorderTasksRandom", jint(0)),
        ("reorderTasksRandomSeed", jint(0)),
        ("randomOffset", b(o.random)),
        ("checkWrite", jint(0)),
        ("checkRead", jint(0)),
        ("dataPacketType", jint(0)),
        ("keepFile", b(o.keep)),
        ("keepFileWithError", jint(0)),
        ("warningAsErrors", jint(0)),
        ("verbose", jint(o.verbose)),
        ("data packet type", jstr("g")),
        ("setTimeStampSignature/incompressibleSeed", jint(0)),
        ("collective", jint(0)),
        ("segmentCount", jint(o.segments)),
        ("transferSize", jint(o.transfer)),
        ("blockSize", jint(o.block)),
    ]);
    let opts = J::Obj(
        options(job)
            .into_iter()
            .map(|(k, v)| match v.parse::<u64>() {
                Ok(n) if !matches!(k, "apiVersion") => (k, jint(n)),
                _ => (k, jstr(v)),
            })
            .collect(),
    );
    let test = J::Obj(vec![
        ("TestID", jint(0)),
        ("StartTime", jstr(start)),
        ("Path", jstr(job.file(0).display())),
        ("Capacity", jstr(capacity)),
        ("Used Capacity", jstr(part("Used FS:", "   "))),
        ("Inodes", jstr(part("Inodes:", "   "))),
        ("Used Inodes", jstr(part("Used Inodes:", "   "))),
        ("Parameters", parameters),
        ("Options", opts),
        ("Results", J::Arr(results)),
    ]);
    let summary: Vec<J> = [Access::Write, Access::Read]
        .into_iter()
        .filter_map(|a| summary(job, reps, a).map(|s| (a, s)))
        .map(|(a, s)| {
            J::Obj(vec![
                ("operation", jstr(a.name())),
                ("API", jstr(o.api.name())),
                ("TestID", jint(0)),
                ("ReferenceNumber", jint(0)),
                ("segmentCount", jint(o.segments)),
                ("blockSize", jint(o.block)),
                ("transferSize", jint(o.transfer)),
                ("numTasks", jint(job.tasks())),
                ("tasksPerNode", jint(job.nodes.on_node0)),
                ("repetitions", jint(o.reps)),
                ("filePerProc", b(o.file_per_proc)),
                ("reorderTasks", b(o.reorder)),
                ("taskPerNodeOffset", jint(o.task_offset)),
                ("reorderTasksRandom", jint(0)),
                ("reorderTasksRandomSeed", jint(0)),
                ("bwMaxMIB", jf(s.bw.max / MIB)),
                ("bwMinMIB", jf(s.bw.min / MIB)),
                ("bwMeanMIB", jf(s.bw.mean / MIB)),
                ("bwStdMIB", jf(s.bw.sd / MIB)),
                ("OPsMax", jf(s.ops.max)),
                ("OPsMin", jf(s.ops.min)),
                ("OPsMean", jf(s.ops.mean)),
                ("OPsSD", jf(s.ops.sd)),
                ("MeanTime", jf(s.mean_secs)),
                ("xsizeMiB", jf(s.bytes as f64 / MIB)),
            ])
        })
        .collect();
    let doc = J::Obj(vec![
        ("Version", jstr("4.0.0")),
        ("Began", jstr(began)),
        ("Command line", jstr(&o.command_line)),
        ("Machine", jstr(hpc::machine())),
        ("tests", J::Arr(vec![test])),
        ("summary", J::Arr(summary)),
        ("Finished", jstr(hpc::ctime_now())),
    ]);
    let mut out = String::new();
    doc.write(&mut out, 0);
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_laid_out_as_ior_s() {
        assert_eq!(human(65536), "65536 bytes");
        assert_eq!(human(1 << 20), "1 MiB");
        assert_eq!(human(3 << 29), "1.50 GiB");
        let mut s = String::new();
        pp(&mut s, 3846.2, " ");
        pp(&mut s, 819.48, " ");
        pp(&mut s, 0.00006, "  ");
        pp(&mut s, -1.0, " ");
        assert_eq!(s, "3846       819.48     0.000060       -       ");
        let st = Stats::of(&[3846.22, 819.48]);
        assert!((st.mean - 2332.85).abs() < 0.01 && (st.sd - 1513.37).abs() < 0.01);
    }
}
