//! The `fslab` binary: commands that wire the library crates together.

mod compare;
mod doctor;
mod examples;
mod frontend;
mod info;
mod mpi;
mod out;
mod progress;
mod report;
mod study;

use anyhow::anyhow;
use clap::{CommandFactory, Parser, Subcommand};
use fslab_classic::{dbench, ffsb, native, Tool};
use std::process::ExitCode;

/// fslab: a filesystem benchmarking laboratory.
#[derive(Debug, Parser)]
#[command(
    name = "fslab",
    version,
    about,
    long_about = None,
    after_help = "Examples:
  fslab doctor
  fslab study run quick --dry-run
  fslab study run quick
  fslab run fileserver --time 10s --dir /mnt/test
  fslab report 1 --html report.html"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run one workload (a native TOML file, or fio-like flags) and print what it measured.
    #[command(after_help = "Examples:
  fslab run workloads/quick.toml
  fslab run --op randread --bs 4k --size 1g --threads 4 --time 30s --dir /mnt/test
  fslab run --op randwrite --engine io_uring --iodepth 32 --direct --dir /mnt/test --json
  fslab run workloads/fileserver.toml --explain
  fslab run fileserver --time 10s --dir /mnt/test")]
    Run(native::Args),
    /// Run an FFSB profile (5.x or 6.0 grammar) and print what FFSB prints.
    Ffsb(ffsb::frontend::Args),
    /// Replay a dbench loadfile with dbench's options and print what dbench prints.
    #[command(after_help = "Examples:
  fslab dbench -D /mnt/test -t 60 4
  fslab dbench -D /mnt/test -t 60 --sync 16
  fslab dbench -c my-loadfile.txt -D /mnt/test 1 --json")]
    Dbench(dbench::frontend::Args),
    /// sysbench fileio: prepare, run or cleanup with sysbench's options.
    Sysbench(frontend::Words),
    /// IOzone's throughput and automatic modes with IOzone's options.
    Iozone(frontend::Words),
    /// IOR 4.0's parallel I/O test with IOR's options (one rank alone; many under mpirun).
    #[command(after_help = "Examples:
  fslab ior -w -r -t 64k -b 16m -s 4 -o testfile --dir /mnt/test
  fslab ior -a MMAP -F -e -i 3 --dir /mnt/test -O summaryFormat=CSV")]
    Ior(frontend::Words),
    /// mdtest 4.0's metadata test with mdtest's options (one rank alone; many under mpirun).
    #[command(after_help = "Examples:
  fslab mdtest -n 1000 -d out --dir /mnt/test
  fslab mdtest -F -z 2 -b 4 -I 10 -w 4096 -e 4096 -i 3 --dir /mnt/test")]
    Mdtest(frontend::Words),
    /// What this machine can and cannot run (filesystems, tools, io_uring, O_DIRECT), and how to
    /// get what it lacks.
    Doctor(doctor::Args),
    /// The test bed: CPU, memory, kernel, distribution, devices, tool versions, raw read speed.
    Info(info::Args),
    /// Whole comparison studies: run, resume, list and show them.
    Study(study::Args),
    /// A study's report: tables, statistics and charts (terminal, Markdown, CSV, JSON, HTML).
    Report(report::Args),
    /// Compare two studies, or two configurations, with Welch's t-test.
    Compare(compare::Args),
    /// Writes fslab's example studies, workloads and FFSB profiles into DIR, to edit.
    Examples(examples::Args),
    /// A shell's completion script for fslab, on stdout.
    #[command(
        after_help = "Examples:\n  fslab completions bash > /etc/bash_completion.d/fslab\n  \
fslab completions zsh > \"${fpath[1]}/_fslab\"\n  fslab completions fish > ~/.config/fish/completions/fslab.fish"
    )]
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Writes man pages for fslab and each of its commands (fslab.1, fslab-study.1, ...) into DIR.
    #[command(
        after_help = "Examples:\n  fslab manpages /usr/local/share/man/man1 && mandb -q && man fslab-study-run\n  \
fslab manpages ./man && man -l man/fslab-report.1"
    )]
    Manpages {
        /// The directory to write them in (made if missing).
        dir: std::path::PathBuf,
    },
    /// The JSON Schema of a document fslab prints (also in docs/schema/).
    #[command(after_help = "Examples:\n  fslab schema outcome > outcome.schema.json\n  fslab schema report")]
    Schema {
        /// outcome: `fslab run|ffsb|dbench|sysbench|iozone|ior|mdtest --json`; report: `fslab report
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

/// Writes `fslab.1` and one page per command (`fslab-study.1`, `fslab-study-run.1`...) into
/// `dir`, and prints their names.
fn manpages(dir: &std::path::Path) -> Result<ExitCode, Failure> {
    std::fs::create_dir_all(dir).map_err(|e| Failure::Input(anyhow!("cannot make {}: {e}", dir.display())))?;
    fn write(cmd: clap::Command, name: String, dir: &std::path::Path) -> Result<(), Failure> {
        let cmd = cmd.name(name.clone());
        let mut page = Vec::new();
        clap_mangen::Man::new(cmd.clone())
            .render(&mut page)
            .map_err(|e| Failure::Run(e.into()))?;
        let path = dir.join(format!("{name}.1"));
        std::fs::write(&path, page).map_err(|e| Failure::Input(anyhow!("cannot write {}: {e}", path.display())))?;
        out::print(&format!("{}\n", path.display()))?;
        for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
            write(sub.clone(), format!("{name}-{}", sub.get_name()), dir)?;
        }
        Ok(())
    }
    let mut cli = Cli::command();
    cli.build();
    write(cli, "fslab".into(), dir)?;
    Ok(ExitCode::SUCCESS)
}

/// `fslab run`: its workload file, or the built-in example of that name.
fn run(mut args: native::Args) -> Result<ExitCode, Failure> {
    if let Some(w) = &args.workload {
        args.workload = Some(examples::resolve(w, "workloads")?);
    }
    frontend::main(|| native::frontend(args))
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
        Command::Run(args) => run(args),
        Command::Examples(args) => examples::main(args),
        Command::Ffsb(args) => frontend::main(|| ffsb::frontend::frontend(args)),
        Command::Dbench(args) => frontend::main(|| dbench::frontend::frontend(args)),
        Command::Sysbench(w) => frontend::main(|| Tool::Sysbench.parse(&w.words)),
        Command::Iozone(w) => frontend::main(|| Tool::Iozone.parse(&w.words)),
        Command::Ior(w) => frontend::main(|| Tool::Ior.parse(&w.words)),
        Command::Mdtest(w) => frontend::main(|| Tool::Mdtest.parse(&w.words)),
        Command::Doctor(args) => doctor::main(args),
        Command::Info(args) => info::main(args),
        Command::Study(args) => study::main(args),
        Command::Report(args) => report::main(args),
        Command::Compare(args) => compare::main(args),
        Command::Completions { shell } => {
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "fslab", &mut script);
            out::print(&String::from_utf8_lossy(&script)).map(|()| ExitCode::SUCCESS)
        }
        Command::Manpages { dir } => manpages(&dir),
        Command::Schema { document } => out::print(
            match document {
                Document::Outcome => fslab_classic::Outcome::schema(),
                Document::Report => fslab_report::export::json::schema(),
                Document::Compare => fslab_report::compare::schema(),
            }
            .as_str(),
        )
        .map(|()| ExitCode::SUCCESS),
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
