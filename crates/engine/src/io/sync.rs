//! The `sync` backend: one pread() or pwrite() per transfer, as fio's psync engine.

use super::{plain_transfer, Backend, Dir, IoBuffers, Moved, OpenFile, Xfer};
use std::io;

pub struct SyncBackend;

impl Backend for SyncBackend {
    fn transfer(
        &mut self,
        file: &mut OpenFile,
        dir: Dir,
        xfers: &[Xfer],
        bufs: &mut IoBuffers,
    ) -> (Moved, io::Result<()>) {
        plain_transfer(file.fd(), dir, xfers, bufs)
    }
}
