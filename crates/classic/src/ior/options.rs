//! IOR 4.0's command line: the options `fslab ior` takes, their defaults and IOR's checks.

use crate::hpc::{self, Takes};

/// IOR's usage for the options fslab takes.
pub const USAGE: &str = "Usage: fslab ior [OPTIONS] [--dir DIR]   (IOR 4.0's options)

  -a S  API for I/O [POSIX|MMAP] (default POSIX)
  -b N  blockSize -- contiguous bytes to write per task (e.g.: 8, 4k, 2m, 1g) (default 1m)
  -C    reorderTasks -- changes task ordering for readback (useful to avoid client cache)
  -D N  deadlineForStonewalling -- seconds before stopping write or read phase
  -e    fsync -- perform a fsync() operation at the end of each read/write phase
  -F    filePerProc -- file-per-process
  -g    intraTestBarriers -- use barriers between open, write/read, and close
  -h    show this help
  -i N  repetitions -- number of repetitions of test (default 1)
  -k    keepFile -- don't remove the test file(s) on program exit
  -o S  testFile -- full name for test (default testFile, beneath --dir)
  -O S  string of IOR directives: summaryFormat=[default,JSON,CSV]
  -Q N  taskPerNodeOffset for read tests use with -C (default 1)
  -r    readFile -- read existing file
  -s N  segmentCount -- number of segments (default 1)
  -t N  transferSize -- size of transfer in bytes (e.g.: 8, 4k, 2m, 1g) (default 256k)
  -v    verbose -- output information (repeating flag increases level)
  -w    writeFile -- write file
  -z    randomOffset -- access is to random, not sequential, offsets within a file
  --random-offset-seed N  the seed for -z

Without -w or -r IOR writes and reads.
";

/// IOR's I/O back-ends that fslab has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Api {
    Posix,
    Mmap,
}

impl Api {
    pub fn name(self) -> &'static str {
        match self {
            Api::Posix => "POSIX",
            Api::Mmap => "MMAP",
        }
    }
}

/// `-O summaryFormat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Format {
    Default,
    Json,
    Csv,
}

/// One IOR test's parameters.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Options {
    pub api: Api,
    pub write: bool,
    pub read: bool,
    pub transfer: u64,
    pub block: u64,
    pub segments: u64,
    pub file_per_proc: bool,
    pub random: bool,
    pub seed: Option<u64>,
    pub fsync: bool,
    pub reorder: bool,
    pub task_offset: u64,
    pub intra_barriers: bool,
    /// `-D`: seconds; 0 for none.
    pub deadline: u64,
    pub reps: u32,
    pub test_file: String,
    pub keep: bool,
    pub format: Format,
    pub verbose: u32,
    pub help: bool,
    /// The words as given, for the `Command line` IOR prints.
    pub command_line: String,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            api: Api::Posix,
            write: false,
            read: false,
            transfer: 262144,
            block: 1048576,
            segments: 1,
            file_per_proc: false,
            random: false,
            seed: None,
            fsync: false,
            reorder: false,
            task_offset: 1,
            intra_barriers: false,
            deadline: 0,
            reps: 1,
            test_file: "testFile".into(),
            keep: false,
            format: Format::Default,
            verbose: 0,
            help: false,
            command_line: String::new(),
        }
    }
}

fn takes(name: &str) -> Option<Takes> {
    match name {
        "C" | "e" | "F" | "g" | "h" | "help" | "k" | "r" | "v" | "w" | "z" => Some(Takes::Flag),
        "a" | "b" | "D" | "i" | "o" | "O" | "Q" | "s" | "t" | "random-offset-seed" => Some(Takes::Value),
        _ => None,
    }
}

impl Options {
    /// Reads IOR's options and checks them as IOR does.
    pub fn parse(args: &[String]) -> Result<Options, String> {
        let mut o = Options {
            command_line: std::iter::once("ior")
                .chain(args.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" "),
            ..Options::default()
        };
        for w in hpc::words("ior", args, &takes)? {
            let f = w.flag.as_str();
            let v = w.value.as_deref().unwrap_or("");
            let size = || hpc::size("ior", f, v);
            match f {
                "-a" => {
                    o.api = match v.to_ascii_uppercase().as_str() {
                        "POSIX" => Api::Posix,
                        "MMAP" => Api::Mmap,
                        _ => return Err(format!("ior: -a {v}: fslab has the POSIX and MMAP APIs")),
                    }
                }
                "-b" => o.block = size()?,
                "-t" => o.transfer = size()?,
                "-s" => o.segments = hpc::number("ior", f, v)?,
                "-i" => o.reps = hpc::number("ior", f, v)?,
                "-D" => o.deadline = hpc::number("ior", f, v)?,
                "-Q" => o.task_offset = hpc::number("ior", f, v)?,
                "-o" => o.test_file = v.to_string(),
                "--random-offset-seed" => o.seed = Some(hpc::number("ior", f, v)?),
                "-O" => o.directives(v)?,
                "-C" => o.reorder = true,
                "-e" => o.fsync = true,
                "-F" => o.file_per_proc = true,
                "-g" => o.intra_barriers = true,
                "-h" | "--help" => o.help = true,
                "-k" => o.keep = true,
                "-r" => o.read = true,
                "-v" => o.verbose += 1,
                "-w" => o.write = true,
                "-z" => o.random = true,
                _ => unreachable!("takes() lists every option"),
            }
        }
        if !o.write && !o.read {
            o.write = true;
            o.read = true;
        }
        if !o.help {
            o.validate()?;
        }
        Ok(o)
    }

    fn directives(&mut self, v: &str) -> Result<(), String> {
        for d in v.split(',').filter(|d| !d.is_empty()) {
            let (k, val) = d
                .split_once('=')
                .ok_or_else(|| format!("ior: -O {d}: a directive is key=value"))?;
            match k {
                "summaryFormat" => {
                    self.format = match val.to_ascii_lowercase().as_str() {
                        "default" => Format::Default,
                        "json" => Format::Json,
                        "csv" => Format::Csv,
                        _ => return Err(format!("ior: -O summaryFormat={val}: Unknown summaryFormat")),
                    }
                }
                _ => return Err(format!("ior: -O {k}: fslab takes the directive summaryFormat only")),
            }
        }
        Ok(())
    }

    /// IOR's ValidateTests, for the options fslab has.
    fn validate(&self) -> Result<(), String> {
        let e = |m: &str| Err(format!("ior: {m}"));
        if self.reps == 0 {
            return e("-i: too few test repetitions");
        }
        if !self.block.is_multiple_of(8) {
            return e("-b: block size must be a multiple of access size");
        }
        if !self.transfer.is_multiple_of(8) {
            return e("-t: transfer size must be a multiple of access size");
        }
        if self.transfer == 0 {
            return e("-t: test will not complete with zero transfer size");
        }
        if !self.block.is_multiple_of(self.transfer) {
            return e("-b/-t: block size must be a multiple of transfer size");
        }
        if self.random && self.block == self.transfer {
            return e("-z: IOR will randomize access within a block and repeats the same pattern for all segments, therefore choose blocksize > transferSize");
        }
        if self.random && self.reorder && !self.file_per_proc {
            return e("-z/-C: random offset and constant reorder tasks specified with single-shared-file. Choose one and resubmit");
        }
        if self.segments == 0 {
            return e("-s: segment count must be positive value");
        }
        Ok(())
    }

    /// Transfers per block.
    pub fn per_block(&self) -> u64 {
        self.block / self.transfer
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Result<Options, String> {
        Options::parse(&s.split_whitespace().map(String::from).collect::<Vec<_>>())
    }

    #[test]
    fn defaults_are_ior_s_and_no_w_or_r_is_both() {
        let o = p("").unwrap();
        assert_eq!((o.transfer, o.block, o.segments, o.reps), (262144, 1048576, 1, 1));
        assert!(o.write && o.read && o.api == Api::Posix && o.test_file == "testFile");
        let o = p("-a mmap -w -t 4k -b 64k -s 3 -F -z -e -C -D 5 -i 2 -o f -k -O summaryFormat=CSV -vv").unwrap();
        assert_eq!(o.api, Api::Mmap);
        assert!(o.write && !o.read && o.file_per_proc && o.random && o.fsync && o.reorder && o.keep);
        assert_eq!(
            (o.transfer, o.block, o.segments, o.deadline, o.reps),
            (4096, 65536, 3, 5, 2)
        );
        assert_eq!((o.format, o.verbose, o.test_file.as_str()), (Format::Csv, 2, "f"));
        assert_eq!(o.command_line.split(' ').next(), Some("ior"));
    }

    #[test]
    fn errors_name_the_option_at_fault() {
        for (args, needle) in [
            ("-t 3k -b 8k", "-b/-t: block size must be a multiple of transfer size"),
            ("-t 0", "-t: test will not complete"),
            ("-b 12", "-b: block size must be a multiple of access size"),
            ("-a HDF5", "-a HDF5"),
            ("-x", "unknown option -x"),
            ("-O summaryFormat=XML", "Unknown summaryFormat"),
            ("-O foo=1", "-O foo"),
            ("-s two", "-s `two`"),
            ("-z -t 1m -b 1m", "-z:"),
            ("-i 0", "-i:"),
        ] {
            let e = p(args).unwrap_err();
            assert!(e.contains(needle), "{args}: {e}");
        }
    }
}
