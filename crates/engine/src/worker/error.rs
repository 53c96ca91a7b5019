//! Errors that say which operation and file they happened to, keeping the OS error number and
//! what the engine knows of their cause; and a thread's first failure, as the run reports it.

use crate::io::checked::Mismatch;
use crate::result::{Cause, ThreadError};
use crate::workload::OpKind;
use std::io;

/// An error with the operation and file it happened to, keeping the OS error number and its
/// cause.
#[derive(Debug)]
pub(super) struct Annotated {
    pub(super) errno: Option<i32>,
    pub(super) message: String,
    pub(super) cause: Option<Cause>,
}

impl Annotated {
    /// `e`, met by `what` on `file` (as the fileset describes it).
    pub(super) fn wrap(e: io::Error, what: &str, file: String) -> io::Error {
        let cause = match e.get_ref().and_then(|i| i.downcast_ref::<Mismatch>()) {
            Some(&mismatch) => Some(Cause::Mismatch {
                file: file.clone(),
                mismatch,
            }),
            None => cause_of(&e),
        };
        let annotated = Annotated {
            errno: errno_of(&e),
            message: format!("{what} {file}: {e}"),
            cause,
        };
        io::Error::new(e.kind(), annotated)
    }
}

impl std::fmt::Display for Annotated {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Annotated {}

/// The OS error number of `e`, also through an [`Annotated`] wrapper.
pub(super) fn errno_of(e: &io::Error) -> Option<i32> {
    e.raw_os_error()
        .or_else(|| e.get_ref()?.downcast_ref::<Annotated>()?.errno)
}

/// The cause an [`Annotated`] error carries.
fn cause_of(e: &io::Error) -> Option<Cause> {
    e.get_ref()?.downcast_ref::<Annotated>()?.cause.clone()
}

/// A thread's error, made where it happens.
impl ThreadError {
    pub(crate) fn new(op: OpKind, message: String, errno: Option<i32>) -> ThreadError {
        ThreadError {
            op,
            message,
            errno,
            cause: None,
        }
    }

    /// `op` failed with `e`.
    pub(crate) fn of(op: OpKind, e: &io::Error) -> ThreadError {
        ThreadError {
            cause: cause_of(e),
            ..ThreadError::new(op, e.to_string(), errno_of(e))
        }
    }
}
