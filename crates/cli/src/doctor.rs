//! `fslab doctor`: what this machine can and cannot run, and how to get what it lacks.

use crate::Failure;
use fslab_lab::doctor;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Exit status: 0 when studies can run here (what is marked `no` only makes \
some cells unsupported), 3 when something every study needs is missing (root, loop devices, \
losetup, mount).

Examples:
  fslab doctor
  fslab doctor --json | jq '.[] | select(.ok | not) | .fix'"
)]
pub struct Args {
    /// Print the findings as one JSON array on stdout.
    #[arg(long)]
    json: bool,
}

pub fn main(args: Args) -> Result<ExitCode, Failure> {
    let found = doctor::examine();
    let text = if args.json {
        serde_json::to_string_pretty(&found).map_err(|e| Failure::Run(e.into()))? + "\n"
    } else {
        doctor::render(&found)
    };
    crate::out::print(&text)?;
    if found.iter().any(|f| f.essential && !f.ok) {
        return Ok(ExitCode::from(3));
    }
    Ok(ExitCode::SUCCESS)
}
