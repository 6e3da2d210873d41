//! The reference's message catalog: every message Weft knows decodes, re-encodes to equivalent
//! JSON and validates; unknown client methods are rejected.

use super::*;

#[test]
fn catalog_messages_round_trip_and_validate() {
    let mut schemas = Schemas::load();
    let catalog = read_reference_json("codex-transcripts/message_catalog.json");
    let mut covered = Vec::new();
    for (key, entry) in catalog.as_object().unwrap() {
        let example = &entry["example"];
        let mut words = key.split_whitespace();
        let kind = words.next().unwrap_or_default();
        let method = words.next().unwrap_or_default();
        match kind {
            "notification" if SERVER_NOTIFICATION_METHODS.contains(&method) => {
                let decoded: ServerNotification = serde_json::from_value(example.clone())
                    .unwrap_or_else(|e| panic!("{key}: {e}"));
                assert_eq!(decoded.method(), method);
                let emitted = example["emittedAtMs"].as_i64().unwrap();
                let line = decoded.to_line(emitted).unwrap();
                let ours: Value = serde_json::from_str(&line).unwrap();
                assert_equivalent(example, &ours, key);
                schemas.check("ServerNotification.json", &ours, key);
            }
            "server_request" if SERVER_REQUEST_METHODS.contains(&method) => {
                let decoded: ServerRequest = serde_json::from_value(example.clone())
                    .unwrap_or_else(|e| panic!("{key}: {e}"));
                assert_eq!(decoded.method(), method);
                let ours = to_value(&decoded);
                assert_equivalent(example, &ours, key);
                schemas.check("ServerRequest.json", &ours, key);
            }
            "client_request" if CLIENT_METHODS.contains(&method) => {
                let decoded = ClientRequest::from_value(example.clone())
                    .unwrap_or_else(|e| panic!("{key}: {e}"));
                assert_eq!(decoded.method(), method);
                assert_eq!(
                    decoded.id(),
                    &serde_json::from_value::<RequestId>(example["id"].clone()).unwrap()
                );
                let ours = to_value(&decoded);
                schemas.validate_both("ClientRequest.json", &ours, key);
                // Params we re-encode keep every key the client sent (and add only nulls).
                assert_equivalent_params(&example["params"], &ours["params"], key);
            }
            "client_request" => {
                // Not ours (e.g. `foo/bar`): must be rejected with serde's unknown-variant text.
                let err = ClientRequest::from_value(example.clone())
                    .unwrap_err()
                    .to_string();
                assert!(
                    err.starts_with(&format!("unknown variant `{method}`")),
                    "{key}: {err}"
                );
            }
            "client_notification" if method == "initialized" => {
                let decoded: ClientNotification = serde_json::from_value(example.clone()).unwrap();
                assert_eq!(decoded, ClientNotification::Initialized);
            }
            "client_response" => {
                // The example is a valid answer to either approval request.
                let result = &example["result"];
                let file_change: FileChangeRequestApprovalResponse =
                    serde_json::from_value(result.clone()).unwrap();
                let command: CommandExecutionRequestApprovalResponse =
                    serde_json::from_value(result.clone()).unwrap();
                for (schema, decoded) in [
                    (
                        "FileChangeRequestApprovalResponse.json",
                        to_value(&file_change),
                    ),
                    (
                        "CommandExecutionRequestApprovalResponse.json",
                        to_value(&command),
                    ),
                ] {
                    schemas.check(schema, &decoded, key);
                }
            }
            _ => continue,
        }
        covered.push(key.clone());
    }
    assert!(
        covered.len() >= 30,
        "only {} catalog messages covered: {covered:?}",
        covered.len()
    );
}
