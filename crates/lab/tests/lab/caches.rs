//! Dropping the caches (as root): a file read into the page cache is no longer there after.

use fslab_lab::caches::drop_caches;
use fslab_testkit::require_root;
use std::io::Read;
use std::os::fd::AsRawFd;

/// How many of `file`'s pages are in the page cache (mincore over a mapping of it).
fn resident_pages(file: &std::fs::File, len: usize) -> usize {
    let page = 4096;
    let pages = len.div_ceil(page);
    let mut vec = vec![0u8; pages];
    // SAFETY: a read-only shared mapping of `len` bytes of an open file, unmapped before return;
    // mincore writes one byte per page into `vec`, which has that many.
    unsafe {
        let addr = libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            file.as_raw_fd(),
            0,
        );
        assert_ne!(addr, libc::MAP_FAILED, "mmap: {}", std::io::Error::last_os_error());
        let r = libc::mincore(addr, len, vec.as_mut_ptr());
        libc::munmap(addr, len);
        assert_eq!(r, 0, "mincore: {}", std::io::Error::last_os_error());
    }
    vec.iter().filter(|b| **b & 1 == 1).count()
}

#[test]
#[ignore = "system tier: root, to write /proc/sys/vm/drop_caches"]
fn drop_caches_empties_the_page_cache() {
    require_root();
    // Not in /tmp, which may be a tmpfs whose pages cannot be dropped.
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let path = dir.path().join("cached");
    let len = 8 << 20;
    std::fs::write(&path, vec![1u8; len]).unwrap();
    let mut file = std::fs::File::open(&path).unwrap();
    let mut buf = Vec::new();
    file.read_to_end(&mut buf).unwrap();
    assert!(
        resident_pages(&file, len) > 0,
        "the file was not cached after reading it"
    );

    drop_caches().unwrap();
    assert_eq!(resident_pages(&file, len), 0, "pages still cached after drop_caches");
}
