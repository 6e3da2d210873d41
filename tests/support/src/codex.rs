//! The real Codex client (`codex`, the pinned `@openai/codex` release) as a second client of
//! Weft: where its binary is, the scratch home it runs with, and running it to completion
//! (`codex exec --remote …`). The interactive TUI is driven through tmux by [`crate::tui`].
//!
//! The binary is installed by `tests/tui/install.sh` into `target/codex-client/` (or named by
//! `WEFT_CODEX_BIN`). A missing binary fails the test with a message saying how to install it:
//! tests never skip. The client runs with `env -i` and a minimal environment: a scratch `HOME`
//! and `CODEX_HOME`, a `config.toml` that turns off update checks, analytics, feedback and
//! plugins, and HTTP(S) proxies pointing at a closed loopback port (with `NO_PROXY` for
//! loopback), so it reaches nothing but the Weft daemon on 127.0.0.1 (docs/tui-tests.md).

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tempfile::TempDir;
use tokio::process::Command;

use crate::{output_within, workspace_root};

/// The `config.toml` of the client's `CODEX_HOME`: nothing that reaches the network, nothing
/// that changes the screen between runs (animations, tooltips, the screen-reader probe), and
/// no paste-burst detection (so typed text and Enter are keys, not a paste).
pub const CLIENT_CONFIG: &str = r#"check_for_update_on_startup = false
disable_paste_burst = true

[analytics]
enabled = false

[feedback]
enabled = false

[features]
plugins = false

[tui]
animations = false
show_tooltips = false
screen_reader_detection_done = true
"#;

/// The native `codex` binary of the pinned release; panics with how to install it if missing.
pub fn codex_bin() -> PathBuf {
    if let Some(path) = std::env::var_os("WEFT_CODEX_BIN").filter(|p| !p.is_empty()) {
        let path = PathBuf::from(path);
        assert!(
            path.is_file(),
            "WEFT_CODEX_BIN names {}, which is not a file",
            path.display()
        );
        return path;
    }
    let (platform, triple) = match std::env::consts::ARCH {
        "aarch64" => ("linux-arm64", "aarch64-unknown-linux-musl"),
        _ => ("linux-x64", "x86_64-unknown-linux-musl"),
    };
    let bin = workspace_root()
        .join("target/codex-client/node_modules/@openai")
        .join(format!("codex-{platform}"))
        .join("vendor")
        .join(triple)
        .join("bin/codex");
    assert!(
        bin.is_file(),
        "the Codex client is not installed ({} is missing): run tests/tui/install.sh \
         (it installs the pinned @openai/codex with npm ci; see docs/tui-tests.md)",
        bin.display()
    );
    bin
}

/// A scratch home for one client run: `HOME`, `CODEX_HOME` (with [`CLIENT_CONFIG`]), `TMPDIR`
/// and a workspace (`ws/`, a git repository with one commit-less file), all removed on drop.
///
/// `TMPDIR` is a folder of its own so that `CODEX_HOME` is not beneath the temporary
/// directory (the client warns about helper binaries under a temporary `CODEX_HOME`).
pub struct ClientHome {
    dir: TempDir,
    workspace: PathBuf,
    proxy: String,
}

impl ClientHome {
    /// A fresh scratch home with a workspace.
    pub fn new() -> ClientHome {
        let dir = tempfile::Builder::new()
            .prefix("weft-codex-client-")
            .tempdir()
            .expect("create the client's scratch home");
        for sub in ["home/codex", "tmp", "ws"] {
            std::fs::create_dir_all(dir.path().join(sub)).expect("create scratch folders");
        }
        std::fs::write(dir.path().join("home/codex/config.toml"), CLIENT_CONFIG)
            .expect("write the client's config.toml");
        let workspace =
            std::fs::canonicalize(dir.path().join("ws")).expect("canonical workspace path");
        std::fs::write(workspace.join("README.md"), "A scratch workspace.\n")
            .expect("write README.md");
        let git = std::process::Command::new("git")
            .args(["init", "-q", "."])
            .current_dir(&workspace)
            .status();
        assert!(
            git.is_ok_and(|s| s.success()),
            "`git init` failed in the workspace"
        );
        ClientHome {
            dir,
            workspace,
            proxy: format!("http://127.0.0.1:{}", closed_port()),
        }
    }

    /// The scratch `HOME`.
    pub fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    /// The client's `CODEX_HOME` (`$HOME/codex`).
    pub fn codex_home(&self) -> PathBuf {
        self.home().join("codex")
    }

    /// The workspace: the daemon's and the client's working directory.
    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// The environment the client runs with (after `env -i`).
    pub fn env(&self) -> Vec<(String, String)> {
        let mut env = vec![
            ("PATH".to_owned(), "/usr/local/bin:/usr/bin:/bin".to_owned()),
            ("HOME".to_owned(), self.home().display().to_string()),
            (
                "CODEX_HOME".to_owned(),
                self.codex_home().display().to_string(),
            ),
            (
                "TMPDIR".to_owned(),
                self.dir.path().join("tmp").display().to_string(),
            ),
            ("LANG".to_owned(), "C.UTF-8".to_owned()),
            ("TERM".to_owned(), "xterm-256color".to_owned()),
            ("NO_PROXY".to_owned(), "127.0.0.1,localhost".to_owned()),
            ("no_proxy".to_owned(), "127.0.0.1,localhost".to_owned()),
        ];
        for var in [
            "HTTP_PROXY",
            "HTTPS_PROXY",
            "ALL_PROXY",
            "http_proxy",
            "https_proxy",
            "all_proxy",
        ] {
            env.push((var.to_owned(), self.proxy.clone()));
        }
        env
    }
}

impl Default for ClientHome {
    fn default() -> Self {
        ClientHome::new()
    }
}

/// A loopback port nothing listens on (bound, then released).
fn closed_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    listener.local_addr().expect("local address").port()
}

/// What a finished client run printed.
#[derive(Debug)]
pub struct ClientOutput {
    /// The exit code (`None` if killed by a signal).
    pub code: Option<i32>,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

/// Run `codex ARGS…` in the workspace with the scratch environment, stdin closed, to completion
/// (at most `timeout`; panics beyond it).
pub async fn run_codex(home: &ClientHome, args: &[&str], timeout: Duration) -> ClientOutput {
    let bin = codex_bin();
    let mut cmd = Command::new(&bin);
    cmd.args(args)
        .current_dir(home.workspace())
        .env_clear()
        .envs(home.env())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let output = output_within(cmd, &bin, "codex", args, timeout).await;
    ClientOutput {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}
