//! A bounded output buffer that keeps the first and the last bytes of a command's output and
//! counts what it drops in between.

use super::truncate::{Gap, Truncated, TruncationPolicy};

/// Output kept as head + (dropped gap) + tail, at most about `cap` bytes (the tail may briefly
/// hold up to twice its share before it is trimmed, which keeps appends amortised O(1)).
#[derive(Debug)]
pub(crate) struct OutputBuffer {
    head: String,
    tail: String,
    gap: Gap,
    head_cap: usize,
    tail_cap: usize,
    /// Once something was dropped (or the head is full), new text goes to the tail.
    head_closed: bool,
}

/// The contents taken out of an [`OutputBuffer`].
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Taken {
    pub head: String,
    pub gap: Gap,
    pub tail: String,
}

impl Taken {
    /// Whether nothing was produced.
    pub fn is_empty(&self) -> bool {
        self.head.is_empty() && self.tail.is_empty() && self.gap.bytes == 0
    }
}

impl OutputBuffer {
    /// A buffer keeping about `cap` bytes.
    pub fn new(cap: usize) -> OutputBuffer {
        let head_cap = cap / 2;
        OutputBuffer {
            head: String::new(),
            tail: String::new(),
            gap: Gap::default(),
            head_cap,
            tail_cap: cap - head_cap,
            head_closed: false,
        }
    }

    /// Appends text.
    pub fn push(&mut self, text: &str) {
        let mut text = text;
        if !self.head_closed {
            let room = self.head_cap - self.head.len();
            if text.len() <= room {
                self.head.push_str(text);
                return;
            }
            let cut = text.floor_char_boundary(room);
            self.head.push_str(&text[..cut]);
            text = &text[cut..];
            self.head_closed = true;
        }
        self.tail.push_str(text);
        if self.tail.len() > self.tail_cap.saturating_mul(2) {
            self.trim_tail();
        }
    }

    /// Records output that was dropped before it reached this buffer: everything already in
    /// the tail precedes the gap, so it joins the gap.
    pub fn push_gap(&mut self, gap: Gap) {
        if gap.bytes == 0 {
            return;
        }
        self.head_closed = true;
        let tail = std::mem::take(&mut self.tail);
        self.gap.add_text(&tail);
        self.gap.add(gap);
    }

    /// Appends what was taken from another buffer.
    pub fn push_taken(&mut self, taken: &Taken) {
        self.push(&taken.head);
        self.push_gap(taken.gap);
        self.push(&taken.tail);
    }

    /// Bytes of output seen (kept and dropped).
    pub fn total_bytes(&self) -> usize {
        self.head.len() + self.gap.bytes + self.tail.len()
    }

    /// Empties the buffer, returning its contents.
    pub fn take(&mut self) -> Taken {
        self.trim_tail();
        let taken = Taken {
            head: std::mem::take(&mut self.head),
            gap: std::mem::take(&mut self.gap),
            tail: std::mem::take(&mut self.tail),
        };
        self.head_closed = false;
        taken
    }

    /// The kept text with a marker where output was dropped (for display, e.g. a UI's
    /// aggregated output).
    pub fn display_text(&mut self) -> String {
        self.trim_tail();
        if self.gap.bytes == 0 {
            format!("{}{}", self.head, self.tail)
        } else {
            format!(
                "{}\n\u{2026}{} bytes of output omitted\u{2026}\n{}",
                self.head, self.gap.bytes, self.tail
            )
        }
    }

    /// The output truncated for the model.
    pub fn truncated(&mut self, policy: TruncationPolicy) -> Truncated {
        self.trim_tail();
        super::truncate::truncate_parts(&self.head, self.gap, &self.tail, policy)
    }

    fn trim_tail(&mut self) {
        if self.tail.len() <= self.tail_cap {
            return;
        }
        let cut = self
            .tail
            .ceil_char_boundary(self.tail.len() - self.tail_cap);
        self.gap.add_text(&self.tail[..cut]);
        self.tail.drain(..cut);
    }
}
