//! `skills/config/write`: a skill switched off by path or by name in `config.toml`
//! (`[[skills.config]]`), reported by `skills/list`, and switched on again.

use serde_json::{Value, json};
use weft_test_support::Transport;

use super::temporaries;
use crate::turns::{Harness, Setup};

/// `enabled` of the skill named `name` in the first entry of a `skills/list` answer.
fn enabled(answer: &Value, name: &str) -> bool {
    answer["data"][0]["skills"]
        .as_array()
        .unwrap()
        .iter()
        .find(|skill| skill["name"] == name)
        .unwrap_or_else(|| panic!("no skill {name} in {answer}"))["enabled"]
        .as_bool()
        .unwrap()
}

async fn a_skill_is_switched_off_and_on_by_path_or_name(transport: Transport) {
    let mut h = Harness::start(Setup::new(transport).config("# skills below\n")).await;
    let skill = h.home.write_file(
        "skills/demo/SKILL.md",
        "---\nname: demo\ndescription: A demo skill.\n---\nDo the demo.\n",
    );
    let before = std::fs::read_to_string(h.home.config_path()).unwrap();
    let cwd = h.home.path().display().to_string();
    let list = json!({"cwds": [cwd], "forceReload": true});
    let c = &mut h.client;
    assert!(enabled(
        &c.request_ok("skills/list", list.clone()).await,
        "demo"
    ));
    let path = skill.display().to_string();
    let off = c
        .request_ok(
            "skills/config/write",
            json!({"path": path, "enabled": false}),
        )
        .await;
    assert_eq!(off, json!({"effectiveEnabled": false}));
    assert!(!enabled(
        &c.request_ok("skills/list", list.clone()).await,
        "demo"
    ));
    let text = std::fs::read_to_string(h.home.config_path()).unwrap();
    assert!(text.contains("# skills below\n"), "{text}");
    assert!(
        text.contains(&format!(
            "[[skills.config]]\npath = {}\nenabled = false\n",
            Value::String(std::fs::canonicalize(&skill).unwrap().display().to_string())
        )),
        "{text}"
    );
    // Off by name too; on again by path leaves it off by name.
    c.request_ok(
        "skills/config/write",
        json!({"name": "demo", "enabled": false}),
    )
    .await;
    c.request_ok(
        "skills/config/write",
        json!({"path": path, "enabled": true}),
    )
    .await;
    assert!(!enabled(
        &c.request_ok("skills/list", list.clone()).await,
        "demo"
    ));
    let on = c
        .request_ok(
            "skills/config/write",
            json!({"name": "demo", "enabled": true}),
        )
        .await;
    assert_eq!(on, json!({"effectiveEnabled": true}));
    assert!(enabled(
        &c.request_ok("skills/list", list.clone()).await,
        "demo"
    ));
    let text = std::fs::read_to_string(h.home.config_path()).unwrap();
    assert_eq!(text, before);
    assert!(temporaries(h.home.path()).is_empty());
    for params in [
        json!({"path": path, "name": "demo", "enabled": false}),
        json!({"enabled": false}),
        json!({"name": "  ", "enabled": false}),
    ] {
        let err = c.request_err("skills/config/write", params).await;
        assert_eq!(
            (err.code, err.message.as_str()),
            (
                -32602,
                "skills/config/write requires exactly one of path or name"
            )
        );
    }
    let err = c
        .request_err(
            "skills/config/write",
            json!({"path": "skills/demo/SKILL.md", "enabled": false}),
        )
        .await;
    assert_eq!(err.message, "skills/config/write path must be absolute");
}

on_both_transports!(a_skill_is_switched_off_and_on_by_path_or_name);
