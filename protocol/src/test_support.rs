//! Helpers for the crate's tests: access to the shared reference material.

use std::path::PathBuf;

/// `<workspace>/../shared` (protocol docs, reference schema and transcripts).
pub(crate) fn shared_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared")
}

/// Reads a file below [`shared_dir`]; `None` (with a note on stderr) when the shared reference
/// material is not available, so tests that need it are skipped rather than failing.
pub(crate) fn read_shared(relative: &str) -> Option<String> {
    let path = shared_dir().join(relative);
    match std::fs::read_to_string(&path) {
        Ok(text) => Some(text),
        Err(err) => {
            eprintln!("skipping: cannot read {}: {err}", path.display());
            None
        }
    }
}

/// Parses a JSON file below [`shared_dir`].
pub(crate) fn read_shared_json(relative: &str) -> Option<serde_json::Value> {
    let text = read_shared(relative)?;
    Some(serde_json::from_str(&text).unwrap_or_else(|e| panic!("{relative}: {e}")))
}
