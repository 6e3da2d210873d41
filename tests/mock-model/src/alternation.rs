//! An opt-in strict chat template ([`MockModel::set_strict_alternation`]): Chat Completions
//! requests whose roles do not alternate are answered `400` the way llama.cpp answers when a
//! model's chat template (Gemma, Mistral…) raises, and do not consume a script.
//!
//! [`MockModel::set_strict_alternation`]: crate::MockModel::set_strict_alternation

use serde_json::Value;

/// Which chat template the mock enforces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Alternation {
    /// One optional `system` message first, then `user` and `assistant` alternating from a
    /// `user` (an assistant's `tool` answers belong to its turn).
    SystemFirst,
    /// As [`Alternation::SystemFirst`], with no `system` message at all (Gemma's templates).
    NoSystem,
}

/// The error text of a template that requires alternation (the wording templates raise).
pub const ALTERNATION_ERROR: &str =
    "Conversation roles must alternate user/assistant/user/assistant/...";

/// The error text of a template without a system role.
pub const NO_SYSTEM_ERROR: &str = "System role not supported";

/// Why `messages` break the template, if they do.
pub(crate) fn check(messages: &[Value], mode: Alternation) -> Result<(), String> {
    let role = |message: &Value| {
        message
            .get("role")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let mut roles: Vec<String> = messages.iter().map(role).collect();
    if roles.first().is_some_and(|first| first == "system") {
        if mode == Alternation::NoSystem {
            return Err(NO_SYSTEM_ERROR.into());
        }
        roles.remove(0);
    }
    if roles.iter().any(|role| role == "system") {
        return Err(match mode {
            Alternation::NoSystem => NO_SYSTEM_ERROR.into(),
            Alternation::SystemFirst => ALTERNATION_ERROR.into(),
        });
    }
    if roles.first().is_some_and(|first| first != "user") {
        return Err(ALTERNATION_ERROR.into());
    }
    for pair in roles.windows(2) {
        let (a, b) = (pair[0].as_str(), pair[1].as_str());
        let fine = match (a, b) {
            ("tool", "tool") => true,
            _ if a == b => false,
            ("user", "tool") => false,
            _ => true,
        };
        if !fine {
            return Err(ALTERNATION_ERROR.into());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn msgs(roles: &[&str]) -> Vec<Value> {
        roles
            .iter()
            .map(|role| json!({"role": role, "content": "x"}))
            .collect()
    }

    #[test]
    fn alternation_is_enforced() {
        let ok = msgs(&[
            "system",
            "user",
            "assistant",
            "tool",
            "tool",
            "assistant",
            "user",
        ]);
        assert_eq!(check(&ok, Alternation::SystemFirst), Ok(()));
        for bad in [
            &["system", "user", "user"][..],
            &["system", "system", "user"],
            &["assistant", "user"],
            &["user", "assistant", "assistant"],
            &["user", "assistant", "system", "user"],
        ] {
            assert_eq!(
                check(&msgs(bad), Alternation::SystemFirst),
                Err(ALTERNATION_ERROR.to_string()),
                "{bad:?}"
            );
        }
        assert_eq!(
            check(&msgs(&["system", "user"]), Alternation::NoSystem),
            Err(NO_SYSTEM_ERROR.to_string())
        );
        assert_eq!(
            check(&msgs(&["user", "assistant"]), Alternation::NoSystem),
            Ok(())
        );
    }
}
