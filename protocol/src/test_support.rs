//! Helpers for the crate's tests: the reference material checked in under `tests/reference/`
//! (the Codex reference schema, the transcript message catalog, the protocol subset; see
//! `tests/reference/README.md` for where each file comes from). A missing file fails the test
//! that needs it: conformance is never skipped.

use std::path::PathBuf;

/// `<workspace>/tests/reference`.
pub(crate) fn reference_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/reference")
}

/// Reads a file below [`reference_dir`]; panics, naming the path, when it cannot be read.
pub(crate) fn read_reference(relative: &str) -> String {
    let path = reference_dir().join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|err| {
        panic!(
            "cannot read the reference file {}: {err} (the files under tests/reference are \
             checked in; see tests/reference/README.md)",
            path.display()
        )
    })
}

/// Parses a JSON file below [`reference_dir`]; panics when it is missing or invalid.
pub(crate) fn read_reference_json(relative: &str) -> serde_json::Value {
    let text = read_reference(relative);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("tests/reference/{relative}: {e}"))
}
