//! The `sync` backend: one pread() or pwrite() per transfer, as fio's psync engine; and the
//! `seek` backend: read() or write() at the file position, with an lseek() first when the
//! transfer does not start where the position is, as IOzone's and FFSB's calls.

use super::{each_call, plain_transfer, read_or_write, seek, Backend, Dir, IoBuffers, Moved, OpenFile, Xfer};
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
        plain_transfer(file, dir, xfers, bufs)
    }
}

pub struct SeekBackend;

impl Backend for SeekBackend {
    fn transfer(
        &mut self,
        file: &mut OpenFile,
        dir: Dir,
        xfers: &[Xfer],
        bufs: &mut IoBuffers,
    ) -> (Moved, io::Result<()>) {
        let ident = file.ident;
        each_call(dir, xfers, bufs, ident, |_, buf, offset| {
            if file.pos != offset {
                seek(file.fd(), offset)?;
                file.pos = offset;
            }
            let n = read_or_write(file.fd(), buf)?;
            file.pos += n as u64;
            Ok(n)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::OwnedFd;

    fn offset_of(f: &OpenFile) -> u64 {
        rustix::fs::seek(&f.fd, rustix::fs::SeekFrom::Current(0)).unwrap()
    }

    #[test]
    fn seek_backend_seeks_only_where_the_position_is_not() {
        let tmp = tempfile::tempfile().unwrap();
        let mut f = OpenFile::new(OwnedFd::from(tmp));
        let mut bufs = IoBuffers::new(4096, 1, 7);
        let x = |offset| Xfer { offset, len: 4096 };
        // A random record: an lseek, then write() moves the position past it.
        let (moved, r) = SeekBackend.transfer(&mut f, Dir::Write, &[x(8192)], &mut bufs);
        r.unwrap();
        assert_eq!((moved.bytes, f.pos, offset_of(&f)), (4096, 12288, 12288));
        // The next record where the position is: no lseek. Moving the descriptor behind the
        // backend's back shows it: the write lands where the descriptor is, at 0.
        rustix::fs::seek(&f.fd, rustix::fs::SeekFrom::Start(0)).unwrap();
        SeekBackend
            .transfer(&mut f, Dir::Write, &[x(12288)], &mut bufs)
            .1
            .unwrap();
        assert_eq!(offset_of(&f), 4096, "no lseek before a record that follows the last");
        assert_eq!(rustix::fs::fstat(&f.fd).unwrap().st_size, 12288);
        // Reads: from 4096 after an lseek, then to the end of the file.
        f.pos = 4096;
        let (moved, r) = SeekBackend.transfer(&mut f, Dir::Read, &[x(0), x(8192)], &mut bufs);
        r.unwrap();
        assert_eq!((moved.bytes, f.pos), (8192, 12288));
        let (moved, r) = SeekBackend.transfer(&mut f, Dir::Read, &[x(12288)], &mut bufs);
        r.unwrap();
        assert!(moved.eof && moved.bytes == 0);
        // Forgotten: the next transfer seeks even where the descriptor already is.
        rustix::fs::seek(&f.fd, rustix::fs::SeekFrom::Start(0)).unwrap();
        f.pos = 4096;
        f.forget_position();
        SeekBackend
            .transfer(&mut f, Dir::Read, &[x(4096)], &mut bufs)
            .1
            .unwrap();
        assert_eq!(offset_of(&f), 8192);
    }

    #[test]
    fn a_whole_block_is_one_call_where_the_position_is_and_a_read_stops_at_the_end() {
        use crate::io::whole_block;
        let tmp = tempfile::tempfile().unwrap();
        let mut f = OpenFile::new(OwnedFd::from(tmp));
        let mut buf = vec![7u8; 4096];
        // pwrite() at the offset: the descriptor's position stays where it was.
        let (n, r) = whole_block(&mut f, false, Dir::Write, &mut buf, 8192);
        r.unwrap();
        assert_eq!((n, f.pos, offset_of(&f)), (4096, 0, 0));
        // write() where the position is not: an lseek first, then the position moves on.
        let (n, r) = whole_block(&mut f, true, Dir::Write, &mut buf, 4096);
        r.unwrap();
        assert_eq!((n, f.pos, offset_of(&f)), (4096, 8192, 8192));
        // The next block where the position is: no lseek (moving the descriptor behind its
        // back shows it: the write lands at 0, where the descriptor is).
        rustix::fs::seek(&f.fd, rustix::fs::SeekFrom::Start(0)).unwrap();
        whole_block(&mut f, true, Dir::Write, &mut buf, 8192).1.unwrap();
        assert_eq!(offset_of(&f), 4096);
        assert_eq!(rustix::fs::fstat(&f.fd).unwrap().st_size, 12288);
        // A read past the end stops there; one at the end moves nothing; neither is an error.
        f.pos = 4096;
        let mut big = vec![0u8; 16384];
        let (n, r) = whole_block(&mut f, true, Dir::Read, &mut big, 4096);
        r.unwrap();
        assert_eq!((n, f.pos), (8192, 12288));
        assert_eq!(whole_block(&mut f, false, Dir::Read, &mut big, 12288).0, 0);
        // A call that fails is made once and gives its error: nothing was moved.
        let mut ro = OpenFile::new(OwnedFd::from(std::fs::File::open("/dev/null").unwrap()));
        let (n, r) = whole_block(&mut ro, true, Dir::Write, &mut buf, 0);
        assert_eq!((n, r), (0, Err(rustix::io::Errno::BADF)));
    }
}
