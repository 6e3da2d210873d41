use serde_json::json;

use super::*;

fn edit(key_path: &str, value: serde_json::Value) -> Edit {
    Edit {
        key_path: key_path.into(),
        value,
        merge_strategy: MergeStrategy::Replace,
    }
}

fn home_with(text: &str, overrides: &[&str]) -> (tempfile::TempDir, Config) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.toml"), text).unwrap();
    let overrides: Vec<String> = overrides.iter().map(|o| o.to_string()).collect();
    let (config, _) = Config::load(dir.path(), &overrides).unwrap();
    (dir, config)
}

#[test]
fn a_write_keeps_comments_and_reports_the_new_version() {
    let text = "# keep me\nmodel = \"a\" # and me\n\n[features]\ngoals = true\n";
    let (dir, config) = home_with(text, &[]);
    let version = config.layers.file.version();
    let written = write(
        &config,
        None,
        Some(&version),
        &[
            edit("model", json!("b")),
            edit("features.goals", json!(false)),
        ],
    )
    .unwrap();
    let on_disk = std::fs::read_to_string(dir.path().join("config.toml")).unwrap();
    assert_eq!(
        on_disk,
        "# keep me\nmodel = \"b\" # and me\n\n[features]\ngoals = false\n"
    );
    assert_eq!(written.config.model, "b");
    assert!(!written.config.features.goals);
    assert_eq!(written.response.status, WriteStatus::Ok);
    assert_eq!(
        written.response.version,
        written.config.layers.file.version()
    );
    assert_ne!(written.response.version, version);
    assert_eq!(reload(&config).unwrap().model, "b");
}

#[test]
fn conflicts_and_invalid_configs_leave_the_file_untouched() {
    let text = "# c\nmodel = \"a\"\n";
    let (dir, config) = home_with(text, &[]);
    let path = dir.path().join("config.toml");
    let err = write(
        &config,
        None,
        Some("sha256:old"),
        &[edit("model", json!("b"))],
    )
    .unwrap_err();
    assert_eq!(err.code, Some(ConfigWriteErrorCode::ConfigVersionConflict));
    let err = write(
        &config,
        None,
        None,
        &[edit("approval_policy", json!("bogus"))],
    )
    .unwrap_err();
    assert_eq!(err.code, Some(ConfigWriteErrorCode::ConfigValidationError));
    assert!(
        err.message.starts_with("Invalid configuration: "),
        "{}",
        err.message
    );
    assert!(err.message.contains("approval_policy"), "{}", err.message);
    // A batch is all or nothing: the good first edit is not written either.
    let err = write(
        &config,
        None,
        None,
        &[
            edit("model", json!("b")),
            edit("limits.max_connections", json!("many")),
        ],
    )
    .unwrap_err();
    assert_eq!(err.code, Some(ConfigWriteErrorCode::ConfigValidationError));
    let err = write(&config, None, None, &[edit("a..b", json!(1))]).unwrap_err();
    assert_eq!(err.message, "keyPath segments must not be empty");
    let err = write(&config, None, None, &[edit("profiles.x.model", json!("m"))]).unwrap_err();
    assert_eq!(err.code, Some(ConfigWriteErrorCode::ConfigValidationError));
    let other = dir.path().join("other.toml");
    let err = write(
        &config,
        Some(other.to_str().unwrap()),
        None,
        &[edit("model", json!("b"))],
    )
    .unwrap_err();
    assert_eq!(err.code, Some(ConfigWriteErrorCode::ConfigLayerReadonly));
    assert_eq!(err.message, "Only writes to the user config are allowed");
    let err = write(
        &config,
        Some("config.toml"),
        None,
        &[edit("model", json!("b"))],
    )
    .unwrap_err();
    assert_eq!(err.code, None);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    // The same file spelled another way is the user config.
    let spelled = format!("{}/./config.toml", dir.path().display());
    write(&config, Some(&spelled), None, &[edit("model", json!("c"))]).unwrap();
}

#[test]
fn unknown_keys_are_kept_and_null_removes() {
    let (dir, config) = home_with("model = \"a\"\n", &[]);
    write(
        &config,
        None,
        None,
        &[
            edit("notice.hide_warning", json!(true)),
            edit("model", json!(null)),
        ],
    )
    .unwrap();
    let on_disk = std::fs::read_to_string(dir.path().join("config.toml")).unwrap();
    assert_eq!(on_disk, "[notice]\nhide_warning = true\n");
}

#[test]
fn a_path_the_command_line_sets_is_reported_overridden() {
    let (_dir, config) = home_with("model = \"a\"\n", &["model=\"flag\""]);
    let written = write(&config, None, None, &[edit("model", json!("b"))]).unwrap();
    assert_eq!(written.response.status, WriteStatus::OkOverridden);
    let meta = written.response.overridden_metadata.unwrap();
    assert_eq!(meta.message, "Overridden by session flags");
    assert_eq!(meta.effective_value, json!("flag"));
    assert_eq!(meta.overriding_layer.name, ConfigLayerSource::SessionFlags);
    // The flag still wins in the reloaded config.
    assert_eq!(written.config.model, "flag");
}

#[test]
fn a_missing_file_is_created() {
    let dir = tempfile::tempdir().unwrap();
    let (config, _) = Config::load(dir.path(), &[]).unwrap();
    let written = write(&config, None, None, &[edit("model", json!("m"))]).unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("config.toml")).unwrap(),
        "model = \"m\"\n"
    );
    assert_eq!(written.config.model, "m");
}

#[test]
fn an_overridden_secret_is_not_echoed() {
    let (_dir, config) = home_with(
        "[model_providers.p]\nname = \"P\"\nbase_url = \"http://127.0.0.1:1/v1\"\n",
        &["model_providers.p.experimental_bearer_token=\"sk-flag\""],
    );
    let written = write(
        &config,
        None,
        None,
        &[edit(
            "model_providers.p.experimental_bearer_token",
            json!("sk-file"),
        )],
    )
    .unwrap();
    let meta = written.response.overridden_metadata.unwrap();
    assert_eq!(meta.effective_value, json!("<redacted>"));
    let written = write(
        &config,
        None,
        None,
        &[Edit {
            key_path: "model_providers.p".into(),
            value: json!({"name": "Q"}),
            merge_strategy: MergeStrategy::Upsert,
        }],
    )
    .unwrap();
    let meta = written.response.overridden_metadata.unwrap();
    assert_eq!(
        meta.effective_value["experimental_bearer_token"],
        json!("<redacted>")
    );
    assert_eq!(meta.effective_value["name"], json!("Q"));
}
