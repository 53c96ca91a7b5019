//! System calls timed one by one, per kind, for groups that ask (`call_latency`): FFSB 6.0's
//! `[stats]`, which times each `open`, `read`, `write`, `lseek`, `close`, `stat` and `unlink`
//! its operations make.
//!
//! The calls are made deep in the backends and operations (a `read()` inside a transfer loop,
//! the `lseek()` before it, the `close()` at the end of an operation). Rather than thread a
//! timer through every signature, each thread keeps its figures in a thread-local that the
//! worker switches on for the measured loop of a timing group and takes back at its end: a call
//! made while it is off (a fileset's setup, a group that does not time its calls) costs one
//! flag test.
//!
//! Timed: `open` (every file an operation opens), `read` and `write` (the `sync` and `seek`
//! engines' calls, append's writes), `lseek` (the `seek` engine's and FFSB's), `close` (the
//! files an operation opens and closes itself; files kept open are closed after the run,
//! untimed), `stat` (the stat operation; not the size probe of FFSB's read and write, which FFSB
//! does not time either), `unlink` (delete) and `fsync` (fsync and fdatasync).

use crate::clock;
use crate::histogram::{Latency, OpStats};
use serde::{Deserialize, Serialize};
use std::cell::{Cell, RefCell};

/// A kind of system call that can be timed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Call {
    Open,
    Read,
    Write,
    Lseek,
    Close,
    Stat,
    Unlink,
    Fsync,
}

impl Call {
    pub const ALL: [Call; 8] = [
        Call::Open,
        Call::Read,
        Call::Write,
        Call::Lseek,
        Call::Close,
        Call::Stat,
        Call::Unlink,
        Call::Fsync,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Call::Open => "open",
            Call::Read => "read",
            Call::Write => "write",
            Call::Lseek => "lseek",
            Call::Close => "close",
            Call::Stat => "stat",
            Call::Unlink => "unlink",
            Call::Fsync => "fsync",
        }
    }
}

/// One kind of call in one thread: the count, the exact sum, minimum and maximum, and the
/// histogram the percentiles come from.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CallStats {
    pub sum_ns: u64,
    /// Meaningful once something is counted.
    pub min_ns: u64,
    pub max_ns: u64,
    pub stats: OpStats,
}

impl CallStats {
    #[inline]
    pub fn record(&mut self, ns: u64) {
        if self.stats.count == 0 || ns < self.min_ns {
            self.min_ns = ns;
        }
        self.max_ns = self.max_ns.max(ns);
        self.sum_ns += ns;
        self.stats.record(ns, 0, 0);
    }

    pub fn merge(&mut self, other: &CallStats) {
        if other.stats.count == 0 {
            return;
        }
        if self.stats.count == 0 || other.min_ns < self.min_ns {
            self.min_ns = other.min_ns;
        }
        self.max_ns = self.max_ns.max(other.max_ns);
        self.sum_ns += other.sum_ns;
        self.stats.merge(&other.stats);
    }

    pub fn count(&self) -> u64 {
        self.stats.count
    }

    /// The latency summary, its minimum, mean and maximum exact.
    pub fn latency(&self) -> Latency {
        if self.stats.count == 0 {
            return Latency::default();
        }
        Latency {
            min_us: self.min_ns as f64 / 1000.0,
            mean_us: self.sum_ns as f64 / 1000.0 / self.stats.count as f64,
            max_us: self.max_ns as f64 / 1000.0,
            ..self.stats.latency()
        }
    }
}

/// One thread's figures for every kind of call, in [`Call::ALL`]'s order.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CallTimes(pub [CallStats; Call::ALL.len()]);

impl CallTimes {
    pub fn get(&self, call: Call) -> &CallStats {
        &self.0[call as usize]
    }

    pub fn merge(&mut self, other: &CallTimes) {
        for (mine, theirs) in self.0.iter_mut().zip(&other.0) {
            mine.merge(theirs);
        }
    }
}

thread_local! {
    static ON: Cell<bool> = const { Cell::new(false) };
    static TIMES: RefCell<Option<Box<CallTimes>>> = const { RefCell::new(None) };
}

/// Makes call `f`, timed as a `call` when this thread times its calls.
#[inline]
pub(crate) fn time<T>(call: Call, f: impl FnOnce() -> T) -> T {
    if !ON.with(Cell::get) {
        return f();
    }
    let t0 = clock::now();
    let r = f();
    let ns = clock::since_ns(t0);
    TIMES.with_borrow_mut(|t| {
        if let Some(t) = t {
            t.0[call as usize].record(ns);
        }
    });
    r
}

/// From now on this thread times its calls, from zero.
pub(crate) fn start() {
    TIMES.with_borrow_mut(|t| *t = Some(Box::default()));
    ON.set(true);
}

/// Forgets what this thread timed so far (the ramp's calls), if it times its calls.
pub(crate) fn reset() {
    TIMES.with_borrow_mut(|t| {
        if let Some(t) = t {
            **t = CallTimes::default();
        }
    });
}

/// Stops timing this thread's calls and hands back what it timed, if it timed them.
pub(crate) fn finish() -> Option<CallTimes> {
    ON.set(false);
    TIMES.with_borrow_mut(Option::take).map(|b| *b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_are_timed_only_between_start_and_finish() {
        time(Call::Read, || ());
        assert!(finish().is_none(), "nothing is kept before start");
        start();
        for _ in 0..3 {
            time(Call::Read, || std::thread::sleep(std::time::Duration::from_micros(200)));
        }
        time(Call::Close, || ());
        let t = finish().expect("timed");
        let read = t.get(Call::Read);
        assert_eq!(
            (read.count(), t.get(Call::Close).count(), t.get(Call::Open).count()),
            (3, 1, 0)
        );
        assert!(read.min_ns >= 200_000 && read.min_ns <= read.max_ns, "{read:?}");
        assert!(read.sum_ns >= 3 * read.min_ns && read.sum_ns <= 3 * read.max_ns);
        let l = read.latency();
        assert!(l.min_us <= l.mean_us && l.mean_us <= l.max_us, "{l:?}");
        time(Call::Read, || ());
        assert!(finish().is_none(), "nothing is kept after finish");
    }

    #[test]
    fn reset_forgets_the_ramp_and_merge_adds_exactly() {
        start();
        time(Call::Stat, || ());
        reset();
        time(Call::Unlink, || ());
        let a = finish().unwrap();
        assert_eq!((a.get(Call::Stat).count(), a.get(Call::Unlink).count()), (0, 1));
        let mut s = CallStats::default();
        [5_000, 1_000, 9_000].into_iter().for_each(|ns| s.record(ns));
        let mut t = CallStats::default();
        t.record(500);
        s.merge(&t);
        s.merge(&CallStats::default());
        assert_eq!((s.count(), s.sum_ns, s.min_ns, s.max_ns), (4, 15_500, 500, 9_000));
        assert_eq!(s.latency().mean_us, 3.875);
    }
}
