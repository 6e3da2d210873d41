//! The records of a rollout file, one per line.

use std::fmt;

use serde::de::value::MapAccessDeserializer;
use serde::de::{self, DeserializeSeed, IntoDeserializer, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use weft_protocol::ThreadId;
use weft_protocol::{
    AskForApproval, DynamicToolSpec, GitInfo, ReasoningEffort, ReasoningSummary, SandboxPolicy,
    SessionSource, Thread, ThreadItem, ThreadTokenUsage, TurnError, TurnId, TurnStatus,
};

use crate::model::ResponseItem;
use crate::settings::ThreadSettings;
use crate::time::now_ms;

/// One line of a rollout: when it was appended (Unix ms) and what it records.
///
/// On disk: `{"ts":1767225600123,"type":"response_item","payload":{…}}`. (Deserialized by
/// hand: `#[serde(flatten)]` would buffer every line before parsing it.)
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RolloutLine {
    /// When the record was appended, Unix milliseconds.
    pub ts: i64,
    /// The record (`type` + `payload`).
    #[serde(flatten)]
    pub record: RolloutRecord,
}

impl RolloutLine {
    /// A line stamped now.
    pub fn now(record: RolloutRecord) -> RolloutLine {
        RolloutLine {
            ts: now_ms(),
            record,
        }
    }
}

impl<'de> Deserialize<'de> for RolloutLine {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<RolloutLine, D::Error> {
        deserializer.deserialize_map(LineVisitor)
    }
}

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "lowercase")]
enum LineField {
    Ts,
    Type,
    Payload,
    #[serde(other)]
    Other,
}

struct LineVisitor;

impl<'de> Visitor<'de> for LineVisitor {
    type Value = RolloutLine;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a rollout line {ts, type, payload}")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RolloutLine, A::Error> {
        let mut ts = None;
        let mut kind: Option<String> = None;
        let mut record = None;
        // Only when `payload` comes before `type` (never in files Weft writes).
        let mut early_payload: Option<serde_json::Value> = None;
        while let Some(field) = map.next_key::<LineField>()? {
            match field {
                LineField::Ts => ts = Some(map.next_value::<i64>()?),
                LineField::Type => kind = Some(map.next_value()?),
                LineField::Payload => match &kind {
                    Some(tag) => record = Some(map.next_value_seed(PayloadSeed { tag })?),
                    None => early_payload = Some(map.next_value()?),
                },
                LineField::Other => {
                    map.next_value::<de::IgnoredAny>()?;
                }
            }
        }
        let ts = ts.ok_or_else(|| de::Error::missing_field("ts"))?;
        let tag = kind.ok_or_else(|| de::Error::missing_field("type"))?;
        let record = match (record, early_payload) {
            (Some(record), _) => record,
            (None, payload) => {
                let payload = payload.unwrap_or(serde_json::Value::Null);
                PayloadSeed { tag: &tag }
                    .deserialize(payload)
                    .map_err(de::Error::custom)?
            }
        };
        Ok(RolloutLine { ts, record })
    }
}

/// Deserializes a line's payload as the [`RolloutRecord`] its `type` names, through the
/// derived (adjacently tagged) impl, without buffering.
struct PayloadSeed<'a> {
    tag: &'a str,
}

impl<'de> DeserializeSeed<'de> for PayloadSeed<'_> {
    type Value = RolloutRecord;

    fn deserialize<D: Deserializer<'de>>(self, payload: D) -> Result<RolloutRecord, D::Error> {
        RolloutRecord::deserialize(MapAccessDeserializer::new(Adjacent {
            tag: self.tag,
            payload: Some(payload),
            next: 0,
        }))
    }
}

/// Presents `{"type": tag, "payload": <payload>}` to the derived deserializer.
struct Adjacent<'a, D> {
    tag: &'a str,
    payload: Option<D>,
    next: u8,
}

impl<'de, D: Deserializer<'de>> MapAccess<'de> for Adjacent<'_, D> {
    type Error = D::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, D::Error> {
        let key = match self.next {
            0 => "type",
            1 => "payload",
            _ => return Ok(None),
        };
        seed.deserialize(key.into_deserializer()).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, D::Error> {
        self.next += 1;
        if self.next == 1 {
            return seed.deserialize(self.tag.into_deserializer());
        }
        match self.payload.take() {
            Some(payload) => seed.deserialize(payload),
            None => Err(de::Error::custom("payload read twice")),
        }
    }
}

/// What one line records. Tagged as `{"type": "<snake_case name>", "payload": …}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", content = "payload", rename_all = "snake_case")]
pub enum RolloutRecord {
    /// The header (first line only).
    SessionMeta(Box<SessionMeta>),
    /// A turn started, with its frozen context.
    TurnStarted {
        /// The turn.
        turn_id: TurnId,
        /// Unix seconds (the `startedAt` of the wire turn).
        started_at: i64,
        /// The frozen turn context.
        context: TurnContextRecord,
    },
    /// A model-facing history item, in history order (including the interrupted-turn marker).
    ResponseItem(ResponseItem),
    /// A client-visible item reached its final state.
    ItemCompleted {
        /// The turn the item belongs to.
        turn_id: TurnId,
        /// The item in its final state (wire shape).
        item: ThreadItem,
    },
    /// A turn reached a terminal state.
    TurnEnded {
        /// The turn.
        turn_id: TurnId,
        /// `completed`, `interrupted` or `failed`.
        status: TurnStatus,
        /// Set when `failed`.
        #[serde(default)]
        error: Option<TurnError>,
        /// Unix seconds.
        completed_at: i64,
        /// Wall-clock duration in milliseconds.
        #[serde(default)]
        duration_ms: Option<i64>,
    },
    /// The thread's token usage after a model response (the last one wins).
    TokenUsage(ThreadTokenUsage),
    /// `thread/name/set` (the last one wins).
    ThreadNameSet {
        /// The new name.
        name: String,
    },
    /// A sub-agent was closed (`close_agent`) or opened again (`resume_agent`); the last one
    /// wins (docs/agents.md §4).
    AgentClosed {
        /// Closed.
        closed: bool,
    },
    /// The guardian decided an approval question (`item/autoApprovalReview/completed`,
    /// docs/protocol.md §9.8); not replayed.
    GuardianReview(Box<weft_protocol::ItemGuardianApprovalReviewCompletedNotification>),
    /// A ghost snapshot of the workspace for a turn (docs/architecture.md §5.5).
    GhostSnapshot(crate::snapshots::SnapshotRecord),
    /// The history was compacted: the model history restarts from `replacement_history`.
    Compacted {
        /// The summary text the compaction produced.
        summary: String,
        /// The whole model history after the compaction.
        replacement_history: Vec<ResponseItem>,
    },
}

/// The header of a rollout: who the thread is and how it was created.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionMeta {
    /// Thread id.
    pub id: ThreadId,
    /// Creation time, Unix seconds.
    pub created_at: i64,
    /// Working directory at creation.
    pub cwd: String,
    /// Model at creation.
    pub model: String,
    /// Provider id at creation.
    pub model_provider: String,
    /// Which kind of client created the thread.
    pub source: SessionSource,
    /// The creating client's `clientInfo.name`.
    #[serde(default)]
    pub originator: Option<String>,
    /// Version of the Weft that created the thread.
    pub cli_version: String,
    /// The source thread of a fork.
    #[serde(default)]
    pub forked_from_id: Option<ThreadId>,
    /// Always `false` (ephemeral threads have no rollout).
    #[serde(default)]
    pub ephemeral: bool,
    /// Replacement base instructions, when set.
    #[serde(default)]
    pub base_instructions: Option<String>,
    /// Developer instructions, when set.
    #[serde(default)]
    pub developer_instructions: Option<String>,
    /// Approval policy at creation.
    pub approval_policy: AskForApproval,
    /// Sandbox policy at creation.
    pub sandbox_policy: SandboxPolicy,
    /// Reasoning effort at creation.
    #[serde(default)]
    pub reasoning_effort: Option<ReasoningEffort>,
    /// Reasoning summary mode at creation.
    #[serde(default)]
    pub reasoning_summary: Option<ReasoningSummary>,
    /// `thread/start.threadSource`.
    #[serde(default)]
    pub thread_source: Option<String>,
    /// Git metadata captured at creation.
    #[serde(default)]
    pub git_info: Option<GitInfo>,
    /// The thread's client-defined tools (`thread/start.dynamicTools`, the reference's
    /// `dynamic_tools`). Absent in older rollouts and when there are none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dynamic_tools: Vec<DynamicToolSpec>,
}

impl SessionMeta {
    /// The header of a thread that is starting with these settings.
    pub fn new(thread: &Thread, settings: &ThreadSettings) -> SessionMeta {
        SessionMeta {
            id: thread.id.clone(),
            created_at: thread.created_at,
            cwd: settings.cwd.display().to_string(),
            model: settings.model.clone(),
            model_provider: settings.model_provider.clone(),
            source: thread.source.clone(),
            originator: thread.originator.clone(),
            cli_version: thread.cli_version.clone(),
            forked_from_id: thread.forked_from_id.clone(),
            ephemeral: false,
            base_instructions: settings.base_instructions.clone(),
            developer_instructions: settings.developer_instructions.clone(),
            approval_policy: settings.approval_policy,
            sandbox_policy: settings.sandbox.clone(),
            reasoning_effort: settings.reasoning_effort.clone(),
            reasoning_summary: settings.reasoning_summary,
            thread_source: thread.thread_source.clone(),
            git_info: thread.git_info.clone(),
            dynamic_tools: settings.dynamic_tools.clone(),
        }
    }
}

/// The context a turn was started with (frozen for the whole turn, docs/architecture.md §6.2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnContextRecord {
    /// Model.
    pub model: String,
    /// Provider id.
    pub model_provider: String,
    /// Working directory.
    pub cwd: String,
    /// Approval policy.
    pub approval_policy: AskForApproval,
    /// Sandbox policy.
    pub sandbox_policy: SandboxPolicy,
    /// Reasoning effort.
    #[serde(default)]
    pub effort: Option<ReasoningEffort>,
    /// Reasoning summary mode.
    #[serde(default)]
    pub summary: Option<ReasoningSummary>,
    /// The collaboration mode (docs/protocol.md §7.25), once a client chose one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collaboration_mode: Option<weft_protocol::CollaborationMode>,
    /// The built-in permission profile the sandbox came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_profile: Option<String>,
    /// Who reviewed approvals (docs/protocol.md §9.8); absent for `user`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approvals_reviewer: Option<weft_protocol::ApprovalsReviewer>,
}

impl TurnContextRecord {
    /// The context of a turn started with these settings.
    pub fn from_settings(settings: &ThreadSettings) -> TurnContextRecord {
        TurnContextRecord {
            model: settings.model.clone(),
            model_provider: settings.model_provider.clone(),
            cwd: settings.cwd.display().to_string(),
            approval_policy: settings.approval_policy,
            sandbox_policy: settings.sandbox.clone(),
            effort: settings.reasoning_effort.clone(),
            summary: settings.reasoning_summary,
            collaboration_mode: settings.collaboration_mode.clone(),
            permission_profile: settings.permission_profile.clone(),
            approvals_reviewer: (settings.approvals_reviewer
                != weft_protocol::ApprovalsReviewer::User)
                .then_some(settings.approvals_reviewer),
        }
    }
}
