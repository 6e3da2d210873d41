//! A server spawned with piped stdio, spoken to through the bench's JSON-RPC layer
//! ([`crate::rpc`]) over the test suite's stdio transport (one JSON message per line).

use std::ops::{Deref, DerefMut};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use tokio::process::{Child, Command};
use weft_test_support::client::transport;

use crate::rpc::{Ended, Rpc, read_loop};

const ENDED: Ended = Ended {
    before_answer: "the server exited before answering",
    notes: "the server closed its stdout",
};

/// A running app-server process spoken to over its stdin and stdout; the requests and
/// notifications are [`Rpc`]'s (through `Deref`).
pub struct Server {
    child: Child,
    pid: u32,
    rpc: Rpc,
}

impl Deref for Server {
    type Target = Rpc;
    fn deref(&self) -> &Rpc {
        &self.rpc
    }
}

impl DerefMut for Server {
    fn deref_mut(&mut self) -> &mut Rpc {
        &mut self.rpc
    }
}

impl Server {
    /// Spawn `command` with piped stdin/stdout (stderr as the command has it) and start reading.
    pub fn spawn(mut command: Command) -> Result<Server> {
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn().context("spawn the app-server")?;
        let pid = child.id().context("the app-server has no pid")?;
        let stdin = child.stdin.take().context("no stdin pipe")?;
        let stdout = child.stdout.take().context("no stdout pipe")?;
        let (writer, reader) = transport::stdio(stdin, stdout);
        let writer = Arc::new(tokio::sync::Mutex::new(writer));
        let (rpc, router) = Rpc::new(writer.clone(), ENDED);
        tokio::spawn(read_loop(reader, writer, router, |_| false));
        Ok(Server { child, pid, rpc })
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Close stdin and wait for the process to exit; kill it if it does not within `timeout`.
    pub async fn shutdown(mut self, timeout: Duration) -> Result<()> {
        self.rpc.writer().lock().await.close(timeout).await;
        match tokio::time::timeout(timeout, self.child.wait()).await {
            Ok(status) => {
                status?;
                Ok(())
            }
            Err(_) => {
                self.child.kill().await?;
                bail!("the server did not exit within {timeout:?} of stdin EOF (killed)")
            }
        }
    }
}
