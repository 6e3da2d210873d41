use axum::http::HeaderValue;
use clap::Parser;
use jsonwebtoken::{EncodingKey, Header};
use serde_json::{Value, json};

use super::*;
use crate::cli::{Cli, Command};

const SECRET: &str = "0123456789abcdef0123456789abcdef-secret";

fn args(extra: &[&str]) -> AppServerArgs {
    let mut argv = vec!["weft", "app-server", "--listen", "ws://127.0.0.1:0"];
    argv.extend_from_slice(extra);
    match Cli::try_parse_from(argv).unwrap().command {
        Command::AppServer(args) => args,
        Command::GenerateJsonSchema { .. } => unreachable!(),
    }
}

fn headers(value: &str) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(header::AUTHORIZATION, HeaderValue::from_str(value).unwrap());
    headers
}

fn signed(claims: Value, secret: &str) -> String {
    jsonwebtoken::encode(
        &Header::default(),
        &claims,
        &EncodingKey::from_secret(secret.as_bytes()),
    )
    .unwrap()
}

fn policy() -> SignedBearer {
    SignedBearer {
        secret: SECRET.as_bytes().to_vec(),
        issuer: Some("weft-tests".into()),
        audience: Some("weft".into()),
        max_clock_skew_seconds: 30,
    }
}

#[test]
fn signed_bearer_claims_are_checked_within_the_skew() {
    let policy = policy();
    let now = 1_000_000;
    let good = json!({"exp": now + 60, "iss": "weft-tests", "aud": ["other", "weft"]});
    assert_eq!(policy.verify(&signed(good.clone(), SECRET), now), Ok(()));
    let cases = [
        (
            json!({"exp": now - 31, "iss": "weft-tests", "aud": "weft"}),
            SECRET,
            "expired websocket jwt",
        ),
        (
            json!({"exp": now + 60, "nbf": now + 31, "iss": "weft-tests", "aud": "weft"}),
            SECRET,
            "websocket jwt is not valid yet",
        ),
        (
            json!({"exp": now + 60, "iss": "someone", "aud": "weft"}),
            SECRET,
            "websocket jwt issuer mismatch",
        ),
        (
            json!({"exp": now + 60, "iss": "weft-tests"}),
            SECRET,
            "websocket jwt audience mismatch",
        ),
        (
            good,
            "another-secret-another-secret-another",
            "invalid websocket jwt",
        ),
    ];
    for (claims, secret, refusal) in cases {
        assert_eq!(policy.verify(&signed(claims, secret), now), Err(refusal));
    }
    // Inside the skew, an expired or not-yet-valid token passes.
    let edge = json!({"exp": now - 29, "nbf": now + 29, "iss": "weft-tests", "aud": "weft"});
    assert_eq!(policy.verify(&signed(edge, SECRET), now), Ok(()));
    assert_eq!(
        policy.verify("not.a.jwt", now),
        Err("invalid websocket jwt")
    );
}

#[test]
fn capability_token_by_digest_and_the_header_forms() {
    let digest_hex: String = digest(b"s3cret")
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let auth = WsAuth::from_args(&args(&[
        "--ws-auth",
        "capability-token",
        "--ws-token-sha256",
        &digest_hex.to_uppercase(),
    ]))
    .unwrap();
    assert_eq!(auth.authorize(&headers("Bearer s3cret")), Ok(()));
    assert_eq!(auth.authorize(&headers("bearer  s3cret ")), Ok(()));
    assert_eq!(
        auth.authorize(&headers("Bearer s3cre")),
        Err("invalid websocket bearer token")
    );
    assert_eq!(
        auth.authorize(&headers("Basic s3cret")),
        Err("invalid authorization header")
    );
    assert_eq!(
        auth.authorize(&HeaderMap::new()),
        Err("missing websocket bearer token")
    );
    assert_eq!(WsAuth::None.authorize(&HeaderMap::new()), Ok(()));
}

#[test]
fn flag_combinations_are_refused_as_the_reference_does() {
    let dir = tempfile::tempdir().unwrap();
    let short = dir.path().join("short");
    std::fs::write(&short, "too short\n").unwrap();
    let empty = dir.path().join("empty");
    std::fs::write(&empty, " \n").unwrap();
    let short = short.to_str().unwrap();
    let empty = empty.to_str().unwrap();
    let cases: [(&[&str], &str); 9] = [
        (
            &["--ws-token-file", "/x"],
            "require `--ws-auth capability-token` or",
        ),
        (
            &["--ws-auth", "capability-token"],
            "is required when `--ws-auth capability-token`",
        ),
        (
            &[
                "--ws-auth",
                "capability-token",
                "--ws-token-file",
                "/x",
                "--ws-token-sha256",
                "ab",
            ],
            "mutually exclusive",
        ),
        (
            &[
                "--ws-auth",
                "capability-token",
                "--ws-token-file",
                "/x",
                "--ws-issuer",
                "i",
            ],
            "require `--ws-auth signed-bearer-token`",
        ),
        (
            &["--ws-auth", "capability-token", "--ws-token-file", "rel"],
            "--ws-token-file must be an absolute path",
        ),
        (
            &["--ws-auth", "capability-token", "--ws-token-sha256", "abc"],
            "64-character hex",
        ),
        (
            &["--ws-auth", "signed-bearer-token"],
            "`--ws-shared-secret-file` is required",
        ),
        (
            &[
                "--ws-auth",
                "signed-bearer-token",
                "--ws-shared-secret-file",
                short,
            ],
            "at least 32 bytes",
        ),
        (
            &[
                "--ws-auth",
                "signed-bearer-token",
                "--ws-shared-secret-file",
                empty,
            ],
            "must not be empty",
        ),
    ];
    for (flags, text) in cases {
        let err = WsAuth::from_args(&args(flags)).unwrap_err().to_string();
        assert!(err.contains(text), "{flags:?}: {err}");
    }
}
