//! `[limits]`: bounds on what one client can make the daemon hold.

use std::path::Path;

use serde::Deserialize;

use super::ConfigError;

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
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_message_bytes: 4 * 1024 * 1024,
            max_connections: 256,
            handshake_timeout_secs: 10,
            shutdown_grace_secs: 10,
        }
    }
}

impl Limits {
    /// Smallest `max_message_bytes` accepted: any real request fits in it.
    pub const MIN_MESSAGE_BYTES: usize = 1024;

    pub(super) fn validated(self, path: &Path) -> Result<Limits, ConfigError> {
        let invalid = |key: &str, message: &str| ConfigError::Invalid {
            path: path.to_path_buf(),
            key: format!("limits.{key}"),
            message: message.to_string(),
        };
        if self.max_message_bytes < Self::MIN_MESSAGE_BYTES {
            return Err(invalid(
                "max_message_bytes",
                &format!("must be at least {}", Self::MIN_MESSAGE_BYTES),
            ));
        }
        if self.max_connections == 0 {
            return Err(invalid("max_connections", "must be at least 1"));
        }
        if self.handshake_timeout_secs == 0 {
            return Err(invalid("handshake_timeout_secs", "must be at least 1"));
        }
        Ok(self)
    }
}
