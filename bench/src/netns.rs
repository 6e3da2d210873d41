//! The reference runs only inside a loopback-only network namespace.
//!
//! With `--reference`, the bench re-executes itself under
//! `unshare -n sh -c 'ip link set lo up && exec BENCH ARGS…'`, so the whole run (both servers,
//! the mock, the harness) sees nothing but `lo`. Before starting the reference it checks that
//! `/proc/self/net/dev` lists only `lo`; otherwise the reference is skipped.

use std::process::{Command, ExitStatus};

/// Set in the re-executed bench so it does not re-execute again.
const MARKER: &str = "WEFT_BENCH_IN_NETNS";

/// Network interfaces of this process's namespace (`/proc/self/net/dev`; `/sys/class/net`
/// shows the namespace sysfs was mounted in, not ours).
fn interfaces() -> Vec<String> {
    std::fs::read_to_string("/proc/self/net/dev")
        .map(|text| {
            text.lines()
                .skip(2)
                .filter_map(|line| line.split_once(':'))
                .map(|(name, _)| name.trim().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// Whether the only network interface is `lo`.
pub fn loopback_only() -> bool {
    interfaces() == ["lo"]
}

/// Whether this process is the re-executed one.
pub fn reexecuted() -> bool {
    std::env::var_os(MARKER).is_some()
}

/// Why a loopback-only namespace cannot be made here, if it cannot.
pub fn unavailable() -> Option<String> {
    match Command::new("unshare")
        .args(["-n", "sh", "-c", "ip link set lo up"])
        .output()
    {
        Ok(out) if out.status.success() => None,
        Ok(out) => Some(format!(
            "`unshare -n` failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )),
        Err(err) => Some(format!("cannot run unshare: {err}")),
    }
}

/// Run this bench again, with the same arguments, inside a new loopback-only namespace; returns
/// its exit status.
pub fn reexec() -> std::io::Result<ExitStatus> {
    let exe = std::env::current_exe()?;
    Command::new("unshare")
        .args(["-n", "sh", "-c", r#"ip link set lo up && exec "$0" "$@""#])
        .arg(exe)
        .args(std::env::args_os().skip(1))
        .env(MARKER, "1")
        .status()
}
