//! A thread's row in the index, and how it maps to and from the wire thread and a rollout.

use std::path::{Path, PathBuf};

use weft_protocol::{
    ReasoningEffort, SessionSource, SubAgentSource, Thread, ThreadId, ThreadStatus,
};

use crate::rollout::Replay;

/// One indexed thread.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadRow {
    /// Thread id.
    pub id: ThreadId,
    /// The rollout file (in `sessions/` or `archived_sessions/`).
    pub rollout_path: PathBuf,
    /// Working directory (as last used).
    pub cwd: String,
    /// Model (as last used).
    pub model: Option<String>,
    /// Provider id (as last used).
    pub model_provider: String,
    /// Reasoning effort (as last used).
    pub reasoning_effort: Option<ReasoningEffort>,
    /// Which kind of client created the thread (the `source` column holds its
    /// [`source_kind`]).
    pub source: SessionSource,
    /// The creating client's name.
    pub originator: Option<String>,
    /// Version of the Weft that created the thread.
    pub cli_version: String,
    /// `thread/start.threadSource`.
    pub thread_source: Option<String>,
    /// First user message (`""` when none yet).
    pub preview: String,
    /// User-facing name.
    pub name: Option<String>,
    /// Unix seconds.
    pub created_at: i64,
    /// Unix seconds.
    pub updated_at: i64,
    /// Whether the rollout is in `archived_sessions/`.
    pub archived: bool,
    /// Source of a fork.
    pub forked_from_id: Option<ThreadId>,
    /// Unix seconds of the last user activity: creation, then each turn started (the
    /// `recency_at` sort key).
    pub recency_at: i64,
    /// A sub-agent closed by `close_agent` (docs/agents.md §4).
    pub agent_closed: bool,
}

impl ThreadRow {
    /// The row of a thread as its rollout tells it.
    pub fn from_replay(replay: &Replay, path: &Path, archived: bool) -> ThreadRow {
        let thread = replay.thread(Some(path));
        let mut row = ThreadRow::from_thread(&thread, path, archived);
        row.updated_at = replay.updated_at;
        row.recency_at = replay
            .latest_turn_start
            .map_or(row.created_at, |at| at.max(row.created_at));
        row.agent_closed = replay.agent_closed;
        row
    }

    /// The row of a live thread (e.g. right after `thread/start`).
    pub fn from_thread(thread: &Thread, path: &Path, archived: bool) -> ThreadRow {
        ThreadRow {
            id: thread.id.clone(),
            rollout_path: path.to_path_buf(),
            cwd: thread.cwd.clone(),
            model: thread.model.clone(),
            model_provider: thread.model_provider.clone(),
            reasoning_effort: thread.reasoning_effort.clone(),
            source: thread.source.clone(),
            originator: thread.originator.clone(),
            cli_version: thread.cli_version.clone(),
            thread_source: thread.thread_source.clone(),
            preview: thread.preview.clone(),
            name: thread.name.clone(),
            created_at: thread.created_at,
            updated_at: thread.updated_at,
            archived,
            forked_from_id: thread.forked_from_id.clone(),
            recency_at: thread.recency_at.unwrap_or(thread.created_at),
            agent_closed: false,
        }
    }

    /// The thread that spawned this one, when it is a spawned sub-agent thread.
    pub fn parent_thread_id(&self) -> Option<ThreadId> {
        SubAgentSource::parent_of(&self.source)
    }

    /// The wire thread for `thread/list` / `thread/read` (`turns: []`).
    pub fn to_thread(&self, status: ThreadStatus) -> Thread {
        Thread {
            forked_from_id: self.forked_from_id.clone(),
            preview: self.preview.clone(),
            model_provider: self.model_provider.clone(),
            model: self.model.clone(),
            reasoning_effort: self.reasoning_effort.clone(),
            updated_at: self.updated_at,
            recency_at: Some(self.recency_at),
            status,
            path: Some(self.rollout_path.display().to_string()),
            cwd: self.cwd.clone(),
            cli_version: self.cli_version.clone(),
            originator: self.originator.clone(),
            thread_source: self.thread_source.clone(),
            name: self.name.clone(),
            ..crate::wire_thread::base(self.id.clone(), self.source.clone(), self.created_at)
        }
    }
}

/// The `thread/list` filter kind of a source: `cli`, `vscode`, `exec`, `appServer`,
/// `subAgentReview`, `subAgentCompact`, `subAgentThreadSpawn`, `subAgentOther` or `unknown`
/// (custom sources count as `unknown`).
pub fn source_kind(source: &SessionSource) -> &'static str {
    match source {
        SessionSource::Cli => "cli",
        SessionSource::Vscode => "vscode",
        SessionSource::Exec => "exec",
        SessionSource::AppServer => "appServer",
        SessionSource::Unknown | SessionSource::Custom(_) => "unknown",
        SessionSource::SubAgent(sub) => match sub {
            SubAgentSource::Review => "subAgentReview",
            SubAgentSource::Compact => "subAgentCompact",
            SubAgentSource::ThreadSpawn { .. } => "subAgentThreadSpawn",
            SubAgentSource::MemoryConsolidation | SubAgentSource::Other(_) => "subAgentOther",
        },
    }
}
