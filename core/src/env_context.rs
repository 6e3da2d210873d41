//! The environment context message: where the agent runs, as a user message the model reads.
//!
//! It is sent in full once per thread and again whenever it changes. [`EnvironmentContext::diff`]
//! renders only the changed fields, for when history sends diffs against a reference snapshot.
//!
//! Format ([`EnvironmentContext::render`]), one tag per field, two-space indent, values with
//! `&`, `<` and `>` escaped:
//!
//! ```text
//! <environment_context>
//!   <cwd>/home/me/repo</cwd>
//!   <shell>zsh</shell>
//!   <approval_policy>on-request</approval_policy>
//!   <sandbox_mode>workspace-write</sandbox_mode>
//!   <network_access>restricted</network_access>
//!   <current_date>2026-03-27</current_date>
//!   <timezone>UTC</timezone>
//! </environment_context>
//! ```
//!
//! `network_access` is `enabled` or `restricted`; it and `timezone` are left out when unknown.
//! A diff has the same wrapper with only the changed tags, in the same order; a field that went
//! from known to unknown is rendered with the value `unknown`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// Opening tag of the message; history code uses it to recognise the message.
pub const ENVIRONMENT_CONTEXT_OPEN_TAG: &str = "<environment_context>";
/// Closing tag of the message.
pub const ENVIRONMENT_CONTEXT_CLOSE_TAG: &str = "</environment_context>";

/// Shell reported when `$SHELL` is unset or empty.
const DEFAULT_SHELL: &str = "bash";

/// Where the agent runs, as told to the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvironmentContext {
    /// The turn's working directory.
    pub cwd: PathBuf,
    /// Name of the user's shell (basename of `$SHELL`, e.g. `zsh`).
    pub shell: String,
    /// Approval policy as it appears in config and on the wire (e.g. `on-request`).
    pub approval_policy: String,
    /// Sandbox mode as it appears in config and on the wire (e.g. `workspace-write`).
    pub sandbox_mode: String,
    /// Whether commands may reach the network; `None` when not known.
    pub network_access: Option<bool>,
    /// Today's date, `YYYY-MM-DD`.
    pub current_date: String,
    /// Time zone `current_date` is in; `None` when not known.
    pub timezone: Option<String>,
}

impl EnvironmentContext {
    /// Captures the context now: shell from `$SHELL` (basename; `bash` when unset), the current
    /// date from the system clock **in UTC** (so `timezone` is `UTC`), network access unknown
    /// (the caller sets it when the sandbox policy says).
    pub fn capture(
        cwd: impl Into<PathBuf>,
        approval_policy: impl Into<String>,
        sandbox_mode: impl Into<String>,
    ) -> Self {
        Self {
            cwd: cwd.into(),
            shell: shell_name(std::env::var_os("SHELL")),
            approval_policy: approval_policy.into(),
            sandbox_mode: sandbox_mode.into(),
            network_access: None,
            current_date: utc_date(SystemTime::now()),
            timezone: Some("UTC".to_string()),
        }
    }

    /// The full `<environment_context>` block.
    pub fn render(&self) -> String {
        let lines = self
            .fields()
            .into_iter()
            .filter_map(|(tag, value)| value.map(|value| tag_line(tag, &value)));
        wrap(lines)
    }

    /// A block with only the fields that differ from `previous`, or `None` when nothing changed.
    pub fn diff(&self, previous: &EnvironmentContext) -> Option<String> {
        let lines: Vec<String> = self
            .fields()
            .into_iter()
            .zip(previous.fields())
            .filter(|((_, now), (_, before))| now != before)
            .map(|((tag, now), _)| tag_line(tag, now.as_deref().unwrap_or("unknown")))
            .collect();
        if lines.is_empty() {
            None
        } else {
            Some(wrap(lines))
        }
    }

    /// Every field as `(tag, value)`, in rendering order; `None` for unknown optional fields.
    fn fields(&self) -> [(&'static str, Option<String>); 7] {
        [
            ("cwd", Some(self.cwd.display().to_string())),
            ("shell", Some(self.shell.clone())),
            ("approval_policy", Some(self.approval_policy.clone())),
            ("sandbox_mode", Some(self.sandbox_mode.clone())),
            (
                "network_access",
                self.network_access
                    .map(|on| if on { "enabled" } else { "restricted" }.to_string()),
            ),
            ("current_date", Some(self.current_date.clone())),
            ("timezone", self.timezone.clone()),
        ]
    }
}

fn tag_line(tag: &str, value: &str) -> String {
    format!("  <{tag}>{}</{tag}>", escape(value))
}

fn wrap(lines: impl IntoIterator<Item = String>) -> String {
    let mut out = String::from(ENVIRONMENT_CONTEXT_OPEN_TAG);
    for line in lines {
        out.push('\n');
        out.push_str(&line);
    }
    out.push('\n');
    out.push_str(ENVIRONMENT_CONTEXT_CLOSE_TAG);
    out
}

fn escape(value: &str) -> String {
    value
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Basename of a `$SHELL` value, or `bash`.
fn shell_name(shell: Option<OsString>) -> String {
    shell
        .as_deref()
        .map(Path::new)
        .and_then(Path::file_name)
        .map(|name| name.to_string_lossy().into_owned())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| DEFAULT_SHELL.to_string())
}

/// The UTC calendar date of `now` as `YYYY-MM-DD`.
fn utc_date(now: SystemTime) -> String {
    let secs = match now.duration_since(UNIX_EPOCH) {
        Ok(after) => i64::try_from(after.as_secs()).unwrap_or(i64::MAX),
        Err(before) => -i64::try_from(before.duration().as_secs()).unwrap_or(i64::MAX),
    };
    let (year, month, day) = crate::time::civil_from_days(secs.div_euclid(86_400));
    format!("{year:04}-{month:02}-{day:02}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn sample() -> EnvironmentContext {
        EnvironmentContext {
            cwd: PathBuf::from("/home/me/repo"),
            shell: "zsh".into(),
            approval_policy: "on-request".into(),
            sandbox_mode: "workspace-write".into(),
            network_access: Some(false),
            current_date: "2026-03-27".into(),
            timezone: Some("UTC".into()),
        }
    }

    #[test]
    fn renders_every_field() {
        assert_eq!(
            sample().render(),
            "<environment_context>\n\
             \x20 <cwd>/home/me/repo</cwd>\n\
             \x20 <shell>zsh</shell>\n\
             \x20 <approval_policy>on-request</approval_policy>\n\
             \x20 <sandbox_mode>workspace-write</sandbox_mode>\n\
             \x20 <network_access>restricted</network_access>\n\
             \x20 <current_date>2026-03-27</current_date>\n\
             \x20 <timezone>UTC</timezone>\n\
             </environment_context>"
        );
    }

    #[test]
    fn unknown_fields_are_left_out_and_values_escaped() {
        let ctx = EnvironmentContext {
            cwd: PathBuf::from("/tmp/a<b>&c"),
            network_access: None,
            timezone: None,
            ..sample()
        };
        let text = ctx.render();
        assert!(text.contains("<cwd>/tmp/a&lt;b&gt;&amp;c</cwd>"));
        assert!(!text.contains("network_access"));
        assert!(!text.contains("timezone"));
    }

    #[test]
    fn diff_lists_only_changed_fields() {
        let before = sample();
        assert_eq!(before.diff(&before.clone()), None);

        let after = EnvironmentContext {
            cwd: PathBuf::from("/home/me/other"),
            network_access: Some(true),
            timezone: None,
            ..sample()
        };
        assert_eq!(
            after.diff(&before).unwrap(),
            "<environment_context>\n\
             \x20 <cwd>/home/me/other</cwd>\n\
             \x20 <network_access>enabled</network_access>\n\
             \x20 <timezone>unknown</timezone>\n\
             </environment_context>"
        );
    }

    #[test]
    fn capture_fills_shell_date_and_timezone() {
        let ctx = EnvironmentContext::capture("/repo", "never", "read-only");
        assert_eq!(ctx.cwd, PathBuf::from("/repo"));
        assert_eq!(ctx.approval_policy, "never");
        assert_eq!(ctx.sandbox_mode, "read-only");
        assert!(!ctx.shell.is_empty() && !ctx.shell.contains('/'));
        assert_eq!(ctx.current_date.len(), 10);
        assert_eq!(ctx.timezone.as_deref(), Some("UTC"));
    }

    #[test]
    fn shell_is_basename_or_bash() {
        assert_eq!(shell_name(Some("/usr/bin/zsh".into())), "zsh");
        assert_eq!(shell_name(Some("fish".into())), "fish");
        assert_eq!(shell_name(Some("".into())), "bash");
        assert_eq!(shell_name(None), "bash");
    }

    #[test]
    fn utc_dates() {
        let at = |secs: u64| utc_date(UNIX_EPOCH + Duration::from_secs(secs));
        assert_eq!(at(0), "1970-01-01");
        assert_eq!(at(19_782 * 86_400), "2024-02-29");
        assert_eq!(at(11_017 * 86_400 + 86_399), "2000-03-01");
        assert_eq!(utc_date(UNIX_EPOCH - Duration::from_secs(1)), "1969-12-31");
    }
}
