//! `fslab sysbench`: (being written).

use crate::Failure;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    rest: Vec<String>,
}

pub fn main(_args: Args) -> Result<ExitCode, Failure> {
    Err(Failure::Input(anyhow::anyhow!("fslab sysbench is not built yet")))
}
