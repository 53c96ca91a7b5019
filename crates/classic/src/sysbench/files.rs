//! The test files, `test_file.N` in `--dir` itself: `prepare` writes them (the engine's untimed
//! fileset setup), `run` checks that they are there, at least as long as sysbench needs them,
//! before it starts,
//! `cleanup` removes them. Anything else in the directory is left alone: the engine removes only
//! the `test_file.N` it made there itself (its marker file says which).

use super::compile::fileset;
use super::options::Options;
use super::Error;
use fslab_engine::confine::RunDir;
use fslab_engine::fileset::{self, FileTable, SetupReport};
use fslab_engine::workload::{Data, Fileset, SizeDist};
use fslab_engine::Bytes;
use std::path::Path;

/// The engine's mark on a directory it made.
const MARKER: &str = ".fslab-fileset";

/// A set of test files fslab made, as a run keeps it: each file's size (all the same, at least
/// sysbench's file size) and what they were written with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kept {
    pub size: u64,
    pub data: Data,
}

impl Kept {
    /// The fileset that keeps these files as they are.
    pub fn apply(self, spec: &mut Fileset) {
        spec.size = SizeDist::Fixed(Bytes(self.size));
        spec.data = self.data;
    }
}

/// Writes the files, as sysbench's `create_files()` does to what it finds. A set fslab made,
/// its files all of one size, is kept: each file is opened, `lseek()`ed to its end, written from
/// there with whole blocks while it is shorter than sysbench's file size ("Extending existing
/// file"; nothing when it is at least that long, "Reusing existing file", whatever it holds,
/// `--validate` or not), fsynced and closed. That writes back what an earlier run left dirty
/// before the next run, and a larger `--file-total-size` writes only what is new, as with
/// sysbench. A set too short and written with other data than these options ask for is written
/// again from scratch (sysbench would extend it with the new data, a mix fslab's marker cannot
/// say); so is anything else.
pub fn prepare(dir: &Path, o: &Options) -> Result<SetupReport, Error> {
    let run = RunDir::open(dir)?;
    let mut spec = Fileset {
        prealloc: true,
        reuse: true,
        ..fileset(o)
    };
    if let Ok(size) = found(dir, o, 0) {
        match fileset::marked_data(&run, &spec) {
            Some(data) if size >= o.file_size() || data == spec.data => Kept { size, data }.apply(&mut spec),
            _ => {}
        }
    }
    let (_table, mut report) = FileTable::setup(&run, &spec, false, false, o.rand_seed)?;
    if report.reused {
        let started = std::time::Instant::now();
        report.bytes += fileset::reopen_kept(&run, &spec, o.file_size())?;
        report.duration += started.elapsed();
    }
    Ok(report)
}

/// Checks that `prepare` (or a seqwr run) made the files `run` needs: every `test_file.N` there,
/// all of one size and at least the size these options give, and no more of them; and says
/// their size and what they were written with (zeros, checked blocks, or with no data said what
/// a seqwr run wrote), for the run to keep them as they are. seqwr makes its own files and needs
/// none.
pub fn check(dir: &Path, o: &Options) -> Result<Option<Kept>, Error> {
    if o.test_mode == Some(super::TestMode::SeqWr) {
        return Ok(None);
    }
    let size = prepared(dir, o)?;
    // Prepared with zeros or checked blocks; or, with no data said, made by a seqwr run,
    // whose blocks are checked if it ran with --validate.
    let data = fileset::marked_data(&RunDir::open(dir)?, &super::fileset(o)).unwrap_or(Data::Zeros);
    Ok(Some(Kept { size, data }))
}

/// Every `test_file.N` of these options in `dir`, all of one size and at least sysbench's file
/// size, no more of them, and fslab's marker beside them: their size; else what is wrong, and how
/// to put it right. sysbench takes files of any size at least that long (it checks each with
/// `fstat()`); fslab keeps only a set it made, and its files are of one size: whole blocks
/// (prepare) or exactly the file size (seqwr).
fn prepared(dir: &Path, o: &Options) -> Result<u64, Error> {
    found(dir, o, o.file_size())
}

/// Every `test_file.N` of these options in `dir`, all of one size, at least `least`, and no more
/// of them: their size; else what is wrong, and how to put it right.
fn found(dir: &Path, o: &Options, least: u64) -> Result<u64, Error> {
    let again = format!(
        "run `fslab sysbench fileio --file-num={} --file-total-size={} prepare` first (with the same --dir)",
        o.file_num,
        fslab_engine::Bytes(o.total_size)
    );
    let mut size = None;
    for id in 0..o.file_num {
        let path = dir.join(format!("test_file.{id}"));
        match std::fs::symlink_metadata(&path) {
            Ok(m) if m.is_file() && m.len() < least => {
                return Err(Error::NotPrepared(format!(
                    "size of file '{}' is {} bytes, but at least {least} are expected: the files were prepared \
                     with other --file-num or --file-total-size values; {again}",
                    path.display(),
                    m.len()
                )))
            }
            Ok(m) if m.is_file() => match size {
                None => size = Some(m.len()),
                Some(first) if first == m.len() => {}
                Some(first) => {
                    return Err(Error::NotPrepared(format!(
                        "size of file '{}' is {} bytes where test_file.0 is {first}: fslab keeps only a set of \
                         test files of one size, as it makes them; {again}",
                        path.display(),
                        m.len()
                    )))
                }
            },
            Ok(_) => {
                return Err(Error::NotPrepared(format!(
                    "'{}' is not a regular file; {again}",
                    path.display()
                )))
            }
            Err(e) => {
                return Err(Error::NotPrepared(format!(
                    "cannot open file '{}': {e}; {again}",
                    path.display()
                )))
            }
        }
    }
    let extra = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter_map(|e| e.file_name().to_str().and_then(file_id))
                .filter(|&id| id >= o.file_num)
                .count()
        })
        .unwrap_or(0);
    if extra > 0 {
        return Err(Error::NotPrepared(format!(
            "{} holds {} test files, not --file-num={}; {again}",
            dir.display(),
            o.file_num + extra as u64,
            o.file_num
        )));
    }
    if !dir.join(MARKER).is_file() {
        return Err(Error::NotPrepared(format!(
            "the test files in {} were not made by `fslab sysbench fileio prepare` (no {MARKER}); {again}",
            dir.display()
        )));
    }
    Ok(size.unwrap_or(least))
}

/// Removes the test files fslab made (and nothing else); nothing to do when there are none.
pub fn cleanup(dir: &Path, o: &Options) -> Result<(), Error> {
    let run = RunDir::open(dir)?;
    fileset::remove(&run, &fileset(o))?;
    Ok(())
}

/// N of a `test_file.N` name.
fn file_id(name: &str) -> Option<u64> {
    let digits = name.strip_prefix("test_file.")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_ids_come_from_test_file_names_only() {
        assert_eq!(file_id("test_file.0"), Some(0));
        assert_eq!(file_id("test_file.127"), Some(127));
        assert_eq!(file_id("test_file."), None);
        assert_eq!(file_id("test_file.1x"), None);
        assert_eq!(file_id(".fslab-fileset"), None);
    }
}
