//! The kinds of operation the engine runs and counts: one vocabulary for a workload's mix, a
//! script's calls, the live counters and the result.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A kind of operation, as a workload names it (`op = "read"`) and as a result counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema)]
pub enum OpKind {
    #[serde(rename = "read")]
    Read,
    #[serde(rename = "readall")]
    ReadAll,
    #[serde(rename = "write")]
    Write,
    #[serde(rename = "writeall")]
    WriteAll,
    #[serde(rename = "append")]
    Append,
    #[serde(rename = "create")]
    Create,
    #[serde(rename = "delete")]
    Delete,
    #[serde(rename = "stat")]
    Stat,
    #[serde(rename = "open_close")]
    OpenClose,
    #[serde(rename = "mkdir")]
    Mkdir,
    #[serde(rename = "rmdir")]
    Rmdir,
    #[serde(rename = "rename")]
    Rename,
    #[serde(rename = "readdir")]
    Readdir,
    #[serde(rename = "truncate")]
    Truncate,
    #[serde(rename = "seqread")]
    SeqRead,
    #[serde(rename = "seqwrite")]
    SeqWrite,
    #[serde(rename = "rewrite")]
    Rewrite,
    #[serde(rename = "fsync")]
    Fsync,
    #[serde(rename = "metaop")]
    MetaOp,
}

impl OpKind {
    pub const ALL: [OpKind; 19] = [
        OpKind::Read,
        OpKind::ReadAll,
        OpKind::Write,
        OpKind::WriteAll,
        OpKind::Append,
        OpKind::Create,
        OpKind::Delete,
        OpKind::Stat,
        OpKind::OpenClose,
        OpKind::Mkdir,
        OpKind::Rmdir,
        OpKind::Rename,
        OpKind::Readdir,
        OpKind::Truncate,
        OpKind::SeqRead,
        OpKind::SeqWrite,
        OpKind::Rewrite,
        OpKind::Fsync,
        OpKind::MetaOp,
    ];

    pub fn name(self) -> &'static str {
        match self {
            OpKind::Read => "read",
            OpKind::ReadAll => "readall",
            OpKind::Write => "write",
            OpKind::WriteAll => "writeall",
            OpKind::Append => "append",
            OpKind::Create => "create",
            OpKind::Delete => "delete",
            OpKind::Stat => "stat",
            OpKind::OpenClose => "open_close",
            OpKind::Mkdir => "mkdir",
            OpKind::Rmdir => "rmdir",
            OpKind::Rename => "rename",
            OpKind::Readdir => "readdir",
            OpKind::Truncate => "truncate",
            OpKind::SeqRead => "seqread",
            OpKind::SeqWrite => "seqwrite",
            OpKind::Rewrite => "rewrite",
            OpKind::Fsync => "fsync",
            OpKind::MetaOp => "metaop",
        }
    }

    pub fn index(self) -> usize {
        self as usize
    }

    pub fn is_stream(self) -> bool {
        matches!(self, OpKind::SeqRead | OpKind::SeqWrite | OpKind::Rewrite)
    }

    /// A read or write request of sysbench's: the operations its periodic fsync counts.
    pub fn is_request(self) -> bool {
        matches!(
            self,
            OpKind::Read | OpKind::Write | OpKind::SeqRead | OpKind::SeqWrite | OpKind::Rewrite
        )
    }

    /// Operations that add files to, or take files from, a fileset.
    pub fn changes_membership(self) -> bool {
        matches!(self, OpKind::Create | OpKind::Delete | OpKind::Rename)
    }

    pub fn writes(self) -> bool {
        matches!(
            self,
            OpKind::Write | OpKind::WriteAll | OpKind::Append | OpKind::Create | OpKind::SeqWrite | OpKind::Rewrite
        )
    }
}

impl fmt::Display for OpKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
