//! fslab's fuzzing harness, on stable Rust: a seeded mutation fuzzer over every parser (FFSB
//! profiles, dbench loadfiles, sysbench's and IOzone's options, native workload TOML, study
//! TOML). Every input runs under [`std::panic::catch_unwind`], a memory budget (a counting
//! allocator, [`guard`]) and a hang watchdog ([`guarded`]); an input that breaks one is saved to
//! a file. The corpora start from the repository's own files and `crates/fuzz/corpus/`.
//!
//! `cargo run --release -p fslab-fuzz -- --help` says how to run it; the fast tier replays the
//! corpora (tests/fuzz/main.rs).

pub mod guard;
pub mod mutate;
pub mod targets;

pub use targets::{target, Target, TARGETS};

use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

#[global_allocator]
static ALLOCATOR: guard::Counting = guard::Counting;

/// The repository the corpora are read from.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// dbench's own loadfile, when Debian's dbench package is installed.
pub const DBENCH_CLIENT: &str = "/usr/share/dbench/client.txt";

/// Inputs larger than this are read in pieces of this size (or cut to it).
pub const MAX_SEED: usize = 64 * 1024;

/// The corpus a target starts from: its files in `crates/fuzz/corpus/<name>/`, the repository's
/// files it names, and for dbench slices of dbench's own loadfile when it is installed. Each
/// entry is named by where it comes from.
pub fn corpus(t: &Target) -> Vec<(String, Vec<u8>)> {
    let root = repo();
    let mut out = Vec::new();
    let mut dirs = vec![root.join("crates/fuzz/corpus").join(t.name)];
    dirs.extend(t.seeds.iter().map(|s| root.join(s)));
    for dir in dirs {
        let mut files: Vec<PathBuf> = match std::fs::read_dir(&dir) {
            Ok(rd) => rd.filter_map(|e| e.ok().map(|e| e.path())).collect(),
            Err(_) => continue,
        };
        files.sort();
        for f in files {
            let wanted = match t.name {
                "workload" | "study" => f.extension().is_some_and(|e| e == "toml"),
                "ffsb" => f.extension().is_some_and(|e| e == "ffsb") || f.starts_with(root.join("crates/fuzz")),
                _ => true,
            };
            if !wanted || !f.is_file() {
                continue;
            }
            if let Ok(mut bytes) = std::fs::read(&f) {
                bytes.truncate(MAX_SEED);
                let name = f.strip_prefix(&root).unwrap_or(&f).display().to_string();
                out.push((name, bytes));
            }
        }
    }
    if t.name == "dbench" {
        if let Ok(bytes) = std::fs::read(DBENCH_CLIENT) {
            // Its first lines, and a slice from its middle and its end, cut at line ends.
            for (k, at) in [0, bytes.len() / 2, bytes.len().saturating_sub(MAX_SEED / 4)]
                .into_iter()
                .enumerate()
            {
                let from =
                    bytes[at..]
                        .iter()
                        .position(|&b| b == b'\n')
                        .map_or(at, |i| if at == 0 { 0 } else { at + i + 1 });
                let to = (from + MAX_SEED / 4).min(bytes.len());
                let to = bytes[..to]
                    .iter()
                    .rposition(|&b| b == b'\n')
                    .map_or(to, |i| i + 1)
                    .max(from);
                out.push((format!("{DBENCH_CLIENT}#{k}"), bytes[from..to].to_vec()));
            }
        }
    }
    out
}

/// What running one input did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ran {
    /// The parser returned (an error or a result); the shape of what it returned.
    Returned(String),
    /// It panicked, with this message and place.
    Panicked(String),
}

static PANIC: Mutex<Option<String>> = Mutex::new(None);

thread_local! {
    /// Whether this thread is running an input (its panics are findings, not failures).
    static IN_EXEC: Cell<bool> = const { Cell::new(false) };
    /// The watch of the [`guarded`] call this thread works for.
    static WATCH: RefCell<Option<Arc<Watch>>> = const { RefCell::new(None) };
}

/// Keeps the messages (with their place) of panics inside [`exec`] for the report instead of
/// printing them; other panics print as usual.
pub fn quiet_panics() {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !IN_EXEC.with(Cell::get) {
                return default(info);
            }
            let message = info
                .payload()
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| info.payload().downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "(no message)".into());
            let place = info
                .location()
                .map(|l| format!("{}:{}", l.file(), l.line()))
                .unwrap_or_default();
            *PANIC.lock().unwrap_or_else(|p| p.into_inner()) = Some(format!("{place}: {message}"));
        }));
    });
}

/// What a [`guarded`] call watches: since when (milliseconds since [`START`], plus one; 0 when
/// no input runs) the input being run runs, and that input.
#[derive(Default)]
struct Watch {
    since: AtomicU64,
    input: Mutex<Vec<u8>>,
}

static EXECS: AtomicU64 = AtomicU64::new(0);
static START: OnceLock<Instant> = OnceLock::new();

fn now_ms() -> u64 {
    START.get_or_init(Instant::now).elapsed().as_millis() as u64 + 1
}

/// Runs one input: panics caught, the memory budget on, watched for hangs by [`guarded`].
pub fn exec(t: &Target, input: &[u8]) -> Ran {
    quiet_panics();
    let watch = WATCH.with(|w| w.borrow().clone());
    if let Some(w) = &watch {
        let mut kept = w.input.lock().unwrap_or_else(|p| p.into_inner());
        kept.clear();
        kept.extend_from_slice(input);
        drop(kept);
        w.since.store(now_ms(), Ordering::SeqCst);
    }
    IN_EXEC.with(|f| f.set(true));
    let result = guard::armed(input, || catch_unwind(AssertUnwindSafe(|| (t.run)(input))));
    IN_EXEC.with(|f| f.set(false));
    if let Some(w) = &watch {
        w.since.store(0, Ordering::SeqCst);
    }
    EXECS.fetch_add(1, Ordering::Relaxed);
    match result {
        Ok(shape) => Ran::Returned(shape),
        Err(_) => Ran::Panicked(
            PANIC
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .take()
                .unwrap_or_else(|| "(no message)".into()),
        ),
    }
}

/// Inputs run so far by this process.
pub fn execs() -> u64 {
    EXECS.load(Ordering::Relaxed)
}

/// An input that ran longer than the limit.
#[derive(Debug)]
pub struct Hung {
    pub input: Vec<u8>,
    pub after: Duration,
}

/// Runs `work` on a thread of its own while watching that no single input [`exec`] runs there
/// takes longer than `limit`. On a hang it returns the input at once (the stuck thread is left
/// behind: the caller reports it and ends the process).
pub fn guarded<R: Send + 'static>(limit: Duration, work: impl FnOnce() -> R + Send + 'static) -> Result<R, Hung> {
    let watch = Arc::new(Watch::default());
    let theirs = watch.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    let worker = std::thread::Builder::new()
        .name("fuzz".into())
        .spawn(move || {
            WATCH.with(|w| *w.borrow_mut() = Some(theirs));
            let _ = tx.send(work());
        })
        .expect("a thread");
    loop {
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(r) => return Ok(r),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => match worker.join() {
                // The work itself panicked (outside any input): pass the panic on.
                Err(payload) => std::panic::resume_unwind(payload),
                Ok(()) => unreachable!("the worker sends before it returns"),
            },
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
        }
        let since = watch.since.load(Ordering::SeqCst);
        if since != 0 {
            let after = Duration::from_millis(now_ms().saturating_sub(since));
            if after > limit {
                return Err(Hung {
                    input: watch.input.lock().unwrap_or_else(|p| p.into_inner()).clone(),
                    after,
                });
            }
        }
    }
}

/// An input that panicked.
#[derive(Debug, Clone)]
pub struct Finding {
    pub target: &'static str,
    pub message: String,
    pub input: Vec<u8>,
    /// Where it is saved, once saved.
    pub saved: Option<PathBuf>,
}

/// Runs every entry of the target's corpus; returns the panics (one per entry that panicked).
pub fn replay(t: &'static Target) -> (usize, Vec<Finding>) {
    let corpus = corpus(t);
    let mut found = Vec::new();
    for (name, input) in &corpus {
        if let Ran::Panicked(message) = exec(t, input) {
            found.push(Finding {
                target: t.name,
                message: format!("{name}: {message}"),
                input: input.clone(),
                saved: None,
            });
        }
    }
    (corpus.len(), found)
}

/// How a fuzzing session goes.
#[derive(Debug, Clone)]
pub struct Session {
    pub seed: u64,
    pub time: Duration,
    pub max_len: usize,
    /// Where panicking inputs (and inputs of new shapes) are written.
    pub out: PathBuf,
}

/// What fuzzing one target did.
#[derive(Debug, Default)]
pub struct Stats {
    pub execs: u64,
    pub corpus: usize,
    pub shapes: usize,
    pub findings: Vec<Finding>,
}

/// Fuzzes `t` for `s.time`: mutations of its corpus; an input whose outcome has a new shape joins
/// the corpus (and `out/corpus/<target>/`), one that panics in a new way is saved to
/// `out/<target>-panic-<hash>.bin` and reported.
pub fn fuzz(t: &'static Target, s: &Session) -> Stats {
    let mut rng = SmallRng::seed_from_u64(s.seed ^ fnv(t.name.as_bytes()));
    let mut corpus: Vec<Vec<u8>> = corpus(t).into_iter().map(|(_, b)| b).collect();
    if corpus.is_empty() {
        corpus.push(Vec::new());
    }
    let mut shapes = HashSet::new();
    let mut panics = HashSet::new();
    let mut stats = Stats::default();
    let new_dir = s.out.join("corpus").join(t.name);
    let end = Instant::now() + s.time;
    for input in corpus.clone() {
        record(
            t,
            s,
            &input,
            exec(t, &input),
            &mut shapes,
            &mut panics,
            &mut stats,
            None,
        );
        stats.execs += 1;
    }
    // At least one round of mutations, however short the time.
    let mut first = true;
    while std::mem::take(&mut first) || Instant::now() < end {
        for _ in 0..64 {
            let a = rng.random_range(0..corpus.len());
            let b = rng.random_range(0..corpus.len());
            let input = mutate::mutate(&mut rng, &corpus[a], &corpus[b], t.dict, s.max_len);
            let ran = exec(t, &input);
            stats.execs += 1;
            if record(t, s, &input, ran, &mut shapes, &mut panics, &mut stats, Some(&new_dir)) && corpus.len() < 4096 {
                corpus.push(input);
            }
        }
    }
    stats.corpus = corpus.len();
    stats.shapes = shapes.len();
    stats
}

/// Notes what an input did; true when it was new.
#[allow(clippy::too_many_arguments)]
fn record(
    t: &'static Target,
    s: &Session,
    input: &[u8],
    ran: Ran,
    shapes: &mut HashSet<String>,
    panics: &mut HashSet<String>,
    stats: &mut Stats,
    new_dir: Option<&Path>,
) -> bool {
    match ran {
        Ran::Returned(shape) => {
            let new = shapes.insert(shape);
            if let (true, Some(dir)) = (new, new_dir) {
                if std::fs::create_dir_all(dir).is_ok() {
                    let _ = std::fs::write(dir.join(format!("{:016x}", fnv(input))), input);
                }
            }
            new
        }
        Ran::Panicked(message) => {
            // The same panic (its place and message without numbers) is reported once.
            if panics.insert(targets::shape("panic", &message)) {
                let path = s.out.join(format!("{}-panic-{:016x}.bin", t.name, fnv(input)));
                let saved = std::fs::create_dir_all(&s.out)
                    .and_then(|_| std::fs::write(&path, input))
                    .is_ok()
                    .then_some(path);
                stats.findings.push(Finding {
                    target: t.name,
                    message,
                    input: input.to_vec(),
                    saved,
                });
            }
            false
        }
    }
}

/// FNV-1a: names saved inputs by their content.
pub fn fnv(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .fold(0xcbf29ce484222325, |h, &b| (h ^ b as u64).wrapping_mul(0x100000001b3))
}

/// The heap an input may grow by; an input that breaks it is saved to `out/memory.bin`.
pub fn bound_memory(bytes: usize, out: &Path) {
    let _ = std::fs::create_dir_all(out);
    guard::set_budget(bytes, &out.join("memory.bin"));
}
