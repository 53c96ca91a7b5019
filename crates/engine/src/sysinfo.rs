//! Facts about the machine, recorded alongside each benchmark result.
//!
//! [`SystemInfo::collect`] gathers the host name and kernel release (from
//! `uname`), the OS name (`PRETTY_NAME` from `/etc/os-release`, falling back
//! to `/usr/lib/os-release`), the number of online CPUs, the CPU model (the
//! first `model name` of `/proc/cpuinfo`) and the total memory (`MemTotal`
//! of `/proc/meminfo`). Anything that cannot be determined is left empty or
//! zero; collecting never fails or panics.

use serde::{Deserialize, Serialize};

/// Description of the machine a result was measured on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SystemInfo {
    /// Host name (`uname` nodename).
    pub hostname: String,
    /// Kernel release (`uname -r`).
    pub kernel: String,
    /// `PRETTY_NAME` from os-release, or `""` if unknown.
    pub os: String,
    /// Number of online CPUs.
    pub cpus: usize,
    /// First `model name` of `/proc/cpuinfo`, or `""` if absent.
    pub cpu_model: String,
    /// Total memory in bytes (`MemTotal`), or 0 if unknown.
    pub memory_bytes: u64,
}

/// This machine's host name, as `uname -n` prints it.
pub fn host_name() -> String {
    rustix::system::uname().nodename().to_string_lossy().into_owned()
}

impl SystemInfo {
    /// The facts about the current machine, collected once per process: a run repeated many
    /// times (IOzone's automatic mode) then does not read `/proc/cpuinfo` (whose `cpu MHz`
    /// interrupts every CPU) between two measurements.
    pub fn this_machine() -> SystemInfo {
        static ONCE: std::sync::OnceLock<SystemInfo> = std::sync::OnceLock::new();
        ONCE.get_or_init(SystemInfo::collect).clone()
    }

    /// Collects the facts about the current machine.
    pub fn collect() -> SystemInfo {
        let uname = rustix::system::uname();
        let os = ["/etc/os-release", "/usr/lib/os-release"]
            .iter()
            .find_map(|path| {
                std::fs::read_to_string(path)
                    .ok()
                    .and_then(|text| parse_os_release_pretty_name(&text))
            })
            .unwrap_or_default();
        let cpu_model = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|text| parse_cpuinfo_model(&text))
            .unwrap_or_default();
        let memory_bytes = std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|text| parse_meminfo_total(&text))
            .unwrap_or(0);
        SystemInfo {
            hostname: host_name(),
            kernel: uname.release().to_string_lossy().into_owned(),
            os,
            cpus: online_cpus(),
            cpu_model,
            memory_bytes,
        }
    }
}

/// Number of online CPUs, falling back to the available parallelism and
/// finally to 1.
pub(crate) fn online_cpus() -> usize {
    // SAFETY: sysconf has no memory-safety preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    match usize::try_from(n) {
        Ok(n) if n >= 1 => n,
        _ => std::thread::available_parallelism().map_or(1, |n| n.get()),
    }
}

/// Extracts `PRETTY_NAME` from os-release text, removing shell-style quotes
/// and backslash escapes. `None` if absent or empty.
fn parse_os_release_pretty_name(text: &str) -> Option<String> {
    let value = text.lines().find_map(|line| {
        let (key, value) = line.trim().split_once('=')?;
        (key.trim() == "PRETTY_NAME").then_some(value.trim())
    })?;
    let value = unquote(value);
    (!value.is_empty()).then_some(value)
}

/// Undoes the shell-compatible quoting used by os-release values.
fn unquote(value: &str) -> String {
    let bytes = value.as_bytes();
    if bytes.len() >= 2 && bytes[0] == b'\'' && bytes[bytes.len() - 1] == b'\'' {
        // Single quotes: contents are literal.
        return value[1..value.len() - 1].to_string();
    }
    let inner = if bytes.len() >= 2 && bytes[0] == b'"' && bytes[bytes.len() - 1] == b'"' {
        &value[1..value.len() - 1]
    } else {
        value
    };
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(next) = chars.next() {
                out.push(next);
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The value of the first `model name` line of `/proc/cpuinfo` text.
/// `None` if there is none (e.g. on some ARM kernels) or it is empty.
fn parse_cpuinfo_model(text: &str) -> Option<String> {
    text.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        if key.trim() != "model name" {
            return None;
        }
        let value = value.trim();
        (!value.is_empty()).then(|| value.to_string())
    })
}

/// `MemTotal` of `/proc/meminfo` text, in bytes.
fn parse_meminfo_total(text: &str) -> Option<u64> {
    parse_meminfo(text, "MemTotal:")
}

/// The memory this machine can give without swapping (`MemAvailable` of `/proc/meminfo`), in
/// bytes; none where the kernel does not say.
pub(crate) fn memory_available() -> Option<u64> {
    parse_meminfo(&std::fs::read_to_string("/proc/meminfo").ok()?, "MemAvailable:")
}

/// The amount after `key` in `/proc/meminfo` text, in bytes.
fn parse_meminfo(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        let rest = line.strip_prefix(key)?;
        let mut words = rest.split_whitespace();
        let amount: u64 = words.next()?.parse().ok()?;
        let multiplier = match words.next() {
            None => 1,
            Some(unit) if unit.eq_ignore_ascii_case("kb") => 1024,
            Some(unit) if unit.eq_ignore_ascii_case("mb") => 1024 * 1024,
            Some(unit) if unit.eq_ignore_ascii_case("gb") => 1024 * 1024 * 1024,
            Some(_) => return None,
        };
        amount.checked_mul(multiplier)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn os_release_pretty_name() {
        let text = r#"NAME="Ubuntu"
VERSION="24.04.1 LTS (Noble Numbat)"
ID=ubuntu
PRETTY_NAME="Ubuntu 24.04.1 LTS"
VERSION_ID="24.04"
"#;
        assert_eq!(
            parse_os_release_pretty_name(text).as_deref(),
            Some("Ubuntu 24.04.1 LTS")
        );
        assert_eq!(
            parse_os_release_pretty_name("PRETTY_NAME='Debian GNU/Linux 12 (bookworm)'\n").as_deref(),
            Some("Debian GNU/Linux 12 (bookworm)")
        );
        assert_eq!(
            parse_os_release_pretty_name("PRETTY_NAME=Alpine\n").as_deref(),
            Some("Alpine")
        );
        assert_eq!(
            parse_os_release_pretty_name(r#"PRETTY_NAME="Say \"hi\" \\ now""#).as_deref(),
            Some(r#"Say "hi" \ now"#)
        );
        assert_eq!(parse_os_release_pretty_name("NAME=Foo\nID=foo\n"), None);
        assert_eq!(parse_os_release_pretty_name("PRETTY_NAME=\"\"\n"), None);
        assert_eq!(parse_os_release_pretty_name(""), None);
    }

    #[test]
    fn cpuinfo_model_name() {
        let text = "\
processor\t: 0
vendor_id\t: GenuineIntel
cpu family\t: 6
model\t\t: 85
model name\t: Intel(R) Xeon(R) Platinum 8259CL CPU @ 2.50GHz
stepping\t: 7

processor\t: 1
vendor_id\t: GenuineIntel
model name\t: Some Other CPU
";
        assert_eq!(
            parse_cpuinfo_model(text).as_deref(),
            Some("Intel(R) Xeon(R) Platinum 8259CL CPU @ 2.50GHz")
        );
        // ARM-style cpuinfo without a model name.
        let arm = "processor\t: 0\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\n";
        assert_eq!(parse_cpuinfo_model(arm), None);
        assert_eq!(parse_cpuinfo_model(""), None);
    }

    #[test]
    fn meminfo_total() {
        let text = "\
MemTotal:       16318412 kB
MemFree:         1234567 kB
MemAvailable:    8765432 kB
";
        assert_eq!(parse_meminfo_total(text), Some(16_318_412 * 1024));
        assert_eq!(parse_meminfo(text, "MemAvailable:"), Some(8_765_432 * 1024));
        assert_eq!(parse_meminfo_total("MemFree: 5 kB\n"), None);
        assert_eq!(parse_meminfo_total("MemTotal: lots kB\n"), None);
        assert_eq!(parse_meminfo_total(""), None);
    }

    #[test]
    fn collect_on_this_machine() {
        let info = SystemInfo::collect();
        assert!(!info.kernel.is_empty(), "{info:?}");
        assert!(!info.hostname.is_empty(), "{info:?}");
        assert!(info.cpus >= 1, "{info:?}");
    }
}
