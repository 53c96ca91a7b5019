//! `fslab doctor`: what this machine can and cannot run (the lab's own needs, each filesystem,
//! the engine's I/O paths, the classic benchmarks' files, the originals to compare against),
//! each missing thing with the command that provides it. It only looks: nothing is formatted,
//! mounted or written but one small file in the temporary directory, removed at once.

use crate::filesystem::Support;
use crate::tool::{find_program, package_of};
use serde::Serialize;
use std::path::Path;

/// One thing fslab may need, and whether this machine has it.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    /// The part of fslab that needs it: `lab`, `filesystems`, `engine`, `classic`, `originals`.
    pub area: &'static str,
    pub what: String,
    pub ok: bool,
    /// What was found, or what is missing.
    pub detail: String,
    /// The command that provides it, when it is missing and one does.
    pub fix: Option<String>,
    /// Whether studies cannot run at all without it (the rest only limits what they can run).
    pub essential: bool,
}

impl Finding {
    fn new(area: &'static str, what: &str, ok: bool, detail: String) -> Finding {
        Finding {
            area,
            what: what.to_string(),
            ok,
            detail,
            fix: None,
            essential: false,
        }
    }

    fn fix(mut self, fix: impl Into<String>) -> Finding {
        if !self.ok {
            self.fix = Some(fix.into());
        }
        self
    }

    fn essential(mut self) -> Finding {
        self.essential = true;
        self
    }
}

/// Looks at this machine.
pub fn examine() -> Vec<Finding> {
    let mut found = lab();
    found.extend(filesystems());
    found.extend(engine(&std::env::temp_dir()));
    found.extend(classic());
    found.extend(originals());
    found
}

/// A program: found (with its path) or missing (with the package that provides it).
fn program(area: &'static str, name: &str) -> Finding {
    let found = find_program(name);
    let install = match package_of(name) {
        Some(p) => format!("apt-get install {p}"),
        None => format!("install the package that provides {name}"),
    };
    Finding::new(
        area,
        name,
        found.is_some(),
        match &found {
            Some(p) => p.display().to_string(),
            None => "not installed".to_string(),
        },
    )
    .fix(install)
}

fn lab() -> Vec<Finding> {
    let root = rustix::process::geteuid().is_root();
    let loop_control = Path::new("/dev/loop-control").exists();
    vec![
        Finding::new(
            "lab",
            "root",
            root,
            if root {
                "running as root".into()
            } else {
                "studies make loop devices, format and mount them: run them as root".into()
            },
        )
        .fix("sudo fslab study run ...")
        .essential(),
        Finding::new(
            "lab",
            "loop devices",
            loop_control,
            if loop_control {
                "/dev/loop-control".into()
            } else {
                "no /dev/loop-control".into()
            },
        )
        .fix("modprobe loop")
        .essential(),
        program("lab", "losetup").essential(),
        program("lab", "mount").essential(),
        program("lab", "wipefs"),
        program("lab", "fsfreeze"),
        {
            let ok = root && Path::new("/proc/sys/vm/drop_caches").exists();
            Finding::new(
                "lab",
                "drop_caches",
                ok,
                if ok {
                    "/proc/sys/vm/drop_caches (cold-cache runs)".into()
                } else {
                    "cold-cache runs need root and /proc/sys/vm/drop_caches".into()
                },
            )
            .fix("run as root")
        },
    ]
}

fn filesystems() -> Vec<Finding> {
    Support::known()
        .iter()
        .map(|s| {
            let kernel = crate::filesystem::kernel_has(s.fs_type);
            let mut tools: Vec<&str> = Vec::new();
            tools.extend(s.mkfs);
            tools.extend(s.fsck.map(|(f, _)| f));
            let missing: Vec<&str> = tools.iter().copied().filter(|t| find_program(t).is_none()).collect();
            // fsck is only the check after a run: its absence alone does not stop the type.
            let ok = kernel && s.mkfs.is_none_or(|m| !missing.contains(&m));
            let mut lacks = Vec::new();
            let mut fixes = Vec::new();
            if !kernel {
                lacks.push(format!("not in the kernel (`modprobe {}` failed)", s.fs_type));
                fixes.push(format!("a kernel with the {} module", s.fs_type));
            }
            if !missing.is_empty() {
                lacks.push(format!("{} not installed", missing.join(", ")));
                let mut packages: Vec<&str> = missing.iter().filter_map(|t| package_of(t)).collect();
                packages.dedup();
                fixes.push(format!("apt-get install {}", packages.join(" ")));
            }
            let detail = match (lacks.is_empty(), tools.is_empty()) {
                (true, true) => "in the kernel".to_string(),
                (true, false) => format!("in the kernel; {}", tools.join(", ")),
                (false, _) => lacks.join("; "),
            };
            let mut f = Finding::new("filesystems", s.fs_type, ok, detail);
            if !fixes.is_empty() {
                f.fix = Some(fixes.join(", and "));
            }
            f
        })
        .collect()
}

/// io_uring (a ring of one entry, made and closed) and O_DIRECT (one aligned write to a file
/// in `dir`, removed).
fn engine(dir: &Path) -> Vec<Finding> {
    let uring = uring_works();
    let direct = direct_works(dir);
    vec![
        Finding::new(
            "engine",
            "io_uring",
            uring.is_ok(),
            match &uring {
                Ok(()) => "io_uring_setup works (engine = \"io_uring\")".into(),
                Err(e) => format!("io_uring_setup: {e}"),
            },
        )
        .fix("a kernel with io_uring, and sysctl kernel.io_uring_disabled=0"),
        Finding::new(
            "engine",
            "O_DIRECT",
            direct.is_ok(),
            match &direct {
                Ok(()) => format!("in {}", dir.display()),
                Err(e) => format!("in {}: {e}", dir.display()),
            },
        )
        .fix("--dir on a filesystem that supports O_DIRECT"),
    ]
}

fn uring_works() -> std::io::Result<()> {
    // struct io_uring_params is 120 bytes; zeroes ask for the defaults.
    let mut params = [0u8; 120];
    // SAFETY: io_uring_setup reads and writes `params`, which outlives the call.
    let fd = unsafe { libc::syscall(libc::SYS_io_uring_setup, 1u32, params.as_mut_ptr()) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the kernel just gave us this descriptor.
    unsafe { libc::close(fd as i32) };
    Ok(())
}

fn direct_works(dir: &Path) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let file = tempfile::Builder::new().prefix(".fslab-doctor-").tempfile_in(dir)?;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_DIRECT)
        .open(file.path())?;
    let layout = std::alloc::Layout::from_size_align(4096, 4096).expect("a valid layout");
    // SAFETY: the layout is non-zero; the block is freed below.
    let block = unsafe { std::alloc::alloc_zeroed(layout) };
    if block.is_null() {
        return Err(std::io::Error::other("out of memory"));
    }
    // SAFETY: `block` holds 4096 initialised bytes.
    let written = f.write_all(unsafe { std::slice::from_raw_parts(block, 4096) });
    // SAFETY: allocated above with this layout.
    unsafe { std::alloc::dealloc(block, layout) };
    written
}

fn classic() -> Vec<Finding> {
    let loadfile = fslab_classic::dbench::DEFAULT_LOADFILE;
    let ok = Path::new(loadfile).is_file();
    vec![Finding::new(
        "classic",
        "dbench's loadfile",
        ok,
        if ok {
            loadfile.to_string()
        } else {
            format!("no {loadfile}: `fslab dbench` needs -c FILE")
        },
    )
    .fix("apt-get install dbench")]
}

/// The originals fslab's figures can be checked against; none is needed to run fslab.
fn originals() -> Vec<Finding> {
    [
        ("fio", "fio"),
        ("dbench", "dbench"),
        ("sysbench", "sysbench"),
        ("strace", "strace"),
    ]
    .iter()
    .map(|(name, package)| {
        let found = find_program(name);
        Finding::new(
            "originals",
            name,
            found.is_some(),
            match &found {
                Some(p) => p.display().to_string(),
                None => "not installed (optional: to compare fslab against)".into(),
            },
        )
        .fix(format!("apt-get install {package}"))
    })
    .collect()
}

/// The findings as a table by area, with the fixes for what is missing.
pub fn render(found: &[Finding]) -> String {
    let mut out = String::from("fslab doctor: what this machine can run\n");
    let width = found.iter().map(|f| f.what.chars().count()).max().unwrap_or(0);
    let mut area = "";
    for f in found {
        if f.area != area {
            area = f.area;
            out.push_str(&format!("\n{}\n", heading(area)));
        }
        let mark = if f.ok { "ok " } else { "no " };
        out.push_str(&format!("  {mark} {:<width$}  {}\n", f.what, f.detail));
        if let Some(fix) = &f.fix {
            out.push_str(&format!("      {:<width$}  fix: {fix}\n", ""));
        }
    }
    let missing: Vec<&Finding> = found.iter().filter(|f| f.essential && !f.ok).collect();
    out.push('\n');
    if missing.is_empty() {
        out.push_str("studies can run here; the cells that need what is marked `no` are unsupported\n");
    } else {
        out.push_str(&format!(
            "studies cannot run here until these are fixed: {}\n",
            missing.iter().map(|f| f.what.as_str()).collect::<Vec<_>>().join(", ")
        ));
    }
    out
}

fn heading(area: &str) -> &'static str {
    match area {
        "lab" => "the lab (studies)",
        "filesystems" => "filesystems (kernel and tools)",
        "engine" => "the engine's I/O",
        "classic" => "the classic benchmarks",
        _ => "originals to compare against (optional)",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_missing_thing_says_how_to_get_it() {
        let found = examine();
        for f in &found {
            assert!(f.ok || f.fix.is_some(), "{f:?}");
        }
        // Each area once, in order.
        let areas: Vec<&str> = found.iter().map(|f| f.area).collect();
        let mut deduped = areas.clone();
        deduped.dedup();
        assert_eq!(deduped, ["lab", "filesystems", "engine", "classic", "originals"]);
        // fslab knows every filesystem type of the study grammar.
        for fs in ["ext4", "xfs", "btrfs", "tmpfs", "jfs", "f2fs"] {
            assert!(found.iter().any(|f| f.area == "filesystems" && f.what == fs), "{fs}");
        }
    }

    #[test]
    fn o_direct_on_a_directory_that_is_gone_says_where() {
        let gone = Path::new("/nonexistent/fslab-doctor");
        let f = engine(gone);
        let direct = f.iter().find(|f| f.what == "O_DIRECT").unwrap();
        assert!(!direct.ok);
        assert!(
            direct.detail.starts_with("in /nonexistent/fslab-doctor: "),
            "{}",
            direct.detail
        );
        assert!(direct.detail.contains("No such file"), "{}", direct.detail);
    }

    #[test]
    fn the_table_ends_with_what_blocks_studies() {
        let found = vec![
            Finding::new("lab", "root", false, "not root".into())
                .fix("sudo")
                .essential(),
            Finding::new("filesystems", "jfs", false, "no jfs".into()).fix("apt-get install jfsutils"),
            Finding::new("filesystems", "ext4", true, "in the kernel".into()),
        ];
        let text = render(&found);
        assert!(text.contains("  no  root  not root\n            fix: sudo\n"), "{text}");
        assert!(text.contains("  ok  ext4"), "{text}");
        assert!(
            text.ends_with("studies cannot run here until these are fixed: root\n"),
            "{text}"
        );
        let fine = render(&found[1..]);
        assert!(
            fine.ends_with("the cells that need what is marked `no` are unsupported\n"),
            "{fine}"
        );
    }
}
