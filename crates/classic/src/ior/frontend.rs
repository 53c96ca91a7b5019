//! `fslab ior [IOR options]`: IOR on the front-end contract. Each rank of the job (one alone,
//! many under `mpirun`, threads in tests) runs this front-end with its handle in
//! [`Context::ranks`]; rank 0 prints.

use super::options::{Api, Format, Options, USAGE};
use super::print;
use super::run::{self, Access, Event, Job};
use crate::contract::{Call, Common, Context, Error, FrontEnd, Outcome, Plan, Request, Tool};
use crate::hpc::{self, Clock, Nodes};
use fslab_engine::Metric;
use std::path::PathBuf;

/// IOR's options and where its test file goes.
pub struct Ior {
    opts: Options,
    dir: PathBuf,
    root: PathBuf,
}

/// Reads `fslab ior`'s command line; `-o` lies beneath `--dir` (or the current directory).
pub fn parse(args: &[String]) -> Result<(Box<dyn FrontEnd>, Common), Error> {
    let (opts, common, dir, root) = hpc::parse_command("ior", "-o", args, Options::parse, |o| &o.test_file)?;
    Ok((Box::new(Ior { opts, dir, root }), common))
}

/// A study's IOR workload: its extra arguments (`-w -r -F`), then its options, where
/// `transfer`, `block` and `segments` are `-t`, `-b` and `-s` and one-letter keys are `-k value`.
pub fn calls(r: &Request) -> Vec<Call> {
    hpc::study_calls("ior", r, &[("transfer", "t"), ("block", "b"), ("segments", "s")])
}

impl Ior {
    /// What one rank does per repetition, as the calls it makes.
    fn steps(&self) -> Vec<(String, String)> {
        let o = &self.opts;
        let n = o.per_block() * o.segments;
        let xfer = match o.api {
            Api::Posix => format!("{n} × (lseek(SEEK_SET); write({}))", o.transfer),
            Api::Mmap => format!(
                "ftruncate(tasks × {}); mmap(MAP_SHARED); {n} copies of {} bytes",
                o.block * o.segments,
                o.transfer
            ),
        };
        let file = if o.file_per_proc {
            format!("{}.<rank as %08d>", self.root.display())
        } else {
            self.root.display().to_string()
        };
        let mut v = Vec::new();
        if o.write {
            v.push((
                "write".into(),
                format!(
                    "unlink(old file); barrier; open({file}, O_CREAT|O_RDWR, 0664); {xfer}{}; {}close(); barrier; stat()",
                    if o.fsync { "; fsync()" } else { "" },
                    if o.api == Api::Mmap { "munmap(); " } else { "" }
                ),
            ));
        }
        if o.read {
            v.push((
                "read".into(),
                format!(
                    "barrier; open({file}{}, O_RDONLY); {}; {}close(); stat()",
                    if o.reorder { " of the rank one node on" } else { "" },
                    xfer.replace("write(", "read(")
                        .replace("ftruncate(tasks × ", "(size ")
                        .replace("); mmap", ") mmap"),
                    if o.api == Api::Mmap { "munmap(); " } else { "" }
                ),
            ));
        }
        if !o.keep {
            v.push((
                "remove".into(),
                "barrier; access(F_OK); unlink() (rank 0 alone for a shared file); barrier".into(),
            ));
        }
        v
    }
}

impl FrontEnd for Ior {
    fn tool(&self) -> Tool {
        Tool::Ior
    }

    fn plan(&self) -> Plan<'_> {
        hpc::plan_of(Tool::Ior, self.steps())
    }

    fn explain(&self) -> String {
        let o = &self.opts;
        let mut s = String::from(
            "# fslab ior: IOR 4.0's test on direct POSIX calls, not an engine workload (IOR times each\n\
             # rank's open, transfers and close apart, between barriers). Per rank, per repetition:\n",
        );
        for (name, what) in self.steps() {
            s.push_str(&format!("#   {name}: {what}\n"));
        }
        s.push_str(&format!(
            "# repetitions = {}, segments = {}, block = {}, transfer = {}, {} offsets{}{}\n\
             # fslab differs: random offsets (-z) are fslab's own draw; paths lie beneath the run\n\
             # directory.\n",
            o.reps,
            o.segments,
            o.block,
            o.transfer,
            if o.random { "random" } else { "sequential" },
            if o.deadline > 0 {
                format!(", stonewall after {} s", o.deadline)
            } else {
                String::new()
            },
            if o.intra_barriers {
                ", barriers between open, transfers and close"
            } else {
                ""
            },
        ));
        s
    }

    fn execute(&mut self, ctx: &mut Context) -> Result<Outcome, Error> {
        let mut outcome = Outcome::new(Tool::Ior);
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
                "ior: --dir {}: not a directory",
                self.dir.display()
            )));
        }
        let nodes = Nodes::of(ranks.as_ref());
        let clock = Clock::start(ranks.as_ref());
        let job = Job {
            o: &self.opts,
            root: self.root.clone(),
            ranks: ranks.as_ref(),
            nodes,
            clock,
            interrupt: ctx.interrupt(),
            drop_caches: ctx.drop_caches,
        };
        let began = hpc::ctime_now();
        let start = hpc::ctime_now();
        if leads {
            ctx.print(&print::preamble(&job, &began));
        }
        let report = run::run(&job, &mut |e| {
            if !leads {
                return;
            }
            let text = match e {
                Event::Table => print::table_header(job.o),
                Event::Commencing(a) => print::commencing(job.o, a),
                Event::Point(p) => print::point(&job, p),
                Event::Removed { secs, rep } => print::removed(job.o, secs, rep),
                Event::Warning(w) if job.o.format != Format::Json => format!("WARNING: {w}\n"),
                Event::Warning(_) => String::new(),
            };
            ctx.print(&text);
        })
        .map_err(|e| Error::run(format!("ior: {e}")))?;
        if leads {
            let end = match self.opts.format {
                Format::Json => print::json(&job, &report.reps, &began, &start),
                _ => print::ending(&job, &report.reps),
            };
            ctx.print(&end);
        }
        let mut metrics = Vec::new();
        for (access, name) in [(Access::Write, "Write"), (Access::Read, "Read")] {
            if let Some(s) = print::summary(&job, &report.reps, access) {
                metrics.push(Metric::new(&format!("Max {name}"), s.bw.max / 1048576.0, "MiB/s"));
                metrics.push(Metric::new(&format!("Mean {name}"), s.bw.mean / 1048576.0, "MiB/s"));
                metrics.push(Metric::new(&format!("Mean {name} OPs"), s.ops.mean, "ops/s"));
            }
        }
        outcome.figures = Some(serde_json::json!({
            "options": &self.opts,
            "run": serde_json::to_value(&report).expect("IOR's figures serialise"),
        }));
        outcome.set_metrics(metrics);
        outcome.report = ctx.take_text();
        outcome.interrupted = ctx.interrupted();
        Ok(outcome)
    }
}
