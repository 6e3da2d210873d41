//! Output truncation (docs/architecture.md §8.5): keep a head and a tail within a byte budget, drop the
//! middle, and say how much was dropped. Used for exec output and any other tool output.

/// Bytes per token of the approximation used everywhere (docs/architecture.md §8.5).
pub const APPROX_BYTES_PER_TOKEN: usize = 4;

/// How much of a tool's output may reach the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TruncationPolicy {
    /// At most this many bytes; the marker counts dropped characters.
    Bytes(usize),
    /// At most about this many tokens (4 bytes each); the marker counts dropped tokens.
    Tokens(usize),
}

impl TruncationPolicy {
    /// The budget in bytes (`Tokens(n)` → `4n`).
    pub fn byte_budget(self) -> usize {
        match self {
            TruncationPolicy::Bytes(n) => n,
            TruncationPolicy::Tokens(n) => n.saturating_mul(APPROX_BYTES_PER_TOKEN),
        }
    }

    /// The budget in tokens (`Bytes(n)` → `ceil(n / 4)`).
    pub fn token_budget(self) -> usize {
        match self {
            TruncationPolicy::Bytes(n) => n.div_ceil(APPROX_BYTES_PER_TOKEN),
            TruncationPolicy::Tokens(n) => n,
        }
    }

    /// The policy scaled by `factor`, rounded up (history recording uses `× 1.2`).
    pub fn scaled(self, factor: f64) -> TruncationPolicy {
        let scale = |n: usize| (n as f64 * factor).ceil().max(0.0) as usize;
        match self {
            TruncationPolicy::Bytes(n) => TruncationPolicy::Bytes(scale(n)),
            TruncationPolicy::Tokens(n) => TruncationPolicy::Tokens(scale(n)),
        }
    }
}

/// `ceil(bytes / 4)`.
pub fn approx_token_count(text: &str) -> usize {
    text.len().div_ceil(APPROX_BYTES_PER_TOKEN)
}

/// Truncates `text` to the policy's byte budget: unchanged when it fits; otherwise the longest
/// char-aligned prefix within half the budget, the marker `…N tokens truncated…` (token
/// policy; `N = ceil(removed bytes / 4)`) or `…N chars truncated…` (byte policy; `N` = removed
/// characters), and the longest char-aligned suffix within the other half. No line awareness.
pub fn truncate_output(text: &str, policy: TruncationPolicy) -> String {
    truncate_parts(text, Gap::default(), "", policy).text
}

/// [`truncate_output`], prefixed with `Total output lines: <lines of the original>\n\n` when
/// something was cut (the form used for shell and exec results).
pub fn formatted_truncate_output(text: &str, policy: TruncationPolicy) -> String {
    truncate_parts(text, Gap::default(), "", policy).formatted()
}

/// Output that was dropped between a kept head and a kept tail (by a bounded buffer).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Gap {
    /// Bytes dropped.
    pub bytes: usize,
    /// Characters dropped.
    pub chars: usize,
    /// Newlines dropped.
    pub newlines: usize,
}

impl Gap {
    /// Accounts for `text` being dropped.
    pub fn add_text(&mut self, text: &str) {
        self.bytes += text.len();
        self.chars += text.chars().count();
        self.newlines += newlines(text);
    }

    /// Accounts for another gap.
    pub fn add(&mut self, other: Gap) {
        self.bytes += other.bytes;
        self.chars += other.chars;
        self.newlines += other.newlines;
    }
}

/// The result of truncating output that may already have lost its middle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Truncated {
    /// The text to show.
    pub text: String,
    /// Whether anything was cut (here or earlier, by the buffer).
    pub truncated: bool,
    /// Lines of the original output.
    pub original_lines: usize,
    /// Bytes of the original output.
    pub original_bytes: usize,
}

impl Truncated {
    /// With the `Total output lines:` header when something was cut.
    pub fn formatted(self) -> String {
        if self.truncated {
            format!(
                "Total output lines: {}\n\n{}",
                self.original_lines, self.text
            )
        } else {
            self.text
        }
    }
}

/// Truncates the output `head` + (`gap`, already dropped) + `tail`. Without a gap, `head` and
/// `tail` are one text; with one, the kept prefix comes from `head` and the kept suffix from
/// `tail`, and the marker counts the gap too.
pub(crate) fn truncate_parts(
    head: &str,
    gap: Gap,
    tail: &str,
    policy: TruncationPolicy,
) -> Truncated {
    let original_bytes = head.len() + gap.bytes + tail.len();
    let ends_with_newline = if tail.is_empty() && gap.bytes == 0 {
        head.ends_with('\n')
    } else {
        tail.ends_with('\n') || (tail.is_empty() && gap.bytes > 0)
    };
    let total_newlines = newlines(head) + gap.newlines + newlines(tail);
    let original_lines = total_newlines + usize::from(original_bytes > 0 && !ends_with_newline);
    let budget = policy.byte_budget();
    let head_budget = budget / 2;
    let tail_budget = budget - head_budget;

    let (kept_head, kept_tail, removed_bytes, removed_chars) = if gap.bytes == 0 {
        let joined;
        let text = if tail.is_empty() {
            head
        } else {
            joined = format!("{head}{tail}");
            joined.as_str()
        };
        if text.len() <= budget {
            return Truncated {
                text: text.to_string(),
                truncated: false,
                original_lines,
                original_bytes,
            };
        }
        let head_end = text.floor_char_boundary(head_budget);
        let tail_start = text
            .ceil_char_boundary(text.len() - tail_budget)
            .max(head_end);
        let removed = &text[head_end..tail_start];
        (
            text[..head_end].to_string(),
            text[tail_start..].to_string(),
            removed.len(),
            removed.chars().count(),
        )
    } else {
        let head_end = head.floor_char_boundary(head_budget);
        let tail_start = tail.ceil_char_boundary(tail.len().saturating_sub(tail_budget));
        let removed_head = &head[head_end..];
        let removed_tail = &tail[..tail_start];
        (
            head[..head_end].to_string(),
            tail[tail_start..].to_string(),
            removed_head.len() + gap.bytes + removed_tail.len(),
            removed_head.chars().count() + gap.chars + removed_tail.chars().count(),
        )
    };
    let marker = match policy {
        TruncationPolicy::Tokens(_) => format!(
            "\u{2026}{} tokens truncated\u{2026}",
            removed_bytes.div_ceil(APPROX_BYTES_PER_TOKEN)
        ),
        TruncationPolicy::Bytes(_) => format!("\u{2026}{removed_chars} chars truncated\u{2026}"),
    };
    Truncated {
        text: format!("{kept_head}{marker}{kept_tail}"),
        truncated: true,
        original_lines,
        original_bytes,
    }
}

fn newlines(text: &str) -> usize {
    text.bytes().filter(|b| *b == b'\n').count()
}
