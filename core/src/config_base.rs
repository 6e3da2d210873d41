//! The pieces of configuration shared by [`crate::config`] and the sections it reads
//! ([`crate::hooks::config`], [`crate::mcp::config`], [`crate::sandbox`],
//! [`crate::http_client`]): the error of a config that cannot be loaded, Weft's home
//! directory, the one-line form of parser messages, and the layers a config is built from.
//! A leaf: it imports nothing of the config, so the config depends on its sections and
//! never the other way round.
//!
//! The layers are kept as written: the user's `config.toml` and the command line's `-c` /
//! `--enable` / `--disable` overrides (highest precedence). `config/read` reports them with a
//! version each and the layer every effective key came from (docs/protocol.md §7.20).

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::Value;
use sha2::{Digest, Sha256};

/// Why the configuration could not be loaded. Its `Display` is one line naming file and key.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file exists but could not be read.
    #[error("{path}: cannot read: {source}")]
    Read {
        /// The config file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not valid TOML.
    #[error("{path}: invalid TOML: {message}")]
    Parse {
        /// The config file.
        path: PathBuf,
        /// The parser's message, folded onto one line.
        message: String,
    },
    /// A known key has a value of the wrong type or an invalid value.
    #[error("{path}: key `{key}`: {message}")]
    Invalid {
        /// The config file (or `command line` for overrides).
        path: PathBuf,
        /// The dotted key.
        key: String,
        /// What is wrong with it.
        message: String,
    },
    /// A `-c key=value` override is malformed.
    #[error("invalid override `{0}`: expected key=value")]
    Override(String),
}

/// The home directory: `$WEFT_HOME`, else `~/.weft`.
pub fn default_home() -> PathBuf {
    if let Some(home) = std::env::var_os("WEFT_HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(home);
    }
    let user_home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."));
    user_home.join(".weft")
}

/// `text` on one line: every run of whitespace (newlines included) becomes one space, so a
/// parser's message fits in a one-line error.
pub fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Which layer a key came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayerSource {
    /// `$WEFT_HOME/config.toml`.
    User,
    /// The command line.
    SessionFlags,
}

/// One layer: where it came from and the keys it sets.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigLayer {
    /// Where it came from.
    pub source: LayerSource,
    /// The keys it sets: the whole file as written (an absent file is empty), or the overrides
    /// Weft applied (unknown keys are ignored at load and not part of the layer).
    pub table: toml::Table,
}

impl ConfigLayer {
    /// The layer as JSON.
    pub fn to_json(&self) -> Value {
        toml_to_json(&toml::Value::Table(self.table.clone()))
    }

    /// `sha256:` and the hex digest of the layer as compact JSON with sorted keys (the
    /// reference's layer version).
    pub fn version(&self) -> String {
        version_of(&self.to_json())
    }
}

/// The layers of one daemon's config.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigLayers {
    /// The user's `config.toml` path (whether or not it exists).
    pub file_path: PathBuf,
    /// The file layer.
    pub file: ConfigLayer,
    /// The overrides layer, when the command line gave any that Weft applies.
    pub overrides: Option<ConfigLayer>,
    /// The file with the overrides applied.
    pub merged: toml::Table,
}

impl ConfigLayers {
    /// The layers, highest precedence first.
    pub fn highest_first(&self) -> Vec<&ConfigLayer> {
        self.overrides.iter().chain([&self.file]).collect()
    }

    /// The layer that set each leaf of the merged config (dotted paths, array items by index:
    /// `hooks.stop.0.command`), for the top-level keys in `known`: the highest layer holding
    /// the path.
    pub fn origins(&self, known: &[&str]) -> BTreeMap<String, LayerSource> {
        let mut leaves = Vec::new();
        for (key, value) in &self.merged {
            if known.contains(&key.as_str()) {
                collect_leaves(key.clone(), value, &mut leaves);
            }
        }
        let layers: Vec<(LayerSource, toml::Value)> = self
            .highest_first()
            .into_iter()
            .map(|layer| (layer.source, toml::Value::Table(layer.table.clone())))
            .collect();
        let mut origins = BTreeMap::new();
        for path in leaves {
            if let Some((source, _)) = layers.iter().find(|(_, table)| has_path(table, &path)) {
                origins.insert(path, *source);
            }
        }
        origins
    }
}

/// `sha256:<hex>` of `value` as compact JSON with sorted keys.
pub fn version_of(value: &Value) -> String {
    let mut text = String::new();
    write_canonical(value, &mut text);
    let digest = Sha256::digest(text.as_bytes());
    let hex: String = digest.iter().map(|byte| format!("{byte:02x}")).collect();
    format!("sha256:{hex}")
}

/// TOML as JSON: datetimes become their TOML text.
pub fn toml_to_json(value: &toml::Value) -> Value {
    match value {
        toml::Value::String(s) => Value::String(s.clone()),
        toml::Value::Integer(i) => Value::from(*i),
        toml::Value::Float(f) => {
            serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number)
        }
        toml::Value::Boolean(b) => Value::Bool(*b),
        toml::Value::Datetime(d) => Value::String(d.to_string()),
        toml::Value::Array(items) => Value::Array(items.iter().map(toml_to_json).collect()),
        toml::Value::Table(table) => Value::Object(
            table
                .iter()
                .map(|(k, v)| (k.clone(), toml_to_json(v)))
                .collect(),
        ),
    }
}

/// Compact JSON with object keys sorted, whatever order the map keeps.
fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write_canonical(&map[key], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

fn collect_leaves(path: String, value: &toml::Value, out: &mut Vec<String>) {
    match value {
        toml::Value::Table(table) if !table.is_empty() => {
            for (key, value) in table {
                collect_leaves(format!("{path}.{key}"), value, out);
            }
        }
        toml::Value::Array(items) if !items.is_empty() => {
            for (i, value) in items.iter().enumerate() {
                collect_leaves(format!("{path}.{i}"), value, out);
            }
        }
        _ => out.push(path),
    }
}

fn has_path(mut value: &toml::Value, path: &str) -> bool {
    for part in path.split('.') {
        let next = match value {
            toml::Value::Table(table) => table.get(part),
            toml::Value::Array(items) => part.parse::<usize>().ok().and_then(|i| items.get(i)),
            _ => None,
        };
        match next {
            Some(next) => value = next,
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn versions_hash_sorted_compact_json() {
        // The reference's version of an empty layer.
        assert_eq!(
            version_of(&json!({})),
            "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
        );
        let a = version_of(&json!({"b": 1, "a": {"d": [1, "x"], "c": true}}));
        let b = version_of(&json!({"a": {"c": true, "d": [1, "x"]}, "b": 1}));
        assert_eq!(a, b);
    }

    #[test]
    fn origins_name_the_highest_layer_holding_each_leaf() {
        let file: toml::Table = toml::from_str(
            "model = \"a\"\nsandbox_mode = \"read-only\"\n[[hooks.stop]]\ncommand = \"x\"\n[[hooks.stop]]\ncommand = \"y\"\n[features]\nz = 1\n",
        )
        .unwrap();
        let overrides: toml::Table =
            toml::from_str("model = \"b\"\nhooks = { stop = [{ command = \"o\" }] }\n").unwrap();
        let merged: toml::Table = toml::from_str(
            "model = \"b\"\nsandbox_mode = \"read-only\"\nhooks = { stop = [{ command = \"o\" }] }\n[features]\nz = 1\n",
        )
        .unwrap();
        let layers = ConfigLayers {
            merged,
            file_path: PathBuf::from("/h/config.toml"),
            file: ConfigLayer {
                source: LayerSource::User,
                table: file,
            },
            overrides: Some(ConfigLayer {
                source: LayerSource::SessionFlags,
                table: overrides.clone(),
            }),
        };
        let origins = layers.origins(&["model", "sandbox_mode", "hooks"]);
        let expected: BTreeMap<String, LayerSource> = [
            ("hooks.stop.0.command", LayerSource::SessionFlags),
            ("model", LayerSource::SessionFlags),
            ("sandbox_mode", LayerSource::User),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        assert_eq!(origins, expected);
        assert_eq!(layers.highest_first()[0].source, LayerSource::SessionFlags);
        assert_eq!(
            layers.highest_first()[0].to_json(),
            json!({"model": "b", "hooks": {"stop": [{"command": "o"}]}})
        );
    }
}
