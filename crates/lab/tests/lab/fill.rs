//! Filling a filesystem: the synthetic kernel tree, tar archives (plain, gzip, xz), confinement,
//! and fills of a 64 MiB tmpfs to 40% (those need root: the system tier).

use crate::small_fs::{totals, walk, Node};
use fslab_lab::fill::{
    fill, leaf, overshoot_bound, FillSource, FillSpec, Tree, What, KERNEL_BYTES, KERNEL_DIRS, KERNEL_FILES,
};
use fslab_testkit::Tmpfs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

// ---- the synthetic kernel tree ----

#[test]
fn the_synthetic_tree_has_seed_004s_counts_and_the_same_seed_gives_the_same_tree() {
    let tree = Tree::synthetic_kernel(7);
    let counts = tree.counts();
    assert_eq!(
        (counts.dirs, counts.files, counts.links, counts.bytes),
        (KERNEL_DIRS, KERNEL_FILES, 0, KERNEL_BYTES)
    );
    assert_eq!((KERNEL_DIRS, KERNEL_FILES, KERNEL_BYTES), (1252, 20936, 240_690 * 1024));

    let again = Tree::synthetic_kernel(7);
    assert_eq!(tree.listing(), again.listing(), "same seed, same names and sizes");
    let some_file = |t: &Tree| {
        t.listing()
            .into_iter()
            .filter(|l| matches!(l.what, What::File { size, .. } if size > 10_000))
            .nth(100)
            .expect("files over 10 kB")
            .path
    };
    let path = some_file(&tree);
    assert_eq!(
        tree.file_content(&path),
        again.file_content(&path),
        "same seed, same bytes"
    );

    let other = Tree::synthetic_kernel(8);
    assert_ne!(tree.listing(), other.listing(), "another seed, another tree");
    assert_eq!(other.counts(), counts, "but the same counts");

    // It looks like a source tree: under linux/, a Makefile in every directory, mostly .c and .h.
    let listing = tree.listing();
    assert!(listing.iter().all(|l| l.path.starts_with("linux")));
    let makefiles = listing.iter().filter(|l| l.path.ends_with("Makefile")).count() as u64;
    assert_eq!(makefiles, KERNEL_DIRS, "one Makefile per directory");
    let sources = listing
        .iter()
        .filter(|l| matches!(l.path.extension().and_then(|e| e.to_str()), Some("c" | "h")))
        .count() as u64;
    assert!(sources > KERNEL_FILES * 3 / 4, "{sources} .c and .h files");
    for top in ["linux/drivers", "linux/arch", "linux/include", "linux/fs", "linux/net"] {
        assert!(
            listing.iter().any(|l| l.path == Path::new(top) && l.what == What::Dir),
            "{top}"
        );
    }
    let text = tree.file_content(&path).unwrap();
    assert!(text.iter().all(|b| b.is_ascii()), "source-like text");
}

#[test]
#[ignore = "system tier: slow: writes the whole 235 MiB synthetic kernel tree, 30 s to 2 min in a debug build"]
fn the_synthetic_tree_extracted_on_disk_has_its_counts_and_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let tree = Tree::synthetic_kernel(1);
    let done = tree.extract_into(dir.path()).expect("extraction");
    assert!(done.complete);
    assert_eq!(
        (done.dirs, done.files, done.bytes),
        (KERNEL_DIRS, KERNEL_FILES, KERNEL_BYTES)
    );
    let on_disk = walk(dir.path());
    assert_eq!(totals(&on_disk), (KERNEL_DIRS, KERNEL_FILES, KERNEL_BYTES));
    let path = Path::new("linux/MAINTAINERS");
    assert_eq!(
        std::fs::read(dir.path().join(path)).unwrap(),
        tree.file_content(path).unwrap()
    );
}

// ---- tar archives ----

/// A small source tree with subdirectories, files of several sizes and modes, an empty file, a
/// relative symlink and a hard link; `tar` archives made of it.
struct Sources {
    dir: tempfile::TempDir,
}

impl Sources {
    fn new() -> Sources {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path().join("src/proj");
        for d in ["a/b/c", "a/d", "e"] {
            std::fs::create_dir_all(top.join(d)).unwrap();
        }
        for i in 0..40u64 {
            let sub = ["", "a", "a/b", "a/b/c", "a/d", "e"][(i % 6) as usize];
            let size = (i * i * 37) % 40_000;
            let bytes: Vec<u8> = (0..size).map(|j| (j * 31 + i * 7) as u8).collect();
            std::fs::write(top.join(sub).join(format!("f{i}.c")), bytes).unwrap();
        }
        std::fs::write(top.join("empty"), b"").unwrap();
        std::fs::write(top.join("run.sh"), b"#!/bin/sh\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(top.join("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
        std::os::unix::fs::symlink("../f1.c", top.join("a/link.c")).unwrap();
        std::fs::hard_link(top.join("a/f1.c"), top.join("e/hard.c")).unwrap();
        Sources { dir }
    }

    /// An archive of the tree at `name`: made by `tar`, then compressed as `flag` says ("" plain,
    /// "z" gzip, "J" xz, as tar's flags). The compression is done here, with the libraries the
    /// lab reads archives with, so that the fast tier needs no xz program (xz-utils).
    fn archive(&self, flag: &str, name: &str) -> PathBuf {
        let out = self.dir.path().join(name);
        let plain = self.dir.path().join(format!("{name}.plain"));
        let status = Command::new("tar")
            .arg("-cf")
            .arg(&plain)
            .arg("-C")
            .arg(self.dir.path().join("src"))
            .arg("proj")
            .status()
            .expect("these tests run the `tar` program: install tar");
        assert!(status.success(), "tar -cf failed");
        let bytes = std::fs::read(&plain).unwrap();
        let compressed = match flag {
            "" => bytes,
            "z" => {
                let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
                z.write_all(&bytes).unwrap();
                z.finish().unwrap()
            }
            "J" => {
                let mut x = xz2::write::XzEncoder::new(Vec::new(), 6);
                x.write_all(&bytes).unwrap();
                x.finish().unwrap()
            }
            other => panic!("no compression `{other}`"),
        };
        std::fs::write(&out, compressed).unwrap();
        out
    }

    /// The tree as `tar -x` extracts `archive`.
    fn extracted_by_tar(&self, archive: &Path) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let status = Command::new("tar")
            .arg("-xf")
            .arg(archive)
            .arg("-C")
            .arg(dir.path())
            .status()
            .expect("tar");
        assert!(status.success());
        dir
    }
}

#[test]
fn plain_gzip_and_xz_archives_are_told_by_their_bytes_not_their_names() {
    let src = Sources::new();
    let plain = Tree::from_archive(&src.archive("", "plain.tar")).expect("plain tar");
    // Names that lie: a gzip archive called .tar, an xz archive called .gz.
    let gz = Tree::from_archive(&src.archive("z", "really-gzip.tar")).expect("gzip tar");
    let xz = Tree::from_archive(&src.archive("J", "really-xz.gz")).expect("xz tar");
    assert_eq!(plain.listing(), gz.listing());
    assert_eq!(plain.listing(), xz.listing());
    let counts = plain.counts();
    assert_eq!((counts.files, counts.links, counts.skipped), (42, 2, 0));
    assert_eq!(counts.dirs, 6, "proj, a, a/b, a/b/c, a/d, e");
    for tree in [&gz, &xz] {
        let out = tempfile::tempdir().unwrap();
        tree.extract_into(out.path()).unwrap();
        let reference = src.extracted_by_tar(&src.archive("", "again.tar"));
        assert_eq!(
            walk(out.path()),
            walk(reference.path()),
            "{} as tar -x writes it",
            tree.source()
        );
    }
}

#[test]
fn an_extraction_is_what_tar_x_writes_symlinks_hard_links_and_modes_included() {
    let src = Sources::new();
    let archive = src.archive("", "proj.tar");
    let out = tempfile::tempdir().unwrap();
    let done = Tree::from_archive(&archive).unwrap().extract_into(out.path()).unwrap();
    assert!(done.complete);
    assert_eq!((done.files, done.links, done.dirs), (42, 2, 6));
    let ours = walk(out.path());
    assert_eq!(ours, walk(src.extracted_by_tar(&archive).path()));
    assert_eq!(ours[Path::new("proj/a/link.c")], Node::Symlink("../f1.c".into()));
    assert!(matches!(ours[Path::new("proj/e/hard.c")], Node::File { links: 2, .. }));
    assert!(matches!(ours[Path::new("proj/run.sh")], Node::File { mode: 0o755, .. }));
}

#[test]
fn a_file_that_is_not_an_archive_is_refused_with_its_name() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.tar");
    std::fs::write(&junk, vec![b'x'; 4096]).unwrap();
    let err = Tree::from_archive(&junk).err().expect("refused").to_string();
    assert!(
        err.contains("junk.tar") && err.contains("is it a tar archive?"),
        "{err}"
    );

    let bz = dir.path().join("kernel.tar.bz2");
    std::fs::write(&bz, b"BZh91AY&SY\x00\x00").unwrap();
    let err = Tree::from_archive(&bz).err().expect("refused").to_string();
    assert!(
        err.contains("kernel.tar.bz2") && err.contains("bzip2-compressed"),
        "{err}"
    );

    let missing = dir.path().join("missing.tar");
    let err = Tree::from_archive(&missing).err().expect("refused").to_string();
    assert!(err.contains("missing.tar") && err.contains("No such file"), "{err}");
}

// ---- confinement ----

/// A ustar archive made by hand, so that it can hold what `tar` would not write.
#[derive(Default)]
struct RawTar(Vec<u8>);

impl RawTar {
    fn member(mut self, name: &str, kind: u8, link: &str, data: &[u8]) -> RawTar {
        let mut h = [0u8; 512];
        h[..name.len()].copy_from_slice(name.as_bytes());
        h[100..108].copy_from_slice(b"0000644\0");
        h[108..116].copy_from_slice(b"0000000\0");
        h[116..124].copy_from_slice(b"0000000\0");
        h[124..136].copy_from_slice(format!("{:011o}\0", data.len()).as_bytes());
        h[136..148].copy_from_slice(b"00000000000\0");
        h[148..156].copy_from_slice(b"        ");
        h[156] = kind;
        h[157..157 + link.len()].copy_from_slice(link.as_bytes());
        h[257..263].copy_from_slice(b"ustar\0");
        h[263..265].copy_from_slice(b"00");
        let sum: u32 = h.iter().map(|&b| b as u32).sum();
        h[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
        self.0.extend_from_slice(&h);
        self.0.extend_from_slice(data);
        self.0.resize(self.0.len().next_multiple_of(512), 0);
        self
    }

    fn file(self, name: &str, data: &[u8]) -> RawTar {
        self.member(name, b'0', "", data)
    }

    fn write(mut self, path: &Path) -> PathBuf {
        self.0.extend_from_slice(&[0; 1024]);
        std::fs::write(path, &self.0).unwrap();
        path.to_path_buf()
    }
}

#[test]
fn hostile_archives_are_refused_whole_and_nothing_is_written_anywhere() {
    let place = tempfile::tempdir().unwrap();
    let outside = place.path().join("outside");
    let root = place.path().join("root");
    std::fs::create_dir(&outside).unwrap();
    std::fs::create_dir(&root).unwrap();
    let cases: Vec<(&str, RawTar, &str)> = vec![
        (
            "dotdot",
            RawTar::default().file("ok.c", b"fine").file("../x", b"escaped"),
            "member 2 `../x` contains `..`",
        ),
        (
            "deep-dotdot",
            RawTar::default().file("a/b/../../../outside/x", b"escaped"),
            "member 1 `a/b/../../../outside/x` contains `..`",
        ),
        (
            "absolute",
            RawTar::default().file(&format!("{}/x", outside.display()), b"escaped"),
            "is an absolute path",
        ),
        (
            "symlink-then-file",
            RawTar::default()
                .member("esc", b'2', outside.to_str().unwrap(), b"")
                .file("esc/x", b"escaped"),
            "member 2 `esc/x` passes through `esc`, which is a symlink earlier in the archive",
        ),
        (
            "relative-symlink-then-dir",
            RawTar::default()
                .member("up", b'2', "..", b"")
                .member("up/outside", b'5', "", b""),
            "passes through `up`, which is a symlink",
        ),
        (
            "hardlink-out",
            RawTar::default().member("pw", b'1', "../../etc/passwd", b""),
            "is a hard link whose target contains `..`",
        ),
        (
            "hardlink-to-nothing",
            RawTar::default().member("pw", b'1', "not/here", b""),
            "not a regular file earlier in the archive",
        ),
    ];
    for (name, raw, expected) in cases {
        let archive = raw.write(&place.path().join(format!("{name}.tar")));
        let err = Tree::from_archive(&archive).err().expect("refused").to_string();
        assert!(err.contains(&format!("{name}.tar")), "{name}: {err}");
        assert!(err.contains(expected), "{name}: expected `{expected}` in: {err}");
        assert!(err.contains("refused"), "{name}: {err}");
        let spec = FillSpec {
            to: 0.99,
            from: FillSource::Tar(archive),
            parallel: 2,
            layout: vec![2],
            seed: 1,
        };
        let err = fill(&root, &spec).expect_err("refused").to_string();
        assert!(err.contains(expected), "{name}: fill says: {err}");
        assert_eq!(
            std::fs::read_dir(&root).unwrap().count(),
            0,
            "{name}: nothing in the root"
        );
        assert_eq!(
            std::fs::read_dir(&outside).unwrap().count(),
            0,
            "{name}: nothing outside"
        );
        assert!(!place.path().join("x").exists(), "{name}");
    }
}

#[test]
fn a_symlink_planted_in_the_way_is_never_written_through() {
    let place = tempfile::tempdir().unwrap();
    let outside = place.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("victim"), b"untouched").unwrap();
    let tree = Tree::from_archive(
        &RawTar::default()
            .member("d/", b'5', "", b"")
            .file("d/f", b"data")
            .file("top", b"new")
            .write(&place.path().join("t.tar")),
    )
    .unwrap();

    // A directory of the archive is a symlink out: refused, nothing written there.
    let leaf = place.path().join("leaf1");
    std::fs::create_dir(&leaf).unwrap();
    std::os::unix::fs::symlink(&outside, leaf.join("d")).unwrap();
    let err = tree.extract_into(&leaf).expect_err("refused").to_string();
    assert!(
        err.contains("leaf1/d") && err.contains("never writes through a symlink"),
        "{err}"
    );
    assert!(!outside.join("f").exists());

    // A file of the archive is a symlink out: the symlink is replaced, its target untouched.
    let leaf = place.path().join("leaf2");
    std::fs::create_dir(&leaf).unwrap();
    std::os::unix::fs::symlink(outside.join("victim"), leaf.join("top")).unwrap();
    tree.extract_into(&leaf).expect("extraction");
    assert_eq!(std::fs::read(outside.join("victim")).unwrap(), b"untouched");
    assert!(std::fs::symlink_metadata(leaf.join("top")).unwrap().is_file());
    assert_eq!(std::fs::read(leaf.join("top")).unwrap(), b"new");
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 1);
}

#[test]
fn devices_and_fifos_are_skipped_and_counted() {
    let place = tempfile::tempdir().unwrap();
    let archive = RawTar::default()
        .member("fifo", b'6', "", b"")
        .member("null", b'3', "", b"")
        .file("f", b"data")
        .write(&place.path().join("special.tar"));
    let tree = Tree::from_archive(&archive).unwrap();
    let counts = tree.counts();
    assert_eq!((counts.files, counts.skipped), (1, 2));
    let out = tempfile::tempdir().unwrap();
    tree.extract_into(out.path()).unwrap();
    let names: Vec<_> = walk(out.path()).into_keys().collect();
    assert_eq!(names, vec![PathBuf::from("f")]);
}

#[test]
fn a_root_that_is_not_a_directory_is_refused() {
    let place = tempfile::tempdir().unwrap();
    let file = place.path().join("file");
    std::fs::write(&file, b"").unwrap();
    let spec = FillSpec {
        to: 0.4,
        from: FillSource::SyntheticKernelTree,
        parallel: 1,
        layout: vec![1],
        seed: 1,
    };
    let err = fill(&file, &spec).expect_err("refused").to_string();
    assert!(err.contains("file") && err.contains("not a directory"), "{err}");
    let err = fill(&place.path().join("nowhere"), &spec)
        .expect_err("refused")
        .to_string();
    assert!(err.contains("nowhere") && err.contains("No such file"), "{err}");
}

// ---- fills of a 64 MiB tmpfs (root) ----

fn seed_004(to: f64, from: FillSource, parallel: u32, layout: Vec<u32>) -> FillSpec {
    FillSpec {
        to,
        from,
        parallel,
        layout,
        seed: 1,
    }
}

#[test]
#[ignore = "system tier: root, to mount a tmpfs"]
fn filling_a_tmpfs_to_40_percent_stops_there_in_the_first_leaves() {
    let fs = Tmpfs::mount("64m");
    let (size, _) = fs.space();
    let spec = seed_004(0.4, FillSource::SyntheticKernelTree, 21, vec![10, 11, 21]);
    let report = fill(fs.path(), &spec).expect("fill");

    let bound = 0.4 + overshoot_bound(size, 21) as f64 / size as f64;
    assert!(
        (0.4..=bound).contains(&report.util_after),
        "util {} not in [0.40, {bound:.4}]",
        report.util_after
    );
    assert!(report.util_before < 0.01, "an empty tmpfs: {}", report.util_before);
    let (_, used) = fs.space();
    assert_eq!(
        report.util_after,
        used as f64 / size as f64,
        "the report says what statvfs says"
    );

    // One kernel tree does not fit in 64 MiB, so the fill cannot be made of whole extractions:
    // it stops part-way, at the target. 40% of 64 MiB is a tenth of one kernel tree: only the
    // first batch of 21 was begun, in the
    // leaves of fill/0/0 (those whose thread started late may have had nothing written before
    // the stop), and nothing is anywhere else.
    assert_eq!((report.extractions, report.complete), (21, 0));
    let top: Vec<_> = std::fs::read_dir(fs.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(top, vec!["fill"]);
    for n in 0..21 {
        assert!(fs.path().join(leaf(&spec.layout, n)).is_dir(), "leaf {n}");
    }
    // Which leaves got far: that is up to the scheduler (under load, leaf 0's thread may be the
    // late one). But 40% of 64 MiB over 21 leaves is over a megabyte in one of them at least,
    // and the tree's top Makefile comes after its first 13 kB: it is there, where the tree puts
    // it, in some leaf.
    assert!(
        (0..21).any(|n| fs.path().join(leaf(&spec.layout, n)).join("linux/Makefile").is_file()),
        "no leaf holds linux/Makefile"
    );
    assert!(!fs.path().join("fill/0/1").exists());
    let on_disk = walk(&fs.path().join("fill"));
    let (dirs, files, bytes) = totals(&on_disk);
    assert_eq!((files, bytes), (report.files, report.bytes));
    assert_eq!(
        dirs,
        report.dirs + 1 + 1 + 21,
        "the tree's directories and fill/0, fill/0/0, the leaves"
    );
}

#[test]
#[ignore = "system tier: root, to mount a tmpfs"]
fn parallel_extractions_write_each_leaf_as_a_serial_fill_does() {
    let src = Sources::new();
    let archive = src.archive("", "proj.tar");
    let reference = walk(src.extracted_by_tar(&archive).path());
    let layout = vec![2, 3, 4];
    let fill_with = |parallel: u32| {
        let fs = Tmpfs::mount("64m");
        let spec = seed_004(0.4, FillSource::Tar(archive.clone()), parallel, layout.clone());
        let report = fill(fs.path(), &spec).expect("fill");
        assert!(report.util_after >= 0.4, "{}", report.util_after);
        (fs, report)
    };
    let (parallel, p) = fill_with(4);
    let (serial, s) = fill_with(1);

    // The archive is about 400 kB: 40% of 64 MiB takes more than one round of 24 leaves, so
    // the second round went one level down, fill/0/0/0/1...
    assert!(
        p.extractions > 24 && s.extractions > 24,
        "{} {}",
        p.extractions,
        s.extractions
    );
    assert!(parallel.path().join("fill/0/0/0/1/proj").is_dir());
    // Leaves were filled in order, each whole: an extraction of 400 kB fits the 64 MiB many
    // times over, so the fill stops between extractions, at the first that reaches 40%.
    for (fs, report, batch) in [(&parallel, &p, 4), (&serial, &s, 1)] {
        assert_eq!(report.complete, report.extractions, "a {batch}-wide fill: {report:?}");
        for n in 0..report.extractions {
            assert_eq!(walk_leaf(fs, &layout, n), reference, "leaf {n} of a {batch}-wide fill");
        }
        assert!(!fs.path().join(leaf(&layout, report.extractions)).exists());
        let one = report.per_extraction as f64 / (64 << 20) as f64;
        assert!(
            report.util_after - one < 0.4,
            "past 40% by more than one extraction: {report:?}"
        );
    }
    let same = p.extractions.min(s.extractions);
    for n in 0..same {
        assert_eq!(
            walk_leaf(&parallel, &layout, n),
            walk_leaf(&serial, &layout, n),
            "leaf {n}"
        );
    }
}

/// What extraction `n` wrote: leaf `n` without the next rounds' directories (`1/`, `2/`...).
fn walk_leaf(fs: &Tmpfs, layout: &[u32], n: u64) -> std::collections::BTreeMap<PathBuf, Node> {
    let mut found = walk(&fs.path().join(leaf(layout, n)));
    found.retain(|path, _| {
        let first = path.components().next().unwrap().as_os_str().to_string_lossy();
        !first.bytes().all(|b| b.is_ascii_digit())
    });
    found
}
