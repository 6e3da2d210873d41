//! Background terminals: the commands a thread's `exec_command` calls left running as
//! sessions (reachable with `write_stdin`), as `thread/backgroundTerminals/*` shows and ends
//! them (docs/protocol.md §7.26).

use super::runtime::ToolRuntime;

/// One running background session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackgroundTerminal {
    /// Session id (`processId` on the wire).
    pub session_id: u64,
    /// The `commandExecution` item that started it.
    pub item_id: String,
    /// The display command line.
    pub command: String,
    /// Working directory.
    pub cwd: String,
    /// OS process id.
    pub pid: u32,
    /// Resident memory in KiB (Linux `/proc`), when readable.
    pub rss_kb: Option<u64>,
}

impl ToolRuntime {
    /// The running background sessions, in session id order.
    pub fn background_terminals(&self) -> Vec<BackgroundTerminal> {
        let running = self.exec.running_sessions();
        let sessions = self.sessions.lock();
        running
            .into_iter()
            .filter_map(|(id, pid)| {
                let command = sessions.get(&id)?;
                let pid = u32::try_from(pid).ok()?;
                Some(BackgroundTerminal {
                    session_id: id,
                    item_id: command.item_id.clone(),
                    command: command.display.clone(),
                    cwd: command.cwd.clone(),
                    pid,
                    rss_kb: rss_kb(pid),
                })
            })
            .collect()
    }

    /// End one background session; `false` when it was not running.
    pub async fn terminate_terminal(&self, session_id: u64) -> bool {
        let ended = self.exec.terminate_session(session_id).await;
        self.sessions.lock().remove(&session_id);
        ended
    }

    /// End every background session.
    pub async fn clean_terminals(&self) {
        for id in self.exec.terminate_sessions().await {
            self.sessions.lock().remove(&id);
        }
    }
}

/// `VmRSS` of `/proc/<pid>/status`, in KiB.
fn rss_kb(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    parse_vm_rss(&status)
}

fn parse_vm_rss(status: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kb| kb.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vm_rss_is_read_in_kib() {
        let status = "Name:\tsleep\nVmPeak:\t  8000 kB\nVmRSS:\t    1234 kB\nThreads:\t1\n";
        assert_eq!(parse_vm_rss(status), Some(1234));
        assert_eq!(parse_vm_rss("Name:\tzombie\n"), None);
    }
}
