//! How a call is shown: the model's text, chunk ids, the display command.

use super::*;

#[test]
fn format_for_model_matches_the_reference() {
    let output = ExecOutput {
        chunk_id: "adff25".to_string(),
        wall_time: Duration::from_micros(12),
        exit_code: Some(0),
        session_id: None,
        output: "hi\n".to_string(),
        aggregated_output: "hi\n".to_string(),
        original_token_count: 1,
        warnings: Vec::new(),
    };
    assert_eq!(
        format_for_model(&output),
        "Chunk ID: adff25\nWall time: 0.0000 seconds\nProcess exited with code 0\nOriginal token count: 1\nOutput:\nhi\n"
    );
    let running = ExecOutput {
        exit_code: None,
        session_id: Some(7),
        wall_time: Duration::from_millis(10_002),
        output: String::new(),
        original_token_count: 0,
        ..output
    };
    assert_eq!(
        format_for_model(&running),
        "Chunk ID: adff25\nWall time: 10.0020 seconds\nProcess running with session ID 7\nOriginal token count: 0\nOutput:\n"
    );
}

#[test]
fn chunk_ids_are_six_hex_digits() {
    let id = chunk_id();
    assert_eq!(id.len(), 6);
    assert!(id.chars().all(|c| c.is_ascii_hexdigit()));
}

#[test]
fn display_command_quotes_like_a_shell() {
    let mut req = request("echo hi", Path::new("/"), 250);
    req.login = true;
    assert_eq!(req.display_command(), "/bin/bash -lc 'echo hi'");
    req.cmd = "echo 'it'\"s\"".to_string();
    req.login = false;
    assert_eq!(
        req.display_command(),
        r#"/bin/bash -c 'echo '"'"'it'"'"'"s"'"#
    );
}
