//! `weft app-server proxy`: "Proxy stdio bytes to the running app-server control socket", as
//! `codex app-server proxy` does (docs/protocol.md §2.6). It is a transparent byte relay:
//! stdin goes to the socket and the socket to stdout, unchanged. The client behind it speaks
//! what the socket speaks, the WebSocket upgrade and then frames; the proxy does not frame
//! JSON lines. At stdin's end the socket's write half is shut down, and the proxy exits when
//! the server closes its side.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use tokio::io::AsyncWriteExt;
use tokio::net::UnixStream;

use crate::cli::ProxyArgs;
use crate::transport::unix::default_socket_path;

/// Why the proxy failed.
#[derive(Debug, thiserror::Error)]
pub enum ProxyError {
    /// The socket cannot be reached (nothing listens, no such file…).
    #[error("failed to connect to socket at {}: {source}", .path.display())]
    Connect {
        /// The socket path.
        path: PathBuf,
        /// Why the connect failed.
        source: std::io::Error,
    },
    /// A read or write failed while relaying.
    #[error("relay failed: {0}")]
    Relay(#[source] std::io::Error),
    /// The async runtime cannot start.
    #[error("cannot start the runtime: {0}")]
    Runtime(#[source] std::io::Error),
}

/// Run the proxy; its exit code (1 on an error, printed to stderr).
pub fn main(args: ProxyArgs) -> ExitCode {
    let path = args
        .sock
        .unwrap_or_else(|| default_socket_path(&weft_core::config::Config::default_home()));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(ProxyError::Runtime);
    let result = runtime.and_then(|runtime| {
        let result = runtime.block_on(relay(&path, tokio::io::stdin(), tokio::io::stdout()));
        // A read of stdin may still be pending on its blocking thread when the server has
        // closed; it must not hold the exit.
        runtime.shutdown_background();
        result
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("weft: error: {err}");
            ExitCode::FAILURE
        }
    }
}

/// Relay `input` to the socket at `path` and the socket to `output` until the socket closes.
pub async fn relay<I, O>(path: &Path, mut input: I, mut output: O) -> Result<(), ProxyError>
where
    I: tokio::io::AsyncRead + Unpin,
    O: tokio::io::AsyncWrite + Unpin,
{
    let stream = UnixStream::connect(path)
        .await
        .map_err(|source| ProxyError::Connect {
            path: path.to_path_buf(),
            source,
        })?;
    let (mut from_socket, mut to_socket) = stream.into_split();
    let upstream = async {
        tokio::io::copy(&mut input, &mut to_socket).await?;
        // End of input: the server sees the end of the stream and may close.
        to_socket.shutdown().await
    };
    let downstream = async {
        tokio::io::copy(&mut from_socket, &mut output).await?;
        output.flush().await
    };
    tokio::pin!(upstream, downstream);
    let mut upstream_done = false;
    loop {
        tokio::select! {
            up = &mut upstream, if !upstream_done => {
                up.map_err(ProxyError::Relay)?;
                upstream_done = true;
            }
            down = &mut downstream => return down.map_err(ProxyError::Relay),
        }
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    #[tokio::test]
    async fn bytes_pass_both_ways_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sock");
        let listener = tokio::net::UnixListener::bind(&path).unwrap();
        let server = tokio::spawn(async move {
            let (mut stream, _) = listener.accept().await.unwrap();
            let mut got = Vec::new();
            stream.read_to_end(&mut got).await.unwrap();
            stream.write_all(b"echo:").await.unwrap();
            stream.write_all(&got).await.unwrap();
            got
        });
        let mut output = Vec::new();
        relay(&path, &b"GET / HTTP/1.1\r\n\r\n\x81\x00"[..], &mut output)
            .await
            .unwrap();
        assert_eq!(server.await.unwrap(), b"GET / HTTP/1.1\r\n\r\n\x81\x00");
        assert_eq!(output, b"echo:GET / HTTP/1.1\r\n\r\n\x81\x00");
    }

    #[tokio::test]
    async fn no_socket_is_a_connect_error_naming_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing.sock");
        let err = relay(&path, &b""[..], Vec::new()).await.unwrap_err();
        assert!(
            err.to_string().starts_with(&format!(
                "failed to connect to socket at {}",
                path.display()
            )),
            "{err}"
        );
    }
}
