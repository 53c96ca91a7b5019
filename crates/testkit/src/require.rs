//! What a test needs from the machine: each check fails the test with a message naming what is
//! missing and how to get it, so that a system-tier test run without root or a package fails
//! loudly instead of passing or being skipped.

use std::path::{Path, PathBuf};

/// The running test, as libtest names its thread.
fn test_name() -> String {
    std::thread::current().name().unwrap_or("this test").to_string()
}

/// Fails the test unless it runs as root (loop devices, mkfs, mount, sysfs and drop_caches
/// need it).
pub fn require_root() {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let euid = unsafe { libc::geteuid() };
    assert!(
        euid == 0,
        "{} needs root (loop devices, mount, mkfs or sysfs), and runs as uid {euid}: run the system \
         tier as root, as CI does (cargo test --workspace -- --ignored)",
        test_name()
    );
}

/// Fails the test unless `program` is installed (on $PATH, or in the sbin directories a
/// non-login root may lack), naming the Debian `package` that has it.
pub fn require_tool(program: &str, package: &str) {
    assert!(
        self::program(program).is_some(),
        "{} needs {program}, which is not installed: apt-get install {package}",
        test_name()
    );
}

/// Fails the test unless the file at `path` is there, naming the Debian `package` that has it.
pub fn require_file(path: impl AsRef<Path>, package: &str) {
    let path = path.as_ref();
    assert!(
        path.is_file(),
        "{} needs {}, which is not there: apt-get install {package}",
        test_name(),
        path.display()
    );
}

/// Where `name` is installed: on $PATH, or in the sbin directories a non-login root lacks.
pub fn program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin"].map(PathBuf::from))
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}
