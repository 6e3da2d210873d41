//! Thread items: the user inputs and agent outputs inside a turn.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::collab_items::{CollabAgentToolCallItem, SubAgentActivityItem};
use crate::dynamic_tools::DynamicToolCallItem;
use crate::ids::ItemId;
use crate::input::UserInput;
use crate::mcp_items::McpToolCallItem;

/// A thread item: the variant-specific fields (tagged by `type`) plus the item's timestamps,
/// flattened into one object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadItem {
    /// Variant-specific fields, including `type` and `id`.
    #[serde(flatten)]
    pub details: ThreadItemDetails,
    /// Unix timestamp (ms) when the item started.
    #[serde(default)]
    pub started_at_ms: Option<i64>,
    /// Unix timestamp (ms) when the item completed; `null` while in progress.
    #[serde(default)]
    pub completed_at_ms: Option<i64>,
}

impl ThreadItem {
    /// Wraps item details without timestamps.
    pub fn new(details: impl Into<ThreadItemDetails>) -> Self {
        Self {
            details: details.into(),
            started_at_ms: None,
            completed_at_ms: None,
        }
    }

    /// The item id.
    pub fn id(&self) -> &ItemId {
        self.details.id()
    }

    /// The wire `type` of the item.
    pub fn item_type(&self) -> &'static str {
        self.details.item_type()
    }
}

/// Variant-specific part of a [`ThreadItem`], tagged by `type`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ThreadItemDetails {
    /// Input from the user.
    UserMessage(UserMessageItem),
    /// Text injected by lifecycle hooks.
    HookPrompt(HookPromptItem),
    /// A message from the agent.
    AgentMessage(AgentMessageItem),
    /// A proposed plan (plan mode).
    Plan(PlanItem),
    /// Model reasoning.
    Reasoning(ReasoningItem),
    /// A shell command run by the agent.
    CommandExecution(CommandExecutionItem),
    /// A set of file edits.
    FileChange(FileChangeItem),
    /// A call of an MCP server's tool.
    McpToolCall(McpToolCallItem),
    /// A review started (with `review/start`).
    EnteredReviewMode(ReviewModeItem),
    /// A review finished.
    ExitedReviewMode(ReviewModeItem),
    /// The history was compacted.
    ContextCompaction(ContextCompactionItem),
    /// A call of a client-defined tool (docs/protocol.md §9.6).
    DynamicToolCall(DynamicToolCallItem),
    /// A call of one of the multi-agent tools (spawn, send input, wait, close …).
    CollabAgentToolCall(CollabAgentToolCallItem),
    /// A sub-agent of the thread started, was talked to, was interrupted or finished.
    SubAgentActivity(SubAgentActivityItem),
}

impl ThreadItemDetails {
    /// The item id.
    pub fn id(&self) -> &ItemId {
        match self {
            ThreadItemDetails::UserMessage(i) => &i.id,
            ThreadItemDetails::HookPrompt(i) => &i.id,
            ThreadItemDetails::AgentMessage(i) => &i.id,
            ThreadItemDetails::Plan(i) => &i.id,
            ThreadItemDetails::Reasoning(i) => &i.id,
            ThreadItemDetails::CommandExecution(i) => &i.id,
            ThreadItemDetails::FileChange(i) => &i.id,
            ThreadItemDetails::McpToolCall(i) => &i.id,
            ThreadItemDetails::EnteredReviewMode(i) => &i.id,
            ThreadItemDetails::ExitedReviewMode(i) => &i.id,
            ThreadItemDetails::ContextCompaction(i) => &i.id,
            ThreadItemDetails::DynamicToolCall(i) => &i.id,
            ThreadItemDetails::CollabAgentToolCall(i) => &i.id,
            ThreadItemDetails::SubAgentActivity(i) => &i.id,
        }
    }

    /// The wire `type` of the item.
    pub fn item_type(&self) -> &'static str {
        match self {
            ThreadItemDetails::UserMessage(_) => "userMessage",
            ThreadItemDetails::HookPrompt(_) => "hookPrompt",
            ThreadItemDetails::AgentMessage(_) => "agentMessage",
            ThreadItemDetails::Plan(_) => "plan",
            ThreadItemDetails::Reasoning(_) => "reasoning",
            ThreadItemDetails::CommandExecution(_) => "commandExecution",
            ThreadItemDetails::FileChange(_) => "fileChange",
            ThreadItemDetails::McpToolCall(_) => "mcpToolCall",
            ThreadItemDetails::EnteredReviewMode(_) => "enteredReviewMode",
            ThreadItemDetails::ExitedReviewMode(_) => "exitedReviewMode",
            ThreadItemDetails::ContextCompaction(_) => "contextCompaction",
            ThreadItemDetails::DynamicToolCall(_) => "dynamicToolCall",
            ThreadItemDetails::CollabAgentToolCall(_) => "collabAgentToolCall",
            ThreadItemDetails::SubAgentActivity(_) => "subAgentActivity",
        }
    }
}

macro_rules! into_details {
    ($($ty:ident => $variant:ident),* $(,)?) => {
        $(
            impl From<$ty> for ThreadItemDetails {
                fn from(item: $ty) -> Self {
                    ThreadItemDetails::$variant(item)
                }
            }

            impl From<$ty> for ThreadItem {
                fn from(item: $ty) -> Self {
                    ThreadItem::new(item)
                }
            }
        )*
    };
}

into_details!(
    UserMessageItem => UserMessage,
    HookPromptItem => HookPrompt,
    AgentMessageItem => AgentMessage,
    PlanItem => Plan,
    ReasoningItem => Reasoning,
    CommandExecutionItem => CommandExecution,
    FileChangeItem => FileChange,
    McpToolCallItem => McpToolCall,
    ContextCompactionItem => ContextCompaction,
    DynamicToolCallItem => DynamicToolCall,
    CollabAgentToolCallItem => CollabAgentToolCall,
    SubAgentActivityItem => SubAgentActivity,
);

/// `userMessage` item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UserMessageItem {
    /// Item id.
    pub id: ItemId,
    /// Echo of `turn/start.clientUserMessageId`.
    #[serde(default)]
    pub client_id: Option<String>,
    /// The user's input.
    pub content: Vec<UserInput>,
}

/// A fragment of hook-injected text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HookPromptFragment {
    /// Injected text.
    pub text: String,
    /// Id of the hook run that produced it.
    pub hook_run_id: String,
}

/// `hookPrompt` item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct HookPromptItem {
    /// Item id.
    pub id: ItemId,
    /// Injected fragments.
    pub fragments: Vec<HookPromptFragment>,
}

/// Phase of an agent message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MessagePhase {
    /// Commentary between actions.
    Commentary,
    /// Part of the final answer.
    PartialAnswer,
    /// The final answer.
    FinalAnswer,
}

/// Delivery mode of an agent message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum AgentMessageDelivery {
    /// Delivered asynchronously.
    Async,
}

/// A question asked asynchronously in an agent message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AsyncUserInputQuestion {
    /// Question title.
    pub title: String,
    /// Answer options.
    #[serde(default)]
    pub options: Option<Vec<String>>,
}

/// One memory citation entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MemoryCitationEntry {
    /// Cited file.
    pub path: String,
    /// First cited line.
    pub line_start: u32,
    /// Last cited line.
    pub line_end: u32,
    /// Note.
    pub note: String,
}

/// Memory citations of an agent message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MemoryCitation {
    /// Cited entries.
    pub entries: Vec<MemoryCitationEntry>,
    /// Cited threads.
    pub thread_ids: Vec<String>,
}

/// Moderation metadata of an agent message (Weft never produces it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AgentMessageModeration {
    /// Whether the message was moderated.
    pub moderated: bool,
    /// How to display the moderated message. Loosely typed: the display union (show / hide /
    /// block with helpline annotations) is out of Weft's scope.
    #[serde(default)]
    pub display: Option<Value>,
}

/// `agentMessage` item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentMessageItem {
    /// Item id.
    pub id: ItemId,
    /// Full text at completion; `""` in `item/started`.
    pub text: String,
    /// Message phase.
    #[serde(default)]
    pub phase: Option<MessagePhase>,
    /// Memory citations.
    #[serde(default)]
    pub memory_citation: Option<MemoryCitation>,
    /// Delivery mode.
    #[serde(default)]
    pub delivery: Option<AgentMessageDelivery>,
    /// Questions for the user.
    #[serde(default)]
    pub questions: Option<Vec<AsyncUserInputQuestion>>,
    /// Moderation metadata.
    #[serde(default)]
    pub moderation: Option<AgentMessageModeration>,
}

impl AgentMessageItem {
    /// An agent message with the given text and every optional field `null`.
    pub fn new(id: impl Into<ItemId>, text: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            text: text.into(),
            phase: None,
            memory_citation: None,
            delivery: None,
            questions: None,
            moderation: None,
        }
    }
}

/// `plan` item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PlanItem {
    /// Item id.
    pub id: ItemId,
    /// Plan text.
    pub text: String,
}

/// `reasoning` item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ReasoningItem {
    /// Item id.
    pub id: ItemId,
    /// One entry per summary part.
    #[serde(default)]
    pub summary: Vec<String>,
    /// Raw reasoning text blocks.
    #[serde(default)]
    pub content: Vec<String>,
}

/// Where a command execution came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum CommandExecutionSource {
    /// Requested by the agent.
    #[default]
    Agent,
    /// Run by the user's shell.
    UserShell,
    /// Start of a unified-exec session.
    UnifiedExecStartup,
    /// Interaction with a unified-exec session.
    UnifiedExecInteraction,
}

/// Status of a command execution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum CommandExecutionStatus {
    /// Running or awaiting approval.
    InProgress,
    /// Exited with code 0.
    Completed,
    /// Exited non-zero, or could not run.
    Failed,
    /// The user declined it.
    Declined,
}

/// Best-effort parse of a command, for display.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum CommandAction {
    /// Reads a file.
    Read {
        /// The command.
        command: String,
        /// File name.
        name: String,
        /// File path.
        path: String,
    },
    /// Lists files.
    ListFiles {
        /// The command.
        command: String,
        /// Listed path.
        #[serde(default)]
        path: Option<String>,
    },
    /// Searches files.
    Search {
        /// The command.
        command: String,
        /// Search query.
        #[serde(default)]
        query: Option<String>,
        /// Searched path.
        #[serde(default)]
        path: Option<String>,
    },
    /// Anything else.
    Unknown {
        /// The command.
        command: String,
    },
}

/// `commandExecution` item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommandExecutionItem {
    /// Item id (the tool call id).
    pub id: ItemId,
    /// Display command string.
    pub command: String,
    /// Working directory.
    pub cwd: String,
    /// OS process id, once running.
    #[serde(default)]
    pub process_id: Option<String>,
    /// Where the command came from.
    #[serde(default)]
    pub source: CommandExecutionSource,
    /// Status.
    pub status: CommandExecutionStatus,
    /// Parsed actions, for display.
    pub command_actions: Vec<CommandAction>,
    /// Interleaved stdout and stderr.
    #[serde(default)]
    pub aggregated_output: Option<String>,
    /// Exit code.
    #[serde(default)]
    pub exit_code: Option<i32>,
    /// Duration in milliseconds.
    #[serde(default)]
    pub duration_ms: Option<i64>,
    /// Plugin that ran the command.
    #[serde(default)]
    pub plugin_id: Option<String>,
    /// Script path.
    #[serde(default)]
    pub script_path: Option<String>,
}

/// Kind of a file change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum PatchChangeKind {
    /// A new file.
    Add,
    /// A deleted file.
    Delete,
    /// A modified (possibly renamed) file.
    Update {
        /// New absolute path when the file is renamed (snake_case key on the wire).
        #[serde(default)]
        move_path: Option<String>,
    },
}

/// One file's change inside a `fileChange` item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FileUpdateChange {
    /// Absolute path.
    pub path: String,
    /// Kind of change.
    pub kind: PatchChangeKind,
    /// New content (add), old content (delete) or unified-diff hunks (update).
    pub diff: String,
}

/// Status of a patch application.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum PatchApplyStatus {
    /// Pending or awaiting approval.
    InProgress,
    /// Applied.
    Completed,
    /// Failed to apply.
    Failed,
    /// The user declined it.
    Declined,
}

/// `fileChange` item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FileChangeItem {
    /// Item id (the tool call id).
    pub id: ItemId,
    /// Changed files.
    pub changes: Vec<FileUpdateChange>,
    /// Status.
    pub status: PatchApplyStatus,
}

/// `enteredReviewMode` / `exitedReviewMode` item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ReviewModeItem {
    /// Item id.
    pub id: ItemId,
    /// Review label (entered) or final review text (exited).
    pub review: String,
}

/// `contextCompaction` item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ContextCompactionItem {
    /// Item id.
    pub id: ItemId,
}
