//! The marker files fslab leaves in the directories it makes: a later run clears a directory (or
//! the names in it) only when its marker says fslab made it.

/// The file that says fslab made a fileset (and, for a fileset with names, which names).
pub(crate) const FILESET: &str = ".fslab-fileset";

/// The file that says fslab made a script thread's base directory, so that a later run may
/// clear it.
pub(crate) const SCRIPT: &str = ".fslab-script";
