//! [`Store`]: one SQLite database file holding every study, opened and migrated.

use crate::error::{Result, StoreError};
use crate::schema;
use rusqlite::{Connection, OpenFlags};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// fslab's results store. Writes go through [`Store::record_run`] and its siblings (write.rs),
/// reads through [`Store::runs`] and its siblings (query.rs).
///
/// A `Store` is one connection: use it from one thread (it is `Send`, not `Sync`). Several
/// processes may open the same file; WAL mode lets reports read while the lab writes.
pub struct Store {
    pub(crate) conn: Connection,
    path: PathBuf,
    migrations_applied: u32,
}

impl Store {
    /// Opens the store at `path`, creating its parent directories and the file when they do not
    /// exist, and brings its schema to [`schema::SCHEMA_VERSION`]. A database written by a newer
    /// fslab is refused and left untouched.
    pub fn open(path: impl AsRef<Path>) -> Result<Store> {
        let path = path.as_ref().to_path_buf();
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|source| StoreError::CreateDir {
                path: parent.to_path_buf(),
                source,
            })?;
        }
        // An existing file is a store already: a file left empty (truncated, or made by
        // mistake) is not silently made a new one, and a damaged one is not written to.
        let existing = std::fs::metadata(&path).ok();
        if existing.as_ref().is_some_and(|m| m.is_file() && m.len() == 0) {
            return Err(StoreError::Empty { path });
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(&path, flags).map_err(|source| StoreError::Open {
            path: path.clone(),
            source,
        })?;
        if existing.is_some() {
            quick_check(&conn, &path)?;
        }
        schema::configure(&conn, &path).map_err(|e| match e {
            StoreError::Sqlite(source) => StoreError::Open {
                path: path.clone(),
                source,
            },
            other => other,
        })?;
        let migrations_applied = schema::migrate(&conn, &path)?;
        Ok(Store {
            conn,
            path,
            migrations_applied,
        })
    }

    /// Opens the store at `path` to read it only: for listing, showing, reporting and comparing,
    /// which must work on a store the user cannot write (a read-only file or directory). A store
    /// at an older schema version is brought forward first, which needs writing; a missing file
    /// is [`Store::open`]'s to create.
    pub fn open_read(path: impl AsRef<Path>) -> Result<Store> {
        let path = path.as_ref().to_path_buf();
        if !path.exists() {
            return Store::open(path);
        }
        let failed = |source| StoreError::Open {
            path: path.clone(),
            source,
        };
        if std::fs::metadata(&path).is_ok_and(|m| m.is_file() && m.len() == 0) {
            return Err(StoreError::Empty { path });
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let mut conn = Connection::open_with_flags(&path, flags).map_err(failed)?;
        conn.busy_timeout(schema::BUSY_TIMEOUT).map_err(failed)?;
        let found = match schema::version(&conn) {
            Ok(found) => found,
            // A store in write-ahead-log mode whose directory cannot be written: SQLite cannot
            // make its shared-memory file beside it (CANTOPEN on a read-only filesystem,
            // READONLY in a directory the user may not write). Nobody can be writing it then,
            // so it is read as it is on disk.
            Err(e)
                if matches!(
                    e.sqlite_error_code(),
                    Some(rusqlite::ErrorCode::CannotOpen | rusqlite::ErrorCode::ReadOnly)
                ) =>
            {
                let uri = format!("file:{}?immutable=1", uri_path(&path));
                conn = Connection::open_with_flags(&uri, flags | OpenFlags::SQLITE_OPEN_URI).map_err(failed)?;
                schema::version(&conn).map_err(failed)?
            }
            Err(e) => return Err(failed(e)),
        };
        if found > schema::SCHEMA_VERSION {
            return Err(StoreError::TooNew {
                path,
                found,
                supported: schema::SCHEMA_VERSION,
            });
        }
        if found < schema::SCHEMA_VERSION {
            drop(conn);
            return Store::open(&path).map_err(|e| StoreError::ReadOnlyOld {
                path: path.clone(),
                found,
                wanted: schema::SCHEMA_VERSION,
                source: Box::new(e),
            });
        }
        conn.pragma_update(None, "foreign_keys", true).map_err(failed)?;
        Ok(Store {
            conn,
            path,
            migrations_applied: 0,
        })
    }

    /// Where the store lives unless `--db` says otherwise: `$FSLAB_DB`, else
    /// `$XDG_DATA_HOME/fslab/fslab.db`, else `$HOME/.local/share/fslab/fslab.db`.
    pub fn default_path() -> Result<PathBuf> {
        default_path_from(|name| std::env::var_os(name))
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The schema version of the database (after [`Store::open`], always
    /// [`schema::SCHEMA_VERSION`]).
    pub fn schema_version(&self) -> Result<u32> {
        Ok(schema::version(&self.conn)?)
    }

    /// How many migrations opening this store applied: all of them for a new file, none for a
    /// file already up to date.
    pub fn migrations_applied(&self) -> u32 {
        self.migrations_applied
    }
}

/// Checks an existing database before anything is written to it: `PRAGMA quick_check` reads
/// every page and says what is wrong.
fn quick_check(conn: &Connection, path: &Path) -> Result<()> {
    let problems = conn.prepare("PRAGMA quick_check(5)").and_then(|mut stmt| {
        stmt.query_map([], |row| row.get::<_, String>(0))?
            .collect::<rusqlite::Result<Vec<String>>>()
    });
    let corrupt = |detail: String| StoreError::Corrupt {
        path: path.to_path_buf(),
        detail,
    };
    match problems {
        Ok(lines) if lines.len() == 1 && lines[0] == "ok" => Ok(()),
        Ok(lines) => Err(corrupt(lines.join("; "))),
        Err(e) if e.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseCorrupt) => Err(corrupt(e.to_string())),
        Err(source) => Err(StoreError::Open {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// A path as the path of a `file:` URI: the characters a URI gives a meaning to, escaped.
fn uri_path(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut out = String::new();
    for &b in path.as_os_str().as_bytes() {
        match b {
            b'%' | b'?' | b'#' => out.push_str(&format!("%{b:02X}")),
            _ if b.is_ascii() && !b.is_ascii_control() => out.push(b as char),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// [`Store::default_path`] with the environment given as `var`. Empty variables count as unset,
/// and so does a relative `XDG_DATA_HOME`, as the XDG base directory specification says.
fn default_path_from(var: impl Fn(&str) -> Option<OsString>) -> Result<PathBuf> {
    let set = |name| var(name).filter(|v: &OsString| !v.is_empty()).map(PathBuf::from);
    if let Some(db) = set("FSLAB_DB") {
        return Ok(db);
    }
    if let Some(data) = set("XDG_DATA_HOME").filter(|p| p.is_absolute()) {
        return Ok(data.join("fslab").join("fslab.db"));
    }
    match set("HOME") {
        Some(home) => Ok(home.join(".local/share/fslab/fslab.db")),
        None => Err(StoreError::NoDefaultPath),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path_with(vars: &[(&str, &str)]) -> Result<PathBuf> {
        default_path_from(|name| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| OsString::from(v)))
    }

    #[test]
    fn fslab_db_comes_first() {
        let vars = [
            ("FSLAB_DB", "/tmp/x.db"),
            ("XDG_DATA_HOME", "/data"),
            ("HOME", "/home/u"),
        ];
        assert_eq!(path_with(&vars).unwrap(), PathBuf::from("/tmp/x.db"));
    }

    #[test]
    fn xdg_data_home_comes_before_home() {
        let vars = [("XDG_DATA_HOME", "/data"), ("HOME", "/home/u")];
        assert_eq!(path_with(&vars).unwrap(), PathBuf::from("/data/fslab/fslab.db"));
    }

    #[test]
    fn home_is_the_last_resort_and_empty_or_relative_values_are_unset() {
        let vars = [
            ("FSLAB_DB", ""),
            ("XDG_DATA_HOME", "relative/data"),
            ("HOME", "/home/u"),
        ];
        assert_eq!(
            path_with(&vars).unwrap(),
            PathBuf::from("/home/u/.local/share/fslab/fslab.db")
        );
    }

    #[test]
    fn without_any_variable_the_error_says_to_pass_db() {
        let e = path_with(&[]).unwrap_err();
        assert!(matches!(e, StoreError::NoDefaultPath));
        assert!(e.to_string().contains("--db"), "{e}");
    }
}
