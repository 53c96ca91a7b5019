//! The monitor: the calling thread's part while the workers run. It releases them together,
//! ends the ramp, stops the run at its time limit or fill level, and samples the workers' live
//! counters once a second into the series and the caller's progress.

use super::{Progress, RunOptions};
use crate::cpu::CpuSnapshot;
use crate::live_latency::LatencyTally;
use crate::result::{Second, StopReason};
use crate::space::utilisation;
use crate::steady::{SteadyFigure, SteadyOutcome};
use crate::worker::{LiveCounters, Shared};
use crate::workload::{OpKind, Workload};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// When the measured phase started, as the monitor saw it.
pub(super) struct Timing {
    pub measure_start: Instant,
    pub cpu_start: CpuSnapshot,
    /// Set when the monitor itself ended the run (time, utilisation, steady state).
    pub stopped: Option<StopReason>,
    /// With `stop.steady`: whether and when the figure levelled off.
    pub steady: Option<SteadyOutcome>,
}

/// The monitor: releases the threads, ends the ramp, enforces the time and utilisation limits,
/// and samples the live counters once a second until every thread is done.
#[allow(clippy::too_many_arguments)]
pub(super) fn monitor(
    workload: &Workload,
    shared: &Shared,
    live: &[LiveCounters],
    done: &mpsc::Receiver<()>,
    threads: u64,
    util: Option<(std::os::fd::BorrowedFd<'_>, f64)>,
    opts: &RunOptions,
    series: &mut Vec<Second>,
    progress: &mut dyn FnMut(&Progress),
) -> Timing {
    let (interrupt, peer_stop, stopping) = (
        opts.interrupt.as_deref(),
        opts.peer_stop.as_deref(),
        opts.stopped.as_deref(),
    );
    let ramp = workload.stop.ramp.0;
    let machine = !opts.one_process;
    let mut cpu_start = CpuSnapshot::take(machine);
    // The run starts when the start line opens, once every worker is ready (its buffers, ring
    // and files): taken by the last to arrive before it lets anyone go, since a worker with
    // little to do may finish before the monitor could read the clock after it.
    shared.start.wait();
    let start = shared.start.opened_at();
    let mut measure_start = start;
    let ramp_end = (!ramp.is_zero()).then(|| start + ramp);
    let mut deadline = workload.stop.time.map(|t| start + ramp + t.0);
    let planned = workload.stop.time.map(|t| ramp + t.0);
    let mut stopped = None;
    let mut in_ramp = ramp_end.is_some();
    let mut last = [[0u64; OpKind::ALL.len()]; 2];
    let mut last_sleeps = 0;
    let mut last_tick = start;
    let mut next_tick = start + Duration::from_secs(1);
    let mut running = threads;
    // Filling to a utilisation is checked ten times a second, or every stop.util_poll.
    let util_every = workload.stop.util_poll.map_or(Duration::from_millis(100), |p| p.0);
    let mut next_util = start + util_every;
    let scripted = workload.groups.iter().any(|g| g.script.is_some());
    let mut tally = LatencyTally::new(live.len());
    // stop.steady: the figure of each whole second after the ramp, the newest last.
    let steady = workload.stop.steady;
    let mut window: std::collections::VecDeque<f64> = std::collections::VecDeque::new();
    let mut steady_outcome = steady.map(|_| SteadyOutcome {
        reached: false,
        at_s: None,
        mean: None,
    });

    let mut sample = |now: Instant, last_tick: &mut Instant, in_ramp: bool, series: &mut Vec<Second>| {
        let mut cur = [[0u64; OpKind::ALL.len()]; 2];
        let mut max_ns = 0;
        let mut sleeps = 0;
        for (t, l) in live.iter().enumerate() {
            for (k, (ops, bytes)) in l.ops.iter().zip(&l.bytes).enumerate() {
                cur[0][k] += ops.load(Relaxed);
                cur[1][k] += bytes.load(Relaxed);
            }
            max_ns = max_ns.max(l.max_ns.swap(0, Relaxed));
            sleeps += l.sleeps.load(Relaxed);
            tally.add(t, &l.latency);
        }
        let latency = tally.finish();
        let mut sec = Second {
            t: (now - start).as_secs_f64(),
            ramp: in_ramp,
            ops: 0,
            bytes_read: 0,
            bytes_written: 0,
            by_op: Vec::new(),
            max_latency_us: scripted.then_some(max_ns as f64 / 1000.0),
            sleeps: sleeps - last_sleeps,
            latency: latency.summary(),
        };
        last_sleeps = sleeps;
        for (k, kind) in OpKind::ALL.iter().enumerate() {
            let (dops, dbytes) = (cur[0][k] - last[0][k], cur[1][k] - last[1][k]);
            sec.ops += dops;
            if kind.writes() {
                sec.bytes_written += dbytes;
            } else {
                sec.bytes_read += dbytes;
            }
            if dops > 0 {
                sec.by_op.push((*kind, dops));
            }
        }
        last = cur;
        let span = (now - *last_tick).as_secs_f64().max(1e-9);
        *last_tick = now;
        let p = Progress {
            elapsed: now - start,
            planned,
            in_ramp,
            ops_per_sec: sec.ops as f64 / span,
            bytes_per_sec: (sec.bytes_read + sec.bytes_written) as f64 / span,
            second: sec.clone(),
            latency,
        };
        series.push(sec);
        p
    };

    while running > 0 {
        let mut wake = next_tick;
        if let Some(r) = ramp_end.filter(|_| in_ramp) {
            wake = wake.min(r);
        }
        if let Some(d) = deadline {
            wake = wake.min(d);
        }
        if util.is_some() {
            wake = wake.min(next_util);
        }
        if interrupt.is_some() {
            // The caller's interruption is checked ten times a second.
            wake = wake.min(Instant::now() + Duration::from_millis(100));
        }
        if peer_stop.is_some() || stopping.is_some() {
            // Another rank's stonewall, and this run's own stop for the others, are checked a
            // hundred times a second.
            wake = wake.min(Instant::now() + Duration::from_millis(10));
        }
        if let Some(s) = stopping.filter(|_| shared.stop.load(Relaxed)) {
            s.store(true, Relaxed);
        }
        match done.recv_timeout(wake.saturating_duration_since(Instant::now())) {
            Ok(()) => {
                running -= 1;
                continue;
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        let now = Instant::now();
        // Sample first: a tick that falls on the end of the ramp covers the ramp's last second.
        if now >= next_tick {
            let p = sample(now, &mut last_tick, in_ramp, series);
            progress(&p);
            next_tick += Duration::from_secs(1);
            if let (Some(rule), Some(outcome), false) = (steady, steady_outcome.as_mut(), p.in_ramp) {
                let value = match rule.on {
                    SteadyFigure::Throughput => p.bytes_per_sec,
                    SteadyFigure::Iops => p.ops_per_sec,
                    SteadyFigure::Latency => p.second.latency.map_or(0.0, |l| l.mean_us),
                };
                window.push_back(value);
                while window.len() > rule.seconds() {
                    window.pop_front();
                }
                let values: Vec<f64> = window.iter().copied().collect();
                outcome.mean = Some(values.iter().sum::<f64>() / values.len() as f64);
                if values.len() == rule.seconds() && rule.holds(&values) && !shared.stop.load(Relaxed) {
                    outcome.reached = true;
                    outcome.at_s = Some((now - measure_start).as_secs_f64());
                    stopped = Some(StopReason::Steady);
                    shared.stop.store(true, Relaxed);
                }
            }
        }
        if in_ramp && ramp_end.is_some_and(|r| now >= r) {
            in_ramp = false;
            cpu_start = CpuSnapshot::take(machine);
            measure_start = Instant::now();
            // The time limit counts from the real end of the ramp.
            deadline = workload.stop.time.map(|t| measure_start + t.0);
            shared.measuring.store(true, Relaxed);
        }
        if interrupt.is_some_and(|i| i.load(Relaxed)) && !shared.stop.load(Relaxed) {
            stopped = Some(StopReason::Interrupted);
            shared.stop.store(true, Relaxed);
        }
        if peer_stop.is_some_and(|p| p.load(Relaxed)) && !shared.stop.load(Relaxed) {
            stopped = Some(StopReason::Stonewall);
            shared.stop.store(true, Relaxed);
        }
        if deadline.is_some_and(|d| now >= d) && !shared.stop.load(Relaxed) {
            stopped = Some(StopReason::Time);
            shared.stop.store(true, Relaxed);
            deadline = None;
        }
        if let Some((fd, target)) = util.filter(|_| now >= next_util) {
            next_util = now + util_every;
            if !shared.stop.load(Relaxed) && utilisation(fd).is_some_and(|u| u >= target) {
                stopped = Some(StopReason::Util);
                shared.stop.store(true, Relaxed);
            }
        }
    }
    if let Some(s) = stopping {
        s.store(true, Relaxed);
    }
    let now = Instant::now();
    // The last, partial second: the series then adds up to the totals.
    if now > last_tick {
        sample(now, &mut last_tick, in_ramp, series);
    }
    if in_ramp {
        // The run ended inside its ramp: nothing was measured after it.
        measure_start = now;
    }
    Timing {
        measure_start,
        cpu_start,
        stopped,
        steady: steady_outcome,
    }
}
