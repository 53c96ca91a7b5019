//! The start line: every thread of a run, and the monitor, wait at it so that they start
//! together. Unlike a barrier it can be called off: when a thread cannot be started (the machine
//! refuses more threads), the threads already waiting go home instead of waiting for ever.

use std::sync::{Condvar, Mutex};

pub(crate) struct Gate {
    parties: usize,
    state: Mutex<State>,
    opened: Condvar,
}

#[derive(Default)]
struct State {
    arrived: usize,
    open: bool,
    called_off: bool,
}

impl Gate {
    /// A gate that opens when `parties` have arrived.
    pub fn new(parties: usize) -> Gate {
        Gate {
            parties,
            state: Mutex::new(State::default()),
            opened: Condvar::new(),
        }
    }

    /// Waits until every party has arrived: true; or until the start is called off: false.
    pub fn wait(&self) -> bool {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        s.arrived += 1;
        if s.arrived >= self.parties {
            s.open = true;
            self.opened.notify_all();
        }
        while !s.open && !s.called_off {
            s = self.opened.wait(s).unwrap_or_else(|p| p.into_inner());
        }
        !s.called_off
    }

    /// Sends everyone waiting, and everyone still to come, home.
    pub fn call_off(&self) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        s.called_off = true;
        self.opened.notify_all();
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
}
