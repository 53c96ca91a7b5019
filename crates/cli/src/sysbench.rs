//! `fslab sysbench [options]... fileio prepare|run|cleanup`: sysbench 1.0.20's fileio test on
//! fslab's engine, with sysbench's own option syntax (`--file-test-mode=rndrw`), which clap
//! cannot express, so the words are handed to fslab_classic::sysbench as they are. This file
//! runs the command and prints.

use crate::run::engine_failure;
use crate::Failure;
use anyhow::anyhow;
use fslab_classic::sysbench::{self, files, report, Command, Error, Invocation};
use fslab_engine::result::SCHEMA_VERSION;
use fslab_engine::run::{Progress, RunOptions};
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
#[command(disable_help_flag = true)]
pub struct Args {
    /// sysbench's command line: [options]... fileio prepare|run|cleanup|help (see
    /// `fslab sysbench fileio help`).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "SYSBENCH ARGS")]
    rest: Vec<String>,
}

pub fn main(args: Args) -> Result<ExitCode, Failure> {
    let inv = sysbench::parse(&args.rest).map_err(failure)?;
    if inv.command == Command::Help {
        print!("{}", sysbench::options::help());
        return Ok(ExitCode::SUCCESS);
    }
    if inv.check {
        // The options were checked as they were parsed.
        return Ok(ExitCode::SUCCESS);
    }
    if inv.explain {
        let mut w = sysbench::workload(&inv.options);
        if inv.command != Command::Run {
            w.description = format!("{} builds (prepare) or removes (cleanup) this fileset", w.description);
        }
        print!("{}", w.to_toml());
        return Ok(ExitCode::SUCCESS);
    }
    if !inv.dir.is_dir() {
        return Err(Failure::Input(anyhow!(
            "--dir {}: not a directory (the test files go into an existing directory)",
            inv.dir.display()
        )));
    }
    match inv.command {
        Command::Prepare => prepare(&inv),
        Command::Run => run(&inv),
        Command::Cleanup => cleanup(&inv),
        Command::Help => unreachable!("handled above"),
    }
}

fn prepare(inv: &Invocation) -> Result<ExitCode, Failure> {
    let o = &inv.options;
    if !inv.json {
        print!("{}", report::prepare_header(o));
    }
    let setup = files::prepare(&inv.dir, o).map_err(failure)?;
    if inv.json {
        print_json(serde_json::json!({
            "schema_version": SCHEMA_VERSION,
            "dir": inv.dir.display().to_string(),
            "setup": setup,
            "classic": report::prepare_figures(o, &setup),
        }));
    } else {
        print!("{}", report::prepare_footer(o, &setup));
    }
    Ok(ExitCode::SUCCESS)
}

fn cleanup(inv: &Invocation) -> Result<ExitCode, Failure> {
    files::cleanup(&inv.dir, &inv.options).map_err(failure)?;
    if inv.json {
        print_json(serde_json::json!({
            "schema_version": SCHEMA_VERSION,
            "dir": inv.dir.display().to_string(),
            "classic": { "command": "cleanup", "removed": sysbench::FILESET },
        }));
    } else {
        print!("{}", report::cleanup_text());
    }
    Ok(ExitCode::SUCCESS)
}

fn run(inv: &Invocation) -> Result<ExitCode, Failure> {
    let o = &inv.options;
    let workload = sysbench::workload(o);
    workload
        .validate()
        .map_err(|e| Failure::Input(anyhow!("the compiled workload is not valid: {e}")))?;
    files::check(&inv.dir, o).map_err(failure)?;
    for note in sysbench::compile::notes(o) {
        eprintln!("{note}");
    }
    if !inv.json {
        print!("{}", report::run_header(o));
    }
    let mut intervals = report::Intervals::new(o);
    let mut on_progress = |p: &Progress| {
        if let Some(line) = intervals.tick(p) {
            if !inv.json {
                println!("{line}");
            }
        }
    };
    let run_opts = RunOptions {
        dir: inv.dir.clone(),
        continue_on_error: false,
        no_latency: false,
        drop_caches: false,
    };
    let mut result = fslab_engine::run(&workload, &run_opts, &mut on_progress).map_err(engine_failure)?;
    if result.setup.first().is_some_and(|s| !s.reused) && workload.filesets[0].reuse {
        eprintln!("fslab: note: the prepared files did not match these options and were written again");
    }
    let figures = report::figures(&result, o);
    if inv.json {
        result.classic = Some(serde_json::to_value(&figures).expect("figures serialise"));
        print_json(serde_json::to_value(&result).expect("a result always serialises"));
    } else {
        print!("{}", report::summary(&figures));
    }
    Ok(crate::run::exit_code(&result))
}

fn print_json(v: serde_json::Value) {
    println!("{}", serde_json::to_string_pretty(&v).expect("JSON always serialises"));
}

/// Bad input exits 2; a filesystem that failed exits 1.
fn failure(e: Error) -> Failure {
    if e.is_input() {
        Failure::Input(e.into())
    } else {
        Failure::Run(e.into())
    }
}
