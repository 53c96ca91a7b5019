//! `fslab ffsb PROFILE [TIME]`: FFSB's command line, and FFSB on the front-end contract.

use super::{compile, execute, explain, figures, load, preflight, render, ExecError, Options, Plan as FfsbPlan};
use crate::contract::{
    self, option_words, Call, Common, Context, Error, FrontEnd, Outcome, Phase, Plan, Request, Style, Tool,
};
use fslab_engine::{Bytes, Metric, RunError};
use std::path::PathBuf;

/// FFSB's options, as `fslab ffsb` takes them.
#[derive(Debug, clap::Parser)]
#[command(
    name = "fslab ffsb",
    after_help = "With --dir, the profile's only filesystem goes to DIR and several go to DIR/fs0, DIR/fs1...

Examples:
  fslab ffsb profile.ffsb
  fslab ffsb profile.ffsb --dir /mnt/test --json > outcome.json
  fslab ffsb profile.ffsb --explain"
)]
pub struct Args {
    /// The FFSB profile, in FFSB 6.0's or 5.x's grammar (detected).
    profile: PathBuf,
    /// Seconds of benchmark, as in FFSB 5.x's `ffsb PROFILE [TIME]`.
    #[arg(value_name = "TIME")]
    time_arg: Option<u64>,
    /// Seconds of benchmark, replacing the profile's time (0: only build the filesets).
    #[arg(long, value_name = "SECONDS", conflicts_with = "time_arg")]
    time: Option<u64>,
    /// Seed of every random choice.
    #[arg(long)]
    seed: Option<u64>,
    /// Threads of every threadgroup, replacing each one's num_threads.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    threads: Option<u32>,
    /// Size of every file (4k, 256m, 1g), replacing each filesystem's min_filesize,
    /// max_filesize and size_weight: scales a profile to a small machine without editing it.
    #[arg(long, value_name = "SIZE")]
    filesize: Option<Bytes>,
    #[command(flatten)]
    pub common: Common,
}

/// An FFSB profile read and compiled.
pub struct Ffsb {
    plan: FfsbPlan,
}

/// Reads `fslab ffsb`'s command line.
pub fn parse(args: &[String]) -> Result<(Box<dyn FrontEnd>, Common), Error> {
    frontend(contract::parse_clap(Tool::Ffsb, args)?)
}

/// FFSB for these arguments: the profile read and compiled.
pub fn frontend(mut args: Args) -> Result<(Box<dyn FrontEnd>, Common), Error> {
    args.common.resolve_dir();
    let profile = load(&args.profile).map_err(Error::input)?;
    let opts = Options {
        time: args.time.or(args.time_arg),
        dir: args.common.dir.clone(),
        seed: args.seed,
        threads: args.threads,
        filesize: args.filesize.map(|b| b.0),
        drop_caches: args.common.drop_caches,
    };
    let plan = compile(&profile, &opts).map_err(Error::input)?;
    Ok((Box::new(Ffsb { plan }), args.common))
}

/// A study's FFSB workload: the profile, then its options as `--key value`.
pub fn calls(r: &Request) -> Vec<Call> {
    let mut args = vec!["ffsb".to_string()];
    args.extend(r.main.map(|m| m.display().to_string()));
    args.extend(r.measured());
    for (k, v) in r.options_in_seconds() {
        args.extend(option_words(&k, &v, Style::Long));
    }
    args.extend(r.args.iter().cloned());
    vec![Call::measured(args)]
}

/// What a failure to run means for the exit code.
fn failure(e: ExecError) -> Error {
    match e {
        ExecError::Location(_) => Error::input(e),
        ExecError::Environment(_) => Error::environment(e),
        ExecError::Callout { .. } | ExecError::Aging { .. } => Error::run(e),
        ExecError::Engine(e) => e.into(),
        ExecError::Job(e) => e,
        ExecError::Setup(e) => RunError::Setup(e).into(),
        ExecError::Confine(e) => RunError::Confine(e).into(),
    }
}

impl FrontEnd for Ffsb {
    fn tool(&self) -> Tool {
        Tool::Ffsb
    }

    fn plan(&self) -> Plan<'_> {
        let p = &self.plan;
        let mut phases: Vec<Phase> = p
            .aging
            .iter()
            .map(|a| Phase::Run {
                name: format!("aging fs{}", a.fs),
                workload: &a.workload,
            })
            .collect();
        phases.push(Phase::Setup {
            name: "setup".into(),
            what: "builds the filesets (FFSB's fs setup), untimed".into(),
        });
        if let Some(c) = &p.callout {
            phases.push(Phase::Setup {
                name: "callout".into(),
                what: format!("runs `{c}`"),
            });
        }
        if p.time > 0 {
            phases.push(Phase::Run {
                name: "run".into(),
                workload: &p.workload,
            });
        }
        Plan {
            tool: Tool::Ffsb,
            phases,
        }
    }

    fn explain(&self) -> String {
        explain(&self.plan)
    }

    fn notes(&self) -> Vec<String> {
        let file = &self.plan.profile.file;
        self.plan.warnings.iter().map(|w| format!("{file}: {w}")).collect()
    }

    /// The filesets' setup, then the benchmark's time with its final sync (which FFSB counts in
    /// the time). Aging, which runs until the filesystem is full enough, is not counted.
    fn expected(&self) -> Option<std::time::Duration> {
        let w = &self.plan.workload;
        let time = std::time::Duration::from_secs(self.plan.time);
        Some(crate::estimate::setup(w).saturating_add(crate::estimate::timed(w, time)))
    }

    fn execute(&mut self, ctx: &mut Context) -> Result<Outcome, Error> {
        preflight(&self.plan).map_err(failure)?;
        let job = ctx.job();
        // A job of several ranks: each rank in LOCATION/rank.N of each location (made here,
        // with the locations fslab makes itself). Each rank ages its own files until the
        // filesystem they share is full enough.
        let rank_plan;
        let plan = if ctx.ranks.size() > 1 {
            if self.plan.make_roots {
                for root in &self.plan.roots {
                    std::fs::create_dir_all(root)
                        .map_err(|e| Error::run(format!("cannot make {}: {e}", root.display())))?;
                }
            }
            rank_plan = self.plan.for_rank(ctx.ranks.rank());
            &rank_plan
        } else {
            &self.plan
        };
        let ran = execute(plan, &job, ctx.interrupt(), &mut |phase, p| {
            let name = match phase {
                super::Phase::Aging(k) => format!("aging filesystem {k}"),
                super::Phase::Benchmark => "run".to_string(),
            };
            ctx.progress(&name, p);
        })
        .map_err(failure)?;
        ctx.print(&render(plan, &ran));
        let f = figures(plan, &ran);
        let mut outcome = Outcome::new(Tool::Ffsb);
        if let Some(result) = ran.result {
            outcome.push("run", result);
        }
        if let Some(t) = &f.total {
            let mut metrics = vec![
                Metric::new("Transactions/s", t.transactions_per_sec, "trans/s"),
                Metric::new("read MB/sec", t.read_throughput_bytes_per_sec / 1048576.0, "MB/sec"),
                Metric::new("write MB/sec", t.write_throughput_bytes_per_sec / 1048576.0, "MB/sec"),
            ];
            if let Some(cpu) = f.cpu_utilization_pct {
                metrics.push(Metric::new("CPU %", cpu, "%").lower_is_better());
            }
            outcome.set_metrics(metrics);
        }
        outcome.figures = Some(serde_json::to_value(&f).expect("figures serialise"));
        outcome.report = ctx.take_text();
        Ok(outcome)
    }
}
