//! `modelProvider/config/write` and `modelProvider/default/set` (docs/protocol.md §7.35) as
//! edits of the user's `config.toml`: a custom gateway is a `[model_providers.<id>]` table
//! (a new one gets an id made from its name), the default provider is `model_provider`. The
//! edits go through [`super::write::write`], so a write is checked, atomic and keeps the
//! file's comments like any config write. The checks and their texts are the reference's.

use weft_protocol::model_provider_write_api::ProviderSettingsPatch;
use weft_protocol::{ConfigWriteErrorCode, MergeStrategy};

use super::Config;
use super::write::{Edit, WriteError};
use crate::model::provider::AddressView;

/// The reference's built-in provider ids Weft has no provider for; a custom one may not take
/// them either, so a file shared with Codex keeps meaning the same.
const REFERENCE_BUILT_INS: [&str; 3] = ["amazon-bedrock", "amazon-bedrock-runtime", "gcp"];

/// The id a provider gets when its name gives none.
const FALLBACK_ID: &str = "custom";

/// What `modelProvider/config/write` writes: the provider's id and the edits.
pub fn provider_edits(
    current: &Config,
    patch: &ProviderSettingsPatch,
) -> Result<(String, Vec<Edit>), WriteError> {
    let ProviderSettingsPatch::CustomGateway {
        provider_id,
        name,
        base_url,
        env_key,
    } = patch
    else {
        return Err(validation(
            "Weft has no Amazon Bedrock or Google Cloud providers: only a custom gateway (an \
             OpenAI-compatible server) can be written",
        ));
    };
    let name = match name {
        Some(name) if name.trim().is_empty() => return Err(validation("Enter a provider name.")),
        other => other.as_deref().map(str::trim),
    };
    let (id, creating) = match provider_id {
        Some(id) => {
            if is_built_in(id) {
                return Err(validation(
                    "A custom provider or gateway cannot use a built-in provider ID.",
                ));
            }
            if !written_ids(current).any(|written| written == id) {
                return Err(WriteError {
                    code: Some(ConfigWriteErrorCode::ConfigPathNotFound),
                    message: "Unknown provider ID.".into(),
                });
            }
            (id.clone(), false)
        }
        None => {
            let Some(name) = name else {
                return Err(validation("Enter a provider name."));
            };
            if !matches!(base_url, Some(Some(_))) {
                return Err(validation(
                    "A base URL is required to create a custom provider.",
                ));
            }
            (free_id(current, &slug(name)), true)
        }
    };
    if let Some(Some(url)) = base_url
        && !AddressView::of(url).displayable
    {
        return Err(validation(
            "Enter an HTTP(S) base URL without credentials, a query, or a fragment.",
        ));
    }
    if let Some(Some(key)) = env_key
        && !is_env_name(key)
    {
        return Err(validation("Invalid API key environment variable name."));
    }
    // In the order the reference writes a new table: its keys sorted.
    let mut edits = Vec::new();
    let mut edit = |key: &str, value: Option<&str>| {
        edits.push(Edit {
            key_path: key_path(&["model_providers", &id, key]),
            value: value.map_or(serde_json::Value::Null, |v| v.into()),
            merge_strategy: MergeStrategy::Replace,
        });
    };
    if let Some(url) = base_url {
        edit("base_url", url.as_deref());
    }
    if let Some(key) = env_key {
        edit("env_key", key.as_deref());
    }
    if let Some(name) = name {
        edit("name", Some(name));
    }
    if creating {
        edit("wire_api", Some("responses"));
    }
    Ok((id, edits))
}

/// What `modelProvider/default/set` writes: `model_provider`, when the provider is one the
/// config has.
pub fn default_edit(current: &Config, provider_id: &str) -> Result<Edit, WriteError> {
    if current.provider(provider_id).is_none() {
        return Err(validation(format!(
            "Model provider `{provider_id}` is not configured."
        )));
    }
    Ok(Edit {
        key_path: "model_provider".into(),
        value: provider_id.into(),
        merge_strategy: MergeStrategy::Replace,
    })
}

/// Whether the provider is a `[model_providers.<id>]` table of the user's file, which a
/// client may edit (`canEdit`).
pub fn is_user_provider(current: &Config, id: &str) -> bool {
    !is_built_in(id) && written_ids(current).any(|written| written == id)
}

fn validation(message: impl Into<String>) -> WriteError {
    WriteError {
        code: Some(ConfigWriteErrorCode::ConfigValidationError),
        message: message.into(),
    }
}

fn is_built_in(id: &str) -> bool {
    REFERENCE_BUILT_INS.contains(&id) || super::builtin_providers().contains_key(id)
}

/// The providers the user's file defines.
fn written_ids(current: &Config) -> impl Iterator<Item = &String> {
    current
        .layers
        .file
        .table
        .get("model_providers")
        .and_then(toml::Value::as_table)
        .into_iter()
        .flat_map(|table| table.keys())
}

/// `base`, or `base-2`, `base-3`, … : the first id no provider has.
fn free_id(current: &Config, base: &str) -> String {
    let taken = |id: &str| {
        is_built_in(id) || current.provider(id).is_some() || written_ids(current).any(|w| w == id)
    };
    let mut id = base.to_string();
    let mut n = 1u32;
    while taken(&id) {
        n += 1;
        id = format!("{base}-{n}");
    }
    id
}

/// An id from a name: lowercase ASCII letters and digits, each other run of characters one
/// `-`, none at either end (`My Gateway` → `my-gateway`); `custom` when nothing is left.
fn slug(name: &str) -> String {
    let mut id = String::new();
    for ch in name.chars() {
        if ch.is_ascii_alphanumeric() {
            id.push(ch.to_ascii_lowercase());
        } else if !id.is_empty() && !id.ends_with('-') {
            id.push('-');
        }
    }
    let id = id.trim_end_matches('-');
    if id.is_empty() {
        FALLBACK_ID.to_string()
    } else {
        id.to_string()
    }
}

/// A portable environment variable name: a letter or `_`, then letters, digits and `_`.
fn is_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A dotted key path whose segments are quoted, so an id with a dot stays one segment.
fn key_path(segments: &[&str]) -> String {
    segments
        .iter()
        .map(|segment| format!("\"{}\"", segment.replace('\\', "\\\\").replace('"', "\\\"")))
        .collect::<Vec<_>>()
        .join(".")
}

#[cfg(test)]
mod tests {
    use super::super::edit::parse_key_path;
    use super::*;

    #[test]
    fn ids_come_from_names_as_the_reference_makes_them() {
        assert_eq!(slug("My Gateway"), "my-gateway");
        assert_eq!(slug("  Über Gate!! "), "ber-gate");
        assert_eq!(slug("!!!"), "custom");
        assert_eq!(slug("a--b__C9"), "a-b-c9");
    }

    #[test]
    fn env_names_are_portable() {
        for good in ["MY_KEY", "_k1", "k"] {
            assert!(is_env_name(good), "{good}");
        }
        for bad in ["", "my-key", "1KEY", "A B", "É"] {
            assert!(!is_env_name(bad), "{bad}");
        }
    }

    #[test]
    fn key_paths_keep_an_id_one_segment() {
        assert_eq!(
            parse_key_path(&key_path(&["model_providers", "a.b\"c", "name"])).unwrap(),
            ["model_providers", "a.b\"c", "name"]
        );
    }
}
