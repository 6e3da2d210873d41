//! [`ResponseStream`]: the body of a streamed response, decoded into [`ResponseEvent`]s.
//!
//! The stream reads the HTTP body itself (no background task): dropping it drops the body,
//! which closes the connection, so the server sees an interrupt at once.

use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures::{Stream, StreamExt};

use super::error::{ModelError, error_chain};
use super::event::ResponseEvent;
use super::limits::MAX_SSE_EVENT_BYTES;
use super::sse::SseParser;

/// Decoded events waiting to be handed out.
pub(crate) type Events = VecDeque<Result<ResponseEvent, ModelError>>;

/// Whether to keep reading after an SSE event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    Continue,
    /// The response is over (completed or failed): stop reading, drop the body.
    Stop,
}

/// Turns SSE `data` payloads of one wire API into events.
pub(crate) trait Decoder: Send + 'static {
    /// Decode one event's data, pushing zero or more events.
    fn data(&mut self, data: &[u8], out: &mut Events) -> Flow;
    /// The body ended cleanly before [`Flow::Stop`]: push the final event or error.
    fn end(&mut self, out: &mut Events);
}

type Body = Pin<Box<dyn Stream<Item = reqwest::Result<Bytes>> + Send>>;

/// A stream of [`ResponseEvent`]s ending after `Completed` or the first error. Dropping it
/// closes the HTTP connection.
pub struct ResponseStream {
    inner: Pin<Box<dyn Stream<Item = Result<ResponseEvent, ModelError>> + Send>>,
}

impl ResponseStream {
    pub(crate) fn new(response: reqwest::Response, decoder: impl Decoder, idle: Duration) -> Self {
        let reader = Reader {
            body: Some(Box::pin(response.bytes_stream())),
            parser: SseParser::default(),
            decoder,
            pending: VecDeque::new(),
            idle,
        };
        let inner = futures::stream::unfold(reader, |mut reader| async move {
            let event = reader.next().await?;
            Some((event, reader))
        });
        ResponseStream {
            inner: Box::pin(inner),
        }
    }
}

impl Stream for ResponseStream {
    type Item = Result<ResponseEvent, ModelError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.inner.as_mut().poll_next(cx)
    }
}

impl std::fmt::Debug for ResponseStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ResponseStream")
    }
}

struct Reader<D> {
    /// `None` once the response is over.
    body: Option<Body>,
    parser: SseParser,
    decoder: D,
    pending: Events,
    idle: Duration,
}

impl<D: Decoder> Reader<D> {
    async fn next(&mut self) -> Option<Result<ResponseEvent, ModelError>> {
        loop {
            if let Some(event) = self.pending.pop_front() {
                if event.is_err() {
                    self.stop();
                }
                return Some(event);
            }
            let body = self.body.as_mut()?;
            match tokio::time::timeout(self.idle, body.next()).await {
                Err(_) => {
                    self.stop();
                    return Some(Err(ModelError::stream(format!(
                        "idle timeout waiting for SSE ({} ms)",
                        self.idle.as_millis()
                    ))));
                }
                Ok(Some(Ok(chunk))) => {
                    self.parser.push(&chunk);
                    while let Some(data) = self.parser.next_event() {
                        if self.decoder.data(data, &mut self.pending) == Flow::Stop {
                            self.body = None;
                            break;
                        }
                    }
                    if self.body.is_some() && self.parser.buffered() > MAX_SSE_EVENT_BYTES {
                        self.body = None;
                        self.pending.push_back(Err(ModelError::malformed(format!(
                            "an SSE event larger than {MAX_SSE_EVENT_BYTES} bytes"
                        ))));
                    }
                }
                Ok(Some(Err(err))) => {
                    self.stop();
                    return Some(Err(ModelError::stream(format!(
                        "error reading the response stream: {}",
                        error_chain(&err)
                    ))));
                }
                Ok(None) => {
                    self.body = None;
                    let stopped = match self.parser.finish() {
                        Some(data) => self.decoder.data(data, &mut self.pending) == Flow::Stop,
                        None => false,
                    };
                    if !stopped {
                        self.decoder.end(&mut self.pending);
                    }
                }
            }
        }
    }

    /// Nothing more is handed out after an error.
    fn stop(&mut self) {
        self.body = None;
        self.pending.clear();
    }
}
