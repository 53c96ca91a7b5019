//! How full a filesystem is, from statvfs: what `stop.util` and FFSB's ageing watch.

/// Size and bytes used of the filesystem holding `path`, from statvfs.
pub fn fs_space(path: &std::path::Path) -> std::io::Result<(u64, u64)> {
    let st = rustix::fs::statvfs(path)?;
    let block = st.f_frsize.max(1);
    Ok((st.f_blocks * block, (st.f_blocks - st.f_bfree.min(st.f_blocks)) * block))
}

/// How full the filesystem holding `fd` is, from 0 to 1.
pub fn utilisation(fd: std::os::fd::BorrowedFd<'_>) -> Option<f64> {
    let st = rustix::fs::fstatvfs(fd).ok()?;
    (st.f_blocks > 0).then(|| (st.f_blocks - st.f_bfree) as f64 / st.f_blocks as f64)
}
