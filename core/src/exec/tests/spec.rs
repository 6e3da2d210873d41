//! The tools' arguments and specs.

use super::*;

#[test]
fn arguments_parse_leniently_with_clear_errors() {
    let args = parse_exec_command_args(
        r#"{"cmd":"ls","yield_time_ms":2000.0,"max_output_tokens":"500","workdir":"sub","login":false}"#,
    )
    .unwrap();
    assert_eq!(args.yield_time_ms, Some(2000));
    assert_eq!(args.max_output_tokens, Some(500));
    let req = args.to_request(Path::new("/work"));
    assert_eq!(req.workdir, Path::new("/work/sub"));
    assert!(!req.login);
    assert_eq!(req.max_output_tokens, Some(500));
    let defaults = parse_exec_command_args(r#"{"cmd":"ls"}"#)
        .unwrap()
        .to_request(Path::new("/work"));
    assert_eq!(defaults.yield_time_ms, DEFAULT_EXEC_YIELD_MS);
    assert!(defaults.login);
    assert_eq!(defaults.workdir, Path::new("/work"));

    let escalated = parse_exec_command_args(
        r#"{"cmd":"curl x","sandbox_permissions":"require_escalated","justification":"net"}"#,
    )
    .unwrap();
    assert!(escalated.wants_escalation());

    let missing = parse_exec_command_args("{}").unwrap_err().to_string();
    assert!(
        missing.starts_with("failed to parse function arguments: missing field `cmd`"),
        "{missing}"
    );
    let empty = parse_exec_command_args(r#"{"cmd":"  "}"#).unwrap_err();
    assert_eq!(
        empty.to_string(),
        "failed to parse function arguments: `cmd` must not be empty"
    );
    assert!(parse_exec_command_args(r#"{"cmd":"ls","yield_time_ms":-5}"#).is_err());
    assert!(parse_exec_command_args("not json").is_err());

    let write = parse_write_stdin_args(r#"{"session_id":7}"#).unwrap();
    assert_eq!(write.session_id, 7);
    assert_eq!(write.chars, "");
    assert_eq!(write.yield_time_ms(), DEFAULT_WRITE_STDIN_YIELD_MS);
    let write = parse_write_stdin_args(r#"{"session_id":"8","chars":"y\n","max_output_tokens":5}"#)
        .unwrap();
    assert_eq!(write.session_id, 8);
    assert_eq!(write.max_output_tokens(), Some(5));
    assert!(parse_write_stdin_args(r#"{"chars":"x"}"#).is_err());
}

#[test]
fn tool_specs_have_the_documented_schemas() {
    let exec = exec_command_tool_spec();
    assert_eq!(exec["type"], "function");
    assert_eq!(exec["name"], "exec_command");
    assert_eq!(exec["strict"], false);
    assert_eq!(exec["parameters"]["required"], serde_json::json!(["cmd"]));
    assert_eq!(exec["parameters"]["additionalProperties"], false);
    let properties = exec["parameters"]["properties"].as_object().unwrap();
    for key in [
        "cmd",
        "workdir",
        "shell",
        "login",
        "yield_time_ms",
        "max_output_tokens",
    ] {
        assert!(properties.contains_key(key), "{key}");
    }
    assert!(!properties.contains_key("sandbox_permissions"));
    let escalating = exec_command_tool_spec_with_escalation();
    assert!(escalating["parameters"]["properties"]["sandbox_permissions"].is_object());
    assert!(escalating["parameters"]["properties"]["justification"].is_object());

    let write = write_stdin_tool_spec();
    assert_eq!(write["name"], "write_stdin");
    assert_eq!(
        write["parameters"]["required"],
        serde_json::json!(["session_id"])
    );
    assert_eq!(
        write["parameters"]["properties"]["session_id"]["type"],
        "number"
    );
    assert_eq!(write["parameters"]["properties"]["chars"]["type"], "string");
}
