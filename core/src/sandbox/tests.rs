//! Tests of the sandbox: path rules in-process, and enforcement on real commands. When this
//! kernel lacks Landlock, the enforcement tests assert that Weft refuses instead (and say so).

use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use weft_protocol::SandboxPolicy;

use super::*;
use crate::exec::{ExecError, ExecOutput, ExecRequest, ExecSessions};

mod beneath;
mod enforcement;
mod protected;
mod rules;

fn workspace_write(roots: &[&Path], exclude_tmp: bool) -> SandboxPolicy {
    SandboxPolicy::WorkspaceWrite {
        writable_roots: roots.iter().map(|r| r.display().to_string()).collect(),
        network_access: false,
        exclude_tmpdir_env_var: exclude_tmp,
        exclude_slash_tmp: exclude_tmp,
    }
}

fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap()
}

async fn run(cmd: &str, cwd: &Path, spec: &SandboxSpec) -> Result<ExecOutput, ExecError> {
    let sessions = ExecSessions::new();
    let result = sessions
        .exec_command(
            ExecRequest {
                cmd: cmd.to_string(),
                workdir: cwd.to_path_buf(),
                shell: Some("/bin/bash".to_string()),
                login: false,
                yield_time_ms: 10_000,
                max_output_tokens: None,
            },
            spec,
            |_| {},
            &CancellationToken::new(),
        )
        .await;
    sessions.shutdown().await;
    result
}

/// Whether this kernel can enforce `spec`; prints a note and checks the refusal when not.
fn enforceable(spec: &SandboxSpec, result: &Result<ExecOutput, ExecError>) -> bool {
    let support = sandbox_support();
    match support.check(spec) {
        Ok(()) => true,
        Err(reason) => {
            eprintln!(
                "note: sandbox not enforceable here ({}); checking the refusal",
                support.summary()
            );
            assert_eq!(result, &Err(ExecError::SandboxUnavailable(reason)));
            false
        }
    }
}

/// A workspace `ws` with a folder `inside`, and a folder `outside` next to it, both canonical.
fn race_layout() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let base = canonical(tmp.path());
    let ws = base.join("ws");
    std::fs::create_dir_all(ws.join("inside")).unwrap();
    std::fs::create_dir_all(base.join("outside")).unwrap();
    (tmp, ws, base.join("outside"))
}
