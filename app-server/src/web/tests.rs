use axum::http::HeaderValue;

use super::*;

fn access(bound: &str, allowed: &[&str]) -> WebAccess {
    let config = WebConfig {
        allowed_origins: allowed.iter().map(|o| o.to_string()).collect(),
        ..WebConfig::default()
    };
    WebAccess::new(&config, bound.parse().unwrap()).unwrap()
}

fn headers(pairs: &[(header::HeaderName, &str)]) -> HeaderMap {
    let mut headers = HeaderMap::new();
    for (name, value) in pairs {
        headers.append(name.clone(), HeaderValue::from_str(value).unwrap());
    }
    headers
}

fn browser(origin: &str, host: &str) -> HeaderMap {
    headers(&[(header::ORIGIN, origin), (header::HOST, host)])
}

#[test]
fn the_sign_in_url_names_the_bound_address_and_a_fresh_token() {
    let web = access("127.0.0.1:4500", &[]);
    let url = web.sign_in_url();
    let token = url.strip_prefix("http://127.0.0.1:4500/?token=").unwrap();
    assert_eq!(token.len(), 64);
    assert_ne!(url, access("127.0.0.1:4500", &[]).sign_in_url());
    assert_eq!(web.home_url(), "http://127.0.0.1:4500/");
    // A wildcard bind is signed into through the loopback address.
    let wildcard = access("0.0.0.0:4500", &[]);
    assert!(
        wildcard
            .sign_in_url()
            .starts_with("http://127.0.0.1:4500/?token=")
    );
}

#[test]
fn a_foreign_origin_or_host_is_forbidden_whatever_it_carries() {
    let web = access("127.0.0.1:4500", &["http://localhost:3000"]);
    let token = web.token.clone();
    for (origin, host) in [
        ("http://evil.example", "127.0.0.1:4500"),
        ("http://127.0.0.1:4501", "127.0.0.1:4500"),
        ("null", "127.0.0.1:4500"),
        // DNS rebinding: the page's own origin, under a name that is not the daemon's.
        ("http://evil.example:4500", "evil.example:4500"),
        ("http://127.0.0.1:4500", "evil.example:4500"),
    ] {
        let refused = web.admit_socket(&browser(origin, host), Some(&format!("token={token}")));
        assert!(
            matches!(refused, Err(Refusal::Forbidden(_))),
            "{origin} {host}"
        );
    }
}

#[test]
fn an_admitted_origin_needs_the_token_or_a_session() {
    let web = access("127.0.0.1:4500", &["http://localhost:3000"]);
    let token = web.token.clone();
    for origin in [
        "http://127.0.0.1:4500",
        "http://localhost:4500",
        "http://localhost:3000",
    ] {
        let plain = browser(origin, "127.0.0.1:4500");
        assert_eq!(
            web.admit_socket(&plain, None),
            Err(Refusal::Unauthorized(
                "sign in first: open the sign-in URL the daemon printed at start"
            )),
            "{origin}"
        );
        assert!(web.admit_socket(&plain, Some("token=00")).is_err());
        assert_eq!(
            web.admit_socket(&plain, Some(&format!("a=1&token={token}"))),
            Ok(())
        );
        let mut offered = plain.clone();
        offered.append(
            header::SEC_WEBSOCKET_PROTOCOL,
            HeaderValue::from_str(&format!("{SUBPROTOCOL}, {TOKEN_SUBPROTOCOL}{token}")).unwrap(),
        );
        assert_eq!(web.admit_socket(&offered, None), Ok(()), "{origin}");
    }
    // The session cookie that the sign-in page sets admits the page's own socket.
    let page = headers(&[(header::HOST, "127.0.0.1:4500")]);
    let PageAccess::SignedInNow(set_cookie) = web
        .admit_page(&page, Some(&format!("token={token}")))
        .unwrap()
    else {
        panic!("the token signs in");
    };
    let cookie = set_cookie.split(';').next().unwrap();
    let mut socket = browser("http://127.0.0.1:4500", "127.0.0.1:4500");
    socket.append(header::COOKIE, HeaderValue::from_str(cookie).unwrap());
    assert_eq!(web.admit_socket(&socket, None), Ok(()));
}

#[test]
fn the_page_signs_in_with_the_token_and_refuses_a_wrong_one() {
    let web = access("127.0.0.1:4500", &[]);
    let page = headers(&[(header::HOST, "127.0.0.1:4500")]);
    assert_eq!(web.admit_page(&page, None), Ok(PageAccess::NotSignedIn));
    assert_eq!(
        web.admit_page(&page, Some("token=abc")),
        Ok(PageAccess::WrongToken)
    );
    let foreign = headers(&[(header::HOST, "evil.example:4500")]);
    assert!(matches!(
        web.admit_page(&foreign, None),
        Err(Refusal::Forbidden(_))
    ));
    let token = web.token.clone();
    let Ok(PageAccess::SignedInNow(set_cookie)) =
        web.admit_page(&page, Some(&format!("token={token}")))
    else {
        panic!("the token signs in");
    };
    let mut signed_in = page.clone();
    let cookie = set_cookie.split(';').next().unwrap();
    signed_in.append(header::COOKIE, HeaderValue::from_str(cookie).unwrap());
    assert_eq!(web.admit_page(&signed_in, None), Ok(PageAccess::SignedIn));
}

#[test]
fn a_specific_address_bind_has_that_origin_only() {
    let web = access("192.0.2.7:4500", &["https://weft.example.com"]);
    let token = web.token.clone();
    let query = format!("token={token}");
    let own = browser("http://192.0.2.7:4500", "192.0.2.7:4500");
    assert_eq!(web.admit_socket(&own, Some(&query)), Ok(()));
    let proxied = browser("https://weft.example.com", "weft.example.com");
    assert_eq!(web.admit_socket(&proxied, Some(&query)), Ok(()));
    let loopback = browser("http://127.0.0.1:4500", "127.0.0.1:4500");
    assert!(web.admit_socket(&loopback, Some(&query)).is_err());
}

#[test]
fn the_sign_in_file_is_the_users_alone() {
    use std::os::unix::fs::PermissionsExt;
    let home = tempfile::tempdir().unwrap();
    let web = access("127.0.0.1:4500", &[]);
    // An older file, open to everyone, is replaced rather than rewritten.
    let path = home.path().join(SIGN_IN_FILE);
    std::fs::write(&path, "old").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let written = web.write_sign_in_file(home.path()).unwrap();
    assert_eq!(written, path);
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    assert_eq!(
        std::fs::read_to_string(&path).unwrap().trim(),
        web.sign_in_url()
    );
}
