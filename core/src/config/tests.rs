use super::*;

fn load_text(text: &str, overrides: &[&str]) -> Result<(Config, LoadReport), ConfigError> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.toml"), text).unwrap();
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    Config::load(dir.path(), &overrides)
}

#[test]
fn defaults_without_file() {
    let dir = tempfile::tempdir().unwrap();
    let (config, _) = Config::load(dir.path(), &[]).unwrap();
    assert_eq!(config.model, DEFAULT_MODEL);
    assert_eq!(config.model_provider, "openai");
    assert!(config.provider("ollama").is_some());
    assert_eq!(config.thread_idle_timeout_secs, 1800);
}

#[test]
fn provider_table_and_unknown_keys() {
    let (config, report) = load_text(
        r#"
model = "m1"
model_provider = "mock"
[features]
plugins = false
[model_providers.mock]
name = "Mock"
base_url = "http://127.0.0.1:9/v1"
wire_api = "chat"
request_max_retries = 1
"#,
        &[],
    )
    .unwrap();
    assert_eq!(config.model, "m1");
    let mock = config.provider("mock").unwrap();
    assert_eq!(mock.id, "mock");
    assert_eq!(mock.wire_api, WireApi::Chat);
    assert_eq!(mock.request_max_retries, 1);
    assert_eq!(
        report.ignored_file_keys,
        vec!["features.plugins".to_string()]
    );
    assert!(config.features.goals, "goals are on by default");
}

#[test]
fn shell_environment_policy_section() {
    use crate::exec::Inherit;
    let (config, report) = load_text(
        "[shell_environment_policy]\nexclude = [\"AWS_*\"]\n[model_providers.mock]\nname = \"M\"\nbase_url = \"http://x\"\nenv_key = \"MOCK_CRED\"\n",
        &["shell_environment_policy.inherit=\"none\""],
    )
    .unwrap();
    assert!(report.ignored_override_keys.is_empty());
    let policy = &config.shell_environment_policy;
    assert_eq!(policy.inherit, Inherit::None);
    assert_eq!(policy.exclude, ["AWS_*"]);
    assert!(!policy.ignore_default_excludes);
    // Every provider's key is always left out.
    assert!(policy.always_exclude.contains(&"MOCK_CRED".to_string()));
    assert!(
        policy
            .always_exclude
            .contains(&"OPENAI_API_KEY".to_string())
    );
    let err = load_text("[shell_environment_policy]\ninherit = \"some\"\n", &[]).unwrap_err();
    assert!(
        err.to_string().contains("shell_environment_policy"),
        "{err}"
    );
}

#[test]
fn wrong_type_names_the_key() {
    let err = load_text("model = 5\n", &[]).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("config.toml"), "{text}");
    assert!(text.contains("`model`"), "{text}");
    assert!(!text.contains('\n'));
}

#[test]
fn nested_wrong_type_names_the_table() {
    let err = load_text("[model_providers.x]\nbase_url = 3\nname = \"x\"\n", &[]).unwrap_err();
    assert!(err.to_string().contains("`model_providers`"), "{err}");
}

#[test]
fn unparsable_file() {
    let err = load_text("model = \n[[[", &[]).unwrap_err();
    assert!(matches!(err, ConfigError::Parse { .. }));
    assert!(!err.to_string().contains('\n'));
}

#[test]
fn overrides_parse_toml_then_fall_back_to_string() {
    assert_eq!(
        parse_override("a.b=5").unwrap(),
        ("a.b".to_string(), toml::Value::Integer(5))
    );
    assert_eq!(
        parse_override("web_search=\"live\"").unwrap().1,
        toml::Value::String("live".into())
    );
    assert_eq!(
        parse_override("model=gpt-x").unwrap().1,
        toml::Value::String("gpt-x".into())
    );
    assert!(parse_override("novalue").is_err());
    let (config, report) = load_text(
        "",
        &["model=o3", "features.foo=true", "web_search=\"live\""],
    )
    .unwrap();
    assert_eq!(config.model, "o3");
    assert_eq!(
        report.ignored_override_keys,
        vec!["features.foo".to_string(), "web_search".to_string()]
    );
}

#[test]
fn bad_enum_value() {
    let err = load_text("approval_policy = \"on-failure\"\n", &[]).unwrap_err();
    assert!(err.to_string().contains("approval_policy"));
}

#[test]
fn limits_default_override_and_refuse_zero() {
    let (config, _) = load_text("", &[]).unwrap();
    assert_eq!(config.limits, Limits::default());
    let (config, report) = load_text(
        "[limits]\nmax_connections = 4\n",
        &["limits.handshake_timeout_secs=1"],
    )
    .unwrap();
    assert!(report.ignored_override_keys.is_empty());
    assert_eq!(config.limits.max_connections, 4);
    assert_eq!(config.limits.handshake_timeout_secs, 1);
    let err = load_text("", &["limits.max_connections=0"]).unwrap_err();
    assert!(
        err.to_string().contains("`limits.max_connections`"),
        "{err}"
    );
    let err = load_text("[limits]\nmax_message_bytes = \"big\"\n", &[]).unwrap_err();
    assert!(err.to_string().contains("`limits`"), "{err}");
}

#[test]
fn layers_keep_the_file_and_the_applied_overrides() {
    let (config, _) = load_text(
        "model = \"m1\"\n[features]\nplugins = false\n",
        &["model_context_window=1000", "web_search=\"live\""],
    )
    .unwrap();
    let layers = &config.layers;
    assert!(layers.file_path.ends_with("config.toml"));
    assert!(layers.file.table.contains_key("features"));
    let overrides = layers.overrides.as_ref().unwrap();
    // Ignored overrides are not part of the layer.
    assert_eq!(
        overrides.to_json(),
        serde_json::json!({"model_context_window": 1000})
    );
    let origins = layers.origins(KNOWN_KEYS);
    assert_eq!(origins.get("model"), Some(&LayerSource::User));
    assert_eq!(
        origins.get("model_context_window"),
        Some(&LayerSource::SessionFlags)
    );
    assert!(!origins.contains_key("features.plugins"));
    let (config, _) = load_text("", &[]).unwrap();
    assert!(config.layers.overrides.is_none());
}

#[test]
fn a_bad_stop_hook_is_skipped_not_fatal() {
    let (config, _) = load_text(
        "[[hooks.stop]]\ncommand = \"ok\"\n[[hooks.stop]]\ntimeout = 3\n",
        &[],
    )
    .unwrap();
    assert_eq!(config.stop_hooks.len(), 1);
    assert_eq!(config.hooks.warnings.len(), 1);
    assert_eq!(config.hooks.origin.source, LayerSource::User);
    let (config, _) = load_text(
        "[[hooks.stop]]\ncommand = \"ok\"\n",
        &["hooks.stop=[{command=\"flag\"}]"],
    )
    .unwrap();
    assert_eq!(config.hooks.origin.source, LayerSource::SessionFlags);
    assert_eq!(
        config.stop_hooks[0].command,
        crate::hooks::HookCommand::Shell("flag".into())
    );
}

#[test]
fn goals_feature_and_continuation_limit() {
    let (config, _) = load_text("", &[]).unwrap();
    assert!(config.features.goals);
    assert!(
        !config.features.tool_search,
        "tool_search is off by default"
    );
    assert_eq!(config.goals.max_continuation_turns, 50);
    let (config, report) = load_text("[features]\ntool_search = true\n", &[]).unwrap();
    assert!(config.features.tool_search);
    assert!(report.ignored_file_keys.is_empty());
    let (config, report) = load_text(
        "[features]\ngoals = false\nplugins = true\n[goals]\nmax_continuation_turns = 3\n",
        &["features.other=true"],
    )
    .unwrap();
    assert!(!config.features.goals);
    assert_eq!(config.goals.max_continuation_turns, 3);
    assert_eq!(report.ignored_file_keys, ["features.plugins"]);
    assert_eq!(report.ignored_override_keys, ["features.other"]);
    // Only the known feature has an origin.
    let origins = config.layers.origins(KNOWN_KEYS);
    assert!(origins.contains_key("features.goals"));
    assert!(!origins.contains_key("features.plugins"));
    // `--enable goals` is `-c features.goals=true`, applied over the file.
    let (config, report) =
        load_text("[features]\ngoals = false\n", &["features.goals=true"]).unwrap();
    assert!(config.features.goals);
    assert!(report.ignored_override_keys.is_empty());
    let err = load_text("[goals]\nmax_continuation_turns = 0\n", &[]).unwrap_err();
    assert!(
        err.to_string().contains("`goals.max_continuation_turns`"),
        "{err}"
    );
    let err = load_text("[features]\ngoals = \"yes\"\n", &[]).unwrap_err();
    assert!(err.to_string().contains("`features`"), "{err}");
}
