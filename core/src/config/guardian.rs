//! `[guardian]`: the reviewer that answers approval questions when a thread's
//! `approvalsReviewer` is `auto_review` (docs/protocol.md §9.8, docs/architecture.md §8.10).

use std::path::Path;

use serde::Deserialize;

use crate::config_base::ConfigError;

/// `[guardian]`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GuardianConfig {
    /// The reviewer's model; the thread's model when unset.
    pub model: Option<String>,
    /// The reviewer's provider (a key of `model_providers`); the thread's when unset.
    pub model_provider: Option<String>,
    /// The reviewer's reasoning effort, sent as is; the thread's when unset.
    pub reasoning_effort: Option<String>,
    /// Seconds one review may take before the question goes to the user instead.
    pub timeout_secs: u64,
    /// Bytes of the reviewed action shown to the reviewer (a longer patch or argument list is
    /// cut in the middle, and the reviewer is told so).
    pub max_action_bytes: usize,
    /// Bytes of the conversation (the user's messages, newest first) shown to the reviewer.
    pub max_transcript_bytes: usize,
}

impl Default for GuardianConfig {
    fn default() -> Self {
        GuardianConfig {
            model: None,
            model_provider: None,
            reasoning_effort: None,
            timeout_secs: 90,
            max_action_bytes: 16 * 1024,
            max_transcript_bytes: 24 * 1024,
        }
    }
}

impl GuardianConfig {
    pub(super) fn validated(self, path: &Path) -> Result<GuardianConfig, ConfigError> {
        let invalid = |key: &str, message: &str| ConfigError::Invalid {
            path: path.to_path_buf(),
            key: key.into(),
            message: message.into(),
        };
        if self.timeout_secs == 0 {
            return Err(invalid("guardian.timeout_secs", "must be at least 1"));
        }
        if self.max_action_bytes < 256 {
            return Err(invalid("guardian.max_action_bytes", "must be at least 256"));
        }
        if self.max_transcript_bytes < 256 {
            return Err(invalid(
                "guardian.max_transcript_bytes",
                "must be at least 256",
            ));
        }
        Ok(self)
    }
}

/// `approvals_reviewer`: one of the reference's values, or an error naming the key.
pub(super) fn validated_reviewer(
    value: Option<String>,
    path: &Path,
) -> Result<Option<String>, ConfigError> {
    match value.as_deref() {
        None | Some("user" | "auto_review" | "guardian_subagent") => Ok(value),
        Some(other) => Err(ConfigError::Invalid {
            path: path.to_path_buf(),
            key: "approvals_reviewer".into(),
            message: format!(
                "`{other}` is not a reviewer: expected `user`, `auto_review` or `guardian_subagent`"
            ),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_and_reviewers_are_checked() {
        let path = Path::new("/h/config.toml");
        assert!(GuardianConfig::default().validated(path).is_ok());
        let zero = GuardianConfig {
            timeout_secs: 0,
            ..GuardianConfig::default()
        };
        assert!(zero.validated(path).is_err());
        let tiny = GuardianConfig {
            max_action_bytes: 10,
            ..GuardianConfig::default()
        };
        assert!(tiny.validated(path).is_err());
        for ok in [
            None,
            Some("user"),
            Some("auto_review"),
            Some("guardian_subagent"),
        ] {
            let value = ok.map(str::to_string);
            assert_eq!(validated_reviewer(value.clone(), path).unwrap(), value);
        }
        let err = validated_reviewer(Some("robot".into()), path).unwrap_err();
        assert!(err.to_string().contains("approvals_reviewer"), "{err}");
    }
}
