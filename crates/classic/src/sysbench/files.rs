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

/// A set of test files fslab made, as a run keeps it: the files' sizes (at least sysbench's
/// file size: one size, or a range when an earlier prepare left some longer) and what they were
/// written with.
#[derive(Clone, Debug, PartialEq)]
pub struct Kept {
    pub size: SizeDist,
    pub data: Data,
}

impl Kept {
    /// The fileset that keeps these files as they are.
    pub fn apply(self, spec: &mut Fileset) {
        spec.size = self.size;
        spec.data = self.data;
    }
}

/// What `prepare` did: the setup, and each file's size before it (0 for one it made), which
/// says whether sysbench would have created, extended or reused it.
#[derive(Clone, Debug)]
pub struct Prepared {
    pub setup: SetupReport,
    pub before: Vec<u64>,
}

/// Writes the files, as sysbench's `create_files()` does to what it finds. A set fslab made is
/// kept ([`fileset::top_up_kept`]): each file opened (made when it is missing), `lseek()`ed to
/// its end, written from there with whole blocks while it is shorter than sysbench's file size
/// ("Creating file" from nothing, "Extending existing file" from its end; nothing when it is at
/// least that long, "Reusing existing file", whatever it holds), fsynced and closed. That writes
/// back what an earlier run left dirty before the next run, and another `--file-total-size` or
/// `--file-num` writes only what is new, as with sysbench; files of an earlier set beyond
/// `--file-num` are removed, where sysbench leaves them. A set that needs writing but holds other
/// data than these options ask for (zeros against `--validate`'s checked blocks) is written again
/// from scratch (sysbench would add the new data to the old, a mix fslab's marker cannot say); so
/// is anything else.
pub fn prepare(dir: &Path, o: &Options) -> Result<Prepared, Error> {
    let run = RunDir::open(dir)?;
    let mut spec = Fileset {
        prealloc: true,
        reuse: true,
        ..fileset(o)
    };
    let started = std::time::Instant::now();
    let topped = fileset::top_up_kept(&run, &spec, o.file_size())?;
    let took = started.elapsed();
    let (before, bytes) = match topped {
        Some(t) => {
            spec.size = t.size;
            spec.data = t.data;
            (Some(t.before), t.bytes)
        }
        None => (None, 0),
    };
    let (_table, mut setup) = FileTable::setup(&run, &spec, false, false, o.rand_seed)?;
    setup.bytes += bytes;
    setup.duration += took;
    let before = before
        .filter(|_| setup.reused)
        .unwrap_or_else(|| vec![0; o.file_num as usize]);
    Ok(Prepared { setup, before })
}

/// Checks that `prepare` (or a seqwr run) made the files `run` needs: every `test_file.N` there,
/// each at least the size these options give, and no more of them; and says their sizes and
/// what they were written with (zeros, checked blocks, or with no data said what a seqwr run
/// wrote), for the run to keep them as they are. seqwr makes its own files and needs none.
pub fn check(dir: &Path, o: &Options) -> Result<Option<Kept>, Error> {
    if o.test_mode == Some(super::TestMode::SeqWr) {
        return Ok(None);
    }
    let size = prepared(dir, o)?;
    // Prepared with zeros or checked blocks; or, with no data said, made by a seqwr run,
    // whose blocks are checked if it ran with --validate.
    let run = RunDir::open(dir)?;
    let data = fileset::marked_data(&run, &super::fileset(o)).unwrap_or(Data::Zeros);
    let kept = Kept { size, data };
    // Files changed since fslab made them (a file of the set written to by hand): the run's
    // setup would write the set again.
    let mut spec = super::fileset(o);
    kept.clone().apply(&mut spec);
    if !fileset::marks(&run, &spec) {
        return Err(Error::NotPrepared(format!(
            "the test files in {} are not as fslab left them (their sizes now span {}); run `fslab sysbench \
             fileio --file-num={} --file-total-size={} prepare` again (with the same --dir)",
            dir.display(),
            span(&kept.size),
            o.file_num,
            Bytes(o.total_size)
        )));
    }
    Ok(Some(kept))
}

/// Sizes as a person reads them: `262144 bytes`, or `262144 to 262148 bytes`.
fn span(size: &SizeDist) -> String {
    match (size.min(), size.max()) {
        (lo, hi) if lo == hi => format!("{lo} bytes"),
        (lo, hi) => format!("{lo} to {hi} bytes"),
    }
}

/// Every `test_file.N` of these options in `dir`, each at least sysbench's file size, no more of
/// them, and fslab's marker beside them: their sizes (one, or the range they span); else what is
/// wrong, and how to put it right. sysbench takes files of any size at least that long (it checks
/// each with `fstat()`); fslab keeps only a set it made.
fn prepared(dir: &Path, o: &Options) -> Result<SizeDist, Error> {
    let least = o.file_size();
    let again = format!(
        "run `fslab sysbench fileio --file-num={} --file-total-size={} prepare` first (with the same --dir)",
        o.file_num,
        fslab_engine::Bytes(o.total_size)
    );
    let mut sizes = Vec::with_capacity(o.file_num as usize);
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
            Ok(m) if m.is_file() => sizes.push(m.len()),
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
    Ok(SizeDist::spanning(sizes).unwrap_or(SizeDist::Fixed(Bytes(least))))
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
