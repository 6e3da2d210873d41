//! A rollout's index kept on disk (`$WEFT_HOME/rollout-index/<rollout file name>.idx`), so a
//! fresh daemon pages a big thread by reading the index and the lines a page needs instead of
//! streaming the whole file again (docs/architecture.md §10.3).
//!
//! # Format
//!
//! The magic `WEFTRIX3`, then segments, each `[u32 length][u32 CRC-32 of the payload][payload]`
//! (little-endian); a payload is a postcard-encoded [`Checkpoint`] of the counters after the
//! segment, then the postcard-encoded [`Event`]s of the lines indexed since the previous
//! segment, one after the other (decoded one at a time, never as one big list). The
//! file only grows: each index update appends a segment, and a rollout that shrank or was
//! replaced gets a new file.
//!
//! # Why it can be trusted, and when it is not
//!
//! The sidecar is a cache of what one pass over the rollout would compute; it is never the
//! only copy of anything. So it is written without `fsync`, and it is used only when all of
//! these hold, else it is rebuilt from the rollout:
//! - every segment up to the last one read checks (its CRC, its encoding, and its
//!   checkpoint's `from_bytes` equal to the bytes the segments before it covered);
//!   anything after the last good segment (a torn append) is cut off;
//! - the rollout is at least as long as the bytes indexed, and the CRC-32 of its first
//!   [`CHECK_WINDOW`] bytes and of the [`CHECK_WINDOW`] bytes that end where the index ends
//!   are the ones recorded: a file that was rewritten, truncated and regrown, or copied over
//!   from another thread does not pass.
//!
//! What the rollout gained since the last segment is indexed by streaming only that tail
//! ([`RolloutIndex::update`]) and appended as the next segment. The file beside it, the
//! [`super::tail`], holds the last turns and the landmarks, so a resume does not replay every
//! segment.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::event::Event;
use super::{RolloutIndex, identity};

/// The file's first bytes; a new layout gets a new magic (an old file is then rebuilt).
const MAGIC: &[u8; 8] = b"WEFTRIX3";
/// Bytes of the rollout checked at its start and where the index ends, read at every load:
/// 256 bytes hold the header's time and thread id, and the last indexed line's time and ids,
/// which a rewritten, regrown or copied file does not share.
const CHECK_WINDOW: u64 = 256;
/// A segment larger than this is not read (a damaged length field).
const MAX_SEGMENT: u32 = 1 << 30;

/// The counters after a segment's events, and what the rollout looked like there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Checkpoint {
    /// Bytes of the rollout indexed before this segment.
    from_bytes: u64,
    /// ... and after it.
    pub indexed_bytes: u64,
    next_ordinal: u64,
    last_ms: i64,
    max_ms: i64,
    skipped_lines: u64,
    /// CRC-32 of the rollout's first [`CHECK_WINDOW`] bytes (fewer when it is shorter).
    head_crc: u32,
    /// CRC-32 of the [`CHECK_WINDOW`] bytes before `indexed_bytes`.
    tail_crc: u32,
}

impl Checkpoint {
    /// Set the index's counters to the ones after this segment.
    pub(super) fn restore(&self, index: &mut RolloutIndex) {
        index.indexed_bytes = self.indexed_bytes;
        index.next_ordinal = self.next_ordinal;
        index.last_ms = self.last_ms;
        index.landmarks.max_ms = self.max_ms;
        index.skipped_lines = self.skipped_lines as usize;
    }

    /// Whether `rollout` still starts and ends (where this checkpoint's segment ended) with
    /// the bytes it had then.
    pub(super) fn matches(&self, rollout: &mut File) -> bool {
        rollout
            .metadata()
            .is_ok_and(|m| m.len() >= self.indexed_bytes)
            && crcs(rollout, self.indexed_bytes).ok() == Some((self.head_crc, self.tail_crc))
    }
}

/// An open sidecar: its path, its length, and its last segment (whose checkpoint says which
/// rollout bytes it covers).
#[derive(Debug)]
pub(super) struct Sidecar {
    path: PathBuf,
    len: u64,
    last: LastSegment,
}

/// Where a sidecar's last segment starts, its first 8 bytes (length and CRC) and its
/// checkpoint: what a [`super::tail`] is checked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct LastSegment {
    pub at: u64,
    pub head: [u8; 8],
    pub end: Checkpoint,
}

/// The sidecar's path for `rollout`: named after the rollout's file, so an archived rollout
/// (moved to another directory) keeps its index.
pub(super) fn path_for(dir: &Path, rollout: &Path) -> Option<PathBuf> {
    let name = rollout.file_name()?.to_str()?;
    Some(dir.join(format!("{name}.idx")))
}

/// The index kept in `sidecar` of `rollout`, when it is there and is one of the rollout as
/// it now is (see the module docs); `None` means: build it again. The index records a journal
/// from here on.
pub(super) fn load(sidecar: &Path, rollout: &Path) -> Option<(RolloutIndex, Sidecar)> {
    let bytes = std::fs::read(sidecar).ok()?;
    if bytes.get(..MAGIC.len()) != Some(MAGIC.as_slice()) {
        return None;
    }
    let mut index = RolloutIndex::empty(rollout.to_path_buf(), (0, 0));
    let mut at = MAGIC.len();
    let mut last = None;
    while let Some((end, mut events, next)) = segment_at(&bytes, at) {
        if end.from_bytes != index.indexed_bytes {
            break;
        }
        // The CRC held, so the events decode; one that does not ends the read (rebuilt).
        while !events.is_empty() {
            let (event, rest) = postcard::take_from_bytes::<Event>(events).ok()?;
            index.apply(&event);
            events = rest;
        }
        end.restore(&mut index);
        let head = bytes[at..at + 8].try_into().ok()?;
        last = Some(LastSegment {
            at: at as u64,
            head,
            end,
        });
        at = next;
    }
    let last = last?;
    let mut file = File::open(rollout).ok()?;
    let meta = file.metadata().ok()?;
    if !last.end.matches(&mut file) {
        return None;
    }
    if at < bytes.len() {
        // A torn append (or bytes that are not ours): cut off before the next one.
        OpenOptions::new()
            .write(true)
            .open(sidecar)
            .and_then(|f| f.set_len(at as u64))
            .ok()?;
    }
    index.identity = identity(&meta);
    index.journal = Some(Vec::new());
    Some((
        index,
        Sidecar {
            path: sidecar.to_path_buf(),
            len: at as u64,
            last,
        },
    ))
}

/// The checkpoint of the segment at `at`, its encoded events, and where the next segment
/// starts, when it checks.
fn segment_at(bytes: &[u8], at: usize) -> Option<(Checkpoint, &[u8], usize)> {
    let (payload, next) = unframe(bytes, at)?;
    let (end, events) = postcard::take_from_bytes::<Checkpoint>(payload).ok()?;
    Some((end, events, next))
}

/// `payload` framed as `[u32 length][u32 CRC-32 of the payload][payload]` (little-endian): a
/// sidecar's segment, and its tail's record.
pub(super) fn frame(payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + 8);
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(payload).to_le_bytes());
    out.extend_from_slice(payload);
    out
}

/// The payload of the [`frame`] at `at` in `bytes` and where the next one starts, when it is
/// whole and its CRC checks.
pub(super) fn unframe(bytes: &[u8], at: usize) -> Option<(&[u8], usize)> {
    let head = bytes.get(at..at + 8)?;
    let len = u32::from_le_bytes(head[..4].try_into().ok()?);
    let crc = u32::from_le_bytes(head[4..].try_into().ok()?);
    if len > MAX_SEGMENT {
        return None;
    }
    let next = at + 8 + len as usize;
    let payload = bytes.get(at + 8..next)?;
    (crc32fast::hash(payload) == crc).then_some((payload, next))
}

/// CRC-32 of the rollout's first bytes and of the bytes ending at `indexed` (see
/// [`Checkpoint`]).
fn crcs(file: &mut File, indexed: u64) -> io::Result<(u32, u32)> {
    let window = |from: u64, to: u64, file: &mut File| -> io::Result<u32> {
        let mut buf = vec![0; (to - from) as usize];
        file.seek(SeekFrom::Start(from))?;
        file.read_exact(&mut buf)?;
        Ok(crc32fast::hash(&buf))
    };
    let head = window(0, indexed.min(CHECK_WINDOW), file)?;
    let tail = window(indexed.saturating_sub(CHECK_WINDOW), indexed, file)?;
    Ok((head, tail))
}

/// One segment's bytes: its events (the index's journal, emptied) and its checkpoint.
fn encode(index: &mut RolloutIndex, from_bytes: u64) -> io::Result<(Vec<u8>, Checkpoint)> {
    let mut file = File::open(&index.path)?;
    let (head_crc, tail_crc) = crcs(&mut file, index.indexed_bytes)?;
    let events = index.journal.take().unwrap_or_default();
    let end = Checkpoint {
        from_bytes,
        indexed_bytes: index.indexed_bytes,
        next_ordinal: index.next_ordinal,
        last_ms: index.last_ms,
        max_ms: index.landmarks.max_ms,
        skipped_lines: index.skipped_lines as u64,
        head_crc,
        tail_crc,
    };
    let mut payload = postcard::to_stdvec(&end).map_err(io::Error::other)?;
    for event in &events {
        payload = postcard::to_extend(event, payload).map_err(io::Error::other)?;
    }
    index.journal = Some(Vec::new());
    Ok((frame(&payload), end))
}

/// The last segment of a sidecar whose segment `segment` (with checkpoint `end`) starts at
/// `at`.
fn last_segment(at: u64, segment: &[u8], end: Checkpoint) -> LastSegment {
    let mut head = [0; 8];
    head.copy_from_slice(&segment[..8]);
    LastSegment { at, head, end }
}

/// Write a new sidecar for `index` (which recorded its journal from the file's start): a
/// temporary file renamed over the old one.
pub(super) fn write_fresh(sidecar: &Path, index: &mut RolloutIndex) -> io::Result<Sidecar> {
    let dir = sidecar
        .parent()
        .ok_or_else(|| io::Error::other("a sidecar path has a directory"))?;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    let (segment, end) = encode(index, 0)?;
    let mut temp = tempfile::NamedTempFile::new_in(dir)?;
    temp.write_all(MAGIC)?;
    temp.write_all(&segment)?;
    temp.persist(sidecar).map_err(|err| err.error)?;
    Ok(Sidecar {
        path: sidecar.to_path_buf(),
        len: (MAGIC.len() + segment.len()) as u64,
        last: last_segment(MAGIC.len() as u64, &segment, end),
    })
}

/// Append what `index` indexed since the sidecar was last written; `false` when there was
/// nothing to append. A sidecar that changed under us (another daemon on the same home wrote
/// to it) is an error: the caller removes it.
pub(super) fn append(sidecar: &mut Sidecar, index: &mut RolloutIndex) -> io::Result<bool> {
    let nothing_new = index.journal.as_ref().is_none_or(Vec::is_empty);
    if nothing_new && index.indexed_bytes == sidecar.covers() {
        return Ok(false);
    }
    let mut file = OpenOptions::new().append(true).open(&sidecar.path)?;
    if file.metadata()?.size() != sidecar.len {
        return Err(io::Error::other("the sidecar was written by someone else"));
    }
    let (segment, end) = encode(index, sidecar.covers())?;
    file.write_all(&segment)?;
    sidecar.last = last_segment(sidecar.len, &segment, end);
    sidecar.len += segment.len() as u64;
    Ok(true)
}

impl Sidecar {
    /// The sidecar at `path` as a [`super::tail`] recorded it (`len` bytes, ending with
    /// `last`): the caller has checked that it still is.
    pub(super) fn known(path: &Path, len: u64, last: LastSegment) -> Sidecar {
        Sidecar {
            path: path.to_path_buf(),
            len,
            last,
        }
    }

    /// The file.
    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    /// Its length.
    pub(super) fn len(&self) -> u64 {
        self.len
    }

    /// Its last segment.
    pub(super) fn last(&self) -> LastSegment {
        self.last
    }

    /// The rollout bytes it covers.
    fn covers(&self) -> u64 {
        self.last.end.indexed_bytes
    }
}
