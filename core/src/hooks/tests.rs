use super::*;
use std::time::Instant;

struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    /// Writes a script into the temp dir and returns an argv hook running it with `sh`.
    /// (Not executed directly: exec-ing a file just written races with other tests' forks,
    /// which briefly hold its write descriptor, and fails with "text file busy".)
    fn script(&self, name: &str, body: &str) -> StopHookConfig {
        let path = self.dir.path().join(name);
        std::fs::write(&path, format!("{body}\n")).unwrap();
        StopHookConfig {
            command: HookCommand::Argv(vec!["sh".into(), path.display().to_string()]),
            timeout_secs: None,
        }
    }

    fn input(&self) -> StopHookInput {
        StopHookInput {
            thread_id: "thr_1".into(),
            turn_id: "turn_1".into(),
            cwd: self.dir.path().to_path_buf(),
            last_agent_message: Some("All done.".into()),
            stop_hook_active: false,
        }
    }

    async fn run(&self, hooks: &[StopHookConfig]) -> StopHookOutcome {
        run_stop_hooks(hooks, &self.input(), &CancellationToken::new()).await
    }
}

fn shell(command: &str) -> StopHookConfig {
    StopHookConfig {
        command: HookCommand::Shell(command.into()),
        timeout_secs: None,
    }
}

fn prompts(outcome: &StopHookOutcome) -> Vec<&str> {
    match &outcome.decision {
        StopHookDecision::Continue { prompts } => prompts.iter().map(|p| p.text.as_str()).collect(),
        other => panic!("expected Continue, got {other:?}"),
    }
}

#[tokio::test]
async fn block_continues_with_reason() {
    let fx = Fixture::new();
    let hook = fx.script(
        "block.sh",
        r#"echo '{"decision":"block","reason":"run the tests first"}'"#,
    );
    let outcome = fx.run(&[hook]).await;
    assert_eq!(prompts(&outcome), vec!["run the tests first"]);
    assert!(outcome.warnings.is_empty(), "{:?}", outcome.warnings);
    let StopHookDecision::Continue { prompts } = &outcome.decision else {
        unreachable!()
    };
    let id = uuid::Uuid::parse_str(&prompts[0].hook_run_id).unwrap();
    assert_eq!(id.get_version_num(), 7);
}

#[tokio::test]
async fn stop_ends_the_turn() {
    let fx = Fixture::new();
    let hook = fx.script(
        "stop.sh",
        r#"echo '{"continue":false,"stopReason":"budget exhausted"}'"#,
    );
    let outcome = fx.run(&[hook]).await;
    assert_eq!(
        outcome.decision,
        StopHookDecision::Stop {
            reason: Some("budget exhausted".into())
        }
    );
    assert!(outcome.warnings.is_empty());
}

#[tokio::test]
async fn empty_output_empty_object_and_other_decisions_allow() {
    let fx = Fixture::new();
    let hooks = [
        fx.script("silent.sh", "exit 0"),
        shell("echo '{}'"),
        shell(r#"echo '{"decision":"approve","reason":"fine"}'"#),
    ];
    let outcome = fx.run(&hooks).await;
    assert_eq!(outcome.decision, StopHookDecision::Allow);
    assert!(outcome.warnings.is_empty(), "{:?}", outcome.warnings);
}

/// The turn may stop, with one warning per entry of `fragments`, each containing its texts.
fn assert_allowed_with_warnings(outcome: &StopHookOutcome, fragments: &[&[&str]]) {
    assert_eq!(outcome.decision, StopHookDecision::Allow);
    assert_eq!(
        outcome.warnings.len(),
        fragments.len(),
        "{:?}",
        outcome.warnings
    );
    for (warning, texts) in outcome.warnings.iter().zip(fragments) {
        for text in *texts {
            assert!(warning.contains(text), "{warning:?} lacks {text:?}");
        }
    }
}

#[tokio::test]
async fn invalid_json_is_a_warning() {
    let fx = Fixture::new();
    let outcome = fx
        .run(&[shell("echo 'not json'"), shell("echo '[1, 2]'")])
        .await;
    assert_allowed_with_warnings(&outcome, &[&["invalid JSON"], &["not an object"]]);
}

#[tokio::test]
async fn block_without_reason_is_a_warning() {
    let fx = Fixture::new();
    let outcome = fx
        .run(&[shell(r#"echo '{"decision":"block","reason":"   "}'"#)])
        .await;
    assert_allowed_with_warnings(&outcome, &[&["without a reason"]]);
}

#[tokio::test]
async fn system_message_is_a_warning() {
    let fx = Fixture::new();
    let outcome = fx
        .run(&[shell(r#"echo '{"systemMessage":"lint is slow today"}'"#)])
        .await;
    assert_eq!(outcome.decision, StopHookDecision::Allow);
    assert_eq!(
        outcome.warnings,
        vec!["stop hook `echo '{\"systemMessage\":\"lint is slow today\"}'`: lint is slow today"]
    );
}

#[tokio::test]
async fn non_zero_exit_is_a_warning_with_stderr() {
    let fx = Fixture::new();
    let hook = fx.script(
        "fail.sh",
        r#"echo '{"decision":"block","reason":"x"}'; echo 'lint crashed' >&2; exit 3"#,
    );
    let outcome = fx.run(&[hook]).await;
    assert_allowed_with_warnings(&outcome, &[&["exit code 3", "lint crashed"]]);
}

#[tokio::test]
async fn spawn_error_is_a_warning() {
    let fx = Fixture::new();
    let hook = StopHookConfig {
        command: HookCommand::Argv(vec!["/nonexistent/weft-hook".into()]),
        timeout_secs: None,
    };
    let outcome = fx.run(&[hook]).await;
    assert_allowed_with_warnings(&outcome, &[&["could not run"]]);
}

#[tokio::test]
async fn timeout_kills_the_hook() {
    let fx = Fixture::new();
    let mut hook = fx.script("slow.sh", "sleep 30");
    hook.timeout_secs = Some(1);
    let started = Instant::now();
    let outcome = fx.run(&[hook]).await;
    // A bound, not a timing assertion: it must not wait for the sleep.
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_allowed_with_warnings(&outcome, &[&["timed out after 1s"]]);
}

#[tokio::test]
async fn cancellation_kills_hooks_without_warnings() {
    let fx = Fixture::new();
    let hooks = [fx.script("slow.sh", "sleep 30")];
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        trigger.cancel();
    });
    let started = Instant::now();
    let outcome = run_stop_hooks(&hooks, &fx.input(), &cancel).await;
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(outcome.decision, StopHookDecision::Allow);
    assert!(outcome.warnings.is_empty());
}

#[tokio::test]
async fn several_hooks_aggregate() {
    let fx = Fixture::new();
    let block_a = shell(r#"echo '{"decision":"block","reason":"first"}'"#);
    let allow = shell("true");
    let broken = shell("echo nope");
    let block_b = shell(r#"echo '{"decision":"block","reason":"second"}'"#);
    let outcome = fx
        .run(&[block_a.clone(), allow, broken, block_b.clone()])
        .await;
    assert_eq!(prompts(&outcome), vec!["first", "second"]);
    assert_eq!(outcome.warnings.len(), 1);
    let StopHookDecision::Continue { prompts } = &outcome.decision else {
        unreachable!()
    };
    assert_ne!(prompts[0].hook_run_id, prompts[1].hook_run_id);

    // Any stop wins over blocks; the first stop reason in config order is kept.
    let stop_a = shell(r#"echo '{"continue":false}'"#);
    let stop_b = shell(r#"echo '{"continue":false,"stopReason":"b"}'"#);
    let stop_c = shell(r#"echo '{"continue":false,"stopReason":"c"}'"#);
    let outcome = fx.run(&[block_a, stop_a, stop_b, block_b, stop_c]).await;
    assert_eq!(
        outcome.decision,
        StopHookDecision::Stop {
            reason: Some("b".into())
        }
    );
}

#[tokio::test]
async fn hooks_run_concurrently() {
    let fx = Fixture::new();
    // The first hook waits for a file only the second one creates: run one after the
    // other, the first would time out.
    let mut waiter = shell(
        r#"while [ ! -f ready ]; do sleep 0.05; done; echo '{"decision":"block","reason":"a"}'"#,
    );
    waiter.timeout_secs = Some(20);
    let maker = shell(r#"touch ready; echo '{"decision":"block","reason":"b"}'"#);
    let outcome = fx.run(&[waiter, maker]).await;
    assert!(outcome.warnings.is_empty(), "{:?}", outcome.warnings);
    assert_eq!(prompts(&outcome), vec!["a", "b"]);
}

#[tokio::test]
async fn hook_receives_input_json_on_stdin_in_cwd() {
    let fx = Fixture::new();
    let hook = fx.script("record.sh", "cat > stdin.json");
    let mut input = fx.input();
    input.stop_hook_active = true;
    let outcome = run_stop_hooks(&[hook], &input, &CancellationToken::new()).await;
    assert_eq!(outcome.decision, StopHookDecision::Allow);
    assert!(outcome.warnings.is_empty(), "{:?}", outcome.warnings);

    let written = std::fs::read_to_string(fx.dir.path().join("stdin.json")).unwrap();
    let value: serde_json::Value = serde_json::from_str(&written).unwrap();
    assert_eq!(
        value,
        serde_json::json!({
            "hook_event_name": "Stop",
            "thread_id": "thr_1",
            "turn_id": "turn_1",
            "cwd": fx.dir.path().display().to_string(),
            "last_agent_message": "All done.",
            "stop_hook_active": true,
        })
    );
}

#[tokio::test]
async fn hook_that_ignores_large_input_does_not_hang() {
    let fx = Fixture::new();
    let mut input = fx.input();
    input.last_agent_message = Some("x".repeat(1 << 20));
    let hooks = [shell("exit 0")];
    let outcome = run_stop_hooks(&hooks, &input, &CancellationToken::new()).await;
    assert_eq!(outcome.decision, StopHookDecision::Allow);
    assert!(outcome.warnings.is_empty(), "{:?}", outcome.warnings);
}

#[tokio::test]
async fn no_hooks_allow() {
    let fx = Fixture::new();
    let outcome = fx.run(&[]).await;
    assert_eq!(outcome.decision, StopHookDecision::Allow);
    assert!(outcome.warnings.is_empty());
}

#[test]
fn config_accepts_string_and_argv_commands() {
    #[derive(Deserialize)]
    struct Config {
        hooks: Hooks,
    }
    #[derive(Deserialize)]
    struct Hooks {
        stop: Vec<StopHookConfig>,
    }
    let config: Config = toml::from_str(
        r#"
            [[hooks.stop]]
            command = "./check.sh --quick"
            timeout = 5

            [[hooks.stop]]
            command = ["python3", "hooks/stop.py"]
            "#,
    )
    .unwrap();
    assert_eq!(
        config.hooks.stop,
        vec![
            StopHookConfig {
                command: HookCommand::Shell("./check.sh --quick".into()),
                timeout_secs: Some(5),
            },
            StopHookConfig {
                command: HookCommand::Argv(vec!["python3".into(), "hooks/stop.py".into()]),
                timeout_secs: None,
            },
        ]
    );
    assert_eq!(config.hooks.stop[0].timeout(), Duration::from_secs(5));
    assert_eq!(config.hooks.stop[1].timeout(), Duration::from_secs(60));

    for bad in [
        r#"command = """#,
        "command = []",
        "command = 3",
        r#"command = "x"
               timout = 5"#,
    ] {
        assert!(
            toml::from_str::<StopHookConfig>(bad).is_err(),
            "accepted {bad}"
        );
    }
}
