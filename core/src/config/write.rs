//! A config write (`config/value/write`, `config/batchWrite`, docs/protocol.md §7.34): the
//! edits applied to the user's `config.toml` as it is on disk now, checked against the
//! version the client read, checked by loading the result as Weft would (with the command
//! line's overrides on top), and only then written ([`super::edit::write_atomically`]). A
//! refused write leaves the file as it was. Keys Weft does not know are written as asked: the
//! file is shared with Codex, and Weft ignores them at load.

use std::path::{Component, Path, PathBuf};

use toml_edit::DocumentMut;
use weft_protocol::config_api::{ConfigLayerMetadata, ConfigLayerSource};
use weft_protocol::{
    ConfigWriteErrorCode, ConfigWriteResponse, MergeStrategy, OverriddenMetadata, WriteStatus,
};

use super::edit::{
    apply_merge, clear_path, json_to_toml, parse_key_path, set_path, value_at, write_atomically,
};
use super::{Config, LayerSource, toml_to_json, version_of};

/// One edit: a key path, its new value (`null` removes it) and how it is merged.
#[derive(Debug, Clone, PartialEq)]
pub struct Edit {
    /// The dotted key path, as sent.
    pub key_path: String,
    /// The value, as sent.
    pub value: serde_json::Value,
    /// Replace or upsert.
    pub merge_strategy: MergeStrategy,
}

/// Why a write was refused. With a `code` the answer is `-32600` carrying
/// `data.config_write_error_code`; without one it is an internal error (`-32603`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct WriteError {
    /// The reference's error code, when the client's request is at fault.
    pub code: Option<ConfigWriteErrorCode>,
    /// The message.
    pub message: String,
}

impl WriteError {
    fn refused(code: ConfigWriteErrorCode, message: impl Into<String>) -> WriteError {
        WriteError {
            code: Some(code),
            message: message.into(),
        }
    }

    fn validation(message: impl Into<String>) -> WriteError {
        WriteError::refused(ConfigWriteErrorCode::ConfigValidationError, message)
    }

    fn internal(message: impl Into<String>) -> WriteError {
        WriteError {
            code: None,
            message: message.into(),
        }
    }
}

/// A write that went through: the config now in effect for new threads and the answer.
#[derive(Debug)]
pub struct Written {
    /// The config loaded from the written file (with the same command-line overrides).
    pub config: Config,
    /// The method's result.
    pub response: ConfigWriteResponse,
}

/// Apply `edits` to the user's `config.toml` of `current` (every edit or none), when
/// `file_path` (default: that file) is that file and `expected_version` (if given) is its
/// version now.
pub fn write(
    current: &Config,
    file_path: Option<&str>,
    expected_version: Option<&str>,
    edits: &[Edit],
) -> Result<Written, WriteError> {
    let path = current.layers.file_path.clone();
    if let Some(provided) = file_path {
        let provided = Path::new(provided);
        if !provided.is_absolute() {
            return Err(WriteError::internal(format!(
                "failed to resolve user config path: path is not absolute: `{}`",
                provided.display()
            )));
        }
        if !same_file(&path, provided) {
            return Err(WriteError::refused(
                ConfigWriteErrorCode::ConfigLayerReadonly,
                "Only writes to the user config are allowed",
            ));
        }
    }
    let (text, mut doc, mut table) = read_user_file(&path)?;
    if let Some(expected) = expected_version
        && expected != layer_version(&table)
    {
        return Err(WriteError::refused(
            ConfigWriteErrorCode::ConfigVersionConflict,
            "Configuration was modified since last read. Fetch latest version and retry.",
        ));
    }
    let mut written_paths = Vec::with_capacity(edits.len());
    for edit in edits {
        let segments = parse_key_path(&edit.key_path).map_err(WriteError::validation)?;
        if !edit.value.is_null() {
            refuse_profiles(&segments)?;
        }
        let before = value_at(&table, &segments).cloned();
        let value = json_to_toml(edit.value.clone()).map_err(WriteError::validation)?;
        apply_merge(&mut table, &segments, value.as_ref(), edit.merge_strategy);
        let after = value_at(&table, &segments).cloned();
        if before != after {
            match &after {
                Some(value) => set_path(&mut doc, &segments, value),
                None => clear_path(&mut doc, &segments),
            }
        }
        written_paths.push(segments);
    }
    let config = commit(current, &path, &text, &doc)?;
    let overridden = written_paths
        .iter()
        .find_map(|segments| overridden(&config, segments));
    let response = ConfigWriteResponse {
        status: if overridden.is_some() {
            WriteStatus::OkOverridden
        } else {
            WriteStatus::Ok
        },
        version: config.layers.file.version(),
        file_path: std::fs::canonicalize(&path)
            .unwrap_or(path)
            .display()
            .to_string(),
        overridden_metadata: overridden,
    };
    Ok(Written { config, response })
}

/// Edit the user's `config.toml` with `edit` (a document edit of Weft's own, such as a skill's
/// switch), checked and written as [`write`] writes: the config loaded from the result, which
/// is written only when valid and different.
pub fn write_document(
    current: &Config,
    edit: impl FnOnce(&mut DocumentMut),
) -> Result<Config, WriteError> {
    let path = current.layers.file_path.clone();
    let (text, mut doc, _) = read_user_file(&path)?;
    edit(&mut doc);
    commit(current, &path, &text, &doc)
}

/// The user's file as text, as a document and as a table (an absent file is empty).
fn read_user_file(path: &Path) -> Result<(String, DocumentMut, toml::Table), WriteError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(err) => {
            return Err(WriteError::internal(format!(
                "failed to read user config.toml: {err}"
            )));
        }
    };
    let doc: DocumentMut = text.parse().map_err(|err: toml_edit::TomlError| {
        WriteError::internal(format!(
            "failed to parse existing user config.toml: {}",
            crate::config_base::one_line(&err.to_string())
        ))
    })?;
    let table: toml::Table = text.parse().map_err(|err: toml::de::Error| {
        WriteError::internal(format!(
            "failed to parse existing user config.toml: {}",
            crate::config_base::one_line(&err.to_string())
        ))
    })?;
    Ok((text, doc, table))
}

/// Load the edited document as Weft would (with the command line's overrides), then replace
/// the file atomically when it changed.
fn commit(
    current: &Config,
    path: &Path,
    text: &str,
    doc: &DocumentMut,
) -> Result<Config, WriteError> {
    let new_text = doc.to_string();
    let (config, _) =
        Config::load_text(&current.home, Some(&new_text), &override_pairs(current))
            .map_err(|err| WriteError::validation(format!("Invalid configuration: {err}")))?;
    if new_text != text {
        write_atomically(path, &new_text)
            .map_err(|err| WriteError::internal(format!("failed to persist config.toml: {err}")))?;
    }
    Ok(config)
}

/// Load the config again from the file as it is now, with `current`'s command-line overrides.
pub fn reload(current: &Config) -> Result<Config, super::ConfigError> {
    let path = &current.layers.file_path;
    let text = match std::fs::read_to_string(path) {
        Ok(text) => Some(text),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
        Err(source) => {
            return Err(super::ConfigError::Read {
                path: path.clone(),
                source,
            });
        }
    };
    Config::load_text(&current.home, text.as_deref(), &override_pairs(current)).map(|(c, _)| c)
}

/// The user layer's version of a file table (as `config/read` reports it).
fn layer_version(table: &toml::Table) -> String {
    version_of(&toml_to_json(&toml::Value::Table(table.clone())))
}

/// The reference refuses to write its legacy profile keys; so does Weft (it has no profiles).
fn refuse_profiles(segments: &[String]) -> Result<(), WriteError> {
    match segments.first().map(String::as_str) {
        Some("profile") if segments.len() == 1 => Err(WriteError::validation(
            "`profile` is a legacy config selector and can no longer be written; use `--profile <name>` with `<name>.config.toml` instead",
        )),
        Some("profiles") => Err(WriteError::validation(
            "`profiles` contains legacy config profile tables and can no longer be written; use `--profile <name>` with `<name>.config.toml` instead",
        )),
        _ => Ok(()),
    }
}

/// The command line's overrides as `(dotted key, value)` leaves, to apply again on a reload.
fn override_pairs(config: &Config) -> Vec<(String, toml::Value)> {
    let mut pairs = Vec::new();
    if let Some(layer) = &config.layers.overrides {
        for (key, value) in &layer.table {
            leaves(key.clone(), value, &mut pairs);
        }
    }
    pairs
}

fn leaves(path: String, value: &toml::Value, out: &mut Vec<(String, toml::Value)>) {
    match value {
        toml::Value::Table(table) if !table.is_empty() => {
            for (key, value) in table {
                leaves(format!("{path}.{key}"), value, out);
            }
        }
        _ => out.push((path, value.clone())),
    }
}

/// When the command line sets a written path to something else: the overriding layer and the
/// value in effect.
fn overridden(config: &Config, segments: &[String]) -> Option<OverriddenMetadata> {
    let layer = config.layers.overrides.as_ref()?;
    let flag_value = value_at(&layer.table, segments)?;
    let user_value = value_at(&config.layers.file.table, segments);
    if user_value == Some(flag_value) {
        return None;
    }
    debug_assert_eq!(layer.source, LayerSource::SessionFlags);
    Some(OverriddenMetadata {
        message: "Overridden by session flags".to_string(),
        overriding_layer: ConfigLayerMetadata {
            name: ConfigLayerSource::SessionFlags,
            version: layer.version(),
        },
        effective_value: value_at(&config.layers.merged, segments)
            .map(toml_to_json)
            .map(|value| redacted(segments, value))
            .unwrap_or(serde_json::Value::Null),
    })
}

/// What `config/read` never echoes, it is not echoed here either: a provider's bearer token and
/// the values of its HTTP headers, wherever in the written path they are.
fn redacted(segments: &[String], value: serde_json::Value) -> serde_json::Value {
    const REDACTED: &str = "<redacted>";
    let secret = |key: &str| key == "experimental_bearer_token" || key == "http_headers";
    if segments.first().map(String::as_str) != Some("model_providers") {
        return value;
    }
    if segments.iter().any(|segment| secret(segment)) {
        return match value {
            serde_json::Value::Object(map) => map
                .into_iter()
                .map(|(key, _)| (key, serde_json::Value::from(REDACTED)))
                .collect(),
            serde_json::Value::Null => serde_json::Value::Null,
            _ => serde_json::Value::from(REDACTED),
        };
    }
    fn walk(value: &mut serde_json::Value, secret: &dyn Fn(&str) -> bool) {
        if let serde_json::Value::Object(map) = value {
            for (key, inner) in map.iter_mut() {
                if secret(key) {
                    *inner = match inner {
                        serde_json::Value::Object(headers) => headers
                            .keys()
                            .map(|name| (name.clone(), serde_json::Value::from("<redacted>")))
                            .collect(),
                        _ => serde_json::Value::from("<redacted>"),
                    };
                } else {
                    walk(inner, secret);
                }
            }
        }
    }
    let mut value = value;
    walk(&mut value, &secret);
    value
}

/// Whether two absolute paths name the same file: the same once resolved (when both exist),
/// else the same once `.` and `..` are taken out.
fn same_file(expected: &Path, provided: &Path) -> bool {
    if let (Ok(a), Ok(b)) = (
        std::fs::canonicalize(expected),
        std::fs::canonicalize(provided),
    ) {
        return a == b;
    }
    normalized(expected) == normalized(provided)
}

fn normalized(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
#[path = "write_tests.rs"]
mod tests;
