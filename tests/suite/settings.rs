//! Writing settings (docs/protocol.md §7.34): `config/value/write` and `config/batchWrite`
//! (comments and order kept, versions, refusals with the file untouched, no temporary left, new
//! and loaded threads), `experimentalFeature/*`, `permissionProfile/list`, and
//! `thread/settings/update` with its `thread/settings/updated`.

use std::path::Path;

use serde_json::{Value, json};
use weft_test_support::{Client, RpcError};

mod config_write;
mod external_agent;
mod external_agent_sessions;
mod features;
mod skills;
mod thread_settings;

/// The user layer's version as `config/read` reports it.
async fn file_version(client: &mut Client) -> String {
    let read = client
        .request_ok("config/read", json!({"includeLayers": true}))
        .await;
    let layers = read["layers"].as_array().expect("layers");
    let user = layers
        .iter()
        .find(|layer| layer["name"]["type"] == "user")
        .unwrap_or_else(|| panic!("no user layer in {read}"));
    user["version"].as_str().expect("version").to_owned()
}

/// A refused write: `-32600` with this `config_write_error_code`; returns the message.
fn refused(err: RpcError, code: &str) -> String {
    assert_eq!(err.code, -32600, "{err}");
    assert_eq!(
        err.data,
        Some(json!({"config_write_error_code": code})),
        "{err}"
    );
    err.message
}

/// `config/value/write` params.
fn value_write(key_path: &str, value: Value) -> Value {
    json!({"keyPath": key_path, "value": value, "mergeStrategy": "replace"})
}

/// The files a write may leave beside `config.toml` (none, if it is atomic and cleans up).
fn temporaries(home: &Path) -> Vec<String> {
    std::fs::read_dir(home)
        .expect("read the home")
        .filter_map(|entry| entry.ok())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.contains(".tmp") || name.starts_with(".config.toml"))
        .collect()
}
