//! Past imports (`externalAgentConfig/import/readHistories`): each import Weft ran and each
//! one a client recorded (`externalAgentConfig/import/recordHistory`), kept in
//! `$WEFT_HOME/external_agent_imports.json` (oldest first; past `[limits]
//! max_external_agent_imports` the oldest are dropped, and one entry may hold at most
//! `max_external_agent_import_bytes` of JSON), written atomically, one writer at a time.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use weft_protocol::external_agent_api::ExternalAgentConfigImportHistory;

use crate::config::edit::write_atomically;

/// The file, in `$WEFT_HOME`.
pub const HISTORY_FILE: &str = "external_agent_imports.json";

/// One read-modify-write at a time, in this process.
static WRITES: Mutex<()> = Mutex::new(());

#[derive(Debug, Default, Serialize, Deserialize)]
struct Stored {
    #[serde(default)]
    imports: Vec<ExternalAgentConfigImportHistory>,
}

/// Why an entry was not recorded.
#[derive(Debug, thiserror::Error)]
pub enum AppendError {
    /// The entry is larger than the limit.
    #[error(
        "the import record is {size} bytes of JSON; [limits] max_external_agent_import_bytes is {max}"
    )]
    TooLarge {
        /// Its size.
        size: usize,
        /// The limit.
        max: usize,
    },
    /// Reading or writing the file failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// The history of a Weft home.
#[derive(Debug, Clone)]
pub struct History {
    path: PathBuf,
    max_entries: usize,
    max_entry_bytes: usize,
}

impl History {
    /// The history kept in `weft_home`, bounded by `[limits]`.
    pub fn new(weft_home: &Path, limits: &crate::limits::Limits) -> History {
        History {
            path: weft_home.join(HISTORY_FILE),
            max_entries: limits.max_external_agent_imports,
            max_entry_bytes: limits.max_external_agent_import_bytes,
        }
    }

    /// Past imports, newest first.
    pub fn read(&self) -> std::io::Result<Vec<ExternalAgentConfigImportHistory>> {
        let mut imports = self.load()?.imports;
        imports.reverse();
        Ok(imports)
    }

    /// Add `entry` as the newest import.
    pub fn append(&self, entry: ExternalAgentConfigImportHistory) -> Result<(), AppendError> {
        let size = serde_json::to_vec(&entry)
            .map_err(std::io::Error::other)?
            .len();
        if size > self.max_entry_bytes {
            return Err(AppendError::TooLarge {
                size,
                max: self.max_entry_bytes,
            });
        }
        let _one = WRITES
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut stored = self.load()?;
        stored.imports.push(entry);
        let excess = stored.imports.len().saturating_sub(self.max_entries);
        stored.imports.drain(..excess);
        let text = serde_json::to_string_pretty(&stored).map_err(std::io::Error::other)?;
        write_atomically(&self.path, &format!("{text}\n"))?;
        Ok(())
    }

    fn load(&self) -> std::io::Result<Stored> {
        match std::fs::read_to_string(&self.path) {
            Ok(text) => serde_json::from_str(&text).map_err(|err| {
                std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("{} does not parse: {err}", self.path.display()),
                )
            }),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(Stored::default()),
            Err(err) => Err(err),
        }
    }
}
