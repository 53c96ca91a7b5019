//! Reading a tar archive (plain, gzip or xz, told apart by their first bytes, not by the name)
//! once into memory, and turning its members into a [`Tree`].
//!
//! The archive is decompressed into one buffer (the 6.1 kernel is about 1.4 GB, which fits in
//! memory on any machine that runs a study); files are then written from slices of that buffer by
//! every extraction. xz is read with liblzma built into fslab (the `xz2` crate with its `static`
//! feature: fast, and needs neither a system library nor the `xz` program), gzip with `flate2`.

use super::tree::{components, Builder, Extent, Tree};
use crate::LabError;
use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, BufReader, Read};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use tar::EntryType;

/// What the first bytes of a file say it is.
#[derive(Debug, PartialEq, Eq)]
enum Format {
    Xz,
    Gzip,
    /// Compressed in a way fslab does not read: the name of the compressor.
    Other(&'static str),
    Plain,
}

impl Format {
    fn detect(magic: &[u8]) -> Format {
        const OTHERS: [(&[u8], &str); 4] = [
            (b"BZh", "bzip2"),
            (&[0x28, 0xb5, 0x2f, 0xfd], "zstd"),
            (&[0x04, 0x22, 0x4d, 0x18], "lz4"),
            (&[0x5d, 0x00, 0x00], "lzma"),
        ];
        if magic.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0x00]) {
            Format::Xz
        } else if magic.starts_with(&[0x1f, 0x8b]) {
            Format::Gzip
        } else if let Some((_, name)) = OTHERS.iter().find(|(m, _)| magic.starts_with(m)) {
            Format::Other(name)
        } else {
            Format::Plain
        }
    }
}

/// Reads the archive at `path` into a tree, or says which member is wrong and why.
pub(crate) fn load(path: &Path) -> Result<Tree, LabError> {
    let bytes = read(path)?;
    parse(bytes, path)
}

/// The archive's bytes, decompressed.
fn read(path: &Path) -> Result<Vec<u8>, LabError> {
    let at = |e| LabError::io(format!("reading tar archive {}", path.display()), e);
    let mut file = File::open(path).map_err(at)?;
    let mut magic = Vec::with_capacity(6);
    (&mut file).take(6).read_to_end(&mut magic).map_err(at)?;
    let mut rest = BufReader::with_capacity(1 << 20, io::Cursor::new(magic.clone()).chain(file));
    let mut bytes = Vec::new();
    match Format::detect(&magic) {
        Format::Xz => xz2::read::XzDecoder::new_multi_decoder(rest).read_to_end(&mut bytes),
        Format::Gzip => flate2::read::MultiGzDecoder::new(rest).read_to_end(&mut bytes),
        Format::Plain => rest.read_to_end(&mut bytes),
        Format::Other(name) => {
            return Err(at(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("it is {name}-compressed; fslab reads .tar, .tar.gz and .tar.xz: decompress it first"),
            )))
        }
    }
    .map_err(at)?;
    Ok(bytes)
}

fn parse(bytes: Vec<u8>, path: &Path) -> Result<Tree, LabError> {
    let bad = |n: usize, name: &[u8], problem: String| {
        LabError::io(
            format!("tar archive {}", path.display()),
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("member {n} `{}` {problem}; refused", String::from_utf8_lossy(name)),
            ),
        )
    };
    let broken = |n: usize, e: io::Error| {
        LabError::io(
            format!("tar archive {}", path.display()),
            io::Error::new(e.kind(), format!("member {n}: {e} (is it a tar archive?)")),
        )
    };
    let mut builder = Builder::new();
    let mut archive = tar::Archive::new(&bytes[..]);
    let entries = archive.entries().map_err(|e| broken(1, e))?;
    for (i, entry) in entries.enumerate() {
        let n = i + 1;
        let entry = entry.map_err(|e| broken(n, e))?;
        let name = entry.path_bytes();
        let kind = entry.header().entry_type();
        if kind == EntryType::XGlobalHeader {
            continue;
        }
        let path = components(&name).map_err(|p| bad(n, &name, p))?;
        let added = match kind {
            EntryType::Regular | EntryType::Continuous => {
                let data = Extent {
                    start: entry.raw_file_position(),
                    len: entry.size(),
                };
                if data.start.saturating_add(data.len) > bytes.len() as u64 {
                    return Err(bad(n, &name, "is cut short: the archive is truncated".into()));
                }
                let mode = entry.header().mode().unwrap_or(0o644);
                builder.add_file(&path, mode, data)
            }
            EntryType::Directory => builder.add_dir(&path),
            EntryType::Symlink => match entry.link_name_bytes() {
                Some(target) => builder.add_symlink(&path, OsStr::from_bytes(&target)),
                None => Err("is a symlink without a target".into()),
            },
            EntryType::Link => match entry.link_name_bytes() {
                Some(target) => match components(&target) {
                    Ok(target) => builder.add_hardlink(&path, &target),
                    Err(p) => Err(format!("is a hard link whose target {p}")),
                },
                None => Err("is a hard link without a target".into()),
            },
            // Devices, fifos, sparse files and anything newer: not part of a fill.
            _ => {
                builder.skip();
                Ok(())
            }
        };
        added.map_err(|p| bad(n, &name, p))?;
    }
    Ok(builder.finish(format!("tar archive {}", path.display()), bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_told_by_their_first_bytes() {
        assert_eq!(Format::detect(b"\xfd7zXZ\x00\x00"), Format::Xz);
        assert_eq!(Format::detect(b"\x1f\x8b\x08"), Format::Gzip);
        assert_eq!(Format::detect(b"BZh91AY"), Format::Other("bzip2"));
        assert_eq!(Format::detect(b"\x28\xb5\x2f\xfd"), Format::Other("zstd"));
        assert_eq!(Format::detect(b"linux/"), Format::Plain);
        assert_eq!(Format::detect(b""), Format::Plain);
    }
}
