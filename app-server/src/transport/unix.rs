//! The `unix://` control socket (docs/protocol.md §2.6): a Unix domain socket whose file is
//! mode 0600 in a private (0700) directory, by default
//! `$WEFT_HOME/app-server-control/app-server-control.sock`. Each connection makes the same
//! WebSocket upgrade as on `ws://` (0.171.0 answers `GET /` with `101 Switching Protocols`
//! on its control socket) and is then served by the WebSocket connection loop
//! ([`crate::transport::ws::session`]): one JSON-RPC message per text frame, pings answered.
//! The file's permissions are the authentication: the `--ws-auth` flags do not apply, as in
//! the reference. Start-up refuses a path another server listens on, or one that exists and
//! is not a socket; a stale socket file is removed, and the file is removed at shutdown.

use std::io::{self, ErrorKind};
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::connect_info::Connected;
use axum::serve::{IncomingStream, Listener};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::transport::ingress::Ingress;
use crate::transport::ws::listener::{GuardedStream, Handshake};
use crate::transport::ws::{self, Reach, WsAuth, WsLimits};

/// The socket file's mode: its owner only.
const SOCKET_MODE: u32 = 0o600;
/// The socket directory's mode.
const DIR_MODE: u32 = 0o700;

/// The default socket path under the home, as the reference's under `$CODEX_HOME`.
pub fn default_socket_path(home: &Path) -> PathBuf {
    home.join("app-server-control")
        .join("app-server-control.sock")
}

/// A bound control socket: it removes its file when dropped.
pub struct ControlSocket {
    listener: UnixListener,
    guard: SocketFile,
}

/// Removes the socket file when dropped (at shutdown).
struct SocketFile(PathBuf);

impl Drop for SocketFile {
    fn drop(&mut self) {
        if let Err(err) = std::fs::remove_file(&self.0)
            && err.kind() != ErrorKind::NotFound
        {
            tracing::warn!(path = %self.0.display(), %err, "cannot remove the control socket file");
        }
    }
}

impl ControlSocket {
    /// Prepare the directory and the path, bind, and make the file private.
    pub async fn bind(path: &Path) -> io::Result<ControlSocket> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            prepare_private_directory(parent)?;
        }
        prepare_path(path).await?;
        let listener = UnixListener::bind(path)?;
        let guard = SocketFile(path.to_path_buf());
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(SOCKET_MODE))?;
        tracing::info!("listening on unix://{}", path.display());
        Ok(ControlSocket { listener, guard })
    }

    /// The socket's path.
    pub fn path(&self) -> &Path {
        &self.guard.0
    }
}

/// Create the socket's directory with mode 0700, or tighten an existing one of ours that is
/// open to others. A shared directory (sticky, like `/tmp`) or another user's is left as it
/// is: the socket file's own mode still keeps others out.
fn prepare_private_directory(dir: &Path) -> io::Result<()> {
    match std::fs::DirBuilder::new().mode(DIR_MODE).create(dir) {
        Ok(()) => return Ok(()),
        Err(err) if err.kind() == ErrorKind::AlreadyExists => {}
        Err(err) => return Err(err),
    }
    let metadata = std::fs::symlink_metadata(dir)?;
    if !metadata.is_dir() {
        return Err(io::Error::new(
            ErrorKind::AlreadyExists,
            format!(
                "socket directory path exists and is not a directory: {}",
                dir.display()
            ),
        ));
    }
    let mode = metadata.permissions().mode();
    let ours = metadata.uid() == rustix::process::geteuid().as_raw();
    if mode & 0o077 != 0 && mode & 0o1000 == 0 && ours {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(DIR_MODE))?;
    }
    Ok(())
}

/// Refuse a path a server listens on or that is not a socket; remove a stale socket.
async fn prepare_path(path: &Path) -> io::Result<()> {
    match UnixStream::connect(path).await {
        Ok(_stream) => {
            return Err(io::Error::new(
                ErrorKind::AddrInUse,
                format!(
                    "app-server control socket is already in use at {}",
                    path.display()
                ),
            ));
        }
        Err(err) if err.kind() == ErrorKind::NotFound => return Ok(()),
        Err(err) if err.kind() == ErrorKind::ConnectionRefused => {}
        Err(err) => {
            if std::fs::symlink_metadata(path).is_err() {
                return Ok(());
            }
            if !is_socket(path)? {
                return Err(not_a_socket(path));
            }
            return Err(err);
        }
    }
    match std::fs::symlink_metadata(path) {
        Err(err) if err.kind() == ErrorKind::NotFound => return Ok(()),
        Err(err) => return Err(err),
        Ok(_) => {}
    }
    if !is_socket(path)? {
        return Err(not_a_socket(path));
    }
    tracing::info!(path = %path.display(), "removing a stale control socket file");
    tokio::fs::remove_file(path).await
}

fn is_socket(path: &Path) -> io::Result<bool> {
    Ok(std::fs::symlink_metadata(path)?.file_type().is_socket())
}

fn not_a_socket(path: &Path) -> io::Error {
    io::Error::new(
        ErrorKind::AlreadyExists,
        format!(
            "app-server control socket path exists and is not a socket: {}",
            path.display()
        ),
    )
}

/// Serve the control socket until `shutdown` is cancelled, then remove its file.
pub async fn serve(
    socket: ControlSocket,
    limits: WsLimits,
    ingress: Ingress,
    shutdown: CancellationToken,
) -> io::Result<()> {
    let ControlSocket { listener, guard } = socket;
    let listener = LimitedUnixListener {
        inner: listener,
        permits: Arc::new(Semaphore::new(limits.max_connections)),
        max: limits.max_connections,
        handshake_timeout: limits.handshake_timeout,
        refusing: false,
    };
    // The file's mode is the authentication; no browser page can reach a Unix socket.
    let reach = Reach::UnixSocket;
    let served = ws::serve_on(listener, WsAuth::None, limits, reach, ingress, shutdown).await;
    drop(guard);
    served
}

/// A [`UnixListener`] that hands out at most `max` connections at once, each with an upgrade
/// deadline, like the TCP one; a connection over the limit is closed at once.
struct LimitedUnixListener {
    inner: UnixListener,
    permits: Arc<Semaphore>,
    max: usize,
    handshake_timeout: Duration,
    refusing: bool,
}

impl Listener for LimitedUnixListener {
    type Io = GuardedStream<UnixStream>;
    type Addr = tokio::net::unix::SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let (stream, peer) = match self.inner.accept().await {
                Ok(accepted) => accepted,
                Err(err) => {
                    if !matches!(
                        err.kind(),
                        ErrorKind::ConnectionAborted | ErrorKind::ConnectionReset
                    ) {
                        tracing::error!(%err, "control socket accept failed; retrying in 1 s");
                        tokio::time::sleep(Duration::from_secs(1)).await;
                    }
                    continue;
                }
            };
            let Ok(permit) = self.permits.clone().try_acquire_owned() else {
                if !self.refusing {
                    tracing::warn!(
                        max = self.max,
                        "connection limit reached; refusing new connections"
                    );
                    self.refusing = true;
                }
                drop(stream);
                continue;
            };
            self.refusing = false;
            return (
                GuardedStream::new(stream, permit, self.handshake_timeout),
                peer,
            );
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.inner.local_addr()
    }
}

impl Connected<IncomingStream<'_, LimitedUnixListener>> for Handshake {
    fn connect_info(stream: IncomingStream<'_, LimitedUnixListener>) -> Self {
        stream.io().handshake()
    }
}

#[cfg(test)]
#[path = "unix/tests.rs"]
mod tests;
