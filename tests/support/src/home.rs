//! A temporary `$WEFT_HOME`.

use std::path::{Path, PathBuf};

use tempfile::TempDir;

/// A fresh, empty `$WEFT_HOME`, removed when dropped.
pub struct TestHome {
    dir: TempDir,
}

impl TestHome {
    /// An empty home directory (no `config.toml`).
    pub fn new() -> TestHome {
        let dir = tempfile::Builder::new()
            .prefix("weft-home-")
            .tempdir()
            .expect("create a temporary WEFT_HOME");
        TestHome { dir }
    }

    /// A home whose `config.toml` has the given text.
    pub fn with_config(toml: &str) -> TestHome {
        let home = TestHome::new();
        home.write_config(toml);
        home
    }

    /// A home whose `config.toml` points the default model at a mock model server
    /// (see [`mock_model_config`]).
    pub fn with_mock_model(base_url: &str) -> TestHome {
        TestHome::with_config(&mock_model_config(base_url, "responses"))
    }

    /// The directory to pass as `WEFT_HOME`.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// `$WEFT_HOME/config.toml`.
    pub fn config_path(&self) -> PathBuf {
        self.path().join("config.toml")
    }

    /// Write (replace) `config.toml`.
    pub fn write_config(&self, toml: &str) {
        self.write_file("config.toml", toml);
    }

    /// Write a file relative to the home directory (parents created) and return its path.
    pub fn write_file(&self, relative: &str, contents: &str) -> PathBuf {
        let path = self.path().join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create parent directories in WEFT_HOME");
        }
        std::fs::write(&path, contents)
            .unwrap_or_else(|err| panic!("write {}: {err}", path.display()));
        path
    }
}

impl Default for TestHome {
    fn default() -> Self {
        TestHome::new()
    }
}

/// A `config.toml` whose default model provider is a mock model server at `base_url`
/// (for example `http://127.0.0.1:PORT/v1`), speaking `wire_api` (`"responses"` or `"chat"`),
/// with retries off so failures show at once. The text ends inside the
/// `[model_providers.mock]` table: put more top-level keys *before* it.
pub fn mock_model_config(base_url: &str, wire_api: &str) -> String {
    format!(
        r#"model = "mock-model"
model_provider = "mock"

[model_providers.mock]
name = "Mock model"
base_url = "{base_url}"
wire_api = "{wire_api}"
request_max_retries = 0
stream_max_retries = 0
stream_idle_timeout_ms = 10000
"#
    )
}
