//! `[file_search]`: the bounds of the fuzzy file search (`fuzzyFileSearch` and its sessions,
//! docs/protocol.md §7.33) and of `thread/search`.

use std::path::Path;

use serde::Deserialize;

use crate::config_base::ConfigError;

/// `[file_search]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FileSearchConfig {
    /// Matches one search answers, best first (the reference's 50).
    pub max_results: usize,
    /// Entries (files and directories) one search or session walks; the walk stops there and
    /// the results are those of what it saw.
    pub max_entries: usize,
    /// Directory levels below a root the walk descends (the reference's 64).
    pub max_depth: usize,
    /// Threads that score one search's paths (the walk itself is one thread).
    pub threads: usize,
    /// Search sessions (`fuzzyFileSearch/sessionStart`) one connection may hold open; one more
    /// is refused until another stops.
    pub max_sessions_per_connection: usize,
    /// Roots one search may name.
    pub max_roots: usize,
    /// Bytes of one query (a fuzzy query is typed; this bounds the matcher's work).
    pub max_query_bytes: usize,
    /// Stored threads whose rollouts one `thread/search` reads for their content (the rest
    /// are matched by their name and preview only).
    pub max_threads_scanned: usize,
}

impl Default for FileSearchConfig {
    fn default() -> Self {
        FileSearchConfig {
            max_results: 50,
            max_entries: 200_000,
            max_depth: 64,
            threads: 2,
            max_sessions_per_connection: 16,
            max_roots: 32,
            max_query_bytes: 4096,
            max_threads_scanned: 2_000,
        }
    }
}

impl FileSearchConfig {
    pub(super) fn validated(self, path: &Path) -> Result<FileSearchConfig, ConfigError> {
        let invalid = |key: &str, message: &str| ConfigError::Invalid {
            path: path.to_path_buf(),
            key: format!("file_search.{key}"),
            message: message.into(),
        };
        let in_range = |key: &str, value: usize, max: usize| {
            if value == 0 || value > max {
                Err(invalid(key, &format!("must be between 1 and {max}")))
            } else {
                Ok(())
            }
        };
        in_range("max_results", self.max_results, 10_000)?;
        in_range("max_entries", self.max_entries, 10_000_000)?;
        in_range("max_depth", self.max_depth, 1_024)?;
        in_range("threads", self.threads, 64)?;
        in_range(
            "max_sessions_per_connection",
            self.max_sessions_per_connection,
            1_024,
        )?;
        in_range("max_roots", self.max_roots, 1_024)?;
        in_range("max_query_bytes", self.max_query_bytes, 65_536)?;
        in_range("max_threads_scanned", self.max_threads_scanned, 1_000_000)?;
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bounds_are_checked() {
        let path = Path::new("config.toml");
        assert!(FileSearchConfig::default().validated(path).is_ok());
        let zero = FileSearchConfig {
            threads: 0,
            ..FileSearchConfig::default()
        };
        let err = zero.validated(path).unwrap_err().to_string();
        assert!(err.contains("file_search.threads"), "{err}");
        let huge = FileSearchConfig {
            max_entries: 10_000_001,
            ..FileSearchConfig::default()
        };
        assert!(huge.validated(path).is_err());
    }
}
