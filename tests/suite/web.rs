//! The web client's access (docs/web.md): the page and its sign-in, the session cookie, the
//! origins a browser's socket is admitted from, the token as a subprotocol or a query
//! parameter, the security headers, and `--no-web`. Driven over raw HTTP and WebSocket
//! upgrades that carry what a browser sends (`Origin`, `Cookie`, `Sec-WebSocket-Protocol`).

use weft_test_support::{Client, Daemon, TestHome, http_request};

mod browser;

/// A WebSocket daemon with the web client on, and its sign-in URL's token (from
/// `$WEFT_HOME/web-sign-in.url`, once it says it has written it).
async fn web_daemon(args: &[&str]) -> (TestHome, Daemon, String) {
    let home = TestHome::new();
    let daemon = Daemon::ws(&home, args).await;
    daemon.wait_for_stderr("web client at").await;
    let url = std::fs::read_to_string(home.path().join("web-sign-in.url")).unwrap();
    let prefix = format!("http://{}/?token=", daemon.ws_addr());
    let token = url.trim().strip_prefix(&prefix).unwrap_or_else(|| {
        panic!("the sign-in URL {url:?} is not {prefix}TOKEN");
    });
    (home, daemon, token.to_string())
}

/// The `name=value` of a `Set-Cookie` header.
fn cookie_of(set_cookie: &str) -> String {
    set_cookie.split(';').next().unwrap().trim().to_string()
}

async fn upgrade(daemon: &Daemon, path: &str, headers: &[(&str, &str)]) -> Result<Client, u16> {
    let url = format!("{}{path}", daemon.ws_url());
    Client::connect_ws_with_headers(&url, headers)
        .await
        .map_err(|err| {
            err.status()
                .unwrap_or_else(|| panic!("upgrade failed: {err}"))
        })
}

#[tokio::test]
async fn the_sign_in_url_sets_a_strict_session_cookie_and_serves_the_client() {
    let (home, daemon, token) = web_daemon(&[]).await;
    let addr = daemon.ws_addr();
    let mode = {
        use std::os::unix::fs::PermissionsExt;
        let meta = std::fs::metadata(home.path().join("web-sign-in.url")).unwrap();
        meta.permissions().mode() & 0o777
    };
    assert_eq!(mode, 0o600, "the sign-in file is the user's alone");
    assert!(
        !daemon.stderr().contains(&token),
        "the token is never in the log"
    );

    let before = http_request(addr, "GET", "/", &[]).await;
    assert_eq!(before.status, 401, "the page without sign-in");
    assert!(before.body_text().contains("sign-in URL"));
    let wrong = http_request(addr, "GET", "/?token=0123", &[]).await;
    assert_eq!(wrong.status, 401, "a wrong token");
    assert!(wrong.header("set-cookie").is_none());

    let signed_in = http_request(addr, "GET", &format!("/?token={token}"), &[]).await;
    assert_eq!(signed_in.status, 200);
    let set_cookie = signed_in.header("set-cookie").expect("a session cookie");
    for attribute in ["HttpOnly", "SameSite=Strict", "Path=/"] {
        assert!(set_cookie.contains(attribute), "{set_cookie}");
    }
    assert!(!set_cookie.contains(&token), "the cookie is not the token");
    assert!(signed_in.body_text().contains("/assets/app.js"));
    assert_eq!(signed_in.header("cache-control"), Some("no-store"));

    let cookie = cookie_of(set_cookie);
    let again = http_request(addr, "GET", "/", &[("Cookie", &cookie)]).await;
    assert_eq!(again.status, 200, "the cookie signs the page in");
    let script = http_request(addr, "GET", "/assets/app.js", &[]).await;
    assert_eq!(script.status, 200);
    assert!(
        script
            .header("content-type")
            .unwrap()
            .starts_with("text/javascript")
    );
    let missing = http_request(addr, "GET", "/assets/../Cargo.toml", &[]).await;
    assert_eq!(missing.status, 404);
}

#[tokio::test]
async fn every_response_carries_the_security_headers() {
    let (_home, daemon, token) = web_daemon(&[]).await;
    let addr = daemon.ws_addr();
    let signed_in = format!("/?token={token}");
    for path in [
        "/",
        signed_in.as_str(),
        "/assets/app.css",
        "/healthz",
        "/nope",
    ] {
        let response = http_request(addr, "GET", path, &[]).await;
        let csp = response
            .header("content-security-policy")
            .unwrap_or_else(|| panic!("GET {path}: no CSP"));
        assert!(csp.contains("script-src 'self'"), "GET {path}: {csp}");
        assert!(!csp.contains("unsafe-inline") && !csp.contains("unsafe-eval"));
        assert!(csp.contains("frame-ancestors 'none'"), "GET {path}: {csp}");
        for (name, value) in [
            ("x-content-type-options", "nosniff"),
            ("referrer-policy", "no-referrer"),
            ("x-frame-options", "DENY"),
            ("cross-origin-opener-policy", "same-origin"),
            ("cross-origin-resource-policy", "same-origin"),
        ] {
            assert_eq!(response.header(name), Some(value), "GET {path}: {name}");
        }
    }
}

#[tokio::test]
async fn a_browser_socket_needs_an_admitted_origin_and_a_sign_in() {
    let allowed = "web.allowed_origins=[\"http://localhost:3000\"]";
    let (_home, daemon, token) = web_daemon(&["-c", allowed]).await;
    let addr = daemon.ws_addr();
    let own = format!("http://{addr}");
    let by_query = format!("/?token={token}");
    let protocols = format!("weft.jsonrpc, weft.token.{token}");

    // A foreign page is refused whatever it carries.
    for origin in ["http://evil.example", "null", "http://localhost:3001"] {
        let refused = upgrade(&daemon, &by_query, &[("Origin", origin)]).await;
        assert_eq!(refused.err(), Some(403), "Origin {origin}");
    }
    // An admitted origin that has not signed in is unauthorised.
    for origin in [own.as_str(), "http://localhost:3000"] {
        let refused = upgrade(&daemon, "/", &[("Origin", origin)]).await;
        assert_eq!(refused.err(), Some(401), "Origin {origin} without sign-in");
        let wrong = upgrade(&daemon, "/?token=00", &[("Origin", origin)]).await;
        assert_eq!(wrong.err(), Some(401), "Origin {origin} with a wrong token");
    }

    // The dev server's page, with the token as a query parameter or as a subprotocol (the
    // client fails the upgrade unless the daemon answers with one it offered: weft.jsonrpc).
    let mut client = upgrade(&daemon, &by_query, &[("Origin", "http://localhost:3000")])
        .await
        .unwrap();
    client.initialize().await;
    let headers = [
        ("Origin", "http://localhost:3000"),
        ("Sec-WebSocket-Protocol", protocols.as_str()),
    ];
    let mut client = upgrade(&daemon, "/", &headers).await.unwrap();
    client.initialize().await;

    // The daemon's own page, with the cookie its sign-in set.
    let signed_in = http_request(addr, "GET", &by_query, &[]).await;
    let cookie = cookie_of(signed_in.header("set-cookie").unwrap());
    let headers = [("Origin", own.as_str()), ("Cookie", cookie.as_str())];
    let mut client = upgrade(&daemon, "/", &headers).await.unwrap();
    client.initialize().await;
    let listed = client
        .request("thread/list", serde_json::json!({}))
        .await
        .unwrap();
    assert!(listed["data"].is_array(), "{listed}");

    // Clients that are not browsers (no Origin) are admitted as before.
    let mut client = Client::connect_ws(&daemon.ws_url()).await;
    client.initialize().await;
}

/// A page on a name that resolves to the daemon but is not one of its own (DNS rebinding) is
/// refused, page and socket alike, even with the token.
#[tokio::test]
async fn a_foreign_host_name_is_refused() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (_home, daemon, token) = web_daemon(&[]).await;
    let addr = daemon.ws_addr();
    let host = format!("evil.example:{}", addr.port());
    for extra in [
        String::new(),
        format!(
            "Origin: http://{host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        ),
    ] {
        let request = format!(
            "GET /?token={token} HTTP/1.1\r\nHost: {host}\r\n{extra}Connection: close\r\n\r\n"
        );
        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).await.unwrap();
        let answer = String::from_utf8_lossy(&answer);
        assert!(answer.starts_with("HTTP/1.1 403"), "{request}\n{answer}");
        assert!(!answer.contains("set-cookie"), "{answer}");
    }
}

#[tokio::test]
async fn no_web_serves_no_page_and_refuses_every_browser() {
    let home = TestHome::new();
    let daemon = Daemon::ws(&home, &["--no-web"]).await;
    let addr = daemon.ws_addr();
    let page = http_request(addr, "GET", "/", &[]).await;
    assert!((400..500).contains(&page.status) && page.status != 401);
    assert!(!page.body_text().contains("/assets/app.js"));
    let own = format!("http://{addr}");
    let refused = upgrade(&daemon, "/", &[("Origin", own.as_str())]).await;
    assert_eq!(refused.err(), Some(403));
    assert!(!home.path().join("web-sign-in.url").exists());
    assert!(!daemon.stderr().contains("web client at"));
    let mut client = Client::connect_ws(&daemon.ws_url()).await;
    client.initialize().await;
}

/// `node ARGS…` in `web/` (the node tests/install.sh checks for); its stdout, once it has
/// succeeded.
fn node_in_web(args: &[&str]) -> String {
    let web = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../web");
    let output = std::process::Command::new("node")
        .args(args)
        .current_dir(&web)
        .output()
        .expect("node runs (tests/install.sh checks for it)");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "node {args:?} in web/ failed:\n{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

/// The client the binary embeds (`web/dist/app.js`) is what its source builds to, with the
/// build and libraries of `web/package-lock.json` (installed by tests/install.sh).
#[test]
fn the_embedded_client_is_built_from_its_source() {
    let esbuild =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../web/node_modules/esbuild");
    assert!(
        esbuild.exists(),
        "the web client's build is not installed: run tests/install.sh (tests/web/install.sh)"
    );
    node_in_web(&["build.mjs", "--check"]);
}

/// The client's own unit tests (its state handling, `web/state.test.js`).
#[test]
fn the_clients_state_tests_pass() {
    let stdout = node_in_web(&["--test", "state.test.js"]);
    assert!(stdout.contains("# pass 14"), "{stdout}");
}
