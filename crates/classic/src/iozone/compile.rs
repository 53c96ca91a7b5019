//! Each IOzone sub-test as one engine [`Workload`] (the calls each makes are in the table of
//! [`crate::iozone`]).
//!
//! - initial writers: `seqwrite` of each child's own file (the engine empties it before the
//!   clock), one record per call. Throughput mode's pwrite writers and fwriters are the same.
//! - rewriters: `rewrite` of the same files; so are automatic mode's pwrite, re-pwrite, fwrite
//!   and re-fwrite, which write over the file. readers, re-readers, pread and fread (and their
//!   re-runs): `seqread`; reverse readers: `seqread` with `reverse`.
//! - The engine is `seek` (read()/write() at the file position, an lseek() where a record is not
//!   where the last one ended) except for pwrite/pread, which use the `sync` engine's
//!   pwrite()/pread(), as IOzone's do ([`Test::engine`]).
//! - record rewrite (automatic mode): one record at offset 0 written again and again, file size ÷
//!   record size times (a `write` whose `align` is the file size, so that its only offset is 0).
//! - random readers / writers: one record per `read`/`write` at a random record-aligned offset,
//!   file size ÷ record size operations per child (`stop.ops`, shared evenly), the offsets
//!   dealt from a shuffled deck (`shuffle`) so that each record comes once, in the order
//!   IOzone's children shuffle their record numbers into (`shuffle_order = "iozone"`: the same
//!   for every child, test and run, as IOzone seeds its generator with one fixed key).
//! - stride readers: each `read` takes records a stride apart (`skip` = stride − 1 records) from
//!   a random record-aligned start, as many records per operation as fit, so that the operations
//!   of a child add up to its file.
//! - mixed workload: as IOzone's `thread_mix_test`, each child either reads or writes its file
//!   ([`Mix::role`]): with `-+p N` the first N% of the children read, with `-+K N` the first N,
//!   otherwise the even-numbered ones; at random (shuffled as above), or with `-+B` from start
//!   to end as the readers and initial writers do (writing over the file, or with `-+F` emptying
//!   it first). Each child is a group of one on its place's fileset, in order, so that it takes
//!   its own file ([`seat`]), and ends as the sub-test it runs as (its group's own `child_end`).
//! - Every process ends as IOzone's do ([`child_end`], `stop.child_end`): its `-e` fsync, the
//!   stonewall before or after it, stopped writers finishing their files uncounted, and the fsync
//!   before close.
//!
//! Every throughput sub-test stops all children when the first one finishes (`stonewall`) unless
//! `-x`; the initial writers make their files as they open them (throughput mode; one process's
//! is made by the setup, after IOzone's sanity check), mode 0640, and the sub-tests after them
//! keep them (`reuse`), writing them untimed only when they are missing or have the wrong size.

use super::layout::{Layout, Place};
use super::subtest::{Mix, Test};
use fslab_engine::workload::{
    ChildEnd, Data, Fileset, FinalSync, Group, OSync, OpKind, OpSpec, Scope, SetupCalls, ShuffleOrder, SizeDist, Stop,
};
use fslab_engine::{Bytes, Workload};

/// What every sub-test of one IOzone invocation shares.
#[derive(Debug, Clone, PartialEq)]
pub struct Params {
    /// The file size, a whole number of records.
    pub file_size: u64,
    pub record: u64,
    pub fsync: bool,
    /// `-c`: the close is timed, and the untimed fsync before it is not made.
    pub close: bool,
    pub direct: bool,
    pub osync: bool,
    pub stonewall: bool,
    /// Stride of the stride read, in records.
    pub stride: u64,
    /// `-+p`, `-+K`, `-+B`, `-+F`: the mixed workload's readers and writers.
    pub mix: Mix,
    pub seed: Option<u64>,
    /// Throughput mode syncs after each sub-test (IOzone's `sync(); sleep(2)`), outside the timing.
    pub final_sync: FinalSync,
    /// Throughput mode (`-t`), where pwrite writers and fwriters create their files.
    pub throughput: bool,
    /// Throughput mode's children are processes, as IOzone's are without `-T`.
    pub processes: bool,
    /// Where the workload came from, for its description.
    pub origin: String,
}

impl Params {
    pub fn records(&self) -> u64 {
        self.file_size / self.record
    }
}

/// The workload of `test`, named `name`.
pub fn workload(test: Test, p: &Params, layout: &Layout, name: &str) -> Workload {
    let records = p.records();
    let children = layout.children() as u64;
    let first = test.from_empty(p.throughput);
    let filesets = layout
        .places
        .iter()
        .map(|place| {
            let mut fs = Fileset {
                dir: Some(place.dir.clone()),
                names: place.names.clone(),
                files: place.children.len() as u64,
                dirs: 0,
                size: SizeDist::Fixed(Bytes(p.file_size)),
                // The writers that create their files start from empty ones; the other tests
                // keep the files written before them. Throughput mode's initial writers open
                // their files O_CREAT without O_TRUNC, so a file fslab left there (`-w`) is
                // written over, not made again.
                prealloc: !first,
                reuse: !first || (test == Test::Write && p.throughput),
                // IOzone's open(O_CREAT, 0640).
                mode: Some(0o640),
                // Throughput mode's children make the files that start empty as they open them;
                // one process makes its file after the sanity check of write_perf_test().
                setup_calls: if p.throughput {
                    SetupCalls::Iozone
                } else {
                    SetupCalls::IozoneSingle
                },
                ..Fileset::new(&place.fileset)
            };
            if place.names.is_empty() {
                fs.prefix = place.prefix.clone();
            }
            fs
        })
        .collect();
    let (ops, per_child_ops) = ops_of(test, p, records);
    // Every process ends as IOzone's do (see `child_end`), which makes the -e fsyncs: throughput
    // mode's children, and automatic mode's one process, which opens its file and fsyncs it
    // before its clock starts, times its loop with its own clock, with -e fsyncs inside its
    // time, and fsyncs again before closing it; its readers (read_perf_test) first read one
    // record and seek back, untimed, to prime the caches. Two of its tests differ: the random
    // ones (random_perf_test) make no fsync before the clock, and fread (fread_perf_test), whose
    // fsync before the clock is on a second descriptor of the file, none after it, -e or not
    // (fflush() of a stream it only read writes nothing).
    // With -c IOzone closes the file inside the timing, and the fsync it makes before an
    // untimed close (`if(!include_close)`) is not made at all.
    let closing = |e: ChildEnd| ChildEnd {
        close_fsync: e.close_fsync && !p.close,
        ..e
    };
    let stop_end = closing(if p.throughput {
        child_end(test, p.fsync)
    } else {
        let fread = matches!(test, Test::Fread | Test::Freread);
        ChildEnd {
            fsync: p.fsync && !fread,
            open_fsync: !matches!(test, Test::RandomRead | Test::RandomWrite),
            close_fsync: !fread,
            prime: matches!(test, Test::Read | Test::Reread),
            ..ChildEnd::default()
        }
    });
    let group = |name: &str, threads: usize, ops: Vec<OpSpec>, fileset: &str| Group {
        threads: threads as u32,
        engine: test.engine(),
        direct: p.direct,
        osync: if p.osync && test.osync_with_o(p.throughput) {
            OSync::Sync
        } else {
            OSync::None
        },
        // One process's random_perf_test opens its file O_RDWR|O_CREAT for the random reads
        // too; throughput mode's random writers open theirs O_RDWR|O_CREAT.
        rdwr: test == Test::RandomRead && !p.throughput,
        open_creates: test == Test::RandomWrite || (test == Test::RandomRead && !p.throughput),
        data: data(test, p),
        ops,
        ..Group::new(name, fileset)
    };
    let mut groups = Vec::new();
    let by_place = test != Test::Mixed && layout.in_child_order();
    for place in layout.places.iter().filter(|_| by_place) {
        groups.push(group(&place.group, place.children.len(), ops.clone(), &place.fileset));
    }
    // Otherwise a group of one per child, in the children's order, so that the run numbers its
    // workers as IOzone numbers its children (which record of the inherited buffer a random
    // writer writes, `data`): the k-th group on a place takes its k-th file, its child's.
    for child in (0..layout.children()).filter(|_| !by_place) {
        let (place, k) = layout.of_child(child);
        let k = k as usize;
        if test != Test::Mixed {
            groups.push(group(&child_group(place, k), 1, ops.clone(), &place.fileset));
            continue;
        }
        // A reader or writer, random or sequential: its operations, and its ending.
        let role = p.mix.role(child, layout.children());
        let end = closing(child_end(role, p.fsync));
        let ops = match role {
            // IOzone's sequential writer opens its file without O_TRUNC unless -+F, and so
            // writes over it.
            Test::Write if !p.mix.truncate => ops_of(Test::Rewrite, p, records).0,
            _ => ops_of(role, p, records).0,
        };
        groups.push(Group {
            child_end: (end != stop_end).then_some(end),
            // Its writer opens the file as a random or initial writer does: O_CREAT.
            open_creates: matches!(role, Test::RandomWrite | Test::Write),
            ..group(&mixed_group(place, k, role), 1, ops, &place.fileset)
        });
    }
    Workload {
        description: format!(
            "{}: {} {} on {} kB files in {} kB records",
            p.origin,
            children,
            test.children_name(),
            p.file_size / 1024,
            p.record / 1024
        ),
        seed: p.seed,
        stop: Stop {
            ops: per_child_ops.map(|n| n.saturating_mul(children)),
            // IOzone's stdio children (thread_fwrite_test, thread_fread_test) neither raise the
            // stonewall nor look at it: each moves its whole file.
            stonewall: p.stonewall && !matches!(test, Test::Fwrite | Test::Frewrite | Test::Fread | Test::Freread),
            child_end: Some(stop_end),
            final_sync: p.final_sync,
            ..Stop::default()
        },
        filesets,
        groups,
        processes: p.processes,
        ..Workload::new(name)
    }
}

/// How a throughput child of `test` ends, as IOzone 3.487's do: the writers that write their
/// file whole (initial, pwrite and fwrite writers from empty, random writers) raise the stonewall
/// as soon as their transfers are done, before their `-e` fsync, and when stopped finish their
/// file uncounted; the others (rewriters, readers) fsync with `-e`, take their figures, then
/// raise it, and stop where they are. Every child fsyncs its file again before closing it,
/// outside its figures. The stdio children differ: a fwriter fsyncs its file once more before
/// its clock starts; a freader fsyncs it only then (through a second descriptor, which fslab
/// does not open) and never after, `-e` or not (`fflush()` of a stream it only read writes
/// nothing).
pub fn child_end(test: Test, fsync: bool) -> ChildEnd {
    let writes_whole = test.from_empty(true) || test == Test::RandomWrite;
    let fread = test == Test::Fread;
    ChildEnd {
        fsync: fsync && !fread,
        open_fsync: matches!(test, Test::Fwrite | Test::Fread),
        raise_before_sync: writes_whole,
        finish_uncounted: writes_whole,
        close_fsync: !fread,
        ..ChildEnd::default()
    }
}

/// What `test`'s children write. IOzone's throughput parent prepages the first record of its
/// 1 MiB buffer (an `m` in every 32-byte line, to force its copy on write) right after it forks
/// the initial writers; the child processes forked after that write the buffer they inherit.
/// Rewriters and fwriters write from its start; random, pwrite and mixed writers from record
/// `child % (1 MiB ÷ record)`, prepaged for the children whose record is the first (`-w`
/// shows 135 bytes of `m` per 4 KiB in what the prepaged ones wrote, 8 in the others).
/// Threads (`-T`), and the single process, write `fill_buffer()`'s 8 bytes.
fn data(test: Test, p: &Params) -> Data {
    match test {
        _ if !(p.throughput && p.processes) => Data::Iozone,
        Test::Rewrite | Test::Fwrite => Data::IozonePrepaged,
        Test::RandomWrite | Test::Pwrite | Test::Mixed => Data::IozoneShared,
        _ => Data::Iozone,
    }
}

/// The operations of `test`, and how many each child does when that is not "to the end of its
/// file".
fn ops_of(test: Test, p: &Params, records: u64) -> (Vec<OpSpec>, Option<u64>) {
    let bs = Some(Bytes(p.record));
    let stream = |op| OpSpec {
        bs,
        scope: None,
        ..OpSpec::new(op)
    };
    // Each child reads and writes its own file, as IOzone's children do.
    let random = |op| OpSpec {
        bs,
        scope: Some(Scope::Own),
        ..OpSpec::new(op)
    };
    // In IOzone's order of its records (MT19937-64 keyed as IOzone keys it), the same for
    // every child and test.
    let shuffled = |op| OpSpec {
        shuffle: Some(true),
        shuffle_order: Some(ShuffleOrder::Iozone),
        ..random(op)
    };
    match test {
        Test::Write | Test::Pwrite | Test::Fwrite if test.from_empty(p.throughput) => {
            (vec![stream(OpKind::SeqWrite)], None)
        }
        // Automatic mode's pwrite and fwrite write over the file, as the re-runs do.
        Test::Write | Test::Rewrite | Test::Pwrite | Test::Repwrite | Test::Fwrite | Test::Frewrite => {
            (vec![stream(OpKind::Rewrite)], None)
        }
        Test::Read | Test::Reread | Test::Pread | Test::Repread | Test::Fread | Test::Freread => {
            (vec![stream(OpKind::SeqRead)], None)
        }
        // Record 0 written again and again, IOzone's write() then lseek(0).
        Test::RecordRewrite => (
            vec![OpSpec {
                align: Some(Bytes(p.file_size)),
                seek_back: true,
                ..random(OpKind::Write)
            }],
            Some(records),
        ),
        Test::Reverse => (
            vec![OpSpec {
                reverse: Some(true),
                ..stream(OpKind::SeqRead)
            }],
            None,
        ),
        // IOzone's random children shuffle their records and visit each once.
        Test::RandomRead => (vec![shuffled(OpKind::Read)], Some(records)),
        Test::RandomWrite => (vec![shuffled(OpKind::Write)], Some(records)),
        // Each child is a reader or writer, in a group of its own (see `workload`): a random one
        // does a file of records, a sequential one goes to the end of its file.
        Test::Mixed => (Vec::new(), (!p.mix.sequential).then_some(records)),
        // IOzone's stride walk (read_stride_perf_test): a record, `-j` records on, starting again
        // one record further in at the end of the file; as many records as the file holds.
        Test::Stride => (
            vec![OpSpec {
                stride: Some(p.stride.max(1)),
                ..stream(OpKind::SeqRead)
            }],
            Some(records),
        ),
    }
}

/// The group of the mixed workload's `k`-th child of `place`, whose role is `role`.
/// The group of one of child `k` of `place`, when each child has its own.
fn child_group(place: &Place, k: usize) -> String {
    format!("{}-{k}", place.group)
}

fn mixed_group(place: &Place, k: usize, role: Test) -> String {
    let role = if role.writes() { "writer" } else { "reader" };
    format!("{}-{k}-{role}", place.group)
}

/// Where a child runs in a sub-test's workload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seat {
    pub group: String,
    /// Its thread's number in the group, of `threads`.
    pub thread: u32,
    pub threads: u32,
    /// Its file's index in its place.
    pub file: usize,
}

/// The seat of child `k` of `place` in `test`'s workload: the place's group, or the child's
/// group of one (in the mixed workload, and where the places do not hold the children in order),
/// which takes the place's `k`-th file.
pub fn seat(test: Test, mix: Mix, layout: &Layout, place: &Place, k: u32) -> Seat {
    if test != Test::Mixed && layout.in_child_order() {
        return Seat {
            group: place.group.clone(),
            thread: k,
            threads: place.children.len() as u32,
            file: k as usize,
        };
    }
    let role = mix.role(place.children[k as usize], layout.children());
    Seat {
        group: if test == Test::Mixed {
            mixed_group(place, k as usize, role)
        } else {
            child_group(place, k as usize)
        },
        thread: 0,
        threads: 1,
        file: k as usize,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> Params {
        Params {
            file_size: 1 << 20,
            record: 64 << 10,
            fsync: true,
            close: false,
            direct: false,
            osync: false,
            stonewall: true,
            stride: 17,
            mix: Mix::default(),
            seed: Some(1),
            final_sync: FinalSync::Outside,
            throughput: true,
            processes: true,
            origin: "test".into(),
        }
    }

    #[test]
    fn every_test_compiles_to_a_valid_workload() {
        let layout = Layout::simple(4, "iozone.DUMMY.");
        for t in Test::THROUGHPUT_ORDER.iter().chain(&Test::AUTO_ORDER).copied() {
            let w = workload(t, &params(), &layout, "x");
            w.validate().unwrap_or_else(|e| panic!("{t:?}: {e}"));
            assert_eq!(w.total_threads(), 4);
            assert_eq!(w.filesets[0].files, 4);
            assert_eq!(w.filesets[0].prefix, "iozone.DUMMY.");
            assert_eq!(w.filesets[0].dirs, 0);
        }
    }

    #[test]
    fn writers_fsync_at_the_end_of_their_work_with_e() {
        let layout = Layout::simple(2, "p");
        let auto = Params {
            throughput: false,
            ..params()
        };
        let w = workload(Test::Write, &auto, &layout, "x");
        assert_eq!(w.groups[0].ops[0].op, OpKind::SeqWrite);
        assert_eq!(
            w.groups[0].ops[0].sync, None,
            "the fsync is the process's, after its loop"
        );
        let end = w.stop.child_end.unwrap();
        // IOzone's automatic mode: fsync after open, before the clock; -e's inside it; one
        // before close.
        assert!(end.fsync && end.open_fsync && end.close_fsync && !end.finish_uncounted);
        assert!(!end.prime, "only the readers prime");
        assert!(!w.filesets[0].prealloc && !w.filesets[0].reuse);
        let w = workload(Test::Read, &auto, &layout, "x");
        let end = w.stop.child_end.unwrap();
        assert!(end.fsync, "automatic mode's readers fsync with -e too");
        assert!(
            end.prime,
            "automatic mode's readers read a record and seek back before the clock"
        );
        let random = workload(Test::RandomRead, &auto, &layout, "x");
        assert!(!random.stop.child_end.unwrap().prime, "random_perf_test does not prime");
        let w = workload(Test::Read, &params(), &layout, "x");
        assert!(w.filesets[0].prealloc && w.filesets[0].reuse);
        assert_eq!(w.groups[0].ops[0].sync, None);
    }

    #[test]
    fn throughput_children_end_as_iozones_do() {
        let layout = Layout::simple(2, "p");
        let end = |test| workload(test, &params(), &layout, "x").stop.child_end.unwrap();
        // Writers of whole files: the stonewall before their -e fsync, stopped ones finish.
        for test in [Test::Write, Test::RandomWrite, Test::Pwrite] {
            let e = end(test);
            assert!(
                e.fsync && e.raise_before_sync && e.finish_uncounted && e.close_fsync,
                "{test:?}"
            );
            let w = workload(test, &params(), &layout, "x");
            assert_eq!(w.groups[0].ops[0].sync, None, "the -e fsync is the child's, {test:?}");
        }
        // Rewriters and readers: after their fsync, and stopped ones stop where they are.
        for test in [Test::Rewrite, Test::Read, Test::Reread, Test::RandomRead, Test::Reverse] {
            let e = end(test);
            assert!(
                e.fsync && !e.raise_before_sync && !e.finish_uncounted && e.close_fsync,
                "{test:?}"
            );
        }
        // A fwriter writes over its file (fopen "r+"), fsyncing it once more before its clock.
        let e = end(Test::Fwrite);
        assert!(e.fsync && e.open_fsync && !e.raise_before_sync && !e.finish_uncounted && e.close_fsync);
        let no_e = Params {
            fsync: false,
            ..params()
        };
        assert!(!workload(Test::Read, &no_e, &layout, "x").stop.child_end.unwrap().fsync);
        let auto = Params {
            throughput: false,
            ..params()
        };
        assert!(
            !workload(Test::Write, &auto, &layout, "x")
                .stop
                .child_end
                .unwrap()
                .raise_before_sync
        );
    }

    #[test]
    fn pwrite_writers_start_from_empty_only_in_throughput_mode_and_fwriters_never() {
        let layout = Layout::simple(2, "p");
        let auto = Params {
            throughput: false,
            ..params()
        };
        let w = workload(Test::Pwrite, &params(), &layout, "x");
        assert_eq!(w.groups[0].ops[0].op, OpKind::SeqWrite);
        assert!(!w.filesets[0].reuse);
        for (test, p) in [(Test::Pwrite, &auto), (Test::Fwrite, &auto), (Test::Fwrite, &params())] {
            let w = workload(test, p, &layout, "x");
            assert_eq!(w.groups[0].ops[0].op, OpKind::Rewrite, "{test:?}");
            assert!(w.filesets[0].reuse && w.filesets[0].prealloc, "{test:?}");
        }
        for test in [Test::Pread, Test::Repread, Test::Fread, Test::Freread] {
            let w = workload(test, &params(), &layout, "x");
            assert_eq!(w.groups[0].ops[0].op, OpKind::SeqRead, "{test:?}");
        }
    }

    #[test]
    fn record_rewrite_writes_the_first_record_again_and_again() {
        let layout = Layout::simple(1, "p");
        // Automatic mode's test (IOzone offers it without -t only).
        let auto = Params {
            throughput: false,
            ..params()
        };
        let w = workload(Test::RecordRewrite, &auto, &layout, "x");
        w.validate().unwrap();
        let op = &w.groups[0].ops[0];
        assert_eq!(
            (op.op, op.block_size(), op.align),
            (OpKind::Write, 64 << 10, Some(Bytes(1 << 20)))
        );
        assert_eq!(w.stop.ops, Some(16));
        assert!(
            w.stop.child_end.unwrap().fsync,
            "-e: an fsync at the end, inside the timing"
        );
    }

    #[test]
    fn random_tests_do_one_file_of_records_per_child() {
        let layout = Layout::simple(3, "p");
        let w = workload(Test::RandomWrite, &params(), &layout, "x");
        assert_eq!(w.stop.ops, Some(3 * 16));
        assert!(w.stop.child_end.unwrap().fsync);
        assert_eq!(w.groups[0].ops[0].block_size(), 64 << 10);
        // Each record once, in a shuffled order, as IOzone's random children go.
        for test in [Test::RandomRead, Test::RandomWrite, Test::Mixed] {
            let w = workload(test, &params(), &layout, "x");
            let ops = w.groups.iter().flat_map(|g| &g.ops);
            assert!(
                ops.clone()
                    .all(|o| o.shuffle == Some(true) && o.shuffle_order == Some(ShuffleOrder::Iozone)),
                "{test:?}"
            );
        }
        let auto = Params {
            throughput: false,
            ..params()
        };
        let w = workload(Test::RecordRewrite, &auto, &layout, "x");
        assert_eq!(w.groups[0].ops[0].shuffle, None, "one record: nothing to shuffle");
    }

    /// The mixed workload's groups: (name, threads, operations, fileset).
    fn mixed_groups(layout: &Layout, read_percent: Option<u32>) -> Vec<(String, u32, Vec<OpKind>, String)> {
        let p = Params {
            mix: Mix {
                read_percent,
                ..Mix::default()
            },
            ..params()
        };
        let w = workload(Test::Mixed, &p, layout, "x");
        w.validate().unwrap();
        assert_eq!(
            w.stop.ops,
            Some(layout.children() as u64 * 16),
            "a file of records each"
        );
        w.groups
            .iter()
            .map(|g| {
                (
                    g.name.clone(),
                    g.threads,
                    g.ops.iter().map(|o| o.op).collect(),
                    g.fileset.0[0].clone(),
                )
            })
            .collect()
    }

    #[test]
    fn throughput_stdio_children_fsync_as_iozones() {
        let fsyncs = |test| {
            let e = child_end(test, true);
            (e.open_fsync, e.fsync, e.close_fsync)
        };
        assert_eq!(fsyncs(Test::Write), (false, true, true));
        assert_eq!(fsyncs(Test::Read), (false, true, true));
        // thread_fwrite_test: one more before the clock; thread_fread_test: only that one.
        assert_eq!(fsyncs(Test::Fwrite), (true, true, true));
        assert_eq!(fsyncs(Test::Fread), (true, false, false));
    }

    #[test]
    fn automatic_modes_fsyncs_are_each_tests_own() {
        let auto = Params {
            throughput: false,
            ..params()
        };
        let end = |test| {
            workload(test, &auto, &Layout::single("iozone.tmp"), "x")
                .stop
                .child_end
                .unwrap()
        };
        let fsyncs = |e: ChildEnd| (e.open_fsync, e.fsync, e.close_fsync);
        // Most tests: an fsync before the clock, -e's inside it, one before closing.
        assert_eq!(fsyncs(end(Test::Write)), (true, true, true));
        assert!(end(Test::Read).prime && !end(Test::Write).prime);
        // random_perf_test: none before the clock.
        assert_eq!(fsyncs(end(Test::RandomRead)), (false, true, true));
        assert_eq!(fsyncs(end(Test::RandomWrite)), (false, true, true));
        // fread_perf_test: only the one before the clock.
        assert_eq!(fsyncs(end(Test::Fread)), (true, false, false));
        assert_eq!(fsyncs(end(Test::Freread)), (true, false, false));
    }

    #[test]
    fn the_sequential_mixed_workload_goes_through_each_file_in_order() {
        let four = Layout::simple(4, "iozone.DUMMY.");
        let mixed = |mix: Mix| {
            let w = workload(Test::Mixed, &Params { mix, ..params() }, &four, "x");
            w.validate().unwrap();
            w
        };
        let ops = |w: &Workload| w.groups.iter().map(|g| g.ops[0].op).collect::<Vec<_>>();
        use OpKind::{Read as R, Rewrite as Rw, SeqRead as Sr, SeqWrite as Sw, Write as W};
        // -+B: the readers read their files from start to end, the writers write theirs over,
        // as IOzone's thread_read_test and thread_write_test (O_RDWR|O_CREAT, no O_TRUNC) do.
        let seq = Mix {
            sequential: true,
            ..Mix::default()
        };
        let w = mixed(seq);
        assert_eq!(ops(&w), vec![Sr, Rw, Sr, Rw]);
        assert_eq!(w.stop.ops, None, "each child to the end of its file");
        for g in &w.groups {
            assert_eq!(
                (g.ops[0].shuffle, g.ops[0].block_size()),
                (None, 64 << 10),
                "{}",
                g.name
            );
        }
        // The readers end as readers (the run's ending), the writers as initial writers.
        assert_eq!(w.stop.child_end, Some(child_end(Test::Read, true)));
        assert_eq!(w.groups[0].child_end, None);
        assert_eq!(w.groups[1].child_end, Some(child_end(Test::Write, true)));
        // -+F: the writers empty their files first.
        let truncating = Mix { truncate: true, ..seq };
        assert_eq!(ops(&mixed(truncating)), vec![Sr, Sw, Sr, Sw]);
        // -+K 3: the first three children read; -+p, when given, decides instead.
        let three = Mix {
            readers: Some(3),
            ..Mix::default()
        };
        assert_eq!(ops(&mixed(three)), vec![R, R, R, W]);
        let quarter = Mix {
            read_percent: Some(25),
            ..three
        };
        assert_eq!(ops(&mixed(quarter)), vec![R, W, W, W]);
        assert_eq!(
            seat(Test::Mixed, three, &four, &four.places[0], 3).group,
            "children-3-writer"
        );
        assert_eq!(
            seat(Test::Mixed, seq, &four, &four.places[0], 2).group,
            "children-2-reader"
        );
    }

    #[test]
    fn the_mixed_workloads_children_either_read_or_write_as_iozones() {
        let g = |name: &str, op| (name.to_string(), 1, vec![op], "iozone".to_string());
        // Without -+p: children 0, 2, 4 read, 1 and 3 write (IOzone's round robin); each is a
        // group of one, in order, so child k's thread is the k-th on the fileset: file k.
        let five = Layout::simple(5, "iozone.DUMMY.");
        assert_eq!(
            mixed_groups(&five, None),
            vec![
                g("children-0-reader", OpKind::Read),
                g("children-1-writer", OpKind::Write),
                g("children-2-reader", OpKind::Read),
                g("children-3-writer", OpKind::Write),
                g("children-4-reader", OpKind::Read),
            ]
        );
        let w = workload(Test::Mixed, &params(), &five, "x");
        let on_fileset: Vec<u64> = (0..5).map(|gi| w.thread_on_fileset(gi, 0)).collect();
        assert_eq!(on_fileset, vec![0, 1, 2, 3, 4]);
        // -+p 75 of 4: the first 3 read; -+p 1 of 4: none does; -+p 100: all do.
        let four = Layout::simple(4, "iozone.DUMMY.");
        let ops = |pct| {
            mixed_groups(&four, Some(pct))
                .iter()
                .map(|g| g.2[0])
                .collect::<Vec<_>>()
        };
        use OpKind::{Read as R, Write as W};
        assert_eq!(ops(75), vec![R, R, R, W]);
        assert_eq!(ops(1), vec![W, W, W, W]);
        assert_eq!(ops(100), vec![R, R, R, R]);
        // The readers end as random readers (the run's ending), the writers as random writers:
        // stopped, they finish their files uncounted.
        let w = workload(Test::Mixed, &params(), &four, "x");
        assert_eq!(w.stop.child_end, Some(child_end(Test::RandomRead, true)));
        assert_eq!(w.groups[0].child_end, None);
        assert_eq!(w.groups[1].child_end, Some(child_end(Test::RandomWrite, true)));
        assert!(w.groups[1].child_end.unwrap().finish_uncounted);
        // The figures find each child in its group of one, on its own file.
        let s = seat(Test::Mixed, Mix::default(), &four, &four.places[0], 3);
        assert_eq!(
            s,
            Seat {
                group: "children-3-writer".into(),
                thread: 0,
                threads: 1,
                file: 3
            }
        );
        assert_eq!(
            seat(Test::Read, Mix::default(), &four, &four.places[0], 3),
            Seat {
                group: "children".into(),
                thread: 3,
                threads: 4,
                file: 3
            }
        );
    }

    #[test]
    fn the_stdio_children_are_never_stonewalled() {
        let stonewalled = |test| {
            workload(test, &params(), &Layout::simple(2, "iozone.DUMMY."), "x")
                .stop
                .stonewall
        };
        for test in [Test::Fwrite, Test::Frewrite, Test::Fread, Test::Freread] {
            assert!(!stonewalled(test), "{test:?}");
        }
        for test in [Test::Write, Test::Read, Test::Stride, Test::RandomRead] {
            assert!(stonewalled(test), "{test:?}");
        }
    }

    #[test]
    fn the_stride_read_is_a_stride_stream_of_a_file_of_records() {
        // The fuzzer's case too: -j near 2^64 with a large record.
        for stride in [17, u64::MAX / 2] {
            let p = Params {
                stride,
                record: 16 << 20,
                ..params()
            };
            let w = workload(Test::Stride, &p, &Layout::simple(1, "iozone.DUMMY."), "x");
            let op = &w.groups[0].ops[0];
            assert_eq!(
                (op.op, op.stride, op.bs),
                (OpKind::SeqRead, Some(stride), Some(Bytes(16 << 20)))
            );
            assert_eq!(w.stop.ops, Some(p.records()));
        }
    }
}
