//! What dbench prints, from what the engine measured.
//!
//! - Once a second ([`Live::tick`]): `NPROCS lines MB/sec warmup|execute N sec latency X ms`, where
//!   `lines` is the cumulative number of loadfile lines run ÷ clients, MB/sec is 10^6 bytes
//!   (ReadX + WriteX sizes) since the start of the phase ÷ seconds since then, and `latency` the
//!   longest step of that second.
//! - At the end ([`summary`]): the cleanup line, the per-operation table (count, average and
//!   maximum latency in ms; a mismatch column when any step's outcome differed from its status),
//!   and `Throughput`: dbench's figure, the LAST once-per-second sample of the execute phase,
//!   with fslab's mean over the whole execute phase on the next line.

use super::{Options, LABELS};
use fslab_engine::result::{RunResult, Second, StepResult};
use serde::Serialize;
use std::fmt::Write;
use std::time::Duration;

/// dbench's MB.
const MB: f64 = 1e6;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    Warmup,
    Execute,
}

impl Phase {
    pub fn name(self) -> &'static str {
        match self {
            Phase::Warmup => "warmup",
            Phase::Execute => "execute",
        }
    }
}

/// One once-per-second line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sample {
    pub phase: Phase,
    /// Seconds since the start of the phase.
    pub secs: f64,
    /// Loadfile lines run since the start, ÷ clients.
    pub lines: u64,
    /// MB/sec since the start of the phase.
    pub mb_per_sec: f64,
    /// The longest step of this second, in ms.
    pub latency_ms: f64,
}

impl Sample {
    /// The line as dbench prints it.
    pub fn line(&self, nprocs: u32) -> String {
        format!(
            "{:4} {:9} {:8.2} MB/sec  {} {:3} sec  latency {:.3} ms",
            nprocs,
            self.lines,
            self.mb_per_sec,
            self.phase.name(),
            self.secs.round() as u64,
            self.latency_ms
        )
    }
}

/// The per-second view, fed from the engine's progress callback.
#[derive(Debug, Clone)]
pub struct Live {
    nprocs: u32,
    warmup: Duration,
    /// Loadfile lines run so far (a line is one script step).
    lines: u64,
    phase: Phase,
    phase_bytes: u64,
    samples: Vec<Sample>,
}

impl Live {
    pub fn new(nprocs: u32, warmup: Duration) -> Live {
        Live {
            nprocs: nprocs.max(1),
            warmup,
            lines: 0,
            phase: if warmup.is_zero() {
                Phase::Execute
            } else {
                Phase::Warmup
            },
            phase_bytes: 0,
            samples: Vec::new(),
        }
    }

    /// Takes one second of the run (`elapsed`: since the clients were released) and returns its
    /// line.
    pub fn tick(&mut self, elapsed: Duration, second: &Second) -> &Sample {
        let phase = if second.ramp { Phase::Warmup } else { Phase::Execute };
        if phase != self.phase {
            self.phase = phase;
            self.phase_bytes = 0;
        }
        self.lines += second.ops;
        self.phase_bytes += second.bytes_read + second.bytes_written;
        let secs = match phase {
            Phase::Warmup => elapsed,
            Phase::Execute => elapsed.saturating_sub(self.warmup),
        }
        .as_secs_f64();
        self.samples.push(Sample {
            phase,
            secs,
            lines: self.lines / u64::from(self.nprocs),
            mb_per_sec: if secs > 0.0 {
                self.phase_bytes as f64 / MB / secs
            } else {
                0.0
            },
            latency_ms: second.max_latency_us.unwrap_or(0.0) / 1000.0,
        });
        self.samples.last().expect("just pushed")
    }

    pub fn samples(&self) -> &[Sample] {
        &self.samples
    }

    /// dbench's Throughput: the last once-per-second sample of the execute phase.
    pub fn throughput(&self) -> Option<f64> {
        self.execute().last().map(|s| s.mb_per_sec)
    }

    /// dbench's max_latency: the worst one-second latency of the execute phase, in ms.
    pub fn max_latency_ms(&self) -> f64 {
        self.execute().map(|s| s.latency_ms).fold(0.0, f64::max)
    }

    fn execute(&self) -> impl DoubleEndedIterator<Item = &Sample> {
        self.samples.iter().filter(|s| s.phase == Phase::Execute)
    }
}

/// What dbench prints before the clients start.
pub fn header(opts: &Options) -> String {
    format!(
        "fslab dbench: dbench 4.00's loadfile replay on fslab's engine\n\n\
         Running for {} seconds with load '{}' and minimum warmup {} secs\n\
         {} clients, each in {}/clients/client<N>\n\
         releasing clients\n",
        opts.time,
        opts.loadfile_path().display(),
        opts.warmup_secs(),
        opts.nprocs,
        opts.dir.display()
    )
}

/// One row of dbench's operation table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OpRow {
    pub name: String,
    pub count: u64,
    pub avg_lat_ms: f64,
    pub max_lat_ms: f64,
    /// Steps whose outcome was not the one their status expects.
    pub mismatches: u64,
    /// Errors the storage reported (no space, I/O error...).
    pub errors: u64,
}

/// The table's rows: dbench's operations that ran, in its order.
pub fn op_rows(result: &RunResult) -> Vec<OpRow> {
    LABELS
        .iter()
        .filter_map(|name| result.steps.iter().find(|s| s.name == *name))
        .filter(|s| s.count + s.errors > 0)
        .map(|s: &StepResult| OpRow {
            name: s.name.clone(),
            count: s.count,
            avg_lat_ms: s.latency.mean_us / 1000.0,
            max_lat_ms: s.latency.max_us / 1000.0,
            mismatches: s.mismatches,
            errors: s.errors,
        })
        .collect()
}

/// ReadX and WriteX bytes over the execute phase, as dbench counts them (the sizes asked for).
pub fn execute_bytes(result: &RunResult) -> u64 {
    result
        .steps
        .iter()
        .filter(|s| s.name == "ReadX" || s.name == "WriteX")
        .map(|s| s.bytes)
        .sum()
}

/// fslab's figure: MB/sec over the whole execute phase.
pub fn mean_mb_per_sec(result: &RunResult) -> f64 {
    let secs = result.duration.as_secs_f64();
    if secs > 0.0 {
        execute_bytes(result) as f64 / MB / secs
    } else {
        0.0
    }
}

/// The cleanup line, the operation table and the Throughput lines.
pub fn summary(result: &RunResult, live: &Live, nprocs: u32) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:4}  cleanup {:3} sec",
        nprocs,
        result.duration.as_secs_f64().round() as u64
    );
    let rows = op_rows(result);
    let mismatches = rows.iter().any(|r| r.mismatches > 0);
    let errors = rows.iter().any(|r| r.errors > 0);
    let _ = write!(out, "\n Operation      Count    AvgLat    MaxLat");
    let mut rule = 40;
    if mismatches {
        out.push_str("  Mismatch");
        rule += 10;
    }
    if errors {
        out.push_str("    Errors");
        rule += 10;
    }
    let _ = writeln!(out, "\n {}", "-".repeat(rule));
    for r in &rows {
        let _ = write!(
            out,
            " {:<13}{:>7} {:>9.3} {:>9.3}",
            r.name, r.count, r.avg_lat_ms, r.max_lat_ms
        );
        if mismatches {
            let _ = write!(out, "  {:>8}", r.mismatches);
        }
        if errors {
            let _ = write!(out, "  {:>8}", r.errors);
        }
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "\nThroughput {:.3} MB/sec  {} clients  {} procs  max_latency={:.3} ms",
        live.throughput().unwrap_or(0.0),
        nprocs,
        nprocs,
        live.max_latency_ms()
    );
    let _ = writeln!(
        out,
        "Mean       {:.3} MB/sec  over the whole {:.2} s execute phase (fslab's figure; Throughput above is \
         dbench's: its last 1-second sample)",
        mean_mb_per_sec(result),
        result.duration.as_secs_f64()
    );
    if mismatches {
        let total: u64 = rows.iter().map(|r| r.mismatches).sum();
        let _ = writeln!(
            out,
            "{total} step(s) ended otherwise than the loadfile's status expects (counted, not fatal)"
        );
    }
    out
}

/// dbench's figures of one run, in its terms and units (MB = 10^6 bytes, ms).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Figures {
    pub compatible_with: &'static str,
    pub loadfile: String,
    pub clients: u32,
    pub procs: u32,
    pub warmup_secs: u64,
    pub time_secs: u64,
    /// dbench's Throughput: the last once-per-second sample of the execute phase; none when the
    /// execute phase had no sample.
    pub throughput_mb_per_sec: Option<f64>,
    /// fslab's figure: ReadX + WriteX bytes over the whole execute phase ÷ its duration.
    pub mean_mb_per_sec: f64,
    /// The worst one-second latency of the execute phase.
    pub max_latency_ms: f64,
    /// Loadfile lines run ÷ clients, at the last sample.
    pub lines: u64,
    /// Steps whose outcome differed from the loadfile's status.
    pub mismatches: u64,
    /// Steps of the compiled script (one per loadfile line).
    pub script_steps: usize,
    pub operations: Vec<OpRow>,
    pub seconds: Vec<Sample>,
}

/// dbench's figures from the run and its once-a-second samples.
pub fn figures(result: &RunResult, live: &Live, opts: &Options) -> Figures {
    Figures {
        compatible_with: "dbench 4.00",
        loadfile: opts.loadfile_path().display().to_string(),
        clients: opts.nprocs,
        procs: opts.nprocs,
        warmup_secs: opts.warmup_secs(),
        time_secs: opts.time,
        throughput_mb_per_sec: live.throughput(),
        mean_mb_per_sec: mean_mb_per_sec(result),
        max_latency_ms: live.max_latency_ms(),
        lines: live.samples().last().map_or(0, |s| s.lines),
        mismatches: result.steps.iter().map(|s| s.mismatches).sum(),
        script_steps: result
            .workload
            .groups
            .iter()
            .filter_map(|g| g.script.as_ref())
            .map(|s| s.steps.len())
            .sum(),
        operations: op_rows(result),
        seconds: live.samples().to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn second(ramp: bool, ops: u64, read: u64, written: u64, lat_us: f64) -> Second {
        Second {
            t: 0.0,
            ramp,
            ops,
            bytes_read: read,
            bytes_written: written,
            by_op: Vec::new(),
            max_latency_us: Some(lat_us),
            latency: None,
        }
    }

    #[test]
    fn mb_per_sec_restarts_with_the_execute_phase() {
        let mut live = Live::new(2, Duration::from_secs(2));
        let s = live.tick(Duration::from_secs(1), &second(true, 100, 3_000_000, 1_000_000, 1500.0));
        assert_eq!((s.phase, s.lines), (Phase::Warmup, 50));
        assert!((s.mb_per_sec - 4.0).abs() < 1e-9);
        live.tick(Duration::from_secs(2), &second(true, 100, 4_000_000, 0, 900.0));
        let s = live.tick(Duration::from_secs(3), &second(false, 10, 1_000_000, 1_000_000, 2000.0));
        assert_eq!((s.phase, s.lines, s.secs), (Phase::Execute, 105, 1.0));
        assert!((s.mb_per_sec - 2.0).abs() < 1e-9);
        let s = live.tick(Duration::from_secs(4), &second(false, 10, 6_000_000, 0, 500.0));
        assert!((s.mb_per_sec - 4.0).abs() < 1e-9, "{s:?}");
        assert_eq!(
            s.line(2),
            "   2       110     4.00 MB/sec  execute   2 sec  latency 0.500 ms"
        );
    }

    #[test]
    fn throughput_is_the_last_execute_sample_and_max_latency_its_worst_second() {
        let mut live = Live::new(1, Duration::from_secs(1));
        assert_eq!(live.throughput(), None);
        live.tick(Duration::from_secs(1), &second(true, 1, 50_000_000, 0, 90_000.0));
        live.tick(Duration::from_secs(2), &second(false, 1, 30_000_000, 0, 7_000.0));
        live.tick(Duration::from_secs(3), &second(false, 1, 0, 0, 3_000.0));
        // 30 MB over 2 s: the last sample, not the best (30) nor the warm-up's.
        assert_eq!(live.throughput(), Some(15.0));
        assert_eq!(live.max_latency_ms(), 7.0);
    }
}
