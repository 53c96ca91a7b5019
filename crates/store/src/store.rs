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
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(&path, flags).map_err(|source| StoreError::Open {
            path: path.clone(),
            source,
        })?;
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
