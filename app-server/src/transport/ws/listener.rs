//! The WebSocket listener's guard on file descriptors: at most `max_connections` TCP
//! connections at once (upgraded or still in their HTTP handshake), and a deadline for the
//! upgrade. A connection over the limit is answered `503` and closed at once, without waiting
//! for anything, so a flood of connects costs one descriptor at a time; the connections
//! already up keep being served. A connection that has not completed its upgrade by the
//! deadline is closed (docs/protocol.md §2.5). Each connection also counts the bytes its
//! socket takes, for the stall clock (`transport::stall`).

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::extract::connect_info::Connected;
use axum::serve::{IncomingStream, Listener};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Sleep;

use crate::transport::stall::Progress;

/// A [`TcpListener`] that hands out at most `max` connections at once, each with an upgrade
/// deadline.
pub struct LimitedListener {
    inner: TcpListener,
    permits: Arc<Semaphore>,
    max: usize,
    handshake_timeout: Duration,
    /// Set while refusing, so that a flood logs one warning, not one per connect.
    refusing: bool,
}

impl LimitedListener {
    /// Wrap `inner`: `max` connections at once, `handshake_timeout` to upgrade.
    pub fn new(inner: TcpListener, max: usize, handshake_timeout: Duration) -> LimitedListener {
        LimitedListener {
            inner,
            permits: Arc::new(Semaphore::new(max)),
            max,
            handshake_timeout,
            refusing: false,
        }
    }

    /// Answer a connection over the limit and close it, without blocking: whatever the
    /// client already sent is read first, so the close is a clean FIN rather than a reset.
    fn refuse(&mut self, stream: TcpStream, peer: SocketAddr) {
        if !self.refusing {
            tracing::warn!(%peer, max = self.max, "connection limit reached; refusing new connections");
            self.refusing = true;
        }
        let mut sink = [0u8; 4096];
        while matches!(stream.try_read(&mut sink), Ok(n) if n > 0) {}
        let body = format!(
            "too many connections (limits.max_connections = {})\n",
            self.max
        );
        let response = format!(
            "HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\n\
             content-length: {}\r\nretry-after: 1\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = stream.try_write(response.as_bytes());
    }
}

impl Listener for LimitedListener {
    type Io = GuardedStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (GuardedStream, SocketAddr) {
        loop {
            let (stream, peer) = match self.inner.accept().await {
                Ok(accepted) => accepted,
                Err(err) => {
                    accept_failed(err).await;
                    continue;
                }
            };
            let Ok(permit) = self.permits.clone().try_acquire_owned() else {
                self.refuse(stream, peer);
                continue;
            };
            self.refusing = false;
            return (
                GuardedStream::new(stream, permit, self.handshake_timeout),
                peer,
            );
        }
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }
}

/// A failed `accept`: a connection that went away before it was accepted is skipped; anything
/// else (out of descriptors) is logged and retried after a pause, as hyper does.
async fn accept_failed(err: io::Error) {
    use io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    if matches!(
        err.kind(),
        ConnectionRefused | ConnectionAborted | ConnectionReset
    ) {
        return;
    }
    tracing::error!(%err, "accept failed; retrying in 1 s");
    tokio::time::sleep(Duration::from_secs(1)).await;
}

/// An accepted connection (TCP, or a `unix://` one): it holds its place under the limit until
/// it is dropped, and fails its reads and writes once the upgrade deadline has passed without
/// an upgrade.
pub struct GuardedStream<S = TcpStream> {
    stream: S,
    _permit: OwnedSemaphorePermit,
    upgraded: Arc<AtomicBool>,
    /// Bytes the socket has taken.
    written: Arc<Progress>,
    deadline: Pin<Box<Sleep>>,
}

impl<S> GuardedStream<S> {
    /// Guard `stream`, holding `permit`, with `handshake_timeout` to upgrade.
    pub fn new(
        stream: S,
        permit: OwnedSemaphorePermit,
        handshake_timeout: Duration,
    ) -> GuardedStream<S> {
        GuardedStream {
            stream,
            _permit: permit,
            upgraded: Arc::new(AtomicBool::new(false)),
            written: Arc::new(Progress::default()),
            deadline: Box::pin(tokio::time::sleep(handshake_timeout)),
        }
    }

    /// The request handler's hold on this connection.
    pub fn handshake(&self) -> Handshake {
        Handshake {
            upgraded: self.upgraded.clone(),
            written: self.written.clone(),
        }
    }

    /// `Err` once the deadline has passed without an upgrade.
    fn check_deadline(&mut self, cx: &mut Context<'_>) -> io::Result<()> {
        if self.upgraded.load(Ordering::Acquire) || self.deadline.as_mut().poll(cx).is_pending() {
            return Ok(());
        }
        Err(io::Error::new(
            io::ErrorKind::TimedOut,
            "websocket handshake not completed in time",
        ))
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for GuardedStream<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if let Err(err) = self.check_deadline(cx) {
            return Poll::Ready(Err(err));
        }
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for GuardedStream<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        if let Err(err) = self.check_deadline(cx) {
            return Poll::Ready(Err(err));
        }
        let written = Pin::new(&mut self.stream).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = &written {
            self.written.record(*n);
        }
        written
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

/// The request handler's hold on its connection's deadline (axum connect info): marking the
/// connection upgraded lifts the deadline. It also gives the connection its socket's count of
/// bytes taken.
#[derive(Clone)]
pub struct Handshake {
    upgraded: Arc<AtomicBool>,
    written: Arc<Progress>,
}

impl Handshake {
    /// The upgrade is accepted: the connection is no longer on the handshake clock.
    pub fn upgraded(&self) {
        self.upgraded.store(true, Ordering::Release);
    }

    /// The bytes the connection's socket has taken.
    pub fn written(&self) -> Arc<Progress> {
        self.written.clone()
    }
}

impl Connected<IncomingStream<'_, LimitedListener>> for Handshake {
    fn connect_info(stream: IncomingStream<'_, LimitedListener>) -> Self {
        stream.io().handshake()
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    #[tokio::test]
    async fn a_connection_counts_what_its_socket_takes() {
        let inner = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = inner.local_addr().unwrap();
        let mut listener = LimitedListener::new(inner, 4, Duration::from_secs(10));
        let mut client = TcpStream::connect(addr).await.unwrap();
        let (mut stream, _) = listener.accept().await;
        stream.upgraded.store(true, Ordering::Release);
        let written = stream.written.clone();
        assert_eq!(written.count(), 0);
        stream.write_all(b"hello, world").await.unwrap();
        let mut got = [0u8; 12];
        client.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"hello, world");
        assert_eq!(written.count(), 12);
    }
}
