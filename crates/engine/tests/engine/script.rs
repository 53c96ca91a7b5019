//! Scripts (what dbench loadfiles compile to) replayed for real: the base directory itself as
//! `.`, name look-ups inside the calls, the EISDIR retry of an open, fcntl byte-range locks, and
//! what validation refuses.

use crate::common::{run_ok, workload};
use fslab_engine::result::{RunResult, StepResult};
use fslab_engine::script::{Call, Replayer, Resolve, Script};
use rustix::fs::{Mode, OFlags};
use std::os::fd::AsRawFd;
use std::path::Path;

/// A script of one thread in `c{thread}`, one label per step, stopped after one pass; `steps` is
/// TOML for its steps, each `[[group.script.step]]` without its label (added here, in order).
fn one_pass(steps: &[&str]) -> String {
    let labels: Vec<String> = (0..steps.len()).map(|i| format!("\"s{i}\"")).collect();
    let mut text = format!(
        "name = \"script\"\n[stop]\nops = {}\n\n[[group]]\nname = \"g\"\n\n[group.script]\nbase = \
         \"c{{thread}}\"\nlabels = [{}]\n",
        steps.len(),
        labels.join(", ")
    );
    for (i, step) in steps.iter().enumerate() {
        text.push_str(&format!("\n[[group.script.step]]\nlabel = {i}\n{step}\n"));
    }
    text
}

fn step(r: &RunResult, i: usize) -> &StepResult {
    let name = format!("s{i}");
    r.steps
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no step {name}"))
}

/// The names in `dir`, sorted.
fn all_entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// The names in `dir` but the marker fslab leaves in a script's base directory.
fn entries(dir: &Path) -> Vec<String> {
    all_entries(dir).into_iter().filter(|n| n != MARKER).collect()
}

/// What says a base directory is fslab's (the engine's run.rs).
const MARKER: &str = ".fslab-script";

#[test]
fn the_base_directory_is_dot_and_look_ups_never_fail_a_call() {
    let steps = [
        // The base exists: its mkdir fails (dbench's Mkdir of an existing directory).
        "call = \"mkdir\"\npath = \".\"\nresolve = \"any_case\"\nexpect = \"fail\"",
        "call = \"open\"\npath = \".\"\nhandle = 1\ndirectory = true\nresolve = \"any_case\"",
        "call = \"close\"\nhandle = 1",
        "call = \"stat\"\npath = \".\"",
        "call = \"mkdir\"\npath = \"d\"\nresolve = \"any_case\"",
        // The look-up of a name that does not exist yet fails; the open creates it all the same.
        "call = \"open\"\npath = \"d/File.txt\"\nhandle = 2\ncreate = true\nresolve = \"any_case\"",
        "call = \"write\"\nhandle = 2\noffset = 0\nlen = 100",
        "call = \"lock\"\nhandle = 2\noffset = 10\nlen = 5",
        "call = \"unlock\"\nhandle = 2\noffset = 10\nlen = 5",
        "call = \"close\"\nhandle = 2",
        // Found in another case only by the any-case look-up.
        "call = \"stat\"\npath = \"d/FILE.TXT\"\nresolve = \"any_case\"",
        "call = \"stat\"\npath = \"d/FILE.TXT\"\nresolve = \"stat\"\nexpect = \"fail\"",
        // A directory opened as a file: EISDIR, then opened as a directory, as dbench does.
        "call = \"open\"\npath = \"d\"\nhandle = 3\ncreate = true\nresolve = \"stat\"",
        "call = \"fstat\"\nhandle = 3",
        "call = \"close\"\nhandle = 3",
        "call = \"list\"\npath = \".\"\nmax = 10\npattern = \"*\"\nresolve = \"any_case\"",
        "call = \"list\"\npath = \"d\"\nmax = 10\npattern = \"<.JNK\"\nresolve = \"stat\"",
        "call = \"rename\"\nfrom = \"d/File.txt\"\nto = \"d/g.txt\"\nresolve = \"any_case\"",
        "call = \"open\"\npath = \"top.txt\"\nhandle = 4\ncreate = true",
        "call = \"close\"\nhandle = 4",
        "call = \"rmdir\"\npath = \"missing\"\nresolve = \"any_case\"\nexpect = \"fail\"",
        "call = \"unlink\"\npath = \"nodir/x\"\nresolve = \"any_case\"\nexpect = \"fail\"",
    ];
    let text = one_pass(&steps);
    let w = workload(&text);
    let run_dir = tempfile::tempdir().unwrap();
    let r = run_ok(&w, run_dir.path());
    for (i, text) in steps.iter().enumerate() {
        let s = step(&r, i);
        assert_eq!((s.count, s.mismatches, s.errors), (1, 0, 0), "step {i}: {text}");
    }
    let base = run_dir.path().join("c0");
    assert_eq!(entries(&base), vec!["d", "top.txt"]);
    assert_eq!(entries(&base.join("d")), vec!["g.txt"]);
    assert_eq!(std::fs::metadata(base.join("d/g.txt")).unwrap().len(), 100);

    // Emptying `.`: every file beneath the base goes, the directories and fslab's marker stay.
    let text = one_pass(&[
        "call = \"mkdir\"\npath = \"d\"",
        "call = \"open\"\npath = \"d/a\"\nhandle = 1\ncreate = true",
        "call = \"close\"\nhandle = 1",
        "call = \"open\"\npath = \"b\"\nhandle = 1\ncreate = true",
        "call = \"close\"\nhandle = 1",
        "call = \"delete_files\"\npath = \".\"",
    ]);
    let run_dir = tempfile::tempdir().unwrap();
    run_ok(&workload(&text), run_dir.path());
    let base = run_dir.path().join("c0");
    assert_eq!(all_entries(&base), vec![MARKER, "d"]);
    assert_eq!(all_entries(&base.join("d")), Vec::<String>::new());
}

#[test]
fn the_new_fields_survive_toml_both_ways() {
    let text = one_pass(&[
        "call = \"open\"\npath = \"f\"\nhandle = 1\ncreate = true\nresolve = \"any_case\"",
        "call = \"lock\"\nhandle = 1\noffset = 2147483538\nlen = 1",
        "call = \"list\"\npath = \".\"\nmax = 3\npattern = \"*\"\nresolve = \"stat\"",
    ]);
    let w = workload(&text);
    let s = w.groups[0].script.as_ref().unwrap();
    assert_eq!(
        s.steps.iter().map(|s| s.call.clone()).collect::<Vec<_>>(),
        vec![
            Call::Open {
                path: "f".into(),
                handle: 1,
                create: true,
                truncate: false,
                directory: false,
                resolve: Resolve::AnyCase
            },
            Call::Lock {
                handle: 1,
                offset: 2_147_483_538,
                len: 1
            },
            Call::List {
                path: ".".into(),
                max: 3,
                pattern: Some("*".into()),
                resolve: Resolve::Stat
            },
        ]
    );
    let again = workload(&w.to_toml());
    assert_eq!(again.groups[0].script, w.groups[0].script);
    assert!(w.to_toml().contains("resolve = \"any_case\""), "{}", w.to_toml());
}

#[test]
fn validation_refuses_removing_the_base_and_lists_without_a_pattern() {
    let cases = [
        ("call = \"unlink\"\npath = \".\"", "not removed or renamed"),
        ("call = \"rmdir\"\npath = \".\"", "not removed or renamed"),
        ("call = \"rename\"\nfrom = \"a\"\nto = \".\"", "not removed or renamed"),
        ("call = \"stat\"\npath = \"./a\"", "`.` is not allowed"),
        ("call = \"stat\"\npath = \"a/../..\"", "`..`"),
        (
            "call = \"list\"\npath = \".\"\nmax = 1\nresolve = \"stat\"",
            "needs the `pattern`",
        ),
        (
            "call = \"list\"\npath = \".\"\nmax = 1\npattern = \"a/b\"",
            "must be one name",
        ),
    ];
    for (step, want) in cases {
        let text = one_pass(&["call = \"statfs\"", step]);
        let e = fslab_engine::Workload::from_toml(&text, "t.toml")
            .err()
            .unwrap_or_else(|| panic!("accepted: {step}"))
            .to_string();
        assert!(e.contains("step 2") && e.contains(want), "{step}: {e}");
    }
}

/// Tries a write lock of `len` bytes at `start` on `file`, without waiting, as an open file
/// description lock (what another client's handle would hold): the error, if any.
fn try_lock(file: &std::fs::File, start: i64, len: i64) -> Option<i32> {
    // SAFETY: flock is a plain C struct; all zeroes is valid.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = libc::F_WRLCK as libc::c_short;
    fl.l_whence = libc::SEEK_SET as libc::c_short;
    fl.l_start = start;
    fl.l_len = len;
    // SAFETY: the descriptor is open and `fl` outlives the call.
    let rc = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_OFD_SETLK, &fl) };
    if rc == -1 {
        return std::io::Error::last_os_error().raw_os_error();
    }
    fl.l_type = libc::F_UNLCK as libc::c_short;
    // SAFETY: as above.
    unsafe { libc::fcntl(file.as_raw_fd(), libc::F_OFD_SETLK, &fl) };
    None
}

/// A script to hand a [`Replayer`] (which only reads its options).
fn any_script() -> Script {
    workload(&one_pass(&["call = \"statfs\""])).groups[0]
        .script
        .clone()
        .unwrap()
}

/// A replayer whose base directory is `dir`, for calls made one at a time.
fn replayer<'s>(script: &'s Script, dir: &Path) -> Replayer<'s> {
    let base = rustix::fs::open(dir, OFlags::DIRECTORY | OFlags::RDONLY, Mode::empty()).unwrap();
    Replayer::new(script, base, OFlags::empty())
}

#[test]
fn lock_and_unlock_are_fcntl_byte_range_locks_of_the_handle() {
    let dir = tempfile::tempdir().unwrap();
    let script = any_script();
    let mut replay = replayer(&script, dir.path());
    replay
        .call(&Call::Open {
            path: "f".into(),
            handle: 7,
            create: true,
            truncate: false,
            directory: false,
            resolve: Resolve::No,
        })
        .unwrap();
    replay
        .call(&Call::Lock {
            handle: 7,
            offset: 100,
            len: 20,
        })
        .unwrap();
    let other = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(dir.path().join("f"))
        .unwrap();
    assert_eq!(try_lock(&other, 110, 1), Some(libc::EAGAIN), "the range is locked");
    assert_eq!(try_lock(&other, 100, 20), Some(libc::EAGAIN));
    assert_eq!(try_lock(&other, 0, 100), None, "bytes before the range are free");
    assert_eq!(try_lock(&other, 120, 10), None, "bytes after the range are free");
    replay
        .call(&Call::Unlock {
            handle: 7,
            offset: 100,
            len: 20,
        })
        .unwrap();
    assert_eq!(try_lock(&other, 100, 20), None, "unlocked");
    // A lock of a handle that is not open is an error, as dbench's unknown handle is.
    let e = replay
        .call(&Call::Lock {
            handle: 8,
            offset: 0,
            len: 1,
        })
        .unwrap_err();
    assert!(e.to_string().contains("handle 8 is not open"), "{e}");
}

#[test]
fn an_open_that_says_eisdir_opens_the_directory() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("d")).unwrap();
    let script = any_script();
    let mut replay = replayer(&script, dir.path());
    for (create, truncate) in [(false, false), (true, false), (true, true)] {
        replay
            .call(&Call::Open {
                path: "d".into(),
                handle: 1,
                create,
                truncate,
                directory: false,
                resolve: Resolve::AnyCase,
            })
            .unwrap_or_else(|e| panic!("create {create} truncate {truncate}: {e}"));
        // open(O_RDWR) of a directory always fails with EISDIR: the handle is the directory's.
        replay.call(&Call::Fstat { handle: 1 }).unwrap();
        replay.call(&Call::Close { handle: 1 }).unwrap();
    }
    assert!(dir.path().join("d").is_dir());
    // A missing path is still an error.
    let e = replay
        .call(&Call::Open {
            path: "nothere".into(),
            handle: 2,
            create: false,
            truncate: false,
            directory: false,
            resolve: Resolve::AnyCase,
        })
        .unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::ENOENT), "{e}");
}
