//! `mcpServer/oauth/login` (docs/protocol.md §7.38, docs/mcp.md §9) against the FastMCP test
//! server behind a scripted OAuth authorization server on the same origin
//! (`weft_test_server.py --oauth`, `tests/mcp/servers/oauth_gate.py`). The test plays the
//! browser: it opens the authorization URL, follows the redirect to Weft's loopback callback,
//! and then expects the completion, a tool call that carries the token, and `authStatus`
//! turning from `notLoggedIn` to `oAuth`. Also: the refusals (unknown server, stdio server, a
//! server without OAuth), a denied authorization, a login that times out, and an expired
//! access token refreshed before the next call.

use std::net::SocketAddr;
use std::os::unix::fs::PermissionsExt;

use serde_json::{Value, json};
use weft_test_support::http::http_request;
use weft_test_support::{Client, Transport, mcp_servers};

use super::{Mcp, event_lines, eventually, serve_http, status};

const COMPLETED: &str = "mcpServer/oauthLogin/completed";

/// A daemon with the OAuth-gated test server as `secure` (tokens living `expires_in` s).
struct Gated {
    t: Mcp,
    events: std::path::PathBuf,
    _server: tokio::process::Child,
    _scratch: tempfile::TempDir,
}

async fn gated(transport: Transport, expires_in: u32, more: &str) -> Gated {
    let scratch = tempfile::tempdir().expect("scratch dir");
    let events = scratch.path().join("oauth-events.log");
    let script = &mcp_servers().test_server;
    let expires = expires_in.to_string();
    let (url, server) = serve_http(
        script,
        &["--oauth", "--oauth-expires-in", &expires],
        &[("WEFT_TEST_EVENTS", events.as_path())],
    )
    .await;
    let config = format!("[mcp_servers.secure]\nurl = \"{url}\"\n{more}");
    let t = Mcp::start_with(transport, "", &config).await;
    Gated {
        t,
        events,
        _server: server,
        _scratch: scratch,
    }
}

/// `http://HOST:PORT/PATH?QUERY` → the address and `/PATH?QUERY`.
fn split_url(url: &str) -> (SocketAddr, String) {
    let rest = url.strip_prefix("http://").expect("an http:// URL");
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let addr = authority.parse().expect("a 127.0.0.1 address");
    (addr, path.to_string())
}

/// The query parameter `key` of `url`, percent-decoded.
fn query_param(url: &str, key: &str) -> String {
    let query = url.split_once('?').map(|(_, q)| q).unwrap_or_default();
    let raw = query
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v)
        .unwrap_or_else(|| panic!("no {key} in {url}"));
    let bytes = raw.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).expect("hex");
            out.push(u8::from_str_radix(hex, 16).expect("hex"));
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).expect("utf-8")
}

/// GET `url` as a browser would, without following redirects.
async fn get(url: &str) -> weft_test_support::http::HttpResponse {
    let (addr, path) = split_url(url);
    http_request(addr, "GET", &path, &[]).await
}

/// `mcpServer/oauth/login` of `params`: its result.
async fn login(client: &mut Client, params: Value) -> Value {
    client
        .request("mcpServer/oauth/login", params)
        .await
        .unwrap_or_else(|err| panic!("mcpServer/oauth/login failed: {err}"))
}

/// The completion of `login_id`.
async fn completed(client: &mut Client, login_id: &str) -> Value {
    let message = client
        .wait_for(&format!("{COMPLETED} of {login_id}"), |m| {
            m["method"] == COMPLETED && m["params"]["loginId"] == login_id
        })
        .await;
    message["params"].clone()
}

async fn auth_status(client: &mut Client, server: &str) -> Value {
    let page = status(client, json!({"serverName": server})).await;
    page["data"][0]["authStatus"].clone()
}

/// The browser logs in (the entry's `scopes` and `oauth_resource` in the URL): the
/// authorization page redirects to Weft's callback, which answers the reference's page; the completion follows, the token works, the status says `oAuth`,
/// and the tokens are in a 0600 file under `$WEFT_HOME`.
async fn login_then_call(transport: Transport) {
    let entry = "scopes = [\"read\", \"write\"]\noauth_resource = \"https://api.example/v1\"\n";
    let mut g = gated(transport, 3600, entry).await;
    let client = &mut g.t.h.client;
    assert_eq!(auth_status(client, "secure").await, "notLoggedIn");

    let answer = login(client, json!({"name": "secure"})).await;
    let url = answer["authorizationUrl"]
        .as_str()
        .expect("authorizationUrl");
    let login_id = answer["loginId"].as_str().expect("loginId").to_string();
    assert_eq!(query_param(url, "code_challenge_method"), "S256");
    assert_eq!(
        query_param(url, "scope"),
        "read+write",
        "the entry's scopes, form-encoded"
    );
    assert!(
        url.ends_with("&resource=https%3A%2F%2Fapi.example%2Fv1"),
        "the entry's oauth_resource last: {url}"
    );
    let redirect = query_param(url, "redirect_uri");
    assert!(
        redirect.starts_with("http://127.0.0.1:") && redirect.contains("/callback/"),
        "{redirect}"
    );

    let page = get(url).await;
    assert_eq!(page.status, 302, "{}", page.body_text());
    let callback = page.header("location").expect("a redirect").to_string();
    assert!(callback.starts_with(&redirect), "{callback}");
    let back = get(&callback).await;
    assert_eq!(back.status, 200);
    assert_eq!(
        back.body_text(),
        "Authentication complete. You may close this window."
    );
    let done = completed(client, &login_id).await;
    assert_eq!(
        done,
        json!({"name": "secure", "threadId": null, "loginId": login_id, "success": true})
    );
    assert_eq!(auth_status(client, "secure").await, "oAuth");

    let thread = g.t.thread("never").await;
    let client = &mut g.t.h.client;
    let params = json!({"threadId": thread, "server": "secure", "tool": "add",
        "arguments": {"a": 40, "b": 2}});
    let result = client
        .request("mcpServer/tool/call", params)
        .await
        .expect("the call carries the token");
    assert_eq!(result["structuredContent"]["result"], 42, "{result}");

    let file = g.t.h.home.path().join("mcp_oauth_credentials.json");
    let mode = std::fs::metadata(&file)
        .expect("the credentials file")
        .permissions();
    assert_eq!(mode.mode() & 0o777, 0o600);
    let events = event_lines(&g.events);
    assert!(events.contains(&"oauth register".to_string()), "{events:?}");
    assert!(
        events.contains(&"oauth token authorization_code".to_string()),
        "{events:?}"
    );
}

/// Tokens that live two seconds: a call after they expired is made with a refreshed one.
async fn expired_token_is_refreshed(transport: Transport) {
    let mut g = gated(transport, 2, "").await;
    let client = &mut g.t.h.client;
    let answer = login(client, json!({"name": "secure"})).await;
    let login_id = answer["loginId"].as_str().expect("loginId").to_string();
    let page = get(answer["authorizationUrl"].as_str().unwrap_or_default()).await;
    get(page.header("location").expect("a redirect")).await;
    assert_eq!(completed(client, &login_id).await["success"], true);
    let thread = g.t.thread("never").await;
    let call = |thread: &str| {
        json!({"threadId": thread, "server": "secure", "tool": "echo",
            "arguments": {"text": "hi"}})
    };
    let client = &mut g.t.h.client;
    let first = client.request("mcpServer/tool/call", call(&thread)).await;
    assert!(first.is_ok(), "{first:?}");
    tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
    let second = client.request("mcpServer/tool/call", call(&thread)).await;
    assert!(second.is_ok(), "after expiry: {second:?}");
    let events = &g.events;
    eventually("the token was refreshed", || {
        event_lines(events).contains(&"oauth token refresh_token".to_string())
    })
    .await;
}

/// The authorization server sends the browser back with `error`: the callback answers 400
/// with the provider's error, and the login completes unsuccessfully with the same words.
async fn denied_authorization(transport: Transport) {
    let mut g = gated(transport, 3600, "").await;
    let client = &mut g.t.h.client;
    // `cimd` with an authorization server that offers none: the reference's refusal.
    let cimd = client
        .request(
            "mcpServer/oauth/login",
            json!({"name": "secure", "clientRegistration": "cimd"}),
        )
        .await
        .expect_err("no CIMD");
    assert_eq!(cimd.code, -32603);
    assert_eq!(
        cimd.message,
        "failed to login to MCP server 'secure': MCP authorization server does not advertise \
         CIMD with token endpoint auth method `none`"
    );
    let answer = login(client, json!({"name": "secure"})).await;
    let url = answer["authorizationUrl"].as_str().unwrap_or_default();
    let login_id = answer["loginId"].as_str().expect("loginId").to_string();
    let redirect = query_param(url, "redirect_uri");
    let state = query_param(url, "state");
    let denied =
        format!("{redirect}?error=access_denied&error_description=user%20said%20no&state={state}");
    let back = get(&denied).await;
    assert_eq!(back.status, 400);
    let error = "OAuth provider returned `access_denied`: user said no";
    assert_eq!(back.body_text(), error);
    let done = completed(client, &login_id).await;
    assert_eq!(done["success"], false);
    assert_eq!(done["error"], error);
    assert_eq!(auth_status(client, "secure").await, "notLoggedIn");
}

/// Nobody comes back within `timeoutSecs`; while the login waits, one more is refused
/// (`[limits] max_mcp_oauth_logins = 1`), and once it ended another may start.
async fn login_times_out(transport: Transport) {
    let mut g = gated(transport, 3600, "[limits]\nmax_mcp_oauth_logins = 1\n").await;
    let client = &mut g.t.h.client;
    let answer = login(client, json!({"name": "secure", "timeoutSecs": 1})).await;
    let login_id = answer["loginId"].as_str().expect("loginId").to_string();
    let busy = client
        .request("mcpServer/oauth/login", json!({"name": "secure"}))
        .await
        .expect_err("one login at a time");
    assert_eq!(busy.code, -32600);
    assert!(
        busy.message.contains("limits.max_mcp_oauth_logins = 1"),
        "{}",
        busy.message
    );
    let done = completed(client, &login_id).await;
    assert_eq!(done["success"], false);
    assert_eq!(done["error"], "timed out waiting for OAuth callback");
    // The listener is gone with the login.
    let redirect = query_param(
        answer["authorizationUrl"].as_str().unwrap_or_default(),
        "redirect_uri",
    );
    let (addr, _) = split_url(&redirect);
    assert!(tokio::net::TcpStream::connect(addr).await.is_err());
    let again = login(client, json!({"name": "secure", "timeoutSecs": 1})).await;
    assert!(again["authorizationUrl"].is_string());
}

/// The reference's refusals: an unknown name, a stdio server, a bad or unknown `threadId`
/// (-32600), and a server that cannot be asked for its metadata (-32603); and the statuses of
/// servers without OAuth.
async fn refusals(transport: Transport) {
    let more = "[mcp_servers.gone]\nurl = \"http://127.0.0.1:9/mcp\"\n\
        [mcp_servers.token]\nurl = \"http://127.0.0.1:9/mcp\"\nbearer_token_env_var = \"T\"\n";
    let mut t = Mcp::start_with(transport, "", more).await;
    let client = &mut t.h.client;
    let unknown = client
        .request("mcpServer/oauth/login", json!({"name": "nope"}))
        .await
        .expect_err("unknown server");
    assert_eq!(unknown.code, -32600);
    assert_eq!(unknown.message, "No MCP server named 'nope' found.");
    let stdio = client
        .request("mcpServer/oauth/login", json!({"name": "weft"}))
        .await
        .expect_err("stdio server");
    assert_eq!(stdio.code, -32600);
    assert_eq!(
        stdio.message,
        "OAuth login is only supported for streamable HTTP servers."
    );
    let gone = client
        .request("mcpServer/oauth/login", json!({"name": "gone"}))
        .await
        .expect_err("no metadata");
    assert_eq!(gone.code, -32603);
    assert!(
        gone.message
            .starts_with("failed to login to MCP server 'gone': "),
        "{}",
        gone.message
    );
    let bad_thread = client
        .request(
            "mcpServer/oauth/login",
            json!({"name": "gone", "threadId": "nope"}),
        )
        .await
        .expect_err("not a thread id");
    assert_eq!(bad_thread.code, -32600);
    assert!(
        bad_thread.message.starts_with("invalid thread id: "),
        "{}",
        bad_thread.message
    );
    let absent = "01a24f1d-8f4a-77c3-ad29-3d5777bdde6f";
    let no_thread = client
        .request(
            "mcpServer/oauth/login",
            json!({"name": "gone", "threadId": absent}),
        )
        .await
        .expect_err("no such thread");
    assert_eq!(no_thread.code, -32600);
    assert_eq!(no_thread.message, format!("thread not found: {absent}"));
    assert_eq!(auth_status(client, "weft").await, "unsupported");
    assert_eq!(auth_status(client, "gone").await, "unknown");
    assert_eq!(auth_status(client, "token").await, "bearerToken");
}

on_both_transports!(
    login_then_call,
    expired_token_is_refreshed,
    denied_authorization,
    login_times_out,
    refusals,
);
