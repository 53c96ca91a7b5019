//! A generated tree with the shape of the Linux 2.6.19 source tree that seed 004 extracted 2310
//! times: 1252 directories (the top one included), 20936 files and 240690 KiB of file content
//! (the seed's archive size, taken as the content), so a quick study or CI can fill a filesystem
//! the way seed 004 did without an archive.
//!
//! Directories hang under the kernel's top-level ones (drivers, arch, include...) in about the
//! kernel's proportions, at most seven levels deep, each with a Makefile and often a Kconfig; the
//! other files are `.c`, `.h`, `.S` and text files. Sizes are log-normal (median about 5 KiB, as
//! kernel sources are) scaled so that they add up to exactly 240690 KiB. Content is C-like text
//! (so a compressing filesystem compresses it about as it would compress source code), cut from
//! one 1 MiB pattern at a random place for each file. Everything comes from the seed: the same
//! seed gives the same names, sizes and bytes.

use super::tree::{Builder, DirId, Extent, Tree, ROOT};
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use std::collections::HashSet;
use std::ffi::OsStr;

/// Directories, the top one included.
pub const DIRS: u64 = 1252;
pub const FILES: u64 = 20936;
/// Bytes of file content.
pub const BYTES: u64 = 240_690 * 1024;

const TOP: &str = "linux";
/// Spread of the log-normal sizes: with the seed's mean of about 11.5 KiB, a median of 5 KiB.
const SIGMA: f64 = 1.3;
const MAX_FILE: u64 = 2 << 20;
const MAX_DEPTH: usize = 7;
const PATTERN: usize = 1 << 20;

/// The kernel's top-level directories and the share of the other directories beneath each.
const TOP_DIRS: [(&str, u32); 17] = [
    ("Documentation", 4),
    ("arch", 22),
    ("block", 1),
    ("crypto", 1),
    ("drivers", 36),
    ("fs", 8),
    ("include", 11),
    ("init", 0),
    ("ipc", 0),
    ("kernel", 1),
    ("lib", 1),
    ("mm", 0),
    ("net", 8),
    ("scripts", 1),
    ("security", 1),
    ("sound", 5),
    ("usr", 0),
];
const TOP_FILES: [&str; 7] = [
    "COPYING",
    "CREDITS",
    "Kbuild",
    "MAINTAINERS",
    "Makefile",
    "README",
    "REPORTING-BUGS",
];
const WORDS: [&str; 48] = [
    "acpi", "alloc", "audio", "base", "bus", "cache", "char", "clock", "core", "cpu", "dev", "dma", "ether", "fb",
    "gpio", "hid", "host", "i2c", "input", "io", "irq", "kernel", "lock", "mem", "misc", "mmc", "mtd", "net", "nfs",
    "pci", "phy", "platform", "power", "proc", "ring", "rtc", "scsi", "serial", "sock", "spi", "sync", "timer", "tty",
    "usb", "util", "video", "wireless", "xfer",
];
/// File name endings and their weights.
const EXTENSIONS: [(&str, u32); 5] = [(".c", 50), (".h", 38), (".S", 3), (".txt", 4), ("", 5)];
const TOKENS: [&str; 32] = [
    "static",
    "int",
    "struct",
    "return",
    "if",
    "else",
    "for",
    "unsigned",
    "long",
    "void",
    "const",
    "char",
    "*dev",
    "->",
    "=",
    "==",
    "&&",
    "0;",
    "NULL;",
    "(",
    ")",
    "{",
    "}",
    "ret",
    "err",
    "priv",
    "buf",
    "len",
    "spin_lock",
    "goto out;",
    "sizeof",
    "u32",
];

/// The generated tree for `seed`.
pub(crate) fn kernel_tree(seed: u64) -> Tree {
    let mut rng = SmallRng::seed_from_u64(seed ^ 0x6b65_726e_656c);
    let shape = Shape::generate(&mut rng);
    let mut sizes = sizes(&mut rng, FILES as usize).into_iter();
    let mut builder = Builder::new();
    shape.emit(0, ROOT, &mut builder, &mut sizes, &mut rng);
    builder.finish(format!("synthetic kernel tree (seed {seed})"), pattern(&mut rng))
}

/// The directories and files' names, before they are laid out in extraction order.
struct Shape {
    names: Vec<String>,
    children: Vec<Vec<usize>>,
    files: Vec<Vec<String>>,
    /// Every name in each directory, its subdirectories' and its files'.
    taken: Vec<HashSet<String>>,
}

impl Shape {
    fn generate(rng: &mut SmallRng) -> Shape {
        let mut shape = Shape {
            names: vec![TOP.to_string()],
            children: vec![Vec::new()],
            files: vec![Vec::new()],
            taken: vec![HashSet::new()],
        };
        let tops: Vec<usize> = TOP_DIRS.iter().map(|(name, _)| shape.add_dir(0, name)).collect();
        let weights: Vec<u32> = TOP_DIRS.iter().map(|t| t.1).collect();
        while (shape.names.len() as u64) < DIRS {
            let mut at = tops[pick(rng, &weights)];
            let mut depth = 2;
            while depth < MAX_DEPTH && !shape.children[at].is_empty() && rng.random_bool(0.6) {
                at = shape.children[at][rng.random_range(0..shape.children[at].len())];
                depth += 1;
            }
            let name = shape.free_name(at, rng, "");
            shape.add_dir(at, &name);
        }
        shape.add_files(rng);
        shape
    }

    fn add_dir(&mut self, parent: usize, name: &str) -> usize {
        self.names.push(name.to_string());
        self.children.push(Vec::new());
        self.files.push(Vec::new());
        self.taken.push(HashSet::new());
        self.taken[parent].insert(name.to_string());
        let id = self.names.len() - 1;
        self.children[parent].push(id);
        id
    }

    fn add_file(&mut self, dir: usize, name: &str) {
        self.taken[dir].insert(name.to_string());
        self.files[dir].push(name.to_string());
    }

    fn add_files(&mut self, rng: &mut SmallRng) {
        for name in TOP_FILES {
            self.add_file(0, name);
        }
        for d in 1..self.names.len() {
            self.add_file(d, "Makefile");
            if rng.random_bool(0.3) {
                self.add_file(d, "Kconfig");
            }
        }
        let weights: Vec<u32> = EXTENSIONS.iter().map(|e| e.1).collect();
        let mut count: u64 = self.files.iter().map(|f| f.len() as u64).sum();
        while count < FILES {
            let d = rng.random_range(1..self.names.len());
            let ext = EXTENSIONS[pick(rng, &weights)].0;
            let name = self.free_name(d, rng, ext);
            self.add_file(d, &name);
            count += 1;
        }
    }

    /// A name like `usb_core.c` or `pci2` that nothing in `dir` has yet.
    fn free_name(&self, dir: usize, rng: &mut SmallRng, ext: &str) -> String {
        let two = rng.random_bool(0.5);
        let mut word = || WORDS[rng.random_range(0..WORDS.len())];
        let base = if two {
            word().to_string()
        } else {
            format!("{}_{}", word(), word())
        };
        (0..)
            .map(|i| {
                if i == 0 {
                    format!("{base}{ext}")
                } else {
                    format!("{base}{i}{ext}")
                }
            })
            .find(|n| !self.taken[dir].contains(n))
            .expect("some suffix is free")
    }

    /// Adds directory `d` in `parent`, then its files and, depth first, its subdirectories,
    /// each sorted by name.
    fn emit(
        &self,
        d: usize,
        parent: DirId,
        builder: &mut Builder,
        sizes: &mut impl Iterator<Item = u64>,
        rng: &mut SmallRng,
    ) {
        let dir = builder.mkdir_in(parent, OsStr::new(&self.names[d]));
        let mut files: Vec<&String> = self.files[d].iter().collect();
        files.sort();
        for name in files {
            let data = Extent {
                start: rng.random_range(0..PATTERN as u64),
                len: sizes.next().expect("a size for every file"),
            };
            builder.file_in(dir, OsStr::new(name), 0o644, data);
        }
        let mut children = self.children[d].clone();
        children.sort_by(|a, b| self.names[*a].cmp(&self.names[*b]));
        for c in children {
            self.emit(c, dir, builder, sizes, rng);
        }
    }
}

/// An index drawn with the given weights.
fn pick(rng: &mut SmallRng, weights: &[u32]) -> usize {
    let mut at = rng.random_range(0..weights.iter().sum::<u32>());
    for (i, w) in weights.iter().enumerate() {
        if at < *w {
            return i;
        }
        at -= w;
    }
    weights.len() - 1
}

/// `n` log-normal sizes adding up to exactly [`BYTES`].
fn sizes(rng: &mut SmallRng, n: usize) -> Vec<u64> {
    let mean = BYTES as f64 / n as f64;
    let mu = mean.ln() - SIGMA * SIGMA / 2.0;
    let raw: Vec<f64> = (0..n)
        .map(|_| (mu + SIGMA * normal(rng)).exp().clamp(1.0, MAX_FILE as f64))
        .collect();
    let scale = BYTES as f64 / raw.iter().sum::<f64>();
    let mut sizes: Vec<u64> = raw.iter().map(|s| ((s * scale) as u64).max(1)).collect();
    let sum: u64 = sizes.iter().sum();
    let largest = (0..n).max_by_key(|&i| sizes[i]).unwrap_or(0);
    sizes[largest] = (sizes[largest] + BYTES).saturating_sub(sum);
    sizes
}

/// A standard normal draw (Box-Muller).
fn normal(rng: &mut SmallRng) -> f64 {
    let u1: f64 = 1.0 - rng.random::<f64>();
    let u2: f64 = rng.random();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// 1 MiB of C-like text that every file's content is cut from.
fn pattern(rng: &mut SmallRng) -> Vec<u8> {
    let mut text = Vec::with_capacity(PATTERN + 64);
    while text.len() < PATTERN {
        text.extend(std::iter::repeat_n(b'\t', rng.random_range(0..3)));
        for i in 0..rng.random_range(2..9) {
            if i > 0 {
                text.push(b' ');
            }
            text.extend_from_slice(TOKENS[rng.random_range(0..TOKENS.len())].as_bytes());
        }
        text.push(b'\n');
    }
    text.truncate(PATTERN);
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_add_up_exactly_and_look_like_source_files() {
        let mut rng = SmallRng::seed_from_u64(3);
        let mut sizes = sizes(&mut rng, FILES as usize);
        assert_eq!(sizes.iter().sum::<u64>(), BYTES);
        assert!(sizes.iter().all(|&s| s >= 1));
        sizes.sort_unstable();
        let median = sizes[sizes.len() / 2];
        assert!((3 << 10..8 << 10).contains(&median), "median {median}");
    }
}
