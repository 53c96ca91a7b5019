//! `fslab info`: the test bed (machine, devices, tools), as a study records it.

use crate::Failure;
use anyhow::anyhow;
use fslab_lab::device::BlockDevice;
use fslab_lab::testbed::{raw_read_mib_s, system_disks, TestBed};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// The version of `fslab info --json`'s document.
const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Without --device, fslab describes the machine's disks (not loop, ram or zram \
devices) and reads none of them. Each device named with --device is also read for --read-secs \
seconds, as `hdparm -t` does (its page cache dropped, then buffered 2 MiB reads): this needs root, \
and on a busy disk it is slow but harmless.

Examples:
  fslab info
  fslab info --device /dev/nvme0n1 --read-secs 5
  fslab info --json > testbed.json"
)]
pub struct Args {
    /// A block device to describe and measure the raw read speed of (repeatable).
    #[arg(long = "device", value_name = "DEV")]
    devices: Vec<PathBuf>,
    /// Print the test bed as one JSON document on stdout.
    #[arg(long)]
    json: bool,
    /// Seconds of the raw read of each --device (0: no raw read).
    #[arg(long, value_name = "SECONDS", default_value_t = 3)]
    read_secs: u64,
}

pub fn main(args: Args) -> Result<ExitCode, Failure> {
    for dev in &args.devices {
        BlockDevice::open(dev).map_err(|e| Failure::Input(anyhow!("--device {}: {e}", dev.display())))?;
    }
    let devices = if args.devices.is_empty() {
        system_disks()
    } else {
        args.devices.clone()
    };
    let mut bed = TestBed::capture(&devices);
    if args.read_secs > 0 {
        for d in bed.devices.iter_mut().filter(|d| args.devices.contains(&d.path)) {
            let speed = raw_read_mib_s(&d.path, Duration::from_secs(args.read_secs))
                .map_err(|e| Failure::Environment(anyhow!("raw read of {}: {e}", d.path.display())))?;
            d.raw_read_mib_s = Some(speed);
        }
    }
    let text = if args.json {
        let mut doc = serde_json::to_value(&bed).map_err(|e| Failure::Run(e.into()))?;
        doc["schema_version"] = SCHEMA_VERSION.into();
        format!("{doc:#}\n")
    } else {
        bed.render()
    };
    crate::out::print(&text).map(|()| ExitCode::SUCCESS)
}
