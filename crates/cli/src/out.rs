//! Standard output for the commands that print a document: a reader that stops early (`fslab
//! report 1 | head`) ends the output quietly; any other failure to write (a full disk behind a
//! redirection) is an error, so that no one takes a truncated document for a whole one.

use crate::Failure;
use anyhow::anyhow;
use std::io::Write;

pub fn print(text: &str) -> Result<(), Failure> {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(Failure::Run(anyhow!("writing to stdout: {e}"))),
        _ => Ok(()),
    }
}
