//! A guard against hangs: work that does not end in time fails the test instead of hanging it.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

/// Runs `work` on a thread of its own and returns what it returns; if it has not ended within
/// `limit`, the test fails saying that `what` hangs (the thread is left behind). A panic in
/// `work` fails the test with that panic.
pub fn within<T: Send + 'static>(limit: Duration, what: &str, work: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    let mut thread = std::thread::Builder::new();
    if let Some(name) = std::thread::current().name() {
        thread = thread.name(name.to_string());
    }
    let handle = thread
        .spawn(move || {
            let _ = tx.send(work());
        })
        .expect("start a thread");
    match rx.recv_timeout(limit) {
        Ok(value) => value,
        Err(RecvTimeoutError::Timeout) => panic!("{what} did not end within {limit:?}: it hangs"),
        Err(RecvTimeoutError::Disconnected) => match handle.join() {
            Err(panic) => std::panic::resume_unwind(panic),
            Ok(()) => unreachable!("the thread ended without sending what {what} returned"),
        },
    }
}
