//! The `fslab` binary: commands that wire the library crates together.

mod adhoc;
mod run;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// fslab: a filesystem benchmarking laboratory.
#[derive(Debug, Parser)]
#[command(name = "fslab", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run one workload (a native TOML file, or fio-like flags) and print what it measured.
    Run(run::RunArgs),
}

/// Exit codes: 0 success, 1 a run failed, 2 bad input or usage, 3 the environment lacks something.
pub enum Failure {
    Run(anyhow::Error),
    Input(anyhow::Error),
    Environment(anyhow::Error),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => run::main(args),
    };
    match result {
        Ok(code) => code,
        Err(f) => {
            let (code, e) = match f {
                Failure::Run(e) => (1, e),
                Failure::Input(e) => (2, e),
                Failure::Environment(e) => (3, e),
            };
            eprintln!("fslab: {e:#}");
            ExitCode::from(code)
        }
    }
}
