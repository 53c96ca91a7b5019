//! What dbench prints, from what the engine measured, line for line as dbench 4.0 prints it.
//!
//! - Before the clients start ([`header`]): the version line, `Running for …`, the
//!   `0 of N` and `N of N processes prepared for launch   0 sec` lines and `releasing clients`.
//!   dbench prints a prepared line each 100 ms until all its processes wait at its barrier: the
//!   first, right after forking them, says 0; the last says N. fslab prints those two (dbench's
//!   lines between them, when its processes take more than 100 ms to prepare, it does not).
//! - Once a second ([`Live::tick`]): `NPROCS  lines  MB/sec  warmup|execute N sec  latency X ms`,
//!   where `lines` is the cumulative number of loadfile lines run ÷ clients, MB/sec is 10^6 bytes
//!   (ReadX + WriteX sizes) since the start of the phase ÷ seconds since then, and `latency` the
//!   longest step of that second. As in dbench, the second the warm-up ends in prints nothing,
//!   and the execute lines stop at `-t` − 1: the second the run ends in is a cleanup line.
//! - At the end ([`summary`]): `NPROCS  cleanup T sec` and `0  cleanup T sec` (dbench's line
//!   while its clients clean up, then once they all have), the per-operation table (count,
//!   average and maximum latency in ms) and `Throughput`, printed with `%g`: dbench's figure,
//!   the LAST once-per-second sample of the execute phase.
//! - Then, after a separating line, fslab's own figures: the mean over the whole execute phase,
//!   and the steps whose outcome differed from their line's status or that met a storage error,
//!   per operation (dbench prints or kills its client on those; fslab counts them).

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
            "{:4}  {:8}  {:7.2} MB/sec  {} {:3} sec  latency {:.3} ms",
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
    /// `-t`: the execute phase's seconds.
    time: Duration,
    /// Loadfile lines run so far (a line is one script step).
    lines: u64,
    phase: Phase,
    phase_bytes: u64,
    samples: Vec<Sample>,
}

impl Live {
    pub fn new(nprocs: u32, warmup: Duration, time: Duration) -> Live {
        Live {
            nprocs: nprocs.max(1),
            warmup,
            time,
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
    /// line, or none for the seconds dbench prints nothing for: before the first whole second of
    /// a phase, the second the warm-up ends in and the second the run ends in (its cleanup line).
    pub fn tick(&mut self, elapsed: Duration, second: &Second) -> Option<&Sample> {
        let phase = if second.ramp { Phase::Warmup } else { Phase::Execute };
        if phase != self.phase {
            self.phase = phase;
            self.phase_bytes = 0;
        }
        // dbench counts every line it reads, a Sleep too.
        self.lines += second.ops + second.sleeps;
        self.phase_bytes += second.bytes_read + second.bytes_written;
        let secs = match phase {
            Phase::Warmup => elapsed,
            Phase::Execute => elapsed.saturating_sub(self.warmup),
        }
        .as_secs_f64();
        let end = match phase {
            Phase::Warmup => self.warmup,
            Phase::Execute => self.time,
        };
        if secs < 0.5 || secs.round() >= end.as_secs_f64() {
            return None;
        }
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
        self.samples.last()
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
        "dbench version 4.00 - Copyright Andrew Tridgell 1999-2004\n\n\
         Running for {} seconds with load '{}' and minimum warmup {} secs\n\
         0 of {n} processes prepared for launch   0 sec\n\
         {n} of {n} processes prepared for launch   0 sec\n\
         releasing clients\n",
        opts.time,
        opts.loadfile_path().display(),
        opts.warmup_secs(),
        n = opts.nprocs,
    )
}

/// `x` as C's `printf("%g")` writes it: six significant digits, trailing zeros dropped, an
/// exponent below 1e-4 and from 1e6.
pub fn format_g(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return if x == 0.0 { "0".into() } else { format!("{x}") };
    }
    let exp = x.abs().log10().floor() as i32;
    // The exponent after rounding to six digits (999999.5 rounds to 1e+06).
    let exp = match format!("{x:.5e}").rsplit_once('e') {
        Some((_, e)) => e.parse().unwrap_or(exp),
        None => exp,
    };
    let trim = |s: String| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if (-4..6).contains(&exp) {
        trim(format!("{x:.*}", (5 - exp).max(0) as usize))
    } else {
        let s = format!("{x:.5e}");
        let (m, e) = s.split_once('e').expect("an exponent");
        let e: i32 = e.parse().expect("a number");
        format!(
            "{}e{}{:02}",
            trim(m.to_string()),
            if e < 0 { '-' } else { '+' },
            e.abs()
        )
    }
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

/// The cleanup lines, the operation table and the Throughput line as dbench prints them, then
/// fslab's own figures after a separating line.
pub fn summary(result: &RunResult, live: &Live, opts: &Options) -> String {
    let nprocs = opts.nprocs;
    let mut out = String::new();
    let secs = live.time.as_secs();
    let _ = writeln!(out, "{nprocs:4}  cleanup {secs:3} sec");
    let _ = writeln!(out, "{:4}  cleanup {secs:3} sec", 0);
    let rows = op_rows(result);
    let _ = writeln!(out, "\n Operation      Count    AvgLat    MaxLat");
    let _ = writeln!(out, " {}", "-".repeat(40));
    for r in &rows {
        let _ = writeln!(
            out,
            " {:<12} {:>7} {:>9.3} {:>9.3}",
            r.name, r.count, r.avg_lat_ms, r.max_lat_ms
        );
    }
    let _ = writeln!(
        out,
        "\nThroughput {} MB/sec{}{}  {} clients  {} procs  max_latency={:.3} ms",
        format_g(live.throughput().unwrap_or(0.0)),
        if opts.sync_open { " (sync open)" } else { "" },
        if opts.sync_dirs { " (sync dirs)" } else { "" },
        nprocs,
        nprocs,
        live.max_latency_ms()
    );
    out.push_str(&extras(result, &rows));
    out
}

/// fslab's figures, after dbench's report and set apart from it.
fn extras(result: &RunResult, rows: &[OpRow]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "\n--- fslab (not in dbench's output) ---");
    let _ = writeln!(
        out,
        "Mean {:.3} MB/sec over the whole {:.2} s execute phase (Throughput above is dbench's: its last \
         1-second sample)",
        mean_mb_per_sec(result),
        result.duration.as_secs_f64()
    );
    let odd: Vec<&OpRow> = rows.iter().filter(|r| r.mismatches + r.errors > 0).collect();
    if !odd.is_empty() {
        let _ = writeln!(
            out,
            "Steps that ended otherwise than their line's status expects (counted, not fatal), and \
             storage errors:"
        );
        let _ = writeln!(out, " Operation      Mismatch    Errors");
        for r in odd {
            let _ = writeln!(out, " {:<12} {:>9} {:>9}", r.name, r.mismatches, r.errors);
        }
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
            sleeps: 0,
            latency: None,
        }
    }

    #[test]
    fn mb_per_sec_restarts_with_the_execute_phase() {
        let mut live = Live::new(2, Duration::from_secs(2), Duration::from_secs(5));
        let s = live
            .tick(Duration::from_secs(1), &second(true, 100, 3_000_000, 1_000_000, 1500.0))
            .cloned()
            .unwrap();
        assert_eq!((s.phase, s.lines), (Phase::Warmup, 50));
        assert!((s.mb_per_sec - 4.0).abs() < 1e-9);
        assert_eq!(
            s.line(2),
            "   2        50     4.00 MB/sec  warmup   1 sec  latency 1.500 ms"
        );
        // The second the warm-up ends in prints nothing, as in dbench.
        assert!(live
            .tick(Duration::from_secs(2), &second(true, 100, 4_000_000, 0, 900.0))
            .is_none());
        let s = live
            .tick(Duration::from_secs(3), &second(false, 10, 1_000_000, 1_000_000, 2000.0))
            .cloned()
            .unwrap();
        assert_eq!((s.phase, s.lines, s.secs), (Phase::Execute, 105, 1.0));
        assert!((s.mb_per_sec - 2.0).abs() < 1e-9);
        let s = live
            .tick(Duration::from_secs(4), &second(false, 10, 6_000_000, 0, 500.0))
            .cloned()
            .unwrap();
        assert!((s.mb_per_sec - 4.0).abs() < 1e-9, "{s:?}");
        assert_eq!(
            s.line(2),
            "   2       110     4.00 MB/sec  execute   2 sec  latency 0.500 ms"
        );
    }

    #[test]
    fn execute_lines_stop_at_t_minus_1_and_throughput_is_the_last_of_them() {
        let mut live = Live::new(1, Duration::from_secs(1), Duration::from_secs(3));
        assert_eq!(live.throughput(), None);
        // dbench's -t 3 with a 1 s warm-up: no warm-up line, execute 1 and 2, then cleanup.
        let printed: Vec<Option<String>> = [
            (1, true, 50_000_000, 90_000.0),
            (2, false, 30_000_000, 7_000.0),
            (3, false, 0, 3_000.0),
            (4, false, 90_000_000, 1_000.0),
        ]
        .iter()
        .map(|&(t, ramp, bytes, lat)| {
            live.tick(Duration::from_secs(t), &second(ramp, 1, bytes, 0, lat))
                .map(|s| s.line(1))
        })
        .collect();
        assert_eq!(
            printed,
            vec![
                None,
                Some("   1         2    30.00 MB/sec  execute   1 sec  latency 7.000 ms".to_string()),
                Some("   1         3    15.00 MB/sec  execute   2 sec  latency 3.000 ms".to_string()),
                None,
            ]
        );
        // 30 MB over 2 s: the last printed sample, not the best (30), the warm-up's, nor the
        // second the run ended in.
        assert_eq!(live.throughput(), Some(15.0));
        assert_eq!(live.max_latency_ms(), 7.0);
    }

    #[test]
    fn format_g_is_printf_s() {
        for (x, s) in [
            (0.0, "0"),
            (1268.78, "1268.78"),
            (1268.7849, "1268.78"),
            (355.3731, "355.373"),
            (12.5, "12.5"),
            (100.0, "100"),
            (0.000123456, "0.000123456"),
            (0.00001234567, "1.23457e-05"),
            (1234567.0, "1.23457e+06"),
            (999999.7, "1e+06"),
        ] {
            assert_eq!(format_g(x), s, "{x}");
        }
    }

    #[test]
    fn the_header_is_dbench_s_with_its_prepared_line() {
        let opts = Options {
            nprocs: 4,
            time: 10,
            ..Options::default()
        };
        assert_eq!(
            header(&opts),
            "dbench version 4.00 - Copyright Andrew Tridgell 1999-2004\n\n\
             Running for 10 seconds with load '/usr/share/dbench/client.txt' and minimum warmup 2 secs\n\
             0 of 4 processes prepared for launch   0 sec\n\
             4 of 4 processes prepared for launch   0 sec\n\
             releasing clients\n"
        );
    }
}
