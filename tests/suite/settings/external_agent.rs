//! `externalAgentConfig/*` (docs/protocol.md §7.39): a fake Claude Code set-up under the
//! daemon's `$HOME` and in a repository, detected, imported (files written, `config.toml`
//! comments kept, progress then completed after the response), detected again as nothing, the
//! history read back; `recordHistory`; the reference's refusals. Sessions:
//! `external_agent_sessions.rs`.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use weft_test_support::Transport;

use crate::turns::{Harness, Setup};

pub(super) fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A user home with `~/.claude` and `~/.claude.json`, and a repository with `.claude/` and
/// `CLAUDE.md` (canonical paths).
struct Fake {
    _dir: tempfile::TempDir,
    home: PathBuf,
    repo: PathBuf,
}

fn fake() -> Fake {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let home = root.join("user");
    let repo = root.join("repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::create_dir_all(repo.join("sub")).unwrap();
    write(
        &home.join(".claude/settings.json"),
        r#"{"env": {"FOO": "bar"}, "sandbox": {"enabled": true},
            "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo stop", "timeout": 5}]}]}}"#,
    );
    write(
        &home.join(".claude.json"),
        r#"{"mcpServers": {"docs": {"command": "npx", "args": ["-y", "docs"]}}}"#,
    );
    write(
        &home.join(".claude/skills/x/SKILL.md"),
        "---\nname: x\ndescription: the x skill for Claude\n---\nUse Claude Code.\n",
    );
    write(&home.join(".claude/skills/x/notes.txt"), "Claude notes\n");
    write(&home.join(".claude/commands/fix.md"), "Fix $ARGUMENTS.\n");
    write(
        &home.join(".claude/agents/reviewer.md"),
        "---\nname: reviewer\ndescription: Reviews code\nmodel: sonnet\n---\nYou review for Claude.\n",
    );
    write(&repo.join("CLAUDE.md"), "# Repo\nRules for Claude.\n");
    write(&repo.join(".claude/commands/deploy.md"), "Deploy now.\n");
    Fake {
        _dir: dir,
        home,
        repo,
    }
}

async fn start(transport: Transport, fake: &Fake) -> Harness {
    Harness::start(
        Setup::new(transport)
            .config("[limits]\nmax_external_agent_import_bytes = 2048\n\n# imported settings go below\n")
            .daemon_env("HOME", &fake.home.display().to_string()),
    )
    .await
}

pub(super) fn kinds(detected: &Value) -> Vec<(String, Value)> {
    detected["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| {
            (
                item["itemType"].as_str().unwrap().to_owned(),
                item["cwd"].clone(),
            )
        })
        .collect()
}

async fn detect_import_and_read_history(transport: Transport) {
    let fake = fake();
    let mut h = start(transport, &fake).await;
    let config = h.home.config_path();
    let repo = fake.repo.display().to_string();
    let detect = json!({"includeHome": true, "cwds": [fake.repo.join("sub"), &repo]});
    let c = &mut h.client;
    let detected = c
        .request_ok("externalAgentConfig/detect", detect.clone())
        .await;
    assert_eq!(
        kinds(&detected),
        [
            ("CONFIG".to_owned(), Value::Null),
            ("MCP_SERVER_CONFIG".to_owned(), Value::Null),
            ("HOOKS".to_owned(), Value::Null),
            ("SKILLS".to_owned(), Value::Null),
            ("SUBAGENTS".to_owned(), Value::Null),
            ("COMMANDS".to_owned(), json!(repo)),
            ("AGENTS_MD".to_owned(), json!(repo)),
        ],
        "{detected}"
    );
    assert_eq!(detected["connectors"], json!([]));
    let items = detected["items"].as_array().unwrap();
    assert_eq!(
        items[0]["description"],
        json!(format!(
            "Migrate {} into {}",
            fake.home.join(".claude/settings.json").display(),
            config.display()
        ))
    );
    assert_eq!(items[0]["details"], Value::Null);
    assert_eq!(items[1]["details"]["mcpServers"], json!([{"name": "docs"}]));
    assert_eq!(items[2]["details"]["hooks"], json!([{"name": "Stop"}]));
    assert_eq!(items[3]["details"]["skills"], json!([{"name": "x"}]));
    assert_eq!(
        items[4]["details"]["subagents"],
        json!([{"name": "reviewer"}])
    );
    assert_eq!(
        items[5]["details"]["commands"],
        json!([{"name": "source-command-deploy"}])
    );

    let answer = c
        .request_ok(
            "externalAgentConfig/import",
            json!({"migrationItems": detected["items"], "providerId": "claude"}),
        )
        .await;
    let import_id = answer["importId"].as_str().unwrap().to_owned();
    let completed = c
        .wait_for_notification("externalAgentConfig/import/completed")
        .await;
    // The response, then one progress per item in request order, then completed.
    let log: Vec<&Value> = c
        .log()
        .iter()
        .skip_while(|m| m.get("result") != Some(&answer))
        .collect();
    let progress: Vec<&str> = log
        .iter()
        .filter(|m| m["method"] == "externalAgentConfig/import/progress")
        .map(|m| {
            m["params"]["itemTypeResults"][0]["itemType"]
                .as_str()
                .unwrap()
        })
        .collect();
    assert_eq!(
        progress,
        [
            "CONFIG",
            "MCP_SERVER_CONFIG",
            "HOOKS",
            "SKILLS",
            "SUBAGENTS",
            "COMMANDS",
            "AGENTS_MD"
        ]
    );
    assert_eq!(log.last().unwrap()["method"], completed["method"]);
    let params = &completed["params"];
    assert_eq!(params["importId"], json!(import_id));
    let grouped: Vec<&str> = params["itemTypeResults"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["itemType"].as_str().unwrap())
        .collect();
    assert_eq!(
        grouped,
        [
            "CONFIG",
            "SKILLS",
            "AGENTS_MD",
            "MCP_SERVER_CONFIG",
            "SUBAGENTS",
            "HOOKS",
            "COMMANDS"
        ]
    );
    assert_eq!(
        params["itemTypeResults"][1]["successes"],
        json!([{"itemType": "SKILLS", "cwd": null, "source": "x", "target": "x", "title": null}])
    );
    assert_eq!(
        params["itemTypeResults"][2]["successes"][0]["target"],
        json!(fake.repo.join("AGENTS.md").display().to_string())
    );

    // What the import wrote.
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(text.contains("# imported settings go below\n"), "{text}");
    for expected in [
        "sandbox_mode = \"workspace-write\"",
        "[shell_environment_policy]\ninherit = \"core\"",
        "[shell_environment_policy.set]\nFOO = \"bar\"",
        "[mcp_servers.docs]\ncommand = \"npx\"\nargs = [\"-y\", \"docs\"]",
        "[[hooks.stop]]\ncommand = \"echo stop\"\ntimeout = 5",
        "[agents.reviewer]\ndescription = \"Reviews code\"\ndeveloper_instructions = \"You review for Codex.\"",
    ] {
        assert!(text.contains(expected), "{expected} not in {text}");
    }
    let skill = fake.home.join(".agents/skills/x");
    assert_eq!(
        std::fs::read_to_string(skill.join("SKILL.md")).unwrap(),
        "---\nname: x\ndescription: the x skill for Codex\n---\nUse Codex.\n"
    );
    assert_eq!(
        std::fs::read_to_string(skill.join("notes.txt")).unwrap(),
        "Claude notes\n"
    );
    assert_eq!(
        std::fs::read_to_string(fake.repo.join("AGENTS.md")).unwrap(),
        "# Repo\nRules for Codex.\n"
    );
    let command = std::fs::read_to_string(
        fake.repo
            .join(".agents/skills/source-command-deploy/SKILL.md"),
    )
    .unwrap();
    assert!(
        command.starts_with("---\nname: \"source-command-deploy\"\n"),
        "{command}"
    );
    assert!(!fake.home.join(".agents/skills/source-command-fix").exists());

    // The daemon runs with what was imported, and nothing is left to detect.
    let read = c
        .request_ok("config/read", json!({"includeLayers": false}))
        .await;
    assert_eq!(read["config"]["sandbox_mode"], json!("workspace-write"));
    let again = c.request_ok("externalAgentConfig/detect", detect).await;
    assert_eq!(again["items"], json!([]), "{again}");
    // The same items imported again add nothing, and the file is left as it is.
    let second = c
        .request_ok(
            "externalAgentConfig/import",
            json!({"migrationItems": detected["items"]}),
        )
        .await;
    let repeat = c
        .wait_for_notification("externalAgentConfig/import/completed")
        .await;
    assert_eq!(repeat["params"]["importId"], second["importId"]);
    for result in repeat["params"]["itemTypeResults"].as_array().unwrap() {
        assert_eq!(result["successes"], json!([]), "{result}");
        assert_eq!(result["failures"], json!([]), "{result}");
    }
    assert_eq!(std::fs::read_to_string(&config).unwrap(), text);

    let histories = c
        .request_ok("externalAgentConfig/import/readHistories", Value::Null)
        .await;
    assert_eq!(histories["connectors"], json!([]));
    let data = histories["data"].as_array().unwrap();
    assert_eq!(data.len(), 2);
    assert_eq!(data[0]["importId"], second["importId"]);
    assert_eq!(data[0]["providerId"], Value::Null);
    assert_eq!(data[1]["importId"], json!(import_id));
    assert_eq!(data[1]["providerId"], json!("claude"));
    assert_eq!(data[1]["failures"], json!([]));
    assert_eq!(data[1]["successes"].as_array().unwrap().len(), 7);
}

async fn record_history_and_refusals(transport: Transport) {
    let fake = fake();
    let mut h = start(transport, &fake).await;
    let c = &mut h.client;
    let recorded = c
        .request_ok(
            "externalAgentConfig/import/recordHistory",
            json!({"providerId": "elsewhere", "itemTypeResults": [{"itemType": "SKILLS",
                "successes": [{"itemType": "SKILLS", "source": "a", "target": "b"}],
                "failures": [{"itemType": "SKILLS", "failureStage": "copy", "message": "boom"}]}]}),
        )
        .await;
    let histories = c
        .request_ok("externalAgentConfig/import/readHistories", json!({}))
        .await;
    assert_eq!(
        histories["data"],
        json!([{"importId": recorded["importId"], "providerId": "elsewhere",
            "completedAtMs": histories["data"][0]["completedAtMs"],
            "successes": [{"itemType": "SKILLS", "cwd": null, "source": "a", "target": "b",
                "title": null}],
            "failures": [{"itemType": "SKILLS", "errorType": null, "subErrorType": null,
                "failureStage": "copy", "message": "boom", "cwd": null, "source": null}]}])
    );
    assert!(histories["data"][0]["completedAtMs"].as_i64().unwrap() > 0);

    // A record past `[limits] max_external_agent_import_bytes` is refused.
    let big = json!({"providerId": "x".repeat(4096), "itemTypeResults": []});
    let err = c
        .request_err("externalAgentConfig/import/recordHistory", big)
        .await;
    assert_eq!(err.code, -32600);
    assert!(
        err.message
            .ends_with("[limits] max_external_agent_import_bytes is 2048"),
        "{}",
        err.message
    );

    // A session detect does not offer fails; memory is refused; nothing to import is no import.
    let answer = c
        .request_ok(
            "externalAgentConfig/import",
            json!({"migrationItems": [{"itemType": "SESSIONS", "description": "s",
                "details": {"sessions": [{"path": "/nope.jsonl", "cwd": "/"}]}}]}),
        )
        .await;
    let completed = c
        .wait_for_notification("externalAgentConfig/import/completed")
        .await;
    assert_eq!(completed["params"]["importId"], answer["importId"]);
    assert_eq!(
        completed["params"]["itemTypeResults"][0]["failures"][0]["message"],
        json!("external agent session was not detected for import: /nope.jsonl")
    );
    let err = c
        .request_err(
            "externalAgentConfig/import",
            json!({"migrationItems": [{"itemType": "MEMORY", "description": "m"}]}),
        )
        .await;
    assert_eq!(
        (err.code, err.message.as_str()),
        (-32600, "external agent memory import is disabled")
    );
    c.request_ok("externalAgentConfig/import", json!({"migrationItems": []}))
        .await;
    let histories = c
        .request_ok("externalAgentConfig/import/readHistories", Value::Null)
        .await;
    assert_eq!(histories["data"].as_array().unwrap().len(), 2);
    assert_eq!(histories["data"][0]["importId"], answer["importId"]);

    c.send_json(json!({"id": 900, "method": "externalAgentConfig/detect"}))
        .await;
    let err = c.response_to(&json!(900)).await.unwrap_err();
    assert_eq!(
        (err.code, err.message.as_str()),
        (-32600, "Invalid request: missing field `params`")
    );
    for (method, params, message) in [
        (
            "externalAgentConfig/import",
            json!({}),
            "Invalid request: missing field `migrationItems`",
        ),
        (
            "externalAgentConfig/import/recordHistory",
            json!({"itemTypeResults": []}),
            "Invalid request: missing field `providerId`",
        ),
        (
            "externalAgentConfig/import/readHistories",
            json!({"x": 1}),
            "Invalid request: invalid type: map, expected unit",
        ),
    ] {
        let err = c.request_err(method, params).await;
        assert_eq!(
            (err.code, err.message.as_str()),
            (-32600, message),
            "{method}"
        );
    }
    let err = c
        .request_err(
            "externalAgentConfig/import",
            json!({"migrationItems": [{"itemType": "BOGUS", "description": "x"}]}),
        )
        .await;
    assert!(
        err.message
            .starts_with("Invalid request: unknown variant `BOGUS`, expected one of `AGENTS_MD`"),
        "{}",
        err.message
    );
    // A repository the fs methods would refuse ($WEFT_HOME here) is neither read nor written.
    let weft_home = std::fs::canonicalize(h.home.path()).unwrap();
    write(&weft_home.join("CLAUDE.md"), "Rules for Claude.\n");
    let cwd = weft_home.display().to_string();
    let detected = c
        .request_ok("externalAgentConfig/detect", json!({"cwds": [&cwd]}))
        .await;
    assert_eq!(detected["items"], json!([]));
    c.request_ok(
        "externalAgentConfig/import",
        json!({"migrationItems": [{"itemType": "AGENTS_MD", "description": "x", "cwd": &cwd}]}),
    )
    .await;
    let completed = c
        .wait_for_notification("externalAgentConfig/import/completed")
        .await;
    let failure = &completed["params"]["itemTypeResults"][0]["failures"][0];
    assert_eq!(failure["failureStage"], json!("repository_refused"));
    assert_eq!(failure["cwd"], json!(cwd));
    assert!(!weft_home.join("AGENTS.md").exists());

    // Settings that are not JSON fail detection as the reference's do.
    write(&fake.home.join(".claude/settings.json"), "{bad");
    let err = c
        .request_err("externalAgentConfig/detect", json!({"includeHome": true}))
        .await;
    assert_eq!(
        (err.code, err.message.as_str()),
        (-32603, "key must be a string at line 1 column 2")
    );
}

on_both_transports!(detect_import_and_read_history);
on_both_transports!(record_history_and_refusals);
