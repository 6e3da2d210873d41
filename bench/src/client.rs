//! The stdio transport of the bench's JSON-RPC client ([`crate::rpc`]): an app-server spawned
//! with piped stdio, one JSON message per line.
//!
//! A reader task reads every line the server writes, stamps it with the instant it was read and
//! routes it ([`Router::route`]).

use std::ops::{Deref, DerefMut};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, BufWriter};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use crate::rpc::{Ended, Router, Rpc, WRITE_TIMEOUT, Wire, refusal};

const ENDED: Ended = Ended {
    before_answer: "the server exited before answering",
    notes: "the server closed its stdout",
};

/// The server's stdin, `None` once closed.
pub struct StdinWire(tokio::sync::Mutex<Option<BufWriter<ChildStdin>>>);

impl Wire for StdinWire {
    async fn write(&self, text: String) -> Result<()> {
        let write = async {
            let mut stdin = self.0.lock().await;
            let stdin = stdin.as_mut().context("stdin already closed")?;
            stdin.write_all(text.as_bytes()).await?;
            stdin.write_all(b"\n").await?;
            stdin.flush().await?;
            Ok(())
        };
        match tokio::time::timeout(WRITE_TIMEOUT, write).await {
            Ok(written) => written,
            Err(_) => bail!("the server did not read a line within {WRITE_TIMEOUT:?}"),
        }
    }
}

/// A running app-server process spoken to over its stdin and stdout; the requests and
/// notifications are [`Rpc`]'s (through `Deref`).
pub struct Server {
    child: Child,
    pid: u32,
    rpc: Rpc<StdinWire>,
}

impl Deref for Server {
    type Target = Rpc<StdinWire>;
    fn deref(&self) -> &Rpc<StdinWire> {
        &self.rpc
    }
}

impl DerefMut for Server {
    fn deref_mut(&mut self) -> &mut Rpc<StdinWire> {
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
        let wire = Arc::new(StdinWire(tokio::sync::Mutex::new(Some(BufWriter::new(
            stdin,
        )))));
        let (rpc, router) = Rpc::new(wire.clone(), ENDED);
        tokio::spawn(read_loop(stdout, router, wire));
        Ok(Server { child, pid, rpc })
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Close stdin and wait for the process to exit; kill it if it does not within `timeout`.
    pub async fn shutdown(mut self, timeout: Duration) -> Result<()> {
        drop(self.rpc.wire().0.lock().await.take());
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

/// Read lines until EOF; route responses and notifications, refuse server requests.
async fn read_loop(stdout: ChildStdout, router: Router, wire: Arc<StdinWire>) {
    let mut reader = BufReader::with_capacity(1 << 16, stdout);
    let mut line = String::new();
    loop {
        line.clear();
        match reader.read_line(&mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let at = Instant::now();
        if let Some(id) = router.route(&line, at) {
            let wire = wire.clone();
            tokio::spawn(async move {
                let _ = wire.write(refusal(id)).await;
            });
        }
    }
    router.end();
}
