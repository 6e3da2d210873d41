//! [`RolloutWriter`]: the one writer of a rollout file, batching lines off the hot path.

use std::fs::{File, OpenOptions};
use std::future::Future;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::{mpsc, oneshot};

use super::RolloutError;
use super::paths::{lock_exclusive, rollout_path, sync_dirs};
use super::record::{RolloutLine, RolloutRecord, SessionMeta};

/// Most messages handled (and lines written with one `write`) per batch.
const MAX_BATCH: usize = 1024;

/// The writer of one rollout file. Cheap to clone; every clone feeds the same queue, so lines
/// land in the order they were appended across clones.
///
/// It holds an exclusive advisory lock on the file until the background task ends (after
/// [`RolloutWriter::close`], or once every clone is dropped and the queue is written out).
#[derive(Debug, Clone)]
pub struct RolloutWriter {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    path: PathBuf,
    tx: mpsc::UnboundedSender<Msg>,
    /// Whether the file may have changed since this writer took it (see
    /// [`RolloutWriter::changed`]).
    changed: Arc<AtomicBool>,
}

/// What a writer runs, once, before it first changes its file ([`RolloutWriter::resume_then`]).
pub type BeforeFirstChange = Pin<Box<dyn Future<Output = ()> + Send>>;

/// What the writer task is asked to do. Boxed lines keep the message small: the channel's first
/// block (32 messages) is allocated for every loaded thread, idle or not.
#[derive(Debug)]
enum Msg {
    Line(Box<RolloutLine>),
    Flush {
        fsync: bool,
        done: oneshot::Sender<Result<(), RolloutError>>,
    },
    Close {
        done: oneshot::Sender<Result<(), RolloutError>>,
    },
    /// Cut the file to its first `len` bytes, durably (`thread/revert`), after the lines
    /// queued before.
    Truncate {
        len: u64,
        done: oneshot::Sender<Result<(), RolloutError>>,
    },
}

impl RolloutWriter {
    /// Create the rollout of a new thread at [`rollout_path`] (directories included), lock it
    /// and write the header line before returning, so the thread can be read at once. Must be
    /// called inside a tokio runtime.
    pub async fn create(home: &Path, meta: SessionMeta) -> Result<RolloutWriter, RolloutError> {
        RolloutWriter::create_stamped(home, meta, crate::time::now_ms()).await
    }

    /// [`RolloutWriter::create`] with the header line stamped `header_ms` (Unix ms): a thread
    /// imported from another agent's session keeps that session's times (docs/protocol.md
    /// §7.39).
    pub async fn create_stamped(
        home: &Path,
        meta: SessionMeta,
        header_ms: i64,
    ) -> Result<RolloutWriter, RolloutError> {
        if meta.ephemeral {
            return Err(RolloutError::Ephemeral(meta.id.to_string()));
        }
        let path = rollout_path(home, meta.created_at, &meta.id);
        let header = RolloutLine {
            ts: header_ms,
            record: RolloutRecord::SessionMeta(Box::new(meta)),
        };
        let task_path = path.clone();
        let top = home.to_path_buf();
        let (file, _) = blocking(&path, move || create_file(&task_path, &top, &header)).await?;
        Ok(RolloutWriter::spawn(path, file))
    }

    /// Write the whole rollout of a new thread in one blocking pass, before any writer holds
    /// it: the header (stamped now), then what `body` writes, fsynced with its directories.
    /// `body` also gets the header line as written. The file is removed again when `body`
    /// fails. Returns its path, for [`RolloutWriter::resume`]. A fork streams its source's lines
    /// into it this way ([`super::copy_fork`]), instead of queueing them all in a writer's
    /// channel.
    pub async fn write_new<T: Send + 'static>(
        home: &Path,
        meta: SessionMeta,
        body: impl FnOnce(&mut dyn Write, &[u8]) -> Result<T, RolloutError> + Send + 'static,
    ) -> Result<(PathBuf, T), RolloutError> {
        if meta.ephemeral {
            return Err(RolloutError::Ephemeral(meta.id.to_string()));
        }
        let path = rollout_path(home, meta.created_at, &meta.id);
        let header = RolloutLine::now(RolloutRecord::SessionMeta(Box::new(meta)));
        let task_path = path.clone();
        let top = home.to_path_buf();
        let made = blocking(&path, move || {
            let (file, header) = create_file(&task_path, &top, &header)?;
            let written = (|| {
                let mut out = std::io::BufWriter::with_capacity(256 * 1024, &file);
                let made = body(&mut out, &header)?;
                out.flush().map_err(|e| RolloutError::io(&task_path, e))?;
                drop(out);
                file.sync_data()
                    .map_err(|e| RolloutError::io(&task_path, e))?;
                Ok(made)
            })();
            if written.is_err() {
                drop(file);
                let _ = std::fs::remove_file(&task_path);
            }
            written
        })
        .await?;
        Ok((path, made))
    }

    /// Open an existing rollout to append to it (resuming a thread, naming a stored one, …):
    /// lock it, check that its header reads back (else [`RolloutError::BadHeader`], the file
    /// untouched), and end its last line with a newline if it lacks one, so new lines start on
    /// a line of their own. The file is opened for appending only: nothing in it is rewritten
    /// or cut, a torn last line included (readers skip it).
    pub async fn resume(path: &Path) -> Result<RolloutWriter, RolloutError> {
        let task_path = path.to_path_buf();
        let file = blocking(path, move || open_existing(&task_path)).await?;
        Ok(RolloutWriter::spawn(path.to_path_buf(), file))
    }

    /// [`RolloutWriter::resume`], running `before` once before the file is first written to or
    /// cut, and only then: a thread resumed to be read, never run, changes nothing (the
    /// manager marks its index row behind the file this way, docs/architecture.md §10).
    pub async fn resume_then(
        path: &Path,
        before: BeforeFirstChange,
    ) -> Result<RolloutWriter, RolloutError> {
        let task_path = path.to_path_buf();
        let file = blocking(path, move || open_existing(&task_path)).await?;
        Ok(RolloutWriter::spawn_with(
            path.to_path_buf(),
            file,
            Some(before),
        ))
    }

    /// The writer of `file` (a [`File`], or a failing stand-in in tests).
    pub(super) fn spawn(path: PathBuf, file: impl Sink) -> RolloutWriter {
        RolloutWriter::spawn_with(path, file, None)
    }

    fn spawn_with(
        path: PathBuf,
        file: impl Sink,
        before: Option<BeforeFirstChange>,
    ) -> RolloutWriter {
        let (tx, rx) = mpsc::unbounded_channel();
        let changed = Arc::new(AtomicBool::new(before.is_none()));
        let first = FirstChange {
            before,
            changed: changed.clone(),
        };
        tokio::spawn(run(path.clone(), file, rx, first));
        RolloutWriter {
            inner: Arc::new(Inner { path, tx, changed }),
        }
    }

    /// Whether the file may differ from what it was when this writer took it: always, except
    /// for a writer of [`RolloutWriter::resume_then`] that has not written to it yet.
    pub fn changed(&self) -> bool {
        self.inner.changed.load(Ordering::Acquire)
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Queue a record, stamped now. Never blocks; errors show up in the next
    /// [`flush`](RolloutWriter::flush).
    pub fn append(&self, record: RolloutRecord) {
        self.append_line(RolloutLine::now(record));
    }

    /// Queue a line with its own timestamp (copying records into a fork keeps their times).
    pub fn append_line(&self, line: RolloutLine) {
        if self.inner.tx.send(Msg::Line(Box::new(line))).is_err() {
            tracing::warn!(path = %self.inner.path.display(), "rollout writer closed; record dropped");
        }
    }

    /// Wait until every record appended so far is written, and also fsynced when `fsync` (do
    /// that at turn boundaries, before `turn/completed` is sent).
    pub async fn flush(&self, fsync: bool) -> Result<(), RolloutError> {
        let (done, rx) = oneshot::channel();
        self.inner
            .tx
            .send(Msg::Flush { fsync, done })
            .map_err(|_| self.closed())?;
        rx.await.map_err(|_| self.closed())?
    }

    /// Write everything queued before, then cut the file to its first `len` bytes and sync
    /// it: the one operation that shortens a rollout, `thread/revert` dropping the turns from
    /// a turn's start on (docs/protocol.md §12). `len` must be the start of a line.
    pub async fn truncate(&self, len: u64) -> Result<(), RolloutError> {
        let (done, rx) = oneshot::channel();
        self.inner
            .tx
            .send(Msg::Truncate { len, done })
            .map_err(|_| self.closed())?;
        rx.await.map_err(|_| self.closed())?
    }

    /// Write and fsync everything queued, then release the file and its lock. Records
    /// appended afterwards through other clones are dropped (with a warning).
    pub async fn close(self) -> Result<(), RolloutError> {
        let (done, rx) = oneshot::channel();
        self.inner
            .tx
            .send(Msg::Close { done })
            .map_err(|_| self.closed())?;
        rx.await.map_err(|_| self.closed())?
    }

    fn closed(&self) -> RolloutError {
        RolloutError::Closed {
            path: self.inner.path.clone(),
        }
    }
}

/// Run blocking file work off the async threads.
async fn blocking<T: Send + 'static>(
    path: &Path,
    work: impl FnOnce() -> Result<T, RolloutError> + Send + 'static,
) -> Result<T, RolloutError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|err| RolloutError::io(path, std::io::Error::other(err)))?
}

/// Create the file with its header line, durably: the header fsynced, then the directories
/// from the file's up to `top` (new ones included), so the new thread survives a power cut.
/// Returns the file, locked, and the header line as written.
fn create_file(
    path: &Path,
    top: &Path,
    header: &RolloutLine,
) -> Result<(File, Vec<u8>), RolloutError> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| RolloutError::io(parent, e))?;
    }
    let mut file = OpenOptions::new()
        .read(true)
        .append(true)
        .create_new(true)
        .open(path)
        .map_err(|e| RolloutError::io(path, e))?;
    lock_exclusive(&file, path)?;
    let mut line = serde_json::to_vec(header).map_err(|e| RolloutError::WriteFailed {
        path: path.to_path_buf(),
        source: Arc::new(std::io::Error::from(e)),
    })?;
    line.push(b'\n');
    if let Err(err) = file.write_all(&line).and_then(|()| file.sync_data()) {
        // A file without its whole header would be a damaged rollout: take it back.
        drop(file);
        let _ = std::fs::remove_file(path);
        return Err(RolloutError::io(path, err));
    }
    if let Some(parent) = path.parent() {
        sync_dirs(parent, top)?;
    }
    Ok((file, line))
}

fn open_existing(path: &Path) -> Result<File, RolloutError> {
    let mut file = OpenOptions::new()
        .read(true)
        .append(true)
        .open(path)
        .map_err(|e| RolloutError::io(path, e))?;
    lock_exclusive(&file, path)?;
    check_header(&mut file, path)?;
    terminate_last_line(&mut file).map_err(|e| RolloutError::io(path, e))?;
    Ok(file)
}

/// A rollout is only appended to after its `session_meta` header was read back: a file
/// without one is refused as it is ([`RolloutError::BadHeader`]), never written.
fn check_header(file: &mut File, path: &Path) -> Result<(), RolloutError> {
    file.seek(SeekFrom::Start(0))
        .map_err(|e| RolloutError::io(path, e))?;
    // Small reads: a header is a few hundred bytes, and this runs at every resume.
    let mut reader = std::io::BufReader::with_capacity(1024, &*file);
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = std::io::BufRead::read_until(&mut reader, b'\n', &mut line)
            .map_err(|e| RolloutError::io(path, e))?;
        if read == 0 || !line.iter().all(u8::is_ascii_whitespace) {
            break;
        }
    }
    super::reader::parse_header(path, &line).map(drop)
}

/// Make the file end with a newline, so new lines start on a line of their own. Nothing is
/// ever cut: a torn last line stays as it is (the reader skips it) and gets its newline.
fn terminate_last_line(file: &mut File) -> std::io::Result<()> {
    let len = file.seek(SeekFrom::End(0))?;
    if len == 0 {
        return Ok(());
    }
    let mut last = [0u8; 1];
    file.seek(SeekFrom::Start(len - 1))?;
    file.read_exact(&mut last)?;
    if last[0] != b'\n' {
        // Opened with `append`: this lands at the end whatever the cursor.
        file.write_all(b"\n")?;
    }
    Ok(())
}

/// The background task: batches queued lines into one write, answers flushes once their
/// lines are written (and fsynced when asked).
///
/// A failed write or fsync is never final: the bytes that did not reach the file stay
/// buffered (and an fsync stays owed), every flush answers the error until a later attempt,
/// made with the next batch, writes them all, in order. So a flush succeeds exactly when
/// everything appended before it is in the file (and synced, when asked).
/// What a writer task does before it first changes its file.
struct FirstChange {
    before: Option<BeforeFirstChange>,
    changed: Arc<AtomicBool>,
}

impl FirstChange {
    /// Run the hook, if it has not run, before a change.
    async fn ahead(&mut self) {
        if let Some(before) = self.before.take() {
            before.await;
            self.changed.store(true, Ordering::Release);
        }
    }
}

async fn run<S: Sink>(
    path: PathBuf,
    file: S,
    mut rx: mpsc::UnboundedReceiver<Msg>,
    mut change: FirstChange,
) {
    let mut file = Some(file);
    // Serialized lines not yet in the file (left by a failed write, or queued now).
    let mut unwritten: Vec<u8> = Vec::new();
    // Written since the last successful fsync.
    let mut unsynced = false;
    loop {
        let Some(first) = rx.recv().await else {
            break;
        };
        let mut batch = vec![first];
        // A truncation ends its batch: what is queued after it is written after it.
        while batch.len() < MAX_BATCH && !matches!(batch.last(), Some(Msg::Truncate { .. })) {
            match rx.try_recv() {
                Ok(msg) => batch.push(msg),
                Err(_) => break,
            }
        }
        let mut waiters = Vec::new();
        let mut fsync = false;
        let mut close = None;
        let mut truncate = None;
        for msg in batch.drain(..) {
            match msg {
                Msg::Line(_) if close.is_some() => {
                    tracing::warn!(path = %path.display(), "rollout writer closed; record dropped");
                }
                Msg::Line(line) => match serde_json::to_writer(&mut unwritten, &*line) {
                    Ok(()) => unwritten.push(b'\n'),
                    Err(err) => {
                        tracing::error!(path = %path.display(), %err, "cannot serialize a rollout record");
                    }
                },
                Msg::Flush { fsync: sync, done } => {
                    fsync |= sync;
                    waiters.push(done);
                }
                Msg::Close { done } => {
                    fsync = true;
                    close = Some(done);
                }
                Msg::Truncate { len, done } => truncate = Some((len, done)),
            }
        }
        if !unwritten.is_empty() || truncate.is_some() {
            change.ahead().await;
        }
        let mut result = Ok(());
        if !unwritten.is_empty() || (fsync && unsynced) {
            let Some(owned) = file.take() else {
                break;
            };
            let buf = std::mem::take(&mut unwritten);
            let sync = fsync;
            let outcome = tokio::task::spawn_blocking(move || {
                let mut owned = owned;
                let attempt = write_batch(&mut owned, &buf, sync);
                (owned, buf, attempt)
            })
            .await;
            let Ok((owned, buf, attempt)) = outcome else {
                tracing::error!(path = %path.display(), "rollout write task failed");
                break;
            };
            file = Some(owned);
            unsynced |= attempt.written > 0;
            if attempt.written < buf.len() {
                unwritten = buf[attempt.written..].to_vec();
            }
            match attempt.error {
                None => {
                    if sync {
                        unsynced = false;
                    }
                }
                Some(err) => {
                    tracing::error!(path = %path.display(), %err, "rollout write failed; will retry");
                    result = Err(Arc::new(err));
                }
            }
        }
        let answer = || {
            result.clone().map_err(|source| RolloutError::WriteFailed {
                path: path.clone(),
                source,
            })
        };
        for done in waiters {
            let _ = done.send(answer());
        }
        if let Some((len, done)) = truncate {
            let outcome = match (result.clone(), file.take()) {
                (Err(source), owned) => {
                    file = owned;
                    Err(source)
                }
                (Ok(()), None) => break,
                (Ok(()), Some(owned)) => {
                    let joined = tokio::task::spawn_blocking(move || {
                        let mut owned = owned;
                        let cut = owned.truncate(len);
                        (owned, cut)
                    })
                    .await;
                    let Ok((owned, cut)) = joined else {
                        tracing::error!(path = %path.display(), "rollout truncation task failed");
                        break;
                    };
                    file = Some(owned);
                    cut.map_err(Arc::new)
                }
            };
            let _ = done.send(outcome.map_err(|source| RolloutError::WriteFailed {
                path: path.clone(),
                source,
            }));
        }
        if let Some(done) = close {
            // Release the lock before answering, so the caller may reopen the file at once.
            drop(file.take());
            let _ = done.send(answer());
            break;
        }
    }
    if !unwritten.is_empty() {
        tracing::error!(
            path = %path.display(),
            bytes = unwritten.len(),
            "rollout writer stopped with records it could not write"
        );
    }
}

/// How far one write attempt got.
struct Attempt {
    /// Bytes of the batch now in the file.
    written: usize,
    /// Why it stopped short (or the fsync failed).
    error: Option<std::io::Error>,
}

/// Where a writer's bytes go: the rollout file, or a stand-in in tests.
pub(super) trait Sink: Write + Send + 'static {
    /// Make what was written durable (`fdatasync` for a file).
    fn sync(&mut self) -> std::io::Result<()>;

    /// Cut what was written to its first `len` bytes, durably.
    fn truncate(&mut self, len: u64) -> std::io::Result<()> {
        let _ = len;
        Err(std::io::ErrorKind::Unsupported.into())
    }
}

impl Sink for File {
    fn sync(&mut self) -> std::io::Result<()> {
        self.sync_data()
    }

    fn truncate(&mut self, len: u64) -> std::io::Result<()> {
        self.set_len(len)?;
        self.sync_all()
    }
}

/// Write `buf` (as far as it goes), then sync when asked and everything was written.
fn write_batch(sink: &mut impl Sink, buf: &[u8], fsync: bool) -> Attempt {
    let mut written = 0;
    while written < buf.len() {
        match sink.write(&buf[written..]) {
            Ok(0) => {
                return Attempt {
                    written,
                    error: Some(std::io::ErrorKind::WriteZero.into()),
                };
            }
            Ok(n) => written += n,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
            Err(err) => {
                return Attempt {
                    written,
                    error: Some(err),
                };
            }
        }
    }
    let error = if fsync { sink.sync().err() } else { None };
    Attempt { written, error }
}

#[cfg(test)]
mod tests;
