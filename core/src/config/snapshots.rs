//! `[snapshots]`: the ghost snapshots taken before a turn's first change to the workspace, and
//! what `thread/revert {restoreWorkspace: true}` restores from (docs/protocol.md §7.27,
//! docs/architecture.md §5.5).

use std::path::Path;

use serde::Deserialize;

use crate::config_base::ConfigError;

/// `[snapshots]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SnapshotsConfig {
    /// Take snapshots at all. Off: no turn waits for one, and `restoreWorkspace` is refused.
    pub enabled: bool,
    /// Files larger than this (bytes) are left out of a snapshot (and so are never restored).
    pub max_file_bytes: u64,
    /// A workspace with more files than this is not snapshotted (the turn runs without one).
    pub max_files: usize,
    /// How long one snapshot (all its `git` commands) may take, in milliseconds; a slower
    /// one is given up and the turn goes on without it.
    pub timeout_ms: u64,
    /// Snapshots older than this many days are pruned.
    pub max_age_days: u64,
    /// At most this many snapshots are kept per workspace (the oldest are pruned).
    pub max_count: usize,
}

impl Default for SnapshotsConfig {
    fn default() -> Self {
        SnapshotsConfig {
            enabled: true,
            max_file_bytes: 10 * 1024 * 1024,
            max_files: 20_000,
            timeout_ms: 30_000,
            max_age_days: 7,
            max_count: 200,
        }
    }
}

impl SnapshotsConfig {
    pub(super) fn validated(self, path: &Path) -> Result<SnapshotsConfig, ConfigError> {
        let invalid = |key: &str, message: &str| ConfigError::Invalid {
            path: path.to_path_buf(),
            key: format!("snapshots.{key}"),
            message: message.into(),
        };
        if self.max_files == 0 {
            return Err(invalid("max_files", "must be at least 1"));
        }
        if self.timeout_ms == 0 || self.timeout_ms > 600_000 {
            return Err(invalid("timeout_ms", "must be between 1 and 600000"));
        }
        if self.max_age_days == 0 {
            return Err(invalid("max_age_days", "must be at least 1"));
        }
        if self.max_count < 2 {
            // A mutating turn leaves two (before and after): fewer could not restore one.
            return Err(invalid("max_count", "must be at least 2"));
        }
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_bounds() {
        let path = Path::new("config.toml");
        assert!(SnapshotsConfig::default().validated(path).is_ok());
        let parsed: SnapshotsConfig =
            toml::from_str("max_file_bytes = 5\nenabled = false").unwrap();
        assert_eq!(parsed.max_file_bytes, 5);
        assert!(!parsed.enabled);
        assert_eq!(parsed.max_count, 200);
        for bad in [
            "max_files = 0",
            "timeout_ms = 0",
            "max_age_days = 0",
            "max_count = 1",
        ] {
            let raw: SnapshotsConfig = toml::from_str(bad).unwrap();
            assert!(raw.validated(path).is_err(), "{bad}");
        }
        assert!(toml::from_str::<SnapshotsConfig>("max_size = 1").is_err());
    }
}
