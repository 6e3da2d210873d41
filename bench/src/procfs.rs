//! Server CPU time and memory from `/proc`, for a process and its descendants.

use std::collections::HashMap;
use std::process::Command;

use anyhow::{Context, Result};

/// Clock ticks per second (`getconf CLK_TCK`; 100 on Linux unless told otherwise).
pub fn clock_ticks_per_second() -> u64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .and_then(|text| text.trim().parse().ok())
        .filter(|&ticks| ticks > 0)
        .unwrap_or(100)
}

/// The fields of `/proc/PID/stat` after the command name (field 3 onwards).
fn stat_fields(pid: u32) -> Result<Vec<u64>> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .with_context(|| format!("read /proc/{pid}/stat"))?;
    // The command name (field 2) is in parentheses and may hold spaces: split after the last ')'.
    let rest = text
        .rsplit_once(')')
        .map(|(_, rest)| rest)
        .context("malformed /proc/PID/stat")?;
    // Field 3 is the state letter; keep it as 0 so indices stay aligned.
    Ok(rest
        .split_whitespace()
        .map(|field| field.parse().unwrap_or(0))
        .collect())
}

/// `pid` and every live descendant (children of children …), `pid` first.
fn process_tree(pid: u32) -> Vec<u32> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    if let Ok(entries) = std::fs::read_dir("/proc") {
        for entry in entries.flatten() {
            let Some(child) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else {
                continue;
            };
            // Field 4 (ppid) is index 1 of the fields after the name.
            if let Ok(fields) = stat_fields(child)
                && let Some(&ppid) = fields.get(1)
            {
                children.entry(ppid as u32).or_default().push(child);
            }
        }
    }
    let mut tree = vec![pid];
    let mut i = 0;
    while i < tree.len() {
        if let Some(kids) = children.get(&tree[i]) {
            tree.extend(kids);
        }
        i += 1;
    }
    tree
}

/// CPU time in clock ticks used so far by `pid`, its live descendants and the children they
/// waited for: utime + stime + cutime + cstime (fields 14–17 of `/proc/PID/stat`).
pub fn cpu_ticks(pid: u32) -> Result<u64> {
    let mut total = 0;
    for (i, member) in process_tree(pid).into_iter().enumerate() {
        match stat_fields(member) {
            // Fields 14..=17 are indices 11..=14 after the name.
            Ok(fields) => total += fields.iter().skip(11).take(4).sum::<u64>(),
            // A descendant may exit between the scan and the read; the server itself may not.
            Err(err) if i == 0 => return Err(err),
            Err(_) => {}
        }
    }
    Ok(total)
}

/// Resident set size in KiB (`VmRSS` of `/proc/PID/status`) of `pid` and its live descendants.
pub fn rss_kib(pid: u32) -> Result<u64> {
    let mut total = 0;
    for (i, member) in process_tree(pid).into_iter().enumerate() {
        let status = match std::fs::read_to_string(format!("/proc/{member}/status")) {
            Ok(status) => status,
            Err(err) if i == 0 => return Err(err).context(format!("read /proc/{pid}/status")),
            Err(_) => continue,
        };
        let rss = status
            .lines()
            .find_map(|line| line.strip_prefix("VmRSS:"))
            .and_then(|value| {
                value
                    .trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse::<u64>()
                    .ok()
            })
            .unwrap_or(0);
        total += rss;
    }
    Ok(total)
}

/// How many of `pid`'s live descendants have a command line (`/proc/PID/cmdline`) containing
/// `needle`.
pub fn descendants_matching(pid: u32, needle: &str) -> usize {
    process_tree(pid)
        .into_iter()
        .skip(1)
        .filter(|member| {
            std::fs::read(format!("/proc/{member}/cmdline"))
                .is_ok_and(|cmdline| String::from_utf8_lossy(&cmdline).contains(needle))
        })
        .count()
}

/// Bytes `pid` itself has read through `read`-like system calls (`rchar` of `/proc/PID/io`):
/// what a request made the server read, page cache hits included.
pub fn read_chars(pid: u32) -> Result<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/io"))
        .with_context(|| format!("read /proc/{pid}/io"))?;
    text.lines()
        .find_map(|line| line.strip_prefix("rchar:"))
        .and_then(|value| value.trim().parse().ok())
        .context("no rchar in /proc/PID/io")
}

#[cfg(test)]
mod tests {
    use super::{cpu_ticks, descendants_matching, rss_kib};

    #[test]
    fn reads_this_process() {
        let pid = std::process::id();
        assert!(rss_kib(pid).unwrap() > 0);
        assert!(cpu_ticks(pid).is_ok());
    }

    #[test]
    fn counts_descendants_by_command_line() {
        let pid = std::process::id();
        let mut child = std::process::Command::new("sleep")
            .arg("60.4242")
            .spawn()
            .unwrap();
        // Until the child has exec'd, its command line is still ours: poll for a while.
        let mut found = 0;
        for _ in 0..200 {
            found = descendants_matching(pid, "60.4242");
            if found > 0 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(found, 1);
        // The process itself is never counted, although its own command line matches.
        assert_eq!(descendants_matching(pid, "weft_bench"), 0);
    }
}
