//! `[fs]`: what the file-system methods (`fs/*`, docs/protocol.md §7.31) may reach and how
//! much a connection's watches may hold. The size of one file read or written is
//! `limits.max_fs_file_bytes`.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::config_base::ConfigError;

/// `[fs]`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FsConfig {
    /// When set, every `fs/*` path must lie beneath one of these absolute directories and is
    /// resolved beneath it without following a symbolic link; unset, a client reaches what
    /// the daemon's user may (as in the reference). `$WEFT_HOME` is never reachable.
    pub roots: Option<Vec<PathBuf>>,
    /// `fs/watch` subscriptions one connection may hold at once; one more is refused.
    pub max_watches_per_connection: usize,
    /// Changed paths one watch gathers before its next `fs/changed`; past it the batch is
    /// collapsed to the watched path itself (the client re-reads it), so a flood of changes
    /// holds no more than this.
    pub max_pending_changes: usize,
    /// Raw change events waiting for the watches' router at once; past it events are
    /// dropped and every watch reports its own path on its next `fs/changed`.
    pub max_queued_events: usize,
    /// How long a watch gathers changes before it sends one `fs/changed`, in milliseconds.
    pub debounce_ms: u64,
}

impl Default for FsConfig {
    fn default() -> Self {
        FsConfig {
            roots: None,
            max_watches_per_connection: 64,
            max_pending_changes: 1024,
            max_queued_events: 4096,
            debounce_ms: 200,
        }
    }
}

impl FsConfig {
    pub(super) fn validated(self, path: &Path) -> Result<FsConfig, ConfigError> {
        let invalid = |key: &str, message: String| ConfigError::Invalid {
            path: path.to_path_buf(),
            key: format!("fs.{key}"),
            message,
        };
        for root in self.roots.iter().flatten() {
            if !root.is_absolute() {
                return Err(invalid(
                    "roots",
                    format!("`{}` is not an absolute path", root.display()),
                ));
            }
        }
        let bounds = [
            (
                "max_watches_per_connection",
                self.max_watches_per_connection,
            ),
            ("max_pending_changes", self.max_pending_changes),
            ("max_queued_events", self.max_queued_events),
        ];
        if let Some((key, _)) = bounds.iter().find(|(_, value)| *value == 0) {
            return Err(invalid(key, "must be at least 1".into()));
        }
        if self.debounce_ms == 0 || self.debounce_ms > 60_000 {
            return Err(invalid("debounce_ms", "must be between 1 and 60000".into()));
        }
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_relative_roots_and_zero_bounds() {
        let path = Path::new("config.toml");
        assert!(FsConfig::default().validated(path).is_ok());
        let relative = FsConfig {
            roots: Some(vec![PathBuf::from("work")]),
            ..FsConfig::default()
        };
        let err = relative.validated(path).unwrap_err().to_string();
        assert!(
            err.contains("fs.roots") && err.contains("absolute"),
            "{err}"
        );
        let zero = FsConfig {
            max_watches_per_connection: 0,
            ..FsConfig::default()
        };
        let err = zero.validated(path).unwrap_err().to_string();
        assert!(err.contains("fs.max_watches_per_connection"), "{err}");
        let slow = FsConfig {
            debounce_ms: 0,
            ..FsConfig::default()
        };
        assert!(slow.validated(path).is_err());
    }

    #[test]
    fn parses_roots() {
        let raw: FsConfig =
            toml::from_str("roots = [\"/srv/work\"]\nmax_watches_per_connection = 2").unwrap();
        assert_eq!(raw.roots, Some(vec![PathBuf::from("/srv/work")]));
        assert_eq!(raw.max_watches_per_connection, 2);
        assert!(toml::from_str::<FsConfig>("rootz = []").is_err());
    }
}
