//! `[review]`: the bounds of what a review (`review/start`, docs/protocol.md §7.28) gathers
//! before it asks the model.

use std::path::Path;

use serde::Deserialize;

use crate::config_base::ConfigError;

/// `[review]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReviewConfig {
    /// The most bytes of `git diff` output attached to the review's prompt (the model reads
    /// the rest with its read-only tools); 0 attaches none.
    pub max_diff_bytes: usize,
    /// How long the `git` commands that gather the diff may take, in milliseconds; a review
    /// whose diff takes longer starts without it.
    pub diff_timeout_ms: u64,
}

impl Default for ReviewConfig {
    fn default() -> Self {
        ReviewConfig {
            max_diff_bytes: 16 * 1024,
            diff_timeout_ms: 5_000,
        }
    }
}

impl ReviewConfig {
    /// The most bytes `max_diff_bytes` may be: a prompt, not a file transfer.
    pub const MAX_DIFF_BYTES_CAP: usize = 1024 * 1024;

    pub(super) fn validated(self, path: &Path) -> Result<ReviewConfig, ConfigError> {
        let invalid = |key: &str, message: &str| ConfigError::Invalid {
            path: path.to_path_buf(),
            key: format!("review.{key}"),
            message: message.into(),
        };
        if self.max_diff_bytes > Self::MAX_DIFF_BYTES_CAP {
            return Err(invalid("max_diff_bytes", "must be at most 1048576"));
        }
        if self.diff_timeout_ms == 0 || self.diff_timeout_ms > 600_000 {
            return Err(invalid("diff_timeout_ms", "must be between 1 and 600000"));
        }
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bounds_are_checked() {
        let path = Path::new("config.toml");
        assert!(ReviewConfig::default().validated(path).is_ok());
        let big = ReviewConfig {
            max_diff_bytes: ReviewConfig::MAX_DIFF_BYTES_CAP + 1,
            ..ReviewConfig::default()
        };
        assert!(big.validated(path).is_err());
        let never = ReviewConfig {
            diff_timeout_ms: 0,
            ..ReviewConfig::default()
        };
        assert!(never.validated(path).is_err());
        let table: ReviewConfig = toml::from_str("max_diff_bytes = 0").unwrap();
        assert_eq!(table.max_diff_bytes, 0);
        assert_eq!(table.diff_timeout_ms, 5_000);
        assert!(toml::from_str::<ReviewConfig>("max_diff = 1").is_err());
    }
}
