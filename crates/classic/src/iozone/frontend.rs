//! `fslab iozone [IOzone options]`: IOzone on the front-end contract. IOzone's getopt-style
//! options (`-i0 -eCR`) cannot be declared to clap, so the words go to
//! [`Options::parse`] once the common flags are taken out.

use super::{run, Mode, Options, Plan as IozonePlan, RunFailure, RunWith, USAGE};
use crate::contract::{
    option_words, Call, Common, Context, Error, FrontEnd, Outcome, Phase, Plan, Request, Style, Tool,
};
use fslab_engine::Metric;
use std::path::PathBuf;

/// IOzone's options with its runs planned.
pub struct Iozone {
    /// `-h`: only the usage text.
    help: bool,
    plan: IozonePlan,
    dir: PathBuf,
}

/// Reads `fslab iozone`'s command line; the runs are planned in `--dir` (or the current
/// directory), where `-F` names must lie.
pub fn parse(args: &[String]) -> Result<(Box<dyn FrontEnd>, Common), Error> {
    let (mut common, rest) = Common::take(args)?;
    common.resolve_dir();
    let opts = Options::parse(&rest).map_err(|e| Error::input(format!("iozone: {e}")))?;
    let dir = match &common.dir {
        Some(d) => d.clone(),
        None => std::env::current_dir()
            .map_err(|e| Error::environment(format!("cannot read the current directory: {e}")))?,
    };
    let plan = IozonePlan::new(&opts, &dir).map_err(|e| Error::input(format!("iozone: {e}")))?;
    let help = opts.help;
    Ok((Box::new(Iozone { help, plan, dir }), common))
}

/// A study's IOzone workload: its extra arguments (`-i 0 -i 1 -e`), then its options, where
/// `threads`, `size` and `record` are `-t`, `-s` and `-r` and one-letter keys are `-k value`.
pub fn calls(r: &Request) -> Vec<Call> {
    let mut args = vec!["iozone".to_string()];
    args.extend(r.measured());
    args.extend(r.args.iter().cloned());
    for (k, v) in r.options {
        let k = match k.as_str() {
            "threads" => "t",
            "size" => "s",
            "record" => "r",
            k => k,
        };
        args.extend(option_words(k, v, Style::Short));
    }
    vec![Call::measured(args)]
}

impl FrontEnd for Iozone {
    fn tool(&self) -> Tool {
        Tool::Iozone
    }

    fn plan(&self) -> Plan<'_> {
        let throughput = matches!(self.plan.mode, Mode::Throughput { .. });
        let mut phases = Vec::new();
        for (k, step) in self.plan.steps.iter().enumerate() {
            if throughput && k > 0 && !self.plan.opts.pause.is_zero() {
                phases.push(Phase::Setup {
                    name: "pause".into(),
                    what: format!("sync() and a pause of {:?}, as IOzone", self.plan.opts.pause),
                });
            }
            phases.push(Phase::Run {
                name: self.plan.step_name(step),
                workload: &step.workload,
            });
        }
        Plan {
            tool: Tool::Iozone,
            phases,
        }
    }

    fn explain(&self) -> String {
        self.plan.explain()
    }

    fn notes(&self) -> Vec<String> {
        self.plan.warnings.clone()
    }

    fn expected(&self) -> Option<std::time::Duration> {
        Some(crate::estimate::iozone(&self.plan))
    }

    fn execute(&mut self, ctx: &mut Context) -> Result<Outcome, Error> {
        let mut outcome = Outcome::new(Tool::Iozone);
        if self.help {
            ctx.print(USAGE);
            outcome.report = ctx.take_text();
            return Ok(outcome);
        }
        if !self.dir.is_dir() {
            return Err(Error::input(format!(
                "iozone: --dir {}: not a directory",
                self.dir.display()
            )));
        }
        let preamble = self.plan.preamble(ctx.ranks.size());
        ctx.print(&preamble);
        let with = RunWith {
            dir: &self.dir,
            drop_caches: ctx.drop_caches,
            interrupt: ctx.interrupt(),
            job: ctx.job(),
        };
        let report = run(&self.plan, with, &mut |text| ctx.print(text)).map_err(|e| match e {
            RunFailure::Engine(e) => Error::from(e),
            RunFailure::Job(e) => e,
        })?;
        // Each sub-test's Children see, in IOzone's kB/sec (or ops/sec with -O); the first leads.
        let metrics: Vec<Metric> = report
            .subtests
            .iter()
            .filter_map(|s| {
                s.figures
                    .as_ref()
                    .map(|f| Metric::new(&s.name, f.children_see, &format!("{}/sec", report.unit)))
            })
            .collect();
        outcome.figures = Some(serde_json::to_value(&report).expect("IOzone's figures serialise"));
        let throughput = matches!(self.plan.mode, Mode::Throughput { .. });
        for s in report.subtests {
            // Automatic mode runs each test at many sizes: its phases are named by them too.
            let name = if throughput {
                s.name.clone()
            } else {
                format!("{} {} kB file, {} kB records", s.name, s.file_kb, s.record_kb)
            };
            outcome.push(&name, s.result);
        }
        outcome.set_metrics(metrics);
        outcome.report = ctx.take_text();
        Ok(outcome)
    }
}
