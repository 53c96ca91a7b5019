//! FFSB (the Flexible Filesystem Benchmark) on fslab's engine.
//!
//! [`parse`] reads a profile in FFSB 6.0's or 5.x's grammar into a [`Profile`] and checks it,
//! [`compile`] turns it into engine workloads (the benchmark, and one aging run per filesystem
//! with `agefs`), [`execute`] runs them as FFSB would (aging, untimed fileset setup, the callout,
//! the timed run with its final sync), and [`report`] prints what FFSB prints and puts FFSB's
//! figures into [`RunResult::classic`](fslab_engine::RunResult).
//!
//! What FFSB does and how it counts is in ../shared/reference/classic-benchmarks.md (section 1).
//! Deliberate differences: bytes written by `write` count `write_size` (FFSB 5.x; 6.0 counts the
//! whole file), an error stops the run with its message instead of an assertion, and a profile
//! FFSB would misread (an unknown option, a malformed value) is refused with its line.

mod compile;
mod execute;
pub mod frontend;
mod grammar;
mod ops;
mod parse;
mod profile;
mod report;
mod validate;

pub use compile::{compile, explain, AgingPlan, Options, Plan};
pub use execute::{execute, preflight, AgingOutcome, ExecError, Outcome, Phase};
pub use grammar::Grammar;
pub use ops::{FfsbOp, Moves};
pub use parse::parse;
pub use profile::{BindFs, FsSpec, Lines, Profile, TgSpec};
pub use report::{figures, render, Figures, Row, Table};

use std::fmt;
use std::path::Path;

/// A profile fslab cannot run: the file, the line when there is one, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ProfileError {
    pub file: String,
    pub line: Option<usize>,
    pub message: String,
}

impl ProfileError {
    pub fn at(file: &str, line: usize, message: String) -> ProfileError {
        ProfileError {
            file: file.to_string(),
            line: Some(line),
            message: crate::text::shorten(&message),
        }
    }

    pub fn whole(file: &str, message: String) -> ProfileError {
        ProfileError {
            file: file.to_string(),
            line: None,
            message: crate::text::shorten(&message),
        }
    }
}

impl fmt::Display for ProfileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}", self.file, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

/// Reads and parses the profile at `path`.
pub fn load(path: &Path) -> Result<Profile, ProfileError> {
    let file = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| ProfileError::whole(&file, e.to_string()))?;
    let text = crate::text::decode(bytes).map_err(|e| ProfileError::at(&file, e.line, e.message()))?;
    parse(&text, &file)
}
