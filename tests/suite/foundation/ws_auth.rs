//! `--ws-auth signed-bearer-token` and `--ws-token-sha256` against the real binary: the
//! upgrade needs an HS256 JWT signed with the shared secret (or the token whose digest was
//! given), with the reference's 401 texts otherwise (docs/protocol.md §2.4).

use std::time::{SystemTime, UNIX_EPOCH};

use jsonwebtoken::{EncodingKey, Header};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use weft_test_support::{Client, Daemon, TestHome, run_weft};

const SECRET: &str = "a-shared-secret-of-at-least-32-bytes!";

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

fn jwt(claims: Value, secret: &str) -> String {
    jsonwebtoken::encode(
        &Header::default(),
        &claims,
        &EncodingKey::from_secret(secret.as_bytes()),
    )
    .unwrap()
}

async fn refused(url: &str, bearer: &str) -> u16 {
    let header = format!("Bearer {bearer}");
    match Client::connect_ws_with_headers(url, &[("Authorization", header.as_str())]).await {
        Err(err) => err.status().unwrap_or(0),
        Ok(_) => panic!("upgrade with {bearer:?} was accepted"),
    }
}

#[tokio::test]
async fn signed_bearer_tokens() {
    let home = TestHome::new();
    let secret = home.write_file("ws-secret", &format!("{SECRET}\n"));
    let daemon = Daemon::ws(
        &home,
        &[
            "--ws-auth",
            "signed-bearer-token",
            "--ws-shared-secret-file",
            secret.to_str().unwrap(),
            "--ws-issuer",
            "gateway",
            "--ws-audience",
            "weft",
            "--ws-max-clock-skew-seconds",
            "5",
        ],
    )
    .await;
    let url = daemon.ws_url();
    let t = now();
    let wrong = [
        json!({"exp": t - 60, "iss": "gateway", "aud": "weft"}),
        json!({"exp": t + 60, "nbf": t + 60, "iss": "gateway", "aud": "weft"}),
        json!({"exp": t + 60, "iss": "someone-else", "aud": "weft"}),
        json!({"exp": t + 60, "iss": "gateway", "aud": ["other"]}),
        json!({"iss": "gateway", "aud": "weft"}),
    ];
    for claims in wrong {
        assert_eq!(
            refused(&url, &jwt(claims.clone(), SECRET)).await,
            401,
            "{claims}"
        );
    }
    let forged = jwt(
        json!({"exp": t + 60, "iss": "gateway", "aud": "weft"}),
        "another-secret-of-at-least-32-bytes!!",
    );
    assert_eq!(refused(&url, &forged).await, 401);
    let good = jwt(
        json!({"exp": t + 60, "iss": "gateway", "aud": ["x", "weft"]}),
        SECRET,
    );
    let header = format!("Bearer {good}");
    let mut client = Client::connect_ws_with_headers(&url, &[("Authorization", header.as_str())])
        .await
        .expect("a valid signed token is accepted");
    client.initialize().await;
}

#[tokio::test]
async fn capability_token_by_its_digest() {
    let home = TestHome::new();
    let digest: String = Sha256::digest(b"only-the-digest-is-given")
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let daemon = Daemon::ws(
        &home,
        &[
            "--ws-auth",
            "capability-token",
            "--ws-token-sha256",
            &digest,
        ],
    )
    .await;
    let url = daemon.ws_url();
    assert_eq!(refused(&url, "only-the-digest-is-give").await, 401);
    let mut client = Client::connect_ws_with_headers(
        &url,
        &[("Authorization", "Bearer only-the-digest-is-given")],
    )
    .await
    .expect("the token whose digest was given is accepted");
    client.initialize().await;
}

/// Flags that do not make a policy stop the daemon at start (exit 2) with the reference's text.
#[tokio::test]
async fn inconsistent_auth_flags_exit_2() {
    let home = TestHome::new();
    let short = home.write_file("short-secret", "short");
    let cases: [(Vec<&str>, &str); 3] = [
        (
            vec!["--ws-token-sha256", "00"],
            "websocket auth flags require `--ws-auth capability-token` or `--ws-auth signed-bearer-token`",
        ),
        (
            vec![
                "--ws-auth",
                "signed-bearer-token",
                "--ws-shared-secret-file",
                short.to_str().unwrap(),
            ],
            "must be at least 32 bytes",
        ),
        (
            vec![
                "--ws-auth",
                "signed-bearer-token",
                "--ws-token-file",
                "/x",
                "--ws-shared-secret-file",
                "/y",
            ],
            "require `--ws-auth capability-token`, not `signed-bearer-token`",
        ),
    ];
    for (flags, text) in cases {
        let mut args = vec!["app-server", "--listen", "ws://127.0.0.1:0"];
        args.extend(flags.iter().copied());
        let output = run_weft(&home, &args).await;
        assert_eq!(output.code(), Some(2), "{flags:?}: {output:?}");
        assert!(output.stderr.contains(text), "{flags:?}: {}", output.stderr);
    }
}
