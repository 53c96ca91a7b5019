//! `fslab sysbench [options]... fileio prepare|run|cleanup|help`: sysbench on the front-end
//! contract. Its options (`--file-test-mode=rndrw`) cannot be declared to clap, so the words go
//! to [`options::parse`](super::options::parse) once the common flags are taken out.

use super::{files, report, Command, Error as SysbenchError, Invocation, FILESET};
use crate::contract::{
    option_words, Call, Common, Context, Error, FrontEnd, Outcome, Phase, Plan, Request, Role, Style, Tool,
};
use fslab_engine::workload::Data;
use fslab_engine::{Metric, RunOptions, Workload};
use std::path::PathBuf;

/// One sysbench command with its options checked.
pub struct Sysbench {
    inv: Invocation,
    /// The workload `run` runs (`prepare` builds its fileset, `cleanup` removes it).
    workload: Workload,
    dir: PathBuf,
}

/// Reads `fslab sysbench`'s command line.
pub fn parse(args: &[String]) -> Result<(Box<dyn FrontEnd>, Common), Error> {
    let (mut common, rest) = Common::take(args)?;
    common.resolve_dir();
    let inv = super::parse(&rest).map_err(failure)?;
    let workload = super::workload(&inv.options);
    let dir = common.dir.clone().unwrap_or_else(|| PathBuf::from("."));
    Ok((Box::new(Sysbench { inv, workload, dir }), common))
}

/// A study's sysbench workload: its options as `--key=value`, run as sysbench is, prepare, then
/// the measured run, then cleanup.
pub fn calls(r: &Request) -> Vec<Call> {
    let mut base = vec!["sysbench".to_string(), "fileio".to_string()];
    for (k, v) in r.options_in_seconds() {
        base.extend(option_words(&k, &v, Style::Equals));
    }
    base.extend(r.args.iter().cloned());
    let with = |flags: Vec<String>, command: &str| {
        let mut a = base.clone();
        a.extend(flags);
        a.push(command.to_string());
        a
    };
    let dir = vec!["--dir".to_string(), r.dir.display().to_string()];
    vec![
        Call {
            role: Role::Setup,
            args: with(dir.clone(), "prepare"),
        },
        Call::measured(with(r.measured(), "run")),
        Call {
            role: Role::Cleanup,
            args: with(dir, "cleanup"),
        },
    ]
}

/// Bad input exits 2; a filesystem that failed exits 1.
fn failure(e: SysbenchError) -> Error {
    if e.is_input() {
        Error::input(e)
    } else {
        Error::run(e)
    }
}

impl FrontEnd for Sysbench {
    fn tool(&self) -> Tool {
        Tool::Sysbench
    }

    fn plan(&self) -> Plan<'_> {
        let o = &self.inv.options;
        let files = format!(
            "{} files of {} in {}",
            o.file_num,
            fslab_engine::Bytes(o.file_size()),
            self.dir.display()
        );
        let phase = match self.inv.command {
            Command::Prepare => Phase::Setup {
                name: "prepare".into(),
                what: format!("writes {files}"),
            },
            Command::Cleanup => Phase::Setup {
                name: "cleanup".into(),
                what: format!("removes {files}"),
            },
            Command::Help => Phase::Setup {
                name: "help".into(),
                what: "prints sysbench fileio's options".into(),
            },
            Command::Run => Phase::Run {
                name: "run".into(),
                workload: &self.workload,
            },
        };
        Plan {
            tool: Tool::Sysbench,
            phases: vec![phase],
        }
    }

    fn explain(&self) -> String {
        let mut w = self.workload.clone();
        if self.inv.command != Command::Run {
            w.description = format!("{} builds (prepare) or removes (cleanup) this fileset", w.description);
        }
        format!("{}{}", super::DIFFERENCES, w.to_toml())
    }

    fn execute(&mut self, ctx: &mut Context) -> Result<Outcome, Error> {
        let mut outcome = Outcome::new(Tool::Sysbench);
        if self.inv.command == Command::Help {
            ctx.print(super::options::help());
            outcome.report = ctx.take_text();
            return Ok(outcome);
        }
        if !self.dir.is_dir() {
            return Err(Error::input(format!(
                "--dir {}: not a directory (the test files go into an existing directory)",
                self.dir.display()
            )));
        }
        let o = &self.inv.options;
        // --verbosity below 3: sysbench prints nothing but its errors.
        let say = |ctx: &mut Context, text: &str| {
            if o.verbosity >= 3 {
                ctx.print(text);
            }
        };
        // With several ranks each has its own test files, in its own directory (crate::job).
        let mine = crate::job::rank_dir(ctx.ranks.as_ref(), &self.dir)?;
        match self.inv.command {
            Command::Prepare => {
                say(ctx, &report::prepare_header(o));
                let prepared = files::prepare(&mine, o).map_err(failure)?;
                say(ctx, &report::prepare_footer(o, &prepared));
                outcome.figures = Some(report::prepare_figures(o, &prepared.setup));
            }
            Command::Cleanup => {
                files::cleanup(&mine, o).map_err(failure)?;
                say(ctx, &report::cleanup_text());
                outcome.figures = Some(serde_json::json!({ "command": "cleanup", "removed": FILESET }));
            }
            Command::Run => {
                // The run keeps the prepared files as they are, with the data they hold,
                // --validate or not.
                if let Some(kept) = files::check(&mine, o).map_err(failure)? {
                    let data = kept.data;
                    kept.apply(&mut self.workload.filesets[0]);
                    if o.validate && data == Data::Zeros && o.mode().reads() {
                        ctx.note(
                            "the test files were prepared without --validate: their blocks carry no checksums, so the \
                             first read fails, as sysbench's does (prepare keeps the files it finds: run cleanup, \
                             then prepare with --validate)",
                        );
                    }
                }
                say(ctx, &report::run_header(o));
                let mut intervals = report::Intervals::new(o);
                let run_opts = RunOptions {
                    dir: self.dir.clone(),
                    drop_caches: ctx.drop_caches,
                    interrupt: ctx.interrupt(),
                    ..RunOptions::default()
                };
                let job = ctx.job();
                let result = crate::job::run(&job, &self.workload, run_opts, &mut |p| {
                    if let Some(line) = intervals.tick(p) {
                        say(ctx, &format!("{line}\n"));
                    }
                    ctx.progress("run", p);
                })?;
                if result.setup.first().is_some_and(|s| !s.reused) && self.workload.filesets[0].reuse {
                    ctx.note("the prepared files did not match these options and were written again");
                }
                let f = report::figures(&result, o);
                if let Some(e) = &result.first_error {
                    // sysbench stops at a failed request, says why at every verbosity, and prints
                    // no report (the figures stay in --json).
                    ctx.print(&report::fatal(e));
                } else {
                    if o.verbosity >= 4 {
                        ctx.print(&report::info_ending(&result));
                    }
                    say(ctx, &report::summary(&f));
                }
                let mut metrics = vec![
                    Metric::new("throughput", f.read_mib_per_sec + f.written_mib_per_sec, "MiB/s"),
                    Metric::new("reads/s", f.reads_per_sec, "/s"),
                    Metric::new("writes/s", f.writes_per_sec, "/s"),
                    Metric::new("fsyncs/s", f.fsyncs_per_sec, "/s"),
                ];
                if let Some(p) = f.latency_ms.percentile_value {
                    let name = format!("latency p{}", f.latency_ms.percentile);
                    metrics.push(Metric::new(&name, p, "ms").lower_is_better());
                }
                outcome.push("run", result);
                outcome.set_metrics(metrics);
                outcome.figures = Some(serde_json::to_value(&f).expect("figures serialise"));
            }
            Command::Help => unreachable!("answered above"),
        }
        outcome.report = ctx.take_text();
        Ok(outcome)
    }
}
