//! Plan mode's proposed plan (docs/protocol.md §7.25): the model writes its plan between a
//! `<proposed_plan>` line and a `</proposed_plan>` line, and clients get it as a `plan` item
//! (`item/plan/delta`) while the text around it stays the agent message, without the tags.
//!
//! [`PlanParser`] splits a message's streamed text as it comes, a line at a time: a line is
//! held back only while it could still be a tag line (after leading blanks, a prefix of a
//! tag, or of a Markdown fence), and is passed on as soon as it cannot be. A tag counts only
//! alone on its line (blanks around it allowed); inside a Markdown code fence (```` ``` ```` or
//! `~~~`, indented at most three spaces) tag lines are text, and so is a nested open tag with
//! its matching close, so a plan can show the tags as an example. A close tag ends the block
//! only at the open tag's indentation or at most three spaces in. At the end of the message
//! the held-back line is decided and a block left open is closed.

/// The tags, each alone on its line.
const OPEN_TAG: &str = "<proposed_plan>";
const CLOSE_TAG: &str = "</proposed_plan>";

/// One piece of a message's text, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanSegment {
    /// Text of the agent message.
    Text(String),
    /// A plan block began.
    PlanStart,
    /// Text of the plan.
    PlanDelta(String),
    /// A plan block ended (closed, or left open at the end of the message).
    PlanEnd,
}

/// A Markdown code fence: its marker and how many.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Fence {
    marker: char,
    len: usize,
}

/// The incremental parser of one message.
#[derive(Debug)]
pub struct PlanParser {
    /// Inside a plan block.
    in_plan: bool,
    /// The open tag's indentation.
    plan_indent: String,
    /// Open tags inside the block not closed yet (text, not tags).
    nested: usize,
    /// Whether the current line is still held back (it may be a tag or fence line).
    holding: bool,
    /// The held-back line.
    line: String,
    /// The Markdown fence the text is inside.
    fence: Option<Fence>,
}

impl Default for PlanParser {
    fn default() -> Self {
        PlanParser {
            in_plan: false,
            plan_indent: String::new(),
            nested: 0,
            holding: true,
            line: String::new(),
            fence: None,
        }
    }
}

impl PlanParser {
    /// A parser at the start of a message.
    pub fn new() -> PlanParser {
        PlanParser::default()
    }

    /// The segments one streamed delta decides (adjacent text merged, empty text dropped).
    pub fn push(&mut self, delta: &str) -> Vec<PlanSegment> {
        let mut out = Vec::new();
        let mut run = String::new();
        for ch in delta.chars() {
            if !self.holding {
                run.push(ch);
                if ch == '\n' {
                    self.text(std::mem::take(&mut run), &mut out);
                    self.holding = true;
                }
                continue;
            }
            self.line.push(ch);
            if ch == '\n' {
                let line = std::mem::take(&mut self.line);
                self.decide(line, &mut out);
                continue;
            }
            if !self.may_be_special() {
                let line = std::mem::take(&mut self.line);
                self.holding = false;
                self.text(line, &mut out);
            }
        }
        if !run.is_empty() {
            self.text(run, &mut out);
        }
        out
    }

    /// The end of the message: decide the held-back line and close a block left open.
    pub fn finish(&mut self) -> Vec<PlanSegment> {
        let mut out = Vec::new();
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.decide(line, &mut out);
        }
        if std::mem::take(&mut self.in_plan) {
            out.push(PlanSegment::PlanEnd);
        }
        *self = PlanParser::default();
        out
    }

    /// Whether the held-back line (no newline yet) can still turn out a tag or fence line.
    fn may_be_special(&self) -> bool {
        if self.fence.is_some() {
            return true;
        }
        let slug = self.line.trim_start();
        if slug.is_empty() || is_tag_prefix(slug.trim_end()) {
            return true;
        }
        fence_slug(&self.line).is_some_and(|slug| slug.is_empty() || is_fence_prefix(slug))
    }

    /// A whole line (with its newline, if it had one).
    fn decide(&mut self, line: String, out: &mut Vec<PlanSegment>) {
        self.holding = true;
        let bare = line.strip_suffix('\n').unwrap_or(&line);
        let slug = bare.trim();
        let indent = &bare[..bare.len() - bare.trim_start().len()];
        if self.fence_line(fence_slug(bare)) || self.fence.is_some() {
            self.text(line, out);
            return;
        }
        if self.in_plan {
            if slug == OPEN_TAG {
                self.nested += 1;
            } else if slug == CLOSE_TAG && self.nested > 0 {
                self.nested -= 1;
            } else if slug == CLOSE_TAG && (indent == self.plan_indent || is_control_indent(indent))
            {
                self.in_plan = false;
                self.plan_indent.clear();
                out.push(PlanSegment::PlanEnd);
                return;
            }
            self.text(line, out);
            return;
        }
        if slug == OPEN_TAG {
            self.in_plan = true;
            self.plan_indent = indent.to_string();
            self.nested = 0;
            out.push(PlanSegment::PlanStart);
            return;
        }
        self.text(line, out);
    }

    /// Track a fence line: true when this line opens or closes the fence.
    fn fence_line(&mut self, slug: Option<&str>) -> bool {
        match (self.fence, slug) {
            (Some(fence), Some(slug)) if closes(slug, fence) => {
                self.fence = None;
                true
            }
            (Some(_), _) => false,
            (None, Some(slug)) => match opens(slug) {
                Some(fence) => {
                    self.fence = Some(fence);
                    true
                }
                None => false,
            },
            (None, None) => false,
        }
    }

    /// Text: the plan's inside a block, else the message's.
    fn text(&self, text: String, out: &mut Vec<PlanSegment>) {
        if text.is_empty() {
            return;
        }
        match (self.in_plan, out.last_mut()) {
            (true, Some(PlanSegment::PlanDelta(last))) | (false, Some(PlanSegment::Text(last))) => {
                last.push_str(&text);
            }
            (true, _) => out.push(PlanSegment::PlanDelta(text)),
            (false, _) => out.push(PlanSegment::Text(text)),
        }
    }
}

/// Whether `slug` begins one of the tags.
fn is_tag_prefix(slug: &str) -> bool {
    OPEN_TAG.starts_with(slug) || CLOSE_TAG.starts_with(slug)
}

/// A line as a fence candidate: what follows at most three leading spaces (trailing blanks
/// cut), `Some("")` for a line of spaces only, `None` when indented further or by a tab.
fn fence_slug(line: &str) -> Option<&str> {
    for (at, byte) in line.bytes().enumerate() {
        match byte {
            b' ' if at < 3 => {}
            b' ' | b'\t' => return None,
            _ => return Some(line[at..].trim_end()),
        }
    }
    Some("")
}

/// Whether a line begun so far can still become a fence line.
fn is_fence_prefix(slug: &str) -> bool {
    let slug = slug.trim_end();
    let Some(marker) = slug.chars().next().filter(|c| *c == '`' || *c == '~') else {
        return false;
    };
    let run = slug.chars().take_while(|c| *c == marker).count();
    run >= 3 || run == slug.chars().count()
}

/// The fence a line opens: three or more backticks or tildes.
fn opens(slug: &str) -> Option<Fence> {
    let marker = slug.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let len = slug.chars().take_while(|c| *c == marker).count();
    (len >= 3).then_some(Fence { marker, len })
}

/// Whether a line closes `fence`: at least as many of its marker, then blanks only.
fn closes(slug: &str, fence: Fence) -> bool {
    let len = slug.chars().take_while(|c| *c == fence.marker).count();
    len >= fence.len && slug.chars().skip(len).all(char::is_whitespace)
}

/// An indentation a close tag may always have: at most three spaces.
fn is_control_indent(indent: &str) -> bool {
    indent.len() <= 3 && indent.bytes().all(|b| b == b' ')
}

/// A whole message split at once.
pub fn split(text: &str) -> Vec<PlanSegment> {
    let mut parser = PlanParser::new();
    let mut out = parser.push(text);
    out.extend(parser.finish());
    out
}

/// The message's text without its plan blocks.
pub fn strip_plan(text: &str) -> String {
    split(text)
        .into_iter()
        .filter_map(|segment| match segment {
            PlanSegment::Text(text) => Some(text),
            _ => None,
        })
        .collect()
}

/// The text of the message's last plan block, or `None` when it has none.
pub fn plan_text(text: &str) -> Option<String> {
    let mut plan = None;
    for segment in split(text) {
        match segment {
            PlanSegment::PlanStart => plan = Some(String::new()),
            PlanSegment::PlanDelta(delta) => {
                if let Some(plan) = plan.as_mut() {
                    plan.push_str(&delta);
                }
            }
            PlanSegment::Text(_) | PlanSegment::PlanEnd => {}
        }
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::PlanSegment::{PlanDelta, PlanEnd, PlanStart, Text};
    use super::*;
    use proptest::prelude::*;

    fn text(s: &str) -> PlanSegment {
        Text(s.to_string())
    }

    fn delta(s: &str) -> PlanSegment {
        PlanDelta(s.to_string())
    }

    /// Feed `chunks` and merge what comes out as one stream would be merged.
    fn feed(chunks: &[&str]) -> Vec<PlanSegment> {
        let mut parser = PlanParser::new();
        let mut out = Vec::new();
        for chunk in chunks {
            out.extend(parser.push(chunk));
        }
        out.extend(parser.finish());
        merged(out)
    }

    fn merged(segments: Vec<PlanSegment>) -> Vec<PlanSegment> {
        let mut out: Vec<PlanSegment> = Vec::new();
        for segment in segments {
            match (out.last_mut(), segment) {
                (Some(Text(last)), Text(more)) | (Some(PlanDelta(last)), PlanDelta(more)) => {
                    last.push_str(&more)
                }
                (_, segment) => out.push(segment),
            }
        }
        out
    }

    #[test]
    fn tags_split_across_deltas_with_text_around() {
        let out = feed(&[
            "Intro\n<prop",
            "osed_plan>\n- step 1\n",
            "</proposed_plan>\nOutro",
        ]);
        assert_eq!(
            out,
            vec![
                text("Intro\n"),
                PlanStart,
                delta("- step 1\n"),
                PlanEnd,
                text("Outro")
            ]
        );
        assert_eq!(
            strip_plan("Intro\n<proposed_plan>\n- a\n</proposed_plan>\nOutro"),
            "Intro\nOutro"
        );
        assert_eq!(
            plan_text("Intro\n<proposed_plan>\n- a\n</proposed_plan>\nOutro").as_deref(),
            Some("- a\n")
        );
        assert_eq!(plan_text("no plan here"), None);
    }

    #[test]
    fn text_that_cannot_be_a_tag_is_passed_on_at_once() {
        let mut parser = PlanParser::new();
        assert_eq!(parser.push("Hel"), vec![text("Hel")]);
        assert_eq!(parser.push("lo <"), vec![text("lo <")]);
        // A line start that may still be a tag is held back, and let go once it cannot be.
        assert_eq!(parser.push("\n<pro"), vec![text("\n")]);
        assert_eq!(parser.push("se"), vec![text("<prose")]);
    }

    #[test]
    fn a_tag_counts_only_alone_on_its_line() {
        assert_eq!(
            feed(&["  <proposed_plan> extra\n"]),
            vec![text("  <proposed_plan> extra\n")]
        );
        assert_eq!(
            feed(&["see <proposed_plan>\n"]),
            vec![text("see <proposed_plan>\n")]
        );
        assert_eq!(
            feed(&["<proposed_plan>   \nline\n</proposed_plan>  \n"]),
            vec![PlanStart, delta("line\n"), PlanEnd]
        );
    }

    #[test]
    fn an_unterminated_block_closes_at_the_end() {
        assert_eq!(
            feed(&["<proposed_plan>\n- step 1\n"]),
            vec![PlanStart, delta("- step 1\n"), PlanEnd]
        );
        assert_eq!(
            feed(&["before\n<proposed_plan>"]),
            vec![text("before\n"), PlanStart, PlanEnd]
        );
        assert_eq!(plan_text("<proposed_plan>\n1. a").as_deref(), Some("1. a"));
    }

    #[test]
    fn fenced_tags_and_nested_blocks_are_plan_text() {
        assert_eq!(
            feed(&["<proposed_plan>\n```text\n</proposed_plan>\n```\nline\n</proposed_plan>\n"]),
            vec![
                PlanStart,
                delta("```text\n</proposed_plan>\n```\nline\n"),
                PlanEnd
            ]
        );
        assert_eq!(
            feed(&["<proposed_plan>\n~~~\n</proposed_plan>\n~~~\n</proposed_plan>\n"]),
            vec![PlanStart, delta("~~~\n</proposed_plan>\n~~~\n"), PlanEnd]
        );
        assert_eq!(
            feed(&["<proposed_plan>\n<proposed_plan>\n</proposed_plan>\nx\n</proposed_plan>\n"]),
            vec![
                PlanStart,
                delta("<proposed_plan>\n</proposed_plan>\nx\n"),
                PlanEnd
            ]
        );
        // A fence in the message's text hides a tag too.
        assert_eq!(
            feed(&["```\n<proposed_plan>\n```\n"]),
            vec![text("```\n<proposed_plan>\n```\n")]
        );
    }

    #[test]
    fn a_close_tag_indented_past_the_open_one_is_text() {
        assert_eq!(
            feed(&["<proposed_plan>\n    </proposed_plan>\nstill\n</proposed_plan>\n"]),
            vec![PlanStart, delta("    </proposed_plan>\nstill\n"), PlanEnd]
        );
        // Four spaces in are not a fence either.
        assert_eq!(
            feed(&["<proposed_plan>\n    ```\n</proposed_plan>\nnormal"]),
            vec![PlanStart, delta("    ```\n"), PlanEnd, text("normal")]
        );
    }

    #[test]
    fn a_later_block_replaces_the_plan_text() {
        let both =
            "<proposed_plan>\nold\n</proposed_plan>\nmid\n<proposed_plan>\nnew\n</proposed_plan>\n";
        assert_eq!(plan_text(both).as_deref(), Some("new\n"));
        assert_eq!(strip_plan(both), "mid\n");
    }

    fn pieces() -> impl Strategy<Value = String> {
        prop::collection::vec(
            prop::sample::select(vec![
                "<proposed_plan>\n",
                "</proposed_plan>\n",
                "  <proposed_plan>\n",
                "```\n",
                "~~~~\n",
                "text ",
                "- step\n",
                "\n",
                "   \n",
                "<pro",
                "é ",
                "\t</proposed_plan>\n",
            ]),
            0..16,
        )
        .prop_map(|parts| parts.concat())
    }

    proptest! {
        /// However the text is split into deltas, the parse is the same.
        #[test]
        fn any_split_parses_alike(text in pieces(), cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..8)) {
            let whole = split(&text);
            let bounds: Vec<usize> = (0..=text.len()).filter(|i| text.is_char_boundary(*i)).collect();
            let mut at: Vec<usize> = cuts.iter().map(|c| bounds[c.index(bounds.len())]).collect();
            at.sort_unstable();
            let mut chunks = Vec::new();
            let mut from = 0;
            for cut in at {
                chunks.push(&text[from..cut]);
                from = cut;
            }
            chunks.push(&text[from..]);
            prop_assert_eq!(feed(&chunks), merged(whole.clone()));
            // Nothing is lost: text and plan together are the input without the tag lines.
            let kept: usize = whole.iter().map(|s| match s { Text(t) | PlanDelta(t) => t.len(), _ => 0 }).sum();
            prop_assert!(kept <= text.len());
        }
    }
}
