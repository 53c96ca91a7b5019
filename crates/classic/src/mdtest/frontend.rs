//! `fslab mdtest [mdtest options]`: mdtest on the front-end contract. Each rank of the job runs
//! this front-end with its handle in [`Context::ranks`]; rank 0 prints.

use super::options::{Options, USAGE};
use super::run::{self, Job, Report, FILE_CREATE, OPERATIONS, TREE_CREATE, TREE_REMOVE};
use crate::contract::{Call, Common, Context, Error, FrontEnd, Outcome, Plan, Request, Tool};
use crate::hpc::{self, Clock, Nodes};
use fslab_engine::Metric;
use std::fmt::Write;
use std::path::PathBuf;

/// mdtest's options and where it works.
pub struct Mdtest {
    opts: Options,
    dir: PathBuf,
    root: PathBuf,
}

/// Reads `fslab mdtest`'s command line; `-d` lies beneath `--dir` (or the current directory).
pub fn parse(args: &[String]) -> Result<(Box<dyn FrontEnd>, Common), Error> {
    let (opts, common, dir, root) = hpc::parse_command("mdtest", "-d", args, Options::parse, |o| &o.dir)?;
    Ok((Box::new(Mdtest { opts, dir, root }), common))
}

/// A study's mdtest workload: its extra arguments (`-F -C`), then its options, where `items`,
/// `depth` and `branch` are `-n`, `-z` and `-b` and one-letter keys are `-k value`.
pub fn calls(r: &Request) -> Vec<Call> {
    hpc::study_calls("mdtest", r, &[("items", "n"), ("depth", "z"), ("branch", "b")])
}

impl Mdtest {
    /// What one rank does per iteration, as the calls it makes.
    fn steps(&self) -> Vec<(String, String)> {
        let o = &self.opts;
        let n = o.items;
        let mut v = vec![];
        let write = if o.write_bytes > 0 {
            format!(
                "; lseek(0); write({}){}",
                o.write_bytes,
                if o.sync { "; fsync" } else { "" }
            )
        } else {
            String::new()
        };
        let read = if o.read_bytes > 0 {
            format!("; lseek(0); read({})", o.read_bytes)
        } else {
            String::new()
        };
        if o.create {
            v.push((
                "tree creation".into(),
                format!(
                    "mkdir(test-dir.I-0) (rank 0); barrier; {} × mkdir(0775) ({}); barrier",
                    o.tree_dirs,
                    if o.unique { "each rank its tree" } else { "rank 0" }
                ),
            ));
        }
        let mut phase = |on: bool, name: &str, what: String| {
            if on {
                v.push((name.to_string(), format!("barrier; {what}; barrier")));
            }
        };
        if o.dirs {
            phase(o.create, "directory creation", format!("{n} × mkdir(0775)"));
            phase(o.stat, "directory stat", format!("{n} × stat"));
            phase(o.read, "directory read", "nothing (mdtest reads no directories)".into());
            phase(o.rename && n > 1, "directory rename", format!("{n} × rename"));
            phase(o.remove, "directory removal", format!("{n} × rmdir"));
        }
        if o.files {
            phase(
                o.create,
                "file creation",
                format!("{n} × (open(O_CREAT|O_RDWR, 0664){write}; close)"),
            );
            phase(o.stat, "file stat", format!("{n} × stat"));
            phase(o.read, "file read", format!("{n} × (open(O_RDWR){read}; close)"));
            phase(o.remove, "file removal", format!("{n} × unlink"));
        }
        if o.remove {
            v.push((
                "tree removal".into(),
                format!(
                    "barrier; {} × rmdir; barrier; rmdir(test-dir.I-0) (rank 0)",
                    o.tree_dirs
                ),
            ));
        }
        v
    }

    fn header(&self, nodes: &Nodes, tasks: usize) -> String {
        let o = &self.opts;
        let mut s = format!("-- started at {} --\n\n", hpc::stamp_now());
        let _ = writeln!(
            s,
            "mdtest-4.0.0 was launched with {tasks} total task(s) on {} node(s)",
            nodes.nodes
        );
        let _ = writeln!(s, "Command line used: {}", o.command_line);
        for w in o.warnings() {
            let _ = writeln!(s, "WARNING: {w}");
        }
        s.push_str(&hpc::filesystem_lines(&self.root));
        let map: String = nodes.map.iter().map(|&m| if m { '1' } else { '0' }).collect();
        let _ = writeln!(s, "Nodemap: {map}");
        if o.stride > 0 {
            // mdtest prints it through its verbose header, naming its source line.
            let _ = writeln!(
                s,
                "V-0: Rank   0 Line  2537 Shifting ranks by {} for each phase.",
                o.stride
            );
        }
        let all = tasks as u64 * o.items;
        let _ = match (o.files, o.dirs) {
            (true, true) => writeln!(s, "{tasks} tasks, {all} files/directories"),
            (true, false) => writeln!(s, "{tasks} tasks, {all} files"),
            _ => writeln!(s, "{tasks} tasks, {all} directories"),
        };
        s
    }

    /// mdtest's SUMMARY rate table and its end.
    fn summary(&self, report: &Report) -> String {
        let o = &self.opts;
        let mut s = format!("\nSUMMARY rate: (of {} iterations)\n", o.iterations);
        s.push_str("   Operation                     Max            Min           Mean        Std Dev\n");
        s.push_str("   ---------                     ---            ---           ----        -------\n");
        let (start, stop) = match (o.files, o.dirs) {
            (true, false) => (FILE_CREATE, TREE_CREATE),
            (false, true) => (0, FILE_CREATE),
            _ => (0, TREE_CREATE),
        };
        for op in (start..stop).filter(|&op| op != run::DIR_READ) {
            let [max, min, mean, sd] = run::summary_row(report, op);
            let _ = writeln!(
                s,
                "   {:<18}     {max:14.3} {min:14.3} {mean:14.3} {sd:14.3}",
                OPERATIONS[op]
            );
        }
        for op in [TREE_CREATE, TREE_REMOVE] {
            let [max, min, mean, sd] = run::summary_row(report, op);
            let _ = writeln!(
                s,
                "   {:<22} {max:14.3} {min:14.3} {mean:14.3} {sd:14.3}",
                OPERATIONS[op]
            );
        }
        let _ = write!(s, "-- finished at {} --\n\n", hpc::stamp_now());
        s
    }
}

impl FrontEnd for Mdtest {
    fn tool(&self) -> Tool {
        Tool::Mdtest
    }

    fn plan(&self) -> Plan<'_> {
        hpc::plan_of(Tool::Mdtest, self.steps())
    }

    fn explain(&self) -> String {
        let o = &self.opts;
        let mut s = String::from(
            "# fslab mdtest: mdtest 4.0's test on direct POSIX calls, not an engine workload (mdtest\n\
             # times each phase between barriers). Per rank, per iteration, in <-d>/test-dir.I-0:\n",
        );
        for (name, what) in self.steps() {
            let _ = writeln!(s, "#   {name}: {what}");
        }
        let _ = writeln!(
            s,
            "# items per rank = {}, per directory = {}, tree: depth {} × branch {} = {} directories, iterations = {}",
            o.items, o.items_per_dir, o.depth, o.branch, o.tree_dirs, o.iterations
        );
        s.push_str("# fslab differs: no sleep(1) before the test; paths lie beneath the run directory.\n");
        s
    }

    fn execute(&mut self, ctx: &mut Context) -> Result<Outcome, Error> {
        let mut outcome = Outcome::new(Tool::Mdtest);
        let ranks = ctx.ranks.clone();
        let leads = ranks.leads();
        if self.opts.help {
            if leads {
                ctx.print(USAGE);
            }
            outcome.report = ctx.take_text();
            return Ok(outcome);
        }
        if !self.dir.is_dir() {
            return Err(Error::input(format!(
                "mdtest: --dir {}: not a directory",
                self.dir.display()
            )));
        }
        let nodes = Nodes::of(ranks.as_ref());
        let clock = Clock::start(ranks.as_ref());
        if leads {
            ctx.print(&self.header(&nodes, ranks.size()));
        }
        let mut job = Job::new(&self.opts, self.root.clone(), ranks.as_ref(), clock);
        job.interrupt = ctx.interrupt();
        job.drop_caches = ctx.drop_caches.then_some(nodes);
        let report = run::run(&mut job);
        for f in &report.failures {
            ctx.note(format!("mdtest rank {}: {f}", report.rank));
        }
        if leads {
            ctx.print(&self.summary(&report));
        }
        let metrics = (0..OPERATIONS.len())
            .filter(|&op| op != run::DIR_READ && report.mine.iter().any(|it| it.time[op] > 0.0))
            .map(|op| Metric::new(OPERATIONS[op], run::summary_row(&report, op)[2], "ops/s"))
            .collect();
        outcome.figures = Some(serde_json::json!({
            "options": &self.opts,
            "run": serde_json::to_value(&report).expect("mdtest's figures serialise"),
        }));
        outcome.set_metrics(metrics);
        outcome.report = ctx.take_text();
        outcome.interrupted = ctx.interrupted();
        if !report.failures.is_empty() && !outcome.interrupted {
            return Err(Error::run(format!(
                "mdtest: {} calls failed on rank {}, the first: {}",
                report.failures.len(),
                report.rank,
                report.failures[0]
            )));
        }
        Ok(outcome)
    }
}
