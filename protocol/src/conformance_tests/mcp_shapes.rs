//! The generated schema of every MCP type has the reference's objects: the same keys, the same
//! required ones, the same nullability and the same enum values (the descriptions and the
//! layout of `$ref`s may differ). The reference's hosted-product elicitation modes are the one
//! thing Weft leaves out.

use std::collections::BTreeSet;

use serde_json::Value;

use super::Schemas;

/// The MCP schema files Weft writes.
const FILES: &[&str] = &[
    "v2/ListMcpServerStatusParams.json",
    "v2/ListMcpServerStatusResponse.json",
    "v2/McpServerToolCallParams.json",
    "v2/McpServerToolCallResponse.json",
    "v2/McpResourceReadParams.json",
    "v2/McpResourceReadResponse.json",
    "v2/McpServerRefreshResponse.json",
    "v2/McpServerStatusUpdatedNotification.json",
    "v2/McpToolCallProgressNotification.json",
    "v2/McpServerOauthLoginParams.json",
    "v2/McpServerOauthLoginResponse.json",
    "v2/McpServerOauthLoginCompletedNotification.json",
    "McpServerElicitationRequestParams.json",
    "McpServerElicitationRequestResponse.json",
];

/// The reference's elicitation modes of its hosted product, which Weft leaves out.
const HOSTED_MODES: &[&str] = &["openai/form", "openaiForm", "openai/userVerification"];

fn resolve<'a>(mut schema: &'a Value, root: &'a Value) -> &'a Value {
    loop {
        if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
            schema = &root["definitions"][reference.rsplit('/').next().unwrap_or_default()];
        } else if let Some([only]) = schema
            .get("allOf")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            && schema.get("properties").is_none()
        {
            schema = only;
        } else {
            return schema;
        }
    }
}

/// The string values of an enum schema (`enum`, or `oneOf` of `const`s / one-value `enum`s).
fn enum_values(schema: &Value) -> Option<BTreeSet<String>> {
    let strings = |v: &Value| -> Option<Vec<String>> {
        v.as_array()?
            .iter()
            .map(|s| s.as_str().map(str::to_owned))
            .collect()
    };
    if let Some(values) = schema.get("enum").and_then(strings) {
        return Some(values.into_iter().collect());
    }
    let mut out = BTreeSet::new();
    for branch in schema.get("oneOf")?.as_array()? {
        if let Some(one) = branch.get("const").and_then(Value::as_str) {
            out.insert(one.to_owned());
        } else {
            out.extend(branch.get("enum").and_then(strings)?);
        }
    }
    Some(out)
}

fn keys(schema: &Value, member: &str) -> BTreeSet<String> {
    match schema.get(member) {
        Some(Value::Object(map)) => map.keys().cloned().collect(),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
        _ => BTreeSet::new(),
    }
}

/// The value of `mode` a `oneOf` branch fixes.
fn mode_of(branch: &Value) -> String {
    let mode = &branch["properties"]["mode"];
    mode.get("const")
        .or_else(|| mode["enum"].get(0))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// Compares one schema node of ours with the reference's: enum values, or object keys,
/// required keys and each key's nullability, and the branches of `anyOf` / `oneOf`. For a
/// `ThreadItem#<type>` branch, `type` is left out: ours keeps it in the item's wrapper.
pub(super) fn compare(
    schemas: &Schemas,
    what: &str,
    ours: (&Value, &Value),
    reference: (&Value, &Value),
) {
    let (our_root, mine) = (ours.0, resolve(ours.1, ours.0));
    let (ref_root, theirs) = (reference.0, resolve(reference.1, reference.0));
    if let Some(expected) = enum_values(theirs) {
        assert_eq!(enum_values(mine), Some(expected), "{what}: enum values");
        return;
    }
    let (mut their_keys, mut their_required) =
        (keys(theirs, "properties"), keys(theirs, "required"));
    if what.starts_with("ThreadItem#") {
        their_keys.remove("type");
        their_required.remove("type");
    }
    assert_eq!(keys(mine, "properties"), their_keys, "{what}: keys");
    assert_eq!(
        keys(mine, "required"),
        their_required,
        "{what}: required keys"
    );
    for key in &their_keys {
        let accepts_null = |root: &Value, schema: &Value| {
            schemas
                .validator(root, &schema["properties"][key])
                .is_valid(&Value::Null)
        };
        assert_eq!(
            accepts_null(our_root, mine),
            accepts_null(ref_root, theirs),
            "{what}.{key}: nullability"
        );
    }
    if let (Some(a), Some(b)) = (mine.get("anyOf"), theirs.get("anyOf")) {
        let (a, b) = (a.as_array().unwrap(), b.as_array().unwrap());
        assert_eq!(a.len(), b.len(), "{what}: anyOf branches");
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            compare(
                schemas,
                &format!("{what}|{i}"),
                (our_root, x),
                (ref_root, y),
            );
        }
    }
    if let Some(branches) = theirs.get("oneOf").and_then(Value::as_array) {
        let ours_by_mode = |mode: &str| {
            mine["oneOf"]
                .as_array()
                .and_then(|a| a.iter().find(|b| mode_of(b) == mode))
        };
        for branch in branches {
            let mode = mode_of(branch);
            if HOSTED_MODES.contains(&mode.as_str()) {
                assert!(ours_by_mode(&mode).is_none(), "{what}: {mode} is hosted");
                continue;
            }
            let Some(mine) = ours_by_mode(&mode) else {
                panic!("{what}: no branch for mode {mode}")
            };
            compare(
                schemas,
                &format!("{what}|{mode}"),
                (our_root, mine),
                (ref_root, branch),
            );
        }
    }
}

#[test]
fn schemas_have_the_reference_shapes() {
    let mut schemas = Schemas::load();
    for file in FILES {
        schemas.load_reference(file);
        let ours = schemas.ours(file);
        let reference = &schemas.reference[*file];
        compare(&schemas, file, (ours, ours), (reference, reference));
        for (name, definition) in reference["definitions"].as_object().into_iter().flatten() {
            let mine = ours["definitions"]
                .get(name)
                .unwrap_or_else(|| panic!("{file}: we define no {name}"));
            let what = format!("{file}#{name}");
            compare(&schemas, &what, (ours, mine), (reference, definition));
        }
    }
    let file = "ServerNotification.json";
    schemas.load_reference(file);
    let ours = schemas.ours(file);
    let reference = &schemas.reference[file];
    let branch = reference["definitions"]["ThreadItem"]["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["properties"]["type"]["enum"][0] == "mcpToolCall")
        .unwrap();
    compare(
        &schemas,
        "ThreadItem#mcpToolCall",
        (ours, &ours["definitions"]["McpToolCallItem"]),
        (reference, branch),
    );
    for name in [
        "McpToolCallResult",
        "McpToolCallError",
        "McpToolCallAppContext",
        "McpAppUi",
        "McpAppDisplayMode",
        "McpToolCallStatus",
    ] {
        compare(
            &schemas,
            name,
            (ours, &ours["definitions"][name]),
            (reference, &reference["definitions"][name]),
        );
    }
}
