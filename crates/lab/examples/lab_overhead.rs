//! The lab's own overhead per cell: attach a fresh sparse loop image, wipe, mkfs, mount, umount,
//! detach, each step timed, for each filesystem type, over several rounds. Run by bench/lab.sh:
//!
//!   lab_overhead [--rounds 5] [--size-gib 4] [--fs ext4,xfs]
//!
//! Prints each round's times, then the median of each step and of the cell (wipe to umount).

use fslab_lab::device::{wipe, LoopImage};
use fslab_lab::filesystem::{mkfs, mount, umount};
use fslab_lab::LabError;
use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// The steps timed, in order; the cell is wipe to umount.
const STEPS: [&str; 6] = ["attach", "wipe", "mkfs", "mount", "umount", "detach"];
const CELL: std::ops::Range<usize> = 1..5;
const GOAL: Duration = Duration::from_secs(2);

struct Options {
    rounds: usize,
    size: u64,
    types: Vec<String>,
}

fn parse_args() -> Result<Options, String> {
    let mut o = Options {
        rounds: 5,
        size: 4 << 30,
        types: vec!["ext4".into(), "xfs".into()],
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or(format!("{flag} needs a value"))?;
        let number = || {
            value
                .parse::<u64>()
                .map_err(|_| format!("{flag}: `{value}` is not a whole number"))
        };
        match flag.as_str() {
            "--rounds" => o.rounds = number()?.max(1) as usize,
            "--size-gib" => o.size = number()? << 30,
            "--fs" => o.types = value.split(',').map(str::to_string).collect(),
            _ => return Err(format!("unknown option {flag} (--rounds, --size-gib, --fs)")),
        }
    }
    Ok(o)
}

/// Times each step of one cell of `fs_type` on a fresh image in `dir`.
fn cell(dir: &Path, size: u64, fs_type: &str) -> Result<[Duration; 6], LabError> {
    let mut times = [Duration::ZERO; 6];
    let mut t = Instant::now();
    let mut lap = |i: usize| {
        times[i] = t.elapsed();
        t = Instant::now();
    };
    let img = LoopImage::create(dir, size)?;
    lap(0);
    wipe(img.device())?;
    lap(1);
    mkfs(img.device(), fs_type, "")?;
    lap(2);
    let mnt = dir.join("mnt");
    std::fs::create_dir_all(&mnt).map_err(|e| LabError::io("mount point", e))?;
    mount(Some(img.device()), &mnt, fs_type, "")?;
    lap(3);
    umount(&mnt)?;
    lap(4);
    drop(img);
    lap(5);
    Ok(times)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2
    }
}

fn ms(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1e3)
}

fn main() -> ExitCode {
    let o = match parse_args() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("lab_overhead: {e}");
            return ExitCode::from(2);
        }
    };
    let dir = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("lab_overhead: a temporary directory: {e}");
            return ExitCode::from(1);
        }
    };
    let gib = o.size as f64 / (1u64 << 30) as f64;
    println!("lab overhead per cell: a fresh sparse {gib} GiB loop image per cell, times in ms\n");
    println!(
        "{:<6} {:>5} {}",
        "fs",
        "round",
        STEPS.map(|s| format!("{s:>8}")).join("")
    );
    let mut all: Vec<(String, Vec<[Duration; 6]>)> = o.types.iter().map(|t| (t.clone(), Vec::new())).collect();
    for round in 1..=o.rounds {
        // Alternate the types within each round, so drift on the machine touches all alike.
        for (fs_type, rounds) in &mut all {
            match cell(dir.path(), o.size, fs_type) {
                Ok(t) => {
                    println!(
                        "{fs_type:<6} {round:>5} {}",
                        t.map(|d| format!("{:>8}", ms(d))).join("")
                    );
                    rounds.push(t);
                }
                Err(e) => {
                    eprintln!("lab_overhead: {fs_type}, round {round}: {e}");
                    return ExitCode::from(
                        if matches!(e, LabError::Missing { .. } | LabError::Unsupported { .. }) {
                            3
                        } else {
                            1
                        },
                    );
                }
            }
        }
    }
    println!(
        "\nmedian of {} rounds (ms); cell = wipe + mkfs + mount + umount, goal <= {} ms\n",
        o.rounds,
        GOAL.as_millis()
    );
    println!(
        "{:<6} {}{:>8}  goal",
        "fs",
        STEPS.map(|s| format!("{s:>8}")).join(""),
        "cell"
    );
    for (fs_type, rounds) in &all {
        let step = |i: usize| median(rounds.iter().map(|t| t[i]).collect());
        let cell = median(rounds.iter().map(|t| t[CELL].iter().sum()).collect());
        let verdict = if cell <= GOAL { "PASS" } else { "MISS" };
        let steps: Vec<String> = (0..STEPS.len()).map(|i| format!("{:>8}", ms(step(i)))).collect();
        println!("{fs_type:<6} {}{:>8}  {verdict}", steps.join(""), ms(cell));
    }
    ExitCode::SUCCESS
}
