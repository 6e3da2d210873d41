//! The model's commands: the `untrusted` policy cannot be talked past with shell expansions
//! (scripts are read with a real bash parser), and commands do not see the daemon's secrets
//! (`[shell_environment_policy]`). See `docs/protocol.md` §9 and `docs/architecture.md` §8.2.

use serde_json::json;
use weft_mock_model::{MockModel, Reply, WireApi};
use weft_test_support::{Daemon, TestHome, Transport, mock_model_config};

use crate::tools::{Tools, answer, cmd, exec_call, wait_request};
use crate::turns::Harness;
use crate::turns::read_through_turn_ending;

const COMMAND_APPROVAL: &str = "item/commandExecution/requestApproval";

/// Values no command may print (the variables are set in the daemon's environment).
const SECRETS: &[(&str, &str)] = &[
    ("OPENAI_API_KEY", "sk-weft-e2e-openai"),
    ("AWS_SECRET_ACCESS_KEY", "weft-e2e-aws-secret"),
    ("GITHUB_TOKEN", "ghp_weft_e2e_token"),
];

/// The provider's `env_key` in [`start`]'s config.
const PROVIDER_KEY: &str = "WEFT_E2E_PROVIDER_CREDENTIAL";
const PROVIDER_KEY_VALUE: &str = "weft-e2e-provider-credential";

/// A daemon on the mock model whose environment holds [`SECRETS`], `MY_VAR=visible` and the
/// provider's key ([`PROVIDER_KEY`], its `env_key`), started with `args`.
async fn start(args: &[&str]) -> Tools {
    let mock = MockModel::start().await.expect("start the mock model");
    let home = TestHome::new();
    let mut config = mock_model_config(&mock.base_url(), "responses");
    config.push_str(&format!("env_key = \"{PROVIDER_KEY}\"\n"));
    home.write_config(&config);
    let mut builder = Daemon::builder(&home)
        .listen(Transport::Stdio.listen_url())
        .args(args)
        .env("MY_VAR", "visible")
        .env(PROVIDER_KEY, PROVIDER_KEY_VALUE);
    for (name, value) in SECRETS {
        builder = builder.env(name, value);
    }
    let mut daemon = builder.start().await;
    let client = daemon.initialized_client().await;
    let ws = home.path().join("ws");
    std::fs::create_dir_all(&ws).expect("create the workspace");
    let ws = std::fs::canonicalize(&ws).expect("canonical workspace");
    Tools {
        h: Harness {
            mock,
            home,
            daemon,
            client,
            wire_api: WireApi::Responses,
        },
        ws,
    }
}

/// Runs `env` as the model (policy `never`, no sandbox) and returns what the model got back.
async fn env_seen_by_the_model(t: &mut Tools) -> String {
    t.push(exec_call("call_env", cmd("/usr/bin/env")));
    t.push(Reply::new().text("Done."));
    let thread = t.thread("never", "danger-full-access").await;
    t.h.start_turn(&thread, "print the environment").await;
    read_through_turn_ending(&mut t.h.client, "completed").await;
    t.h.output_in(2, "call_env").await
}

fn assert_no_secrets(output: &str) {
    for (name, value) in SECRETS {
        assert!(!output.contains(value), "{name}'s value leaked: {output}");
        assert!(!output.contains(name), "{name} leaked: {output}");
    }
    assert!(
        !output.contains(PROVIDER_KEY_VALUE) && !output.contains(PROVIDER_KEY),
        "the provider's key leaked: {output}"
    );
}

/// The exploit of issue 11: `${x:=…}` assigns a string holding a command substitution and
/// `${x@P}` expands it as a prompt string, which runs it. It must ask first.
#[tokio::test]
async fn shell_expansions_ask_under_untrusted() {
    let mut t = Tools::start(Transport::Stdio).await;
    let marker = t.path("PWNED");
    let exploit = format!(
        "echo ${{x:='$(touch {})'}} ; echo ${{x@P}}",
        marker.display()
    );
    t.push(exec_call("call_exploit", cmd(&exploit)));
    let thread = t.thread("untrusted", "danger-full-access").await;
    t.h.start_turn(&thread, "look around").await;
    let request = wait_request(&mut t.h.client, COMMAND_APPROVAL).await;
    assert_eq!(request["params"]["itemId"], "call_exploit");
    assert!(!marker.exists(), "the command ran before the approval");
    t.push(Reply::new().text("Understood."));
    answer(&mut t.h.client, &request, json!({"decision": "decline"})).await;
    read_through_turn_ending(&mut t.h.client, "completed").await;
    assert!(!marker.exists(), "a declined command ran");
    t.finish().await;
}

/// By default a command gets the daemon's environment without `*KEY*`, `*SECRET*`, `*TOKEN*`
/// and the provider's key, plus Weft's own variables.
#[tokio::test]
async fn commands_do_not_see_the_daemons_secrets() {
    let mut t = start(&[]).await;
    let output = env_seen_by_the_model(&mut t).await;
    assert!(output.contains("MY_VAR=visible"), "{output}");
    assert!(output.contains("TERM=dumb"), "{output}");
    assert_no_secrets(&output);
    t.finish().await;
}

/// `inherit = "none"`: nothing of the daemon's environment, Weft's own variables still set.
#[tokio::test]
async fn inherit_none_passes_nothing_on() {
    let mut t = start(&["-c", "shell_environment_policy.inherit=\"none\""]).await;
    let output = env_seen_by_the_model(&mut t).await;
    assert!(!output.contains("MY_VAR"), "{output}");
    assert!(output.contains("TERM=dumb"), "{output}");
    assert_no_secrets(&output);
    t.finish().await;
}

/// The provider's `env_key` is removed even when the default excludes are turned off.
#[tokio::test]
async fn the_providers_key_is_always_left_out() {
    let mut t = start(&[
        "-c",
        "shell_environment_policy.ignore_default_excludes=true",
        "-c",
        "shell_environment_policy.set.EXTRA=\"from-config\"",
    ])
    .await;
    let output = env_seen_by_the_model(&mut t).await;
    assert!(
        output.contains("GITHUB_TOKEN=ghp_weft_e2e_token"),
        "{output}"
    );
    assert!(output.contains("EXTRA=from-config"), "{output}");
    assert!(
        !output.contains(PROVIDER_KEY_VALUE) && !output.contains(PROVIDER_KEY),
        "the provider's key leaked: {output}"
    );
    t.finish().await;
}
