//! A minimal Server-Sent Events parser: feed it bytes, take out the `data` of each event.
//!
//! Handles `\n`, `\r\n` and `\r` line ends (also split across chunks), multi-line `data`
//! (joined with `\n`), comments (`:`), and ignores `event`, `id` and `retry` — callers dispatch
//! on the JSON payload. The data buffer is reused, so a small event costs one copy, no
//! allocation.

/// Incremental SSE parser.
#[derive(Debug, Default)]
pub(crate) struct SseParser {
    /// Received bytes; `buf[pos..]` is not consumed yet.
    buf: Vec<u8>,
    pos: usize,
    /// The `data` of the event being read.
    data: Vec<u8>,
    has_data: bool,
    /// The last event was handed out: clear `data` before reading on.
    dispatched: bool,
    /// The last line ended with `\r`: a `\n` right after it belongs to that line end.
    skip_lf: bool,
}

impl SseParser {
    /// Add received bytes.
    pub(crate) fn push(&mut self, chunk: &[u8]) {
        if self.pos > 0 {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
        self.buf.extend_from_slice(chunk);
    }

    /// The data of the next complete event, if the received bytes contain one.
    pub(crate) fn next_event(&mut self) -> Option<&[u8]> {
        self.start_event();
        loop {
            if self.skip_lf && self.pos < self.buf.len() {
                if self.buf[self.pos] == b'\n' {
                    self.pos += 1;
                }
                self.skip_lf = false;
            }
            let rest = &self.buf[self.pos..];
            let end = rest.iter().position(|&b| b == b'\n' || b == b'\r')?;
            let line_start = self.pos;
            self.skip_lf = rest[end] == b'\r';
            self.pos += end + 1;
            if end == 0 {
                if self.has_data {
                    return Some(self.dispatch());
                }
                continue;
            }
            process_line(
                &self.buf[line_start..line_start + end],
                &mut self.data,
                &mut self.has_data,
            );
        }
    }

    /// At the end of the body: the data of an event that was not terminated by a blank line
    /// (lenient; some servers end without one).
    pub(crate) fn finish(&mut self) -> Option<&[u8]> {
        self.start_event();
        if self.pos < self.buf.len() {
            let line = std::mem::take(&mut self.buf);
            process_line(&line[self.pos..], &mut self.data, &mut self.has_data);
            self.pos = 0;
        }
        if self.has_data {
            return Some(self.dispatch());
        }
        None
    }

    /// Bytes held for the event being read: its unfinished line and the data gathered so far
    /// (the reader caps this, see `limits.rs`).
    pub(crate) fn buffered(&self) -> usize {
        let data = if self.dispatched { 0 } else { self.data.len() };
        (self.buf.len() - self.pos).saturating_add(data)
    }

    fn start_event(&mut self) {
        if self.dispatched {
            self.data.clear();
            self.dispatched = false;
        }
    }

    fn dispatch(&mut self) -> &[u8] {
        self.has_data = false;
        self.dispatched = true;
        &self.data
    }
}

fn process_line(line: &[u8], data: &mut Vec<u8>, has_data: &mut bool) {
    if line.first() == Some(&b':') {
        return; // comment / keep-alive
    }
    let (field, value) = match line.iter().position(|&b| b == b':') {
        Some(colon) => {
            let value = &line[colon + 1..];
            (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
        }
        None => (line, &[][..]),
    };
    if field == b"data" {
        if *has_data {
            data.push(b'\n');
        }
        data.extend_from_slice(value);
        *has_data = true;
    }
}

#[cfg(test)]
mod tests {
    use super::SseParser;

    fn events(chunks: &[&str]) -> Vec<String> {
        let mut parser = SseParser::default();
        let mut out = Vec::new();
        for chunk in chunks {
            parser.push(chunk.as_bytes());
            while let Some(data) = parser.next_event() {
                out.push(String::from_utf8(data.to_vec()).unwrap());
            }
        }
        if let Some(data) = parser.finish() {
            out.push(String::from_utf8(data.to_vec()).unwrap());
        }
        out
    }

    #[test]
    fn frames_line_ends_and_comments() {
        assert_eq!(
            events(&["event: a\ndata: {\"x\":1}\n\n: keep-alive\n\ndata:2\n\n"]),
            vec!["{\"x\":1}", "2"]
        );
        assert_eq!(
            events(&["data: a\r\n\r\ndata: b\r\rdata: c\n\n"]),
            vec!["a", "b", "c"]
        );
        assert_eq!(events(&["data: one\ndata: two\n\n"]), vec!["one\ntwo"]);
        assert_eq!(events(&["id: 1\nretry: 5\n\n"]), Vec::<String>::new());
        assert_eq!(events(&["data\n\n"]), vec![""]);
    }

    #[test]
    fn split_anywhere() {
        let text = "event: x\r\ndata: {\"a\":\"b\"}\r\n\r\ndata: [DONE]\r\n\r\n";
        for split in 0..text.len() {
            let (a, b) = text.split_at(split);
            assert_eq!(
                events(&[a, b]),
                vec!["{\"a\":\"b\"}", "[DONE]"],
                "split at {split}"
            );
        }
        let bytes: Vec<String> = text.chars().map(String::from).collect();
        let refs: Vec<&str> = bytes.iter().map(String::as_str).collect();
        assert_eq!(events(&refs), vec!["{\"a\":\"b\"}", "[DONE]"]);
    }

    #[test]
    fn buffered_counts_the_event_in_progress_only() {
        let mut parser = SseParser::default();
        parser.push(b"data: done\n\ndata: abc\ndata: de");
        assert_eq!(parser.next_event(), Some(&b"done"[..]));
        assert_eq!(parser.next_event(), None);
        // "abc" gathered, "data: de" unfinished.
        assert_eq!(parser.buffered(), 3 + 8);
    }

    #[test]
    fn unterminated_last_event_is_flushed() {
        assert_eq!(events(&["data: a\n\ndata: [DONE]"]), vec!["a", "[DONE]"]);
        assert_eq!(events(&["data: a\n\ndata: b\n"]), vec!["a", "b"]);
    }
}

#[cfg(test)]
mod proptests;
