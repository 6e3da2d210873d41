//! Why a patch was not (fully) applied, and what the model is told about it.

use std::fmt;
use std::io;
use std::path::PathBuf;

use super::parser::ParseError;

/// Why a patch was not (fully) applied.
#[derive(Debug)]
pub enum PatchError {
    /// The patch text is malformed.
    Parse(ParseError),
    /// A chunk's `@@` context or old lines were not found in the file.
    Match(String),
    /// A file the patch needs could not be read (missing, a directory, not UTF-8, …).
    Read {
        /// E.g. `Failed to read file to update /abs/path`.
        context: String,
        /// The underlying error.
        source: io::Error,
    },
    /// The patch contains no file operation.
    Empty,
    /// A path the patch would write is outside the writable roots (`can_write` said no).
    NotWritable {
        /// The absolute target path.
        path: PathBuf,
    },
    /// A path the patch would write is protected inside the writable roots (a repository's
    /// `.git`, Weft's home).
    Protected {
        /// The absolute target path.
        path: PathBuf,
    },
    /// A file changed on disk between [`plan_patch`] and [`apply_plan`]; nothing was written.
    Stale {
        /// The absolute path that changed.
        path: PathBuf,
    },
    /// Writing failed part-way (earlier operations of the patch may already be applied).
    Write {
        /// E.g. `Failed to write file /abs/path`.
        context: String,
        /// The underlying error.
        source: io::Error,
    },
}

impl fmt::Display for PatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PatchError::Parse(e) => write!(f, "{e}"),
            PatchError::Match(message) => f.write_str(message),
            PatchError::Read { context, source } | PatchError::Write { context, source } => {
                write!(f, "{context}: {source}")
            }
            PatchError::Empty => f.write_str("empty patch"),
            PatchError::NotWritable { path } => write!(
                f,
                "writing outside of the sandbox's writable roots: {}",
                path.display()
            ),
            PatchError::Protected { path } => write!(
                f,
                "writing a protected path: {} (a repository's .git and Weft's home stay \
                 read-only inside the sandbox)",
                path.display()
            ),
            PatchError::Stale { path } => write!(
                f,
                "{} changed on disk after the patch was verified",
                path.display()
            ),
        }
    }
}

impl std::error::Error for PatchError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PatchError::Parse(e) => Some(e),
            PatchError::Read { source, .. } | PatchError::Write { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl From<ParseError> for PatchError {
    fn from(e: ParseError) -> Self {
        PatchError::Parse(e)
    }
}

impl PatchError {
    /// The text returned to the model for this failure:
    /// * parse, match, read and staleness errors: `apply_patch verification failed: <error>`;
    /// * an empty patch: `patch rejected: empty patch`;
    /// * a path outside the writable roots:
    ///   `patch rejected: writing outside of the sandbox's writable roots: <abs path>`;
    /// * a protected path: `patch rejected: writing a protected path: <abs path> (…)`;
    /// * a write failure: the error itself, e.g. `Failed to write file <abs path>: <io error>`.
    pub fn model_text(&self) -> String {
        match self {
            PatchError::Parse(_)
            | PatchError::Match(_)
            | PatchError::Read { .. }
            | PatchError::Stale { .. } => format!("apply_patch verification failed: {self}"),
            PatchError::Empty | PatchError::NotWritable { .. } | PatchError::Protected { .. } => {
                format!("patch rejected: {self}")
            }
            PatchError::Write { .. } => self.to_string(),
        }
    }

    /// True for every error raised before anything was written (all but [`PatchError::Write`]).
    pub fn wrote_nothing(&self) -> bool {
        !matches!(self, PatchError::Write { .. })
    }
}
