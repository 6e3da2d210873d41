//! The experimental gate (docs/protocol.md §4.2): which of the reference's experimental methods
//! and params Weft serves (they need `capabilities.experimentalApi`), and which it refuses as
//! unsupported even with the opt-in. Methods experimental as a whole are listed in
//! `weft_protocol::EXPERIMENTAL_METHODS`; this file holds the params.

use serde_json::Value;

/// What the gate found in a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gate {
    /// An experimental method or param Weft serves (`method` or `method.field`).
    Served(String),
    /// An experimental param Weft does not implement.
    Unsupported(String),
}

/// Params that are experimental in the reference: rejected without `experimentalApi`, and with
/// it rejected as unsupported, since Weft does not implement them.
const UNSUPPORTED_PARAMS: &[(&str, &[&str])] = &[
    (
        "thread/start",
        &[
            "experimentalRawEvents",
            "projectId",
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
            "additionalContext",
            "cyberAccessProgram",
            "responsesapiClientMetadata",
            "responsesapiClientMetadataPatch",
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
    (
        "thread/start",
        &[
            "dynamicTools",
            "historyMode",
            "permissions",
            "runtimeWorkspaceRoots",
        ],
    ),
    ("thread/resume", &["initialTurnsPage"]),
    (
        "thread/list",
        &["parentThreadId", "ancestorThreadId", "attachedToThreadId"],
    ),
    (
        "turn/start",
        &["collaborationMode", "permissions", "runtimeWorkspaceRoots"],
    ),
];

/// Experimental list params whose empty list (`[]`) is served and any other value is not.
const EMPTY_ONLY_PARAMS: &[(&str, &str)] = &[
    ("thread/start", "environments"),
    ("thread/start", "selectedCapabilityRoots"),
    ("turn/start", "environments"),
];

/// The experimental method or param of a request the gate acts on, if any: an unsupported one
/// first (so a request that mixes both is refused), else the first served one.
pub fn gate(method: &str, raw: &Value) -> Option<Gate> {
    if weft_protocol::EXPERIMENTAL_METHODS.contains(&method) {
        return Some(Gate::Served(method.to_string()));
    }
    let params = raw.get("params")?;
    let present = |field: &str| params.get(field).is_some_and(|v| !v.is_null());
    let named = |table: &'static [(&'static str, &'static [&'static str])]| {
        table
            .iter()
            .filter(|(m, _)| *m == method)
            .flat_map(|(m, fields)| fields.iter().map(move |f| (m, f)))
            .filter(|(_, field)| present(field))
            .map(|(m, field)| format!("{m}.{field}"))
    };
    let empty_only = EMPTY_ONLY_PARAMS
        .iter()
        .filter(|(m, field)| *m == method && present(field))
        .map(|(m, field)| {
            let name = format!("{m}.{field}");
            let empty = params
                .get(*field)
                .and_then(Value::as_array)
                .is_some_and(Vec::is_empty);
            if empty {
                Gate::Served(name)
            } else {
                Gate::Unsupported(name)
            }
        });
    let granular = params
        .get("approvalPolicy")
        .is_some_and(|p| p.get("granular").is_some())
        .then(|| Gate::Unsupported("askForApproval.granular".to_string()));
    let found: Vec<Gate> = named(UNSUPPORTED_PARAMS)
        .map(Gate::Unsupported)
        .chain(empty_only)
        .chain(named(SERVED_PARAMS).map(Gate::Served))
        .chain(granular)
        .collect();
    let refused = found.iter().position(|g| matches!(g, Gate::Unsupported(_)));
    let mut found = found;
    match refused {
        Some(index) => Some(found.swap_remove(index)),
        None => found.into_iter().next(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn served(name: &str) -> Option<Gate> {
        Some(Gate::Served(name.to_string()))
    }

    fn unsupported(name: &str) -> Option<Gate> {
        Some(Gate::Unsupported(name.to_string()))
    }

    #[test]
    fn served_and_unsupported_surface() {
        let mode = json!({"params":{"threadId":"t","input":[],
            "collaborationMode":{"mode":"plan","settings":{"model":"m"}}}});
        assert_eq!(
            gate("turn/start", &mode),
            served("turn/start.collaborationMode")
        );
        assert_eq!(
            gate("collaborationMode/list", &json!({"params":{}})),
            served("collaborationMode/list")
        );
        // `[]` is served, a non-empty list is not; an unsupported param wins over served ones.
        let empty = json!({"params":{"environments":[],"selectedCapabilityRoots":[]}});
        assert_eq!(
            gate("thread/start", &empty),
            served("thread/start.environments")
        );
        let full =
            json!({"params":{"environments":[{"environmentId":"x"}],"permissions":":workspace"}});
        assert_eq!(
            gate("thread/start", &full),
            unsupported("thread/start.environments")
        );
        let dynamic = json!({"params":{"dynamicTools":[],"projectId":"p"}});
        assert_eq!(
            gate("thread/start", &dynamic),
            unsupported("thread/start.projectId")
        );
        assert_eq!(
            gate("thread/start", &json!({"params":{"environments":null}})),
            None
        );
        assert_eq!(
            gate(
                "thread/start",
                &json!({"params":{"approvalPolicy":{"granular":{}}}})
            ),
            unsupported("askForApproval.granular")
        );
        // Stable methods are not gated.
        assert_eq!(gate("thread/turns/list", &json!({"params":{}})), None);
    }
}
