//! The clock that times operations. Reading the monotonic clock costs tens of nanoseconds in a
//! virtual machine, several percent of a cached 4 KiB read; like fio's `clocksource=cpu`, fslab
//! reads the CPU's time-stamp counter instead, calibrated once against the monotonic clock,
//! when the kernel itself trusts the TSC (its clocksource is `tsc`). Otherwise it reads
//! `Instant`.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

struct Calibration {
    /// Nanoseconds per tick as a 32.32 fixed-point factor; 0 when the TSC is not used.
    mult: u64,
    origin: Instant,
}

static CLOCK: OnceLock<Calibration> = OnceLock::new();

fn calibration() -> &'static Calibration {
    CLOCK.get_or_init(|| {
        let origin = Instant::now();
        let trusted = std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
            .is_ok_and(|s| s.trim() == "tsc");
        let mult = if trusted && cfg!(target_arch = "x86_64") {
            let (i0, t0) = (Instant::now(), tsc());
            std::thread::sleep(Duration::from_millis(20));
            let (i1, t1) = (Instant::now(), tsc());
            let ns = (i1 - i0).as_nanos() as f64;
            let ticks = t1.wrapping_sub(t0) as f64;
            if ticks > 0.0 {
                (ns / ticks * 4_294_967_296.0) as u64
            } else {
                0
            }
        } else {
            0
        };
        Calibration { mult, origin }
    })
}

#[inline]
fn tsc() -> u64 {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: rdtsc has no preconditions on x86_64.
    unsafe {
        core::arch::x86_64::_rdtsc()
    }
    #[cfg(not(target_arch = "x86_64"))]
    0
}

/// Calibrates the clock now, so that the first timed operation does not pay for it.
pub fn init() {
    calibration();
}

/// Nanoseconds since the clock's origin, an instant every thread and every worker process of a
/// run shares (it is set before they start): a time one of them can hand to another in shared
/// memory, for [`at_ns`] to turn back into an `Instant`.
pub fn origin_ns() -> u64 {
    calibration().origin.elapsed().as_nanos() as u64
}

/// The instant [`origin_ns`] read `ns`.
pub fn at_ns(ns: u64) -> Instant {
    calibration().origin + Duration::from_nanos(ns)
}

/// A reading of the clock, only meaningful to [`since_ns`] and [`between_ns`].
#[inline]
pub fn now() -> u64 {
    let c = calibration();
    if c.mult != 0 {
        tsc()
    } else {
        c.origin.elapsed().as_nanos() as u64
    }
}

/// Nanoseconds from reading `a` to reading `b`.
#[inline]
pub fn between_ns(a: u64, b: u64) -> u64 {
    let c = calibration();
    let d = b.saturating_sub(a);
    if c.mult != 0 {
        ((d as u128 * c.mult as u128) >> 32) as u64
    } else {
        d
    }
}

/// Nanoseconds since reading `t`.
#[inline]
pub fn since_ns(t: u64) -> u64 {
    between_ns(t, now())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agrees_with_the_monotonic_clock_within_two_percent() {
        init();
        let (i, t) = (Instant::now(), now());
        std::thread::sleep(Duration::from_millis(50));
        let (ns, wall) = (since_ns(t) as f64, i.elapsed().as_nanos() as f64);
        assert!(
            (ns - wall).abs() / wall < 0.02,
            "clock says {ns} ns, Instant says {wall} ns"
        );
    }
}
