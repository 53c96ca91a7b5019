//! The start line: every worker of a run, and the monitor, wait at it so that they start
//! together. Unlike a barrier it can be called off: when a worker cannot be started (the machine
//! refuses more threads or processes), the ones already waiting go home instead of waiting for
//! ever.
//!
//! It is a few atomic words, waited on with a futex that is not private to the process, so that
//! it works in memory shared with worker processes ([`Shm`](crate::shm::Shm)) as well as between
//! threads.

use crate::clock;
use rustix::thread::futex;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Instant;

const WAITING: u32 = 0;
const OPEN: u32 = 1;
const CALLED_OFF: u32 = 2;

pub(crate) struct Gate {
    parties: u32,
    arrived: AtomicU32,
    state: AtomicU32,
    /// When it opened ([`clock::origin_ns`]), read by the last to arrive before it lets anyone go.
    opened: AtomicU64,
}

impl Gate {
    /// A gate that opens when `parties` have arrived.
    pub fn new(parties: usize) -> Gate {
        Gate {
            parties: u32::try_from(parties).unwrap_or(u32::MAX),
            arrived: AtomicU32::new(0),
            state: AtomicU32::new(WAITING),
            opened: AtomicU64::new(0),
        }
    }

    /// Waits until every party has arrived: true; or until the start is called off: false.
    pub fn wait(&self) -> bool {
        let arrived = self.arrived.fetch_add(1, Ordering::AcqRel) + 1;
        if arrived == self.parties {
            self.opened.store(clock::origin_ns(), Ordering::Relaxed);
        }
        if arrived >= self.parties {
            self.settle(OPEN);
        }
        loop {
            match self.state.load(Ordering::Acquire) {
                // Woken, interrupted or already moved on: look again.
                WAITING => drop(futex::wait(&self.state, futex::Flags::empty(), WAITING, None)),
                state => return state == OPEN,
            }
        }
    }

    /// When the gate opened: no party went on before it. Meaningful once [`wait`](Self::wait)
    /// has returned true.
    pub fn opened_at(&self) -> Instant {
        clock::at_ns(self.opened.load(Ordering::Relaxed))
    }

    /// Sends everyone waiting, and everyone still to come, home (unless it has opened already).
    pub fn call_off(&self) {
        self.settle(CALLED_OFF);
    }

    fn settle(&self, to: u32) {
        let _ = self
            .state
            .compare_exchange(WAITING, to, Ordering::AcqRel, Ordering::Acquire);
        // The count is a C int: i32::MAX wakes every waiter.
        let _ = futex::wake(&self.state, futex::Flags::empty(), i32::MAX as u32);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_gate_opens_when_all_arrive_and_a_called_off_one_sends_them_home() {
        let gate = Arc::new(Gate::new(3));
        let waiting: Vec<_> = (0..2)
            .map(|_| {
                let g = gate.clone();
                std::thread::spawn(move || g.wait())
            })
            .collect();
        assert!(gate.wait(), "the third opens it");
        assert!(waiting.into_iter().all(|h| h.join().unwrap()));

        let gate = Arc::new(Gate::new(5));
        let waiting: Vec<_> = (0..2)
            .map(|_| {
                let g = gate.clone();
                std::thread::spawn(move || g.wait())
            })
            .collect();
        gate.call_off();
        assert!(waiting.into_iter().all(|h| !h.join().unwrap()), "sent home");
        assert!(!gate.wait(), "a late one is sent home too");
    }

    #[test]
    fn a_gate_records_when_it_opened() {
        crate::clock::init();
        let gate = Arc::new(Gate::new(2));
        let before = std::time::Instant::now();
        let other = {
            let g = gate.clone();
            std::thread::spawn(move || g.wait())
        };
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(gate.wait());
        assert!(other.join().unwrap());
        let after = std::time::Instant::now();
        let opened = gate.opened_at();
        // Not before the second party came, 20 ms in.
        assert!(
            opened >= before + std::time::Duration::from_millis(20) && opened <= after,
            "{opened:?}"
        );
    }
}
