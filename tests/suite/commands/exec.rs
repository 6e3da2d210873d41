//! Buffered `command/exec`: the answer's exit code and captures, the environment and cwd, the
//! timeout, the output cap, the sandbox, and the refusals with the reference's texts.

use std::time::{Duration, Instant};

use serde_json::json;
use weft_test_support::Transport;

use super::harness::{Commands, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, sh};

async fn a_buffered_command_answers_its_exit_code_and_both_streams(transport: Transport) {
    let mut t = Commands::start(transport, "").await;
    let answer = t
        .exec_ok(json!({"command": sh("echo out; printf err >&2; exit 3")}))
        .await;
    assert_eq!(
        answer,
        json!({"exitCode": 3, "stdout": "out\n", "stderr": "err"})
    );
    // Overrides merge into the environment (null unsets); a relative cwd is the daemon's
    // cwd's; no shell runs the argv (the `$` stays a word).
    let answer = t
        .exec_ok(json!({
            "command": sh("echo $WEFT_TEST_VAR; echo ${HOME-unset}; pwd; printf %s \"$0\""),
            "env": {"WEFT_TEST_VAR": "set by the client", "HOME": null},
            "cwd": "sub",
        }))
        .await;
    assert_eq!(
        answer["stdout"],
        format!(
            "set by the client\nunset\n{}\nsh",
            t.ws.join("sub").display()
        )
    );
    // The environment is the model's commands' (`[shell_environment_policy]`): no secrets of
    // the daemon's; and the sandbox (workspace-write by default) keeps the network off.
    let answer = t
        .exec_ok(json!({"command": sh("echo ${WEFT_COMMANDS_API_TOKEN-absent} $WEFT_SANDBOX_NETWORK_DISABLED")}))
        .await;
    assert_eq!(answer["stdout"], "absent 1\n");
    let answer = t
        .exec_ok(json!({"command": ["echo", "$HOME", "a b"]}))
        .await;
    assert_eq!(answer["stdout"], "$HOME a b\n");
    assert_eq!(answer["exitCode"], 0);
}

async fn the_timeout_kills_the_command_and_answers_124(transport: Transport) {
    let mut t = Commands::start(transport, "[limits]\ncommand_exec_timeout_ms = 400\n").await;
    let started = Instant::now();
    let answer = t
        .exec_ok(json!({"command": sh("echo before; sleep 30"), "timeoutMs": 300}))
        .await;
    assert_eq!(answer["exitCode"], 124);
    assert_eq!(answer["stdout"], "before\n");
    // The configured default applies when the request sets none.
    let answer = t.exec_ok(json!({"command": ["sleep", "30"]})).await;
    assert_eq!(answer["exitCode"], 124);
    assert!(started.elapsed() < Duration::from_secs(8), "{started:?}");
    // `disableTimeout` outlives the default.
    let answer = t
        .exec_ok(json!({"command": sh("sleep 0.6; echo late"), "disableTimeout": true}))
        .await;
    assert_eq!(
        (answer["exitCode"].clone(), answer["stdout"].clone()),
        (json!(0), json!("late\n"))
    );
}

async fn the_output_cap_truncates_each_stream(transport: Transport) {
    let mut t = Commands::start(transport, "[limits]\ncommand_exec_output_bytes_cap = 6\n").await;
    let hundred = "head -c 100 /dev/zero | tr '\\0' a; head -c 50 /dev/zero | tr '\\0' b >&2";
    let answer = t
        .exec_ok(json!({"command": sh(hundred), "outputBytesCap": 10}))
        .await;
    assert_eq!(
        answer,
        json!({"exitCode": 0, "stdout": "aaaaaaaaaa", "stderr": "bbbbbbbbbb"})
    );
    // The configured cap is the default.
    let answer = t.exec_ok(json!({"command": sh(hundred)})).await;
    assert_eq!(
        (answer["stdout"].as_str(), answer["stderr"].as_str()),
        (Some("aaaaaa"), Some("bbbbbb"))
    );
    let answer = t
        .exec_ok(json!({"command": sh(hundred), "disableOutputCap": true}))
        .await;
    assert_eq!(answer["stdout"].as_str().unwrap().len(), 100);
    assert_eq!(answer["stderr"].as_str().unwrap().len(), 50);
    // A command that writes far past the cap is not blocked by it.
    let answer = t
        .exec_ok(
            json!({"command": sh("head -c 5000000 /dev/zero; echo done >&2"), "outputBytesCap": 1}),
        )
        .await;
    assert_eq!(answer["exitCode"], 0);
    assert_eq!(answer["stderr"], "d");
}

async fn read_only_refuses_a_write_outside_the_workspace(transport: Transport) {
    let mut t = Commands::start(transport, "sandbox_mode = \"read-only\"\n").await;
    let target = t.outside.join("written");
    let write = format!("echo x > {}", target.display());
    // The configured mode is the default policy.
    let answer = t.exec_ok(json!({"command": sh(&write)})).await;
    assert_ne!(answer["exitCode"], 0, "{answer}");
    assert!(!target.exists());
    let answer = t
        .exec_ok(json!({"command": sh(&write), "sandboxPolicy": {"type": "readOnly"}}))
        .await;
    assert_ne!(answer["exitCode"], 0, "{answer}");
    assert!(
        answer["stderr"]
            .as_str()
            .unwrap()
            .contains("ermission denied")
            || answer["stderr"].as_str().unwrap().contains("Read-only"),
        "{answer}"
    );
    assert!(!target.exists());
    // workspaceWrite: the workspace is writable, the outside still is not.
    let inside = t.ws.join("inside");
    let answer = t
        .exec_ok(json!({
            "command": sh(&format!("echo x > {}; echo y > {}", inside.display(), target.display())),
            "sandboxPolicy": {"type": "workspaceWrite", "excludeSlashTmp": true, "excludeTmpdirEnvVar": true},
        }))
        .await;
    assert_ne!(answer["exitCode"], 0, "{answer}");
    assert!(inside.exists() && !target.exists());
    // dangerFullAccess lifts it.
    let answer = t
        .exec_ok(json!({"command": sh(&write), "sandboxPolicy": {"type": "dangerFullAccess"}}))
        .await;
    assert_eq!(answer["exitCode"], 0, "{answer}");
    assert!(target.exists());
}

async fn bad_requests_get_the_reference_errors(transport: Transport) {
    let mut t = Commands::start(transport, "[limits]\ncommand_exec_max_processes = 1\n").await;
    let cases = [
        (
            json!({"command": []}),
            INVALID_REQUEST,
            "command must not be empty",
        ),
        (
            json!({"command": ["true"], "size": {"rows": 2, "cols": 2}}),
            INVALID_PARAMS,
            "command/exec size requires tty: true",
        ),
        (
            json!({"command": ["true"], "outputBytesCap": 1, "disableOutputCap": true}),
            INVALID_PARAMS,
            "command/exec cannot set both outputBytesCap and disableOutputCap",
        ),
        (
            json!({"command": ["true"], "timeoutMs": 1, "disableTimeout": true}),
            INVALID_PARAMS,
            "command/exec cannot set both timeoutMs and disableTimeout",
        ),
        (
            json!({"command": ["true"], "timeoutMs": -1}),
            INVALID_PARAMS,
            "command/exec timeoutMs must be non-negative, got -1",
        ),
        (
            json!({"command": ["true"], "tty": true, "processId": "z", "size": {"rows": 0, "cols": 2}}),
            INVALID_PARAMS,
            "command/exec size rows and cols must be greater than 0",
        ),
        (
            json!({"command": ["true"], "streamStdoutStderr": true}),
            INVALID_REQUEST,
            "command/exec tty or streaming requires a client-supplied processId",
        ),
        (
            json!({"command": ["true"], "tty": true}),
            INVALID_REQUEST,
            "command/exec tty or streaming requires a client-supplied processId",
        ),
        (
            json!({"command": ["true"], "permissionProfile": ":workspace"}),
            INVALID_REQUEST,
            "command/exec.permissionProfile requires experimentalApi capability",
        ),
        (
            json!({"command": ["/no/such/program"]}),
            INTERNAL_ERROR,
            "failed to spawn command: No such file or directory (os error 2)",
        ),
        (
            json!({"command": ["true"], "cwd": "/no/such/dir"}),
            INTERNAL_ERROR,
            "failed to spawn command: No such file or directory (os error 2)",
        ),
    ];
    for (params, code, message) in cases {
        let error = t.exec(params.clone()).await.unwrap_err();
        assert_eq!(
            (error.code, error.message.as_str()),
            (code, message),
            "{params}"
        );
    }
    // With the opt-in, the experimental permissionProfile picks a built-in profile.
    if transport == Transport::Ws {
        let mut experimental = t.daemon.client().await;
        experimental.initialize_experimental().await;
        let target = t.outside.join("profiled");
        let write = format!("echo x > {}", target.display());
        for (profile, written) in [(":read-only", false), (":danger-full-access", true)] {
            let answer = experimental
                .request_ok(
                    "command/exec",
                    json!({"command": sh(&write), "permissionProfile": profile}),
                )
                .await;
            assert_eq!(answer["exitCode"] == 0, written, "{profile}: {answer}");
            assert_eq!(target.exists(), written, "{profile}");
        }
        for (params, message) in [
            (
                json!({"command": ["true"], "permissionProfile": ":workspace", "sandboxPolicy": {"type": "readOnly"}}),
                "`permissionProfile` cannot be combined with `sandboxPolicy`",
            ),
            (
                json!({"command": ["true"], "permissionProfile": ":nope"}),
                "invalid permission profile: default_permissions refers to unknown built-in profile `:nope`",
            ),
        ] {
            let error = experimental.request_err("command/exec", params).await;
            assert_eq!(
                (error.code, error.message.as_str()),
                (INVALID_REQUEST, message)
            );
        }
    }
    // Follow-ups for a process that does not run.
    for (method, params) in [
        (
            "command/exec/write",
            json!({"processId": "ghost", "closeStdin": true}),
        ),
        (
            "command/exec/resize",
            json!({"processId": "ghost", "size": {"rows": 1, "cols": 1}}),
        ),
        ("command/exec/terminate", json!({"processId": "ghost"})),
    ] {
        let error = t.refused(method, params).await;
        assert_eq!(
            (error.code, error.message.as_str()),
            (
                INVALID_REQUEST,
                "no active command/exec for process id \"ghost\""
            ),
            "{method}"
        );
    }
    let error = t
        .refused("command/exec/write", json!({"processId": "ghost"}))
        .await;
    assert_eq!(
        (error.code, error.message.as_str()),
        (
            INVALID_PARAMS,
            "command/exec/write requires deltaBase64 or closeStdin"
        )
    );
    let error = t
        .refused(
            "command/exec/write",
            json!({"processId": "ghost", "deltaBase64": "!!"}),
        )
        .await;
    assert_eq!(
        (error.code, error.message.as_str()),
        (
            INVALID_PARAMS,
            "invalid deltaBase64: Invalid symbol 33, offset 0."
        )
    );
    // One running process (the limit here): a second is refused, the same id twice too.
    let id = t
        .client
        .send_request(
            "command/exec",
            json!({"command": ["sleep", "30"], "processId": "busy"}),
        )
        .await;
    let error = t
        .exec(json!({"command": ["sleep", "30"], "processId": "busy"}))
        .await
        .unwrap_err();
    assert_eq!(
        (error.code, error.message.as_str()),
        (
            INVALID_REQUEST,
            "duplicate active command/exec process id: \"busy\""
        )
    );
    let error = t.exec(json!({"command": ["true"]})).await.unwrap_err();
    assert_eq!(error.code, INVALID_REQUEST);
    assert!(
        error.message.contains("command_exec_max_processes"),
        "{}",
        error.message
    );
    // A process without streamStdin takes no input, a pipe no resize.
    let error = t
        .refused(
            "command/exec/write",
            json!({"processId": "busy", "deltaBase64": "aGk="}),
        )
        .await;
    assert_eq!(
        (error.code, error.message.as_str()),
        (
            INVALID_REQUEST,
            "stdin streaming is not enabled for this command/exec"
        )
    );
    let error = t
        .refused(
            "command/exec/resize",
            json!({"processId": "busy", "size": {"rows": 5, "cols": 5}}),
        )
        .await;
    assert_eq!(
        (error.code, error.message.as_str()),
        (
            INVALID_REQUEST,
            "failed to resize PTY: process is not attached to a PTY"
        )
    );
    t.client
        .request_ok("command/exec/terminate", json!({"processId": "busy"}))
        .await;
    let answer = t.client.response_to(&id).await.unwrap();
    assert_eq!(answer, json!({"exitCode": 137, "stdout": "", "stderr": ""}));
    // The id is free again, and so is the slot.
    let answer = t
        .exec_ok(json!({"command": ["true"], "processId": "busy"}))
        .await;
    assert_eq!(answer["exitCode"], 0);
}

on_both_transports!(
    a_buffered_command_answers_its_exit_code_and_both_streams,
    the_timeout_kills_the_command_and_answers_124,
    the_output_cap_truncates_each_stream,
    read_only_refuses_a_write_outside_the_workspace,
    bad_requests_get_the_reference_errors,
);
