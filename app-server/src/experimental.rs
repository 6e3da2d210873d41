//! The experimental gate (docs/protocol.md §4.2): finds in a request the reference's
//! experimental methods and params Weft serves (they need `capabilities.experimentalApi`), and
//! the ones it refuses as unsupported even with the opt-in. What is experimental is marked in
//! the protocol, next to the types: `weft_protocol::EXPERIMENTAL_METHODS` (methods as a whole),
//! `weft_protocol::experimental_params` (params, per params type) and
//! `AskForApproval::UNSUPPORTED_EXPERIMENTAL_VARIANT`.

use serde_json::Value;
use weft_protocol::AskForApproval;

/// What the gate found in a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gate {
    /// An experimental method or param Weft serves (`method` or `method.field`).
    Served(String),
    /// An experimental param Weft does not implement.
    Unsupported(String),
}

/// The experimental method or param of a request the gate acts on, if any: an unsupported one
/// first (so a request that mixes both is refused), else the first served one.
pub fn gate(method: &str, raw: &Value) -> Option<Gate> {
    if weft_protocol::EXPERIMENTAL_METHODS.contains(&method) {
        return Some(Gate::Served(method.to_string()));
    }
    let params = raw.get("params")?;
    let marks = weft_protocol::experimental_params(method);
    // As the reference's derive: an optional param counts when it is set, a plain boolean
    // one only when it is `true`.
    let present = |field: &str| match params.get(field) {
        None | Some(Value::Null) => false,
        Some(value) => !marks.flags.contains(&field) || value.as_bool() != Some(false),
    };
    let named = |fields: &'static [&'static str]| {
        fields
            .iter()
            .filter(|field| present(field))
            .map(|field| format!("{method}.{field}"))
    };
    let empty_only = marks
        .empty_only
        .iter()
        .filter(|field| present(field))
        .map(|field| {
            let name = format!("{method}.{field}");
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
    let variant = AskForApproval::UNSUPPORTED_EXPERIMENTAL_VARIANT;
    let granular = params
        .get("approvalPolicy")
        .is_some_and(|p| p.get(variant).is_some())
        .then(|| Gate::Unsupported(format!("askForApproval.{variant}")));
    let found: Vec<Gate> = named(marks.unsupported)
        .map(Gate::Unsupported)
        .chain(empty_only)
        .chain(named(marks.served).map(Gate::Served))
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
        // A plain boolean param sent with its default (`false`) is not a use of it; an
        // optional one sent as `false` is.
        let defaults = json!({"params":{"experimentalRawEvents":false,
            "allowProviderModelFallback":false}});
        assert_eq!(gate("thread/start", &defaults), None);
        assert_eq!(
            gate(
                "thread/start",
                &json!({"params":{"experimentalRawEvents":true}})
            ),
            unsupported("thread/start.experimentalRawEvents")
        );
        assert_eq!(
            gate("thread/start", &json!({"params":{"daybreakEnabled":false}})),
            unsupported("thread/start.daybreakEnabled")
        );
        assert_eq!(
            gate("thread/fork", &json!({"params":{"attachToSource":false}})),
            None
        );
    }
}
