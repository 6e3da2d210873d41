//! The typed client request enum, the method table and the client notification enum.
//!
//! [`ClientRequest`] is decoded from a whole request object (`{"id", "method", "params", …}`),
//! so serde reports unknown methods and bad params with the same wording as Codex
//! (``unknown variant `foo`, expected one of `initialize`, …``, ``missing field `params` ``,
//! ``invalid type: integer `123`, expected a string``).

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::account::{
    BedrockCheckGovCloudRequirementsParams, BedrockCheckGovCloudRequirementsResponse,
    GetAccountParams, GetAccountResponse,
};
use crate::attachments_api::{
    ThreadAttachmentAddParams, ThreadAttachmentAddResponse, ThreadAttachmentListParams,
    ThreadAttachmentListResponse, ThreadAttachmentOwnerListParams,
    ThreadAttachmentOwnerListResponse, ThreadAttachmentRemoveParams,
    ThreadAttachmentRemoveResponse,
};
use crate::collaboration::{CollaborationModeListParams, CollaborationModeListResponse};
use crate::command_api::{
    CommandExecParams, CommandExecResizeParams, CommandExecResizeResponse, CommandExecResponse,
    CommandExecTerminateParams, CommandExecTerminateResponse, CommandExecWriteParams,
    CommandExecWriteResponse,
};
use crate::config_api::{
    ConfigReadParams, ConfigReadResponse, ConfigRequirementsReadResponse, NoParams,
};
use crate::config_write_api::{
    ConfigBatchWriteParams, ConfigValueWriteParams, ConfigWriteResponse,
};
use crate::experimental::{Experimental, ExperimentalParams};
use crate::external_agent_api::{
    ExternalAgentConfigDetectParams, ExternalAgentConfigDetectResponse,
    ExternalAgentConfigImportHistoriesReadResponse, ExternalAgentConfigImportHistoryRecordParams,
    ExternalAgentConfigImportHistoryRecordResponse, ExternalAgentConfigImportParams,
    ExternalAgentConfigImportResponse,
};
use crate::features_api::{
    ExperimentalFeatureEnablementSetParams, ExperimentalFeatureEnablementSetResponse,
    ExperimentalFeatureListParams, ExperimentalFeatureListResponse, PermissionProfileListParams,
    PermissionProfileListResponse,
};
use crate::feedback_api::{FeedbackSaveParams, FeedbackSaveResponse};
use crate::fs_api::{
    FsCopyParams, FsCopyResponse, FsCreateDirectoryParams, FsCreateDirectoryResponse,
    FsGetMetadataParams, FsGetMetadataResponse, FsReadDirectoryParams, FsReadDirectoryResponse,
    FsReadFileParams, FsReadFileResponse, FsRemoveParams, FsRemoveResponse, FsUnwatchParams,
    FsUnwatchResponse, FsWatchParams, FsWatchResponse, FsWriteFileParams, FsWriteFileResponse,
};
use crate::guardian_api::{
    ThreadApproveGuardianDeniedActionParams, ThreadApproveGuardianDeniedActionResponse,
};
use crate::history_api::{
    ThreadItemsListParams, ThreadItemsListResponse, ThreadTurnsListParams, ThreadTurnsListResponse,
};
use crate::hooks_api::{HooksListParams, HooksListResponse};
use crate::initialize::{InitializeParams, InitializeResponse};
use crate::jsonrpc::RequestId;
use crate::mcp_api::{
    ListMcpServerStatusParams, ListMcpServerStatusResponse, McpResourceReadParams,
    McpResourceReadResponse, McpServerRefreshResponse, McpServerToolCallParams,
    McpServerToolCallResponse,
};
use crate::mcp_oauth_api::{McpServerOauthLoginParams, McpServerOauthLoginResponse};
use crate::model_provider_api::{
    ModelProviderCapabilitiesReadParams, ModelProviderCapabilitiesReadResponse,
    ModelProviderListParams, ModelProviderListResponse,
};
use crate::model_provider_write_api::{
    ModelProviderConfigWriteParams, ModelProviderConfigWriteResponse, ModelProviderDefaultSetParams,
};
use crate::models::{ModelListParams, ModelListResponse};
use crate::revert_api::{ThreadRevertParams, ThreadRevertResponse};
use crate::review_api::{ReviewStartParams, ReviewStartResponse};
use crate::search_api::{
    FuzzyFileSearchParams, FuzzyFileSearchResponse, FuzzyFileSearchSessionStartParams,
    FuzzyFileSearchSessionStartResponse, FuzzyFileSearchSessionStopParams,
    FuzzyFileSearchSessionStopResponse, FuzzyFileSearchSessionUpdateParams,
    FuzzyFileSearchSessionUpdateResponse, ThreadSearchParams, ThreadSearchResponse,
};
use crate::shell_api::{ThreadShellCommandParams, ThreadShellCommandResponse};
use crate::skills_api::{SkillsListParams, SkillsListResponse};
use crate::skills_roots_api::{SkillsExtraRootsSetParams, SkillsExtraRootsSetResponse};
use crate::skills_write_api::{SkillsConfigWriteParams, SkillsConfigWriteResponse};
use crate::thread_api::{
    ThreadArchiveParams, ThreadArchiveResponse, ThreadCompactStartParams,
    ThreadCompactStartResponse, ThreadForkParams, ThreadForkResponse, ThreadListParams,
    ThreadListResponse, ThreadLoadedListParams, ThreadLoadedListResponse, ThreadReadParams,
    ThreadReadResponse, ThreadResumeParams, ThreadResumeResponse, ThreadSetNameParams,
    ThreadSetNameResponse, ThreadStartParams, ThreadStartResponse, ThreadUnarchiveParams,
    ThreadUnarchiveResponse, ThreadUnsubscribeParams, ThreadUnsubscribeResponse,
};
use crate::thread_manage_api::{
    ThreadDeleteParams, ThreadDeleteResponse, ThreadInjectItemsParams, ThreadInjectItemsResponse,
    ThreadMetadataUpdateParams, ThreadMetadataUpdateResponse, ThreadSectionCreateParams,
    ThreadSectionCreateResponse, ThreadSectionDeleteParams, ThreadSectionDeleteResponse,
    ThreadSectionListParams, ThreadSectionListResponse, ThreadSectionMoveParams,
    ThreadSectionMoveResponse, ThreadSectionUpdateParams, ThreadSectionUpdateResponse,
};
use crate::thread_settings_api::{ThreadSettingsUpdateParams, ThreadSettingsUpdateResponse};
use crate::thread_state_api::{
    ThreadBackgroundTerminalsCleanParams, ThreadBackgroundTerminalsCleanResponse,
    ThreadBackgroundTerminalsListParams, ThreadBackgroundTerminalsListResponse,
    ThreadBackgroundTerminalsTerminateParams, ThreadBackgroundTerminalsTerminateResponse,
    ThreadGoalClearParams, ThreadGoalClearResponse, ThreadGoalGetParams, ThreadGoalGetResponse,
    ThreadGoalSetParams, ThreadGoalSetResponse, ThreadReadStateUpdateParams,
    ThreadReadStateUpdateResponse,
};
use crate::turn_api::{
    TurnInterruptParams, TurnInterruptResponse, TurnStartParams, TurnStartResponse,
    TurnSteerParams, TurnSteerResponse,
};

/// Pairs a wire method name with its params and result types (client requests and server
/// requests alike), so routers and test clients can be generic over methods.
pub trait Method {
    /// Wire method name, e.g. `"thread/start"`.
    const NAME: &'static str;
    /// Params type.
    type Params: Serialize + DeserializeOwned + JsonSchema;
    /// Result type.
    type Response: Serialize + DeserializeOwned + JsonSchema;
}

/// Declares a request enum (client requests or server requests) tagged by `method`, each
/// variant with its `id` and `params`, and its `id()` and `method()` accessors.
macro_rules! request_enum {
    (
        $(#[$meta:meta])*
        $name:ident, id_doc = $id_doc:literal;
        $($variant:ident => $wire:literal, $(#[$pattr:meta])* $params:ty;)*
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
        #[serde(tag = "method")]
        // Requests are built or decoded, handled once and dropped; boxing the big params would
        // only make construction and matching noisier.
        #[allow(clippy::large_enum_variant)]
        pub enum $name {
            $(
                #[doc = concat!("`", $wire, "`")]
                #[serde(rename = $wire)]
                $variant {
                    #[doc = $id_doc]
                    id: RequestId,
                    /// Params.
                    $(#[$pattr])*
                    params: $params,
                },
            )*
        }

        impl $name {
            /// The request id.
            pub fn id(&self) -> &RequestId {
                match self {
                    $(Self::$variant { id, .. } => id,)*
                }
            }

            /// The wire method name.
            pub fn method(&self) -> &'static str {
                match self {
                    $(Self::$variant { .. } => $wire,)*
                }
            }
        }
    };
}
pub(crate) use request_enum;

/// Declares a marker type implementing [`Method`] for each method of a table (`$note` ends
/// its doc line).
macro_rules! method_markers {
    ($note:literal, $($variant:ident => $wire:literal, $params:ty, $response:ty;)*) => {
        $(
            #[doc = concat!("Marker for `", $wire, "`", $note, ".")]
            #[derive(Debug, Clone, Copy)]
            pub enum $variant {}

            impl Method for $variant {
                const NAME: &'static str = $wire;
                type Params = $params;
                type Response = $response;
            }
        )*
    };
}
pub(crate) use method_markers;

macro_rules! client_requests {
    (
        served {
            $($variant:ident => $wire:literal, $dir:literal, $(#[$pattr:meta])* $params:ident, $response:ident;)*
        }
        pending {
            $($pvariant:ident => $pwire:literal, $pdir:literal, $pparams:ident, $presponse:ident;)*
        }
    ) => {
        request_enum! {
            /// A request sent by the client, selected by its `method`.
            ClientRequest, id_doc = "Request id.";
            $($variant => $wire, $(#[$pattr])* $params;)*
        }

        /// Every client request method Weft implements, in declaration order.
        pub const CLIENT_METHODS: &[&str] = &[$($wire),*];

        /// Client methods whose types are declared (with their [`Method`] markers and schema
        /// files) but which Weft does not serve yet: they are not [`ClientRequest`] variants, so
        /// a client calling one gets the unknown-method error (docs/protocol.md §7.17), and they
        /// are outside the protocol subset (docs/protocol.md §1.1). Serving one means moving its
        /// line to the served part of the table (a method without params also takes the
        /// `NoParams` attribute there), adding its route and its `request …` line in the subset.
        pub const PENDING_CLIENT_METHODS: &[&str] = &[$($pwire),*];

        /// Marker types implementing [`Method`] for each client request.
        pub mod methods {
            use super::*;

            method_markers!("", $($variant => $wire, $params, $response;)*);
            method_markers!(
                " (declared, not served yet)",
                $($pvariant => $pwire, $pparams, $presponse;)*
            );
        }

        pub(crate) fn client_request_schemas(roots: &mut crate::schema_base::Roots) {
            $(roots.add_method::<$params, $response>($dir, stringify!($params), stringify!($response));)*
            $(roots.add_method::<$pparams, $presponse>($pdir, stringify!($pparams), stringify!($presponse));)*
        }
    };
}

client_requests! {
    served {
        Initialize => "initialize", "v1", InitializeParams, InitializeResponse;
        ThreadStart => "thread/start", "v2", ThreadStartParams, ThreadStartResponse;
        ThreadResume => "thread/resume", "v2", ThreadResumeParams, ThreadResumeResponse;
        ThreadFork => "thread/fork", "v2", ThreadForkParams, ThreadForkResponse;
        ThreadList => "thread/list", "v2", ThreadListParams, ThreadListResponse;
        ThreadRead => "thread/read", "v2", ThreadReadParams, ThreadReadResponse;
        ThreadLoadedList => "thread/loaded/list", "v2", ThreadLoadedListParams, ThreadLoadedListResponse;
        ThreadArchive => "thread/archive", "v2", ThreadArchiveParams, ThreadArchiveResponse;
        ThreadUnarchive => "thread/unarchive", "v2", ThreadUnarchiveParams, ThreadUnarchiveResponse;
        ThreadUnsubscribe => "thread/unsubscribe", "v2", ThreadUnsubscribeParams, ThreadUnsubscribeResponse;
        ThreadSetName => "thread/name/set", "v2", ThreadSetNameParams, ThreadSetNameResponse;
        ThreadCompactStart => "thread/compact/start", "v2", ThreadCompactStartParams, ThreadCompactStartResponse;
        ThreadShellCommand => "thread/shellCommand", "v2", ThreadShellCommandParams, ThreadShellCommandResponse;
        ThreadRevert => "thread/revert", "v2", ThreadRevertParams, ThreadRevertResponse;
        ThreadDelete => "thread/delete", "v2", ThreadDeleteParams, ThreadDeleteResponse;
        ThreadMetadataUpdate => "thread/metadata/update", "v2", ThreadMetadataUpdateParams, ThreadMetadataUpdateResponse;
        ThreadInjectItems => "thread/inject_items", "v2", ThreadInjectItemsParams, ThreadInjectItemsResponse;
        ThreadSectionList => "threadSection/list", "v2", ThreadSectionListParams, ThreadSectionListResponse;
        ThreadSectionCreate => "threadSection/create", "v2", ThreadSectionCreateParams, ThreadSectionCreateResponse;
        ThreadSectionUpdate => "threadSection/update", "v2", ThreadSectionUpdateParams, ThreadSectionUpdateResponse;
        ThreadSectionDelete => "threadSection/delete", "v2", ThreadSectionDeleteParams, ThreadSectionDeleteResponse;
        ThreadSectionMove => "thread/section/move", "v2", ThreadSectionMoveParams, ThreadSectionMoveResponse;
        TurnStart => "turn/start", "v2", TurnStartParams, TurnStartResponse;
        TurnSteer => "turn/steer", "v2", TurnSteerParams, TurnSteerResponse;
        TurnInterrupt => "turn/interrupt", "v2", TurnInterruptParams, TurnInterruptResponse;
        ReviewStart => "review/start", "v2", ReviewStartParams, ReviewStartResponse;
        ModelList => "model/list", "v2", ModelListParams, ModelListResponse;
        ModelProviderList => "modelProvider/list", "v2", ModelProviderListParams, ModelProviderListResponse;
        ModelProviderCapabilitiesRead => "modelProvider/capabilities/read", "v2", ModelProviderCapabilitiesReadParams, ModelProviderCapabilitiesReadResponse;
        ModelProviderConfigWrite => "modelProvider/config/write", "v2", ModelProviderConfigWriteParams, ModelProviderConfigWriteResponse;
        ModelProviderDefaultSet => "modelProvider/default/set", "v2", ModelProviderDefaultSetParams, ConfigWriteResponse;
        AccountRead => "account/read", "v2", GetAccountParams, GetAccountResponse;
        BedrockCheckGovCloudRequirements => "account/bedrock/checkGovCloudRequirements", "v2", BedrockCheckGovCloudRequirementsParams, BedrockCheckGovCloudRequirementsResponse;
        ConfigRead => "config/read", "v2", ConfigReadParams, ConfigReadResponse;
        ConfigRequirementsRead => "configRequirements/read", "v2", #[serde(default, skip_serializing_if = "NoParams::is_absent")] NoParams, ConfigRequirementsReadResponse;
        McpServerStatusList => "mcpServerStatus/list", "v2", ListMcpServerStatusParams, ListMcpServerStatusResponse;
        McpServerToolCall => "mcpServer/tool/call", "v2", McpServerToolCallParams, McpServerToolCallResponse;
        McpResourceRead => "mcpServer/resource/read", "v2", McpResourceReadParams, McpResourceReadResponse;
        McpServerReload => "config/mcpServer/reload", "v2", #[serde(default, skip_serializing_if = "NoParams::is_absent")] NoParams, McpServerRefreshResponse;
        McpServerOauthLogin => "mcpServer/oauth/login", "v2", McpServerOauthLoginParams, McpServerOauthLoginResponse;
        HooksList => "hooks/list", "v2", HooksListParams, HooksListResponse;
        SkillsList => "skills/list", "v2", SkillsListParams, SkillsListResponse;
        CollaborationModeList => "collaborationMode/list", "v2", CollaborationModeListParams, CollaborationModeListResponse;
        ThreadTurnsList => "thread/turns/list", "v2", ThreadTurnsListParams, ThreadTurnsListResponse;
        ThreadItemsList => "thread/items/list", "v2", ThreadItemsListParams, ThreadItemsListResponse;
        ThreadReadStateUpdate => "thread/readState/update", "v2", ThreadReadStateUpdateParams, ThreadReadStateUpdateResponse;
        ThreadGoalGet => "thread/goal/get", "v2", ThreadGoalGetParams, ThreadGoalGetResponse;
        ThreadGoalSet => "thread/goal/set", "v2", ThreadGoalSetParams, ThreadGoalSetResponse;
        ThreadGoalClear => "thread/goal/clear", "v2", ThreadGoalClearParams, ThreadGoalClearResponse;
        ThreadBackgroundTerminalsList => "thread/backgroundTerminals/list", "v2", ThreadBackgroundTerminalsListParams, ThreadBackgroundTerminalsListResponse;
        ThreadBackgroundTerminalsTerminate => "thread/backgroundTerminals/terminate", "v2", ThreadBackgroundTerminalsTerminateParams, ThreadBackgroundTerminalsTerminateResponse;
        ThreadBackgroundTerminalsClean => "thread/backgroundTerminals/clean", "v2", ThreadBackgroundTerminalsCleanParams, ThreadBackgroundTerminalsCleanResponse;
        ThreadApproveGuardianDeniedAction => "thread/approveGuardianDeniedAction", "v2", ThreadApproveGuardianDeniedActionParams, ThreadApproveGuardianDeniedActionResponse;
        ConfigValueWrite => "config/value/write", "v2", ConfigValueWriteParams, ConfigWriteResponse;
        ConfigBatchWrite => "config/batchWrite", "v2", ConfigBatchWriteParams, ConfigWriteResponse;
        ExperimentalFeatureList => "experimentalFeature/list", "v2", ExperimentalFeatureListParams, ExperimentalFeatureListResponse;
        ExperimentalFeatureEnablementSet => "experimentalFeature/enablement/set", "v2", ExperimentalFeatureEnablementSetParams, ExperimentalFeatureEnablementSetResponse;
        PermissionProfileList => "permissionProfile/list", "v2", PermissionProfileListParams, PermissionProfileListResponse;
        ThreadSettingsUpdate => "thread/settings/update", "v2", ThreadSettingsUpdateParams, ThreadSettingsUpdateResponse;
        SkillsConfigWrite => "skills/config/write", "v2", SkillsConfigWriteParams, SkillsConfigWriteResponse;
        SkillsExtraRootsSet => "skills/extraRoots/set", "v2", SkillsExtraRootsSetParams, SkillsExtraRootsSetResponse;
        FsReadFile => "fs/readFile", "v2", FsReadFileParams, FsReadFileResponse;
        FsWriteFile => "fs/writeFile", "v2", FsWriteFileParams, FsWriteFileResponse;
        FsCreateDirectory => "fs/createDirectory", "v2", FsCreateDirectoryParams, FsCreateDirectoryResponse;
        FsGetMetadata => "fs/getMetadata", "v2", FsGetMetadataParams, FsGetMetadataResponse;
        FsReadDirectory => "fs/readDirectory", "v2", FsReadDirectoryParams, FsReadDirectoryResponse;
        FsRemove => "fs/remove", "v2", FsRemoveParams, FsRemoveResponse;
        FsCopy => "fs/copy", "v2", FsCopyParams, FsCopyResponse;
        FsWatch => "fs/watch", "v2", FsWatchParams, FsWatchResponse;
        FsUnwatch => "fs/unwatch", "v2", FsUnwatchParams, FsUnwatchResponse;
        CommandExec => "command/exec", "v2", CommandExecParams, CommandExecResponse;
        CommandExecWrite => "command/exec/write", "v2", CommandExecWriteParams, CommandExecWriteResponse;
        CommandExecResize => "command/exec/resize", "v2", CommandExecResizeParams, CommandExecResizeResponse;
        CommandExecTerminate => "command/exec/terminate", "v2", CommandExecTerminateParams, CommandExecTerminateResponse;
        ThreadAttachmentAdd => "thread/attachment/add", "v2", ThreadAttachmentAddParams, ThreadAttachmentAddResponse;
        ThreadAttachmentList => "thread/attachment/list", "v2", ThreadAttachmentListParams, ThreadAttachmentListResponse;
        ThreadAttachmentOwnerList => "thread/attachmentOwner/list", "v2", ThreadAttachmentOwnerListParams, ThreadAttachmentOwnerListResponse;
        ThreadAttachmentRemove => "thread/attachment/remove", "v2", ThreadAttachmentRemoveParams, ThreadAttachmentRemoveResponse;
        FeedbackSave => "feedback/save", "v2", FeedbackSaveParams, FeedbackSaveResponse;
        FuzzyFileSearch => "fuzzyFileSearch", "", FuzzyFileSearchParams, FuzzyFileSearchResponse;
        FuzzyFileSearchSessionStart => "fuzzyFileSearch/sessionStart", "", FuzzyFileSearchSessionStartParams, FuzzyFileSearchSessionStartResponse;
        FuzzyFileSearchSessionUpdate => "fuzzyFileSearch/sessionUpdate", "", FuzzyFileSearchSessionUpdateParams, FuzzyFileSearchSessionUpdateResponse;
        FuzzyFileSearchSessionStop => "fuzzyFileSearch/sessionStop", "", FuzzyFileSearchSessionStopParams, FuzzyFileSearchSessionStopResponse;
        ThreadSearch => "thread/search", "v2", ThreadSearchParams, ThreadSearchResponse;
        ExternalAgentConfigDetect => "externalAgentConfig/detect", "v2", ExternalAgentConfigDetectParams, ExternalAgentConfigDetectResponse;
        ExternalAgentConfigImport => "externalAgentConfig/import", "v2", ExternalAgentConfigImportParams, ExternalAgentConfigImportResponse;
        ExternalAgentConfigImportHistoryRecord => "externalAgentConfig/import/recordHistory", "v2", ExternalAgentConfigImportHistoryRecordParams, ExternalAgentConfigImportHistoryRecordResponse;
        ExternalAgentConfigImportHistoriesRead => "externalAgentConfig/import/readHistories", "v2", #[serde(default, skip_serializing_if = "NoParams::is_absent")] NoParams, ExternalAgentConfigImportHistoriesReadResponse;
    }
    pending {
    }
}

/// Client methods that are experimental in the reference as a whole: refused without
/// `experimentalApi` (``<method> requires experimentalApi capability``, docs/protocol.md §4.2).
pub const EXPERIMENTAL_METHODS: &[&str] = &[
    "account/bedrock/checkGovCloudRequirements",
    "collaborationMode/list",
    "thread/readState/update",
    "thread/backgroundTerminals/list",
    "thread/backgroundTerminals/terminate",
    "thread/backgroundTerminals/clean",
    "fuzzyFileSearch/sessionStart",
    "fuzzyFileSearch/sessionUpdate",
    "fuzzyFileSearch/sessionStop",
    "thread/search",
    "thread/settings/update",
];

/// `M`'s name and the experimental params its params type is marked with.
const fn experimental_params_of<M: Method>() -> (&'static str, ExperimentalParams)
where
    M::Params: Experimental,
{
    (M::NAME, <M::Params as Experimental>::PARAMS)
}

/// The served methods whose params include experimental params of the reference, with those
/// params (marked on each params type, docs/protocol.md §4.2).
pub const EXPERIMENTAL_PARAMS: &[(&str, ExperimentalParams)] = &[
    experimental_params_of::<methods::ThreadStart>(),
    experimental_params_of::<methods::ThreadResume>(),
    experimental_params_of::<methods::ThreadFork>(),
    experimental_params_of::<methods::ThreadList>(),
    experimental_params_of::<methods::TurnStart>(),
    experimental_params_of::<methods::TurnSteer>(),
    experimental_params_of::<methods::CommandExec>(),
];

/// The experimental params of `method`'s params ([`ExperimentalParams::NONE`] for a method
/// without any).
pub fn experimental_params(method: &str) -> ExperimentalParams {
    EXPERIMENTAL_PARAMS
        .iter()
        .find(|(name, _)| *name == method)
        .map_or(ExperimentalParams::NONE, |(_, params)| *params)
}

impl ClientRequest {
    /// Decodes a whole request object.
    ///
    /// `"params": null` is treated like an omitted `params` (Codex answers both with
    /// ``missing field `params` ``). Other members (`jsonrpc`, `trace`, …) are ignored.
    pub fn from_value(mut value: Value) -> Result<Self, serde_json::Error> {
        if let Value::Object(map) = &mut value
            && map.get("params").is_some_and(Value::is_null)
        {
            map.remove("params");
        }
        serde_json::from_value(value)
    }

    /// Decodes a request from its parts (as split by a generic JSON-RPC envelope).
    pub fn from_parts(
        id: RequestId,
        method: &str,
        params: Option<Value>,
    ) -> Result<Self, serde_json::Error> {
        let mut map = serde_json::Map::with_capacity(3);
        map.insert("id".to_owned(), serde_json::to_value(id)?);
        map.insert("method".to_owned(), Value::String(method.to_owned()));
        if let Some(params) = params
            && !params.is_null()
        {
            map.insert("params".to_owned(), params);
        }
        serde_json::from_value(Value::Object(map))
    }
}

/// A notification sent by the client. Unknown client notifications should be ignored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "method")]
pub enum ClientNotification {
    /// `initialized`: sent after the `initialize` response; accepted and ignored.
    #[serde(rename = "initialized")]
    Initialized,
}

impl ClientNotification {
    /// The wire method name.
    pub fn method(&self) -> &'static str {
        match self {
            ClientNotification::Initialized => "initialized",
        }
    }
}

#[cfg(test)]
mod tests;
