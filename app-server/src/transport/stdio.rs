//! stdio: one JSON message per line in each direction; one connection per process. stdin EOF
//! ends the connection and the process, once every request read before it is answered.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::connection::{Backpressure, Connection};
use crate::transport::ingress::{Ingress, classify, log_dropped, oversized_error};

/// How much of an over-long line is kept to find its id.
const OVERSIZED_PREFIX: usize = 4096;

/// What bounds one stdio connection.
#[derive(Debug, Clone, Copy)]
pub struct StdioLimits {
    /// Longest line accepted (bytes); longer ones get an error and are skipped unbuffered.
    pub max_line_bytes: usize,
    /// How long, after stdin's end, the answers to requests already read may take.
    pub shutdown_grace: Duration,
}

/// Serve one connection over stdin/stdout until stdin closes or `shutdown` is cancelled.
/// Cancels `shutdown` itself on EOF, and returns once queued output is written.
pub async fn serve(ingress: Ingress, shutdown: CancellationToken, limits: StdioLimits) {
    let (connection, outbound) = Connection::new(
        ingress.next_connection_id(),
        Backpressure::Wait,
        shutdown.child_token(),
    );
    let connection = Arc::new(connection);
    let span = connection.span().clone();
    ingress.opened(connection.clone());
    let writer = tokio::spawn(write_lines(outbound, shutdown.clone()).instrument(span.clone()));
    let ended = read_lines(&ingress, &connection, &shutdown, limits.max_line_bytes)
        .instrument(span.clone())
        .await;
    if ended == End::Eof {
        // Every request read before the end is owed its answer; the process exits after.
        let drained = tokio::time::timeout(limits.shutdown_grace, connection.answered_all());
        if drained.instrument(span).await.is_err() {
            tracing::warn!(
                grace = ?limits.shutdown_grace,
                "stdin closed; requests still unanswered after the shutdown grace"
            );
        }
    }
    ingress.closed(connection.id).await;
    shutdown.cancel();
    // A reader of stdout that stopped reading must not hold the exit up forever.
    let _ = tokio::time::timeout(limits.shutdown_grace, writer).await;
}

/// Why reading stopped.
#[derive(Debug, PartialEq, Eq)]
enum End {
    /// stdin reached its end (or failed).
    Eof,
    /// The daemon is shutting down (a signal).
    Shutdown,
}

/// Hand stdin's lines to the ingress until EOF, a read error or shutdown.
async fn read_lines(
    ingress: &Ingress,
    connection: &Arc<Connection>,
    shutdown: &CancellationToken,
    max_line: usize,
) -> End {
    let mut reader = BufReader::with_capacity(64 * 1024, tokio::io::stdin());
    let mut line = Vec::new();
    loop {
        let read = tokio::select! {
            read = read_line(&mut reader, &mut line, max_line) => read,
            () = shutdown.cancelled() => return End::Shutdown,
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
                if text.is_empty() {
                    continue;
                }
                match classify(text) {
                    Ok(message) => ingress.submit(connection, message).await,
                    Err(reason) => log_dropped(connection.id, &reason, text),
                }
            }
            Err(err) => {
                tracing::warn!(%err, "stdin read failed; closing");
                break;
            }
        }
    }
    tracing::info!("stdin closed; shutting down");
    End::Eof
}

/// Write queued frames to stdout, one per line. Whatever is queued is written with one
/// `write_all` (the hot path during a streamed reply: one system call for many deltas). On
/// shutdown, write what is already queued and stop.
async fn write_lines(mut outbound: mpsc::Receiver<Bytes>, shutdown: CancellationToken) {
    let mut stdout = tokio::io::stdout();
    let mut buf = Vec::with_capacity(64 * 1024);
    loop {
        let frame = tokio::select! {
            biased;
            frame = outbound.recv() => frame,
            () = shutdown.cancelled() => break,
        };
        let Some(frame) = frame else { return };
        push_line(&mut buf, &frame);
        while buf.len() < MAX_WRITE_BATCH {
            match outbound.try_recv() {
                Ok(frame) => push_line(&mut buf, &frame),
                Err(_) => break,
            }
        }
        if write_batch(&mut stdout, &mut buf).await.is_err() {
            return;
        }
    }
    while let Ok(frame) = outbound.try_recv() {
        push_line(&mut buf, &frame);
    }
    let _ = write_batch(&mut stdout, &mut buf).await;
}

/// Bytes gathered before a write.
const MAX_WRITE_BATCH: usize = 1024 * 1024;

fn push_line(buf: &mut Vec<u8>, frame: &Bytes) {
    if !frame.is_empty() {
        buf.extend_from_slice(frame);
        buf.push(b'\n');
    }
}

async fn write_batch(stdout: &mut tokio::io::Stdout, buf: &mut Vec<u8>) -> std::io::Result<()> {
    if buf.is_empty() {
        return Ok(());
    }
    stdout.write_all(buf).await?;
    stdout.flush().await?;
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
        assert_eq!(
            read_line(&mut reader, &mut buf, 5).await.unwrap(),
            Line::Complete
        );
        assert_eq!(buf, b"abc");
        assert_eq!(
            read_line(&mut reader, &mut buf, 5).await.unwrap(),
            Line::TooLong(10)
        );
        assert_eq!(buf, b"01234", "the start of the long line is kept");
        assert_eq!(
            read_line(&mut reader, &mut buf, 5).await.unwrap(),
            Line::Complete
        );
        assert_eq!(buf, b"xy");
        assert_eq!(
            read_line(&mut reader, &mut buf, 5).await.unwrap(),
            Line::Complete
        );
        assert!(buf.is_empty());
        assert_eq!(
            read_line(&mut reader, &mut buf, 5).await.unwrap(),
            Line::Complete
        );
        assert_eq!(buf, b"last");
        assert_eq!(
            read_line(&mut reader, &mut buf, 5).await.unwrap(),
            Line::Eof
        );
    }
}
