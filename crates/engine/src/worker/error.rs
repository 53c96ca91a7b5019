//! Errors that say which operation and file they happened to, keeping the OS error number.

use std::io;

/// An error with the operation and file it happened to, keeping the OS error number.
#[derive(Debug)]
pub(super) struct Annotated {
    pub(super) errno: Option<i32>,
    pub(super) message: String,
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
