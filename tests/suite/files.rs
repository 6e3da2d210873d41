//! The file-system methods `fs/*` and `fs/changed` (docs/protocol.md §7.31), end to end: every
//! method's happy path on both transports (each message validated against both schemas by the
//! client), the refusals (relative paths, paths outside `[fs] roots`, links leading out of
//! them, `$WEFT_HOME`, oversized files, a FIFO), and watches: a debounced change, a flood that
//! stays bounded, `fs/unwatch`, and watches ended with their connection.

mod methods;
mod refusals;
mod watch;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use weft_test_support::daemon::Daemon;
use weft_test_support::home::TestHome;
use weft_test_support::{Client, Transport};

/// `-32600`.
pub const INVALID_REQUEST: i64 = -32600;
/// `-32603`.
pub const INTERNAL_ERROR: i64 = -32603;

/// A daemon with a workspace directory beside its `$WEFT_HOME` (which holds a secret file).
pub struct Files {
    /// `$WEFT_HOME`.
    pub home: TestHome,
    _workspace: tempfile::TempDir,
    /// The workspace, canonical.
    pub work: PathBuf,
    /// The daemon.
    pub daemon: Daemon,
    /// Its first connection, initialized.
    pub client: Client,
}

impl Files {
    /// Start a daemon whose config ends with `extra` (TOML); `roots` adds `[fs] roots = [the
    /// workspace]` in front of it.
    pub async fn start(transport: Transport, roots: bool, extra: &str) -> Files {
        let workspace = tempfile::Builder::new()
            .prefix("weft-files-")
            .tempdir()
            .unwrap();
        let work = std::fs::canonicalize(workspace.path()).unwrap();
        let home = TestHome::new();
        home.write_file("auth.json", "{\"token\": \"secret\"}");
        let mut config = String::new();
        if roots {
            config.push_str(&format!("[fs]\nroots = [{:?}]\n", work.join("root")));
            std::fs::create_dir_all(work.join("root")).unwrap();
        }
        config.push_str(extra);
        home.write_config(&config);
        let mut daemon = Daemon::start(transport, &home, &[]).await;
        let client = daemon.initialized_client().await;
        Files {
            home,
            _workspace: workspace,
            work,
            daemon,
            client,
        }
    }

    /// `rel` in the workspace, as a string.
    pub fn path(&self, rel: &str) -> String {
        self.work.join(rel).to_string_lossy().into_owned()
    }

    /// `rel` in the workspace, written with `contents`.
    pub fn write(&self, rel: &str, contents: &str) -> String {
        let path = self.work.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, contents).unwrap();
        path.to_string_lossy().into_owned()
    }

    /// The canonical `$WEFT_HOME`.
    pub fn home_dir(&self) -> PathBuf {
        std::fs::canonicalize(self.home.path()).unwrap()
    }

    /// A request that must fail with `code`; its message.
    pub async fn refused(&mut self, method: &str, params: Value, code: i64) -> String {
        let err = self.client.request_err(method, params).await;
        assert_eq!(err.code, code, "{method}: {}", err.message);
        err.message
    }
}

/// `{"path": path}`.
pub fn at(path: &str) -> Value {
    json!({ "path": path })
}

/// The inotify watches the daemon `pid` holds (from `/proc/<pid>/fdinfo`).
pub fn inotify_watches(pid: u32) -> usize {
    let fds = Path::new("/proc").join(pid.to_string()).join("fd");
    let mut count = 0;
    for entry in std::fs::read_dir(&fds).unwrap().flatten() {
        let is_inotify = std::fs::read_link(entry.path())
            .is_ok_and(|target| target.to_string_lossy().contains("inotify"));
        if is_inotify {
            let info = fds.with_file_name("fdinfo").join(entry.file_name());
            let text = std::fs::read_to_string(info).unwrap_or_default();
            count += text
                .lines()
                .filter(|l| l.starts_with("inotify wd:"))
                .count();
        }
    }
    count
}
