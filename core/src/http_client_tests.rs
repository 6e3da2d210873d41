//! [`build_http_client`] and `[http]`: user agent, connect and read timeouts, CA bundles.

use std::time::{Duration, Instant};

use weft_mock_model::{MockModel, Reply};
use weft_test_support::BlackHole;

use super::*;

/// A self-signed CA (EC P-256) made for these tests only; `localhost.pem` (IP 127.0.0.1) is
/// signed by it.
pub(crate) const TEST_CA: &str = include_str!("../testdata/http/ca.pem");

/// Generous bound for "fails within the timeout" (the configured timeouts are far smaller).
const BOUND: Duration = Duration::from_secs(20);

fn parse(toml: &str) -> HttpConfig {
    toml::from_str(toml).unwrap()
}

fn validate(config: HttpConfig, home: &Path) -> Result<HttpConfig, String> {
    config
        .validated(home, &home.join("config.toml"))
        .map_err(|err| err.to_string())
}

#[test]
fn defaults_and_keys() {
    let defaults = HttpConfig::default();
    assert_eq!(parse(""), defaults);
    assert_eq!(defaults.connect_timeout_ms, 10_000);
    assert_eq!(defaults.read_timeout_ms, 300_000);
    let config = parse(
        "connect_timeout_ms = 1500\nread_timeout_ms = 2500\npool_max_idle_per_host = 2\n\
         pool_idle_timeout_secs = 5\nca_certificate = \"ca.pem\"\n",
    );
    assert_eq!(
        config,
        HttpConfig {
            connect_timeout_ms: 1500,
            read_timeout_ms: 2500,
            pool_max_idle_per_host: 2,
            pool_idle_timeout_secs: 5,
            ca_certificate: Some(PathBuf::from("ca.pem")),
        }
    );
    assert!(toml::from_str::<HttpConfig>("connect_timeout_ms = \"fast\"").is_err());
}

#[test]
fn validation_names_the_key() {
    let home = tempfile::tempdir().unwrap();
    let zero = validate(parse("connect_timeout_ms = 0"), home.path()).unwrap_err();
    assert!(
        zero.contains("http.connect_timeout_ms") && zero.contains("at least 1"),
        "{zero}"
    );
    let zero = validate(parse("read_timeout_ms = 0"), home.path()).unwrap_err();
    assert!(zero.contains("http.read_timeout_ms"), "{zero}");

    let missing = validate(parse("ca_certificate = \"nope.pem\""), home.path()).unwrap_err();
    assert!(
        missing.contains("http.ca_certificate") && missing.contains("nope.pem"),
        "{missing}"
    );
    std::fs::write(home.path().join("empty.pem"), "not a certificate\n").unwrap();
    let empty = validate(parse("ca_certificate = \"empty.pem\""), home.path()).unwrap_err();
    assert!(empty.contains("no PEM certificate"), "{empty}");

    std::fs::write(home.path().join("ca.pem"), TEST_CA).unwrap();
    let config = validate(parse("ca_certificate = \"ca.pem\""), home.path()).unwrap();
    assert_eq!(config.ca_certificate, Some(home.path().join("ca.pem")));
    build_with_env(&config, HttpUse::Model, |_| None).unwrap();
}

#[test]
fn ssl_cert_file_is_an_extra_bundle() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.pem");
    std::fs::write(&bad, "garbage").unwrap();
    let env =
        |file: PathBuf| move |name: &str| (name == SSL_CERT_FILE).then(|| file.clone().into());
    let err = build_with_env(&HttpConfig::default(), HttpUse::Model, env(bad)).unwrap_err();
    let message = err.to_string();
    assert!(
        message.contains("SSL_CERT_FILE") && message.contains("bad.pem"),
        "{message}"
    );
    let good = dir.path().join("ca.pem");
    std::fs::write(&good, TEST_CA).unwrap();
    build_with_env(&HttpConfig::default(), HttpUse::Mcp, env(good)).unwrap();
    // A bundle that went away after start-up is reported by the client build, naming the key.
    let config = HttpConfig {
        ca_certificate: Some(dir.path().join("gone.pem")),
        ..HttpConfig::default()
    };
    let err = build_with_env(&config, HttpUse::Model, |_| None).unwrap_err();
    assert!(err.to_string().contains("[http] ca_certificate"), "{err}");
}

#[tokio::test]
async fn requests_carry_weft_user_agent() {
    let mock = MockModel::start().await.unwrap();
    for purpose in [HttpUse::Model, HttpUse::Mcp] {
        let client = build_http_client(&HttpConfig::default(), purpose).unwrap();
        let response = client
            .get(format!("{}/models", mock.base_url()))
            .send()
            .await
            .unwrap();
        assert!(response.status().is_success());
    }
    let requests = mock.all_requests();
    assert_eq!(requests.len(), 2);
    for request in requests {
        assert_eq!(request.header("user-agent"), Some(USER_AGENT));
    }
    assert_eq!(USER_AGENT, concat!("weft/", env!("CARGO_PKG_VERSION")));
}

#[tokio::test]
async fn connect_timeout_is_the_configured_one() {
    let hole = BlackHole::start().await;
    let addr = hole.addr;
    let config = HttpConfig {
        connect_timeout_ms: 300,
        ..HttpConfig::default()
    };
    let client = build_http_client(&config, HttpUse::Model).unwrap();
    let started = Instant::now();
    let err = tokio::time::timeout(BOUND, client.get(format!("http://{addr}/v1/models")).send())
        .await
        .expect("the connect timeout must end the request")
        .unwrap_err();
    assert!(err.is_connect() && err.is_timeout(), "{err:?}");
    assert!(started.elapsed() < BOUND);
}

#[tokio::test]
async fn read_timeout_applies_to_model_requests_only() {
    let mock = MockModel::start().await.unwrap();
    let config = HttpConfig {
        read_timeout_ms: 200,
        ..HttpConfig::default()
    };
    let url = format!("{}/responses", mock.base_url());
    mock.push(Reply::new().stall().responses());
    let model = build_http_client(&config, HttpUse::Model).unwrap();
    let err = tokio::time::timeout(BOUND, async {
        let response = model.post(&url).body("{}").send().await?;
        response.bytes().await
    })
    .await
    .expect("the read timeout must end the request")
    .unwrap_err();
    assert!(err.is_timeout(), "{err:?}");

    mock.push(Reply::new().stall().responses());
    let mcp = build_http_client(&config, HttpUse::Mcp).unwrap();
    let response = mcp.post(&url).body("{}").send().await.unwrap();
    let read = tokio::time::timeout(Duration::from_secs(1), response.bytes()).await;
    assert!(read.is_err(), "an MCP stream may stay silent: {read:?}");
}
