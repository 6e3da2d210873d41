//! The names a server's tools get in front of the model (docs/mcp.md §4, "Tool names").
//!
//! Model APIs accept function names matching `^[a-zA-Z0-9_-]+$`, at most
//! [`MAX_NAME_LEN`] characters, unique within a namespace; an MCP server may list any
//! string, and the same string twice. Per server, in the server's own order:
//!
//! * a tool whose name another tool listed before it already has is **dropped**: `tools/call`
//!   names a tool by its name, so the second could never be called;
//! * a valid name is **kept exactly** (no change on the wire);
//! * an invalid one is **renamed**: every character outside the pattern becomes `_`, and when
//!   the result is too long, empty, or taken by a tool listed before it, it is cut and gets
//!   `_` plus eight hex digits of a hash of the server's name for it, so the same list always
//!   gives the same names. Valid names are placed first, so a rename never takes a name the
//!   server gave.
//!
//! The model's name maps back to the server's for the call.

use std::collections::{BTreeMap, HashSet};

use serde_json::Value;

/// The longest function name the model APIs accept.
pub const MAX_NAME_LEN: usize = 64;

/// A server's tools as the model sees them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelNames {
    /// The tools kept, in the server's order, each with its `name` set to the model's name.
    pub tools: Vec<Value>,
    /// Model name → the server's name, for the renamed tools only.
    pub renamed: BTreeMap<String, String>,
    /// What was renamed or dropped, one line each (empty when nothing was).
    pub notes: Vec<String>,
}

/// Whether the model APIs accept `name` as it is.
pub fn is_valid(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME_LEN
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The names of `tools` (MCP `Tool` JSON, filtered already) for the model.
pub fn model_names(tools: Vec<Value>) -> ModelNames {
    let mut out = ModelNames::default();
    let mut seen = HashSet::new();
    let mut kept: Vec<(String, Value)> = Vec::new();
    for tool in tools {
        let Some(name) = tool.get("name").and_then(Value::as_str).map(str::to_string) else {
            out.notes.push("a tool without a name was dropped".into());
            continue;
        };
        if !seen.insert(name.clone()) {
            out.notes
                .push(format!("a second tool named {} was dropped", quoted(&name)));
            continue;
        }
        kept.push((name, tool));
    }
    let mut taken: HashSet<String> = kept
        .iter()
        .filter(|(name, _)| is_valid(name))
        .map(|(name, _)| name.clone())
        .collect();
    for (name, mut tool) in kept {
        if !is_valid(&name) {
            let model = rename(&name, &taken);
            taken.insert(model.clone());
            out.notes.push(format!(
                "tool {} is offered to the model as `{model}`",
                quoted(&name)
            ));
            tool["name"] = Value::String(model.clone());
            out.renamed.insert(model, name);
        }
        out.tools.push(tool);
    }
    out
}

/// A valid name for `name`, not in `taken`.
fn rename(name: &str, taken: &HashSet<String>) -> String {
    let plain: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if is_valid(&plain) && !taken.contains(&plain) {
        return plain;
    }
    // `_` and 8 hex digits; more tries only if even that is taken (a server listing
    // names made to collide).
    let keep = MAX_NAME_LEN - 9;
    let head: String = plain.chars().take(keep).collect();
    (0u32..)
        .map(|salt| format!("{head}_{:08x}", fnv1a(name, salt)))
        .find(|candidate| !taken.contains(candidate))
        .unwrap_or(head)
}

/// FNV-1a (32 bits) of the name's bytes, then `salt`'s: stable across runs and builds.
fn fnv1a(name: &str, salt: u32) -> u32 {
    let mut hash: u32 = 0x811c_9dc5;
    for byte in name
        .bytes()
        .chain(salt.to_le_bytes().into_iter().filter(|_| salt > 0))
    {
        hash ^= u32::from(byte);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    hash
}

/// A name for a log line: as JSON, so spaces, control characters and quotes show.
fn quoted(name: &str) -> String {
    Value::String(name.to_string()).to_string()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tools(names: &[&str]) -> Vec<Value> {
        names
            .iter()
            .map(|name| json!({"name": name, "inputSchema": {"type": "object"}}))
            .collect()
    }

    fn listed(names: &ModelNames) -> Vec<String> {
        names
            .tools
            .iter()
            .map(|t| t["name"].as_str().unwrap_or_default().to_string())
            .collect()
    }

    #[test]
    fn valid_names_are_kept_exactly() {
        let long = "a".repeat(MAX_NAME_LEN);
        let names = model_names(tools(&["echo", "get-sum", "A_b-9", &long]));
        assert_eq!(listed(&names), ["echo", "get-sum", "A_b-9", long.as_str()]);
        assert!(names.renamed.is_empty());
        assert!(names.notes.is_empty());
    }

    #[test]
    fn invalid_names_are_renamed_and_map_back() {
        let too_long = "b".repeat(MAX_NAME_LEN + 1);
        let names = model_names(tools(&[
            "../../etc/passwd",
            "has space",
            "naïve",
            "",
            &too_long,
            "has_space",
        ]));
        let got = listed(&names);
        for name in &got {
            assert!(is_valid(name), "{name:?}");
        }
        let unique: HashSet<&String> = got.iter().collect();
        assert_eq!(unique.len(), got.len(), "{got:?}");
        assert_eq!(got[0], "______etc_passwd");
        // `has_space` is the server's own name for another tool: it keeps it.
        assert_eq!(got[5], "has_space");
        assert!(
            got[1].starts_with("has_space_") && got[1].len() == 18,
            "{got:?}"
        );
        assert_eq!(got[2], "na_ve");
        assert!(got[3].starts_with('_') && got[3].len() == 9, "{got:?}");
        assert_eq!(got[4].len(), MAX_NAME_LEN);
        for (model, real) in [(&got[0], "../../etc/passwd"), (&got[1], "has space")] {
            assert_eq!(names.renamed.get(model).map(String::as_str), Some(real));
        }
        assert!(!names.renamed.contains_key("has_space"));
        assert_eq!(names.notes.len(), 5, "{:?}", names.notes);
        assert!(
            names.notes[0].contains("\"../../etc/passwd\"")
                && names.notes[0].contains("`______etc_passwd`"),
            "{:?}",
            names.notes
        );
        // The same list gives the same names.
        assert_eq!(
            model_names(tools(&[
                "../../etc/passwd",
                "has space",
                "naïve",
                "",
                &too_long,
                "has_space"
            ])),
            names
        );
    }

    #[test]
    fn a_second_tool_of_the_same_name_is_dropped() {
        let mut list = tools(&["echo", "x y", "echo", "x y"]);
        list[2]["description"] = json!("the second echo");
        let names = model_names(list);
        assert_eq!(listed(&names), ["echo", "x_y"]);
        assert!(names.tools[0].get("description").is_none());
        assert_eq!(
            names.notes,
            [
                "a second tool named \"echo\" was dropped",
                "a second tool named \"x y\" was dropped",
                "tool \"x y\" is offered to the model as `x_y`",
            ]
        );
    }
}
