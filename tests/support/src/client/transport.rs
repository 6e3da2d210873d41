//! The transports: a daemon's stdin/stdout (one message per line) or a WebSocket (one message
//! per text frame): the upgrade, the raw writes and the raw reads.

use std::fmt;

use futures::{SinkExt, StreamExt};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::process::{ChildStdin, ChildStdout};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::{self, Message};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use super::Client;
use crate::{DEFAULT_TIMEOUT, clip};

type WsStream = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// Why a WebSocket upgrade failed.
#[derive(Debug)]
pub enum WsHandshakeError {
    /// The server answered the upgrade with this HTTP status (and body).
    Status(u16, String),
    /// Any other failure (connection refused, protocol error, timeout).
    Other(String),
}

impl WsHandshakeError {
    /// The HTTP status, if the server answered with one.
    pub fn status(&self) -> Option<u16> {
        match self {
            WsHandshakeError::Status(status, _) => Some(*status),
            WsHandshakeError::Other(_) => None,
        }
    }
}

impl fmt::Display for WsHandshakeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WsHandshakeError::Status(status, body) => {
                write!(f, "upgrade refused with HTTP {status}: {body}")
            }
            WsHandshakeError::Other(err) => write!(f, "upgrade failed: {err}"),
        }
    }
}

pub(super) enum Conn {
    Stdio {
        stdin: Option<ChildStdin>,
        stdout: ChildStdout,
        /// Bytes read but not yet split into lines. Kept across reads so that a read cut short
        /// by a timeout loses nothing.
        pending: Vec<u8>,
        eof: bool,
    },
    Ws(Box<WsStream>),
}

/// The WebSocket upgrade, with extra request headers, bounded by [`DEFAULT_TIMEOUT`].
pub(super) async fn ws_handshake(
    url: &str,
    headers: &[(&str, &str)],
) -> Result<WsStream, WsHandshakeError> {
    let mut request = url
        .into_client_request()
        .map_err(|err| WsHandshakeError::Other(err.to_string()))?;
    for (name, value) in headers {
        let name: tungstenite::http::HeaderName = name
            .parse()
            .map_err(|_| WsHandshakeError::Other(format!("bad header name {name}")))?;
        let value = HeaderValue::from_str(value)
            .map_err(|_| WsHandshakeError::Other(format!("bad header value {value}")))?;
        request.headers_mut().insert(name, value);
    }
    let connect = tokio_tungstenite::connect_async(request);
    match tokio::time::timeout(DEFAULT_TIMEOUT, connect).await {
        Err(_) => Err(WsHandshakeError::Other("timed out".into())),
        Ok(Err(tungstenite::Error::Http(response))) => {
            let body = response
                .body()
                .as_deref()
                .map(|b| String::from_utf8_lossy(b).into_owned())
                .unwrap_or_default();
            Err(WsHandshakeError::Status(response.status().as_u16(), body))
        }
        Ok(Err(err)) => Err(WsHandshakeError::Other(err.to_string())),
        Ok(Ok((stream, _response))) => Ok(stream),
    }
}

impl Client {
    pub(super) async fn write_stdin(&mut self, bytes: &[u8]) {
        let timeout = self.timeout;
        let Conn::Stdio { stdin, .. } = &mut self.conn else {
            unreachable!("write_stdin on a WebSocket client");
        };
        let Some(stdin) = stdin.as_mut() else {
            self.fail("write after close()");
        };
        let write = async {
            stdin.write_all(bytes).await?;
            stdin.flush().await
        };
        match tokio::time::timeout(timeout, write).await {
            Ok(Ok(())) => {}
            Ok(Err(err)) => self.fail(&format!("writing to the daemon's stdin failed: {err}")),
            Err(_) => self.fail("writing to the daemon's stdin timed out"),
        }
    }

    pub(super) async fn send_ws(&mut self, message: Message) {
        let timeout = self.timeout;
        let Conn::Ws(stream) = &mut self.conn else {
            unreachable!("send_ws on a stdio client");
        };
        match tokio::time::timeout(timeout, stream.send(message)).await {
            Ok(Ok(())) => {}
            Ok(Err(err)) => self.fail(&format!("WebSocket send failed: {err}")),
            Err(_) => self.fail("WebSocket send timed out"),
        }
    }
}

/// What the transport produced.
pub(super) enum Raw {
    /// One message's text.
    Text(String),
    /// A WebSocket pong with its payload.
    Pong(Vec<u8>),
}

/// One message's text (or a pong) from the transport; `Err` describes a close.
pub(super) async fn read_raw(conn: &mut Conn) -> Result<Raw, String> {
    match conn {
        Conn::Stdio {
            stdout,
            pending,
            eof,
            ..
        } => loop {
            if let Some(pos) = pending.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = pending.drain(..=pos).collect();
                let line = &line[..line.len() - 1];
                // A line that is not UTF-8 is returned as text that fails JSON parsing.
                return Ok(Raw::Text(String::from_utf8(line.to_vec()).unwrap_or_else(
                    |_| format!("<not UTF-8: {}>", String::from_utf8_lossy(line)),
                )));
            }
            if *eof {
                return Err(if pending.is_empty() {
                    "stdout closed".into()
                } else {
                    format!(
                        "stdout closed after a partial line: {}",
                        clip(&String::from_utf8_lossy(pending), 500)
                    )
                });
            }
            // `read` is cancel safe: a timeout never loses bytes, they stay in `pending`.
            let mut chunk = vec![0u8; 64 * 1024];
            match stdout.read(&mut chunk).await {
                Ok(0) => *eof = true,
                Ok(n) => pending.extend_from_slice(&chunk[..n]),
                Err(err) => return Err(format!("reading stdout failed: {err}")),
            }
        },
        Conn::Ws(stream) => loop {
            match stream.next().await {
                None => return Err("WebSocket stream ended".into()),
                Some(Err(err)) => return Err(format!("WebSocket error: {err}")),
                Some(Ok(Message::Text(text))) => return Ok(Raw::Text(text.as_str().to_owned())),
                Some(Ok(Message::Binary(bytes))) => {
                    // Weft sends text frames only; surface a binary frame as a bad message.
                    return Ok(Raw::Text(format!(
                        "<binary frame of {} bytes: {}>",
                        bytes.len(),
                        String::from_utf8_lossy(&bytes)
                    )));
                }
                Some(Ok(Message::Close(frame))) => {
                    return Err(format!("WebSocket close frame {frame:?}"));
                }
                Some(Ok(Message::Pong(payload))) => return Ok(Raw::Pong(payload.to_vec())),
                // tungstenite answers pings by itself.
                Some(Ok(Message::Ping(_) | Message::Frame(_))) => {}
            }
        },
    }
}
