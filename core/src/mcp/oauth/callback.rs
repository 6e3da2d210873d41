//! The loopback listener an OAuth login's browser is sent back to (docs/mcp.md §9): bound on
//! 127.0.0.1 (an ephemeral port unless configured), it answers every request, and hands the
//! first one on its path that carries `code` and `state`, or `error`, to the login. What it
//! answers is what the reference answers: `Authentication complete. You may close this
//! window.` (200), the provider's error (400), `Invalid OAuth callback` (400).

use std::net::SocketAddr;

use axum::http::{StatusCode, Uri};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// What the browser brought back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Callback {
    /// The authorization code and the state it was asked with.
    Code {
        /// `code`.
        code: String,
        /// `state`.
        state: String,
    },
    /// The authorization server refused (`error`, `error_description`).
    Error(ProviderError),
}

/// An `error` redirect, displayed as the reference displays it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderError {
    /// `error`.
    pub error: Option<String>,
    /// `error_description`.
    pub description: Option<String>,
}

impl std::fmt::Display for ProviderError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.error.as_deref(), self.description.as_deref()) {
            (Some(error), Some(description)) => {
                write!(f, "OAuth provider returned `{error}`: {description}")
            }
            (Some(error), None) => write!(f, "OAuth provider returned `{error}`"),
            (None, Some(description)) => write!(f, "OAuth error: {description}"),
            (None, None) => write!(f, "OAuth provider returned an error"),
        }
    }
}

/// A bound listener, serving until dropped or the first callback.
pub struct Listener {
    /// Where it listens.
    pub addr: SocketAddr,
    received: mpsc::Receiver<Callback>,
    stop: CancellationToken,
    served: Option<tokio::task::JoinHandle<()>>,
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl Listener {
    /// Binds 127.0.0.1:`port` (0: any free port) and serves `path`.
    pub async fn bind(port: u16, path: String) -> std::io::Result<Listener> {
        let socket = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
        let addr = socket.local_addr()?;
        let (sender, received) = mpsc::channel(1);
        let stop = CancellationToken::new();
        let handler_stop = stop.clone();
        let app = axum::Router::new().fallback(move |uri: Uri| {
            let sender = sender.clone();
            let path = path.clone();
            let stop = handler_stop.clone();
            async move {
                let outcome = parse(&uri, &path);
                let answer = match &outcome {
                    Some(Callback::Code { .. }) => (
                        StatusCode::OK,
                        "Authentication complete. You may close this window.".to_string(),
                    ),
                    Some(Callback::Error(error)) => (StatusCode::BAD_REQUEST, error.to_string()),
                    None => (
                        StatusCode::BAD_REQUEST,
                        "Invalid OAuth callback".to_string(),
                    ),
                };
                if let Some(outcome) = outcome
                    && sender.try_send(outcome).is_ok()
                {
                    stop.cancel();
                }
                answer
            }
        });
        let serve_stop = stop.clone();
        let served = tokio::spawn(async move {
            let served = axum::serve(socket, app)
                .with_graceful_shutdown(async move { serve_stop.cancelled().await })
                .await;
            if let Err(err) = served {
                tracing::warn!(%err, "MCP OAuth callback listener failed");
            }
        });
        Ok(Listener {
            addr,
            received,
            stop,
            served: Some(served),
        })
    }

    /// Stops listening, and returns once the socket is closed.
    pub async fn close(mut self) {
        self.stop.cancel();
        if let Some(served) = self.served.take() {
            let _ = served.await;
        }
    }

    /// The first callback (`None` if the listener went away).
    pub async fn next(&mut self) -> Option<Callback> {
        self.received.recv().await
    }
}

/// The callback of a request for `uri`, if it is one: on `path`, with `code` and `state`, or
/// with `error` / `error_description`. Values are percent-decoded (a `+` stays a `+`, as in
/// the reference).
pub fn parse(uri: &Uri, path: &str) -> Option<Callback> {
    if uri.path() != path {
        return None;
    }
    let query = uri.query()?;
    let (mut code, mut state, mut error, mut description) = (None, None, None, None);
    for pair in query.split('&') {
        let Some((key, value)) = pair.split_once('=') else {
            continue;
        };
        let Some(value) = percent_decode(value) else {
            continue;
        };
        match key {
            "code" => code = Some(value),
            "state" => state = Some(value),
            "error" => error = Some(value),
            "error_description" => description = Some(value),
            _ => {}
        }
    }
    if let (Some(code), Some(state)) = (code, state) {
        return Some(Callback::Code { code, state });
    }
    if error.is_some() || description.is_some() {
        return Some(Callback::Error(ProviderError { error, description }));
    }
    None
}

/// `%XX` decoded; `None` when an escape is malformed or the bytes are not UTF-8.
fn percent_decode(value: &str) -> Option<String> {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(uri: &str) -> Option<Callback> {
        parse(&uri.parse().unwrap(), "/callback/abc")
    }

    #[test]
    fn a_code_and_its_state() {
        assert_eq!(
            at("/callback/abc?code=c%2F1&state=s"),
            Some(Callback::Code {
                code: "c/1".into(),
                state: "s".into()
            })
        );
    }

    #[test]
    fn another_path_or_no_query_is_no_callback() {
        assert_eq!(at("/callback?code=c&state=s"), None);
        assert_eq!(at("/callback/abc"), None);
        assert_eq!(at("/callback/abc?state=s"), None);
    }

    #[test]
    fn a_refusal_reads_as_the_reference_writes_it() {
        let Some(Callback::Error(error)) =
            at("/callback/abc?error=access_denied&error_description=user+said%20no&state=s")
        else {
            panic!("not an error");
        };
        assert_eq!(
            error.to_string(),
            "OAuth provider returned `access_denied`: user+said no"
        );
        let Some(Callback::Error(bare)) = at("/callback/abc?error_description=x") else {
            panic!("not an error");
        };
        assert_eq!(bare.to_string(), "OAuth error: x");
    }

    #[test]
    fn malformed_escapes_are_skipped() {
        assert_eq!(percent_decode("%4"), None);
        assert_eq!(percent_decode("%zz"), None);
        assert_eq!(percent_decode("a%20b").as_deref(), Some("a b"));
    }

    #[tokio::test]
    async fn the_listener_answers_and_hands_on_the_first_callback() {
        let mut listener = Listener::bind(0, "/callback/abc".into()).await.unwrap();
        let base = format!("http://{}", listener.addr);
        let client = reqwest::Client::new();
        let wrong = client.get(format!("{base}/other")).send().await.unwrap();
        assert_eq!(wrong.status(), 400);
        assert_eq!(wrong.text().await.unwrap(), "Invalid OAuth callback");
        let good = client
            .get(format!("{base}/callback/abc?code=c&state=s"))
            .send()
            .await
            .unwrap();
        assert_eq!(good.status(), 200);
        assert_eq!(
            listener.next().await,
            Some(Callback::Code {
                code: "c".into(),
                state: "s".into()
            })
        );
        let addr = listener.addr;
        listener.close().await;
        assert!(tokio::net::TcpStream::connect(addr).await.is_err());
    }
}
