//! Reading the text of an input file (a workload, a profile, a loadfile), and quoting it back in
//! errors: bytes that are not UTF-8 are named by line, column and byte offset, and what an error
//! echoes is shortened to a readable excerpt.

use std::fmt;
use std::path::Path;

/// An input file that cannot be read as text.
#[derive(Debug)]
pub enum TextError {
    Io {
        file: String,
        error: std::io::Error,
    },
    /// Not UTF-8: where the first bad byte is (line and column from 1, the column counted in
    /// characters; the offset in bytes from 0 in the file).
    NotUtf8 {
        file: String,
        line: usize,
        column: usize,
        offset: usize,
        byte: u8,
    },
}

impl fmt::Display for TextError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TextError::Io { file, error } => write!(f, "{file}: {error}"),
            TextError::NotUtf8 {
                file,
                line,
                column,
                offset,
                byte,
            } => write!(
                f,
                "{file}:{line}:{column}: byte 0x{byte:02x} (at byte offset {offset}) is not valid UTF-8; the file must be UTF-8 text"
            ),
        }
    }
}

impl std::error::Error for TextError {}

/// The largest input file fslab reads: far above any workload, profile, loadfile or study
/// (dbench's client.txt, the largest, is 25 MiB), far below what would exhaust memory.
pub const MAX_INPUT_BYTES: u64 = 256 << 20;

/// Reads an input file's bytes, at most [`MAX_INPUT_BYTES`] of them: a file, or a pipe (`-c
/// <(zcat client.txt.gz)`), or a terminal. A directory or a block device is refused before
/// anything is read, and a source that goes on past the limit (`/dev/zero`) is refused there
/// rather than read until memory runs out.
pub fn read_file(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::{Error, ErrorKind, Read};
    use std::os::unix::fs::FileTypeExt;
    let file = std::fs::File::open(path)?;
    let kind = file.metadata()?.file_type();
    let refused = |what: &str| Error::new(ErrorKind::InvalidInput, format!("{what}, not a file of text"));
    if kind.is_dir() {
        return Err(refused("a directory"));
    }
    if kind.is_block_device() {
        return Err(refused("a block device"));
    }
    let mut bytes = Vec::new();
    file.take(MAX_INPUT_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!("more than the {} MiB an input may be", MAX_INPUT_BYTES >> 20),
        ));
    }
    Ok(bytes)
}

/// Reads `path` as UTF-8 text ([`read_file`]).
pub fn read_text(path: &Path) -> Result<String, TextError> {
    let file = path.display().to_string();
    let bytes = read_file(path).map_err(|error| TextError::Io {
        file: file.clone(),
        error,
    })?;
    String::from_utf8(bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        let bytes = e.as_bytes();
        // Everything before the bad byte is valid UTF-8.
        let before = std::str::from_utf8(&bytes[..offset]).unwrap_or_default();
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        TextError::NotUtf8 {
            file,
            line,
            column,
            offset,
            byte: bytes[offset],
        }
    })
}

/// The most characters of input an error quotes.
pub const EXCERPT: usize = 80;

/// `text` as an error quotes it: whole when short, else its first [`EXCERPT`] characters, an
/// ellipsis and how long it was.
pub fn excerpt(text: &str) -> String {
    let count = text.chars().count();
    if count <= EXCERPT {
        return text.to_string();
    }
    let head: String = text.chars().take(EXCERPT).collect();
    format!("{head}… ({count} characters)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_input_is_read_whole_up_to_its_limit_and_a_directory_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("w.toml");
        std::fs::write(&file, "name = 1\n").unwrap();
        assert_eq!(read_file(&file).unwrap(), b"name = 1\n");
        let e = read_file(dir.path()).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
        assert_eq!(e.to_string(), "a directory, not a file of text");
        // /dev/zero never ends: refused at the limit, not read until memory runs out.
        let e = read_text(Path::new("/dev/zero")).unwrap_err().to_string();
        assert_eq!(e, "/dev/zero: more than the 256 MiB an input may be");
    }

    #[test]
    fn a_bad_byte_is_named_by_line_column_and_offset() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("u.toml");
        std::fs::write(&path, b"name = \"ok\"\nx = \"\xc3\xa9t\xff\"\n").unwrap();
        let e = read_text(&path).unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "{}:2:8: byte 0xff (at byte offset 20) is not valid UTF-8; the file must be UTF-8 text",
                path.display()
            )
        );
    }

    #[test]
    fn a_long_input_is_quoted_as_an_excerpt() {
        assert_eq!(excerpt("short"), "short");
        let long = "é".repeat(1_000_000);
        let e = excerpt(&long);
        assert!(e.starts_with(&"é".repeat(80)), "{e}");
        assert!(e.ends_with("… (1000000 characters)"), "{e}");
        assert_eq!(e.chars().count(), 80 + " (1000000 characters)".len() + 1);
    }
}
