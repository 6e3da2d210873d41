//! Driving the real Codex TUI through tmux (docs/tui-tests.md).
//!
//! Each [`Tui`] has a tmux server of its own (`tmux -L weft-tui-<pid>-<n> -f /dev/null`) with
//! one window of a fixed size running `codex ARGS…` under `env -i` with a [`ClientHome`]'s
//! environment, in its workspace. The screen is read with `capture-pane -p`; tests wait for
//! what they expect with [`Tui::wait_for_screen`] (polling, with a timeout that fails the test
//! and prints the last screen), never with fixed sleeps. Text is typed with `send-keys -l` and
//! Enter sent apart from it, once the text shows (the TUI takes fast text plus Enter as a
//! paste). The pane stays after the client exits (`remain-on-exit`), so its last screen and
//! exit status can be read. The tmux server is killed on drop.

use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::clip;
use crate::codex::{ClientHome, codex_bin};

/// How long a screen may take to show what a test waits for.
pub const SCREEN_TIMEOUT: Duration = Duration::from_secs(20);

const TARGET: &str = "tui:0.0";
const POLL: Duration = Duration::from_millis(100);

/// A Codex TUI running in a private tmux server.
pub struct Tui {
    socket: String,
    /// Kept so that panics can name it.
    command: String,
}

impl Tui {
    /// Start `codex ARGS…` (for example `["--remote", "ws://127.0.0.1:PORT"]`) in a window of
    /// 160×48 cells.
    pub fn start(home: &ClientHome, args: &[&str]) -> Tui {
        Tui::start_sized(home, args, 160, 48)
    }

    /// [`Tui::start`] with a window of `width`×`height` cells.
    pub fn start_sized(home: &ClientHome, args: &[&str], width: u16, height: u16) -> Tui {
        check_tmux();
        let bin = codex_bin();
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let socket = format!(
            "weft-tui-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let mut words = vec![
            "cd".to_owned(),
            shell_quote(&home.workspace().display().to_string()),
            "&&".to_owned(),
            "exec".to_owned(),
            "env".to_owned(),
            "-i".to_owned(),
        ];
        for (key, value) in home.env() {
            words.push(shell_quote(&format!("{key}={value}")));
        }
        words.push(shell_quote(&bin.display().to_string()));
        words.extend(args.iter().map(|a| shell_quote(a)));
        let command = words.join(" ");
        let (w, h) = (width.to_string(), height.to_string());
        let tui = Tui { socket, command };
        // One tmux invocation: the options are set before the window's process starts.
        tui.tmux(&[
            "start-server",
            ";",
            "set-option",
            "-g",
            "remain-on-exit",
            "on",
            ";",
            "set-option",
            "-g",
            "history-limit",
            "5000",
            ";",
            "new-session",
            "-d",
            "-s",
            "tui",
            "-x",
            &w,
            "-y",
            &h,
            &tui.command,
        ]);
        tui
    }

    /// Run one tmux command on this server; panics if it fails.
    fn tmux(&self, args: &[&str]) -> String {
        let output = Command::new("tmux")
            .args(["-L", &self.socket, "-f", "/dev/null"])
            .args(args)
            .env_remove("TMUX")
            .output()
            .unwrap_or_else(|err| panic!("run tmux: {err}"));
        assert!(
            output.status.success(),
            "tmux {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// The visible screen, one line per row, trailing blanks trimmed.
    pub fn screen(&self) -> String {
        let text = self.tmux(&["capture-pane", "-p", "-t", TARGET]);
        let mut lines: Vec<&str> = text.lines().map(str::trim_end).collect();
        while lines.last().is_some_and(|l| l.is_empty()) {
            lines.pop();
        }
        lines.join("\n")
    }

    /// Poll the screen until `pred` holds (at most `timeout`); returns that screen. Panics with
    /// `what` and the last screen on timeout.
    pub async fn wait_for_screen_within(
        &self,
        what: &str,
        timeout: Duration,
        pred: impl Fn(&str) -> bool,
    ) -> String {
        let deadline = Instant::now() + timeout;
        loop {
            let screen = self.screen();
            if pred(&screen) {
                return screen;
            }
            let exited = self.exit_status();
            if exited.is_some() || Instant::now() >= deadline {
                let why = match exited {
                    Some(code) => format!("the client exited with status {code}"),
                    None => format!("not within {timeout:?}"),
                };
                panic!(
                    "the TUI did not show {what}: {why}\n--- last screen ---\n{}\n\
                     --- end of screen ---",
                    clip(&screen, 12_000)
                );
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// [`Tui::wait_for_screen_within`] with [`SCREEN_TIMEOUT`].
    pub async fn wait_for_screen(&self, what: &str, pred: impl Fn(&str) -> bool) -> String {
        self.wait_for_screen_within(what, SCREEN_TIMEOUT, pred)
            .await
    }

    /// Wait until the screen contains `needle`.
    pub async fn wait_for_text(&self, needle: &str) -> String {
        self.wait_for_screen(&format!("`{needle}`"), |s| s.contains(needle))
            .await
    }

    /// Wait until the TUI is ready for input: its composer prompt shows and nothing runs.
    pub async fn wait_for_idle(&self) -> String {
        self.wait_for_screen("an idle composer (`›` and no `esc to interrupt`)", |s| {
            s.lines().any(|l| l.starts_with('›')) && !s.contains("esc to interrupt")
        })
        .await
    }

    /// Type `text` literally (no key names).
    pub fn type_text(&self, text: &str) {
        self.tmux(&["send-keys", "-t", TARGET, "-l", text]);
    }

    /// Press keys by tmux name: `Enter`, `Escape`, `C-c`, `Down`, `y`, …
    pub fn press(&self, key: &str) {
        self.tmux(&["send-keys", "-t", TARGET, key]);
    }

    /// Type `text`, wait until it shows on the screen, then press Enter; returns once the
    /// composer no longer holds it. An Enter the TUI drops while it is still switching state
    /// (right after `/new`, say) leaves the text in the composer: then Enter is pressed once
    /// more (only then: a taken Enter empties the composer, so nothing is sent twice).
    pub async fn submit(&self, text: &str) {
        self.type_text(text);
        // The composer shows what was typed (long text wraps: look for its start).
        let head: String = text.chars().take(40).collect();
        self.wait_for_screen(&format!("the typed text `{head}`"), |s| s.contains(&head))
            .await;
        self.press("Enter");
        let taken = |s: &str| composer_line(s).is_none_or(|line| !line.contains(&head));
        let retry_after = Duration::from_secs(3);
        let deadline = Instant::now() + retry_after;
        while Instant::now() < deadline {
            if taken(&self.screen()) {
                return;
            }
            tokio::time::sleep(POLL).await;
        }
        self.press("Enter");
        self.wait_for_screen(&format!("the composer to take `{head}`"), taken)
            .await;
    }

    /// `Some(exit code)` once the client has exited (the pane stays).
    pub fn exit_status(&self) -> Option<i32> {
        let out = self.tmux(&[
            "display-message",
            "-p",
            "-t",
            TARGET,
            "#{pane_dead} #{pane_dead_status}",
        ]);
        let mut words = out.split_whitespace();
        match (words.next(), words.next()) {
            (Some("1"), Some(code)) => code.parse().ok(),
            (Some("1"), None) => Some(-1),
            _ => None,
        }
    }

    /// Wait until the client exits; returns its exit code.
    pub async fn wait_exit(&self, timeout: Duration) -> i32 {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(code) = self.exit_status() {
                return code;
            }
            if Instant::now() >= deadline {
                panic!(
                    "the TUI did not exit within {timeout:?}\n--- last screen ---\n{}",
                    clip(&self.screen(), 12_000)
                );
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// The command line the window runs.
    pub fn command(&self) -> &str {
        &self.command
    }
}

impl Drop for Tui {
    fn drop(&mut self) {
        if std::thread::panicking() {
            // With the scrollback: what the client printed before it exited may have scrolled.
            let screen = Command::new("tmux")
                .args([
                    "-L",
                    &self.socket,
                    "capture-pane",
                    "-p",
                    "-S",
                    "-100",
                    "-t",
                    TARGET,
                ])
                .output()
                .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
                .unwrap_or_default();
            eprintln!(
                "--- TUI screen (tmux -L {}) ---\n{}\n--- end of TUI screen ---",
                self.socket,
                screen.trim_end()
            );
        }
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .output();
    }
}

/// The composer's line: the last line starting with `›`.
pub fn composer_line(screen: &str) -> Option<&str> {
    screen.lines().rev().find(|l| l.starts_with('›'))
}

/// Fail clearly when tmux is not installed.
fn check_tmux() {
    let found = Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found,
        "tmux is not installed; the TUI tests drive the Codex TUI through it: run \
         tests/install.sh (the README's test command does), which installs it with the pinned \
         client (docs/tui-tests.md)"
    );
}

/// Quote a word for `sh -c`.
fn shell_quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@+".contains(c))
    {
        return word.to_owned();
    }
    format!("'{}'", word.replace('\'', r"'\''"))
}
