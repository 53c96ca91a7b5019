//! mdtest 4.0's command line: the options `fslab mdtest` takes, their defaults, mdtest's checks,
//! and the tree's shape they give.

use crate::hpc::{self, Takes};

pub const USAGE: &str = "Usage: fslab mdtest [OPTIONS] [--dir DIR]   (mdtest 4.0's options)

  -b N  branching factor of hierarchical directory structure (default 1)
  -C    only create files/dirs
  -d S  directory where the test will run (default ./out, beneath --dir)
  -D    perform test on directories only (no files)
  -e N  bytes to read from each file
  -E    only read files/dir
  -F    perform test on files only (no directories)
  -h    show this help
  -i N  number of iterations the test will run (default 1)
  -I N  number of items per directory in tree
  -n N  every process will creat/stat/read/remove # directories and files
  -N N  stride # between tasks for file/dir operation (local=0; set to 1 to avoid client cache)
  -r    only remove files or directories left behind by previous runs
  -T    only stat files/dirs
  -u    unique working directory for each task
  -v    verbosity (each instance of option increments by one)
  -w N  bytes to write to each file after it is created
  -y    sync file after writing
  -z N  depth of hierarchical directory structure (default 0)

Without -C, -T, -E or -r every phase runs (with directory renames); without -F or -D both.
";

/// mdtest's parameters, with the tree's shape worked out.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Options {
    /// `-n` (or worked out from `-I`): items per rank.
    pub items: u64,
    pub items_per_dir: u64,
    pub dir: String,
    pub files: bool,
    pub dirs: bool,
    pub depth: u32,
    pub branch: u64,
    pub unique: bool,
    pub stride: usize,
    pub iterations: u32,
    pub create: bool,
    pub stat: bool,
    pub read: bool,
    pub remove: bool,
    pub rename: bool,
    pub write_bytes: u64,
    pub read_bytes: u64,
    pub sync: bool,
    pub verbose: u32,
    pub help: bool,
    /// The directories of one tree.
    pub tree_dirs: u64,
    /// The words as mdtest prints them (`mdtest '-n' '10'`).
    pub command_line: String,
}

fn takes(name: &str) -> Option<Takes> {
    match name {
        "C" | "D" | "E" | "F" | "h" | "help" | "r" | "T" | "u" | "v" | "y" => Some(Takes::Flag),
        "b" | "d" | "e" | "i" | "I" | "n" | "N" | "w" | "z" => Some(Takes::Value),
        _ => None,
    }
}

impl Options {
    pub fn parse(args: &[String]) -> Result<Options, String> {
        let mut o = Options {
            items: 0,
            items_per_dir: 0,
            dir: "./out".into(),
            files: false,
            dirs: false,
            depth: 0,
            branch: 1,
            unique: false,
            stride: 0,
            iterations: 1,
            create: false,
            stat: false,
            read: false,
            remove: false,
            rename: false,
            write_bytes: 0,
            read_bytes: 0,
            sync: false,
            verbose: 0,
            help: false,
            tree_dirs: 1,
            command_line: std::iter::once("mdtest".to_string())
                .chain(args.iter().map(|a| format!("'{a}'")))
                .collect::<Vec<_>>()
                .join(" "),
        };
        for w in hpc::words("mdtest", args, &takes)? {
            let f = w.flag.as_str();
            let v = w.value.as_deref().unwrap_or("");
            match f {
                "-b" => o.branch = hpc::number("mdtest", f, v)?,
                "-d" => o.dir = v.to_string(),
                "-e" => o.read_bytes = hpc::size("mdtest", f, v)?,
                "-i" => o.iterations = hpc::number("mdtest", f, v)?,
                "-I" => o.items_per_dir = hpc::size("mdtest", f, v)?,
                "-n" => o.items = hpc::size("mdtest", f, v)?,
                "-N" => o.stride = hpc::number("mdtest", f, v)?,
                "-w" => o.write_bytes = hpc::size("mdtest", f, v)?,
                "-z" => o.depth = hpc::number("mdtest", f, v)?,
                "-C" => o.create = true,
                "-D" => o.dirs = true,
                "-E" => o.read = true,
                "-F" => o.files = true,
                "-h" | "--help" => o.help = true,
                "-r" => o.remove = true,
                "-T" => o.stat = true,
                "-u" => o.unique = true,
                "-v" => o.verbose += 1,
                "-y" => o.sync = true,
                _ => unreachable!("takes() lists every option"),
            }
        }
        if o.help {
            return Ok(o);
        }
        o.validate()?;
        Ok(o)
    }

    /// mdtest's md_validate_tests and its working out of the items and the tree.
    fn validate(&mut self) -> Result<(), String> {
        let e = |m: &str| Err(format!("mdtest: {m}"));
        if !(self.create || self.stat || self.read || self.remove) {
            (self.create, self.stat, self.read, self.remove, self.rename) = (true, true, true, true, true);
        }
        if !self.dirs && !self.files {
            (self.dirs, self.files) = (true, true);
        }
        if self.iterations == 0 {
            return e("-i: the test needs an iteration");
        }
        if self.branch < 1 && self.depth > 0 {
            return e("-b: branch factor must be greater than or equal to zero");
        }
        if self.items > 0 && self.items_per_dir > 0 {
            return e("-n/-I: fslab takes the number of items or the number of items per directory, not both");
        }
        if self.read && self.create && self.read_bytes > self.write_bytes {
            return e("-e/-w: When writing and reading files, read bytes must be smaller than write bytes");
        }
        self.tree_dirs = match (self.depth, self.branch) {
            (0, _) => 1,
            (d, 1) => u64::from(d) + 1,
            (d, b) => (b.pow(d + 1) - 1) / (b - 1),
        };
        if self.items_per_dir > 0 {
            self.items = self.items_per_dir * self.tree_dirs;
        } else {
            self.items_per_dir = self.items / self.tree_dirs;
            self.items = self.items_per_dir * self.tree_dirs;
        }
        Ok(())
    }

    /// mdtest's warning when reading reads nothing.
    pub fn warnings(&self) -> Vec<String> {
        let mut w = Vec::new();
        if self.read && self.files && self.read_bytes == 0 {
            w.push("Read bytes is 0, thus, a read test will actually just open/close".to_string());
        }
        w
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Result<Options, String> {
        Options::parse(&s.split_whitespace().map(String::from).collect::<Vec<_>>())
    }

    #[test]
    fn items_spread_over_the_tree_as_mdtest_s() {
        let o = p("-n 10").unwrap();
        assert!(o.create && o.stat && o.read && o.remove && o.rename && o.files && o.dirs);
        assert_eq!((o.items, o.items_per_dir, o.tree_dirs), (10, 10, 1));
        let o = p("-n 10 -z 2 -b 2 -F -C").unwrap();
        assert_eq!((o.items, o.items_per_dir, o.tree_dirs), (7, 1, 7), "10 over 7 dirs");
        assert!(o.files && !o.dirs && o.create && !o.stat && !o.rename);
        let o = p("-I 3 -z 1 -b 3 -u -N 1 -i 2 -w 4k -e 4k").unwrap();
        assert_eq!((o.items, o.items_per_dir, o.tree_dirs), (12, 3, 4));
        assert_eq!(
            (o.write_bytes, o.read_bytes, o.stride, o.iterations),
            (4096, 4096, 1, 2)
        );
        assert_eq!(
            o.command_line,
            "mdtest '-I' '3' '-z' '1' '-b' '3' '-u' '-N' '1' '-i' '2' '-w' '4k' '-e' '4k'"
        );
    }

    #[test]
    fn errors_name_the_option_at_fault() {
        for (args, needle) in [
            ("-n 4 -I 2", "-n/-I"),
            ("-n x", "-n `x`"),
            ("-q", "unknown option -q"),
            ("-e 10", "-e/-w"),
            ("-i 0", "-i:"),
            ("-z 1 -b 0", "-b:"),
        ] {
            let e = p(args).unwrap_err();
            assert!(e.contains(needle), "{args}: {e}");
        }
    }
}
