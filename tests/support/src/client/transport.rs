//! The transports: a daemon's stdin/stdout (one message per line) or a WebSocket (one message
//! per text frame, over TCP or the `unix://` control socket): the upgrade, the raw writes and
//! the raw reads.
//!
//! A connection is two halves, a [`Writer`] and a [`Reader`], so that a reader task can read
//! while others write (the benchmarks do, `bench/`); the test [`Client`](super::Client) holds
//! both. Every write is bounded by a timeout; a read is cancel safe (a read cut short by a
//! timeout loses nothing), so the caller bounds it with its own timeout.

use std::fmt;
use std::time::Duration;

use futures::{Sink, SinkExt, Stream, StreamExt};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::process::{ChildStdin, ChildStdout};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::{self, Message};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use crate::clip;

type WsStream = WebSocketStream<MaybeTlsStream<TcpStream>>;
/// The sending half of a WebSocket, over TCP or a Unix socket.
type WsSink = Box<dyn Sink<Message, Error = tungstenite::Error> + Send + Unpin>;
/// The receiving half of a WebSocket, over TCP or a Unix socket.
type WsSource = Box<dyn Stream<Item = Result<Message, tungstenite::Error>> + Send + Unpin>;

/// How much a stdio read asks for at a time.
const READ_CHUNK: usize = 64 * 1024;

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

impl std::error::Error for WsHandshakeError {}

/// The sending half of a connection.
pub enum Writer {
    /// The daemon's stdin; `None` once closed.
    Stdio(Option<ChildStdin>),
    Ws(WsSink),
}

/// The receiving half of a connection.
pub enum Reader {
    Stdio {
        stdout: ChildStdout,
        /// Bytes read but not yet split into lines, from `start` on. Kept across reads so
        /// that a read cut short by a timeout loses nothing.
        pending: Vec<u8>,
        start: usize,
        eof: bool,
    },
    Ws(WsSource),
}

/// What the transport produced.
#[derive(Debug)]
pub enum Raw {
    /// One message's text.
    Text(String),
    /// A WebSocket pong with its payload.
    Pong(Vec<u8>),
}

/// The two halves over a daemon's stdin and stdout.
pub fn stdio(stdin: ChildStdin, stdout: ChildStdout) -> (Writer, Reader) {
    let reader = Reader::Stdio {
        stdout,
        pending: Vec::new(),
        start: 0,
        eof: false,
    };
    (Writer::Stdio(Some(stdin)), reader)
}

/// The WebSocket upgrade to `url` (`ws://127.0.0.1:PORT`), with extra request headers,
/// bounded by `timeout`; the two halves of the connection.
pub async fn connect_ws(
    url: &str,
    headers: &[(&str, &str)],
    timeout: Duration,
) -> Result<(Writer, Reader), WsHandshakeError> {
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
    match tokio::time::timeout(timeout, connect).await {
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
        Ok(Ok((stream, _response))) => Ok(halves::<WsStream>(stream)),
    }
}

fn halves<S>(stream: S) -> (Writer, Reader)
where
    S: Sink<Message, Error = tungstenite::Error>
        + Stream<Item = Result<Message, tungstenite::Error>>
        + Send
        + 'static,
{
    let (sink, stream) = stream.split();
    (Writer::Ws(Box::new(sink)), Reader::Ws(Box::new(stream)))
}

/// The WebSocket upgrade over the `unix://` control socket at `path` (the request names
/// `ws://localhost/`), bounded by `timeout`; the two halves of the connection.
pub async fn connect_unix(
    path: &std::path::Path,
    timeout: Duration,
) -> Result<(Writer, Reader), WsHandshakeError> {
    let stream = tokio::net::UnixStream::connect(path)
        .await
        .map_err(|err| WsHandshakeError::Other(format!("{}: {err}", path.display())))?;
    connect_over(stream, timeout).await
}

/// The WebSocket upgrade (to `ws://localhost/`) over any byte stream: a Unix socket, or a
/// `weft app-server proxy`'s stdio; bounded by `timeout`.
pub async fn connect_over<S>(
    stream: S,
    timeout: Duration,
) -> Result<(Writer, Reader), WsHandshakeError>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let upgrade = tokio_tungstenite::client_async("ws://localhost/", stream);
    match tokio::time::timeout(timeout, upgrade).await {
        Err(_) => Err(WsHandshakeError::Other("timed out".into())),
        Ok(Err(err)) => Err(WsHandshakeError::Other(err.to_string())),
        Ok(Ok((stream, _response))) => Ok(halves(stream)),
    }
}

impl Writer {
    /// Send one message's text: a line on stdio (a `\n` is added), a text frame on WebSocket.
    pub async fn send_text(&mut self, text: &str, timeout: Duration) -> Result<(), String> {
        match self {
            Writer::Stdio(_) => {
                let mut line = Vec::with_capacity(text.len() + 1);
                line.extend_from_slice(text.as_bytes());
                line.push(b'\n');
                self.write_stdin(&line, timeout).await
            }
            Writer::Ws(_) => self.send_ws(Message::text(text), timeout).await,
        }
    }

    /// Send bytes as they are: on stdio, without adding a newline (to cut a message short);
    /// on WebSocket, as one binary frame.
    pub async fn send_bytes(&mut self, bytes: &[u8], timeout: Duration) -> Result<(), String> {
        match self {
            Writer::Stdio(_) => self.write_stdin(bytes, timeout).await,
            Writer::Ws(_) => self.send_ws(Message::binary(bytes.to_vec()), timeout).await,
        }
    }

    /// WebSocket only: send a ping frame.
    pub async fn ping(&mut self, payload: &[u8], timeout: Duration) -> Result<(), String> {
        self.send_ws(Message::Ping(payload.to_vec().into()), timeout)
            .await
    }

    /// Close our side: stdio closes the daemon's stdin (EOF); WebSocket sends a close frame.
    /// Best effort.
    pub async fn close(&mut self, timeout: Duration) {
        match self {
            Writer::Stdio(stdin) => {
                if let Some(mut stdin) = stdin.take() {
                    let _ = tokio::time::timeout(timeout, stdin.shutdown()).await;
                }
            }
            Writer::Ws(sink) => {
                let _ = tokio::time::timeout(timeout, SinkExt::close(sink)).await;
            }
        }
    }

    async fn write_stdin(&mut self, bytes: &[u8], timeout: Duration) -> Result<(), String> {
        let Writer::Stdio(stdin) = self else {
            unreachable!("write_stdin on a WebSocket connection");
        };
        let Some(stdin) = stdin.as_mut() else {
            return Err("write after close()".into());
        };
        let write = async {
            stdin.write_all(bytes).await?;
            stdin.flush().await
        };
        match tokio::time::timeout(timeout, write).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(err)) => Err(format!("writing to the daemon's stdin failed: {err}")),
            Err(_) => Err(format!(
                "writing to the daemon's stdin timed out ({timeout:?})"
            )),
        }
    }

    async fn send_ws(&mut self, message: Message, timeout: Duration) -> Result<(), String> {
        let Writer::Ws(sink) = self else {
            return Err("a WebSocket frame on a stdio connection".into());
        };
        match tokio::time::timeout(timeout, sink.send(message)).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(err)) => Err(format!("WebSocket send failed: {err}")),
            Err(_) => Err(format!("WebSocket send timed out ({timeout:?})")),
        }
    }
}

impl Reader {
    /// One message's text (or a pong); `Err` describes a close. Cancel safe.
    pub async fn next(&mut self) -> Result<Raw, String> {
        match self {
            Reader::Stdio {
                stdout,
                pending,
                start,
                eof,
            } => loop {
                if let Some(len) = pending[*start..].iter().position(|b| *b == b'\n') {
                    let line = &pending[*start..*start + len];
                    // A line that is not UTF-8 is returned as text that fails JSON parsing.
                    let text = String::from_utf8(line.to_vec()).unwrap_or_else(|_| {
                        format!("<not UTF-8: {}>", String::from_utf8_lossy(line))
                    });
                    *start += len + 1;
                    return Ok(Raw::Text(text));
                }
                if *eof {
                    let rest = &pending[*start..];
                    return Err(if rest.is_empty() {
                        "stdout closed".into()
                    } else {
                        format!(
                            "stdout closed after a partial line: {}",
                            clip(&String::from_utf8_lossy(rest), 500)
                        )
                    });
                }
                pending.drain(..*start);
                *start = 0;
                pending.reserve(READ_CHUNK);
                // `read_buf` is cancel safe: a timeout never loses bytes, they stay in
                // `pending`.
                match stdout.read_buf(pending).await {
                    Ok(0) => *eof = true,
                    Ok(_) => {}
                    Err(err) => return Err(format!("reading stdout failed: {err}")),
                }
            },
            Reader::Ws(stream) => loop {
                match stream.next().await {
                    None => return Err("WebSocket stream ended".into()),
                    Some(Err(err)) => return Err(format!("WebSocket error: {err}")),
                    Some(Ok(Message::Text(text))) => {
                        return Ok(Raw::Text(text.as_str().to_owned()));
                    }
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
}
