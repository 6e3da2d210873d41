//! The browser side of the WebSocket listener (docs/web.md): who may open the web client's
//! page and the socket.
//!
//! A browser always sends `Origin` on a WebSocket upgrade; clients that are not browsers (the
//! TUI, the SDKs) send none and are admitted as before ([`crate::transport::ws`]). A browser's
//! upgrade is admitted only when
//! 1. its `Origin` is one of the daemon's own origins (the page it serves itself) or listed in
//!    `[web] allowed_origins`, and its `Host` is one of those origins' hosts (a DNS-rebound
//!    name is not), **and**
//! 2. it is signed in: it carries this listener's session cookie, or the sign-in token, as
//!    the WebSocket subprotocol `weft.token.<token>` (offered beside [`SUBPROTOCOL`], which
//!    the daemon answers with) or as the query parameter `token`.
//!
//! The sign-in token is fresh at every start; the daemon prints the sign-in URL on stdout
//! (never through the log) and writes it to `$WEFT_HOME/web-sign-in.url`, readable only by
//! the user. Opening that URL exchanges the token for an `HttpOnly`, `SameSite=Strict`
//! session cookie ([`sessions`]); the page then drops the token from the address bar.

pub mod assets;
pub mod pages;
pub mod sessions;

use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use weft_core::config::{WebConfig, normalize_origin};

use self::sessions::{Sessions, random_secret, same_secret};

/// The subprotocol a browser offers beside its token, and the one the daemon answers with.
pub const SUBPROTOCOL: &str = "weft.jsonrpc";
/// How a browser offers the sign-in token as a subprotocol: this, then the token.
pub const TOKEN_SUBPROTOCOL: &str = "weft.token.";
/// The file under `$WEFT_HOME` that holds the sign-in URL.
pub const SIGN_IN_FILE: &str = "web-sign-in.url";

/// Why a browser's request is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// `403`: a page from an origin that may not use the daemon, or a foreign `Host`.
    Forbidden(&'static str),
    /// `401`: an admitted origin that has not signed in.
    Unauthorized(&'static str),
    /// `503`: the daemon cannot start a session (no random source).
    Unavailable(&'static str),
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        match self {
            Refusal::Forbidden(why) => (StatusCode::FORBIDDEN, why).into_response(),
            Refusal::Unauthorized(why) => (StatusCode::UNAUTHORIZED, why).into_response(),
            Refusal::Unavailable(why) => (StatusCode::SERVICE_UNAVAILABLE, why).into_response(),
        }
    }
}

/// How a page request stands with sign-in.
#[derive(Debug, PartialEq, Eq)]
pub enum PageAccess {
    /// It carries a live session.
    SignedIn,
    /// It carried the token: a session starts with this `Set-Cookie`.
    SignedInNow(String),
    /// Neither.
    NotSignedIn,
    /// It carried a token that is not this start's.
    WrongToken,
}

/// The web access of one listener.
pub struct WebAccess {
    token: String,
    sessions: Sessions,
    /// The daemon's own origins first, then `[web] allowed_origins`.
    origins: Vec<String>,
    /// The origin of the sign-in URL.
    home_origin: String,
}

impl WebAccess {
    /// The access of a listener bound to `bound`, with a fresh token; an error only when the
    /// operating system has no random source.
    pub fn new(config: &WebConfig, bound: SocketAddr) -> Result<WebAccess, getrandom::Error> {
        let port = bound.port();
        let mut origins = Vec::new();
        let ip = bound.ip();
        if ip.is_loopback() || ip.is_unspecified() {
            // A wildcard bind is reached locally through the loopback names; a page on a
            // remote name must be listed in `[web] allowed_origins`.
            for host in ["127.0.0.1", "localhost", "[::1]"] {
                origins.push(format!("http://{host}:{port}"));
            }
        }
        if !ip.is_unspecified() {
            let own = format!("http://{bound}");
            if !origins.contains(&own) {
                origins.insert(0, own);
            }
        }
        let home_origin = origins[0].clone();
        for origin in &config.allowed_origins {
            if !origins.contains(origin) {
                origins.push(origin.clone());
            }
        }
        Ok(WebAccess {
            token: random_secret()?,
            sessions: Sessions::new(port, config.max_sessions),
            origins,
            home_origin,
        })
    }

    /// The URL that signs a browser in.
    pub fn sign_in_url(&self) -> String {
        format!("{}/?token={}", self.home_origin, self.token)
    }

    /// The web client's address, without the token (what the log may show).
    pub fn home_url(&self) -> String {
        format!("{}/", self.home_origin)
    }

    /// Write the sign-in URL to `home/web-sign-in.url`, readable and writable only by the
    /// user (made anew, so an older file's permissions do not carry over).
    pub fn write_sign_in_file(&self, home: &Path) -> std::io::Result<PathBuf> {
        use std::os::unix::fs::OpenOptionsExt;
        let path = home.join(SIGN_IN_FILE);
        let partial = home.join(format!("{SIGN_IN_FILE}.partial"));
        match std::fs::remove_file(&partial) {
            Err(err) if err.kind() != std::io::ErrorKind::NotFound => return Err(err),
            _ => {}
        }
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&partial)?;
        writeln!(file, "{}", self.sign_in_url())?;
        file.sync_all()?;
        std::fs::rename(&partial, &path)?;
        Ok(path)
    }

    /// Whether `origin` (as sent) may use the daemon.
    pub fn admits_origin(&self, origin: &str) -> bool {
        normalize_origin(origin).is_some_and(|origin| self.origins.contains(&origin))
    }

    /// Whether the request's `Host` names the daemon by one of its admitted origins' hosts.
    fn admitted_host(&self, headers: &HeaderMap) -> bool {
        let Some(host) = header_str(headers, header::HOST) else {
            return false;
        };
        let host = host.trim().to_ascii_lowercase();
        self.origins.iter().any(|origin| {
            let named = origin.split_once("://").map_or("", |(_, rest)| rest);
            named == host || (origin.starts_with("http://") && format!("{named}:80") == host)
        })
    }

    /// Whether `given` is this start's token.
    fn is_token(&self, given: &str) -> bool {
        same_secret(given, &self.token)
    }

    /// Decide a browser's WebSocket upgrade (a request that carries `Origin`).
    pub fn admit_socket(&self, headers: &HeaderMap, query: Option<&str>) -> Result<(), Refusal> {
        let origin = header_str(headers, header::ORIGIN).unwrap_or_default();
        if !self.admits_origin(origin) {
            return Err(Refusal::Forbidden(
                "this page's origin may not use the daemon",
            ));
        }
        if !self.admitted_host(headers) {
            return Err(Refusal::Forbidden(
                "the daemon is not served under this host name",
            ));
        }
        if self.sessions.signed_in(headers) {
            return Ok(());
        }
        let offered = headers
            .get_all(header::SEC_WEBSOCKET_PROTOCOL)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(','))
            .filter_map(|protocol| protocol.trim().strip_prefix(TOKEN_SUBPROTOCOL));
        let queried = query_token(query);
        if offered.chain(queried).any(|token| self.is_token(token)) {
            return Ok(());
        }
        Err(Refusal::Unauthorized(
            "sign in first: open the sign-in URL the daemon printed at start",
        ))
    }

    /// Decide a request for the web client's page: its host, then its sign-in.
    pub fn admit_page(
        &self,
        headers: &HeaderMap,
        query: Option<&str>,
    ) -> Result<PageAccess, Refusal> {
        if !self.admitted_host(headers) {
            return Err(Refusal::Forbidden(
                "the daemon is not served under this host name",
            ));
        }
        if let Some(origin) = header_str(headers, header::ORIGIN)
            && !self.admits_origin(origin)
        {
            return Err(Refusal::Forbidden(
                "this page's origin may not use the daemon",
            ));
        }
        if let Some(token) = query_token(query) {
            if !self.is_token(token) {
                return Ok(PageAccess::WrongToken);
            }
            return match self.sessions.start() {
                Ok(cookie) => Ok(PageAccess::SignedInNow(cookie)),
                Err(_) => Err(Refusal::Unavailable(
                    "cannot start a session: the system has no random source",
                )),
            };
        }
        Ok(if self.sessions.signed_in(headers) {
            PageAccess::SignedIn
        } else {
            PageAccess::NotSignedIn
        })
    }
}

fn header_str(headers: &HeaderMap, name: header::HeaderName) -> Option<&str> {
    headers.get(name).and_then(|value| value.to_str().ok())
}

/// The `token` parameter of a query string.
fn query_token(query: Option<&str>) -> Option<&str> {
    query?
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .find(|(name, _)| *name == "token")
        .map(|(_, value)| value)
}

#[cfg(test)]
mod tests;
