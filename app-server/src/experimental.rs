//! The experimental gate (docs/protocol.md §4.2): which of the reference's experimental methods
//! and params Weft serves (they need `capabilities.experimentalApi`), and which it refuses as
//! unsupported even with the opt-in.

use serde_json::Value;

/// What the gate found in a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gate {
    /// An experimental method or param Weft serves (`method` or `method.field`).
    Served(String),
    /// An experimental param Weft does not implement.
    Unsupported(String),
}

/// Params that are experimental in the reference (docs/protocol.md §4.2): rejected without
/// `experimentalApi`, and with it rejected as unsupported, since Weft does not implement them.
const UNSUPPORTED_PARAMS: &[(&str, &[&str])] = &[
    (
        "thread/start",
        &[
            "permissions",
            "environments",
            "experimentalRawEvents",
            "runtimeWorkspaceRoots",
            "projectId",
            "selectedCapabilityRoots",
            "daybreakEnabled",
            "allowProviderModelFallback",
            "multiAgentMode",
            "mockExperimentalField",
        ],
    ),
    (
        "thread/resume",
        &["history", "path", "permissions", "runtimeWorkspaceRoots"],
    ),
    (
        "thread/fork",
        &[
            "beforeTurnId",
            "path",
            "attachToSource",
            "permissions",
            "runtimeWorkspaceRoots",
            "deferGoalContinuation",
            "experimentalPredictionMode",
            "experimentalDisablePredictionMcp",
        ],
    ),
    (
        "turn/start",
        &[
            "collaborationMode",
            "environments",
            "permissions",
            "additionalContext",
            "cyberAccessProgram",
            "responsesapiClientMetadata",
            "responsesapiClientMetadataPatch",
            "runtimeWorkspaceRoots",
            "multiAgentMode",
        ],
    ),
    (
        "turn/steer",
        &[
            "additionalContext",
            "responsesapiClientMetadata",
            "responsesapiClientMetadataPatch",
        ],
    ),
];

/// Experimental params Weft serves: they still need `experimentalApi`.
const SERVED_PARAMS: &[(&str, &[&str])] = &[
    ("thread/start", &["dynamicTools", "historyMode"]),
    ("thread/resume", &["initialTurnsPage"]),
];

/// The first experimental method or param of a request, if any: unsupported params first, so a
/// request that mixes both is refused.
pub fn gate(method: &str, raw: &Value) -> Option<Gate> {
    if weft_protocol::EXPERIMENTAL_METHODS.contains(&method) {
        return Some(Gate::Served(method.to_string()));
    }
    let params = raw.get("params")?;
    let present = |field: &str| params.get(field).is_some_and(|v| !v.is_null());
    let find = |table: &'static [(&'static str, &'static [&'static str])]| {
        table
            .iter()
            .filter(|(m, _)| *m == method)
            .flat_map(|(m, fields)| fields.iter().map(move |f| (m, f)))
            .find(|(_, field)| present(field))
            .map(|(m, field)| format!("{m}.{field}"))
    };
    find(UNSUPPORTED_PARAMS)
        .map(Gate::Unsupported)
        .or_else(|| find(SERVED_PARAMS).map(Gate::Served))
        .or_else(|| {
            params
                .get("approvalPolicy")
                .is_some_and(|p| p.get("granular").is_some())
                .then(|| Gate::Unsupported("askForApproval.granular".to_string()))
        })
}
