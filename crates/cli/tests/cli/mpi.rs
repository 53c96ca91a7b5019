//! fslab under mpirun. A build without the `mpi` feature refuses to run as one of several
//! ranks; a build with it (`cargo test -p fslab --features mpi -- --ignored --test-threads=1
//! mpi`) runs one job across four ranks on this machine and prints one document. One test at a
//! time: concurrent mpiruns race to make Open MPI's session directory and one aborts.

#[cfg(not(feature = "mpi"))]
use crate::common::fslab_in;
use fslab_testkit::tempdir;
use std::path::Path;

/// mpirun's options for four ranks on a 2-CPU machine, as root or not.
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
const MPIRUN: [&str; 2] = ["--oversubscribe", "--allow-run-as-root"];

#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
fn mpirun(np: usize, args: &[&str]) -> fslab_testkit::Run {
    fslab_testkit::require_tool("mpirun", "openmpi-bin");
    let np = np.to_string();
    let mut all: Vec<&str> = MPIRUN.to_vec();
    all.extend(["-np", &np, env!("CARGO_BIN_EXE_fslab")]);
    all.extend(args);
    let mpirun = fslab_testkit::program("mpirun").expect("mpirun");
    fslab_testkit::run_binary(&mpirun, None, &[], &all, std::time::Duration::from_secs(120))
}

#[cfg(not(feature = "mpi"))]
#[test]
fn a_build_without_mpi_refuses_to_run_as_one_of_several_ranks() {
    let dir = tempdir();
    let d = dir.path().display().to_string();
    let run = fslab_in(
        None,
        &[("OMPI_COMM_WORLD_SIZE", Path::new("4"))],
        &["run", "--op", "write", "--size", "64k", "--dir", &d, "--json"],
    );
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(run.stderr.contains("--features mpi"), "{}", run.stderr);
    assert_eq!(run.stdout, "");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "it ran nothing");
    // One rank is a job of one: it runs.
    let run = fslab_in(
        None,
        &[("OMPI_COMM_WORLD_SIZE", Path::new("1"))],
        &["run", "--op", "write", "--size", "64k", "--dir", &d, "--json"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
}

#[cfg(not(feature = "mpi"))]
#[test]
#[ignore = "system tier: needs mpirun (openmpi-bin)"]
fn mpi_a_build_without_mpi_refuses_under_mpirun() {
    let dir = tempdir();
    let d = dir.path().display().to_string();
    let run = mpirun(2, &["run", "--op", "write", "--size", "64k", "--dir", &d, "--json"]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(run.stderr.contains("--features mpi"), "{}", run.stderr);
    assert_eq!(run.stdout, "");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "it ran nothing");
}

/// `mpirun -np 4 fslab run WORKLOAD --dir TMP/target --json`: the temporary directory and the
/// one document printed, which must parse whole.
#[cfg(feature = "mpi")]
fn run_job(workload: &str) -> (tempfile::TempDir, serde_json::Value) {
    let dir = tempdir();
    let file = dir.path().join("workload.toml");
    std::fs::write(&file, workload).unwrap();
    let target = dir.path().join("target");
    std::fs::create_dir(&target).unwrap();
    let (w, t) = (file.display().to_string(), target.display().to_string());
    let run = mpirun(4, &["run", &w, "--dir", &t, "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let doc = serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.stdout));
    (dir, doc)
}

#[cfg(feature = "mpi")]
fn files_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir).map_or(0, |d| {
        d.flatten()
            .map(|e| match e.file_type() {
                Ok(t) if t.is_dir() => files_bytes(&e.path()),
                Ok(t) if t.is_file() && !e.file_name().to_string_lossy().starts_with('.') => {
                    e.metadata().map_or(0, |m| m.len())
                }
                _ => 0,
            })
            .sum()
    })
}

#[cfg(feature = "mpi")]
#[test]
#[ignore = "system tier: needs mpirun and a build with --features mpi"]
fn mpi_four_ranks_run_one_job_and_rank_zero_prints_one_document() {
    // One document: it parses whole, and nothing follows it.
    let (dir, doc) = run_job(fslab_testkit::TWO_WRITERS);
    let target = dir.path().join("target");
    let ranks = doc["ranks"].as_array().expect("ranks");
    assert_eq!(ranks.len(), 4);
    assert_eq!(doc["hosts"].as_array().map(Vec::len), Some(1));
    let totals = &doc["phases"][0]["result"]["totals"];
    let sum = |k: &str| ranks.iter().map(|r| r[k].as_u64().unwrap()).sum::<u64>();
    assert_eq!(totals["ops"].as_u64(), Some(4 * 128));
    assert_eq!(totals["ops"].as_u64(), Some(sum("ops")));
    assert_eq!(totals["bytes_written"].as_u64(), Some(sum("bytes")));
    let mut on_disk = 0;
    for (rank, r) in ranks.iter().enumerate() {
        assert_eq!(r["rank"].as_u64(), Some(rank as u64));
        let mine = files_bytes(&target.join(format!("rank.{rank}")));
        assert_eq!(mine, 512 << 10, "rank.{rank} holds its two files");
        on_disk += mine;
    }
    assert_eq!(totals["bytes_written"].as_u64(), Some(on_disk));
    // The ranks leave the start barrier together: how far apart, as each saw it. A loose bound
    // (what was measured is in the report); without the barrier the gap would be the launch's.
    let spread = ranks
        .iter()
        .map(|r| r["start_offset_s"].as_f64().unwrap())
        .fold(0.0, f64::max);
    eprintln!("start spread of 4 ranks: {:.6} s", spread);
    assert!(spread < 1.0, "the ranks started {spread} s apart");
}

#[cfg(feature = "mpi")]
#[test]
#[ignore = "system tier: needs mpirun and a build with --features mpi"]
fn mpi_sysbench_prints_one_report_for_the_whole_job() {
    let dir = tempdir();
    let d = dir.path().display().to_string();
    let common = [
        "sysbench",
        "fileio",
        "--file-num=2",
        "--file-total-size=256K",
        "--file-test-mode=seqwr",
        "--dir",
        &d,
    ];
    let prepare = mpirun(4, &[&common[..], &["prepare"]].concat());
    assert_eq!(prepare.code, 0, "{}", prepare.stderr);
    let run = mpirun(4, &[&common[..], &["--time=0", "--events=40", "run"]].concat());
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout.matches("File operations").count(), 1, "{}", run.stdout);
    for rank in 0..4 {
        assert_eq!(files_bytes(&dir.path().join(format!("rank.{rank}"))), 256 << 10);
    }
}

/// A short stream over one file whose size each rank draws from its own seed (the workload's
/// seed plus its rank: 197, 960, 988 and 976 blocks of 4k for ranks 0 to 3 with rand 0.10), and
/// a long one that never ends by itself, both at 500 reads a second.
#[cfg(feature = "mpi")]
const STONEWALL: &str = r#"
name = "stonewall"
seed = 14

[stop]
stonewall = true

[[fileset]]
name = "short"
files = 1
dirs = 0
size = { min = "400k", max = "4m" }

[[fileset]]
name = "long"
files = 1
dirs = 0
size = "1m"

[[group]]
name = "short"
fileset = "short"
rate = { ops = 500 }

[[group.op]]
op = "seqread"
scope = "own"
bs = "4k"

[[group]]
name = "long"
fileset = "long"
rate = { ops = 500 }

[[group.op]]
op = "seqread"
scope = "own"
bs = "4k"
wrap = true
"#;

#[cfg(feature = "mpi")]
#[test]
#[ignore = "system tier: needs mpirun and a build with --features mpi"]
fn mpi_the_first_rank_to_finish_stops_every_rank() {
    let (dir, doc) = run_job(STONEWALL);
    let target = dir.path().join("target");
    let result = &doc["phases"][0]["result"];
    assert_eq!(result["stopped_by"], "stonewall");
    let short: Vec<&serde_json::Value> = result["threads"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["group"] == "short")
        .collect();
    // Each rank's short file, as it lies on disk: the smallest ends first; a rank whose file
    // has 100 blocks more (0.2 s more at 500 reads a second) was stopped before its end.
    let blocks: Vec<u64> = (0..4)
        .map(|rank| {
            let f = target.join(format!("rank.{rank}/short/f0"));
            std::fs::metadata(&f)
                .unwrap_or_else(|e| panic!("{}: {e}", f.display()))
                .len()
                .div_ceil(4096)
        })
        .collect();
    let first = (0..4).min_by_key(|&r| blocks[r]).unwrap();
    assert_eq!(
        short[first]["finished"], true,
        "rank {first} read its {} blocks: {short:?}",
        blocks[first]
    );
    let far: Vec<usize> = (0..4).filter(|&r| blocks[r] >= blocks[first] + 100).collect();
    assert!(far.len() >= 2, "the seeds drew files too close to tell: {blocks:?}");
    for r in far {
        assert_eq!(
            short[r]["finished"], false,
            "rank {r} ({} blocks) was stopped: {short:?}",
            blocks[r]
        );
        assert!(short[r]["ops"].as_u64().unwrap() < blocks[r], "{short:?}");
    }
    let ends: Vec<f64> = doc["ranks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["start_offset_s"].as_f64().unwrap() + r["duration_s"].as_f64().unwrap())
        .collect();
    let spread = ends.iter().cloned().fold(0.0, f64::max) - ends.iter().cloned().fold(f64::INFINITY, f64::min);
    eprintln!("the ranks stopped within {:.1} ms of one another", spread * 1000.0);
}

#[cfg(feature = "mpi")]
#[test]
#[ignore = "system tier: needs root (tmpfs), mpirun and a build with --features mpi"]
fn mpi_a_study_with_a_ranks_axis_stores_one_run_per_cell_and_repeat() {
    fslab_testkit::require_root();
    fslab_testkit::require_tool("mpirun", "openmpi-bin");
    let lab = crate::lab::Lab::new(
        r#"
name = "ranks"
drop_caches = false
fresh = "cell"
repeat = 2

[[filesystem]]
type = "tmpfs"
mount = "size=64m"

[[workload]]
name = "writes"
run = { file = "writes.toml" }
mpi = { ranks = [1, 2, 4] }
"#,
    );
    std::fs::write(
        lab.study_file().with_file_name("writes.toml"),
        fslab_testkit::TWO_WRITERS,
    )
    .unwrap();
    let run = lab.run_study(&[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let store = lab.store();
    let cells = store.cells(1).unwrap();
    let labels: Vec<&str> = cells.iter().map(|c| c.spec.label.as_str()).collect();
    assert_eq!(
        labels,
        ["tmpfs writes ranks=1", "tmpfs writes ranks=2", "tmpfs writes ranks=4"]
    );
    let runs = store.runs(1).unwrap();
    for (cell, ranks) in cells.iter().zip([1u64, 2, 4]) {
        let mine: Vec<_> = runs.iter().filter(|r| r.cell_id == cell.id).collect();
        assert_eq!(mine.len(), 2, "one run per repeat");
        for r in mine {
            assert_eq!(r.environment["ranks"].as_u64(), Some(ranks));
            let results = store.result(r.id).unwrap();
            assert_eq!(results[0].1.totals.ops, ranks * 128, "each rank wrote its 128 blocks");
        }
    }
}

/// A study on `[device] dir` with a hostfile: the job's ranks write beneath the cell's directory
/// in the named one (the same path on every host the hostfile names; here, this one), which the
/// lab removes after, leaving what was there.
#[cfg(feature = "mpi")]
#[test]
#[ignore = "system tier: needs root (tmpfs), mpirun and a build with --features mpi"]
fn mpi_a_study_on_a_dir_target_runs_its_ranks_beneath_the_cell_s_directory() {
    fslab_testkit::require_tool("mpirun", "openmpi-bin");
    let shared = fslab_testkit::Tmpfs::mount("64m");
    std::fs::write(shared.path().join("sentinel"), "theirs").unwrap();
    let lab = crate::lab::Lab::new(&format!(
        r#"
name = "shared"
drop_caches = false
repeat = 2

[device]
dir = "{}"

[[filesystem]]
type = "tmpfs"

[[workload]]
name = "writes"
run = {{ file = "writes.toml" }}
mpi = {{ ranks = 2, hostfile = "hosts" }}
"#,
        shared.path().display()
    ));
    std::fs::write(
        lab.study_file().with_file_name("writes.toml"),
        fslab_testkit::TWO_WRITERS,
    )
    .unwrap();
    std::fs::write(lab.study_file().with_file_name("hosts"), "localhost slots=4\n").unwrap();
    let run = lab.run_study(&[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let store = lab.store();
    let runs = store.runs(1).unwrap();
    assert_eq!(runs.len(), 2);
    let cell_dir = shared.path().join(format!("fslab-shared-{}", runs[0].cell_id));
    for r in &runs {
        assert_eq!(r.environment["ranks"].as_u64(), Some(2));
        assert_eq!(r.environment["mounted_type"], "tmpfs");
        let command = r.environment["command"].as_str().unwrap();
        assert!(command.contains(" --hostfile "), "{command}");
        assert!(
            command.contains(&format!(" --dir {} ", cell_dir.display())),
            "{command}"
        );
        let results = store.result(r.id).unwrap();
        assert_eq!(results[0].1.totals.ops, 2 * 128, "each rank wrote its 128 blocks");
    }
    assert_eq!(fslab_testkit::entries(shared.path()), ["sentinel"]);
}

#[cfg(feature = "mpi")]
#[test]
#[ignore = "system tier: needs mpirun and a build with --features mpi"]
fn mpi_ior_and_mdtest_run_as_four_tasks() {
    let dir = tempdir();
    let d = dir.path().display().to_string();
    let ior = mpirun(
        4,
        &[
            "ior", "-w", "-r", "-k", "-t", "64k", "-b", "1m", "-o", "testfile", "--dir", &d,
        ],
    );
    assert_eq!(ior.code, 0, "{}", ior.stderr);
    assert!(ior.stdout.contains("tasks               : 4"), "{}", ior.stdout);
    assert_eq!(ior.stdout.matches("Summary of all tests:").count(), 1, "{}", ior.stdout);
    // One shared file of four ranks' 1 MiB blocks, kept (-k).
    assert_eq!(
        std::fs::metadata(dir.path().join("testfile")).map(|m| m.len()).ok(),
        Some(4 << 20)
    );
    let md = mpirun(4, &["mdtest", "-n", "100", "-d", "out", "--dir", &d]);
    assert_eq!(md.code, 0, "{}", md.stderr);
    assert!(md.stdout.contains("4 tasks, 400 files/directories"), "{}", md.stdout);
    assert_eq!(md.stdout.matches("SUMMARY rate").count(), 1, "{}", md.stdout);
}
