use std::collections::BTreeSet;

use schemars::JsonSchema;
use serde_json::Value;

use super::*;
use crate::policy::AskForApproval;
use crate::requests::{
    CLIENT_METHODS, EXPERIMENTAL_METHODS, EXPERIMENTAL_PARAMS, Method, experimental_params, methods,
};

/// The top-level properties of `T`'s schema: the params a client may send.
fn properties<T: JsonSchema>() -> BTreeSet<String> {
    let schema = crate::schema_base::settings()
        .into_generator()
        .into_root_schema_for::<T>();
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|map| map.keys().cloned().collect())
        .unwrap_or_default()
}

/// Each served param is a field of `M`'s params; each unsupported or empty-only one is not
/// (Weft does not model it, so the gate is all that sees it); the lookup finds the marks.
fn check<M: Method>() -> &'static str
where
    M::Params: Experimental,
{
    let marks = <M::Params as Experimental>::PARAMS;
    let fields = properties::<M::Params>();
    for served in marks.served {
        assert!(
            fields.contains(*served),
            "{}.{served} is not a field",
            M::NAME
        );
    }
    for other in marks.unsupported.iter().chain(marks.empty_only) {
        assert!(!fields.contains(*other), "{}.{other} is a field", M::NAME);
    }
    // The flags are exactly the marked params the reference declares as plain booleans.
    let reference = reference_params(M::NAME);
    let booleans: BTreeSet<&str> = marks
        .served
        .iter()
        .chain(marks.unsupported)
        .copied()
        .filter(|name| {
            reference
                .get(*name)
                .is_some_and(|p| p.get("type") == Some(&Value::from("boolean")))
        })
        .collect();
    assert_eq!(
        marks.flags.iter().copied().collect::<BTreeSet<_>>(),
        booleans,
        "{}: the flags are not the reference's boolean params",
        M::NAME
    );
    assert_eq!(experimental_params(M::NAME), marks);
    M::NAME
}

/// The properties of the reference's (experimental) params schema of `method`.
fn reference_params(method: &str) -> serde_json::Map<String, Value> {
    let schema = format!(
        "{}/../tests/reference/codex-app-server-schema-experimental/ClientRequest.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let root: Value = serde_json::from_str(&std::fs::read_to_string(schema).unwrap()).unwrap();
    let variant = root["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["properties"]["method"]["enum"][0] == method)
        .unwrap_or_else(|| panic!("{method} is not a reference method"));
    let reference = variant["properties"]["params"]["$ref"].as_str().unwrap();
    let name = reference.rsplit('/').next().unwrap();
    root["definitions"][name]["properties"]
        .as_object()
        .cloned()
        .unwrap_or_default()
}

#[test]
fn each_marked_param_is_where_its_kind_says() {
    let checked: BTreeSet<&str> = [
        check::<methods::ThreadStart>(),
        check::<methods::ThreadResume>(),
        check::<methods::ThreadFork>(),
        check::<methods::ThreadList>(),
        check::<methods::TurnStart>(),
        check::<methods::TurnSteer>(),
        check::<methods::CommandExec>(),
    ]
    .into_iter()
    .collect();
    let listed: Vec<&str> = EXPERIMENTAL_PARAMS.iter().map(|(name, _)| *name).collect();
    assert_eq!(listed.len(), checked.len(), "a method is listed twice");
    assert_eq!(listed.into_iter().collect::<BTreeSet<_>>(), checked);
    for name in &checked {
        assert!(CLIENT_METHODS.contains(name), "{name} is not served");
        assert!(
            !EXPERIMENTAL_METHODS.contains(name),
            "{name} is experimental as a whole"
        );
    }
    assert_eq!(
        experimental_params("thread/turns/list"),
        ExperimentalParams::NONE
    );
}

#[test]
fn the_unsupported_approval_variant_is_its_wire_name() {
    let granular = AskForApproval::Granular {
        sandbox_approval: true,
        rules: false,
        mcp_elicitations: false,
        request_permissions: false,
        skill_approval: false,
    };
    let value = serde_json::to_value(granular).unwrap();
    assert!(
        value
            .get(AskForApproval::UNSUPPORTED_EXPERIMENTAL_VARIANT)
            .is_some(),
        "{value}"
    );
}
