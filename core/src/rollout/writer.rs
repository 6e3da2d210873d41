//! [`RolloutWriter`]: the one writer of a rollout file, batching lines off the hot path.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::sync::{mpsc, oneshot};

use super::RolloutError;
use super::paths::{lock_exclusive, rollout_path};
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
}

#[derive(Debug)]
#[expect(
    clippy::large_enum_variant,
    reason = "lines are nearly every message; boxing them would only add an allocation"
)]
enum Msg {
    Line(RolloutLine),
    Flush {
        fsync: bool,
        done: oneshot::Sender<Result<(), RolloutError>>,
    },
    Close {
        done: oneshot::Sender<Result<(), RolloutError>>,
    },
}

impl RolloutWriter {
    /// Create the rollout of a new thread at [`rollout_path`] (directories included), lock it
    /// and write the header line before returning, so the thread can be read at once. Must be
    /// called inside a tokio runtime.
    pub async fn create(home: &Path, meta: SessionMeta) -> Result<RolloutWriter, RolloutError> {
        if meta.ephemeral {
            return Err(RolloutError::Ephemeral(meta.id.to_string()));
        }
        let path = rollout_path(home, meta.created_at, &meta.id);
        let header = RolloutLine::now(RolloutRecord::SessionMeta(Box::new(meta)));
        let task_path = path.clone();
        let file = blocking(&path, move || create_file(&task_path, &header)).await?;
        Ok(RolloutWriter::spawn(path, file))
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

    fn spawn(path: PathBuf, file: File) -> RolloutWriter {
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(run(path.clone(), file, rx));
        RolloutWriter {
            inner: Arc::new(Inner { path, tx }),
        }
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
        if self.inner.tx.send(Msg::Line(line)).is_err() {
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

fn create_file(path: &Path, header: &RolloutLine) -> Result<File, RolloutError> {
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
    file.write_all(&line)
        .map_err(|e| RolloutError::io(path, e))?;
    Ok(file)
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
    let mut reader = std::io::BufReader::new(&*file);
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
async fn run(path: PathBuf, file: File, mut rx: mpsc::UnboundedReceiver<Msg>) {
    let mut file = Some(file);
    // The first write error; from then on nothing more is written and every flush fails.
    let mut failed: Option<Arc<std::io::Error>> = None;
    loop {
        let Some(first) = rx.recv().await else {
            break;
        };
        // Allocated per batch: an idle thread keeps no buffer.
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match rx.try_recv() {
                Ok(msg) => batch.push(msg),
                Err(_) => break,
            }
        }
        let mut buf = Vec::new();
        let mut waiters = Vec::new();
        let mut fsync = false;
        let mut close = None;
        for msg in batch.drain(..) {
            match msg {
                Msg::Line(_) if close.is_some() => {
                    tracing::warn!(path = %path.display(), "rollout writer closed; record dropped");
                }
                Msg::Line(line) => match serde_json::to_writer(&mut buf, &line) {
                    Ok(()) => buf.push(b'\n'),
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
            }
        }
        if failed.is_none() && (!buf.is_empty() || fsync) {
            let Some(owned) = file.take() else {
                break;
            };
            let outcome = tokio::task::spawn_blocking(move || {
                let mut owned = owned;
                let result = write_batch(&mut owned, &buf, fsync);
                (owned, result)
            })
            .await;
            match outcome {
                Ok((owned, result)) => {
                    file = Some(owned);
                    if let Err(err) = result {
                        tracing::error!(path = %path.display(), %err, "rollout write failed");
                        failed = Some(Arc::new(err));
                    }
                }
                Err(err) => {
                    tracing::error!(path = %path.display(), %err, "rollout write task failed");
                    failed = Some(Arc::new(std::io::Error::other(err)));
                }
            }
        }
        let result = || match &failed {
            None => Ok(()),
            Some(source) => Err(RolloutError::WriteFailed {
                path: path.clone(),
                source: source.clone(),
            }),
        };
        for done in waiters {
            let _ = done.send(result());
        }
        if let Some(done) = close {
            // Release the lock before answering, so the caller may reopen the file at once.
            drop(file.take());
            let _ = done.send(result());
            break;
        }
        if file.is_none() {
            break;
        }
    }
}

fn write_batch(file: &mut File, buf: &[u8], fsync: bool) -> std::io::Result<()> {
    if !buf.is_empty() {
        file.write_all(buf)?;
    }
    if fsync {
        file.sync_data()?;
    }
    Ok(())
}
