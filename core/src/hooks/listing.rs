//! What `hooks/list` says about the configured stop hooks: the reference's `HookMetadata`
//! for each (docs/protocol.md §7.22).

use serde_json::json;
use weft_protocol::hooks_api::{
    HookEventName, HookHandlerType, HookMetadata, HookSource, HookTrustStatus,
};

use super::HookCommand;
use super::config::StopHooks;
use crate::config_base::{LayerSource, version_of};
use crate::exec::Quoting;

/// One `HookMetadata` per stop hook that runs, in run order.
pub fn list_stop_hooks(hooks: &StopHooks) -> Vec<HookMetadata> {
    let source = match hooks.origin.source {
        LayerSource::User => HookSource::User,
        LayerSource::SessionFlags => HookSource::SessionFlags,
    };
    hooks
        .hooks
        .iter()
        .enumerate()
        .map(|(order, entry)| {
            let command = command_line(&entry.hook.command);
            let timeout_sec = entry.hook.timeout().as_secs();
            HookMetadata {
                key: format!("{}:stop:{}:0", hooks.origin.path, entry.index),
                event_name: HookEventName::Stop,
                handler_type: HookHandlerType::Command,
                current_hash: hook_hash(&command, timeout_sec),
                command,
                is_async: false,
                matcher: None,
                timeout_sec,
                status_message: None,
                additional_context_limit: None,
                source_path: hooks.origin.path.clone(),
                source,
                plugin_id: None,
                environment_id: None,
                display_order: i64::try_from(order).unwrap_or(i64::MAX),
                enabled: true,
                is_managed: false,
                // Weft asks no one to review a hook: every configured hook runs.
                trust_status: HookTrustStatus::Trusted,
            }
        })
        .collect()
}

/// The reference's hook identity hash: the event and the normalized handler, as sorted
/// compact JSON.
fn hook_hash(command: &str, timeout_sec: u64) -> String {
    version_of(&json!({
        "event_name": "stop",
        "hooks": [{"type": "command", "command": command, "timeout": timeout_sec, "async": false}],
    }))
}

/// A command as one line: a shell string as written, an argv with each word shell-quoted.
pub fn command_line(command: &HookCommand) -> String {
    match command {
        HookCommand::Shell(script) => script.clone(),
        HookCommand::Argv(argv) => Quoting {
            quote: r"'\''",
            ..Quoting::COMMAND
        }
        .join(argv),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hooks::StopHookConfig;
    use crate::hooks::config::{ConfiguredStopHook, HooksOrigin};

    #[test]
    fn metadata_matches_the_reference_shape() {
        let hooks = StopHooks {
            origin: HooksOrigin {
                source: LayerSource::User,
                path: "/h/config.toml".into(),
            },
            hooks: vec![
                ConfiguredStopHook {
                    index: 0,
                    hook: StopHookConfig {
                        command: HookCommand::Shell("echo stop-hook".into()),
                        timeout_secs: Some(30),
                    },
                },
                ConfiguredStopHook {
                    index: 2,
                    hook: StopHookConfig {
                        command: HookCommand::Argv(vec!["python3".into(), "my hook.py".into()]),
                        timeout_secs: None,
                    },
                },
            ],
            warnings: Vec::new(),
            errors: Vec::new(),
        };
        let listed = list_stop_hooks(&hooks);
        assert_eq!(listed[0].key, "/h/config.toml:stop:0:0");
        // The reference hashes `echo stop-hook` with a 30 s timeout to this.
        assert_eq!(
            listed[0].current_hash,
            "sha256:9d795f8609e1b45dbc9c8aecadc43c475f6b21b1f358f72d0185febcd57679fd"
        );
        assert_eq!(listed[0].timeout_sec, 30);
        assert_eq!(listed[1].key, "/h/config.toml:stop:2:0");
        assert_eq!(listed[1].display_order, 1);
        assert_eq!(listed[1].command, "python3 'my hook.py'");
        assert_eq!(
            listed[1].timeout_sec,
            super::super::DEFAULT_STOP_HOOK_TIMEOUT_SECS
        );
        assert_eq!(listed[1].trust_status, HookTrustStatus::Trusted);
    }
}
