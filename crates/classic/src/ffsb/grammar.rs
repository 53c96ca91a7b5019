//! Which of FFSB's two grammars a profile is written in: the name the profile, its reader and the
//! operations (whose weight options differ between the two) all refer to. What each grammar
//! accepts is in parse.rs.

use serde::Serialize;
use std::fmt;

/// The grammar a profile is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Grammar {
    #[serde(rename = "5.x")]
    V5,
    #[serde(rename = "6.0")]
    V6,
}

impl fmt::Display for Grammar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Grammar::V5 => "5.x",
            Grammar::V6 => "6.0",
        })
    }
}
