//! The command line, config loading, logging and schema generation (issue 2 §2–§4).

use std::collections::BTreeMap;
use std::path::Path;

use weft_test_support::{
    Daemon, TestHome, mock_model_config, run_weft, run_weft_with_env, workspace_root,
};

use super::assert_still_serving;

#[tokio::test]
async fn version_flag() {
    let home = TestHome::new();
    let output = run_weft(&home, &["--version"]).await;
    assert_eq!(output.code(), Some(0), "{output:?}");
    assert!(output.stdout.starts_with("weft "), "{output:?}");
    assert!(
        output.stdout.contains(env!("CARGO_PKG_VERSION")),
        "{output:?}"
    );
}

#[tokio::test]
async fn help_everywhere() {
    let home = TestHome::new();
    let cases: [(&[&str], &[&str]); 5] = [
        (&["--help"], &["app-server", "generate-json-schema"]),
        (
            &["app-server", "--help"],
            &[
                "--listen",
                "--enable",
                "--disable",
                "-c",
                "--ws-auth",
                "--ws-token-file",
            ],
        ),
        (&["generate-json-schema", "--help"], &["--out"]),
        (
            &["app-server", "--help"],
            &["proxy", "generate-json-schema", "unix://PATH"],
        ),
        (&["app-server", "proxy", "--help"], &["--sock"]),
    ];
    for (args, words) in cases {
        let help = run_weft(&home, args).await;
        assert_eq!(help.code(), Some(0), "{help:?}");
        for word in words {
            assert!(
                help.stdout.contains(word),
                "`weft {}` lacks {word}:\n{}",
                args.join(" "),
                help.stdout
            );
        }
    }
}

/// Flags that clients written for Codex pass are accepted; unknown keys and features are
/// ignored with a warning on stderr, never an error.
#[tokio::test]
async fn unknown_overrides_and_features_warn_but_run() {
    let home = TestHome::new();
    let mut daemon = Daemon::builder(&home)
        .overrides(&["foo.bar=1", "web_search=\"live\""])
        .args(&["--enable", "guardian_approval"])
        .args(&["--disable", "some_unknown_feature"])
        .start()
        .await;
    let mut client = daemon.initialized_client().await;
    assert_still_serving(&mut client, true).await;
    for name in ["foo.bar", "guardian_approval", "some_unknown_feature"] {
        let stderr = daemon.wait_for_stderr(name).await;
        let line = stderr
            .lines()
            .find(|l| l.contains(name))
            .unwrap_or_default();
        assert!(
            line.to_ascii_lowercase().contains("warn"),
            "the line naming {name} should be a warning: {line}"
        );
    }
}

/// Known `-c` keys are accepted, with values parsed as TOML or taken as strings.
#[tokio::test]
async fn known_overrides_are_accepted() {
    let home = TestHome::new();
    let overrides = [
        "model=gpt-test",
        "model_context_window=200000",
        "approval_policy=never",
    ];
    let mut daemon = Daemon::builder(&home).overrides(&overrides).start().await;
    let _client = daemon.initialized_client().await;
}

/// A config with every known key, plus keys and tables Weft does not know, loads.
#[tokio::test]
async fn full_config_with_unknown_tables_loads() {
    let config = format!(
        r#"approval_policy = "on-request"
sandbox_mode = "workspace-write"
model_context_window = 128000
model_auto_compact_token_limit = 100000
some_future_key = "x"
{}query_params = {{ "api-version" = "2025-01-01" }}
http_headers = {{ "X-Test" = "1" }}

[features]
guardian_approval = true

[analytics]
enabled = false
"#,
        mock_model_config("http://127.0.0.1:9/v1", "chat")
    );
    let home = TestHome::with_config(&config);
    let mut daemon = Daemon::stdio(&home, &[]).await;
    let mut client = daemon.initialized_client().await;
    assert_still_serving(&mut client, true).await;
}

/// An unparseable config stops the daemon at start: exit code 2, one line naming the file.
#[tokio::test]
async fn unparseable_config_exits_2() {
    let home = TestHome::with_config("model = \"unterminated\n[[[");
    let output = run_weft(&home, &["app-server", "--listen", "stdio://"]).await;
    assert_eq!(output.code(), Some(2), "{output:?}");
    let path = home.config_path();
    assert!(
        output
            .stderr
            .lines()
            .any(|l| l.contains(path.to_str().unwrap())),
        "no stderr line names {}:\n{}",
        path.display(),
        output.stderr
    );
    assert!(output.stdout.is_empty(), "stdout: {}", output.stdout);
}

/// A known key with a wrong type: exit code 2, one line naming the file and the key.
#[tokio::test]
async fn wrong_type_for_known_key_exits_2() {
    let cases = [
        ("model = 5\n".to_owned(), "model"),
        ("approval_policy = 3\n".to_owned(), "approval_policy"),
        (
            mock_model_config("http://127.0.0.1:9/v1", "responses")
                .replace("request_max_retries = 0", "request_max_retries = \"three\""),
            "request_max_retries",
        ),
    ];
    for (config, key) in cases {
        let home = TestHome::with_config(&config);
        let output = run_weft(&home, &["app-server", "--listen", "stdio://"]).await;
        assert_eq!(output.code(), Some(2), "config {config:?}: {output:?}");
        let path = home.config_path();
        let path = path.to_str().unwrap();
        assert!(
            output
                .stderr
                .lines()
                .any(|l| l.contains(path) && l.contains(key)),
            "no stderr line names both {path} and `{key}`:\n{}",
            output.stderr
        );
    }
}

/// The reference's launch flags: `--stdio` serves stdio; the ones that change nothing for
/// Weft are accepted; `--stdio` with `--listen` is a usage error, as in the reference.
#[tokio::test]
async fn reference_launch_flags_are_accepted() {
    let home = TestHome::new();
    let mut daemon = Daemon::builder(&home)
        .args(&["--startup-sign-out", "--analytics-default-enabled"])
        .args(&[
            "--startup-client-info",
            r#"{"name":"langchain","version":"1.0"}"#,
        ])
        .args(&["--cloud-skills-snapshot", "/nonexistent/skills.json"])
        .args(&["--code-mode-host", "http://127.0.0.1:9"])
        .start()
        .await;
    let mut client = daemon.initialized_client().await;
    assert_still_serving(&mut client, true).await;
    for flag in ["--cloud-skills-snapshot", "--code-mode-host"] {
        let stderr = daemon.wait_for_stderr(flag).await;
        assert!(stderr.to_ascii_lowercase().contains("warn"), "{stderr}");
    }
    // `--stdio` serves stdio: stdin at its end (null here) ends the daemon, exit 0. (Its own
    // home: the daemon above still holds this one's state DB.)
    let home = TestHome::new();
    let stdio = run_weft(&home, &["app-server", "--stdio"]).await;
    assert_eq!(stdio.code(), Some(0), "{stdio:?}");
    let both = run_weft(&home, &["app-server", "--stdio", "--listen", "off"]).await;
    assert_eq!(both.code(), Some(2), "{both:?}");
    let bad = run_weft(
        &home,
        &["app-server", "--startup-client-info", "{\"name\":1}"],
    )
    .await;
    assert_eq!(bad.code(), Some(2), "{bad:?}");
    assert!(bad.stderr.contains("--startup-client-info"), "{bad:?}");
}

/// `--print-startup-config` prints what a client reads at start and exits; `--strict-config`
/// refuses a config with a key Weft does not know, naming the file and the key.
#[tokio::test]
async fn print_startup_config_and_strict_config() {
    let home = TestHome::with_config("some_future_key = 1\nmodel = \"m\"\n");
    let printed = run_weft(&home, &["app-server", "--print-startup-config"]).await;
    assert_eq!(printed.code(), Some(0), "{printed:?}");
    let line: serde_json::Value = serde_json::from_str(printed.stdout.trim()).unwrap();
    assert_eq!(line["appServerVersion"], env!("CARGO_PKG_VERSION"));
    assert_eq!(
        line["configRequirements"],
        serde_json::json!({"supportsIndependentSpeedModes": false, "requirements": null})
    );
    let strict = run_weft(
        &home,
        &["app-server", "--strict-config", "--print-startup-config"],
    )
    .await;
    assert_eq!(strict.code(), Some(2), "{strict:?}");
    let path = home.config_path();
    assert!(
        strict.stderr.contains(path.to_str().unwrap())
            && strict
                .stderr
                .contains("unknown configuration field `some_future_key`"),
        "{strict:?}"
    );
    assert!(strict.stdout.is_empty(), "{strict:?}");
    let known = TestHome::with_config("model = \"m\"\n");
    let ok = run_weft(
        &known,
        &["app-server", "--strict-config", "--print-startup-config"],
    )
    .await;
    assert_eq!(ok.code(), Some(0), "{ok:?}");
}

/// `weft generate-json-schema --out DIR` and `weft app-server generate-json-schema -o DIR`
/// (the reference's place for it) write exactly the checked-in `schema/`.
#[tokio::test]
async fn generated_schema_matches_checked_in_schema() {
    let home = TestHome::new();
    let out = home.path().join("generated-schema");
    let output = run_weft(
        &home,
        &["generate-json-schema", "--out", out.to_str().unwrap()],
    )
    .await;
    assert_eq!(output.code(), Some(0), "{output:?}");
    assert_same_tree(&out);
    let out = home.path().join("app-server-schema");
    let output = run_weft(
        &home,
        &[
            "app-server",
            "generate-json-schema",
            "-o",
            out.to_str().unwrap(),
        ],
    )
    .await;
    assert_eq!(output.code(), Some(0), "{output:?}");
    assert_same_tree(&out);
}

/// Fails unless the tree at `out` is exactly the checked-in `schema/`.
fn assert_same_tree(out: &Path) {
    let checked_in = read_tree(&workspace_root().join("schema"));
    let generated = read_tree(out);
    assert!(!generated.is_empty(), "generate-json-schema wrote nothing");
    let missing: Vec<_> = generated
        .keys()
        .filter(|k| !checked_in.contains_key(*k))
        .collect();
    let stale: Vec<_> = checked_in
        .keys()
        .filter(|k| !generated.contains_key(*k))
        .collect();
    let differing: Vec<_> = generated
        .iter()
        .filter(|(k, v)| checked_in.get(*k).is_some_and(|c| c != *v))
        .map(|(k, _)| k)
        .collect();
    assert!(
        missing.is_empty() && stale.is_empty() && differing.is_empty(),
        "schema/ is stale; run `cargo run -p weft-app-server -- generate-json-schema --out schema`\n\
         not checked in: {missing:?}\nno longer generated: {stale:?}\ndiffering: {differing:?}"
    );
}

fn read_tree(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let relative = path
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                files.insert(relative, std::fs::read(&path).unwrap());
            }
        }
    }
    files
}

/// `LOG_FORMAT=json`: every stderr line is a JSON object; stdout carries only protocol.
#[tokio::test]
async fn json_logs_on_stderr_and_pure_protocol_on_stdout() {
    let home = TestHome::new();
    let mut daemon = Daemon::builder(&home)
        .env("LOG_FORMAT", "json")
        .env("RUST_LOG", "trace")
        .args(&["-c", "foo.bar=1"])
        .start()
        .await;
    let mut client = daemon.initialized_client().await;
    client.send_raw("not json at all").await;
    client
        .send_raw(r#"{"id":null,"method":"initialize"}"#)
        .await;
    client.send_raw("[1,2]").await;
    assert_still_serving(&mut client, true).await;
    client.close().await;
    // Every stdout line was parsed and schema-checked by the client; nothing else follows.
    assert!(client.read_until_closed().await.is_empty());
    assert_eq!(daemon.wait_exit().await.code(), Some(0));
    let stderr = daemon.stderr();
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert!(!lines.is_empty(), "no logs at RUST_LOG=trace");
    for line in lines {
        let parsed: Result<serde_json::Value, _> = serde_json::from_str(line);
        assert!(
            parsed.as_ref().is_ok_and(|v| v.is_object()),
            "stderr line is not a JSON object: {line}"
        );
    }
}

/// `RUST_LOG` filters: with `error`, a normal session logs nothing at info level.
#[tokio::test]
async fn rust_log_filters_stderr() {
    let home = TestHome::new();
    let output = run_weft_with_env(
        &home,
        &["app-server", "--listen", "stdio://"],
        &[("RUST_LOG", "error")],
    )
    .await;
    assert_eq!(output.code(), Some(0), "{output:?}");
    assert!(
        !output.stderr.contains("INFO") && !output.stderr.contains("DEBUG"),
        "RUST_LOG=error still logged:\n{}",
        output.stderr
    );
    assert!(output.stdout.is_empty());
}

/// Weft's schema covers every method of the phase-1 subset with the same file layout as the
/// reference, so the suite can validate every message against both.
#[test]
fn schema_covers_the_protocol_subset() {
    use weft_test_support::schema::{Which, response_schema_file, union_has_method};
    let subset_path = workspace_root().join("tests/reference/protocol-subset.txt");
    let subset = std::fs::read_to_string(&subset_path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", subset_path.display()));
    let mut problems = Vec::new();
    for line in subset.lines().filter(|l| !l.trim().is_empty()) {
        let Some((kind, method)) = line.split_once(' ') else {
            continue;
        };
        let method = method.trim();
        let has = |which: Which| match kind {
            "request" => {
                let in_union = union_has_method(which, "ClientRequest.json", method).unwrap();
                let response = response_schema_file(which, method).unwrap();
                Some(in_union && response.is_some())
            }
            "notification" => {
                Some(union_has_method(which, "ServerNotification.json", method).unwrap())
            }
            "server-request" => {
                Some(union_has_method(which, "ServerRequest.json", method).unwrap())
            }
            _ => None,
        };
        for which in [Which::Weft, Which::Reference] {
            let Some(mut found) = has(which) else {
                continue;
            };
            // Methods the stable reference lacks are experimental ones of the reference.
            if !found && which == Which::Reference {
                found = has(Which::Experimental).unwrap_or(false);
            }
            if !found {
                problems.push(format!("{which:?} schema lacks {kind} {method}"));
            }
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
    assert_eq!(
        response_schema_file(Which::Weft, "thread/name/set")
            .unwrap()
            .as_deref(),
        Some("v2/ThreadSetNameResponse.json")
    );
    assert_eq!(
        response_schema_file(Which::Weft, "initialize")
            .unwrap()
            .as_deref(),
        Some("v1/InitializeResponse.json")
    );
}
