//! A server spawned with piped stdio, spoken to through the bench's JSON-RPC layer
//! ([`crate::rpc`]) over the test suite's stdio transport (one JSON message per line).

use std::ops::{Deref, DerefMut};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use tokio::process::{Child, Command};
use weft_test_support::client::transport;

use crate::rpc::{Connection, Ended, Rpc, read_loop};

const ENDED: Ended = Ended {
    before_answer: "the server exited before answering",
    notes: "the server closed its stdout",
};

/// The process of a server spoken to over its stdin and stdout.
pub struct Process {
    child: Child,
    pid: u32,
}

/// A running app-server process spoken to over its stdin and stdout; the requests and
/// notifications are [`Rpc`]'s (through `Deref`). A type of this module, not an alias of
/// [`Connection`], so its methods belong here and `rpc.rs` never reaches back into it.
pub struct Server(Connection<Process>);

impl Deref for Server {
    type Target = Connection<Process>;
    fn deref(&self) -> &Connection<Process> {
        &self.0
    }
}

impl DerefMut for Server {
    fn deref_mut(&mut self) -> &mut Connection<Process> {
        &mut self.0
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
        Ok(Server(Connection::new(rpc, Process { child, pid })))
    }

    pub fn pid(&self) -> u32 {
        self.side().pid
    }

    /// Close stdin and wait for the process to exit; kill it if it does not within `timeout`.
    pub async fn shutdown(mut self, timeout: Duration) -> Result<()> {
        self.writer().lock().await.close(timeout).await;
        let child = &mut self.side_mut().child;
        match tokio::time::timeout(timeout, child.wait()).await {
            Ok(status) => {
                status?;
                Ok(())
            }
            Err(_) => {
                child.kill().await?;
                bail!("the server did not exit within {timeout:?} of stdin EOF (killed)")
            }
        }
    }
}
