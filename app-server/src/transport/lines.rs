//! A line transport over any byte stream (`AsyncRead` + `AsyncWrite`): one JSON message per
//! line in each direction, one connection per stream. stdio is one instance (`stdio.rs`); an
//! in-memory pair (`tokio::io::duplex`) is another, for in-process tests.
//!
//! The outbound queue is bounded as on WebSocket (`connection::outbound`); answers wait for
//! room below its capacity ([`Backpressure::Wait`]). A reader of the output that takes nothing
//! for `limits.outbound_stall_secs` loses its connection (docs/protocol.md §2.5).

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::connection::{Backpressure, Batch, Connection, ConnectionLimits, Outbound};
use crate::transport::ingress::{Ingress, oversized_error};
use crate::transport::link::{CloseBounds, Link};
use crate::transport::stall::{Progress, Stalled, watched};

/// How much of an over-long line is kept to find its id.
const OVERSIZED_PREFIX: usize = 4096;

/// What bounds one line connection.
#[derive(Debug, Clone, Copy)]
pub struct LineLimits {
    /// Longest line accepted (bytes); longer ones get an error and are skipped unbuffered.
    pub max_line_bytes: usize,
    /// How long, after the input's end, the answers to requests already read may take; also
    /// how long closing may wait for the writer and for running handlers.
    pub shutdown_grace: Duration,
    /// What bounds the connection.
    pub connection: ConnectionLimits,
    /// How long the output may take nothing before the connection is closed.
    pub stall: Duration,
}

/// What the two streams are called in logs (`stdin`, `stdout`).
#[derive(Debug, Clone, Copy)]
pub struct StreamNames {
    /// The stream read.
    pub input: &'static str,
    /// The stream written.
    pub output: &'static str,
}

/// Serve one connection over `input` and `output` until the input ends, the output stalls or
/// `shutdown` is cancelled; returns once the connection is closed (queued output written, its
/// running handlers drained). At the input's end, every request read before it is answered
/// first (within the grace).
pub async fn serve<R, W>(
    input: R,
    output: W,
    ingress: Ingress,
    shutdown: &CancellationToken,
    limits: LineLimits,
    names: StreamNames,
) -> End
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (link, outbound) = Link::open(
        ingress,
        Backpressure::Wait,
        shutdown.child_token(),
        limits.connection,
    );
    let connection = link.connection().clone();
    let span = connection.span().clone();
    let writer = tokio::spawn(
        write_lines(
            output,
            outbound,
            connection.clone(),
            limits.stall,
            names.output,
        )
        .instrument(span.clone()),
    );
    let mut input = BufReader::with_capacity(64 * 1024, input);
    let ended = read_lines(
        &mut input,
        &link,
        shutdown,
        limits.max_line_bytes,
        names.input,
    )
    .instrument(span.clone())
    .await;
    if ended == End::Eof {
        // Every request read before the end is owed its answer.
        let drained = tokio::time::timeout(limits.shutdown_grace, connection.answered_all());
        if drained.instrument(span.clone()).await.is_err() {
            tracing::warn!(
                parent: &span,
                grace = ?limits.shutdown_grace,
                "{} closed; requests still unanswered after the shutdown grace",
                names.input,
            );
        }
    }
    let bounds = CloseBounds {
        // A reader of the output that stopped reading must not hold the close up forever.
        writer: Some(limits.shutdown_grace),
        tasks: limits.shutdown_grace,
    };
    link.close(writer, bounds).instrument(span).await;
    ended
}

/// Why reading stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// The input reached its end (or failed).
    Eof,
    /// The daemon is shutting down (a signal).
    Shutdown,
    /// The connection was closed: its client stopped reading the output.
    Closed,
}

/// Hand the input's lines to the connection until EOF, a read error or shutdown.
async fn read_lines<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    link: &Link,
    shutdown: &CancellationToken,
    max_line: usize,
    name: &'static str,
) -> End {
    let connection = link.connection();
    let mut line = Vec::new();
    loop {
        let read = tokio::select! {
            biased;
            () = shutdown.cancelled() => return End::Shutdown,
            () = connection.closed.cancelled() => return End::Closed,
            read = read_line(reader, &mut line, max_line) => read,
        };
        match read {
            Ok(Line::Eof) => break,
            Ok(Line::TooLong(len)) => {
                tracing::warn!(len, max_line, "refusing a line over the message size limit");
                connection
                    .send(oversized_error(&line, Some(len), max_line))
                    .await;
            }
            Ok(Line::Complete) => {
                let text = String::from_utf8_lossy(&line);
                let text = text.trim();
                if !text.is_empty() {
                    link.receive(text).await;
                }
            }
            Err(err) => {
                tracing::warn!(%err, "{name} read failed; closing");
                break;
            }
        }
    }
    tracing::debug!("{name} closed");
    End::Eof
}

/// Write queued frames to the output, one per line. Whatever is queued is written with one
/// batch (the hot path during a streamed reply: one system call for many deltas), under the
/// stall clock. On close, write what is already queued and stop.
async fn write_lines<W: AsyncWrite + Unpin>(
    mut output: W,
    mut outbound: Outbound,
    connection: Arc<Connection>,
    stall: Duration,
    name: &'static str,
) {
    let progress = Progress::default();
    let mut frames = Vec::with_capacity(MAX_BATCH_FRAMES);
    let mut buf = Vec::with_capacity(64 * 1024);
    let closed = connection.closed.clone();
    loop {
        match outbound
            .next_batch(&mut frames, MAX_BATCH_FRAMES, &closed)
            .await
        {
            Batch::Frames => {}
            Batch::Closed => break,
            Batch::Ended => return,
        }
        gather(&mut outbound, &mut frames, &mut buf);
        match watched(
            write_batch(&mut output, &mut buf, &progress),
            &progress,
            stall,
        )
        .await
        {
            Ok(Ok(())) => {}
            Ok(Err(_)) => return,
            Err(Stalled) => {
                connection.close_slow(&format!("{name} has taken nothing for {stall:?}"));
                return;
            }
        }
    }
    while outbound.try_recv_many(&mut frames, MAX_BATCH_FRAMES) {
        gather(&mut outbound, &mut frames, &mut buf);
    }
    let _ = write_batch(&mut output, &mut buf, &progress).await;
}

/// Bytes gathered before a write.
const MAX_WRITE_BATCH: usize = 1024 * 1024;

/// Frames taken from the queue at once.
const MAX_BATCH_FRAMES: usize = 256;

/// Bytes handed to the output at once: each piece written counts as progress on the stall
/// clock.
const WRITE_PIECE: usize = 64 * 1024;

/// Move `frames`, and whatever else is queued up to [`MAX_WRITE_BATCH`], into `buf` as lines.
fn gather(outbound: &mut Outbound, frames: &mut Vec<Bytes>, buf: &mut Vec<u8>) {
    loop {
        for frame in frames.drain(..) {
            push_line(buf, &frame);
        }
        if buf.len() >= MAX_WRITE_BATCH || !outbound.try_recv_many(frames, MAX_BATCH_FRAMES) {
            return;
        }
    }
}

fn push_line(buf: &mut Vec<u8>, frame: &Bytes) {
    if !frame.is_empty() {
        buf.extend_from_slice(frame);
        buf.push(b'\n');
    }
}

async fn write_batch<W: AsyncWrite + Unpin>(
    output: &mut W,
    buf: &mut Vec<u8>,
    progress: &Progress,
) -> std::io::Result<()> {
    for piece in buf.chunks(WRITE_PIECE) {
        output.write_all(piece).await?;
        output.flush().await?;
        progress.record(piece.len());
    }
    buf.clear();
    if buf.capacity() > 4 * MAX_WRITE_BATCH {
        buf.shrink_to(64 * 1024);
    }
    Ok(())
}

/// Outcome of reading one line.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// A line (without its newline) is in the buffer. A last line without a newline counts.
    Complete,
    /// The line exceeded the limit and was discarded (its start is in the buffer); its length.
    TooLong(usize),
    /// End of input and nothing buffered.
    Eof,
}

/// Read one `\n`-terminated line into `buf` (cleared first). A line over `max` bytes is read
/// to its end without being buffered: `buf` keeps only its first few KiB.
pub async fn read_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    buf: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<Line> {
    buf.clear();
    let mut len = 0usize;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(if len == 0 {
                Line::Eof
            } else if len > max {
                Line::TooLong(len)
            } else {
                Line::Complete
            });
        }
        let (chunk, done) = match available.iter().position(|b| *b == b'\n') {
            Some(i) => (&available[..i], Some(i + 1)),
            None => (available, None),
        };
        let before = len;
        len += chunk.len();
        if len <= max {
            buf.extend_from_slice(chunk);
        } else if before <= max {
            // Over the limit: keep only the start (where the id usually is), read on unbuffered.
            // Nothing past that start is ever copied, and the buffer gives back what it held.
            let kept = OVERSIZED_PREFIX.min(max);
            let room = kept.saturating_sub(buf.len()).min(chunk.len());
            buf.extend_from_slice(&chunk[..room]);
            buf.truncate(kept);
            buf.shrink_to(kept);
        }
        let consumed = done.unwrap_or(chunk.len());
        reader.consume(consumed);
        if done.is_some() {
            return Ok(if len > max {
                Line::TooLong(len)
            } else {
                Line::Complete
            });
        }
    }
}

#[cfg(test)]
mod proptests;

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn lines_and_limits() {
        let input: &[u8] = b"abc\n0123456789\nxy\n\nlast";
        let mut reader = BufReader::with_capacity(4, input);
        let mut buf = Vec::new();
        let expected: [(Line, &[u8], &str); 5] = [
            (Line::Complete, b"abc", "a line"),
            (
                Line::TooLong(10),
                b"01234",
                "the start of the long line is kept",
            ),
            (Line::Complete, b"xy", "the line after the long one"),
            (Line::Complete, b"", "an empty line"),
            (Line::Complete, b"last", "a last line without its newline"),
        ];
        for (line, text, what) in expected {
            assert_eq!(
                read_line(&mut reader, &mut buf, 5).await.unwrap(),
                line,
                "{what}"
            );
            assert_eq!(buf, text, "{what}");
        }
        assert_eq!(
            read_line(&mut reader, &mut buf, 5).await.unwrap(),
            Line::Eof
        );
    }
}
