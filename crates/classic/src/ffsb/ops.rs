//! FFSB's operations: their names, the weight option that selects each, the engine operation
//! each becomes, and what its throughput counts.

use super::grammar::Grammar;
use fslab_engine::workload::OpKind;
use serde::Serialize;

/// One of FFSB's operations, in the order FFSB lists them (`ffsb_op.c`) and prints them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FfsbOp {
    Read,
    ReadAll,
    Write,
    Create,
    Append,
    Delete,
    MetaOp,
    CreateDir,
    Stat,
    WriteAll,
    WriteAllFsync,
    OpenClose,
    WriteFsync,
    CreateFsync,
    AppendFsync,
}

/// What an operation's bytes count toward: FFSB's read or write throughput, or neither ("NA").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Moves {
    Read,
    Write,
    Nothing,
}

impl FfsbOp {
    /// Every operation, in FFSB's order.
    pub const ALL: [FfsbOp; 15] = [
        FfsbOp::Read,
        FfsbOp::ReadAll,
        FfsbOp::Write,
        FfsbOp::Create,
        FfsbOp::Append,
        FfsbOp::Delete,
        FfsbOp::MetaOp,
        FfsbOp::CreateDir,
        FfsbOp::Stat,
        FfsbOp::WriteAll,
        FfsbOp::WriteAllFsync,
        FfsbOp::OpenClose,
        FfsbOp::WriteFsync,
        FfsbOp::CreateFsync,
        FfsbOp::AppendFsync,
    ];

    /// The seven operations of FFSB 5.x.
    pub const V5: [FfsbOp; 7] = [
        FfsbOp::Read,
        FfsbOp::ReadAll,
        FfsbOp::Write,
        FfsbOp::Create,
        FfsbOp::Append,
        FfsbOp::Delete,
        FfsbOp::MetaOp,
    ];

    /// The name FFSB prints.
    pub fn name(self) -> &'static str {
        match self {
            FfsbOp::Read => "read",
            FfsbOp::ReadAll => "readall",
            FfsbOp::Write => "write",
            FfsbOp::Create => "create",
            FfsbOp::Append => "append",
            FfsbOp::Delete => "delete",
            FfsbOp::MetaOp => "metaop",
            FfsbOp::CreateDir => "createdir",
            FfsbOp::Stat => "stat",
            FfsbOp::WriteAll => "writeall",
            FfsbOp::WriteAllFsync => "writeall_fsync",
            FfsbOp::OpenClose => "open_close",
            FfsbOp::WriteFsync => "write_fsync",
            FfsbOp::CreateFsync => "create_fsync",
            FfsbOp::AppendFsync => "append_fsync",
        }
    }

    /// The profile option that weighs this operation (`meta_weight` in 5.x, `metaop_weight` in
    /// 6.0).
    pub fn weight_option(self, grammar: Grammar) -> &'static str {
        match (self, grammar) {
            (FfsbOp::MetaOp, Grammar::V5) => "meta_weight",
            (FfsbOp::Read, _) => "read_weight",
            (FfsbOp::ReadAll, _) => "readall_weight",
            (FfsbOp::Write, _) => "write_weight",
            (FfsbOp::Create, _) => "create_weight",
            (FfsbOp::Append, _) => "append_weight",
            (FfsbOp::Delete, _) => "delete_weight",
            (FfsbOp::MetaOp, _) => "metaop_weight",
            (FfsbOp::CreateDir, _) => "createdir_weight",
            (FfsbOp::Stat, _) => "stat_weight",
            (FfsbOp::WriteAll, _) => "writeall_weight",
            (FfsbOp::WriteAllFsync, _) => "writeall_fsync_weight",
            (FfsbOp::OpenClose, _) => "open_close_weight",
            (FfsbOp::WriteFsync, _) => "write_fsync_weight",
            (FfsbOp::CreateFsync, _) => "create_fsync_weight",
            (FfsbOp::AppendFsync, _) => "append_fsync_weight",
        }
    }

    /// The operation a weight option selects in `grammar`.
    pub fn from_weight_option(option: &str, grammar: Grammar) -> Option<FfsbOp> {
        let ops: &[FfsbOp] = match grammar {
            Grammar::V5 => &FfsbOp::V5,
            Grammar::V6 => &FfsbOp::ALL,
        };
        ops.iter().copied().find(|op| op.weight_option(grammar) == option)
    }

    /// The engine operation that does what this one does.
    pub fn kind(self) -> OpKind {
        match self {
            FfsbOp::Read => OpKind::Read,
            FfsbOp::ReadAll => OpKind::ReadAll,
            FfsbOp::Write | FfsbOp::WriteFsync => OpKind::Write,
            FfsbOp::Create | FfsbOp::CreateFsync => OpKind::Create,
            FfsbOp::Append | FfsbOp::AppendFsync => OpKind::Append,
            FfsbOp::Delete => OpKind::Delete,
            FfsbOp::MetaOp => OpKind::MetaOp,
            FfsbOp::CreateDir => OpKind::Mkdir,
            FfsbOp::Stat => OpKind::Stat,
            FfsbOp::WriteAll | FfsbOp::WriteAllFsync => OpKind::WriteAll,
            FfsbOp::OpenClose => OpKind::OpenClose,
        }
    }

    /// The `*_fsync` forms fsync the file before closing it.
    pub fn fsyncs(self) -> bool {
        matches!(
            self,
            FfsbOp::WriteAllFsync | FfsbOp::WriteFsync | FfsbOp::CreateFsync | FfsbOp::AppendFsync
        )
    }

    pub fn moves(self) -> Moves {
        match self {
            FfsbOp::Read | FfsbOp::ReadAll => Moves::Read,
            FfsbOp::Write
            | FfsbOp::WriteFsync
            | FfsbOp::Create
            | FfsbOp::CreateFsync
            | FfsbOp::Append
            | FfsbOp::AppendFsync
            | FfsbOp::WriteAll
            | FfsbOp::WriteAllFsync => Moves::Write,
            FfsbOp::Delete | FfsbOp::MetaOp | FfsbOp::CreateDir | FfsbOp::Stat | FfsbOp::OpenClose => Moves::Nothing,
        }
    }

    /// Operations FFSB can age a filesystem with (the others have no aging file list).
    pub fn can_age(self) -> bool {
        matches!(
            self,
            FfsbOp::Create | FfsbOp::CreateFsync | FfsbOp::Append | FfsbOp::AppendFsync | FfsbOp::Delete
        )
    }

    /// read and readall read in `read_blocksize` blocks.
    pub fn needs_read_blocksize(self) -> bool {
        matches!(self, FfsbOp::Read | FfsbOp::ReadAll)
    }

    /// Every writing operation writes in `write_blocksize` blocks.
    pub fn needs_write_blocksize(self) -> bool {
        self.moves() == Moves::Write
    }

    /// write and append move `write_size` bytes.
    pub fn needs_write_size(self) -> bool {
        matches!(
            self,
            FfsbOp::Write | FfsbOp::WriteFsync | FfsbOp::Append | FfsbOp::AppendFsync
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weight_options_round_trip_in_both_grammars() {
        for op in FfsbOp::ALL {
            assert_eq!(
                FfsbOp::from_weight_option(op.weight_option(Grammar::V6), Grammar::V6),
                Some(op)
            );
        }
        for op in FfsbOp::V5 {
            assert_eq!(
                FfsbOp::from_weight_option(op.weight_option(Grammar::V5), Grammar::V5),
                Some(op)
            );
        }
        assert_eq!(FfsbOp::from_weight_option("meta_weight", Grammar::V6), None);
        assert_eq!(FfsbOp::from_weight_option("stat_weight", Grammar::V5), None);
    }

    #[test]
    fn fsync_forms_share_their_engine_operation() {
        assert_eq!(FfsbOp::WriteFsync.kind(), FfsbOp::Write.kind());
        assert!(FfsbOp::WriteFsync.fsyncs() && !FfsbOp::Write.fsyncs());
        assert_eq!(FfsbOp::CreateDir.kind(), OpKind::Mkdir);
    }
}
