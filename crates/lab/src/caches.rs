//! Emptying the kernel's caches between runs, so each run starts cold as the seeds' did.

use crate::LabError;

/// Writes dirty data back (`sync`), then drops the page cache, dentries and inodes
/// (`echo 3 > /proc/sys/vm/drop_caches`). Needs root.
pub fn drop_caches() -> Result<(), LabError> {
    rustix::fs::sync();
    std::fs::write("/proc/sys/vm/drop_caches", "3").map_err(|e| {
        let context = match e.kind() {
            std::io::ErrorKind::PermissionDenied => "dropping the caches needs root (writing /proc/sys/vm/drop_caches)",
            _ => "dropping the caches (writing /proc/sys/vm/drop_caches)",
        };
        LabError::io(context, e)
    })
}
