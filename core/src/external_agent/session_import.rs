//! The `SESSIONS` item (docs/protocol.md §7.39): Claude Code's recent sessions detected
//! (newest file first, at most `maxSessions`, none older than `maxSessionAgeDays`, only those
//! whose cwd still exists and that were not imported as they are now), and each imported one
//! recorded in `$WEFT_HOME/external_agent_session_imports.json`, so it is offered and imported
//! once (again after its file changes).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use weft_protocol::external_agent_api::{
    ExternalAgentConfigImportItemTypeFailure as Failure,
    ExternalAgentConfigImportItemTypeSuccess as Success,
    ExternalAgentConfigMigrationItemType as Type, SessionMigration,
};

use super::sessions::{Role, Session, read_session};
use super::{Homes, shown};
use crate::config::edit::write_atomically;
use crate::limits::Limits;
use crate::thread::{ImportedThread, ImportedTurn};

/// Sessions detected when the client names no `maxSessions` (the reference's default).
pub const DEFAULT_MAX_SESSIONS: u32 = 50;
/// The age, in days, past which a session is not offered when the client names no
/// `maxSessionAgeDays` (the reference's default).
pub const DEFAULT_MAX_SESSION_AGE_DAYS: u32 = 30;
/// The agent message that ends an imported thread, as the reference ends it.
pub const IMPORTED_MARKER: &str = "<EXTERNAL SESSION IMPORTED>";
/// The ledger of imported sessions, in `$WEFT_HOME`.
const LEDGER_FILE: &str = "external_agent_session_imports.json";

/// How many sessions, how old, how large.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionBounds {
    /// Most sessions listed.
    pub max_sessions: usize,
    /// Oldest modification offered, in days before now.
    pub max_age_days: u64,
    /// Largest file read.
    pub max_bytes: u64,
}

impl SessionBounds {
    /// The client's numbers (else the reference's defaults), capped by `[limits]`.
    pub fn new(max_sessions: Option<u32>, max_age_days: Option<u32>, limits: &Limits) -> Self {
        SessionBounds {
            max_sessions: (max_sessions.unwrap_or(DEFAULT_MAX_SESSIONS) as usize)
                .min(limits.max_external_agent_sessions),
            max_age_days: u64::from(max_age_days.unwrap_or(DEFAULT_MAX_SESSION_AGE_DAYS)),
            max_bytes: limits.max_external_agent_session_bytes,
        }
    }
}

/// One imported session, as the ledger keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LedgerRecord {
    /// The session file (canonical).
    pub source_path: PathBuf,
    /// SHA-256 of its bytes when imported.
    pub content_sha256: String,
    /// The thread it became.
    pub imported_thread_id: String,
    /// When, Unix seconds.
    pub imported_at: i64,
    /// Its modification time then, Unix nanoseconds.
    #[serde(default)]
    pub source_modified_at: Option<i64>,
    /// Its title.
    #[serde(default)]
    pub title: Option<String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Ledger {
    #[serde(default)]
    records: Vec<LedgerRecord>,
}

impl Ledger {
    /// The ledger (empty when absent or unreadable, for detect and import to go on).
    fn load(homes: &Homes) -> Ledger {
        Ledger::read(homes).unwrap_or_default()
    }

    /// The ledger (empty when absent), or why it cannot be read.
    fn read(homes: &Homes) -> std::io::Result<Ledger> {
        match std::fs::read_to_string(homes.weft_home.join(LEDGER_FILE)) {
            Ok(text) => serde_json::from_str(&text).map_err(|err| {
                std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("{LEDGER_FILE} does not parse: {err}"),
                )
            }),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(Ledger::default()),
            Err(err) => Err(err),
        }
    }

    /// The newest record of a source.
    fn latest(&self, source: &Path) -> Option<&LedgerRecord> {
        self.records
            .iter()
            .rev()
            .find(|record| record.source_path == source)
    }

    /// Whether the source, as its file is now, was imported.
    fn has_current(&self, source: &Path, sha256: &str) -> bool {
        self.latest(source)
            .is_some_and(|record| record.content_sha256 == sha256)
    }
}

/// Add a record to the ledger (one writer at a time); a ledger that does not parse is left
/// as it is (its records are not lost to a rewrite).
pub fn record_import(homes: &Homes, record: LedgerRecord) -> std::io::Result<()> {
    static WRITES: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = WRITES
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let mut ledger = Ledger::read(homes)?;
    ledger
        .records
        .retain(|kept| kept.source_path != record.source_path);
    ledger.records.push(record);
    let text = serde_json::to_string_pretty(&ledger).map_err(std::io::Error::other)?;
    write_atomically(&homes.weft_home.join(LEDGER_FILE), &format!("{text}\n"))
}

/// `~/.claude/projects`.
pub fn projects_root(homes: &Homes) -> Option<PathBuf> {
    homes.claude_home().map(|claude| claude.join("projects"))
}

/// Unix nanoseconds of a file's modification.
fn modified_ns(meta: &std::fs::Metadata) -> Option<i64> {
    let since = meta
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    i64::try_from(since.as_nanos()).ok()
}

/// The sessions to offer, newest first.
pub fn detect_sessions(homes: &Homes, bounds: SessionBounds, now: i64) -> Vec<SessionMigration> {
    let Some(root) = projects_root(homes) else {
        return Vec::new();
    };
    let Ok(projects) = std::fs::read_dir(&root) else {
        return Vec::new();
    };
    if bounds.max_sessions == 0 {
        return Vec::new();
    }
    let oldest = now.saturating_sub(bounds.max_age_days.saturating_mul(86_400) as i64);
    let ledger = Ledger::load(homes);
    let mut newest = BinaryHeap::with_capacity(bounds.max_sessions + 1);
    for project in projects.flatten() {
        let Ok(files) = std::fs::read_dir(project.path()) else {
            continue;
        };
        for file in files.flatten() {
            let path = file.path();
            if path.extension().and_then(|ext| ext.to_str()) != Some("jsonl") {
                continue;
            }
            let Ok(meta) = std::fs::metadata(&path) else {
                continue;
            };
            let Some(modified) = modified_ns(&meta) else {
                continue;
            };
            if !meta.is_file() || meta.len() > bounds.max_bytes || modified / 1_000_000_000 < oldest
            {
                continue;
            }
            if let Ok(source) = std::fs::canonicalize(&path)
                && ledger
                    .latest(&source)
                    .is_some_and(|record| record.source_modified_at == Some(modified))
            {
                continue;
            }
            newest.push((Reverse(modified), path));
            if newest.len() > bounds.max_sessions {
                newest.pop();
            }
        }
    }
    newest
        .into_sorted_vec()
        .into_iter()
        .filter_map(|(_, path)| offered(&ledger, &path, bounds.max_bytes))
        .collect()
}

/// The session at `path` as detect lists it, when it is one to offer.
fn offered(ledger: &Ledger, path: &Path, max_bytes: u64) -> Option<SessionMigration> {
    let session = read_session(path, max_bytes).ok()?;
    let source = std::fs::canonicalize(path).ok()?;
    if ledger.has_current(&source, &session.sha256) {
        return None;
    }
    session.latest_timestamp()?;
    let cwd = session.cwd.clone()?;
    if !cwd.is_dir() {
        return None;
    }
    Some(SessionMigration {
        path: shown(path),
        cwd: shown(&cwd),
        title: session.title,
    })
}

/// A requested session, read and ready to store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pending {
    /// The file (canonical).
    pub source: PathBuf,
    /// Its modification time, Unix nanoseconds.
    pub modified_ns: Option<i64>,
    /// What it holds.
    pub session: Session,
    /// The thread it becomes.
    pub thread: ImportedThread,
}

/// What to do with one requested session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Requested {
    /// Import it.
    Import(Box<Pending>),
    /// It was imported as it is now: nothing to do.
    AlreadyImported,
    /// It is not one detect offers (the reference's `session_not_detected`).
    NotDetected,
    /// It cannot be read or holds no conversation: skipped, as the reference skips it.
    Skipped,
}

/// Sort out a requested session against what detect offers now (`detected`, with the
/// default bounds).
pub fn prepare(
    homes: &Homes,
    requested: &SessionMigration,
    detected: &[SessionMigration],
    max_bytes: u64,
) -> Requested {
    let path = Path::new(&requested.path);
    let ledger = Ledger::load(homes);
    let source = std::fs::canonicalize(path).ok();
    let is_detected = detected.iter().any(|found| found.path == requested.path);
    let in_ledger = source
        .as_deref()
        .is_some_and(|source| ledger.latest(source).is_some());
    // Only a file detect offers or the ledger names is read.
    if !is_detected && !in_ledger {
        return Requested::NotDetected;
    }
    let session = read_session(path, max_bytes).ok();
    if let (Some(source), Some(session)) = (&source, &session)
        && ledger.has_current(source, &session.sha256)
    {
        return Requested::AlreadyImported;
    }
    if !is_detected {
        return Requested::NotDetected;
    }
    let (Some(source), Some(session)) = (source, session) else {
        return Requested::Skipped;
    };
    let Some(thread) = imported_thread(&session) else {
        return Requested::Skipped;
    };
    let modified_ns = std::fs::metadata(&source)
        .ok()
        .and_then(|meta| modified_ns(&meta));
    Requested::Import(Box::new(Pending {
        source,
        modified_ns,
        session,
        thread,
    }))
}

/// The failure of a session detect does not offer, in the reference's words.
pub fn not_detected(path: &str) -> Failure {
    Failure {
        item_type: Type::Sessions,
        error_type: None,
        sub_error_type: Some("session_not_detected".into()),
        failure_stage: "session_missing".into(),
        message: format!("external agent session was not detected for import: {path}"),
        cwd: None,
        source: Some(path.to_owned()),
    }
}

/// The failure of a session whose thread could not be stored.
pub fn not_stored(pending: &Pending, error: &str) -> Failure {
    Failure {
        item_type: Type::Sessions,
        error_type: None,
        sub_error_type: None,
        failure_stage: "session_import".into(),
        message: error.to_owned(),
        cwd: Some(shown(&pending.thread.cwd)),
        source: Some(shown(&pending.source)),
    }
}

/// The success of a session stored as `thread_id`, as the reference reports it.
pub fn stored(pending: &Pending, thread_id: &str) -> Success {
    Success {
        item_type: Type::Sessions,
        cwd: Some(shown(&pending.thread.cwd)),
        source: Some(shown(&pending.source)),
        target: Some(thread_id.to_owned()),
        title: pending.session.title.clone(),
    }
}

/// The ledger record of a session stored as `thread_id`.
pub fn ledger_record(pending: &Pending, thread_id: &str) -> LedgerRecord {
    LedgerRecord {
        source_path: pending.source.clone(),
        content_sha256: pending.session.sha256.clone(),
        imported_thread_id: thread_id.to_owned(),
        imported_at: crate::time::now_secs(),
        source_modified_at: pending.modified_ns,
        title: pending.session.title.clone(),
    }
}

/// The thread a session becomes: one turn per user message with the assistant's messages
/// after it (those before the first user message are dropped), the last turn ending with
/// [`IMPORTED_MARKER`]; `None` without a cwd that exists or a user message.
pub fn imported_thread(session: &Session) -> Option<ImportedThread> {
    let cwd = session.cwd.clone().filter(|cwd| cwd.is_dir())?;
    let fallback = session
        .latest_timestamp()
        .unwrap_or_else(crate::time::now_secs);
    let mut turns: Vec<ImportedTurn> = Vec::new();
    let mut last_time = None;
    for message in &session.messages {
        let at = message.timestamp.or(last_time).unwrap_or(fallback);
        last_time = Some(at);
        match message.role {
            Role::User => turns.push(ImportedTurn {
                user: message.text.clone(),
                agent: Vec::new(),
                started_at: at,
                completed_at: at,
            }),
            Role::Assistant => {
                if let Some(turn) = turns.last_mut() {
                    turn.agent.push(message.text.clone());
                    turn.completed_at = turn.completed_at.max(at);
                }
            }
        }
    }
    let last = turns.last_mut()?;
    last.agent.push(IMPORTED_MARKER.into());
    Some(ImportedThread {
        cwd,
        name: session.title.clone(),
        created_at: turns[0].started_at,
        turns,
        originator: None,
    })
}

#[cfg(test)]
#[path = "session_import_tests.rs"]
mod tests;
