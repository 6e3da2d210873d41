//! Reading a skill's files (`SKILL.md`, `agents/openai.yaml`) without trusting them: anyone who
//! can write a skill folder (a cloned repository, for one) chooses what those names point at.
//!
//! Only regular files are read. The file is checked before it is opened (a FIFO or a device is
//! never opened), opened with `O_NONBLOCK` and `O_NOCTTY` (a FIFO swapped in after the check
//! does not block the open, a terminal is not made the daemon's), checked again on the open
//! handle, and read through `take()` up to [`ScanLimits::max_file_bytes`], so a sparse or
//! growing file costs at most that much memory (SECURITY.md, "Skills and thread search").

use std::fs::{File, OpenOptions};
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;
use std::time::{Duration, Instant};

/// What one scan may cost: the size of each file read and the time of the whole scan
/// (`[limits] max_skill_file_bytes`, `skills_scan_timeout_secs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScanLimits {
    /// Largest `SKILL.md` or `agents/openai.yaml` read, in bytes.
    pub max_file_bytes: u64,
    /// When the scan stops, listing what it found by then.
    pub deadline: Instant,
    /// The time the scan was given (for the error text).
    pub timeout: Duration,
}

impl ScanLimits {
    /// Limits for a scan starting now.
    pub fn new(max_file_bytes: u64, timeout: Duration) -> ScanLimits {
        ScanLimits {
            max_file_bytes,
            deadline: Instant::now() + timeout,
            timeout,
        }
    }

    /// Whether the scan has run out of time.
    pub(super) fn expired(&self) -> bool {
        Instant::now() >= self.deadline
    }
}

/// Why a skill file was not read.
#[derive(Debug, thiserror::Error)]
pub(super) enum ReadError {
    /// The file system said no (missing, unreadable, not UTF-8, …).
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// A FIFO, a device, a socket or a directory.
    #[error("not a regular file (a {0})")]
    NotRegular(&'static str),
    /// Larger than the limit.
    #[error("larger than {max} bytes (limits.max_skill_file_bytes)")]
    TooLarge {
        /// The limit.
        max: u64,
    },
}

impl ReadError {
    /// The file does not exist (an optional file that is simply absent, its folder too).
    pub(super) fn is_not_found(&self) -> bool {
        matches!(self, ReadError::Io(err) if matches!(
            err.kind(),
            std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
        ))
    }
}

/// The text of the regular file at `path` (symlinks followed), at most `max_bytes` long.
pub(super) fn read_capped(path: &Path, max_bytes: u64) -> Result<String, ReadError> {
    check_kind(&std::fs::metadata(path)?.file_type())?;
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let metadata = file.metadata()?;
    check_kind(&metadata.file_type())?;
    if metadata.len() > max_bytes {
        return Err(ReadError::TooLarge { max: max_bytes });
    }
    read_at_most(file, max_bytes)
}

/// Read `file` through `take()`: a file that grew since it was checked stops at the limit.
pub(super) fn read_at_most(file: File, max_bytes: u64) -> Result<String, ReadError> {
    let mut bytes = Vec::new();
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max_bytes {
        return Err(ReadError::TooLarge { max: max_bytes });
    }
    String::from_utf8(bytes).map_err(|_| {
        ReadError::Io(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        ))
    })
}

fn check_kind(kind: &std::fs::FileType) -> Result<(), ReadError> {
    let name = if kind.is_file() {
        return Ok(());
    } else if kind.is_dir() {
        "directory"
    } else if kind.is_fifo() {
        "FIFO"
    } else if kind.is_char_device() {
        "character device"
    } else if kind.is_block_device() {
        "block device"
    } else if kind.is_socket() {
        "socket"
    } else {
        "special file"
    };
    Err(ReadError::NotRegular(name))
}
