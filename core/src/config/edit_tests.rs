use super::*;

fn seg(path: &str) -> Vec<String> {
    parse_key_path(path).unwrap()
}

fn edited(text: &str, path: &str, value: toml::Value) -> String {
    let mut doc: DocumentMut = text.parse().unwrap();
    set_path(&mut doc, &seg(path), &value);
    doc.to_string()
}

#[test]
fn key_paths_split_on_dots_outside_quotes() {
    assert_eq!(seg("a.b.c"), ["a", "b", "c"]);
    assert_eq!(
        seg(r#"model_providers."my.host".name"#),
        ["model_providers", "my.host", "name"]
    );
    assert_eq!(seg(r#""a\"b".c"#), ["a\"b", "c"]);
    assert_eq!(seg("sample@catalog"), ["sample@catalog"]);
    for (bad, message) in [
        ("", "keyPath must not be empty"),
        ("  ", "keyPath must not be empty"),
        ("a..b", "keyPath segments must not be empty"),
        ("a.", "keyPath segments must not be empty"),
        (r#""a"#, "unterminated quoted keyPath segment"),
        (r#"a"b""#, "invalid quoted keyPath segment"),
    ] {
        assert_eq!(parse_key_path(bad).unwrap_err(), message, "{bad}");
    }
}

#[test]
fn json_values_become_toml() {
    assert_eq!(json_to_toml(serde_json::json!(null)).unwrap(), None);
    assert_eq!(
        json_to_toml(serde_json::json!({"a": [1, 2]})).unwrap(),
        Some(toml::Value::Table(toml::from_str("a = [1, 2]").unwrap()))
    );
    assert!(
        json_to_toml(serde_json::json!([1, null]))
            .unwrap_err()
            .starts_with("invalid value: ")
    );
}

#[test]
fn merges_replace_or_upsert_tables() {
    let mut root: toml::Table = toml::from_str("[t]\na = 1\nb = 2\n[n]\nx = 1\n").unwrap();
    let incoming = toml::Value::Table(toml::from_str("b = 3\nc = 4").unwrap());
    apply_merge(&mut root, &seg("t"), Some(&incoming), MergeStrategy::Upsert);
    assert_eq!(
        root["t"],
        toml::Value::Table(toml::from_str("a = 1\nb = 3\nc = 4").unwrap())
    );
    apply_merge(
        &mut root,
        &seg("t"),
        Some(&incoming),
        MergeStrategy::Replace,
    );
    assert_eq!(root["t"], incoming);
    // A parent that is not a table becomes one.
    apply_merge(
        &mut root,
        &seg("n.x.y"),
        Some(&toml::Value::Integer(5)),
        MergeStrategy::Replace,
    );
    assert_eq!(
        value_at(&root, &seg("n.x.y")),
        Some(&toml::Value::Integer(5))
    );
    apply_merge(&mut root, &seg("n.x"), None, MergeStrategy::Replace);
    assert_eq!(value_at(&root, &seg("n.x")), None);
    apply_merge(
        &mut root,
        &seg("missing.deep"),
        None,
        MergeStrategy::Replace,
    );
    assert!(!root.contains_key("missing"));
}

#[test]
fn comments_order_and_untouched_tables_survive() {
    let text = "# top comment\nmodel = \"a\" # the model\n\n# features below\n[features]\ngoals = true\n\n[mcp_servers.x]\ncommand = \"x\" # keep\n";
    let out = edited(text, "model", toml::Value::String("b".into()));
    assert_eq!(
        out,
        "# top comment\nmodel = \"b\" # the model\n\n# features below\n[features]\ngoals = true\n\n[mcp_servers.x]\ncommand = \"x\" # keep\n"
    );
    let out = edited(text, "features.tool_search", toml::Value::Boolean(true));
    assert!(
        out.contains("[features]\ngoals = true\ntool_search = true\n"),
        "{out}"
    );
    assert!(out.starts_with("# top comment\nmodel = \"a\" # the model\n"));
    // A new top-level key goes with the other top-level keys, before the first table.
    let out = edited(
        text,
        "model_reasoning_effort",
        toml::Value::String("high".into()),
    );
    assert!(
        out.starts_with(
            "# top comment\nmodel = \"a\" # the model\nmodel_reasoning_effort = \"high\"\n"
        ),
        "{out}"
    );
    // A new nested table gets its own header, not its parents'.
    let out = edited(
        text,
        "model_providers.mock.name",
        toml::Value::String("M".into()),
    );
    assert!(
        out.ends_with("[model_providers.mock]\nname = \"M\"\n"),
        "{out}"
    );
    assert!(!out.contains("[model_providers]\n"), "{out}");
}

#[test]
fn inline_tables_are_edited_in_place() {
    let text = "limits = { max_connections = 4, max_message_bytes = 10 } # inline\n";
    let out = edited(text, "limits.max_connections", toml::Value::Integer(8));
    assert_eq!(
        out,
        "limits = { max_connections = 8, max_message_bytes = 10 } # inline\n"
    );
    let mut doc: DocumentMut = text.parse().unwrap();
    clear_path(&mut doc, &seg("limits.max_message_bytes"));
    assert_eq!(
        doc.to_string(),
        "limits = { max_connections = 4 } # inline\n"
    );
}

#[test]
fn clearing_removes_only_that_key() {
    let text = "# c\nmodel = \"a\"\nsandbox_mode = \"read-only\" # s\n[features]\ngoals = false\n";
    let mut doc: DocumentMut = text.parse().unwrap();
    clear_path(&mut doc, &seg("model"));
    clear_path(&mut doc, &seg("features.goals"));
    clear_path(&mut doc, &seg("nothing.here"));
    let out = doc.to_string();
    assert!(out.contains("sandbox_mode = \"read-only\" # s\n"), "{out}");
    assert!(!out.contains("model ="), "{out}");
    assert!(!out.contains("goals"), "{out}");
}

#[test]
fn replacing_a_table_keeps_its_comment_and_place() {
    let text = "# first\n[a]\nx = 1\n\n# second\n[b]\ny = 2\n";
    let value = toml::Value::Table(toml::from_str("z = 3").unwrap());
    let out = edited(text, "a", value);
    assert_eq!(out, "# first\n[a]\nz = 3\n\n# second\n[b]\ny = 2\n");
}

#[test]
fn atomic_write_replaces_the_file_and_leaves_no_temporary() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(&path, "old = 1\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
    }
    write_atomically(&path, "new = 2\n").unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "new = 2\n");
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert_eq!(names, ["config.toml"]);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o640);
        // A symlinked config file: its target is replaced, the link stays.
        let real = dir.path().join("real.toml");
        std::fs::write(&real, "a = 1\n").unwrap();
        let link = dir.path().join("link.toml");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write_atomically(&link, "a = 2\n").unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "a = 2\n");
    }
}

#[test]
fn a_table_written_over_a_table_keeps_the_comments_inside() {
    let text = "[limits]\nmax_connections = 1_000 # many\nold = 'x' # literal\ngone = 1\n";
    let value =
        toml::Value::Table(toml::from_str("max_connections = 1000\nold = \"x\"\nnew = 2").unwrap());
    let out = edited(text, "limits", value);
    assert_eq!(
        out,
        "[limits]\nmax_connections = 1_000 # many\nold = 'x' # literal\nnew = 2\n"
    );
}

#[test]
fn a_private_file_is_the_owners_alone_and_a_config_keeps_its_mode() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    let secrets = dir.path().join("secrets.json");
    std::fs::write(&secrets, "{}").unwrap();
    std::fs::set_permissions(&secrets, std::fs::Permissions::from_mode(0o644)).unwrap();
    write_private_atomically(&secrets, b"{\"a\":1}").unwrap();
    assert_eq!(mode(&secrets), 0o600);
    assert_eq!(std::fs::read_to_string(&secrets).unwrap(), "{\"a\":1}");
    let config = dir.path().join("config.toml");
    std::fs::write(&config, "").unwrap();
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o644)).unwrap();
    write_atomically(&config, "a = 1\n").unwrap();
    assert_eq!(mode(&config), 0o644);
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), 2, "no temporary left: {left:?}");
}
