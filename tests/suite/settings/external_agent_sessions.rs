//! `externalAgentConfig/*` `SESSIONS` (docs/protocol.md §7.39): Claude Code sessions under the
//! daemon's `$HOME` detected (newest first, within `maxSessions` and `maxSessionAgeDays`, home
//! only), imported as stored threads (listed, read with their turns, resumed, their history
//! sent to the model), and not detected or imported twice.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use weft_test_support::Transport;

use super::external_agent::{kinds, write};
use crate::turns::{Harness, Setup};

/// A Claude Code session file under `~/.claude/projects/-repo/`, modified `age` ago.
fn session(home: &Path, name: &str, records: &[Value], age: std::time::Duration) -> PathBuf {
    let path = home.join(".claude/projects/-repo").join(name);
    write(
        &path,
        &records.iter().map(|r| format!("{r}\n")).collect::<String>(),
    );
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.set_modified(std::time::SystemTime::now() - age)
        .unwrap();
    path
}

async fn sessions_become_threads(transport: Transport) {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let (home, repo) = (root.join("user"), root.join("repo"));
    std::fs::create_dir_all(&repo).unwrap();
    let day = std::time::Duration::from_secs(86_400);
    let at = |cwd: &Path, kind: &str, time: &str, content: Value| {
        json!({"type": kind, "cwd": cwd, "sessionId": "s", "timestamp": time,
            "message": {"role": kind, "content": content}})
    };
    let first = session(
        &home,
        "1.jsonl",
        &[
            json!({"type": "summary", "summary": "not the title"}),
            at(
                &repo,
                "user",
                "2024-01-02T03:04:05Z",
                json!("<command-message>init</command-message>\nFix the parser"),
            ),
            at(
                &repo,
                "assistant",
                "2024-01-02T03:04:09Z",
                json!([{"type": "thinking", "thinking": "hm"},
            {"type": "text", "text": "Looking."}, {"type": "tool_use", "id": "t", "name": "Bash",
            "input": {"command": "ls", "description": "List"}}]),
            ),
            at(
                &repo,
                "user",
                "2024-01-02T03:04:10Z",
                json!([{"type": "tool_result", "tool_use_id": "t", "content": "a.rs"}]),
            ),
            at(&repo, "user", "2024-01-02T03:05:00Z", json!("Thanks")),
        ],
        day * 3,
    );
    let second = session(
        &home,
        "2.jsonl",
        &[
            at(&repo, "user", "2024-02-03T04:05:06Z", json!("Second")),
            at(
                &repo,
                "assistant",
                "2024-02-03T04:05:16Z",
                json!("answer two"),
            ),
            json!({"type": "custom-title", "customTitle": "Named"}),
        ],
        day / 24,
    );
    session(
        &home,
        "old.jsonl",
        &[at(&repo, "user", "2024-01-01T00:00:00Z", json!("old"))],
        day * 40,
    );
    session(
        &home,
        "gone.jsonl",
        &[at(
            &root.join("gone"),
            "user",
            "2024-01-01T00:00:00Z",
            json!("x"),
        )],
        day * 4,
    );
    let mut h =
        Harness::start(Setup::new(transport).daemon_env("HOME", &home.display().to_string())).await;
    let c = &mut h.client;
    let shown = |p: &Path| p.display().to_string();
    let listed = |second_only: bool| {
        let mut sessions =
            vec![json!({"path": shown(&second), "cwd": shown(&repo), "title": "Named"})];
        if !second_only {
            sessions.push(
                json!({"path": shown(&first), "cwd": shown(&repo), "title": "Fix the parser"}),
            );
        }
        json!(sessions)
    };
    let detected = c
        .request_ok("externalAgentConfig/detect", json!({"includeHome": true}))
        .await;
    let items = detected["items"].as_array().unwrap();
    assert_eq!(
        kinds(&detected),
        [("SESSIONS".to_owned(), Value::Null)],
        "{detected}"
    );
    let projects = home.join(".claude/projects");
    assert_eq!(
        items[0]["description"],
        json!(format!(
            "Migrate recent sessions from {}",
            projects.display()
        ))
    );
    assert_eq!(items[0]["details"]["sessions"], listed(false));
    for params in [
        json!({"includeHome": true, "maxSessions": 1}),
        json!({"includeHome": true, "maxSessionAgeDays": 2}),
    ] {
        let fewer = c.request_ok("externalAgentConfig/detect", params).await;
        assert_eq!(fewer["items"][0]["details"]["sessions"], listed(true));
    }
    // Sessions are home items: a repository alone lists none.
    let repo_only = c
        .request_ok(
            "externalAgentConfig/detect",
            json!({"cwds": [shown(&repo)]}),
        )
        .await;
    assert_eq!(repo_only["items"], json!([]));

    // A session detect does not offer fails the item, and then none is imported (as the
    // reference answers: one failure, one progress).
    let stray = json!({"path": shown(&root.join("stray.jsonl")), "cwd": shown(&repo)});
    let mut mixed = detected["items"][0].clone();
    mixed["details"]["sessions"] = json!([listed(true)[0], stray]);
    let answer = c
        .request_ok(
            "externalAgentConfig/import",
            json!({"migrationItems": [mixed]}),
        )
        .await;
    let completed = c
        .wait_for_notification("externalAgentConfig/import/completed")
        .await;
    let result = &completed["params"]["itemTypeResults"][0];
    assert_eq!(result["successes"], json!([]));
    assert_eq!(result["failures"].as_array().unwrap().len(), 1);
    assert_eq!(result["failures"][0]["source"], stray["path"]);
    let progress = c
        .log()
        .iter()
        .skip_while(|m| m.get("result") != Some(&answer))
        .filter(|m| m["method"] == "externalAgentConfig/import/progress")
        .count();
    assert_eq!(progress, 1);
    let list = c.request_ok("thread/list", json!({})).await;
    assert_eq!(list["data"], json!([]));

    let answer = c
        .request_ok(
            "externalAgentConfig/import",
            json!({"migrationItems": detected["items"]}),
        )
        .await;
    let completed = c
        .wait_for_notification("externalAgentConfig/import/completed")
        .await;
    let progress: Vec<&Value> = c
        .log()
        .iter()
        .skip_while(|m| m.get("result") != Some(&answer))
        .filter(|m| m["method"] == "externalAgentConfig/import/progress")
        .map(|m| &m["params"]["itemTypeResults"][0])
        .collect();
    assert_eq!(progress.len(), 2);
    assert_eq!(
        (&progress[0]["successes"], &progress[0]["failures"]),
        (&json!([]), &json!([]))
    );
    let result = &completed["params"]["itemTypeResults"][0];
    assert_eq!(progress[1], result);
    assert_eq!(result["failures"], json!([]));
    let successes = result["successes"].as_array().unwrap();
    // Listed last requested first, as the reference lists them.
    let sources: Vec<&Value> = successes.iter().map(|s| &s["source"]).collect();
    assert_eq!(sources, [&json!(shown(&first)), &json!(shown(&second))]);
    assert_eq!(successes[0]["title"], json!("Fix the parser"));
    assert_eq!(successes[0]["cwd"], json!(shown(&repo)));
    let thread = successes[0]["target"].as_str().unwrap().to_owned();

    let list = c.request_ok("thread/list", json!({})).await;
    let threads = list["data"].as_array().unwrap();
    assert_eq!(threads.len(), 2, "{list}");
    let listed_thread = threads.iter().find(|t| t["id"] == json!(thread)).unwrap();
    assert_eq!(listed_thread["name"], json!("Fix the parser"));
    assert_eq!(listed_thread["cwd"], json!(shown(&repo)));
    assert_eq!(
        (
            listed_thread["createdAt"].as_i64(),
            listed_thread["updatedAt"].as_i64()
        ),
        (Some(1_704_164_645), Some(1_704_164_700))
    );
    let read = c
        .request_ok(
            "thread/read",
            json!({"threadId": thread, "includeTurns": true}),
        )
        .await;
    let turns = read["thread"]["turns"].as_array().unwrap();
    let texts = |turn: &Value| -> Vec<String> {
        turn["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| {
                i["text"]
                    .as_str()
                    .or(i["content"][0]["text"].as_str())
                    .unwrap()
                    .to_owned()
            })
            .collect()
    };
    assert_eq!(turns.len(), 2);
    assert_eq!(turns[0]["id"], json!("external-import-turn-1"));
    assert_eq!(
        texts(&turns[0]),
        [
            "<command-message>init</command-message>\nFix the parser",
            "Looking.\n\n[external_agent_tool_call: Bash]\ndescription: List\ncommand: ls\n[/external_agent_tool_call]",
            "[external_agent_tool_result]\na.rs\n[/external_agent_tool_result]",
        ]
    );
    assert_eq!(texts(&turns[1]), ["Thanks", "<EXTERNAL SESSION IMPORTED>"]);
    assert_eq!(
        (turns[1]["status"].as_str(), turns[1]["startedAt"].as_i64()),
        (Some("completed"), Some(1_704_164_700))
    );

    // Imported once: detect lists nothing, importing again imports nothing.
    let again = c
        .request_ok("externalAgentConfig/detect", json!({"includeHome": true}))
        .await;
    assert_eq!(again["items"], json!([]));
    c.request_ok(
        "externalAgentConfig/import",
        json!({"migrationItems": detected["items"]}),
    )
    .await;
    let completed = c
        .wait_for_notification("externalAgentConfig/import/completed")
        .await;
    assert_eq!(
        completed["params"]["itemTypeResults"][0]["successes"],
        json!([])
    );
    let list = c.request_ok("thread/list", json!({})).await;
    assert_eq!(list["data"].as_array().unwrap().len(), 2);

    // The thread resumes, and the model sees the imported conversation.
    c.request_ok("thread/resume", json!({"threadId": thread}))
        .await;
    h.push(weft_mock_model::Reply::new().text("follow-up answer"));
    h.run_turn(&thread, "follow up").await;
    let requests = h.wait_for_requests(1).await;
    let sent = requests[0].body["input"].to_string();
    for text in [
        "Fix the parser",
        "[external_agent_tool_result]",
        "<EXTERNAL SESSION IMPORTED>",
        "follow up",
    ] {
        assert!(sent.contains(text), "{text} missing from {sent}");
    }
}

on_both_transports!(sessions_become_threads);
