//! `fslab ior` end to end through the library, alone and as jobs of 4 ranks (threads): the files
//! and their bytes (shared, segment-major; one per rank with -F), -C's read-back of another
//! rank's data, the table and summary lines, CSV and JSON, and options refused by name.

use super::hpc::{job, job_with, names, ok, Hosts};
use fslab_classic::{ErrorKind, Outcome, Tool};
use serde_json::Value;
use std::path::Path;

const KIB: u64 = 1024;

fn run(args: &str, dir: &Path, n: usize) -> Vec<Outcome> {
    ok(Tool::Ior, args, dir, n, Hosts::One)
}

/// Rank 0's phases of repetition `rep` ("write"/"read"), from its figures.
fn point(o: &Outcome, rep: usize, access: &str) -> Value {
    o.figures.as_ref().unwrap()["run"]["reps"][rep][access].clone()
}

/// The rank (upper half of IOR's pattern word) that wrote the 8 bytes at `offset` of `file`.
fn writer(file: &[u8], offset: u64) -> u64 {
    let w = u64::from_le_bytes(file[offset as usize..offset as usize + 8].try_into().unwrap());
    w >> 32
}

#[test]
fn one_rank_writes_and_reads_a_shared_file_and_prints_ior_s_table_and_summary() {
    let tmp = tempfile::tempdir().unwrap();
    let outs = run("-w -r -k -t 64k -b 256k -s 3 -i 2 -o tf", tmp.path(), 1);
    let o = &outs[0];
    let data = std::fs::read(tmp.path().join("tf")).unwrap();
    assert_eq!(data.len() as u64, 3 * 256 * KIB, "segments × block");
    let t = &o.report;
    assert!(
        t.starts_with("IOR-4.0.0: MPI Coordinated Test of Parallel I/O\n"),
        "{t}"
    );
    for line in [
        "access              : single-shared-file",
        "segments            : 3",
        "tasks               : 1",
        "xfersize            : 65536 bytes",
        "blocksize           : 262144 bytes",
        "aggregate filesize  : 786432 bytes",
        "repetitions         : 2",
    ] {
        assert!(t.contains(line), "no `{line}` in\n{t}");
    }
    let rows: Vec<&str> = t
        .lines()
        .filter(|l| l.starts_with("write ") || l.starts_with("read "))
        .collect();
    assert_eq!(
        rows.len(),
        2 * 2 + 2,
        "two per repetition, one each in the summary:\n{t}"
    );
    let table: Vec<&str> = rows
        .iter()
        .filter(|l| l.trim_end().ends_with(['0', '1']) && l.contains("1024.00"))
        .copied()
        .collect();
    assert!(table.is_empty(), "block is 256 KiB: {table:?}");
    assert!(rows[0].contains("256.00     64.00"), "{}", rows[0]);
    assert!(t.contains("\nSummary of all tests:\nOperation   Max(MiB)"), "{t}");
    let summary_write = rows
        .iter()
        .find(|l| l.starts_with("write  ") && l.contains("POSIX"))
        .unwrap();
    assert!(
        summary_write.contains("      3   262144    65536       0.8 POSIX      0"),
        "{summary_write}"
    );
    assert!(t
        .trim_end()
        .lines()
        .last()
        .unwrap()
        .starts_with("Finished            : "));
    assert!(!t.contains("Max Write"), "without -v IOR 4.0 prints no Max Write");
    for rep in 0..2 {
        assert_eq!(point(o, rep, "write")["bytes"], 3 * 256 * KIB);
        assert_eq!(point(o, rep, "read")["bytes"], 3 * 256 * KIB);
        assert_eq!(point(o, rep, "write")["mine"]["transfers"], 12);
    }
    let names: Vec<&str> = o.metrics.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names[..2], ["Max Write", "Mean Write"]);
    assert!(o.metrics[0].headline);
}

#[test]
fn four_ranks_share_one_file_segment_major_and_only_rank_0_prints() {
    let tmp = tempfile::tempdir().unwrap();
    let outs = run("-w -k -t 4k -b 16k -s 2 -o shared", tmp.path(), 4);
    assert_eq!(names(tmp.path()), ["shared"]);
    let data = std::fs::read(tmp.path().join("shared")).unwrap();
    assert_eq!(data.len() as u64, 4 * 2 * 16 * KIB, "ranks × segments × block");
    // Segment i holds one block per rank in rank order.
    for seg in 0..2u64 {
        for rank in 0..4u64 {
            let block = (seg * 4 + rank) * 16 * KIB;
            for off in (block..block + 16 * KIB).step_by(4096) {
                assert_eq!(writer(&data, off), rank, "segment {seg}, offset {off}");
            }
        }
    }
    assert!(outs[0].report.contains("tasks               : 4"), "{}", outs[0].report);
    assert!(outs[0].report.contains("clients per node    : 4"));
    for (r, o) in outs.iter().enumerate() {
        assert_eq!(o.report.is_empty(), r != 0, "rank {r} prints: {}", o.report);
        let w = point(o, 0, "write");
        assert_eq!(w["bytes"], 4 * 2 * 16 * KIB, "every rank knows the job's bytes");
        assert_eq!(w["mine"]["bytes"], 2 * 16 * KIB);
        assert_eq!(w["mine"]["first_offset"], r as u64 * 16 * KIB);
    }
}

#[test]
fn file_per_process_makes_one_file_per_rank_and_removes_them_without_k() {
    let tmp = tempfile::tempdir().unwrap();
    run("-w -k -F -t 4k -b 8k -s 3 -o fpp", tmp.path(), 4);
    assert_eq!(
        names(tmp.path()),
        ["fpp.00000000", "fpp.00000001", "fpp.00000002", "fpp.00000003"]
    );
    for r in 0..4u64 {
        let data = std::fs::read(tmp.path().join(format!("fpp.{r:08}"))).unwrap();
        assert_eq!(data.len() as u64, 3 * 8 * KIB, "segments × block");
        assert!(
            (0..data.len() as u64).step_by(8).all(|o| writer(&data, o) == r),
            "file {r}"
        );
    }
    let tmp = tempfile::tempdir().unwrap();
    let outs = run("-F -t 4k -b 8k -o fpp", tmp.path(), 4);
    assert!(names(tmp.path()).is_empty(), "{:?}", names(tmp.path()));
    assert_eq!(point(&outs[0], 0, "read")["bytes"], 4 * 8 * KIB);
}

#[test]
fn reordered_tasks_read_the_next_node_s_data_and_on_one_node_their_own_as_ior() {
    for fpp in [true, false] {
        let tmp = tempfile::tempdir().unwrap();
        let args = format!("-C {} -t 4k -b 16k -s 2 -o f", if fpp { "-F" } else { "" });
        let outs = ok(Tool::Ior, &args, tmp.path(), 4, Hosts::Each);
        for (r, o) in outs.iter().enumerate() {
            let w = &point(o, 0, "write")["mine"];
            let rd = &point(o, 0, "read")["mine"];
            let other = (r + 1) % 4;
            assert_eq!(w["pretend_rank"], r as u64);
            assert_eq!(rd["pretend_rank"], other as u64, "rank {r} reads rank {other}'s data");
            if fpp {
                assert!(rd["file"].as_str().unwrap().ends_with(&format!("f.{other:08}")), "{rd}");
            } else {
                assert_eq!(rd["first_offset"], other as u64 * 16 * KIB, "{rd}");
            }
            assert_eq!(rd["bytes"], 2 * 16 * KIB);
        }
        assert!(
            outs[0].report.contains(
                "ordering inter file : constant task offset\ntask offset         : 1\nnodes               : 4"
            ),
            "{}",
            outs[0].report
        );
        // On one host IOR 4.0's -C moves by the tasks on node 0: each rank reads its own.
        let outs = ok(Tool::Ior, &args, tmp.path(), 4, Hosts::One);
        for (r, o) in outs.iter().enumerate() {
            assert_eq!(point(o, 0, "read")["mine"]["pretend_rank"], r as u64);
        }
    }
}

#[test]
fn random_offsets_cover_a_shared_file_once_over_all_ranks() {
    let tmp = tempfile::tempdir().unwrap();
    let outs = run("-w -k -z -t 4k -b 32k -s 2 -o rnd", tmp.path(), 4);
    let data = std::fs::read(tmp.path().join("rnd")).unwrap();
    assert_eq!(data.len() as u64, 4 * 2 * 32 * KIB);
    let moved: u64 = outs
        .iter()
        .map(|o| point(o, 0, "write")["mine"]["bytes"].as_u64().unwrap())
        .sum();
    assert_eq!(moved, 4 * 2 * 32 * KIB, "each transfer is one rank's");
    assert!(
        (0..data.len() as u64)
            .step_by(4096)
            .all(|o| data[o as usize..o as usize + 8] != [0; 8]),
        "no hole"
    );
    assert!(outs[0].report.contains("ordering in a file  : random"));
}

#[test]
fn mmap_truncates_to_the_aggregate_size_and_fsync_is_msync() {
    let tmp = tempfile::tempdir().unwrap();
    let outs = run("-a MMAP -e -k -t 4k -b 16k -s 2 -o m", tmp.path(), 2);
    assert_eq!(std::fs::metadata(tmp.path().join("m")).unwrap().len(), 2 * 2 * 16 * KIB);
    assert!(outs[0].report.contains("api                 : MMAP"));
    assert!(outs[0]
        .report
        .starts_with("WARNING: assuming POSIX-based backend for MMAP statfs call\n"));
    assert_eq!(point(&outs[1], 0, "read")["bytes"], 2 * 2 * 16 * KIB);
}

#[test]
fn csv_and_json_summaries_carry_ior_s_columns_and_keys() {
    let tmp = tempfile::tempdir().unwrap();
    let o = &run("-t 4k -b 16k -i 2 -O summaryFormat=CSV", tmp.path(), 1)[0];
    let lines: Vec<&str> = o.report.lines().collect();
    assert_eq!(
        lines[0],
        "access,bw(MiB/s),IOPS,Latency,block(KiB),xfer(KiB),open(s),wr/rd(s),close(s),total(s),numTasks,iter"
    );
    assert_eq!(lines.len(), 5, "{}", o.report);
    assert!(lines[1].starts_with("write,"), "{}", lines[1]);
    assert!(
        lines[1].contains(",16.0000,4.0000,") && lines[1].ends_with(",1,0"),
        "{}",
        lines[1]
    );
    assert!(
        lines[4].starts_with("read,") && lines[4].ends_with(",1,1"),
        "{}",
        lines[4]
    );
    let o = &run("-t 4k -b 16k -i 2 -O summaryFormat=JSON", tmp.path(), 2)[0];
    let v: Value = serde_json::from_str(&o.report).unwrap_or_else(|e| panic!("{e}: {}", o.report));
    assert_eq!(v["Version"], "4.0.0");
    assert_eq!(v["tests"][0]["Results"].as_array().unwrap().len(), 4);
    assert_eq!(v["tests"][0]["Options"]["tasks"], 2);
    assert_eq!(v["summary"][0]["operation"], "write");
    assert_eq!(
        v["summary"][1]["xsizeMiB"].as_f64(),
        Some(0.0312),
        "IOR's %.4f of 32 KiB"
    );
}

#[test]
fn verbose_prints_max_write_and_read_and_the_remove_line() {
    let tmp = tempfile::tempdir().unwrap();
    let t = &run("-v -t 4k -b 16k", tmp.path(), 1)[0].report;
    assert!(t.contains("Participating tasks : 1"), "{t}");
    assert!(t.contains("\nCommencing write performance test: "));
    assert!(t.contains("\nremove    -          -   "), "{t}");
    let max = t.lines().find(|l| l.starts_with("Max Write: ")).unwrap();
    assert!(max.ends_with(" MB/sec)"), "{max}");
    assert!(t.contains("\nMax Read:  "));
}

#[test]
fn bad_options_are_refused_naming_the_option() {
    let tmp = tempfile::tempdir().unwrap();
    for (args, needle) in [
        ("-t 3k -b 8k", "-b/-t"),
        ("-q", "unknown option -q"),
        ("-a HDF5", "-a HDF5"),
        ("-o ../escape", "-o ../escape"),
        ("-o /elsewhere/f", "-o /elsewhere/f"),
    ] {
        let r = job(Tool::Ior, args, tmp.path(), 1, Hosts::One);
        let e = r[0].as_ref().unwrap_err();
        assert!(e.contains(needle), "{args}: {e}");
    }
    let words: Vec<String> = ["-s", "x"].iter().map(|s| s.to_string()).collect();
    let e = Tool::Ior.parse(&words).err().unwrap();
    assert_eq!(e.kind, ErrorKind::Input);
}

#[test]
fn explain_names_the_calls_of_each_phase() {
    let words: Vec<String> = "-F -e -t 4k -b 16k -s 2 -o tf --dir /tmp"
        .split(' ')
        .map(String::from)
        .collect();
    let (fe, _) = Tool::Ior.parse(&words).unwrap();
    let x = fe.explain();
    assert!(
        x.contains("open(/tmp/tf.<rank as %08d>, O_CREAT|O_RDWR, 0664); 8 × (lseek(SEEK_SET); write(4096)); fsync()"),
        "{x}"
    );
    assert!(x.contains("O_RDONLY); 8 × (lseek(SEEK_SET); read(4096))"), "{x}");
    assert!(fe.plan().validate().is_ok());
}

#[test]
fn a_study_s_options_become_ior_s_and_mdtest_s_words_and_read_back() {
    use fslab_classic::contract::Request;
    let opts = |o: &[(&str, &str)]| -> Vec<(String, String)> {
        o.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    };
    let extra: Vec<String> = vec!["-F".into()];
    let o = opts(&[("transfer", "64k"), ("block", "1m"), ("e", "true")]);
    let r = Request {
        main: None,
        options: &o,
        args: &extra,
        dir: Path::new("/mnt/x"),
        drop_caches: false,
    };
    let calls = Tool::Ior.calls(&r);
    assert_eq!(calls[0].args.join(" "), "ior --dir /mnt/x --json -F -t 64k -b 1m -e");
    assert!(Tool::Ior.check(&calls[0].args[1..]).is_ok());
    let o = opts(&[("items", "100"), ("depth", "2"), ("branch", "3")]);
    let r = Request { options: &o, ..r };
    let calls = Tool::Mdtest.calls(&r);
    assert_eq!(
        calls[0].args.join(" "),
        "mdtest --dir /mnt/x --json -F -n 100 -z 2 -b 3"
    );
    assert!(Tool::Mdtest.check(&calls[0].args[1..]).is_ok());
    assert_eq!(Tool::from_key("ior"), Some(Tool::Ior));
    assert_eq!(Tool::from_key("mdtest"), Some(Tool::Mdtest));
}

#[test]
fn a_stonewall_stops_the_write_and_the_read_stops_where_the_write_did() {
    let tmp = tempfile::tempdir().unwrap();
    // 8-byte transfers of a 64 MiB block: one second ends the write long before the block does.
    let o = &run("-D 1 -t 8 -b 64m", tmp.path(), 1)[0];
    let (w, r) = (point(o, 0, "write"), point(o, 0, "read"));
    let moved = w["bytes"].as_u64().unwrap();
    assert!(moved > 0 && moved < 64 << 20, "{w}");
    // IOR's wear-out: the read stops where the write did, unless its own second runs out first
    // (a loaded machine); it never reads past what was written (that would fail at the end).
    let read = r["bytes"].as_u64().unwrap();
    let read_secs = r["xfer_secs"].as_f64().unwrap();
    assert!(read == moved || (read < moved && read_secs >= 1.0), "{r} after {w}");
    assert!(
        o.report.contains("WARNING: Maybe caused by deadlineForStonewalling\n"),
        "{}",
        o.report
    );
    assert!(o.report.contains("stonewallingTime    : 1\n"));
}

#[test]
fn an_interrupted_run_moves_nothing_more_and_removes_its_file() {
    let tmp = tempfile::tempdir().unwrap();
    for r in job_with(Tool::Ior, "-t 4k -b 1g -o big", tmp.path(), 2, Hosts::One, true) {
        let o = r.unwrap_or_else(|e| panic!("an interrupted run is not a failed one: {e}"));
        assert!(o.interrupted);
        assert!(
            point(&o, 0, "write")["bytes"].as_u64().unwrap() <= 2 * 4096,
            "a transfer each at most"
        );
    }
    assert!(names(tmp.path()).is_empty(), "{:?}", names(tmp.path()));
}
