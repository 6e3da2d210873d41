use std::path::Path;

use serde_json::json;
use weft_protocol::external_agent_api::{
    ExternalAgentConfigImportHistory, ExternalAgentConfigMigrationItemType as Type,
};

use super::detect::detect;
use super::files::{command_skill, commands, rewrite_terms, subagents};
use super::history::{AppendError, History};
use super::settings::{config_values, mcp_servers, missing_values, stop_hooks};
use super::{Homes, repo_root};
use crate::limits::Limits;

fn bounds() -> super::session_import::SessionBounds {
    super::session_import::SessionBounds::new(None, None, &Limits::default())
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn terms_are_rewritten_as_whole_words_only() {
    assert_eq!(
        rewrite_terms("See CLAUDE.md. Claude Code and claude-code; claudes stay; Claude."),
        "See AGENTS.md. Codex and Codex; claudes stay; Codex."
    );
    assert_eq!(rewrite_terms("no match"), "no match");
}

#[test]
fn commands_with_arguments_are_left_out_and_others_become_skills() {
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join("fix.md"), "Fix $ARGUMENTS.\n");
    write(
        &dir.path().join("plain.md"),
        "---\ndescription: Plain for Claude\n---\n\nDo it with Claude.\n",
    );
    write(&dir.path().join("bare.md"), "Deploy now.\n");
    write(&dir.path().join("notes.txt"), "not a command");
    let found = commands(dir.path());
    let names: Vec<&str> = found.iter().map(|c| c.skill.as_str()).collect();
    assert_eq!(names, ["source-command-bare", "source-command-plain"]);
    let plain = command_skill(&found[1], &std::fs::read_to_string(&found[1].path).unwrap());
    assert_eq!(
        plain,
        "---\nname: \"source-command-plain\"\ndescription: \"Plain for Codex\"\n---\n\n\
         # source-command-plain\n\nUse this skill when the user asks to run the migrated source \
         command `plain`.\n\n## Command Template\n\nDo it with Codex.\n"
    );
    let bare = command_skill(&found[0], "Deploy now.\n");
    assert!(bare.contains("description: \"Migrated source command `bare`\"\n"));
    assert!(bare.ends_with("## Command Template\n\nDeploy now.\n"));
}

#[test]
fn settings_become_config_values_and_only_missing_ones_count() {
    let settings = json!({"env": {"FOO": "bar", "N": 3, "X": null}, "sandbox": {"enabled": true},
        "permissions": {"allow": ["Edit"]}});
    let values = config_values(&settings);
    let expected: toml::Table = toml::from_str(
        "sandbox_mode = \"workspace-write\"\n[shell_environment_policy]\ninherit = \"core\"\n\
         [shell_environment_policy.set]\nFOO = \"bar\"\nN = \"3\"\n",
    )
    .unwrap();
    assert_eq!(values, expected);
    assert_eq!(missing_values(&toml::Table::new(), &values).len(), 3);
    let existing: toml::Table = toml::from_str(
        "sandbox_mode = \"read-only\"\n[shell_environment_policy.set]\nFOO = \"x\"\n",
    )
    .unwrap();
    let missing = missing_values(&existing, &values);
    let paths: Vec<String> = missing.iter().map(|(p, _)| p.join(".")).collect();
    assert_eq!(
        paths,
        [
            "shell_environment_policy.inherit",
            "shell_environment_policy.set.N"
        ]
    );
    assert!(config_values(&json!({"permissions": {}})).is_empty());
}

#[test]
fn mcp_servers_and_stop_hooks_are_read_from_claude_files() {
    let servers = mcp_servers(&json!({"mcpServers": {
        "b": {"type": "http", "url": "https://x/mcp", "headers": {"A": "1"}},
        "a": {"command": "npx", "args": ["-y", "s"], "env": {"K": "V"}},
        "broken": {"type": "stdio"}
    }}));
    let names: Vec<&str> = servers.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["a", "b"]);
    assert_eq!(
        servers[0].1,
        toml::from_str::<toml::Table>(
            "command = \"npx\"\nargs = [\"-y\", \"s\"]\nenv = { K = \"V\" }"
        )
        .unwrap()
    );
    assert_eq!(
        servers[1].1,
        toml::from_str::<toml::Table>("url = \"https://x/mcp\"\nhttp_headers = { A = \"1\" }")
            .unwrap()
    );
    let hooks = stop_hooks(&json!({"hooks": {
        "Stop": [{"matcher": "", "hooks": [{"type": "command", "command": "echo s", "timeout": 5},
                                            {"type": "prompt", "prompt": "p"}]}],
        "PreToolUse": [{"hooks": [{"type": "command", "command": "echo p"}]}]
    }}));
    assert_eq!(hooks.len(), 1);
    assert_eq!(
        (hooks[0].command.as_str(), hooks[0].timeout),
        ("echo s", Some(5))
    );
}

#[test]
fn repo_root_is_the_nearest_git_ancestor_or_the_cwd() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::create_dir_all(repo.join("a/b")).unwrap();
    std::fs::create_dir_all(dir.path().join("plain")).unwrap();
    assert_eq!(repo_root(&repo.join("a/b")), Some(repo.clone()));
    assert_eq!(
        repo_root(&dir.path().join("plain")),
        Some(dir.path().join("plain"))
    );
    assert_eq!(repo_root(&dir.path().join("missing")), None);
    assert_eq!(repo_root(Path::new("")), None);
}

#[test]
fn detect_lists_home_and_repo_items_in_order_and_skips_what_is_there() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let weft = dir.path().join("weft");
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    write(
        &home.join(".claude/settings.json"),
        r#"{"env":{"A":"1"},"hooks":{"Stop":[{"hooks":[{"type":"command","command":"echo s"}]}]}}"#,
    );
    write(
        &home.join(".claude.json"),
        r#"{"mcpServers":{"one":{"command":"x"},"two":{"command":"y"}}}"#,
    );
    write(&home.join(".claude/skills/s/SKILL.md"), "skill");
    write(&home.join(".claude/commands/c.md"), "do");
    write(&home.join(".claude/CLAUDE.md"), "home instructions");
    write(
        &home.join(".claude/agents/reviewer.md"),
        "---\nname: reviewer\ndescription: Reviews for Claude\nmodel: sonnet\n---\nYou review.\n",
    );
    write(&repo.join("CLAUDE.md"), "repo rules");
    write(&repo.join(".claude/skills/r/SKILL.md"), "skill");
    write(
        &weft.join("config.toml"),
        "[mcp_servers.two]\ncommand = \"y\"\n",
    );
    let homes = Homes {
        weft_home: weft.clone(),
        user_home: Some(home.clone()),
        config_file: weft.join("config.toml"),
    };
    let cwds = [
        repo.join("sub").display().to_string(),
        repo.display().to_string(),
    ];
    std::fs::create_dir_all(repo.join("sub")).unwrap();
    let items = detect(&homes, true, &cwds, bounds()).unwrap();
    let kinds: Vec<(Type, bool)> = items
        .iter()
        .map(|item| (item.item_type, item.cwd.is_some()))
        .collect();
    assert_eq!(
        kinds,
        [
            (Type::Config, false),
            (Type::McpServerConfig, false),
            (Type::Hooks, false),
            (Type::Skills, false),
            (Type::Commands, false),
            (Type::Subagents, false),
            (Type::Skills, true),
            (Type::AgentsMd, true),
        ]
    );
    let mcp = items[1].details.as_ref().unwrap();
    assert_eq!(mcp.mcp_servers.len(), 1);
    assert_eq!(mcp.mcp_servers[0].name, "one");
    assert_eq!(
        items[7].description,
        format!(
            "Migrate {} to {}",
            repo.join("CLAUDE.md").display(),
            repo.join("AGENTS.md").display()
        )
    );
    // Already there: nothing to offer.
    write(&repo.join("AGENTS.md"), "mine");
    std::fs::create_dir_all(repo.join(".agents/skills/r")).unwrap();
    assert!(detect(&homes, false, &cwds, bounds()).unwrap().is_empty());
    write(
        &weft.join("config.toml"),
        "[mcp_servers.two]\ncommand = \"y\"\n[agents.reviewer]\n",
    );
    let home_kinds: Vec<Type> = detect(&homes, true, &[], bounds())
        .unwrap()
        .iter()
        .map(|item| item.item_type)
        .collect();
    assert!(!home_kinds.contains(&Type::Subagents), "{home_kinds:?}");
    let no_home = Homes {
        user_home: None,
        ..homes.clone()
    };
    assert!(detect(&no_home, true, &[], bounds()).unwrap().is_empty());
    // Settings that are not JSON fail detection with serde's words.
    write(&home.join(".claude.json"), "{bad");
    assert_eq!(
        detect(&homes, true, &[], bounds()).unwrap_err(),
        "invalid MCP config: key must be a string at line 1 column 2"
    );
}

#[test]
fn history_keeps_newest_first_and_drops_the_oldest_past_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    let limits = Limits {
        max_external_agent_imports: 3,
        max_external_agent_import_bytes: 200,
        ..Limits::default()
    };
    let history = History::new(dir.path(), &limits);
    assert!(history.read().unwrap().is_empty());
    let entry = |n: usize| ExternalAgentConfigImportHistory {
        import_id: format!("i{n}"),
        provider_id: None,
        completed_at_ms: n as i64,
        successes: Vec::new(),
        failures: Vec::new(),
    };
    for n in 0..5 {
        history.append(entry(n)).unwrap();
    }
    let ids: Vec<String> = history
        .read()
        .unwrap()
        .into_iter()
        .map(|h| h.import_id)
        .collect();
    assert_eq!(ids, ["i4", "i3", "i2"]);
    let mut big = entry(9);
    big.import_id = "x".repeat(300);
    assert!(matches!(
        history.append(big),
        Err(AppendError::TooLarge { max: 200, .. })
    ));
    assert_eq!(history.read().unwrap().len(), 3);
}

#[test]
fn subagents_are_read_with_their_front_matter() {
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("b.md"),
        "---\nname: reviewer\ndescription: \"Reviews code\"\ntools: Read\n---\n\nYou review for Claude.\n",
    );
    write(&dir.path().join("a.md"), "No front matter.\n");
    write(
        &dir.path().join("c.md"),
        "---\nname: reviewer\n---\nduplicate\n",
    );
    let found = subagents(dir.path());
    assert_eq!(found.len(), 2);
    assert_eq!(found[0].name, "a");
    assert_eq!(found[0].description, None);
    assert_eq!(found[0].instructions.as_deref(), Some("No front matter."));
    assert_eq!(found[1].name, "reviewer");
    assert_eq!(found[1].description.as_deref(), Some("Reviews code"));
    assert_eq!(
        found[1].instructions.as_deref(),
        Some("You review for Codex.")
    );
}
