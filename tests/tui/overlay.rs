//! The TUI's approval overlays on the screen (docs/tui-tests.md §4): wait until one shows whole
//! and has settled, answer it with one key, and wait until it is gone.
//!
//! Why settled: a key the TUI gets in the first few milliseconds after an overlay's first frame
//! can be lost (under load, 2 of 12 Enters pressed 0–20 ms after the first whole frame of the
//! MCP tool approval did nothing, and none of 36 pressed 150 ms or more after it). So a key is
//! pressed only once the overlay's question, all its options and its footer show and the
//! screen has not changed for [`SETTLE`]. Should the key still be lost, it is pressed again only
//! while the screen is exactly the one it was pressed on: a taken key closes the overlay, which
//! the TUI draws at once, so an unchanged screen means the key was not taken, and a second
//! press can never answer a later overlay (that one would come after a changed screen).

use std::time::{Duration, Instant};

use weft_test_support::Tui;
use weft_test_support::tui::SCREEN_TIMEOUT;

/// How long the screen must stay unchanged, with the overlay whole, before a key is pressed.
const SETTLE: Duration = Duration::from_millis(300);
/// How long an unchanged screen after a key means the key was lost.
const LOST_AFTER: Duration = Duration::from_secs(3);
/// How often a key is pressed at most.
const PRESSES: usize = 3;
const POLL: Duration = Duration::from_millis(50);

/// One kind of overlay: the line its question starts with and the line its footer starts with.
#[derive(Clone, Copy, Debug)]
pub struct OverlayKind {
    /// The start of the question line (the overlay's title).
    pub question: &'static str,
    /// The start of the footer line below the options.
    pub footer: &'static str,
}

/// The command approval (`item/commandExecution/requestApproval`).
pub const COMMAND: OverlayKind = OverlayKind {
    question: "Would you like to run the following command?",
    footer: "Press enter to confirm or esc to cancel",
};

/// The patch approval (`item/fileChange/requestApproval`).
pub const PATCH: OverlayKind = OverlayKind {
    question: "Would you like to make the following edits?",
    footer: "Press enter to confirm or esc to cancel",
};

/// The MCP tool call approval (`mcpServer/elicitation/request`) of the server named `weft`.
pub const MCP_TOOL: OverlayKind = OverlayKind {
    question: "Allow the weft MCP server to run tool",
    footer: "enter to submit | esc to cancel",
};

/// One option of an overlay: `› 1. Yes, proceed (y)` or `  2. Allow for this session  …`.
#[derive(Clone, Debug, PartialEq)]
pub struct Choice {
    /// Its number (1, 2, …).
    pub number: usize,
    /// The text after the number, key suffix included.
    pub text: String,
    /// The key the overlay shows for it (`y`, `a`, `esc`), if any.
    pub key: Option<String>,
    /// Whether the selection marker `›` is on it (Enter picks it).
    pub selected: bool,
}

/// An overlay showing whole on a settled screen.
#[derive(Debug)]
pub struct Overlay {
    kind: OverlayKind,
    screen: String,
    choices: Vec<Choice>,
}

impl OverlayKind {
    /// The options of this overlay on `screen`, when it shows whole there: its question, then
    /// options numbered 1, 2, … with exactly one selected, then its footer.
    pub fn parse(&self, screen: &str) -> Option<Vec<Choice>> {
        let lines: Vec<&str> = screen.lines().map(str::trim).collect();
        let question = lines.iter().rposition(|l| l.starts_with(self.question))?;
        let below = &lines[question + 1..];
        let footer = below.iter().position(|l| l.starts_with(self.footer))?;
        let choices: Vec<Choice> = below[..footer].iter().filter_map(|l| choice(l)).collect();
        let numbered = choices.iter().enumerate().all(|(i, c)| c.number == i + 1);
        let selected = choices.iter().filter(|c| c.selected).count();
        (choices.len() >= 2 && numbered && selected == 1).then_some(choices)
    }

    /// Whether any of this overlay (its question or its footer) is on `screen`.
    pub fn showing(&self, screen: &str) -> bool {
        screen
            .lines()
            .map(str::trim)
            .any(|l| l.starts_with(self.question) || l.starts_with(self.footer))
    }

    /// Wait until this overlay shows whole and the screen has not changed for [`SETTLE`].
    pub async fn wait(&self, tui: &Tui) -> Overlay {
        let deadline = Instant::now() + SCREEN_TIMEOUT;
        let mut screen = tui
            .wait_for_screen(&format!("the whole overlay `{}`", self.question), |s| {
                self.parse(s).is_some()
            })
            .await;
        let mut since = Instant::now();
        loop {
            tokio::time::sleep(POLL).await;
            let now = tui.screen();
            if now != screen {
                screen = now;
                since = Instant::now();
            } else if let Some(choices) = self.parse(&screen)
                && since.elapsed() >= SETTLE
            {
                return Overlay {
                    kind: *self,
                    screen,
                    choices,
                };
            }
            assert!(
                Instant::now() < deadline,
                "the overlay `{}` did not settle whole within {SCREEN_TIMEOUT:?}:\n{screen}",
                self.question
            );
        }
    }
}

/// Parse one option line (already trimmed): `[› ]N. text`.
fn choice(line: &str) -> Option<Choice> {
    let (selected, rest) = match line.strip_prefix('›') {
        Some(rest) => (true, rest.trim_start()),
        None => (false, line),
    };
    let (number, text) = rest.split_once(". ")?;
    let number: usize = number.parse().ok()?;
    let text = text.trim().to_owned();
    let key = text
        .strip_suffix(')')
        .and_then(|t| t.rsplit_once('('))
        .map(|(_, key)| key.to_owned())
        .filter(|key| !key.is_empty() && !key.contains(' '));
    Some(Choice {
        number,
        text,
        key,
        selected,
    })
}

impl Overlay {
    /// The settled screen the overlay showed on.
    pub fn screen(&self) -> &str {
        &self.screen
    }

    /// Pick the one option whose text contains `label`: press the key the overlay shows for
    /// it, or Enter when it has none and is the selected one. Returns once the overlay is
    /// gone. The key is pressed again only while the screen stays exactly as it was (see the
    /// module docs); once anything changed, it waits for the overlay to close.
    pub async fn choose(self, tui: &Tui, label: &str) {
        let matching: Vec<&Choice> = self
            .choices
            .iter()
            .filter(|c| c.text.contains(label))
            .collect();
        let [choice] = matching[..] else {
            panic!(
                "not exactly one option `{label}` on the overlay `{}`:\n{}",
                self.kind.question, self.screen
            );
        };
        let key = match (&choice.key, choice.selected) {
            (Some(key), _) if key == "esc" => "Escape".to_owned(),
            (Some(key), _) => key.clone(),
            (None, true) => "Enter".to_owned(),
            (None, false) => panic!(
                "option `{}` has no key and is not selected:\n{}",
                choice.text, self.screen
            ),
        };
        for press in 1..=PRESSES {
            if press > 1 {
                eprintln!(
                    "the overlay `{}` left the screen unchanged for {LOST_AFTER:?} after `{key}`: \
                     pressing it again (press {press})",
                    self.kind.question
                );
            }
            tui.press(&key);
            let pressed = Instant::now();
            while pressed.elapsed() < LOST_AFTER {
                tokio::time::sleep(POLL).await;
                if tui.screen() != self.screen {
                    let what = format!(
                        "the overlay `{}` gone after `{key}` (press {press})",
                        self.kind.question
                    );
                    tui.wait_for_screen(&what, |s| !self.kind.showing(s)).await;
                    return;
                }
            }
        }
        panic!(
            "the overlay `{}` did not take `{key}`: {PRESSES} presses, each leaving the screen \
             unchanged for {LOST_AFTER:?}:\n{}",
            self.kind.question, self.screen
        );
    }
}
