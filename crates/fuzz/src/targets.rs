//! One target per parser. Each takes raw bytes, runs the parser and what follows it without
//! touching a filesystem (compiling, checking, explaining as TOML), and returns the *shape* of
//! what happened: the error with its numbers and quoted input left out, or what was built. A new
//! shape keeps the input in the corpus: coverage feedback of a kind, without instrumentation.

use fslab_classic::{dbench, ffsb, iozone, sysbench, FrontEnd};
use fslab_engine::Workload;
use std::path::Path;
use std::sync::OnceLock;

/// A parser to fuzz.
pub struct Target {
    pub name: &'static str,
    /// What the inputs are.
    pub what: &'static str,
    /// Runs one input; returns its shape.
    pub run: fn(&[u8]) -> String,
    /// Words worth inserting.
    pub dict: &'static [&'static str],
    /// The repository's files the corpus starts from (relative to the repository), besides
    /// `crates/fuzz/corpus/<name>/`.
    pub seeds: &'static [&'static str],
}

pub const TARGETS: &[Target] = &[
    Target {
        name: "ffsb",
        what: "FFSB profiles (parse, compile, --explain)",
        run: ffsb_profile,
        dict: &[
            "[filesystem]\n",
            "[threadgroup]\n",
            "[end]\n",
            "[stats]\n",
            "[filesystem0]\n",
            "[end0]\n",
            "location=/mnt/a\n",
            "num_files=",
            "num_dirs=",
            "min_filesize=",
            "max_filesize=",
            "read_size=",
            "read_blocksize=",
            "write_size=",
            "write_blocksize=",
            "num_threads=",
            "read_weight=1\n",
            "write_weight=1\n",
            "create_weight=1\n",
            "agefs=1\n",
            "desired_util=0.5\n",
            "size_weight 4k 1\n",
            "msec_range 0 1\n",
            "clone=/mnt/a\n",
            "bindfs=",
            "init_util=",
            "init_size=",
            "reuse=1\n",
            "directio=1\n",
            "time=",
            "num_filesystems=1\n",
            "meta_weight=1\n",
            "read_random=1\n",
            "read_skip=1\n",
            "read_skipsize=",
            "k",
            "KB",
            "M",
            "g",
            "#",
            "=",
        ],
        seeds: &["profiles"],
    },
    Target {
        name: "dbench",
        what: "dbench loadfiles (parse, compile, --explain)",
        run: dbench_loadfile,
        dict: &[
            "NTCreateX",
            "Close",
            "Rename",
            "Unlink",
            "Rmdir",
            "Deltree",
            "Mkdir",
            "QUERY_PATH_INFORMATION",
            "QUERY_FILE_INFORMATION",
            "QUERY_FS_INFORMATION",
            "SET_FILE_INFORMATION",
            "FIND_FIRST",
            "WriteX",
            "ReadX",
            "LockX",
            "UnlockX",
            "Flush",
            "NT_STATUS_OK",
            "NT_STATUS_OBJECT_NAME_NOT_FOUND",
            "0x0",
            "\"\\clients\\client1\\~dmtmp\\WORD\\a.doc\"",
            "\"\"",
            "\"..\"",
            "\"/\"",
            "\\..\\",
            " 9938 ",
            " 0.5 ",
            "\n",
        ],
        seeds: &[],
    },
    Target {
        name: "sysbench",
        what: "sysbench fileio's command line, one argument a line (parse, check, --explain)",
        run: sysbench_args,
        dict: &[
            "fileio\n",
            "prepare\n",
            "run\n",
            "cleanup\n",
            "--file-test-mode=",
            "seqwr",
            "seqrewr",
            "seqrd",
            "rndrd",
            "rndwr",
            "rndrw",
            "--file-num=",
            "--file-total-size=",
            "--file-block-size=",
            "--file-io-mode=",
            "async",
            "mmap",
            "sync",
            "--file-async-backlog=",
            "--file-fsync-freq=",
            "--file-fsync-all=",
            "--file-fsync-end=",
            "--file-fsync-mode=",
            "fdatasync",
            "--file-extra-flags=",
            "direct",
            "dsync",
            "--file-merged-requests=",
            "--file-rw-ratio=",
            "--threads=",
            "--time=",
            "--events=",
            "--report-interval=",
            "--rate=",
            "--rand-seed=",
            "--validate=",
            "--dir\n",
            "--json\n",
            "--explain\n",
            "--check\n",
            "--drop-caches\n",
            "on",
            "off",
            "K",
            "M",
            "G",
            "T",
            "\n",
        ],
        seeds: &[],
    },
    Target {
        name: "iozone",
        what: "IOzone's command line, one argument a line (parse, plan, --explain)",
        run: iozone_args,
        dict: &[
            "-i\n",
            "-s\n",
            "-r\n",
            "-t\n",
            "-a\n",
            "-A\n",
            "-e\n",
            "-c\n",
            "-I\n",
            "-o\n",
            "-O\n",
            "-R\n",
            "-F\n",
            "-f\n",
            "-n\n",
            "-g\n",
            "-y\n",
            "-q\n",
            "-z\n",
            "-w\n",
            "-+n\n",
            "-j\n",
            "-K\n",
            "-l\n",
            "-u\n",
            "-T\n",
            "-C\n",
            "-h\n",
            "0\n",
            "1\n",
            "2\n",
            "8\n",
            "4k\n",
            "64m\n",
            "1g\n",
            "--dir\n",
            "--explain\n",
            "--json\n",
            "\n",
        ],
        seeds: &[],
    },
    Target {
        name: "run-flags",
        what: "fslab run's ad-hoc flags, one argument a line (parse, check, --explain)",
        run: run_flags,
        dict: &[
            "--op\n",
            "randread\n",
            "randwrite\n",
            "seqread\n",
            "seqwrite\n",
            "create\n",
            "--size\n",
            "--nrfiles\n",
            "--bs\n",
            "--threads\n",
            "--iodepth\n",
            "--engine\n",
            "io_uring\n",
            "sync\n",
            "mmap\n",
            "--direct\n",
            "--time\n",
            "--ramp\n",
            "--seed\n",
            "--fsync\n",
            "--dir\n",
            "--continue-on-error\n",
            "--no-latency\n",
            "4k\n",
            "1g\n",
            "16t\n",
            "0\n",
            "3\n",
            "100000\n",
            "1e30\n",
            "5s\n",
        ],
        seeds: &[],
    },
    Target {
        name: "workload",
        what: "native workload TOML (read, validate, to_toml, read back the same)",
        run: native_workload,
        dict: &[
            "[stop]\n",
            "[[fileset]]\n",
            "[[group]]\n",
            "[[group.op]]\n",
            "time = ",
            "size = ",
            "bs = ",
            "\"16t\"",
            "\"1e30s\"",
            "files = ",
            "threads = ",
            "op = \"create\"\n",
            "op = \"read\"\n",
            "iodepth = ",
            "weight = ",
            "\"0s\"",
            "= true\n",
            "= false\n",
            "\"4k\"",
            "\"1g\"",
            "[\"a\", \"b\"]",
            "{ a = 1 }",
            "= \"\"\n",
        ],
        seeds: &["workloads"],
    },
    Target {
        name: "study",
        what: "study TOML (lab's reader and checks)",
        run: study,
        dict: &[
            "[[filesystem]]\n",
            "[[workload]]\n",
            "[device]\n",
            "timeout = ",
            "repeat = ",
            "time = ",
            "sysbench = { ",
            "dbench = { ",
            "ffsb = ",
            "iozone = { ",
            "fio = ",
            "\"1e30\"",
            "type = \"ext4\"\n",
            "type = \"loop\"\n",
            "size = ",
            "= \"0s\"\n",
            "mkfs = ",
            "mount = ",
            "fill = ",
            "age = ",
        ],
        seeds: &["studies"],
    },
];

/// The target of that name.
pub fn target(name: &str) -> Option<&'static Target> {
    TARGETS.iter().find(|t| t.name == name)
}

/// What an error says, without what varies with the input: numbers and quoted text.
pub fn shape(kind: &str, message: &str) -> String {
    let mut out = String::from(kind);
    out.push(':');
    let mut quoted = false;
    let mut last_digit = false;
    for c in message.chars().take(400) {
        if c == '`' {
            quoted = !quoted;
            out.push('`');
            continue;
        }
        if quoted {
            continue;
        }
        if c.is_ascii_digit() {
            if !last_digit {
                out.push('#');
            }
            last_digit = true;
            continue;
        }
        last_digit = false;
        out.push(c);
    }
    out
}

fn text(input: &[u8]) -> Result<&str, String> {
    std::str::from_utf8(input).map_err(|_| "utf8".to_string())
}

fn args(input: &[u8]) -> Result<Vec<String>, String> {
    let text = text(input)?;
    let text = text.strip_suffix('\n').unwrap_or(text);
    Ok(text.split('\n').map(str::to_string).collect())
}

fn ffsb_profile(input: &[u8]) -> String {
    let text = match fslab_classic::text::decode(input.to_vec()) {
        Ok(t) => t,
        Err(e) => return shape("utf8", &e.message()),
    };
    let profile = match ffsb::parse(&text, "fuzz.ffsb") {
        Ok(p) => p,
        Err(e) => return shape("parse", &e.to_string()),
    };
    let mut shapes = vec![format!("parsed:{}", profile.grammar)];
    for opts in [
        ffsb::Options::default(),
        ffsb::Options {
            dir: Some("/fslab-fuzz/dir".into()),
            time: Some(1),
            threads: Some(2),
            filesize: Some(4096),
            ..ffsb::Options::default()
        },
    ] {
        match ffsb::compile(&profile, &opts) {
            Ok(plan) => {
                let explained = ffsb::explain(&plan);
                shapes.push(format!("explained:{}", explained.lines().count().min(64) / 8));
            }
            Err(e) => shapes.push(shape("compile", &e.to_string())),
        }
    }
    shapes.join("|")
}

fn dbench_loadfile(input: &[u8]) -> String {
    let text = match fslab_classic::text::decode(input.to_vec()) {
        Ok(t) => t,
        Err(e) => return shape("utf8", &e.message()),
    };
    let lines = match dbench::loadfile::parse(&text, "fuzz.txt") {
        Ok(l) => l,
        Err(e) => return shape("parse", &e.to_string()),
    };
    let opts = dbench::Options {
        nprocs: 2,
        time: 1,
        ..dbench::Options::default()
    };
    match dbench::compile(&opts, &lines, Path::new("fuzz.txt")) {
        Ok(w) => format!("compiled:{}", w.to_toml().lines().count().min(256) / 16),
        Err(e) => shape("compile", &e.to_string()),
    }
}

fn frontend(result: Result<(Box<dyn FrontEnd>, fslab_classic::Common), fslab_classic::Error>) -> String {
    match result {
        Ok((fe, _)) => {
            if let Err(e) = fe.plan().validate() {
                return shape("invalid", &e.to_string());
            }
            let phases = fe.plan().phases.len();
            let explained = fe.explain();
            let notes = fe.notes();
            format!(
                "planned:{phases}:{}:{}",
                explained.lines().count().min(64) / 8,
                notes.len()
            )
        }
        Err(e) => shape("parse", &e.to_string()),
    }
}

fn sysbench_args(input: &[u8]) -> String {
    match args(input) {
        Ok(a) => frontend(sysbench::frontend::parse(&a)),
        Err(e) => e,
    }
}

fn iozone_args(input: &[u8]) -> String {
    match args(input) {
        Ok(a) => frontend(iozone::frontend::parse(&a)),
        Err(e) => e,
    }
}

fn run_flags(input: &[u8]) -> String {
    match args(input) {
        // A file argument is read: only flags are fuzzed here (the workload target reads TOML).
        Ok(a) if a.iter().any(|w| !w.starts_with('-') && Path::new(w).exists()) => "a file".into(),
        Ok(a) => frontend(fslab_classic::native::parse(&a)),
        Err(e) => e,
    }
}

fn native_workload(input: &[u8]) -> String {
    let text = match text(input) {
        Ok(t) => t,
        Err(e) => return e,
    };
    let w = match Workload::from_toml(text, "fuzz.toml") {
        Ok(w) => w,
        Err(e) => return shape("read", &e.to_string()),
    };
    if let Err(e) = w.validate() {
        return shape("invalid", &e.to_string());
    }
    let written = w.to_toml();
    let again = Workload::from_toml(&written, "written.toml")
        .unwrap_or_else(|e| panic!("to_toml wrote a workload that does not read back: {e}\n{written}"));
    assert_eq!(
        again.to_toml(),
        written,
        "to_toml, read back and written again, differs"
    );
    format!("valid:{}:{}", w.filesets.len().min(4), w.groups.len().min(4))
}

fn study(input: &[u8]) -> String {
    // Where the seed studies' relative paths start (only read).
    static BASE: OnceLock<std::path::PathBuf> = OnceLock::new();
    let base = BASE.get_or_init(|| crate::repo().join("studies"));
    let text = match text(input) {
        Ok(t) => t,
        Err(e) => return e,
    };
    match fslab_lab::study::Study::from_toml(text, "fuzz.toml", base) {
        Ok(s) => {
            // The matrix and each cell's expected time, as `study run --dry-run` shows them.
            use fslab_lab::matrix::{expand, Form};
            let mut cells = 0;
            for form in [Form::Full, Form::Quick] {
                for c in expand(&s, form) {
                    let _ = fslab_lab::matrix::expected_run(&s, &c);
                    cells += 1;
                }
            }
            format!("valid:{}:{}", s.workloads.len().min(8), cells.min(64) / 8)
        }
        Err(e) => shape("invalid", &e.to_string()),
    }
}
