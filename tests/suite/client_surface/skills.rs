//! `skills/list`: `SKILL.md` files under the project's and the user's skill folders.

use serde_json::{Value, json};
use weft_test_support::Transport;

use super::{Surface, write_skill};

on_both_transports!(
    repo_and_user_skills_with_errors,
    cached_until_force_reload,
    extra_roots_are_listed_and_announced,
);

/// Names and scopes, in answer order.
fn names(entry: &Value) -> Vec<(String, String)> {
    entry["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_owned(),
                s["scope"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

async fn repo_and_user_skills_with_errors(transport: Transport) {
    let mut s = Surface::start(transport, "", "", &[]).await;
    let ws = s.ws();
    let weft_home = std::fs::canonicalize(s.home.path()).unwrap();
    let skills = [
        (
            ws.join(".codex/skills/dotcodex"),
            "name: dotcodex-skill\ndescription: from .codex",
        ),
        (
            ws.join(".agents/skills/a"),
            "name: ws-agents-skill\ndescription: from .agents",
        ),
        (
            ws.join("sub/.agents/skills/b"),
            "name: sub-skill\ndescription: deeper",
        ),
        (
            ws.join("sub/deeper/.gitkeep-dir"),
            "name: not-a-root\ndescription: x",
        ),
        (
            weft_home.join("skills/group/nested"),
            "name: nested-skill\ndescription: |\n  two\n  lines",
        ),
        (
            weft_home.join("skills/noname"),
            "description: the folder names it",
        ),
        (
            s.user_home().join(".agents/skills/h"),
            "name: home-skill\ndescription: from ~/.agents",
        ),
    ];
    for (dir, front_matter) in skills {
        write_skill(&dir, front_matter);
    }
    std::fs::create_dir_all(weft_home.join("skills/bad")).unwrap();
    std::fs::write(weft_home.join("skills/bad/SKILL.md"), "no front matter\n").unwrap();
    let cwd = ws.join("sub/deeper").display().to_string();
    let answer = s
        .client
        .request_ok("skills/list", json!({"cwds": [cwd], "forceReload": true}))
        .await;
    let entry = &answer["data"][0];
    assert_eq!(entry["cwd"], cwd.as_str());
    let pairs: Vec<(&str, &str)> = vec![
        ("dotcodex-skill", "repo"),
        ("sub-skill", "repo"),
        ("ws-agents-skill", "repo"),
        ("home-skill", "user"),
        ("nested-skill", "user"),
        ("noname", "user"),
    ];
    let expected: Vec<(String, String)> = pairs
        .into_iter()
        .map(|(n, s)| (n.to_owned(), s.to_owned()))
        .collect();
    assert_eq!(names(entry), expected);
    let nested = &entry["skills"][4];
    assert_eq!(
        nested,
        &json!({
            "name": "nested-skill", "description": "two lines", "shortDescription": null,
            "interface": null, "dependencies": null,
            "path": weft_home.join("skills/group/nested/SKILL.md").display().to_string(),
            "scope": "user", "enabled": true, "pluginId": null,
        })
    );
    assert_eq!(
        entry["errors"],
        json!([{
            "path": weft_home.join("skills/bad/SKILL.md").display().to_string(),
            "message": "missing YAML frontmatter delimited by ---",
        }])
    );
    // Outside the repository only the user's skills count.
    let answer = s
        .client
        .request_ok("skills/list", json!({"cwds": ["/"]}))
        .await;
    assert!(
        names(&answer["data"][0])
            .iter()
            .all(|(_, scope)| scope == "user")
    );
}

async fn cached_until_force_reload(transport: Transport) {
    let mut s = Surface::start(transport, "", "", &[]).await;
    let ws = s.ws();
    let cwd = ws.display().to_string();
    write_skill(
        &ws.join(".agents/skills/first"),
        "name: first\ndescription: one",
    );
    let list = |force: bool| json!({"cwds": [cwd.clone()], "forceReload": force});
    let first = s.client.request_ok("skills/list", list(false)).await;
    assert_eq!(names(&first["data"][0]).len(), 1);
    write_skill(
        &ws.join(".agents/skills/second"),
        "name: second\ndescription: two",
    );
    let cached = s.client.request_ok("skills/list", list(false)).await;
    assert_eq!(cached, first);
    let reloaded = s.client.request_ok("skills/list", list(true)).await;
    assert_eq!(names(&reloaded["data"][0]).len(), 2);
}

/// `skills/extraRoots/set`: `skills/changed` comes before the answer; the next list (no
/// `forceReload` needed) has the extra root's skills, user scope; `[]` clears them; a relative
/// root is refused with the reference's text.
async fn extra_roots_are_listed_and_announced(transport: Transport) {
    let mut s = Surface::start(transport, "", "", &[]).await;
    let cwd = s.ws().display().to_string();
    let extra = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(extra.path()).unwrap();
    write_skill(
        &root.join("shared"),
        "name: shared-skill\ndescription: from a client's root",
    );
    let list = json!({"cwds": [cwd]});
    let before = s.client.request_ok("skills/list", list.clone()).await;
    assert!(names(&before["data"][0]).is_empty(), "{before}");

    let id = s
        .client
        .send_request("skills/extraRoots/set", json!({"extraRoots": [root]}))
        .await;
    assert_eq!(s.client.response_to(&id).await.unwrap(), json!({}));
    let log = s.client.log();
    let position = |pred: &dyn Fn(&Value) -> bool| log.iter().rposition(pred).unwrap();
    let changed = position(&|m: &Value| m["method"] == "skills/changed");
    let answered = position(&|m: &Value| m["id"] == id && m.get("result").is_some());
    assert!(changed < answered, "skills/changed must precede the answer");
    assert_eq!(log[changed]["params"], json!({}));

    let after = s.client.request_ok("skills/list", list.clone()).await;
    assert_eq!(
        names(&after["data"][0]),
        vec![("shared-skill".to_string(), "user".to_string())]
    );
    s.client
        .request_ok("skills/extraRoots/set", json!({"extraRoots": []}))
        .await;
    let cleared = s.client.request_ok("skills/list", list).await;
    assert!(names(&cleared["data"][0]).is_empty(), "{cleared}");
    let err = s
        .client
        .request_err(
            "skills/extraRoots/set",
            json!({"extraRoots": ["relative/root"]}),
        )
        .await;
    assert_eq!(err.code, -32600);
    assert!(
        err.message
            .contains("AbsolutePathBuf deserialized without a base path"),
        "{}",
        err.message
    );
}
