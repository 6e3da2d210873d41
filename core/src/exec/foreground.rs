//! A command run to its end in the foreground: the user's own shell command
//! (`thread/shellCommand`, docs/architecture.md §5.5). It starts like `exec_command` (the
//! thread's environment, the sandbox, its own process group, merged output streamed), but it
//! never becomes a session: it runs until it exits, its timeout passes (it is then killed) or
//! the cancellation token fires (killed too).

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use super::buffer::OutputBuffer;
use super::process::Waited;
use super::sessions::{ForegroundGuard, finish};
use super::{ExecError, ExecOutput, ExecRequest, ExecSessions, OUTPUT_BUFFER_CAP};
use crate::sandbox::SandboxSpec;

/// How a foreground command ended (its output, capped and truncated as `exec_command`'s, comes
/// with it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ForegroundEnd {
    /// It exited with this code (128 + n when killed by signal n).
    Exited(i32),
    /// The timeout passed first: it was killed. A zero timeout never starts it.
    TimedOut,
}

impl ExecSessions {
    /// Runs `req.cmd` under `sandbox` until it exits or `timeout` passes, streaming its output
    /// to `on_output`; when `cancel` fires it is killed and [`ExecError::Aborted`] returned.
    /// The process counts among the thread's processes while it runs (its shutdown kills it).
    pub async fn run_foreground(
        &self,
        req: ExecRequest,
        sandbox: &SandboxSpec,
        timeout: Duration,
        on_output: impl Fn(&str) + Send + Sync,
        cancel: &CancellationToken,
    ) -> Result<(ForegroundEnd, ExecOutput), ExecError> {
        let started = Instant::now();
        if timeout.is_zero() {
            let mut out = OutputBuffer::new(OUTPUT_BUFFER_CAP);
            let output = finish(
                started,
                None,
                None,
                &mut out,
                req.max_output_tokens,
                Vec::new(),
            );
            return Ok((ForegroundEnd::TimedOut, output));
        }
        let process = Arc::new(self.spawn(&req, sandbox)?);
        let (id, warnings) = self.register(Arc::clone(&process), req.display_command())?;
        let mut guard = ForegroundGuard {
            sessions: self,
            id,
            armed: true,
        };
        // A timeout past what the clock can hold is no timeout at all.
        let now = tokio::time::Instant::from_std(started);
        let deadline = now
            .checked_add(timeout)
            .unwrap_or_else(|| now + Duration::from_secs(100 * 365 * 24 * 3600));
        let (waited, mut out) = process.collect(deadline, &on_output, cancel).await;
        guard.armed = false;
        let end = match waited {
            Waited::Exited(code) => {
                self.remove(id);
                ForegroundEnd::Exited(code)
            }
            Waited::Yielded => {
                self.abort(id, process);
                ForegroundEnd::TimedOut
            }
            Waited::Cancelled => {
                self.abort(id, process);
                return Err(ExecError::Aborted {
                    wall_time: started.elapsed(),
                });
            }
        };
        let exit_code = match end {
            ForegroundEnd::Exited(code) => Some(code),
            ForegroundEnd::TimedOut => None,
        };
        let output = finish(
            started,
            exit_code,
            None,
            &mut out,
            req.max_output_tokens,
            warnings,
        );
        Ok((end, output))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::process::pid_alive;

    fn request(cmd: &str, dir: &std::path::Path) -> ExecRequest {
        ExecRequest {
            cmd: cmd.to_string(),
            workdir: dir.to_path_buf(),
            shell: Some("/bin/bash".to_string()),
            login: false,
            yield_time_ms: 0,
            max_output_tokens: None,
        }
    }

    async fn run(
        sessions: &ExecSessions,
        cmd: &str,
        dir: &std::path::Path,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Result<(ForegroundEnd, ExecOutput), ExecError> {
        let sandbox = SandboxSpec::unrestricted(dir);
        sessions
            .run_foreground(request(cmd, dir), &sandbox, timeout, |_| {}, cancel)
            .await
    }

    #[tokio::test]
    async fn a_command_runs_past_the_exec_yield_time_with_its_shell_syntax() {
        let dir = tempfile::tempdir().unwrap();
        let sessions = ExecSessions::new();
        let seen = parking_lot::Mutex::new(String::new());
        let (end, output) = sessions
            .run_foreground(
                request("echo a | tr a A > f; cat f; sleep 0.3; exit 3", dir.path()),
                &SandboxSpec::unrestricted(dir.path()),
                Duration::from_secs(30),
                |delta| seen.lock().push_str(delta),
                &CancellationToken::new(),
            )
            .await
            .unwrap();
        assert_eq!(end, ForegroundEnd::Exited(3));
        assert_eq!(output.exit_code, Some(3));
        assert_eq!(output.aggregated_output, "A\n");
        assert_eq!(*seen.lock(), "A\n");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("f")).unwrap(),
            "A\n"
        );
        assert!(sessions.pids().is_empty(), "it left the table");
    }

    #[tokio::test]
    async fn the_timeout_kills_the_group_and_keeps_the_output_so_far() {
        let dir = tempfile::tempdir().unwrap();
        let sessions = ExecSessions::new();
        let (end, output) = run(
            &sessions,
            "echo before; sleep 30 & echo $! > pid; wait",
            dir.path(),
            Duration::from_millis(300),
            &CancellationToken::new(),
        )
        .await
        .unwrap();
        assert_eq!(end, ForegroundEnd::TimedOut);
        assert_eq!(output.exit_code, None);
        assert_eq!(output.aggregated_output, "before\n");
        let pid: i32 = std::fs::read_to_string(dir.path().join("pid"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        for _ in 0..50 {
            if !pid_alive(pid) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("the background child {pid} outlived the timeout");
    }

    #[tokio::test]
    async fn a_zero_timeout_times_out_without_running_anything() {
        let dir = tempfile::tempdir().unwrap();
        let sessions = ExecSessions::new();
        let (end, output) = run(
            &sessions,
            "touch ran",
            dir.path(),
            Duration::ZERO,
            &CancellationToken::new(),
        )
        .await
        .unwrap();
        assert_eq!(end, ForegroundEnd::TimedOut);
        assert_eq!(output.aggregated_output, "");
        assert!(!dir.path().join("ran").exists());
    }

    #[tokio::test]
    async fn cancelling_kills_the_command() {
        let dir = tempfile::tempdir().unwrap();
        let sessions = ExecSessions::new();
        let cancel = CancellationToken::new();
        let canceller = {
            let cancel = cancel.clone();
            async move {
                tokio::time::sleep(Duration::from_millis(300)).await;
                cancel.cancel();
            }
        };
        let (result, ()) = tokio::join!(
            run(
                &sessions,
                "echo $$ > pid; sleep 30",
                dir.path(),
                Duration::from_secs(60),
                &cancel
            ),
            canceller
        );
        assert!(matches!(result, Err(ExecError::Aborted { .. })));
        let pid: i32 = std::fs::read_to_string(dir.path().join("pid"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        for _ in 0..60 {
            if !pid_alive(pid) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("the cancelled command {pid} is still running");
    }
}
