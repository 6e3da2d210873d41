//! Issue 12, the client surface the Codex TUI needs before it can run: `account/read`,
//! `account/bedrock/checkGovCloudRequirements`, `config/read`, `configRequirements/read`,
//! `hooks/list`, `skills/list` and `model/list {includeHidden}` (docs/protocol.md §7.16,
//! §7.18–§7.23). The expected answers are the reference's, as captured from the TUI against
//! `codex app-server` 0.171.0, with Weft's own values where Weft differs (no system skills,
//! hooks that always run).

mod config;
mod hooks;
mod skills;
mod startup;

use std::path::{Path, PathBuf};

use weft_mock_model::MockModel;
use weft_test_support::{Client, Daemon, TestHome, Transport};

/// `-32600`.
pub use crate::turns::assert_invalid_request;

/// A daemon whose config points at a mock model, with its own user `$HOME` and a git
/// workspace, and one client initialized as the TUI initializes (`experimentalApi: true`).
pub struct Surface {
    /// The mock model (`GET /models` lists `mock-model`).
    pub mock: MockModel,
    /// `$WEFT_HOME`.
    pub home: TestHome,
    /// The daemon's `$HOME` (for `~/.agents/skills`) and the workspace `ws/` (a git repo).
    pub dirs: tempfile::TempDir,
    /// The daemon.
    pub daemon: Daemon,
    /// The client.
    pub client: Client,
}

impl Surface {
    /// A daemon on `transport` whose `config.toml` is the mock model's followed by `extra`
    /// (top-level keys must come first: pass them in `top`), started with `args`.
    pub async fn start(transport: Transport, top: &str, extra: &str, args: &[&str]) -> Surface {
        let mock = MockModel::start().await.expect("start the mock model");
        let home = TestHome::new();
        home.write_config(&format!(
            "{top}\nmodel = \"mock-model\"\nmodel_provider = \"mock\"\n\n[model_providers.mock]\n\
             name = \"mock\"\nbase_url = \"{}\"\nwire_api = \"responses\"\nrequest_max_retries = 0\n\n{extra}",
            mock.base_url()
        ));
        let dirs = tempfile::tempdir().expect("temporary directories");
        std::fs::create_dir_all(dirs.path().join("user")).unwrap();
        std::fs::create_dir_all(dirs.path().join("ws/.git")).unwrap();
        let user_home = dirs.path().join("user");
        let mut daemon = Daemon::builder(&home)
            .listen(transport.listen_url())
            .args(args)
            .env("HOME", &user_home.display().to_string())
            .start()
            .await;
        let mut client = daemon.client().await;
        client.initialize_experimental().await;
        Surface {
            mock,
            home,
            dirs,
            daemon,
            client,
        }
    }

    /// The workspace (a git repository), canonical.
    pub fn ws(&self) -> PathBuf {
        std::fs::canonicalize(self.dirs.path().join("ws")).unwrap()
    }

    /// The daemon's `$HOME`.
    pub fn user_home(&self) -> PathBuf {
        std::fs::canonicalize(self.dirs.path().join("user")).unwrap()
    }
}

/// Write `<dir>/SKILL.md` with this front matter.
pub fn write_skill(dir: &Path, front_matter: &str) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        format!("---\n{front_matter}\n---\n\nBody.\n"),
    )
    .unwrap();
}
