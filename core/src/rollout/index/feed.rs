//! An index built from a rollout's bytes as they are written, so a file written in one pass
//! (a fork's copy, `RolloutWriter::write_new`) is indexed without being read back.
//!
//! [`Tee`] writes to the file and hands the same bytes to an [`IndexFeed`], which indexes each
//! line once its newline arrives, exactly as [`RolloutIndex::update`] indexes a line it reads
//! (one `take_line` for both). [`IndexFeed::finish`] ties the index to the file written; the
//! cache then takes it as is ([`super::IndexCache::adopt`]).

use std::io::{self, Write};
use std::path::Path;

use super::{RolloutError, RolloutIndex, identity};

/// An index being built from the bytes of a new rollout, header first.
#[derive(Debug)]
pub struct IndexFeed {
    index: RolloutIndex,
    /// The bytes of the line not ended yet.
    line: Vec<u8>,
    /// A line that could not be indexed (a bad header): the index is not used.
    failed: Option<RolloutError>,
}

impl IndexFeed {
    /// A feed that starts with the file's header line, as written.
    pub fn new(header: &[u8]) -> IndexFeed {
        let mut index = RolloutIndex::empty(Default::default(), (0, 0));
        // Every event from the first line on, for the sidecar a long file gets.
        index.journal = Some(Vec::new());
        let mut feed = IndexFeed {
            index,
            line: Vec::new(),
            failed: None,
        };
        feed.feed(header);
        feed
    }

    /// Index the lines `bytes` end; the rest waits for its newline.
    pub fn feed(&mut self, mut bytes: &[u8]) {
        while let Some(end) = memchr::memchr(b'\n', bytes) {
            let (head, rest) = bytes.split_at(end + 1);
            bytes = rest;
            if self.line.is_empty() {
                self.take(head);
            } else {
                // The line began in an earlier write.
                let mut line = std::mem::take(&mut self.line);
                line.extend_from_slice(head);
                self.take(&line);
                line.clear();
                self.line = line;
            }
        }
        self.line.extend_from_slice(bytes);
    }

    fn take(&mut self, line: &[u8]) {
        if self.failed.is_none()
            && let Err(err) = self.index.take_line(line)
        {
            self.failed = Some(err);
        }
    }

    /// The index of the file now at `path`, which holds the bytes fed (a last line without its
    /// newline is left out, as a reader leaves it).
    pub fn finish(mut self, path: &Path) -> Result<RolloutIndex, RolloutError> {
        if let Some(err) = self.failed {
            return Err(err);
        }
        let meta = std::fs::metadata(path).map_err(|e| RolloutError::io(path, e))?;
        if meta.len() != self.index.indexed_bytes + self.line.len() as u64 {
            return Err(RolloutError::io(
                path,
                io::Error::other("the file is not what was written"),
            ));
        }
        self.index.path = path.to_path_buf();
        self.index.identity = identity(&meta);
        Ok(self.index)
    }
}

/// A writer that also feeds what it writes to an [`IndexFeed`].
pub struct Tee<'a> {
    /// Where the bytes go.
    pub out: &'a mut dyn Write,
    /// Who indexes them.
    pub feed: &'a mut IndexFeed,
}

impl Write for Tee<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let written = self.out.write(buf)?;
        self.feed.feed(&buf[..written]);
        Ok(written)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}
