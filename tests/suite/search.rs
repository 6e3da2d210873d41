//! Issue 28, searching (docs/protocol.md §7.33): `fuzzyFileSearch` and its sessions over real
//! trees (`.gitignore`, the reference's ranking, the latest query only, cancellation, the
//! experimental gate), and `thread/search` over stored threads.

mod files;
mod sessions;
mod threads;

use std::fs;
use std::path::Path;

use serde_json::{Value, json};
use weft_test_support::Transport;

use crate::turns::{Harness, Setup};

/// The `initialize` params of a client that opts into the experimental API.
pub fn experimental_init() -> Value {
    json!({
        "clientInfo": {"name": "weft-e2e", "title": "Weft e2e tests", "version": "0.1.0"},
        "capabilities": {"experimentalApi": true}
    })
}

/// A harness whose client opted into the experimental API, with `config` added.
pub async fn experimental(transport: Transport, config: &str) -> Harness {
    Harness::start(
        Setup::new(transport)
            .init_params(experimental_init())
            .config(config),
    )
    .await
}

/// Creates `path` (and its parents) under `root`.
pub fn touch(root: &Path, path: &str) {
    let path = root.join(path);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, "x").unwrap();
}

/// A small git workspace: `.gitignore` hides `ignored_dir/` and `*.log`; a hidden directory,
/// nested directories and a `Makefile`.
pub fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join(".git")).unwrap();
    fs::write(dir.path().join(".gitignore"), "ignored_dir/\n*.log\n").unwrap();
    for path in [
        "src/main.rs",
        "src/widgets/button.rs",
        "src/widgets/mod.rs",
        "ignored_dir/main_ignored.rs",
        "app.log",
        "README.md",
        ".hidden/secret_main.txt",
        "Makefile",
        "a/b/c/tool.rs",
        "a/toolbox.txt",
        "tool/t_o_o_l.txt",
    ] {
        touch(dir.path(), path);
    }
    dir
}

/// `(path, score)` of each result of a `fuzzyFileSearch` answer or session notification.
pub fn paths_and_scores(files: &Value) -> Vec<(String, u64)> {
    files
        .as_array()
        .unwrap_or_else(|| panic!("no files: {files}"))
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_owned(),
                f["score"].as_u64().unwrap(),
            )
        })
        .collect()
}
