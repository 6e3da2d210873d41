//! JSON Schema generation for Weft's protocol, laid out like the Codex reference schema.
//!
//! Layout (all paths relative to the output directory):
//! - `ClientRequest.json`, `ClientNotification.json`, `ServerNotification.json`,
//!   `ServerRequest.json`, `RequestId.json`, `JSONRPCError.json`, `JSONRPCErrorError.json`,
//!   `JSONRPCMessage.json`, `JSONRPCRequest.json`, `JSONRPCNotification.json`,
//!   `JSONRPCResponse.json`
//! - `v1/InitializeParams.json`, `v1/InitializeResponse.json`
//! - `v2/<X>Params.json`, `v2/<X>Response.json` for every v2 client method, and
//!   `v2/<X>Notification.json` for every server notification
//! - `<X>Params.json`, `<X>Response.json` for every server request
//! - `weft_app_server_protocol.schemas.json`: one bundle with every definition
//!
//! Every file is draft-07, pretty-printed with sorted keys and a trailing newline, so the output
//! is deterministic.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::jsonrpc::{
    JsonRpcError, JsonRpcErrorResponse, JsonRpcMessage, JsonRpcNotification, JsonRpcRequest,
    JsonRpcResponse, RequestId,
};
use crate::notifications::ServerNotification;
use crate::requests::{ClientNotification, ClientRequest};
use crate::schema_base::{Roots, settings};
use crate::server_requests::ServerRequest;

/// File name of the bundle holding every definition.
pub const BUNDLE_FILE: &str = "weft_app_server_protocol.schemas.json";

/// Every root type: the envelopes, then each method table's params and results.
fn all_roots() -> Roots {
    let mut roots = Roots::default();
    roots.add::<ClientRequest>("ClientRequest.json");
    roots.add::<ClientNotification>("ClientNotification.json");
    roots.add::<ServerNotification>("ServerNotification.json");
    roots.add::<ServerRequest>("ServerRequest.json");
    roots.add::<RequestId>("RequestId.json");
    roots.add::<JsonRpcErrorResponse>("JSONRPCError.json");
    roots.add::<JsonRpcError>("JSONRPCErrorError.json");
    roots.add::<JsonRpcMessage>("JSONRPCMessage.json");
    roots.add::<JsonRpcRequest>("JSONRPCRequest.json");
    roots.add::<JsonRpcNotification>("JSONRPCNotification.json");
    roots.add::<JsonRpcResponse>("JSONRPCResponse.json");
    crate::requests::client_request_schemas(&mut roots);
    crate::notifications::server_notification_schemas(&mut roots);
    crate::server_requests::server_request_schemas(&mut roots);
    roots
}

/// Recursively rebuilds objects with sorted keys (independent of serde_json's `preserve_order`)
/// and sorts `required` lists.
fn normalize(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = map.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            let mut out = Map::new();
            for (key, value) in entries {
                let value = match (key.as_str(), value) {
                    ("required", Value::Array(items)) if items.iter().all(Value::is_string) => {
                        let mut names: Vec<String> = items
                            .into_iter()
                            .filter_map(|v| v.as_str().map(str::to_owned))
                            .collect();
                        names.sort();
                        names.dedup();
                        Value::Array(names.into_iter().map(Value::String).collect())
                    }
                    (_, value) => normalize(value),
                };
                out.insert(key, value);
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.into_iter().map(normalize).collect()),
        other => other,
    }
}

fn render(value: Value) -> String {
    let value = normalize(value);
    // Serializing a `Value` cannot fail (all keys are strings).
    let mut text = serde_json::to_string_pretty(&value).unwrap_or_default();
    text.push('\n');
    text
}

fn bundle(roots: &Roots) -> Value {
    let mut generator = settings().into_generator();
    for entry in roots.entries() {
        (entry.sub)(&mut generator);
    }
    let definitions = generator.take_definitions(true);
    let mut map = Map::new();
    map.insert(
        "$schema".to_owned(),
        Value::String("http://json-schema.org/draft-07/schema#".to_owned()),
    );
    map.insert(
        "title".to_owned(),
        Value::String("WeftAppServerProtocol".to_owned()),
    );
    map.insert("type".to_owned(), Value::String("object".to_owned()));
    map.insert("definitions".to_owned(), Value::Object(definitions));
    Value::Object(map)
}

/// Every schema file as `(relative path, contents)`, in a stable order.
pub fn schema_files() -> Vec<(PathBuf, String)> {
    let roots = all_roots();
    let mut files: Vec<(PathBuf, String)> = roots
        .entries()
        .iter()
        .map(|entry| {
            (
                PathBuf::from(&entry.path),
                render((entry.root)().to_value()),
            )
        })
        .collect();
    files.push((PathBuf::from(BUNDLE_FILE), render(bundle(&roots))));
    files.sort_by(|a, b| a.0.cmp(&b.0));
    files.dedup_by(|a, b| a.0 == b.0);
    files
}

/// Writes Weft's JSON Schema into `out_dir` (creating `v1/` and `v2/`).
pub fn write_schema(out_dir: &Path) -> std::io::Result<()> {
    for (path, contents) in schema_files() {
        let full = out_dir.join(&path);
        if let Some(parent) = full.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(full, contents)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use super::*;

    const REGENERATE: &str = "WEFT_UPDATE_SCHEMA=1 cargo test -p weft-protocol --lib schema::tests \
        (or: cargo run -p weft-protocol --example gen-schema)";

    fn committed_dir() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../schema")
    }

    fn json_files_under(dir: &Path, base: &Path, out: &mut BTreeSet<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                json_files_under(&path, base, out);
            } else if path.extension().is_some_and(|e| e == "json")
                && let Ok(relative) = path.strip_prefix(base)
            {
                out.insert(relative.to_path_buf());
            }
        }
    }

    /// Fails when `schema/` does not match the types; with `WEFT_UPDATE_SCHEMA=1` it rewrites
    /// the directory instead.
    #[test]
    fn committed_schema_is_up_to_date() {
        let dir = committed_dir();
        let expected = schema_files();
        let expected_paths: BTreeSet<PathBuf> = expected.iter().map(|(p, _)| p.clone()).collect();
        let mut on_disk = BTreeSet::new();
        json_files_under(&dir, &dir, &mut on_disk);

        if std::env::var_os("WEFT_UPDATE_SCHEMA").is_some_and(|v| v != "0") {
            for stale in on_disk.difference(&expected_paths) {
                std::fs::remove_file(dir.join(stale)).unwrap();
            }
            write_schema(&dir).unwrap();
            return;
        }

        let mut problems = Vec::new();
        for (path, contents) in &expected {
            match std::fs::read_to_string(dir.join(path)) {
                Ok(actual) if actual == *contents => {}
                Ok(_) => problems.push(format!("outdated: {}", path.display())),
                Err(_) => problems.push(format!("missing: {}", path.display())),
            }
        }
        for extra in on_disk.difference(&expected_paths) {
            problems.push(format!("no longer generated: {}", extra.display()));
        }
        assert!(
            problems.is_empty(),
            "{} is stale:\n  {}\nRegenerate with: {REGENERATE}",
            dir.display(),
            problems.join("\n  ")
        );
    }

    #[test]
    fn output_is_deterministic_and_well_formed() {
        let first = schema_files();
        assert_eq!(first, schema_files());
        for (path, text) in &first {
            assert!(text.ends_with("}\n"), "{}", path.display());
            let value: Value = serde_json::from_str(text).unwrap();
            assert_eq!(
                value["$schema"],
                "http://json-schema.org/draft-07/schema#",
                "{}",
                path.display()
            );
        }
    }

    #[test]
    fn write_schema_writes_every_file() {
        let dir = tempfile::tempdir().unwrap();
        write_schema(dir.path()).unwrap();
        for (path, text) in schema_files() {
            assert_eq!(
                std::fs::read_to_string(dir.path().join(&path)).unwrap(),
                text
            );
        }
        assert!(dir.path().join("v2/ThreadStartResponse.json").exists());
        assert!(dir.path().join("v1/InitializeParams.json").exists());
        assert!(dir.path().join(BUNDLE_FILE).exists());
    }

    #[test]
    fn envelopes_allow_extra_members() {
        let files: BTreeMap<String, Value> = schema_files()
            .into_iter()
            .map(|(p, t)| {
                (
                    p.to_string_lossy().into_owned(),
                    serde_json::from_str(&t).unwrap(),
                )
            })
            .collect();
        for name in [
            "ClientRequest.json",
            "ServerNotification.json",
            "ServerRequest.json",
            "ClientNotification.json",
        ] {
            let schema = &files[name];
            for branch in schema["oneOf"].as_array().unwrap() {
                assert!(
                    branch.get("additionalProperties").is_none(),
                    "{name}: {branch}"
                );
            }
            assert!(schema.get("additionalProperties").is_none(), "{name}");
        }
        let notification = &files["ServerNotification.json"];
        assert_eq!(notification["properties"]["emittedAtMs"]["type"], "integer");
        assert_eq!(notification["properties"]["emittedAtMs"]["format"], "int64");
        assert_eq!(notification["properties"]["jsonrpc"]["type"], "string");
        let validator = jsonschema::validator_for(notification).unwrap();
        let ok = serde_json::json!({"jsonrpc": "2.0", "method": "thread/closed",
            "params": {"threadId": "t"}, "emittedAtMs": 5});
        assert!(validator.is_valid(&ok));
        let bad = serde_json::json!({"method": "thread/closed", "params": {"threadId": "t"},
            "emittedAtMs": "soon"});
        assert!(!validator.is_valid(&bad));
    }
}
