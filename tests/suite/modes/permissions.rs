//! Permission profiles (`permissions`), `clientUserMessageId`, and the params of the Codex
//! TUI's title side thread (`threadSource`, `environments: []`, `selectedCapabilityRoots: []`,
//! `runtimeWorkspaceRoots`, `outputSchema`).

use serde_json::json;
use weft_mock_model::Reply;
use weft_test_support::Transport;

use super::Modes;
use crate::turns::{assert_invalid_request, str_at};

async fn profiles_set_the_sandbox(transport: Transport) {
    let mut m = Modes::start(transport).await;
    let started = m.thread(json!({"permissions": ":read-only"})).await;
    assert_eq!(
        started["sandbox"],
        json!({"type": "readOnly", "networkAccess": false})
    );
    assert_eq!(
        started["activePermissionProfile"],
        json!({"id": ":read-only", "extends": null})
    );
    let plain = m.thread(json!({"sandbox": "workspace-write"})).await;
    assert_eq!(plain["activePermissionProfile"], json!(null));
    let cwd = m.cwd();
    assert_invalid_request(
        m.h.client
            .request("thread/start", json!({"cwd": cwd, "permissions": ":bogus"}))
            .await,
        "failed to load configuration: default_permissions refers to unknown built-in profile `:bogus`",
    );
    assert_invalid_request(
        m.h.client
            .request("thread/start", json!({"permissions": "mine"}))
            .await,
        "failed to load configuration: default_permissions requires a `[permissions]` table",
    );
    assert_invalid_request(
        m.h.client
            .request(
                "thread/start",
                json!({"permissions": ":workspace", "sandbox": "read-only"}),
            )
            .await,
        "`permissions` cannot be combined with `sandbox`",
    );
    // turn/start switches the profile for this and later turns.
    let thread = str_at(&started, "/thread/id");
    assert_invalid_request(
        m.h.client
            .request(
                "turn/start",
                json!({"threadId": thread, "input": [], "permissions": ":nope"}),
            )
            .await,
        "failed to load configuration: default_permissions refers to unknown built-in profile `:nope`",
    );
    assert_invalid_request(
        m.h.client
            .request(
                "turn/start",
                json!({"threadId": thread, "input": [], "permissions": ":workspace", "sandboxPolicy": {"type": "readOnly"}}),
            )
            .await,
        "`permissions` cannot be combined with `sandboxPolicy`",
    );
    m.push(Reply::new().text("Hi."));
    let messages = m
        .turn(
            &thread,
            "hello",
            json!({"permissions": ":workspace", "clientUserMessageId": "client-1"}),
        )
        .await;
    let user = messages
        .iter()
        .find(|msg| {
            msg["method"] == "item/completed" && msg["params"]["item"]["type"] == "userMessage"
        })
        .expect("the userMessage item");
    assert_eq!(user["params"]["item"]["clientId"], "client-1");
    let resumed =
        m.h.client
            .request_ok("thread/resume", json!({"threadId": thread}))
            .await;
    assert_eq!(resumed["sandbox"]["type"], "workspaceWrite");
    assert_eq!(
        resumed["activePermissionProfile"],
        json!({"id": ":workspace", "extends": null})
    );
}

/// The TUI's title side thread: `thread/start` and `turn/start` as it sends them.
async fn the_title_side_thread_is_served(transport: Transport) {
    let mut m = Modes::start(transport).await;
    let started = m
        .thread(json!({
            "model": "mock-model", "modelProvider": "mock", "runtimeWorkspaceRoots": [],
            "approvalPolicy": "never", "sandbox": null, "permissions": ":read-only",
            "ephemeral": true, "threadSource": "thread_title", "environments": [],
            "dynamicTools": null, "selectedCapabilityRoots": []
        }))
        .await;
    assert_eq!(started["thread"]["threadSource"], "thread_title");
    assert_eq!(started["sandbox"]["type"], "readOnly");
    let thread = str_at(&started, "/thread/id");
    m.push(Reply::new().text("{\"title\": \"Say hello\"}"));
    let schema = json!({"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"], "additionalProperties": false});
    let messages = m
        .turn(
            &thread,
            "Generate a title",
            json!({"runtimeWorkspaceRoots": [], "permissions": ":read-only", "outputSchema": schema,
                   "clientUserMessageId": null, "turnTrigger": null, "collaborationMode": null,
                   "environments": null, "serviceTierForTurn": null}),
        )
        .await;
    assert_eq!(
        messages.last().unwrap()["params"]["turn"]["status"],
        "completed"
    );
    let requests = m.h.wait_for_requests(1).await;
    assert_eq!(
        requests[0].body["text"],
        json!({"format": {"type": "json_schema", "strict": true, "schema": schema, "name": "codex_output_schema"}})
    );
    // The main thread's turns send `runtimeWorkspaceRoots: [cwd]` and `turnTrigger: "user"`.
    let main = m.thread(json!({"sandbox": "workspace-write"})).await;
    let main = str_at(&main, "/thread/id");
    let cwd = m.cwd();
    m.push(Reply::new().text("Hello."));
    m.turn(
        &main,
        "Say hello",
        json!({"cwd": cwd, "runtimeWorkspaceRoots": [cwd], "turnTrigger": "user"}),
    )
    .await;
    // The schema was for that one turn.
    let requests = m.h.wait_for_requests(2).await;
    assert!(
        requests[1].body.get("text").is_none(),
        "{}",
        requests[1].body
    );
    // Other roots, and non-empty environments, are refused.
    assert_invalid_request(
        m.h.client
            .request(
                "turn/start",
                json!({"threadId": main, "input": [], "runtimeWorkspaceRoots": ["/"]}),
            )
            .await,
        "runtimeWorkspaceRoots other than the thread's cwd are not supported by Weft",
    );
    assert_invalid_request(
        m.h.client
            .request(
                "thread/start",
                json!({"environments": [{"environmentId": "remote", "cwd": "/"}]}),
            )
            .await,
        "thread/start.environments is not supported by Weft",
    );
}

on_both_transports!(profiles_set_the_sandbox, the_title_side_thread_is_served);
