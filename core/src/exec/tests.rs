//! Tests of unified exec. Every test owns its `ExecSessions` and checks that the processes it
//! started are gone when it ends.

use std::path::Path;
use std::time::Duration;

use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

use super::buffer::OutputBuffer;
use super::process::{Utf8Decoder, pid_alive};
use super::truncate::{Gap, truncate_parts};
use super::*;
use crate::sandbox::SandboxSpec;

mod format;
mod kill;
mod output;
mod sessions;
mod spec;
mod truncate;

fn request(cmd: &str, dir: &Path, yield_time_ms: u64) -> ExecRequest {
    ExecRequest {
        cmd: cmd.to_string(),
        workdir: dir.to_path_buf(),
        shell: Some("/bin/bash".to_string()),
        login: false,
        yield_time_ms,
        max_output_tokens: None,
    }
}

/// Collects what `on_output` receives.
#[derive(Default)]
struct Chunks(Mutex<Vec<String>>);

impl Chunks {
    fn push(&self, chunk: &str) {
        {
            let mut chunks = self.0.lock();
            chunks.push(chunk.to_string());
        }
    }
    fn all(&self) -> Vec<String> {
        self.0.lock().clone()
    }
}

/// Waits (bounded) until none of `pids` is alive.
async fn assert_gone(pids: &[i32]) {
    for _ in 0..100 {
        if pids.iter().all(|pid| !pid_alive(*pid)) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let alive: Vec<i32> = pids.iter().copied().filter(|p| pid_alive(*p)).collect();
    panic!("processes still alive: {alive:?}");
}

/// A test's own sessions and the directory its commands run in, unrestricted.
struct Shell {
    sessions: ExecSessions,
    dir: tempfile::TempDir,
}

impl Shell {
    fn new() -> Shell {
        Shell {
            sessions: ExecSessions::new(),
            dir: tempdir(),
        }
    }

    fn dir(&self) -> &Path {
        self.dir.path()
    }

    fn spec(&self) -> SandboxSpec {
        SandboxSpec::unrestricted(self.dir())
    }

    /// Asserts the sessions hold no process any more and `pids` are gone.
    async fn assert_none_left(&self, pids: &[i32]) {
        assert!(self.sessions.pids().is_empty());
        assert_gone(pids).await;
    }

    /// Runs `cmd` in the directory, streaming to nobody, never cancelled.
    async fn run(&self, cmd: &str, yield_time_ms: u64) -> Result<ExecOutput, ExecError> {
        self.exec(request(cmd, self.dir(), yield_time_ms)).await
    }

    /// Runs `req`, streaming to nobody, never cancelled.
    async fn exec(&self, req: ExecRequest) -> Result<ExecOutput, ExecError> {
        self.exec_cancelled_by(req, &CancellationToken::new()).await
    }

    /// Runs `req`, streaming to nobody, aborted when `cancel` is.
    async fn exec_cancelled_by(
        &self,
        req: ExecRequest,
        cancel: &CancellationToken,
    ) -> Result<ExecOutput, ExecError> {
        let spec = self.spec();
        self.sessions.exec_command(req, &spec, |_| {}, cancel).await
    }

    /// Runs `cmd` in the directory, streaming the output to `chunks`, never cancelled.
    async fn run_streaming(
        &self,
        cmd: &str,
        yield_time_ms: u64,
        chunks: &Chunks,
    ) -> Result<ExecOutput, ExecError> {
        let (req, spec) = (request(cmd, self.dir(), yield_time_ms), self.spec());
        self.sessions
            .exec_command(req, &spec, |c| chunks.push(c), &CancellationToken::new())
            .await
    }

    /// Writes `chars` to session `id` (no token limit), streaming to nobody, never cancelled.
    async fn write(
        &self,
        id: u64,
        chars: &str,
        yield_time_ms: u64,
    ) -> Result<ExecOutput, ExecError> {
        self.write_streaming(id, chars, yield_time_ms, &Chunks::default())
            .await
    }

    /// [`Shell::write`], streaming the output to `chunks`.
    async fn write_streaming(
        &self,
        id: u64,
        chars: &str,
        yield_time_ms: u64,
        chunks: &Chunks,
    ) -> Result<ExecOutput, ExecError> {
        let never = CancellationToken::new();
        self.sessions
            .write_stdin(
                id,
                chars.to_string(),
                yield_time_ms,
                None,
                |c| chunks.push(c),
                &never,
            )
            .await
    }
}

fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}
