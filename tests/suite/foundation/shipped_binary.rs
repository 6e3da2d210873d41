//! The binary as it is shipped (README "Release binary"): `scripts/split-debuginfo.sh` (the
//! split `scripts/dist.sh` makes of the release build) leaves a stripped `weft` that links
//! to a `weft.debug` beside it holding the symbols and line tables, and the stripped binary
//! serves as the one it came from.

use std::path::Path;
use std::process::Command;

use serde_json::json;
use weft_test_support::{Daemon, TestHome, weft_bin, workspace_root};

/// The names of a binary's sections (`readelf -S -W`).
fn sections(binary: &Path) -> String {
    let out = Command::new("readelf")
        .args(["-S", "-W"])
        .arg(binary)
        .output()
        .expect("run readelf (binutils; tests/install.sh installs it)");
    assert!(out.status.success(), "readelf: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[tokio::test]
async fn the_stripped_binary_links_its_debug_info_and_serves() {
    let out = tempfile::tempdir().unwrap();
    let split = Command::new(workspace_root().join("scripts/split-debuginfo.sh"))
        .arg(weft_bin())
        .arg(out.path())
        .output()
        .expect("run scripts/split-debuginfo.sh");
    assert!(split.status.success(), "{split:?}");
    let shipped = out.path().join("weft");
    let debug = out.path().join("weft.debug");

    let stripped = sections(&shipped);
    for gone in [".debug_info", ".debug_line", ".symtab"] {
        assert!(
            !stripped.contains(gone),
            "{gone} left in the shipped binary"
        );
    }
    assert!(stripped.contains(".gnu_debuglink"), "{stripped}");
    let link = Command::new("readelf")
        .args(["--string-dump=.gnu_debuglink"])
        .arg(&shipped)
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&link.stdout).contains("weft.debug"),
        "{link:?}"
    );
    let kept = sections(&debug);
    for needed in [".debug_line", ".symtab"] {
        assert!(kept.contains(needed), "{needed} missing from weft.debug");
    }
    assert!(
        std::fs::metadata(&shipped).unwrap().len() < std::fs::metadata(weft_bin()).unwrap().len()
    );

    let home = TestHome::new();
    let mut daemon = Daemon::builder(&home).binary(&shipped).start().await;
    let mut client = daemon.initialized_client().await;
    let listed = client
        .request("thread/list", json!({}))
        .await
        .expect("thread/list from the shipped binary");
    assert_eq!(listed["data"], json!([]), "{listed}");
}
