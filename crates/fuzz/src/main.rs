//! `fslab-fuzz`: fuzzes fslab's parsers for a bounded time, or replays their corpora.

use fslab_fuzz::{Session, TARGETS};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

const USAGE: &str = "\
usage: fslab-fuzz [OPTIONS] [TARGET...]     fuzz the targets (all by default)
       fslab-fuzz replay [TARGET...]        run every corpus entry once
       fslab-fuzz run TARGET FILE...        run these inputs (to reproduce a finding)
       fslab-fuzz list                      name the targets

options:
  --time SECONDS    time in all, shared by the targets (default 60)
  --seed N          seed of the mutations (default: from the clock; printed)
  --max-len BYTES   largest input made (default 16384)
  --memory MIB      heap one input may grow by (default 256)
  --hang SECONDS    time one input may take (default 10; 30 in a debug build)
  --out DIR         where findings and new corpus entries go (default target/fuzz)

Exit status: 0 nothing found, 1 a panic, 2 usage, 3 a hang, 4 an input past the memory budget.";

/// Seconds one input may take by default. A debug build (CI fuzzes with the one its tests
/// made) runs the parsers about 25 times slower: IOzone's automatic mode up to `-g 4294967295m`
/// plans 4,732 measurements, whose `--explain` takes 0.35 s optimized and 9.5 s in debug.
const DEFAULT_HANG: u64 = if cfg!(debug_assertions) { 30 } else { 10 };

struct Args {
    time: Duration,
    seed: u64,
    max_len: usize,
    memory: usize,
    hang: Duration,
    out: PathBuf,
    words: Vec<String>,
}

fn parse(argv: Vec<String>) -> Result<Args, String> {
    let mut a = Args {
        time: Duration::from_secs(60),
        seed: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64),
        max_len: 16384,
        memory: 256,
        hang: Duration::from_secs(DEFAULT_HANG),
        out: fslab_fuzz::repo().join("target/fuzz"),
        words: Vec::new(),
    };
    let mut it = argv.into_iter();
    while let Some(arg) = it.next() {
        let mut value = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value"));
        let number = |name: &str, v: String| {
            v.parse::<u64>()
                .map_err(|_| format!("{name} `{v}`: not a whole number"))
        };
        match arg.as_str() {
            "--time" => a.time = Duration::from_secs(number("--time", value("--time")?)?),
            "--seed" => a.seed = number("--seed", value("--seed")?)?,
            "--max-len" => a.max_len = number("--max-len", value("--max-len")?)?.max(1) as usize,
            "--memory" => a.memory = number("--memory", value("--memory")?)? as usize,
            "--hang" => a.hang = Duration::from_secs(number("--hang", value("--hang")?)?.max(1)),
            "--out" => a.out = PathBuf::from(value("--out")?),
            "-h" | "--help" => return Err(String::new()),
            s if s.starts_with('-') => return Err(format!("unknown option {s}")),
            _ => a.words.push(arg),
        }
    }
    Ok(a)
}

fn targets(names: &[String]) -> Result<Vec<&'static fslab_fuzz::Target>, String> {
    if names.is_empty() {
        return Ok(TARGETS.iter().collect());
    }
    names
        .iter()
        .map(|n| {
            fslab_fuzz::target(n).ok_or_else(|| {
                let all: Vec<&str> = TARGETS.iter().map(|t| t.name).collect();
                format!("unknown target `{n}` (the targets: {})", all.join(", "))
            })
        })
        .collect()
}

fn main() -> ExitCode {
    let a = match parse(std::env::args().skip(1).collect()) {
        Ok(a) => a,
        Err(e) => {
            if e.is_empty() {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            eprintln!("fslab-fuzz: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    fslab_fuzz::bound_memory(a.memory << 20, &a.out);
    let hang = a.hang;
    let out = a.out.clone();
    let result = fslab_fuzz::guarded(hang, move || work(a));
    match result {
        Ok(code) => code,
        Err(hung) => {
            let path = out.join(format!("hang-{:016x}.bin", fslab_fuzz::fnv(&hung.input)));
            let _ = std::fs::create_dir_all(&out);
            let saved = std::fs::write(&path, &hung.input).is_ok();
            eprintln!(
                "fslab-fuzz: an input ran for {:.1} s without returning{}",
                hung.after.as_secs_f64(),
                if saved {
                    format!("; saved in {}", path.display())
                } else {
                    String::new()
                }
            );
            // The stuck thread cannot be stopped: end the process.
            std::process::exit(3)
        }
    }
}

fn work(a: Args) -> ExitCode {
    let (command, names) = match a.words.first().map(String::as_str) {
        Some(c @ ("replay" | "run" | "list")) => (c, a.words[1..].to_vec()),
        _ => ("fuzz", a.words.clone()),
    };
    match command {
        "list" => {
            for t in TARGETS {
                println!("{:10} {}", t.name, t.what);
            }
            ExitCode::SUCCESS
        }
        "run" => {
            let Some((name, files)) = names.split_first() else {
                eprintln!("fslab-fuzz: run needs a target and files\n{USAGE}");
                return ExitCode::from(2);
            };
            let t = match targets(std::slice::from_ref(name)) {
                Ok(t) => t[0],
                Err(e) => {
                    eprintln!("fslab-fuzz: {e}");
                    return ExitCode::from(2);
                }
            };
            let mut code = ExitCode::SUCCESS;
            for f in files {
                let input = match std::fs::read(f) {
                    Ok(b) => b,
                    Err(e) => {
                        eprintln!("fslab-fuzz: cannot read {f}: {e}");
                        return ExitCode::from(2);
                    }
                };
                match fslab_fuzz::exec(t, &input) {
                    fslab_fuzz::Ran::Returned(shape) => println!("{f}: returned ({shape})"),
                    fslab_fuzz::Ran::Panicked(m) => {
                        println!("{f}: PANIC {m}");
                        code = ExitCode::from(1);
                    }
                }
            }
            code
        }
        "replay" => {
            let ts = match targets(&names) {
                Ok(t) => t,
                Err(e) => {
                    eprintln!("fslab-fuzz: {e}");
                    return ExitCode::from(2);
                }
            };
            let mut code = ExitCode::SUCCESS;
            for t in ts {
                let (n, found) = fslab_fuzz::replay(t);
                println!("{:10} {n} corpus entries, {} panics", t.name, found.len());
                for f in found {
                    println!("  PANIC {}", f.message);
                    code = ExitCode::from(1);
                }
            }
            code
        }
        _ => {
            let ts = match targets(&names) {
                Ok(t) => t,
                Err(e) => {
                    eprintln!("fslab-fuzz: {e}");
                    return ExitCode::from(2);
                }
            };
            let each = a.time / ts.len() as u32;
            println!(
                "fslab-fuzz: seed {}, {:.0} s per target, inputs up to {} bytes, {} MiB and {} s per input",
                a.seed,
                each.as_secs_f64(),
                a.max_len,
                a.memory,
                a.hang.as_secs()
            );
            let session = Session {
                seed: a.seed,
                time: each,
                max_len: a.max_len,
                out: a.out.clone(),
            };
            let started = Instant::now();
            let (mut total, mut panics) = (0, 0);
            for t in ts {
                let s = fslab_fuzz::fuzz(t, &session);
                println!(
                    "{:10} {:>9} executions, corpus {:>5}, {:>4} outcomes, {} panics",
                    t.name,
                    s.execs,
                    s.corpus,
                    s.shapes,
                    s.findings.len()
                );
                for f in &s.findings {
                    let at = f.saved.as_ref().map_or("not saved".into(), |p| p.display().to_string());
                    println!("  PANIC {} ({at})", f.message);
                }
                total += s.execs;
                panics += s.findings.len();
            }
            println!(
                "fslab-fuzz: {total} executions in {:.0} s, {panics} distinct panics (seed {})",
                started.elapsed().as_secs_f64(),
                a.seed
            );
            if panics > 0 {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            }
        }
    }
}
