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

fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}
