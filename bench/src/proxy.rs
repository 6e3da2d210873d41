//! A raw TCP proxy in front of the mock model that timestamps model requests.
//!
//! The server under test is pointed at the proxy; the proxy forwards bytes both ways unchanged.
//! When a chunk from the server starts a `POST …/responses` request, the proxy notes the instant
//! it read those first bytes: that is when the model request reached the "model", before the
//! mock has even parsed the headers. (HTTP/1.1 requests on a kept-alive connection start at a
//! read boundary: a client sends the next request only after the previous response ended.)

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// Arrival instants of model requests, in order.
#[derive(Default)]
struct Arrivals {
    times: Mutex<Vec<Instant>>,
}

pub struct Proxy {
    addr: SocketAddr,
    arrivals: Arc<Arrivals>,
    changed: watch::Receiver<usize>,
    task: tokio::task::JoinHandle<()>,
}

impl Proxy {
    /// Listen on `127.0.0.1:0` and forward every connection to `upstream`.
    pub async fn start(upstream: SocketAddr) -> Result<Proxy> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let arrivals = Arc::new(Arrivals::default());
        let (tx, changed) = watch::channel(0);
        let tx = Arc::new(tx);
        let shared = arrivals.clone();
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                tokio::spawn(forward(client, upstream, shared.clone(), tx.clone()));
            }
        });
        Ok(Proxy {
            addr,
            arrivals,
            changed,
            task,
        })
    }

    /// `http://127.0.0.1:PORT/v1`, the provider `base_url` for the server under test.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The arrival instant of the first model request that arrived at or after `since`.
    pub async fn wait_request_after(&self, since: Instant, timeout: Duration) -> Result<Instant> {
        let find = || {
            self.arrivals
                .times
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .iter()
                .copied()
                .find(|&at| at >= since)
        };
        let mut changed = self.changed.clone();
        let wait = async {
            loop {
                if let Some(at) = find() {
                    return Ok(at);
                }
                if changed.changed().await.is_err() {
                    bail!("the proxy stopped");
                }
            }
        };
        match tokio::time::timeout(timeout, wait).await {
            Ok(found) => found,
            Err(_) => bail!("no model request reached the mock within {timeout:?}"),
        }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Whether a chunk read from the client starts a model request.
fn starts_model_request(chunk: &[u8]) -> bool {
    let first_line = chunk.split(|&b| b == b'\n').next().unwrap_or_default();
    first_line.starts_with(b"POST ")
        && first_line
            .windows(b"/responses".len())
            .any(|window| window == b"/responses")
}

async fn forward(
    client: TcpStream,
    upstream: SocketAddr,
    arrivals: Arc<Arrivals>,
    changed: Arc<watch::Sender<usize>>,
) {
    let Ok(server) = TcpStream::connect(upstream).await else {
        return;
    };
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let (mut client_read, mut client_write) = client.into_split();
    let (mut server_read, mut server_write) = server.into_split();
    let up = async move {
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let n = match client_read.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            if starts_model_request(&buf[..n]) {
                let at = Instant::now();
                let count = {
                    let mut times = arrivals
                        .times
                        .lock()
                        .unwrap_or_else(|poisoned| poisoned.into_inner());
                    times.push(at);
                    times.len()
                };
                changed.send_replace(count);
            }
            if server_write.write_all(&buf[..n]).await.is_err() {
                break;
            }
        }
        let _ = server_write.shutdown().await;
    };
    let down = async move {
        let _ = tokio::io::copy(&mut server_read, &mut client_write).await;
        let _ = client_write.shutdown().await;
    };
    tokio::join!(up, down);
}

#[cfg(test)]
mod tests {
    use super::starts_model_request;

    #[test]
    fn recognises_model_requests() {
        assert!(starts_model_request(
            b"POST /v1/responses HTTP/1.1\r\nhost: x\r\n"
        ));
        assert!(!starts_model_request(b"GET /v1/models HTTP/1.1\r\n"));
        assert!(!starts_model_request(
            b"{\"input\": \"POST /v1/responses\"}"
        ));
    }
}
