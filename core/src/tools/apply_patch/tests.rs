use std::fs;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use support::*;

use super::contents::derive_new_contents;
use super::*;

#[cfg(unix)]
mod confined;

mod apply;
mod matcher;
mod parser;
mod properties;

/// Small helpers shared by the tests.
mod support {
    use super::*;

    pub fn wrap(body: &str) -> String {
        format!("*** Begin Patch\n{body}\n*** End Patch\n")
    }

    pub fn allow_all(_: &Path) -> bool {
        true
    }

    pub fn strings(lines: &[&str]) -> Vec<String> {
        lines.iter().map(|s| (*s).to_string()).collect()
    }

    pub fn hunk_error(e: ParseError) -> (String, usize) {
        match e {
            ParseError::InvalidHunk { message, line } => (message, line),
            other => panic!("expected a hunk error, got {other:?}"),
        }
    }

    /// Parses `patch` (one Update op) and applies it to `original` in memory.
    pub fn apply_text(original: &str, patch: &str) -> Result<String, PatchError> {
        let parsed = parse_patch(patch)?;
        let Some(FileOp::Update { chunks, .. }) = parsed.ops.first() else {
            panic!("expected an update op");
        };
        derive_new_contents(Path::new("/f.txt"), original, chunks)
    }

    /// `body` (an update's chunks) applied to `original`, which must succeed.
    pub fn applies(original: &str, body: &str) -> String {
        apply_text(original, &update(body)).unwrap()
    }

    pub fn update(body: &str) -> String {
        wrap(&format!("*** Update File: f.txt\n{body}"))
    }

    pub struct Dir {
        pub tmp: tempfile::TempDir,
    }

    impl Dir {
        pub fn new() -> Self {
            let tmp = tempfile::tempdir().unwrap();
            Dir { tmp }
        }

        /// A directory holding `files` (path, contents).
        pub fn with(files: &[(&str, &str)]) -> Self {
            let dir = Dir::new();
            for (path, contents) in files {
                dir.write(path, contents);
            }
            dir
        }
        /// The canonical root (so symlink resolution does not differ from it).
        pub fn root(&self) -> PathBuf {
            fs::canonicalize(self.tmp.path()).unwrap()
        }
        pub fn write(&self, rel: &str, contents: &str) {
            let p = self.root().join(rel);
            if let Some(parent) = p.parent() {
                fs::create_dir_all(parent).unwrap();
            }
            fs::write(p, contents).unwrap();
        }
        pub fn read(&self, rel: &str) -> Option<String> {
            fs::read_to_string(self.root().join(rel)).ok()
        }
        /// The plan of the patch of `body` (wrapped in its begin and end lines), which must be
        /// valid.
        pub fn planned(&self, body: &str) -> PatchPlan {
            self.plan(&wrap(body)).unwrap()
        }

        pub fn plan(&self, patch: &str) -> Result<PatchPlan, PatchError> {
            let root = self.root();
            let inside = move |p: &Path| p.starts_with(&root);
            plan_patch(patch, &self.root(), &inside)
        }
        pub fn apply(&self, patch: &str) -> Result<ApplyOutcome, PatchError> {
            apply_plan(&self.plan(patch)?)
        }
    }
}
