//! The `fslab` binary: commands that wire the library crates together.

mod compare;
mod frontend;
mod info;
mod report;
mod study;

use clap::{Parser, Subcommand};
use fslab_classic::{dbench, ffsb, native, Tool};
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
    Run(native::Args),
    /// Run an FFSB profile (5.x or 6.0 grammar) and print what FFSB prints.
    Ffsb(ffsb::frontend::Args),
    /// Replay a dbench loadfile with dbench's options and print what dbench prints.
    Dbench(dbench::frontend::Args),
    /// sysbench fileio: prepare, run or cleanup with sysbench's options.
    Sysbench(frontend::Words),
    /// IOzone's throughput and automatic modes with IOzone's options.
    Iozone(frontend::Words),
    /// The test bed: CPU, memory, kernel, distribution, devices, tool versions, raw read speed.
    Info(info::Args),
    /// Whole comparison studies: run, resume, list and show them.
    Study(study::Args),
    /// A study's report: tables, statistics and charts (terminal, Markdown, CSV, JSON, HTML).
    Report(report::Args),
    /// Compare two studies, or two configurations, with Welch's t-test.
    Compare(compare::Args),
    /// The JSON Schema of a document fslab prints (also in docs/schema/).
    Schema {
        /// outcome: `fslab run|ffsb|dbench|sysbench|iozone --json`; report: `fslab report
        /// --format json`; compare: `fslab compare --json`.
        #[arg(value_enum)]
        document: Document,
    },
}

/// The documents fslab prints as JSON.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Document {
    Outcome,
    Report,
    Compare,
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
        Command::Run(args) => frontend::main(native::frontend(args)),
        Command::Ffsb(args) => frontend::main(ffsb::frontend::frontend(args)),
        Command::Dbench(args) => frontend::main(dbench::frontend::frontend(args)),
        Command::Sysbench(w) => frontend::main(Tool::Sysbench.parse(&w.words)),
        Command::Iozone(w) => frontend::main(Tool::Iozone.parse(&w.words)),
        Command::Info(args) => info::main(args),
        Command::Study(args) => study::main(args),
        Command::Report(args) => report::main(args),
        Command::Compare(args) => compare::main(args),
        Command::Schema { document } => {
            print!(
                "{}",
                match document {
                    Document::Outcome => fslab_classic::Outcome::schema(),
                    Document::Report => fslab_report::export::json::schema(),
                    Document::Compare => fslab_report::compare::schema(),
                }
            );
            Ok(ExitCode::SUCCESS)
        }
    };
    match result {
        Ok(code) => code,
        Err(f) => {
            let (code, e) = match f {
                Failure::Run(e) => (1, e),
                Failure::Input(e) => (2, e),
                Failure::Environment(e) => (3, e),
            };
            // Every error of fslab's says its cause in its own message: the chain would say it twice.
            eprintln!("fslab: {e}");
            ExitCode::from(code)
        }
    }
}
