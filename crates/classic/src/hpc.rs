//! What `fslab ior` and `fslab mdtest` share (both come from hpc/ior 4.0 and read their command
//! lines and describe the machine the same way): their option words, sizes with a `k`/`m`/`g`
//! suffix, the file system line, the clock and time stamps, the job's nodes, the POSIX calls
//! made straight on paths, and exchanging per-rank figures through [`Ranks`].

use crate::contract::{option_words, Call, Common, Phase, Plan, Request, Style, Tool};
use crate::ranks::Ranks;
use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::time::Instant;

/// One option of a getopt-like command line: `-x`, `-x VALUE`, `-xVALUE`, `-wr` (flags together),
/// or `--name[=VALUE]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// `-t` or `--random-offset-seed`, as the user wrote it (for messages).
    pub flag: String,
    pub value: Option<String>,
}

/// What an option takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Takes {
    Flag,
    Value,
}

/// Reads `args` as hpc/ior's option parser does, with `takes(name)` saying what each option
/// takes (`None`: not an option of the tool). `tool` names the tool in messages.
pub fn words(tool: &str, args: &[String], takes: &dyn Fn(&str) -> Option<Takes>) -> Result<Vec<Word>, String> {
    let mut out = Vec::new();
    let mut it = args.iter();
    let unknown = |f: &str| format!("{tool}: unknown option {f} (`fslab {tool} -h` lists them)");
    while let Some(arg) = it.next() {
        if let Some(long) = arg.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            let flag = format!("--{name}");
            let value = match takes(name).ok_or_else(|| unknown(&flag))? {
                Takes::Flag => None,
                Takes::Value => Some(match inline {
                    Some(v) => v,
                    None => it
                        .next()
                        .cloned()
                        .ok_or_else(|| format!("{tool}: {flag} needs a value"))?,
                }),
            };
            out.push(Word { flag, value });
            continue;
        }
        let Some(short) = arg.strip_prefix('-').filter(|s| !s.is_empty()) else {
            return Err(format!("{tool}: unexpected argument `{arg}` (options start with -)"));
        };
        for (i, c) in short.char_indices() {
            let flag = format!("-{c}");
            match takes(&c.to_string()).ok_or_else(|| unknown(&flag))? {
                Takes::Flag => out.push(Word { flag, value: None }),
                Takes::Value => {
                    let rest = &short[i + c.len_utf8()..];
                    let rest = rest.strip_prefix('=').unwrap_or(rest);
                    let value = if rest.is_empty() {
                        it.next()
                            .cloned()
                            .ok_or_else(|| format!("{tool}: {flag} needs a value"))?
                    } else {
                        rest.to_string()
                    };
                    out.push(Word {
                        flag,
                        value: Some(value),
                    });
                    break;
                }
            }
        }
    }
    Ok(out)
}

/// A size as hpc/ior reads one: a whole number with an optional `k`, `m`, `g`, `t` or `p`
/// (powers of 1024, either case).
pub fn size(tool: &str, flag: &str, v: &str) -> Result<u64, String> {
    let bad = || format!("{tool}: {flag} `{v}` is not a size (a number with k, m, g, t or p)");
    let (digits, shift) = match v.chars().last() {
        Some(c) if c.is_ascii_alphabetic() => {
            let shift = match c.to_ascii_lowercase() {
                'k' => 10,
                'm' => 20,
                'g' => 30,
                't' => 40,
                'p' => 50,
                _ => return Err(bad()),
            };
            (&v[..v.len() - 1], shift)
        }
        _ => (v, 0),
    };
    let n: u64 = digits.parse().map_err(|_| bad())?;
    n.checked_mul(1 << shift).ok_or_else(bad)
}

/// A whole number option.
pub fn number<T: std::str::FromStr>(tool: &str, flag: &str, v: &str) -> Result<T, String> {
    v.parse()
        .map_err(|_| format!("{tool}: {flag} `{v}` is not a whole number"))
}

/// `path` beneath `dir`, refusing a path that leaves it (`..`) or an absolute one elsewhere.
pub fn beneath(tool: &str, flag: &str, dir: &Path, path: &str) -> Result<PathBuf, String> {
    let p = Path::new(path);
    if p.components().any(|c| c == Component::ParentDir) {
        return Err(format!("{tool}: {flag} {path}: `..` would leave the run directory"));
    }
    if p.is_absolute() {
        if !p.starts_with(dir) {
            return Err(format!(
                "{tool}: {flag} {path} is outside the run directory {}; give --dir or a relative path",
                dir.display()
            ));
        }
        return Ok(p.to_path_buf());
    }
    Ok(dir.join(p))
}

/// `fslab TOOL`'s command line: the shared flags, the tool's own options (`parse`), the run
/// directory (`--dir`, else the current directory) and where the path its `flag` names (IOR's
/// `-o`, mdtest's `-d`: `path` of the options) lies beneath it.
pub fn parse_command<O>(
    tool: &str,
    flag: &str,
    args: &[String],
    parse: fn(&[String]) -> Result<O, String>,
    path: fn(&O) -> &str,
) -> Result<(O, Common, PathBuf, PathBuf), crate::Error> {
    let (mut common, rest) = Common::take(args)?;
    common.resolve_dir();
    let opts = parse(&rest).map_err(crate::Error::input)?;
    let dir = run_dir(common.dir.as_deref())?;
    let root = beneath(tool, flag, &dir, path(&opts)).map_err(crate::Error::input)?;
    Ok((opts, common, dir, root))
}

/// A study's workload as `tool`'s own command line: its measured-run words, its extra
/// arguments, then its options, where `letters` gives the flags of the long keys (`transfer` is
/// `t`) and one-letter keys are `-k value`.
pub fn study_calls(tool: &str, r: &Request, letters: &[(&str, &str)]) -> Vec<Call> {
    let mut args = vec![tool.to_string()];
    args.extend(r.measured());
    args.extend(r.args.iter().cloned());
    for (k, v) in r.options {
        let k = letters
            .iter()
            .find(|(long, _)| long == k)
            .map_or(k.as_str(), |(_, short)| short);
        args.extend(option_words(k, v, Style::Short));
    }
    vec![Call::measured(args)]
}

/// The plan of a tool whose steps are its own calls, not engine workloads: each step named, with
/// the calls it makes.
pub fn plan_of(tool: Tool, steps: Vec<(String, String)>) -> Plan<'static> {
    Plan {
        tool,
        phases: steps
            .into_iter()
            .map(|(name, what)| Phase::Setup { name, what })
            .collect(),
    }
}

/// The directory the run works in: `--dir`, else the current directory.
pub fn run_dir(dir: Option<&Path>) -> Result<PathBuf, crate::Error> {
    match dir {
        Some(d) => Ok(d.to_path_buf()),
        None => std::env::current_dir()
            .map_err(|e| crate::Error::environment(format!("cannot read the current directory: {e}"))),
    }
}

/// The `Path`/`FS` lines IOR and mdtest print about the file system holding `path` (from
/// `statfs` of its directory, as both do).
pub fn filesystem_lines(path: &Path) -> String {
    let probe = path.parent().map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let Ok(c) = cstr(&probe) else {
        return String::new();
    };
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: a valid C string and a statfs the call fills.
    if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
        return String::new();
    }
    let total = st.f_blocks as f64 * st.f_bsize as f64;
    let free = st.f_bfree as f64 * st.f_bsize as f64;
    let used = (1.0 - free / total) * 100.0;
    let (size, unit) = if total / (1u64 << 30) as f64 > 1024.0 {
        (total / (1u64 << 40) as f64, "TiB")
    } else {
        (total / (1u64 << 30) as f64, "GiB")
    };
    let inodes = st.f_files as f64;
    let used_inodes = (1.0 - st.f_ffree as f64 / inodes) * 100.0;
    format!(
        "{:<20}: {}\n{:<20}: {size:.1} {unit}   Used FS: {used:2.1}%   Inodes: {:.1} Mi   Used Inodes: {used_inodes:2.1}%\n",
        "Path",
        path.display(),
        "FS",
        inodes / (1u64 << 20) as f64,
    )
}

/// `uname`'s system and node names ("Linux vm").
pub fn machine() -> String {
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: a utsname the call fills with NUL-terminated fields.
    if unsafe { libc::uname(&mut u) } != 0 {
        return "Unknown".into();
    }
    let field = |f: &[libc::c_char]| {
        // SAFETY: uname's fields are NUL-terminated within their arrays.
        unsafe { std::ffi::CStr::from_ptr(f.as_ptr()) }
            .to_string_lossy()
            .into_owned()
    };
    format!("{} {}", field(&u.sysname), field(&u.nodename))
}

/// Now as `ctime` writes it, without its newline ("Wed Nov 25 20:58:14 2026").
pub fn ctime_now() -> String {
    strftime("%a %b %e %H:%M:%S %Y")
}

/// Now as mdtest stamps its start and end ("11/25/2026 20:58:35").
pub fn stamp_now() -> String {
    strftime("%m/%d/%Y %T")
}

fn strftime(format: &str) -> String {
    let fmt = CString::new(format).expect("formats have no NUL");
    let mut buf = [0u8; 80];
    // SAFETY: time(NULL), localtime_r into a local tm, strftime into a local buffer of its length.
    let n = unsafe {
        let now = libc::time(std::ptr::null_mut());
        let mut tm: libc::tm = std::mem::zeroed();
        libc::localtime_r(&now, &mut tm);
        libc::strftime(buf.as_mut_ptr().cast(), buf.len(), fmt.as_ptr(), &tm)
    };
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

/// The job's clock: seconds since a moment every rank shares (the first barrier), as IOR's
/// `GetTimeStamp` after `init_clock`. Ranks in one process share `Instant`s; ranks in other
/// processes each measure from their own start, which the barrier lines up to within its latency.
#[derive(Debug, Clone, Copy)]
pub struct Clock(Instant);

impl Clock {
    pub fn start(ranks: &dyn Ranks) -> Clock {
        ranks.barrier();
        Clock(Instant::now())
    }

    pub fn now(&self) -> f64 {
        self.0.elapsed().as_secs_f64()
    }
}

/// Every rank's `mine`, in rank order, on every rank.
pub fn gather_f64(ranks: &dyn Ranks, mine: &[f64]) -> Vec<Vec<f64>> {
    gather_words(ranks, mine, f64::to_le_bytes, f64::from_le_bytes)
}

/// Every rank's `mine`, in rank order, on every rank.
pub fn gather_u64(ranks: &dyn Ranks, mine: &[u64]) -> Vec<Vec<u64>> {
    gather_words(ranks, mine, u64::to_le_bytes, u64::from_le_bytes)
}

/// Every rank's eight-byte words, sent as little-endian bytes.
fn gather_words<T: Copy>(ranks: &dyn Ranks, mine: &[T], to: fn(T) -> [u8; 8], from: fn([u8; 8]) -> T) -> Vec<Vec<T>> {
    let bytes: Vec<u8> = mine.iter().flat_map(|&v| to(v)).collect();
    ranks
        .all_gather(&bytes)
        .into_iter()
        .map(|b| {
            b.chunks_exact(8)
                .map(|c| from(c.try_into().expect("chunks of 8")))
                .collect()
        })
        .collect()
}

/// Rank 0's `value` on every rank (MPI_Bcast).
pub fn broadcast_u64(ranks: &dyn Ranks, value: u64) -> u64 {
    gather_u64(ranks, &[value])[0][0]
}

/// Where the job's ranks run: how many hosts, how many ranks on rank 0's, whether rank 1 is on
/// rank 0's (IOR's by-slot mapping test), and per rank whether it shares rank 0's host (mdtest's
/// `Nodemap`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nodes {
    pub nodes: usize,
    pub on_node0: usize,
    pub block_mapping: bool,
    pub map: Vec<bool>,
    /// Per rank, whether no rank before it shares its host.
    pub first_on_host: Vec<bool>,
}

impl Nodes {
    pub fn of(ranks: &dyn Ranks) -> Nodes {
        let hosts: Vec<String> = ranks
            .all_gather(ranks.host().as_bytes())
            .into_iter()
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .collect();
        let map: Vec<bool> = hosts.iter().map(|h| *h == hosts[0]).collect();
        let first_on_host = (0..hosts.len()).map(|i| !hosts[..i].contains(&hosts[i])).collect();
        let mut distinct = hosts.clone();
        distinct.sort();
        distinct.dedup();
        Nodes {
            nodes: distinct.len(),
            on_node0: map.iter().filter(|&&s| s).count(),
            block_mapping: map.get(1).is_none_or(|&s| s),
            map,
            first_on_host,
        }
    }
}

/// `--drop-caches` on a job: the first rank on each host writes dirty data back and drops the
/// page cache, dentries and inodes (root only), before the phase's own barrier. Every rank
/// learns whether every host could: all fail together, none waits for one that gave up.
pub fn drop_caches(ranks: &dyn Ranks, nodes: &Nodes) -> Result<(), String> {
    let mine = if nodes.first_on_host.get(ranks.rank()).copied().unwrap_or(true) {
        crate::sync();
        std::fs::write("/proc/sys/vm/drop_caches", "3").err()
    } else {
        None
    };
    let all = gather_u64(ranks, &[u64::from(mine.is_some())]);
    match (mine, all.iter().position(|f| f[0] != 0)) {
        (Some(e), _) => Err(format!("--drop-caches: cannot drop the caches (root only): {e}")),
        (None, Some(r)) => Err(format!("--drop-caches: rank {r} cannot drop the caches")),
        (None, None) => Ok(()),
    }
}

/// A path as a C string.
pub fn cstr(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL in a path"))
}

fn check(rc: libc::c_int) -> io::Result<libc::c_int> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

/// The POSIX calls IOR's and mdtest's POSIX back-end makes, each one system call on a path or
/// descriptor, as the originals make them.
pub mod sys {
    use super::{check, cstr};
    use std::io;
    use std::path::Path;

    /// `open(path, flags, mode)`: a descriptor closed by [`Fd::close`] (or on drop).
    pub fn open(path: &Path, flags: libc::c_int, mode: libc::mode_t) -> io::Result<Fd> {
        let c = cstr(path)?;
        // SAFETY: a valid C string.
        check(unsafe { libc::open(c.as_ptr(), flags, mode as libc::c_uint) }).map(Fd)
    }

    /// An open descriptor.
    #[derive(Debug)]
    pub struct Fd(pub libc::c_int);

    impl Fd {
        /// `close(fd)`, its result.
        pub fn close(self) -> io::Result<()> {
            let fd = self.0;
            std::mem::forget(self);
            // SAFETY: a descriptor this value owns, closed once.
            check(unsafe { libc::close(fd) }).map(drop)
        }

        pub fn lseek(&self, offset: u64) -> io::Result<()> {
            // SAFETY: a descriptor this value owns.
            let r = unsafe { libc::lseek(self.0, offset as libc::off_t, libc::SEEK_SET) };
            if r < 0 {
                Err(io::Error::last_os_error())
            } else {
                Ok(())
            }
        }

        /// `write()` until `buf` is written (IOR retries a short transfer).
        pub fn write_all(&self, mut buf: &[u8]) -> io::Result<()> {
            while !buf.is_empty() {
                // SAFETY: a descriptor this value owns and a buffer of that length.
                let n = unsafe { libc::write(self.0, buf.as_ptr().cast(), buf.len()) };
                if n < 0 {
                    return Err(io::Error::last_os_error());
                }
                buf = &buf[n as usize..];
            }
            Ok(())
        }

        /// `read()` until `buf` is full or the file ends; the bytes read.
        pub fn read_full(&self, buf: &mut [u8]) -> io::Result<usize> {
            let mut done = 0;
            while done < buf.len() {
                // SAFETY: a descriptor this value owns and the rest of a buffer.
                let n = unsafe { libc::read(self.0, buf[done..].as_mut_ptr().cast(), buf.len() - done) };
                if n < 0 {
                    return Err(io::Error::last_os_error());
                }
                if n == 0 {
                    break;
                }
                done += n as usize;
            }
            Ok(done)
        }

        pub fn fsync(&self) -> io::Result<()> {
            // SAFETY: a descriptor this value owns.
            check(unsafe { libc::fsync(self.0) }).map(drop)
        }

        pub fn ftruncate(&self, len: u64) -> io::Result<()> {
            // SAFETY: a descriptor this value owns.
            check(unsafe { libc::ftruncate(self.0, len as libc::off_t) }).map(drop)
        }
    }

    impl Drop for Fd {
        fn drop(&mut self) {
            // SAFETY: a descriptor this value owns, closed once.
            unsafe { libc::close(self.0) };
        }
    }

    /// `stat(path)`'s size.
    pub fn stat_size(path: &Path) -> io::Result<u64> {
        let c = cstr(path)?;
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: a valid C string and a stat the call fills.
        check(unsafe { libc::stat(c.as_ptr(), &mut st) })?;
        Ok(st.st_size as u64)
    }

    /// `access(path, F_OK)`.
    pub fn exists(path: &Path) -> bool {
        cstr(path).is_ok_and(|c| unsafe { libc::access(c.as_ptr(), libc::F_OK) } == 0)
    }

    pub fn unlink(path: &Path) -> io::Result<()> {
        let c = cstr(path)?;
        // SAFETY: a valid C string.
        check(unsafe { libc::unlink(c.as_ptr()) }).map(drop)
    }

    pub fn mkdir(path: &Path, mode: libc::mode_t) -> io::Result<()> {
        let c = cstr(path)?;
        // SAFETY: a valid C string.
        check(unsafe { libc::mkdir(c.as_ptr(), mode) }).map(drop)
    }

    pub fn rmdir(path: &Path) -> io::Result<()> {
        let c = cstr(path)?;
        // SAFETY: a valid C string.
        check(unsafe { libc::rmdir(c.as_ptr()) }).map(drop)
    }

    pub fn rename(from: &Path, to: &Path) -> io::Result<()> {
        let (f, t) = (cstr(from)?, cstr(to)?);
        // SAFETY: valid C strings.
        check(unsafe { libc::rename(f.as_ptr(), t.as_ptr()) }).map(drop)
    }

    /// A shared mapping of a file, unmapped by [`Map::unmap`] (or on drop).
    #[derive(Debug)]
    pub struct Map {
        ptr: *mut u8,
        len: usize,
    }

    // SAFETY: the mapping is owned by one rank's thread at a time.
    unsafe impl Send for Map {}

    impl Map {
        /// `mmap(NULL, len, prot, MAP_SHARED, fd, 0)`.
        pub fn new(fd: &Fd, len: u64, writable: bool) -> io::Result<Map> {
            let prot = libc::PROT_READ | if writable { libc::PROT_WRITE } else { 0 };
            // SAFETY: a new shared mapping of an open descriptor; the kernel checks the arguments.
            let ptr = unsafe { libc::mmap(std::ptr::null_mut(), len as usize, prot, libc::MAP_SHARED, fd.0, 0) };
            if ptr == libc::MAP_FAILED {
                return Err(io::Error::last_os_error());
            }
            Ok(Map {
                ptr: ptr.cast(),
                len: len as usize,
            })
        }

        /// Copies `buf` in at `offset` (IOR's MMAP write), or out (its read).
        pub fn copy(&self, offset: u64, buf: &mut [u8], write: bool) -> io::Result<()> {
            let end = offset as usize + buf.len();
            if end > self.len {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "a transfer past the mapping",
                ));
            }
            // SAFETY: the range lies within the mapping (checked above), which outlives the copy.
            unsafe {
                let at = self.ptr.add(offset as usize);
                if write {
                    std::ptr::copy_nonoverlapping(buf.as_ptr(), at, buf.len());
                } else {
                    std::ptr::copy_nonoverlapping(at, buf.as_mut_ptr(), buf.len());
                }
            }
            Ok(())
        }

        /// `msync(MS_SYNC)` of the whole mapping.
        pub fn msync(&self) -> io::Result<()> {
            // SAFETY: the mapping this value owns.
            check(unsafe { libc::msync(self.ptr.cast(), self.len, libc::MS_SYNC) }).map(drop)
        }

        pub fn unmap(self) -> io::Result<()> {
            let (ptr, len) = (self.ptr, self.len);
            std::mem::forget(self);
            // SAFETY: the mapping this value owned, unmapped once.
            check(unsafe { libc::munmap(ptr.cast(), len) }).map(drop)
        }
    }

    impl Drop for Map {
        fn drop(&mut self) {
            // SAFETY: the mapping this value owns, unmapped once.
            unsafe { libc::munmap(self.ptr.cast(), self.len) };
        }
    }
}

/// A small deterministic generator (splitmix64) for random offsets and the data pattern.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn draw(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number below `n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.draw() % n
    }
}

/// IOR's and mdtest's timestamp data pattern (`generate_memory_pattern`): word `i` is
/// `rank << 32 | (signature + i)`, the bytes after the last whole word their index.
pub fn timestamp_pattern(len: usize, rank: usize, signature: u64) -> Vec<u8> {
    let mut b: Vec<u8> = (0..len).map(|i| i as u8).collect();
    for (i, w) in b.chunks_exact_mut(8).enumerate() {
        let v = (rank as u64) << 32 | (signature.wrapping_add(i as u64) & 0xffff_ffff);
        w.copy_from_slice(&v.to_le_bytes());
    }
    b
}

/// Seconds since the epoch, for seeds as IOR and mdtest take `time(NULL)`.
pub fn epoch_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn takes(name: &str) -> Option<Takes> {
        match name {
            "w" | "r" | "F" => Some(Takes::Flag),
            "t" | "b" | "O" | "seed" => Some(Takes::Value),
            _ => None,
        }
    }

    #[test]
    fn words_read_flags_together_values_attached_or_apart_and_long_names() {
        let got = words("ior", &w("-wr -t 64k -b1m -O=x=1 --seed=4 --seed 5"), &takes).unwrap();
        let flat: Vec<(String, Option<String>)> = got.into_iter().map(|w| (w.flag, w.value)).collect();
        let s = |f: &str, v: Option<&str>| (f.to_string(), v.map(String::from));
        assert_eq!(
            flat,
            [
                s("-w", None),
                s("-r", None),
                s("-t", Some("64k")),
                s("-b", Some("1m")),
                s("-O", Some("x=1")),
                s("--seed", Some("4")),
                s("--seed", Some("5")),
            ]
        );
        let e = words("ior", &w("-w -q"), &takes).unwrap_err();
        assert!(e.contains("unknown option -q"), "{e}");
        let e = words("ior", &w("-t"), &takes).unwrap_err();
        assert!(e.contains("-t needs a value"), "{e}");
    }

    #[test]
    fn sizes_are_powers_of_1024() {
        assert_eq!(size("ior", "-t", "64k"), Ok(65536));
        assert_eq!(size("ior", "-b", "2M"), Ok(2 << 20));
        assert_eq!(size("ior", "-b", "8"), Ok(8));
        let e = size("ior", "-b", "3x").unwrap_err();
        assert!(e.contains("-b `3x`"), "{e}");
    }

    #[test]
    fn local_ranks_gather_numbers_and_see_one_node() {
        let handles: Vec<_> = crate::ranks::local(3)
            .into_iter()
            .map(|r| {
                std::thread::spawn(move || {
                    let g = gather_f64(r.as_ref(), &[r.rank() as f64 + 0.5]);
                    (g, Nodes::of(r.as_ref()), broadcast_u64(r.as_ref(), 7 + r.rank() as u64))
                })
            })
            .collect();
        for h in handles {
            let (g, nodes, b) = h.join().unwrap();
            assert_eq!(g, vec![vec![0.5], vec![1.5], vec![2.5]]);
            assert_eq!((nodes.nodes, nodes.on_node0, nodes.block_mapping), (1, 3, true));
            assert_eq!(b, 7);
        }
    }
}
