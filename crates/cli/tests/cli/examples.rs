//! The examples built into the binary: `fslab run NAME` and `fslab study run NAME` from a
//! directory that has none of the repository's files, and `fslab examples DIR`.

use crate::common::{fslab_in, s};
use fslab_testkit::tempdir;
use std::path::Path;

/// The repository's own copy of an example.
fn repository(name: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(name)).unwrap()
}

#[test]
fn a_bare_name_runs_the_built_in_example_from_any_directory() {
    let cwd = tempdir();
    let data = tempdir();
    let env = [("XDG_DATA_HOME", data.path())];
    let run = fslab_in(Some(cwd.path()), &env, &["run", "fileserver", "--explain"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.starts_with("name = \"fileserver\"\n"), "{}", run.stdout);
    let written = data.path().join("fslab/examples/workloads/fileserver.toml");
    assert!(
        run.stderr.contains("built-in example workloads/fileserver.toml") && run.stderr.contains(s(&written)),
        "{}",
        run.stderr
    );
    assert_eq!(
        std::fs::read_to_string(&written).unwrap(),
        repository("workloads/fileserver.toml")
    );

    // A file of that name wins, and fslab says it took it.
    std::fs::write(
        cwd.path().join("fileserver"),
        "name = \"mine\"\n[stop]\nops = 1\n[[fileset]]\nname = \"f\"\nfiles = 1\nsize = \"4k\"\n\
         [[group]]\nname = \"g\"\nfileset = \"f\"\n[[group.op]]\nop = \"read\"\nbs = \"4k\"\n",
    )
    .unwrap();
    let run = fslab_in(Some(cwd.path()), &env, &["run", "fileserver", "--explain"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.starts_with("name = \"mine\"\n"), "{}", run.stdout);
    assert!(
        run.stderr
            .contains("running the file fileserver, not the built-in example"),
        "{}",
        run.stderr
    );

    // A study, with the workload file it names beside it: the preflight reads both.
    let db = data.path().join("results.db");
    let run = fslab_in(
        Some(cwd.path()),
        &env,
        &["study", "run", "quick", "--dry-run", "--db", s(&db)],
    );
    assert!(matches!(run.code, 0 | 3), "code {}: {}", run.code, run.stderr);
    assert!(
        run.stdout.starts_with("study `quick` (full form): 12 cells"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("ext4 fileserver"), "{}", run.stdout);
    assert!(
        run.stderr.contains("built-in example studies/quick.toml"),
        "{}",
        run.stderr
    );
    // A name that is no example is a missing file, as before.
    let run = fslab_in(Some(cwd.path()), &env, &["study", "run", "nosuch", "--dry-run"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
}

#[test]
fn examples_writes_them_out_and_overwrites_only_when_forced() {
    let dir = tempdir();
    let out = dir.path().join("mine");
    let run = fslab_in(None, &[], &["examples", s(&out)]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let listed: Vec<&str> = run.stdout.lines().collect();
    assert!(listed.len() >= 13, "{listed:?}");
    for name in [
        "studies/quick.toml",
        "workloads/fileserver.toml",
        "profiles/smallfile.ffsb",
    ] {
        let path = out.join(name);
        assert!(listed.contains(&s(&path)), "{name} not in {listed:?}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), repository(name));
    }
    // The study written out runs from there: its workload path leads to the file beside it.
    let run = fslab_in(
        None,
        &[],
        &["study", "run", s(&out.join("studies/quick.toml")), "--dry-run"],
    );
    assert!(matches!(run.code, 0 | 3), "code {}: {}", run.code, run.stderr);

    // An edited file is not overwritten without --force, and nothing else is written either.
    let edited = out.join("studies/quick.toml");
    std::fs::write(&edited, "# mine\n").unwrap();
    std::fs::remove_file(out.join("workloads/metadata.toml")).unwrap();
    let run = fslab_in(None, &[], &["examples", s(&out)]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("--force") && run.stderr.contains(s(&edited)),
        "{}",
        run.stderr
    );
    assert_eq!(std::fs::read_to_string(&edited).unwrap(), "# mine\n");
    assert!(!out.join("workloads/metadata.toml").exists());
    let run = fslab_in(None, &[], &["examples", s(&out), "--force"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        std::fs::read_to_string(&edited).unwrap(),
        repository("studies/quick.toml")
    );
    assert!(out.join("workloads/metadata.toml").exists());
}
