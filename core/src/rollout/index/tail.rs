//! The small file beside a sidecar (`<sidecar>.tail`): the last turns of the index, their
//! items, the landmarks and the counters, as they were when the sidecar's last segment was
//! written. A fresh daemon that resumes a big thread reads this (a few KiB) instead of
//! replaying every segment of the sidecar (hundreds of KiB at 200 MiB), and gets a partial
//! index ([`super::held`]) that serves the latest pages (docs/architecture.md §10.3).
//!
//! # Format
//!
//! The magic `WEFTTAL1`, then `[u32 length][u32 CRC-32 of the payload][payload]`
//! (little-endian), the payload a postcard-encoded [`Record`]. It is written anew (a
//! temporary file renamed over the old one) with a new sidecar, after the whole sidecar was
//! read back, and when a thread's rollout closes, without `fsync`: like the sidecar it is a
//! cache. Segments appended in between leave it behind (and so unused) until then.
//!
//! # When it is used
//!
//! Only when it is still the tail of the sidecar beside it and of the rollout: the sidecar's
//! device, inode and length are the ones recorded, the 8 bytes that start its last segment
//! (that segment's length and CRC) are the ones recorded, and the rollout passes the check of
//! that segment's checkpoint (its length and the CRC-32 of its first bytes and of the bytes
//! where the index ends). Anything else, a missing or torn tail included, and the whole
//! sidecar is read as before.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::held::Held;
use super::sidecar::{self, LastSegment, Sidecar};
use super::{RolloutIndex, identity};

/// The file's first bytes; a new layout gets a new magic (an old file is then not used).
const MAGIC: &[u8; 8] = b"WEFTTAL1";
/// A tail larger than this is not read (it holds a few dozen turns and the landmarks).
const MAX_TAIL: u64 = 64 << 20;

/// What a tail holds.
#[derive(Debug, Serialize, Deserialize)]
struct Record {
    /// The sidecar's device, inode and length when this was written.
    sidecar: (u64, u64, u64),
    /// The sidecar's last segment then.
    last: LastSegment,
    /// The last turns and what else the index holds.
    held: Held,
}

/// The tail's path beside `sidecar`.
pub(super) fn path_for(sidecar: &Path) -> PathBuf {
    let mut name = OsString::from(sidecar.as_os_str());
    name.push(".tail");
    PathBuf::from(name)
}

/// The partial index the tail of `sidecar` holds, and the sidecar as it recorded it, when the
/// tail is good for the sidecar and `rollout` as they are now (see the module docs).
pub(super) fn load(sidecar: &Path, rollout: &Path) -> Option<(RolloutIndex, Sidecar)> {
    let tail = path_for(sidecar);
    if std::fs::metadata(&tail).ok()?.len() > MAX_TAIL {
        return None;
    }
    let bytes = std::fs::read(&tail).ok()?;
    let rest = bytes.strip_prefix(MAGIC.as_slice())?;
    let (payload, end) = sidecar::unframe(rest, 0)?;
    if end != rest.len() {
        return None;
    }
    let record: Record = postcard::from_bytes(payload).ok()?;
    let side = File::open(sidecar).ok()?;
    let meta = side.metadata().ok()?;
    if (meta.dev(), meta.ino(), meta.len()) != record.sidecar {
        return None;
    }
    let mut head = [0; 8];
    side.read_exact_at(&mut head, record.last.at).ok()?;
    if head != record.last.head {
        return None;
    }
    let mut file = File::open(rollout).ok()?;
    if !record.last.end.matches(&mut file) {
        return None;
    }
    let meta = file.metadata().ok()?;
    let mut index = RolloutIndex::empty(rollout.to_path_buf(), identity(&meta));
    if !index.hold(record.held) {
        return None;
    }
    record.last.end.restore(&mut index);
    index.journal = Some(Vec::new());
    let len = record.sidecar.2;
    Some((index, Sidecar::known(sidecar, len, record.last)))
}

/// Write the tail of `sidecar`, which `index` is level with. A file whose last turns cannot
/// be kept apart from the rest ([`RolloutIndex::held_tail`]) gets none.
pub(super) fn write(sidecar: &Sidecar, index: &RolloutIndex) -> io::Result<()> {
    let tail = path_for(sidecar.path());
    let held = match index.held_tail() {
        Some(held) if index.indexed_bytes() == sidecar.last().end.indexed_bytes => held,
        _ => return remove(&tail),
    };
    let meta = std::fs::metadata(sidecar.path())?;
    if meta.len() != sidecar.len() {
        return Err(io::Error::other("the sidecar was written by someone else"));
    }
    let record = Record {
        sidecar: (meta.dev(), meta.ino(), meta.len()),
        last: sidecar.last(),
        held,
    };
    let payload = postcard::to_stdvec(&record).map_err(io::Error::other)?;
    let dir = tail
        .parent()
        .ok_or_else(|| io::Error::other("a tail path has a directory"))?;
    let mut temp = tempfile::NamedTempFile::new_in(dir)?;
    temp.write_all(MAGIC)?;
    temp.write_all(&sidecar::frame(&payload))?;
    temp.persist(&tail).map_err(|err| err.error)?;
    Ok(())
}

/// Remove the tail at `tail`, if there is one.
pub(super) fn remove(tail: &Path) -> io::Result<()> {
    match std::fs::remove_file(tail) {
        Err(err) if err.kind() != io::ErrorKind::NotFound => Err(err),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests;
