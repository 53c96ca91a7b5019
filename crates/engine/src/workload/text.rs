//! A workload's native TOML form: reading a file, parsing and checking its text, printing it
//! back, and pointing an error at its line and column.

use super::validate::PathSeg;
use super::Workload;
use std::path::Path;

/// A workload file that cannot be used, with the place in the file when there is one.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{file}: {error}")]
    Read { file: String, error: std::io::Error },
    #[error("{file}:{line}:{column}: {message}")]
    At {
        file: String,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{file}: {message}")]
    Whole { file: String, message: String },
}

impl Workload {
    /// Reads and checks a native workload file.
    pub fn from_file(path: &Path) -> Result<Workload, LoadError> {
        let text = crate::input::read_text(path).map_err(|e| match e {
            crate::input::TextError::Io { file, error } => LoadError::Read { file, error },
            crate::input::TextError::NotUtf8 {
                file,
                line,
                column,
                offset,
                byte,
            } => LoadError::At {
                file,
                line,
                column,
                message: format!(
                    "byte 0x{byte:02x} (at byte offset {offset}) is not valid UTF-8; the file must be UTF-8 text"
                ),
            },
        })?;
        Workload::from_toml(&text, &path.display().to_string())
    }

    /// Parses and checks native TOML; `file` names the source in errors.
    pub fn from_toml(text: &str, file: &str) -> Result<Workload, LoadError> {
        let at = |span: Option<std::ops::Range<usize>>, message: String| match span {
            Some(span) => {
                let (line, column) = line_col(text, span.start);
                LoadError::At {
                    file: file.to_string(),
                    line,
                    column,
                    message,
                }
            }
            None => LoadError::Whole {
                file: file.to_string(),
                message,
            },
        };
        let workload: Workload = toml::from_str(text).map_err(|e| at(e.span(), e.message().to_string()))?;
        workload
            .validate()
            .and_then(|()| workload.check_filesets_have_work())
            .map_err(|inv| at(span_of(text, &inv.path), inv.message))?;
        Ok(workload)
    }

    /// The workload as native TOML, as `--explain` prints it. Every integer of a valid workload
    /// fits TOML's (validation refuses larger ones, naming the field); one that has not been
    /// validated and holds a larger one comes out as a comment that says so, not a panic.
    pub fn to_toml(&self) -> String {
        if let Some(seed) = self.seed.filter(|&s| s > i64::MAX as u64) {
            // TOML's integers stop at i64::MAX: a larger seed is written as its digits.
            let mut w = self.clone();
            w.seed = None;
            let text = w.to_toml();
            return match text.parse::<toml_edit::DocumentMut>() {
                Ok(mut doc) => {
                    doc["seed"] = toml_edit::value(seed.to_string());
                    doc.to_string()
                }
                Err(_) => text,
            };
        }
        // toml writes integers above TOML's largest (i64::MAX) as numbers no TOML reader takes
        // back: text that does not parse is refused as text that cannot be written.
        let written =
            toml::to_string(self)
                .map_err(|e| e.to_string())
                .and_then(|text| match text.parse::<toml::Table>() {
                    Ok(_) => Ok(text),
                    Err(e) => Err(e.to_string()),
                });
        written.map(|text| self.octal_modes(text)).unwrap_or_else(|e| {
            let why = match self.validate() {
                Err(invalid) => invalid.message,
                Ok(()) => e,
            };
            format!("# this workload cannot be written as TOML: {why}\n")
        })
    }
}

impl Workload {
    /// `text` with each fileset's permission bits written as they are read, in octal
    /// (`mode = 0o700`, not 448).
    fn octal_modes(&self, text: String) -> String {
        if self.filesets.iter().all(|f| f.mode.is_none()) {
            return text;
        }
        let Ok(mut doc) = text.parse::<toml_edit::DocumentMut>() else {
            return text;
        };
        let sets = doc.get_mut("fileset").and_then(|i| i.as_array_of_tables_mut());
        for set in sets.into_iter().flat_map(|s| s.iter_mut()) {
            let octal = set.get("mode").and_then(|m| m.as_integer()).map(|m| format!("0o{m:o}"));
            // Parsed, the value keeps the octal form it was written in.
            if let Some(value) = octal.and_then(|o| o.parse::<toml_edit::Value>().ok()) {
                set["mode"] = toml_edit::Item::Value(value);
            }
        }
        doc.to_string()
    }
}

/// The line and column (from 1) of the item `path` points at in the TOML `text`, or of its
/// nearest parent written in the file.
pub fn locate(text: &str, path: &[PathSeg]) -> Option<(usize, usize)> {
    span_of(text, path).map(|s| line_col(text, s.start))
}

fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// Finds the span of the item a validation path points at, walking up to the nearest parent that
/// is written in the file.
fn span_of(text: &str, path: &[PathSeg]) -> Option<std::ops::Range<usize>> {
    let doc: toml_edit::Document<&str> = toml_edit::Document::parse(text).ok()?;
    let mut item: &toml_edit::Item = doc.as_item();
    let mut best = None;
    for seg in path {
        let next = match seg {
            PathSeg::Key(k) => item.get(*k),
            PathSeg::Name(k) => item.get(k.as_str()),
            PathSeg::Index(i) => item.get(*i),
        };
        let Some(next) = next else { break };
        item = next;
        let span = match item {
            toml_edit::Item::Value(v) => v.span(),
            toml_edit::Item::Table(t) => t.span(),
            toml_edit::Item::ArrayOfTables(a) => a.span(),
            toml_edit::Item::None => None,
        };
        if span.is_some() {
            best = span;
        }
    }
    if best.is_none() {
        // Point at the key itself when the value has no span of its own.
        if let Some(PathSeg::Key(k)) = path.last() {
            best = text.find(&format!("{k} ")).map(|s| s..s + k.len());
        }
    }
    best
}
