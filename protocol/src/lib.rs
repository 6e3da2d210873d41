//! Wire types of the Codex app-server protocol v2 subset that Weft speaks.
//!
//! Policy for optional fields: objects Weft produces write every key the reference schema lists
//! (`null` for absent values); params accept omission (`#[serde(default)]`); unknown keys are
//! ignored everywhere.
#![warn(missing_docs)]

pub mod account;
pub mod attachments_api;
pub mod collab_items;
pub mod collaboration;
pub mod command_api;
pub mod config_api;
pub mod config_write_api;
pub mod dynamic_tools;
pub mod experimental;
pub mod external_agent_api;
pub mod features_api;
pub mod feedback_api;
pub mod fs_api;
pub mod guardian_api;
pub mod history_api;
pub mod hooks_api;
pub mod ids;
pub mod initialize;
pub mod input;
pub mod items;
pub mod jsonrpc;
pub mod mcp_api;
pub mod mcp_elicitation;
pub mod mcp_items;
pub mod mcp_oauth_api;
pub mod model_provider_api;
pub mod model_provider_write_api;
pub mod models;
pub mod notifications;
pub mod policy;
pub mod requests;
pub mod revert_api;
pub mod review_api;
pub mod schema;
mod schema_base;
pub mod search_api;
pub mod server_requests;
pub mod settings_api;
pub mod shell_api;
pub mod skills_api;
pub mod skills_roots_api;
pub mod skills_write_api;
pub mod thread;
pub mod thread_api;
pub mod thread_list_api;
pub mod thread_manage_api;
pub mod thread_settings_api;
pub mod thread_state_api;
pub mod turn;
pub mod turn_api;
pub mod usage;

mod serde_util;

pub use serde_util::wire_name;

pub use command_api::{
    CommandExecOutputDeltaNotification, CommandExecOutputStream, CommandExecParams,
    CommandExecResizeParams, CommandExecResizeResponse, CommandExecResponse,
    CommandExecTerminalSize, CommandExecTerminateParams, CommandExecTerminateResponse,
    CommandExecWriteParams, CommandExecWriteResponse,
};

pub use guardian_api::{
    AutoReviewDecisionSource, GuardianApprovalReview, GuardianApprovalReviewAction,
    GuardianApprovalReviewStatus, GuardianCommandSource, GuardianRiskLevel,
    GuardianUserAuthorization, GuardianWarningNotification,
    ItemGuardianApprovalReviewCompletedNotification, ItemGuardianApprovalReviewStartedNotification,
    ThreadApproveGuardianDeniedActionParams, ThreadApproveGuardianDeniedActionResponse,
};

#[cfg(test)]
mod conformance_tests;
#[cfg(test)]
mod test_support;

pub use attachments_api::*;
pub use collab_items::{
    CollabAgentState, CollabAgentStatus, CollabAgentTool, CollabAgentToolCallItem,
    CollabAgentToolCallStatus, SubAgentActivityItem, SubAgentActivityKind,
};
pub use collaboration::{
    ActivePermissionProfile, CollaborationModeListParams, CollaborationModeListResponse,
    CollaborationModeMask,
};
pub use config_write_api::{
    ConfigBatchWriteParams, ConfigEdit, ConfigValueWriteParams, ConfigWriteErrorCode,
    ConfigWriteResponse, MergeStrategy, OverriddenMetadata, WriteStatus,
};
pub use dynamic_tools::{
    DynamicToolCallItem, DynamicToolCallOutputContentItem, DynamicToolCallParams,
    DynamicToolCallResponse, DynamicToolCallStatus, DynamicToolFunction, DynamicToolNamespace,
    DynamicToolNamespaceTool, DynamicToolSpec, validate_dynamic_tools,
};
pub use features_api::{
    ExperimentalFeature, ExperimentalFeatureEnablementSetParams,
    ExperimentalFeatureEnablementSetResponse, ExperimentalFeatureListParams,
    ExperimentalFeatureListResponse, ExperimentalFeatureStage, PermissionProfileListParams,
    PermissionProfileListResponse, PermissionProfileSummary,
};
pub use feedback_api::{FeedbackSaveParams, FeedbackSaveResponse};
pub use fs_api::{
    AbsolutePathBuf, FsChangedNotification, FsCopyParams, FsCopyResponse, FsCreateDirectoryParams,
    FsCreateDirectoryResponse, FsGetMetadataParams, FsGetMetadataResponse, FsReadDirectoryEntry,
    FsReadDirectoryParams, FsReadDirectoryResponse, FsReadFileParams, FsReadFileResponse,
    FsRemoveParams, FsRemoveResponse, FsUnwatchParams, FsUnwatchResponse, FsWatchParams,
    FsWatchResponse, FsWriteFileParams, FsWriteFileResponse,
};
pub use ids::{ItemId, ThreadId, TurnId};
pub use initialize::{ClientInfo, InitializeCapabilities, InitializeParams, InitializeResponse};
pub use input::{ByteRange, ImageDetail, TextElement, UserInput};
pub use items::{
    AgentMessageDelivery, AgentMessageItem, AgentMessageModeration, AsyncUserInputQuestion,
    CommandAction, CommandExecutionItem, CommandExecutionSource, CommandExecutionStatus,
    ContextCompactionItem, FileChangeItem, FileUpdateChange, HookPromptFragment, HookPromptItem,
    MemoryCitation, MemoryCitationEntry, MessagePhase, PatchApplyStatus, PatchChangeKind, PlanItem,
    ReasoningItem, ReviewModeItem, ThreadItem, ThreadItemDetails, UserMessageItem,
};
pub use jsonrpc::{
    InvalidMessage, JsonRpcError, JsonRpcErrorResponse, JsonRpcMessage, JsonRpcNotification,
    JsonRpcRequest, JsonRpcResponse, RequestId, W3cTraceContext,
};
pub use mcp_api::{
    ListMcpServerStatusParams, ListMcpServerStatusResponse, McpAuthStatus, McpResource,
    McpResourceContent, McpResourceReadParams, McpResourceReadResponse, McpResourceReadTarget,
    McpResourceTemplate, McpServerConnectionStatus, McpServerInfo, McpServerRefreshResponse,
    McpServerStatus, McpServerStatusDetail, McpServerToolCallParams, McpServerToolCallResponse,
    McpTool,
};
pub use mcp_elicitation::{
    McpElicitationSchema, McpServerElicitationAction, McpServerElicitationRequest,
    McpServerElicitationRequestParams, McpServerElicitationRequestResponse,
};
pub use mcp_items::{
    McpAppDisplayMode, McpAppUi, McpServerStartupFailureReason, McpServerStartupState,
    McpToolCallAppContext, McpToolCallError, McpToolCallItem, McpToolCallResult, McpToolCallStatus,
};
pub use mcp_oauth_api::{
    McpServerOauthClientRegistration, McpServerOauthLoginCompletedNotification,
    McpServerOauthLoginParams, McpServerOauthLoginResponse,
};
pub use models::{
    CyberAccessProgram, InputModality, Model, ModelAccessPrograms, ModelAvailabilityNux,
    ModelListParams, ModelListResponse, ModelServiceTier, ModelUpgradeInfo, MultiAgentVersion,
    ReasoningEffortOption,
};
pub use notifications::*;
pub use policy::{
    ApprovalsReviewer, AskForApproval, CollaborationMode, CollaborationModeSettings, ModeKind,
    NetworkAccess, Personality, ReasoningEffort, ReasoningSummary, SandboxMode, SandboxPolicy,
    ThreadStartSource,
};
pub use requests::{
    CLIENT_METHODS, ClientNotification, ClientRequest, EXPERIMENTAL_METHODS, EXPERIMENTAL_PARAMS,
    Method, PENDING_CLIENT_METHODS, experimental_params, methods,
};
pub use revert_api::{ThreadRevertParams, ThreadRevertResponse, ThreadRevertedNotification};
pub use review_api::{ReviewDelivery, ReviewStartParams, ReviewStartResponse, ReviewTarget};
pub use schema::{schema_files, write_schema};
pub use server_requests::{
    CommandExecutionApprovalDecision, CommandExecutionApprovalKind,
    CommandExecutionRequestApprovalParams, CommandExecutionRequestApprovalResponse,
    FileChangeApprovalDecision, FileChangeRequestApprovalParams, FileChangeRequestApprovalResponse,
    NetworkApprovalContext, NetworkApprovalProtocol, NetworkPolicyAmendment,
    NetworkPolicyRuleAction, PENDING_SERVER_REQUESTS, SERVER_REQUEST_METHODS, ServerRequest,
    ToolRequestUserInputAnswer, ToolRequestUserInputOption, ToolRequestUserInputParams,
    ToolRequestUserInputQuestion, ToolRequestUserInputResponse,
};
pub use shell_api::{ThreadShellCommandParams, ThreadShellCommandResponse};
pub use skills_roots_api::{
    SkillsChangedNotification, SkillsExtraRootsSetParams, SkillsExtraRootsSetResponse,
};
pub use skills_write_api::{SkillsConfigWriteParams, SkillsConfigWriteResponse};
pub use thread::{
    GitInfo, SessionSource, SortDirection, SubAgentSource, Thread, ThreadActiveFlag,
    ThreadHistoryMode, ThreadSection, ThreadSectionAppearance, ThreadSortKey, ThreadSourceKind,
    ThreadStatus, ThreadUnsubscribeStatus,
};
pub use thread_api::*;
pub use thread_manage_api::*;
pub use thread_settings_api::{ThreadSettingsUpdateParams, ThreadSettingsUpdateResponse};
pub use thread_state_api::*;
pub use turn::{
    CodexErrorInfo, MisalignmentErrorDetails, MisalignmentSteer, NonSteerableTurnKind, Turn,
    TurnError, TurnItemsView, TurnPlanStep, TurnPlanStepStatus, TurnStatus,
};
pub use turn_api::*;
pub use usage::{ThreadTokenUsage, TokenUsageBreakdown};
