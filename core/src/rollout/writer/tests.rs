use std::sync::atomic::{AtomicUsize, Ordering};

use parking_lot::Mutex;

use super::*;

/// A disk that takes at most `room` more bytes (then `ENOSPC`), and fails `fail_syncs`
/// more fsyncs; what it took is in `bytes`.
#[derive(Clone, Default)]
struct Disk {
    bytes: Arc<Mutex<Vec<u8>>>,
    room: Arc<AtomicUsize>,
    fail_syncs: Arc<AtomicUsize>,
}

impl Write for Disk {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let room = self.room.load(Ordering::SeqCst);
        if room == 0 {
            return Err(std::io::Error::from_raw_os_error(28)); // ENOSPC
        }
        let n = buf.len().min(room);
        self.room.fetch_sub(n, Ordering::SeqCst);
        self.bytes.lock().extend_from_slice(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Sink for Disk {
    fn sync(&mut self) -> std::io::Result<()> {
        let left = self.fail_syncs.load(Ordering::SeqCst);
        if left > 0 {
            self.fail_syncs.store(left - 1, Ordering::SeqCst);
            return Err(std::io::Error::from_raw_os_error(5)); // EIO
        }
        Ok(())
    }
}

fn name(n: usize) -> RolloutRecord {
    RolloutRecord::ThreadNameSet {
        name: format!("name {n}"),
    }
}

fn names(bytes: &[u8]) -> Vec<String> {
    std::str::from_utf8(bytes)
        .unwrap()
        .lines()
        .map(
            |line| match serde_json::from_str::<RolloutLine>(line).unwrap().record {
                RolloutRecord::ThreadNameSet { name } => name,
                other => panic!("unexpected {other:?}"),
            },
        )
        .collect()
}

#[tokio::test]
async fn a_failed_write_is_reported_and_retried_until_it_succeeds() {
    let disk = Disk::default();
    disk.room.store(100, Ordering::SeqCst);
    let writer = RolloutWriter::spawn(PathBuf::from("disk"), disk.clone());
    for n in 0..5 {
        writer.append(name(n));
    }
    let err = writer.flush(true).await.unwrap_err();
    assert!(err.to_string().contains("could not be written"), "{err}");
    // Still full: the next flush fails too, and nothing new is lost meanwhile.
    writer.append(name(5));
    assert!(writer.flush(false).await.is_err());
    assert_eq!(disk.bytes.lock().len(), 100, "a torn line, no more");

    // Room again: everything lands once, in order, the torn line completed.
    disk.room.store(usize::MAX, Ordering::SeqCst);
    writer.append(name(6));
    writer.flush(true).await.unwrap();
    let expected: Vec<String> = (0..7).map(|n| format!("name {n}")).collect();
    assert_eq!(names(&disk.bytes.lock()), expected);
    writer.flush(true).await.unwrap();
}

#[tokio::test]
async fn a_failed_fsync_is_reported_and_owed() {
    let disk = Disk::default();
    disk.room.store(usize::MAX, Ordering::SeqCst);
    disk.fail_syncs.store(1, Ordering::SeqCst);
    let writer = RolloutWriter::spawn(PathBuf::from("disk"), disk.clone());
    writer.append(name(0));
    assert!(writer.flush(true).await.is_err());
    // Nothing new to write, but the sync is owed: the next fsync flush retries it.
    writer.flush(true).await.unwrap();
    assert_eq!(names(&disk.bytes.lock()), ["name 0"]);
    writer.close().await.unwrap();
}

#[tokio::test]
async fn a_resumed_writer_runs_its_hook_once_before_it_first_changes_the_file() {
    let home = tempfile::tempdir().unwrap();
    let id = weft_protocol::ThreadId::from("0190f5a4-1b2c-7d3e-8f40-123456789abc");
    let meta = crate::rollout::tests::meta(&id, 1_700_000_000);
    let created = RolloutWriter::create(home.path(), meta).await.unwrap();
    let path = created.path().to_path_buf();
    created.close().await.unwrap();
    let ran = Arc::new(AtomicUsize::new(0));
    let hook = |ran: &Arc<AtomicUsize>| -> BeforeFirstChange {
        let ran = ran.clone();
        Box::pin(async move {
            ran.fetch_add(1, Ordering::SeqCst);
        })
    };
    // Flushed and closed without a line: the hook never runs, the file is as it was.
    let len = std::fs::metadata(&path).unwrap().len();
    let writer = RolloutWriter::resume_then(&path, hook(&ran)).await.unwrap();
    writer.flush(true).await.unwrap();
    assert!(!writer.changed());
    writer.close().await.unwrap();
    assert_eq!(ran.load(Ordering::SeqCst), 0);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), len);
    // Lines: the hook runs once, before the first is written.
    let writer = RolloutWriter::resume_then(&path, hook(&ran)).await.unwrap();
    let probe = writer.clone();
    for name in ["a", "b"] {
        writer.append(RolloutRecord::ThreadNameSet { name: name.into() });
        writer.flush(false).await.unwrap();
    }
    writer.close().await.unwrap();
    assert!(probe.changed());
    assert_eq!(ran.load(Ordering::SeqCst), 1);
    assert!(std::fs::metadata(&path).unwrap().len() > len);
    // A plain writer counts as changed from the start.
    let plain = RolloutWriter::resume(&path).await.unwrap();
    assert!(plain.changed());
    plain.close().await.unwrap();
}
