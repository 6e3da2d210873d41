//! Threads and their status, source and metadata.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ids::ThreadId;
use crate::policy::ReasoningEffort;
use crate::turn::Turn;

/// Flags of an active thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ThreadActiveFlag {
    /// A server request for approval is pending.
    WaitingOnApproval,
    /// A server request for user input is pending.
    WaitingOnUserInput,
}

/// Runtime status of a thread. Tagged by `type`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum ThreadStatus {
    /// Stored but not in memory.
    NotLoaded,
    /// Loaded, no turn running.
    Idle,
    /// Loaded; the last turn failed.
    SystemError,
    /// A turn is running.
    Active {
        /// What the turn is waiting on.
        active_flags: Vec<ThreadActiveFlag>,
    },
}

impl ThreadStatus {
    /// `{"type":"active","activeFlags":[]}`.
    pub fn active() -> Self {
        ThreadStatus::Active {
            active_flags: Vec::new(),
        }
    }
}

/// Where a sub-agent thread came from (snake_case on the wire).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SubAgentSource {
    /// A review sub-agent.
    Review,
    /// A compaction sub-agent.
    Compact,
    /// A memory consolidation sub-agent.
    MemoryConsolidation,
    /// Spawned by another thread.
    ThreadSpawn {
        /// The spawning thread.
        parent_thread_id: ThreadId,
        /// Spawn depth.
        depth: i32,
        /// Agent path.
        #[serde(default)]
        agent_path: Option<String>,
        /// Agent nickname.
        #[serde(default)]
        agent_nickname: Option<String>,
        /// Agent role.
        #[serde(default)]
        agent_role: Option<String>,
    },
    /// Anything else.
    Other(String),
}

/// Which kind of client created a thread.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum SessionSource {
    /// The Codex CLI.
    Cli,
    /// An IDE / app-server client (Codex records app-server threads as `vscode`).
    Vscode,
    /// `codex exec`.
    Exec,
    /// The app-server itself.
    AppServer,
    /// Unknown.
    Unknown,
    /// A custom source name.
    Custom(String),
    /// A sub-agent.
    SubAgent(SubAgentSource),
}

impl SubAgentSource {
    /// A spawned sub-agent's nickname, from its thread's source.
    pub fn nickname_of(source: &SessionSource) -> Option<String> {
        match source {
            SessionSource::SubAgent(SubAgentSource::ThreadSpawn { agent_nickname, .. }) => {
                agent_nickname.clone()
            }
            _ => None,
        }
    }

    /// The thread that spawned a sub-agent, from its thread's source.
    pub fn parent_of(source: &SessionSource) -> Option<ThreadId> {
        match source {
            SessionSource::SubAgent(SubAgentSource::ThreadSpawn {
                parent_thread_id, ..
            }) => Some(parent_thread_id.clone()),
            _ => None,
        }
    }

    /// A spawned sub-agent's role, from its thread's source.
    pub fn role_of(source: &SessionSource) -> Option<String> {
        match source {
            SessionSource::SubAgent(SubAgentSource::ThreadSpawn { agent_role, .. }) => {
                agent_role.clone()
            }
            _ => None,
        }
    }
}

/// Source kinds accepted by the `thread/list` filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ThreadSourceKind {
    /// `cli`.
    Cli,
    /// `vscode`.
    Vscode,
    /// `exec`.
    Exec,
    /// `appServer`.
    AppServer,
    /// Any sub-agent.
    SubAgent,
    /// Review sub-agents.
    SubAgentReview,
    /// Compaction sub-agents.
    SubAgentCompact,
    /// Spawned sub-agents.
    SubAgentThreadSpawn,
    /// Other sub-agents.
    SubAgentOther,
    /// `unknown`.
    Unknown,
}

/// Git metadata captured when the thread was created.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GitInfo {
    /// Commit sha.
    #[serde(default)]
    pub sha: Option<String>,
    /// Branch name.
    #[serde(default)]
    pub branch: Option<String>,
    /// Remote origin URL.
    #[serde(default)]
    pub origin_url: Option<String>,
}

/// History storage mode of a thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ThreadHistoryMode {
    /// Whole history in one rollout.
    Legacy,
    /// Paginated history (`thread/turns/list`, `thread/items/list`); the reference's default
    /// for new threads, and the only mode Weft serves.
    #[default]
    Paginated,
}

/// Appearance of a thread section.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ThreadSectionAppearance {
    /// Color.
    #[serde(default)]
    pub color: Option<String>,
    /// Icon.
    #[serde(default)]
    pub icon: Option<String>,
}

/// A user-defined thread section (docs/protocol.md §7.36).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ThreadSection {
    /// Section id.
    pub id: String,
    /// Section name.
    pub name: String,
    /// Appearance.
    #[serde(default)]
    pub appearance: Option<ThreadSectionAppearance>,
}

/// A thread: a conversation with persistent history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Thread {
    /// Thread id (a UUID).
    pub id: ThreadId,
    /// Id shared by the threads of one session tree; equals `id` for a top-level thread.
    pub session_id: String,
    /// Source thread of a fork.
    #[serde(default)]
    pub forked_from_id: Option<ThreadId>,
    /// Parent of a sub-agent thread.
    #[serde(default)]
    pub parent_thread_id: Option<ThreadId>,
    /// Usually the first user message; `""` for a fresh thread.
    pub preview: String,
    /// In-memory only (then `path` is `null`).
    pub ephemeral: bool,
    /// The thread's section, if any (docs/protocol.md §7.36).
    #[serde(default)]
    pub section: Option<ThreadSection>,
    /// When the thread entered its section (Unix seconds).
    #[serde(default)]
    pub section_entered_at: Option<i64>,
    /// Project id; required but nullable — always written.
    #[schemars(required, schema_with = "crate::schema_base::nullable_string")]
    pub project_id: Option<String>,
    /// History storage mode.
    #[serde(default)]
    pub history_mode: ThreadHistoryMode,
    /// Model provider id, e.g. `"openai"`.
    pub model_provider: String,
    /// Current model when loaded, else the last persisted one.
    #[serde(default)]
    pub model: Option<String>,
    /// Reasoning effort.
    #[serde(default)]
    pub reasoning_effort: Option<ReasoningEffort>,
    /// Unix timestamp (seconds) of creation.
    pub created_at: i64,
    /// Unix timestamp (seconds) of the last update.
    pub updated_at: i64,
    /// Ordering key for the `recency_at` sort.
    #[serde(default)]
    pub recency_at: Option<i64>,
    /// Runtime status.
    pub status: ThreadStatus,
    /// [UNSTABLE] Rollout file path; `null` when ephemeral.
    #[serde(default)]
    pub path: Option<String>,
    /// Working directory (absolute).
    pub cwd: String,
    /// Version of the server that created the thread.
    pub cli_version: String,
    /// The creating client's `clientInfo.name`.
    #[serde(default)]
    pub originator: Option<String>,
    /// Which kind of client created the thread.
    pub source: SessionSource,
    /// Client-supplied analytics tag from `thread/start.threadSource`.
    #[serde(default)]
    pub thread_source: Option<String>,
    /// Sub-agent nickname.
    #[serde(default)]
    pub agent_nickname: Option<String>,
    /// Sub-agent role.
    #[serde(default)]
    pub agent_role: Option<String>,
    /// Git metadata captured at creation.
    #[serde(default)]
    pub git_info: Option<GitInfo>,
    /// User-facing title.
    #[serde(default)]
    pub name: Option<String>,
    /// Turns; populated only where the method says so, `[]` otherwise.
    pub turns: Vec<Turn>,
}

/// Result of `thread/unsubscribe`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ThreadUnsubscribeStatus {
    /// The thread is not in memory.
    NotLoaded,
    /// Loaded, but this connection was not subscribed.
    NotSubscribed,
    /// The connection was subscribed and now is not.
    Unsubscribed,
}

/// Sort key of `thread/list` (snake_case on the wire).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ThreadSortKey {
    /// Creation time (default).
    #[default]
    CreatedAt,
    /// Last update time.
    UpdatedAt,
    /// Recency.
    RecencyAt,
    /// Position inside a section.
    SectionPosition,
}

/// Sort direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SortDirection {
    /// Ascending.
    Asc,
    /// Descending (default).
    #[default]
    Desc,
}
