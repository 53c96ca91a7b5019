//! `fslab iozone`: IOzone's options in, IOzone's output out (or one JSON document with --json).
//! The parsing, planning, running and printing live in `fslab_classic::iozone`; this file wires
//! them to the terminal.

use crate::Failure;
use anyhow::anyhow;
use fslab_classic::iozone::{self, Options, Plan, RunFailure, USAGE};
use std::io::Write;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
#[command(disable_help_flag = true)]
pub struct Args {
    /// IOzone's options (-i 0 -t 16 -s 2000m -r 64k ...) and fslab's (--dir, --json, --explain,
    /// --seed); `fslab iozone -h` lists them.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    rest: Vec<String>,
}

pub fn main(args: Args) -> Result<ExitCode, Failure> {
    let opts = Options::parse(&args.rest).map_err(|e| Failure::Input(anyhow!("iozone: {e}")))?;
    if opts.help {
        print!("{USAGE}");
        return Ok(ExitCode::SUCCESS);
    }
    let dir = match &opts.dir {
        Some(d) => d.clone(),
        None => std::env::current_dir()
            .map_err(|e| Failure::Environment(anyhow!("cannot read the current directory: {e}")))?,
    };
    if !dir.is_dir() {
        return Err(Failure::Input(anyhow!(
            "iozone: --dir {}: not a directory",
            dir.display()
        )));
    }
    let plan = Plan::new(&opts, &dir).map_err(|e| Failure::Input(anyhow!("iozone: {e}")))?;
    for step in &plan.steps {
        step.workload
            .validate()
            .map_err(|e| Failure::Input(anyhow!("iozone: {}: {e}", step.workload.name)))?;
    }
    if opts.check {
        return Ok(ExitCode::SUCCESS);
    }
    if opts.explain {
        print!("{}", plan.explain());
        return Ok(ExitCode::SUCCESS);
    }
    for w in &plan.warnings {
        eprintln!("fslab iozone: note: {w}");
    }
    let json = opts.json;
    if !json {
        print!("{}", plan.preamble());
    }
    let mut out = |text: &str| {
        if !json {
            let mut stdout = std::io::stdout().lock();
            let _ = stdout.write_all(text.as_bytes());
            let _ = stdout.flush();
        }
    };
    let report = iozone::run(&plan, &dir, &mut out).map_err(|e| match e {
        RunFailure::Engine(e) => crate::run::engine_failure(e),
        other => Failure::Run(other.into()),
    })?;
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).expect("a report always serialises")
        );
    }
    Ok(report
        .subtests
        .last()
        .map_or(ExitCode::SUCCESS, |s| crate::run::exit_code(&s.result)))
}
