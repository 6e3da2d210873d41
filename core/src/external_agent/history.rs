//! Past imports (`externalAgentConfig/import/readHistories`): each import Weft ran and each
//! one a client recorded (`externalAgentConfig/import/recordHistory`), kept in
//! `$WEFT_HOME/external_agent_imports.json` (oldest first, at most [`MAX_HISTORIES`]; the
//! oldest are dropped past that), written atomically, one writer at a time.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use weft_protocol::external_agent_api::ExternalAgentConfigImportHistory;

use crate::config::edit::write_atomically;

/// The file, in `$WEFT_HOME`.
pub const HISTORY_FILE: &str = "external_agent_imports.json";

/// Imports kept.
pub const MAX_HISTORIES: usize = 200;

/// One read-modify-write at a time, in this process.
static WRITES: Mutex<()> = Mutex::new(());

#[derive(Debug, Default, Serialize, Deserialize)]
struct Stored {
    #[serde(default)]
    imports: Vec<ExternalAgentConfigImportHistory>,
}

/// The history of the Weft home `home`.
#[derive(Debug, Clone)]
pub struct History {
    path: PathBuf,
}

impl History {
    /// The history kept in `weft_home`.
    pub fn new(weft_home: &Path) -> History {
        History {
            path: weft_home.join(HISTORY_FILE),
        }
    }

    /// Past imports, newest first.
    pub fn read(&self) -> std::io::Result<Vec<ExternalAgentConfigImportHistory>> {
        let mut imports = self.load()?.imports;
        imports.reverse();
        Ok(imports)
    }

    /// Add `entry` as the newest import.
    pub fn append(&self, entry: ExternalAgentConfigImportHistory) -> std::io::Result<()> {
        let _one = WRITES
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut stored = self.load()?;
        stored.imports.push(entry);
        let excess = stored.imports.len().saturating_sub(MAX_HISTORIES);
        stored.imports.drain(..excess);
        let text = serde_json::to_string_pretty(&stored).map_err(std::io::Error::other)?;
        write_atomically(&self.path, &format!("{text}\n"))
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
