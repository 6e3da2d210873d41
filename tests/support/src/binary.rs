//! Locating the `weft` binary.
//!
//! A test package cannot use `CARGO_BIN_EXE_weft` for a binary of another package, so unless
//! that variable is set (or `WEFT_BIN` names a binary), the first test that needs the binary
//! runs `cargo build -p weft-app-server --bin weft` once per test process, into the same target
//! directory and profile as the running test executable. That makes a plain
//! `cargo test --workspace` (or `cargo test -p weft-e2e`, debug or `--release`) always test the
//! current daemon source.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The workspace root (the folder of the root `Cargo.toml`).
pub fn workspace_root() -> PathBuf {
    // This crate lives in `<root>/tests/support`.
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest
        .ancestors()
        .nth(2)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| manifest.to_path_buf())
}

/// Path of the `weft` binary, building it first if needed (once per process).
pub fn weft_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(locate_or_build)
}

fn locate_or_build() -> PathBuf {
    for var in ["WEFT_BIN", "CARGO_BIN_EXE_weft"] {
        if let Some(path) = std::env::var_os(var).filter(|p| !p.is_empty()) {
            return PathBuf::from(path);
        }
    }
    let (target_dir, profile) = target_dir_and_profile();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(workspace_root())
        .args(["build", "-p", "weft-app-server", "--bin", "weft"])
        .env("CARGO_TARGET_DIR", &target_dir);
    match profile.as_str() {
        "debug" => {}
        "release" => {
            cmd.arg("--release");
        }
        other => {
            cmd.args(["--profile", other]);
        }
    }
    let output = cmd
        .output()
        .unwrap_or_else(|err| panic!("cannot run `cargo build` for the weft binary: {err}"));
    assert!(
        output.status.success(),
        "`cargo build -p weft-app-server --bin weft` failed ({}):\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let bin = target_dir
        .join(&profile)
        .join(format!("weft{}", std::env::consts::EXE_SUFFIX));
    assert!(
        bin.is_file(),
        "built the weft binary but it is not at {}",
        bin.display()
    );
    bin
}

/// The target directory and profile folder name of the running test executable
/// (`<target>/<profile>/deps/e2e-<hash>`), falling back to `<root>/target` and `debug`.
fn target_dir_and_profile() -> (PathBuf, String) {
    let from_exe = std::env::current_exe().ok().and_then(|exe| {
        let deps = exe.parent()?;
        if deps.file_name()? != "deps" {
            return None;
        }
        let profile_dir = deps.parent()?;
        let profile = profile_dir.file_name()?.to_str()?.to_owned();
        Some((profile_dir.parent()?.to_path_buf(), profile))
    });
    from_exe.unwrap_or_else(|| {
        let target = std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| workspace_root().join("target"));
        (target, "debug".to_owned())
    })
}
