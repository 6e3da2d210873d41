//! `[limits]`: bounds on what one client can make the daemon hold. A section of
//! [`crate::config`] of its own module, so the MCP pool can read it without importing the
//! aggregate config.

use std::path::Path;

use serde::Deserialize;

use crate::config_base::ConfigError;

/// `[limits]`: bounds on what one client can make the daemon hold (README, "Configuration").
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Limits {
    /// Largest message accepted, in bytes: a stdio line or a whole WebSocket message.
    pub max_message_bytes: usize,
    /// WebSocket connections open at once, counting those still in their HTTP handshake.
    pub max_connections: usize,
    /// Seconds a TCP connection may take to complete its WebSocket upgrade.
    pub handshake_timeout_secs: u64,
    /// Seconds stdio waits, after stdin's end, for the answers to requests already read.
    pub shutdown_grace_secs: u64,
    /// Messages a connection's outbound queue holds before consecutive deltas of one item are
    /// merged (and MCP progress of one call replaced); four times this is its hard bound.
    pub outbound_queue_messages: usize,
    /// Bytes a connection's outbound queue may hold once past `outbound_queue_messages`; a
    /// connection whose queue goes past this is closed.
    pub outbound_queue_bytes: usize,
    /// Seconds a connection's socket (or stdout) may take nothing while output waits for it
    /// before the connection is closed (on stdio, the daemon then shuts down).
    pub outbound_stall_secs: u64,
    /// Largest `SKILL.md` or `agents/openai.yaml` that `skills/list` reads, in bytes; a larger
    /// one is reported as an error (SECURITY.md, "Skills and thread search").
    pub max_skill_file_bytes: u64,
    /// Seconds one `skills/list` may spend searching the disk; then it answers what it found,
    /// with an error naming where it stopped.
    pub skills_scan_timeout_secs: u64,
    /// Questions (`elicitation/create`) one MCP tool call may have open at once; more are
    /// declined (docs/mcp.md §5).
    pub max_mcp_questions_per_call: usize,
    /// MCP OAuth logins (`mcpServer/oauth/login`) waiting for their browser at once, each
    /// with a loopback listener; one more is refused (docs/mcp.md §9).
    pub max_mcp_oauth_logins: usize,
    /// Requests one connection may have running at once in handler tasks of their own; one
    /// more is answered `-32001` (docs/protocol.md §11.6).
    pub max_running_requests: usize,
    /// Largest file `fs/readFile` reads or `fs/writeFile` writes, in bytes; a larger one is
    /// refused (docs/protocol.md §7.31).
    pub max_fs_file_bytes: u64,
    /// `command/exec` processes one connection may have running at once; one more is refused
    /// (docs/protocol.md §7.32).
    pub command_exec_max_processes: usize,
    /// Bytes of stdout, and of stderr, one `command/exec` captures or streams when the request
    /// sets no `outputBytesCap` (docs/protocol.md §7.32).
    pub command_exec_output_bytes_cap: usize,
    /// Milliseconds a `command/exec` may run when the request sets no `timeoutMs`; it is then
    /// killed and answers exit code 124 (docs/protocol.md §7.32).
    pub command_exec_timeout_ms: u64,
    /// Largest `thread/attachment/add` payload, in bytes of its JSON (docs/protocol.md §7.37).
    pub thread_attachment_payload_bytes: usize,
    /// Attachments one thread may hold; one more is refused (docs/protocol.md §7.37).
    pub thread_attachments_per_thread: usize,
    /// Bytes of files (the rollout, `extraLogFiles`) one `feedback/save` bundle may hold; a
    /// larger bundle is refused (docs/protocol.md §7.37).
    pub feedback_bundle_bytes: u64,
    /// Items one `thread/inject_items` may carry (docs/protocol.md §7.36).
    pub max_injected_items: usize,
    /// Bytes of JSON the items of one `thread/inject_items` may hold (docs/protocol.md §7.36).
    pub max_injected_bytes: usize,
    /// Thread sections the store may hold, the built-in `Pinned` one included
    /// (docs/protocol.md §7.36).
    pub max_thread_sections: usize,
    /// Longest thread section name, in bytes (docs/protocol.md §7.36).
    pub max_section_name_bytes: usize,
    /// Past imports of another agent's set-up kept; the oldest go past this (docs/protocol.md
    /// §7.39).
    pub max_external_agent_imports: usize,
    /// Bytes of JSON one recorded import may hold; a larger one is refused (docs/protocol.md
    /// §7.39).
    pub max_external_agent_import_bytes: usize,
    /// Claude Code sessions one detect lists and one import brings at most (`maxSessions`
    /// asks for fewer; docs/protocol.md §7.39).
    pub max_external_agent_sessions: usize,
    /// Largest Claude Code session file read, in bytes; a larger one is not offered
    /// (docs/protocol.md §7.39).
    pub max_external_agent_session_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_message_bytes: 4 * 1024 * 1024,
            max_connections: 256,
            handshake_timeout_secs: 10,
            shutdown_grace_secs: 10,
            outbound_queue_messages: 4096,
            outbound_queue_bytes: 32 * 1024 * 1024,
            outbound_stall_secs: 60,
            max_skill_file_bytes: 1024 * 1024,
            skills_scan_timeout_secs: 5,
            max_mcp_questions_per_call: 8,
            max_mcp_oauth_logins: 8,
            max_running_requests: 256,
            max_fs_file_bytes: 16 * 1024 * 1024,
            command_exec_max_processes: 16,
            command_exec_output_bytes_cap: 1024 * 1024,
            command_exec_timeout_ms: 10_000,
            thread_attachment_payload_bytes: 64 * 1024,
            thread_attachments_per_thread: 100,
            feedback_bundle_bytes: 64 * 1024 * 1024,
            max_injected_items: 4096,
            max_injected_bytes: 4 * 1024 * 1024,
            max_thread_sections: 1000,
            max_section_name_bytes: 4096,
            max_external_agent_imports: 200,
            max_external_agent_import_bytes: 1024 * 1024,
            max_external_agent_sessions: 50,
            max_external_agent_session_bytes: 64 * 1024 * 1024,
        }
    }
}

impl Limits {
    /// Smallest `max_message_bytes` accepted: any real request fits in it.
    pub const MIN_MESSAGE_BYTES: usize = 1024;

    /// Smallest `outbound_queue_messages` accepted: room for a turn's non-delta messages.
    pub const MIN_QUEUE_MESSAGES: usize = 64;

    pub(super) fn validated(self, path: &Path) -> Result<Limits, ConfigError> {
        // Each bound, in the order they are checked: the key, its value and its least value.
        let bounds: [(&str, u64, u64); 15] = [
            (
                "max_message_bytes",
                self.max_message_bytes as u64,
                Self::MIN_MESSAGE_BYTES as u64,
            ),
            ("max_connections", self.max_connections as u64, 1),
            ("handshake_timeout_secs", self.handshake_timeout_secs, 1),
            (
                "outbound_queue_messages",
                self.outbound_queue_messages as u64,
                Self::MIN_QUEUE_MESSAGES as u64,
            ),
            (
                "outbound_queue_bytes",
                self.outbound_queue_bytes as u64,
                Self::MIN_MESSAGE_BYTES as u64,
            ),
            ("outbound_stall_secs", self.outbound_stall_secs, 1),
            ("max_skill_file_bytes", self.max_skill_file_bytes, 1),
            ("skills_scan_timeout_secs", self.skills_scan_timeout_secs, 1),
            (
                "max_mcp_questions_per_call",
                self.max_mcp_questions_per_call as u64,
                1,
            ),
            ("max_running_requests", self.max_running_requests as u64, 1),
            ("max_mcp_oauth_logins", self.max_mcp_oauth_logins as u64, 1),
            (
                "max_external_agent_imports",
                self.max_external_agent_imports as u64,
                1,
            ),
            (
                "max_external_agent_import_bytes",
                self.max_external_agent_import_bytes as u64,
                1,
            ),
            (
                "max_external_agent_sessions",
                self.max_external_agent_sessions as u64,
                1,
            ),
            (
                "max_external_agent_session_bytes",
                self.max_external_agent_session_bytes,
                1,
            ),
        ];
        if let Some((key, _, least)) = bounds.iter().find(|(_, value, least)| value < least) {
            return Err(ConfigError::Invalid {
                path: path.to_path_buf(),
                key: format!("limits.{key}"),
                message: format!("must be at least {least}"),
            });
        }
        if self.max_fs_file_bytes == 0 {
            return Err(ConfigError::Invalid {
                path: path.to_path_buf(),
                key: "limits.max_fs_file_bytes".into(),
                message: "must be at least 1".into(),
            });
        }
        let command_exec = [
            (
                "command_exec_max_processes",
                self.command_exec_max_processes as u64,
            ),
            (
                "command_exec_output_bytes_cap",
                self.command_exec_output_bytes_cap as u64,
            ),
            ("command_exec_timeout_ms", self.command_exec_timeout_ms),
            (
                "thread_attachment_payload_bytes",
                self.thread_attachment_payload_bytes as u64,
            ),
            (
                "thread_attachments_per_thread",
                self.thread_attachments_per_thread as u64,
            ),
            ("feedback_bundle_bytes", self.feedback_bundle_bytes),
        ];
        if let Some((key, _)) = command_exec.iter().find(|(_, value)| *value == 0) {
            return Err(ConfigError::Invalid {
                path: path.to_path_buf(),
                key: format!("limits.{key}"),
                message: "must be at least 1".into(),
            });
        }
        // Thread management (docs/protocol.md §7.36): room for the built-in section and one.
        let thread_management = [
            ("max_injected_items", self.max_injected_items, 1),
            ("max_injected_bytes", self.max_injected_bytes, 1),
            ("max_thread_sections", self.max_thread_sections, 2),
            ("max_section_name_bytes", self.max_section_name_bytes, 1),
        ];
        if let Some((key, _, least)) = thread_management
            .iter()
            .find(|(_, value, least)| value < least)
        {
            return Err(ConfigError::Invalid {
                path: path.to_path_buf(),
                key: format!("limits.{key}"),
                message: format!("must be at least {least}"),
            });
        }
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_exec_limits_refuse_zero() {
        let path = Path::new("config.toml");
        for (limits, key) in [
            (
                Limits {
                    command_exec_max_processes: 0,
                    ..Limits::default()
                },
                "limits.command_exec_max_processes",
            ),
            (
                Limits {
                    command_exec_output_bytes_cap: 0,
                    ..Limits::default()
                },
                "limits.command_exec_output_bytes_cap",
            ),
            (
                Limits {
                    command_exec_timeout_ms: 0,
                    ..Limits::default()
                },
                "limits.command_exec_timeout_ms",
            ),
        ] {
            match limits.validated(path) {
                Err(ConfigError::Invalid { key: refused, .. }) => assert_eq!(refused, key),
                other => panic!("{key}: {other:?}"),
            }
        }
    }

    #[test]
    fn outbound_queue_limits_refuse_what_cannot_work() {
        let path = Path::new("config.toml");
        assert!(Limits::default().validated(path).is_ok());
        let refused = [
            (
                Limits {
                    outbound_queue_messages: Limits::MIN_QUEUE_MESSAGES - 1,
                    ..Limits::default()
                },
                "limits.outbound_queue_messages",
            ),
            (
                Limits {
                    outbound_queue_bytes: 10,
                    ..Limits::default()
                },
                "limits.outbound_queue_bytes",
            ),
            (
                Limits {
                    outbound_stall_secs: 0,
                    ..Limits::default()
                },
                "limits.outbound_stall_secs",
            ),
        ];
        for (limits, key) in refused {
            let err = limits.validated(path).unwrap_err();
            assert!(err.to_string().contains(key), "{err}");
        }
    }
}
