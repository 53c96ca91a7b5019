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

/// Reads `path` as UTF-8 text.
pub fn read_text(path: &Path) -> Result<String, TextError> {
    let file = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|error| TextError::Io {
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
