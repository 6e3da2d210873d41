//! The `command/exec` processes of every connection (docs/protocol.md §7.32): a table keyed by
//! connection and process id, and the task that runs each process to its end — taking the
//! follow-up requests (`command/exec/write`, `/resize`, `/terminate`), ending the process at its
//! timeout or when its connection closes, streaming or capturing its output under the cap, and
//! answering the `command/exec` request once its output is sent.
//!
//! Process ids are the client's (or, for a buffered command without one, an internal number
//! never shown), scoped to the connection: two connections may both run `"p1"`. A connection
//! has at most `[limits] command_exec_max_processes` running.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use parking_lot::Mutex;
use tokio::sync::{mpsc, oneshot, watch};
use weft_core::events::Reply;
use weft_core::exec::{StandaloneOutput, StandaloneProcess, StdinError, TerminalSize};
use weft_protocol::jsonrpc::{INVALID_PARAMS, JsonRpcError};
use weft_protocol::notifications::ServerNotification;
use weft_protocol::{
    CommandExecOutputDeltaNotification, CommandExecOutputStream, CommandExecResponse,
};

use crate::connection::{Connection, ConnectionId};
use crate::outgoing;

/// The exit code a command ended by its timeout answers (as `timeout(1)` does).
pub const TIMEOUT_EXIT_CODE: i32 = 124;
/// After the process exits, how long output still in flight is read before the answer.
pub const OUTPUT_DRAIN: Duration = Duration::from_secs(2);
/// Output chunks are merged up to about this many bytes per notification.
const DELTA_BYTES_HINT: usize = 64 * 1024;
/// Follow-up requests queued for one process.
const CONTROL_QUEUE: usize = 32;

/// A process's id within its connection.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum ProcessKey {
    /// A buffered command started without a `processId`.
    Generated(u64),
    /// The client's `processId`.
    Client(String),
}

impl ProcessKey {
    /// How errors name it: the client's id as a JSON string, a generated one as its number.
    fn error_repr(&self) -> String {
        match self {
            ProcessKey::Generated(n) => n.to_string(),
            ProcessKey::Client(id) => serde_json::to_string(id).unwrap_or_else(|_| id.clone()),
        }
    }
}

/// A follow-up request for a running process.
#[derive(Debug)]
pub enum Control {
    /// Write these bytes to its input, then close it if `close_stdin`.
    Write {
        /// Bytes to write (may be empty).
        bytes: Vec<u8>,
        /// Close the input afterwards.
        close_stdin: bool,
    },
    /// Resize its terminal.
    Resize(TerminalSize),
    /// Kill it.
    Terminate,
}

struct ControlRequest {
    control: Control,
    done: oneshot::Sender<Result<(), JsonRpcError>>,
}

/// Every connection's running `command/exec` processes.
#[derive(Default)]
pub struct CommandExecs {
    table: Mutex<HashMap<(ConnectionId, ProcessKey), mpsc::Sender<ControlRequest>>>,
    next_generated: AtomicU64,
}

/// A process to run, as the handler prepared it.
pub struct Launch {
    /// The client's process id, if it gave one.
    pub process_id: Option<String>,
    /// Whether `command/exec/write` may write to it (`tty` implies it).
    pub stream_stdin: bool,
    /// Whether its output is streamed as `command/exec/outputDelta` (`tty` implies it).
    pub stream_output: bool,
    /// Bytes per stream kept or streamed (`None`: no cap).
    pub output_cap: Option<usize>,
    /// When it is killed (`None`: never).
    pub timeout: Option<Duration>,
    /// The most processes its connection may run at once.
    pub max_processes: usize,
}

impl CommandExecs {
    /// Registers and starts a process for `connection`: `start` spawns it once its id is
    /// reserved. The process then runs in a task of its own, which answers through `reply`.
    pub fn launch(
        self: &Arc<Self>,
        connection: &Arc<Connection>,
        launch: Launch,
        start: impl FnOnce() -> Result<(StandaloneProcess, StandaloneOutput), JsonRpcError>,
        reply: Reply<Result<CommandExecResponse, JsonRpcError>>,
    ) -> Result<(), JsonRpcError> {
        if launch.process_id.is_none() && (launch.stream_stdin || launch.stream_output) {
            return Err(JsonRpcError::invalid_request(
                "command/exec tty or streaming requires a client-supplied processId",
            ));
        }
        let key = match &launch.process_id {
            Some(id) => ProcessKey::Client(id.clone()),
            None => ProcessKey::Generated(self.next_generated.fetch_add(1, Ordering::Relaxed) + 1),
        };
        let (control_tx, control_rx) = mpsc::channel(CONTROL_QUEUE);
        {
            let mut table = self.table.lock();
            if table.contains_key(&(connection.id, key.clone())) {
                return Err(JsonRpcError::invalid_request(format!(
                    "duplicate active command/exec process id: {}",
                    key.error_repr()
                )));
            }
            let running = table.keys().filter(|(c, _)| *c == connection.id).count();
            if running >= launch.max_processes {
                return Err(JsonRpcError::invalid_request(format!(
                    "too many running command/exec processes on this connection (limit {}, [limits] command_exec_max_processes)",
                    launch.max_processes
                )));
            }
            table.insert((connection.id, key.clone()), control_tx);
        }
        let (process, output) = match start() {
            Ok(started) => started,
            Err(error) => {
                self.table.lock().remove(&(connection.id, key));
                return Err(error);
            }
        };
        let run = Run {
            registry: Arc::clone(self),
            connection: Arc::clone(connection),
            key,
            process,
            launch,
        };
        tokio::spawn(run.run(output, control_rx, reply));
        Ok(())
    }

    /// Hands `control` to process `process_id` of `connection` and waits for its outcome.
    pub async fn control(
        &self,
        connection: ConnectionId,
        process_id: String,
        control: Control,
    ) -> Result<(), JsonRpcError> {
        let key = ProcessKey::Client(process_id);
        let sender = self
            .table
            .lock()
            .get(&(connection, key.clone()))
            .cloned()
            .ok_or_else(|| {
                JsonRpcError::invalid_request(format!(
                    "no active command/exec for process id {}",
                    key.error_repr()
                ))
            })?;
        let gone = || no_longer_running(&key);
        let (done, outcome) = oneshot::channel();
        sender
            .send(ControlRequest { control, done })
            .await
            .map_err(|_| gone())?;
        outcome.await.map_err(|_| gone())?
    }

    /// How many processes `connection` has running.
    pub fn running(&self, connection: ConnectionId) -> usize {
        self.table
            .lock()
            .keys()
            .filter(|(c, _)| *c == connection)
            .count()
    }
}

/// One process on its way to its end.
struct Run {
    registry: Arc<CommandExecs>,
    connection: Arc<Connection>,
    key: ProcessKey,
    process: StandaloneProcess,
    launch: Launch,
}

impl Run {
    async fn run(
        self,
        output: StandaloneOutput,
        mut controls: mpsc::Receiver<ControlRequest>,
        reply: Reply<Result<CommandExecResponse, JsonRpcError>>,
    ) {
        let (stop_tx, stop) = watch::channel(false);
        let pump = |rx, stream| {
            tokio::spawn(pump(Pump {
                connection: Arc::clone(&self.connection),
                process_id: self.launch.process_id.clone(),
                rx,
                stream,
                streamed: self.launch.stream_output,
                cap: self.launch.output_cap,
                stop: stop.clone(),
            }))
        };
        let stdout = pump(output.stdout, CommandExecOutputStream::Stdout);
        let stderr = output
            .stderr
            .map(|rx| pump(rx, CommandExecOutputStream::Stderr));
        let timeout = async {
            match self.launch.timeout {
                Some(timeout) => tokio::time::sleep(timeout).await,
                None => std::future::pending().await,
            }
        };
        tokio::pin!(timeout);
        let (mut timed_out, mut closed) = (false, false);
        let exit_code = loop {
            tokio::select! {
                Some(request) = controls.recv() => {
                    let outcome = self.apply(request.control);
                    let _ = request.done.send(outcome);
                }
                () = &mut timeout, if !timed_out => {
                    timed_out = true;
                    self.process.kill();
                }
                () = self.connection.closed.cancelled(), if !closed => {
                    closed = true;
                    self.process.kill();
                }
                code = self.process.wait() => {
                    break if timed_out { TIMEOUT_EXIT_CODE } else { code };
                }
            }
        };
        // From here on a follow-up finds the process gone at once (it must not wait for the
        // output to drain: the follow-ups run in the processing loop).
        controls.close();
        while let Ok(request) = controls.try_recv() {
            let _ = request.done.send(Err(no_longer_running(&self.key)));
        }
        // Output still in flight (a grandchild holding the pipe) gets a bounded time.
        let stopper = tokio::spawn(async move {
            tokio::time::sleep(OUTPUT_DRAIN).await;
            let _ = stop_tx.send(true);
        });
        let stdout = stdout.await.unwrap_or_default();
        let stderr = match stderr {
            Some(stderr) => stderr.await.unwrap_or_default(),
            None => Vec::new(),
        };
        stopper.abort();
        self.registry
            .table
            .lock()
            .remove(&(self.connection.id, self.key.clone()));
        reply
            .send(Ok(CommandExecResponse {
                exit_code,
                stdout: String::from_utf8_lossy(&stdout).into_owned(),
                stderr: String::from_utf8_lossy(&stderr).into_owned(),
            }))
            .await;
    }

    fn apply(&self, control: Control) -> Result<(), JsonRpcError> {
        match control {
            Control::Write { bytes, close_stdin } => {
                if !self.launch.stream_stdin {
                    return Err(JsonRpcError::invalid_request(
                        "stdin streaming is not enabled for this command/exec",
                    ));
                }
                if !bytes.is_empty() {
                    self.process.try_write(bytes).map_err(|error| match error {
                        StdinError::Full => JsonRpcError::invalid_request(error.to_string()),
                        StdinError::Closed | StdinError::NotPiped => {
                            JsonRpcError::invalid_request("stdin is already closed")
                        }
                    })?;
                }
                if close_stdin {
                    self.process.close_stdin();
                }
                Ok(())
            }
            Control::Resize(size) => self.process.resize(size).map_err(|err| {
                JsonRpcError::invalid_request(format!("failed to resize PTY: {err}"))
            }),
            Control::Terminate => {
                self.process.kill();
                Ok(())
            }
        }
    }
}

/// One output stream of one process.
struct Pump {
    connection: Arc<Connection>,
    process_id: Option<String>,
    rx: mpsc::Receiver<Vec<u8>>,
    stream: CommandExecOutputStream,
    streamed: bool,
    cap: Option<usize>,
    stop: watch::Receiver<bool>,
}

/// Streams (or captures) one stream until it ends, its cap is reached or `stop` is set: the
/// captured bytes (empty when streamed).
async fn pump(mut pump: Pump) -> Vec<u8> {
    let mut captured = Vec::new();
    let mut seen = 0usize;
    loop {
        let mut chunk = tokio::select! {
            chunk = pump.rx.recv() => match chunk {
                Some(chunk) => chunk,
                None => break,
            },
            _ = pump.stop.wait_for(|stop| *stop) => break,
        };
        while chunk.len() < DELTA_BYTES_HINT
            && let Ok(next) = pump.rx.try_recv()
        {
            chunk.extend_from_slice(&next);
        }
        let kept = match pump.cap {
            Some(cap) => {
                let n = cap.saturating_sub(seen).min(chunk.len());
                seen += n;
                &chunk[..n]
            }
            None => &chunk[..],
        };
        let cap_reached = pump.cap == Some(seen);
        match (&pump.process_id, pump.streamed) {
            (Some(process_id), true) => {
                let notification = ServerNotification::from(CommandExecOutputDeltaNotification {
                    process_id: process_id.clone(),
                    stream: pump.stream,
                    delta_base64: STANDARD.encode(kept),
                    cap_reached,
                });
                if pump.connection.wants_notification(notification.method()) {
                    pump.connection
                        .send(outgoing::notification(&notification))
                        .await;
                }
            }
            _ => captured.extend_from_slice(kept),
        }
        if cap_reached {
            break;
        }
    }
    captured
}

/// The reference's error for a follow-up that reached a process as it ended.
fn no_longer_running(key: &ProcessKey) -> JsonRpcError {
    JsonRpcError::invalid_request(format!(
        "command/exec {} is no longer running",
        key.error_repr()
    ))
}

/// A terminal size from the wire: both dimensions at least one.
pub fn terminal_size(
    size: weft_protocol::CommandExecTerminalSize,
) -> Result<TerminalSize, JsonRpcError> {
    if size.rows == 0 || size.cols == 0 {
        return Err(JsonRpcError::new(
            INVALID_PARAMS,
            "command/exec size rows and cols must be greater than 0",
        ));
    }
    Ok(TerminalSize {
        rows: size.rows,
        cols: size.cols,
    })
}
