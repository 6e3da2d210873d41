//! Raw HTTP and raw WebSocket helpers for the listener's edge cases (health endpoints,
//! refused methods, `Origin`, frames cut short), and an address that takes no connection
//! ([`BlackHole`], for connect timeouts).

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::DEFAULT_TIMEOUT;

/// A parsed HTTP response.
#[derive(Debug, Clone)]
pub struct HttpResponse {
    /// Status code.
    pub status: u16,
    /// Header names (lowercased) and values, in order.
    pub headers: Vec<(String, String)>,
    /// Body bytes (everything after the head until the server closed).
    pub body: Vec<u8>,
}

impl HttpResponse {
    /// The first header with this name (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as text.
    pub fn body_text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Send one HTTP/1.1 request with `Connection: close` over a fresh TCP connection and read
/// the whole response. Panics on timeout or a malformed response.
pub async fn http_request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
) -> HttpResponse {
    let mut request = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    let exchange = async {
        let mut stream = TcpStream::connect(addr).await?;
        stream.write_all(request.as_bytes()).await?;
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).await?;
        Ok::<_, std::io::Error>(raw)
    };
    let raw = match tokio::time::timeout(DEFAULT_TIMEOUT, exchange).await {
        Ok(Ok(raw)) => raw,
        Ok(Err(err)) => panic!("HTTP {method} {path} to {addr} failed: {err}"),
        Err(_) => panic!("HTTP {method} {path} to {addr} timed out"),
    };
    parse_response(&raw)
        .unwrap_or_else(|| panic!("malformed HTTP response: {}", String::from_utf8_lossy(&raw)))
}

fn parse_response(raw: &[u8]) -> Option<HttpResponse> {
    let head_end = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&raw[..head_end]).ok()?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next()?;
    let status = status_line.split_whitespace().nth(1)?.parse().ok()?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| {
            let (name, value) = line.split_once(':')?;
            Some((name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        })
        .collect();
    let mut body = raw[head_end + 4..].to_vec();
    if headers_say_chunked(&headers) {
        body = dechunk(&body).unwrap_or(body);
    }
    Some(HttpResponse {
        status,
        headers,
        body,
    })
}

fn headers_say_chunked(headers: &[(String, String)]) -> bool {
    headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.eq_ignore_ascii_case("chunked"))
}

fn dechunk(mut data: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let line_end = data.windows(2).position(|w| w == b"\r\n")?;
        let size_text = std::str::from_utf8(&data[..line_end]).ok()?;
        let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
        data = &data[line_end + 2..];
        if size == 0 {
            return Some(out);
        }
        out.extend_from_slice(data.get(..size)?);
        data = data.get(size + 2..)?;
    }
}

/// Open a TCP connection and perform a WebSocket upgrade by hand (path `/`), returning the
/// stream right after the `101` head, for tests that write raw frames.
pub async fn raw_websocket(addr: SocketAddr) -> TcpStream {
    let request = format!(
        "GET / HTTP/1.1\r\nHost: {addr}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    );
    let upgrade = async {
        let mut stream = TcpStream::connect(addr).await?;
        stream.write_all(request.as_bytes()).await?;
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            if stream.read(&mut byte).await? == 0 {
                break;
            }
            head.push(byte[0]);
        }
        Ok::<_, std::io::Error>((stream, head))
    };
    let (stream, head) = match tokio::time::timeout(DEFAULT_TIMEOUT, upgrade).await {
        Ok(Ok(done)) => done,
        Ok(Err(err)) => panic!("raw WebSocket upgrade to {addr} failed: {err}"),
        Err(_) => panic!("raw WebSocket upgrade to {addr} timed out"),
    };
    let head = String::from_utf8_lossy(&head);
    assert!(
        head.starts_with("HTTP/1.1 101"),
        "raw WebSocket upgrade refused: {head}"
    );
    stream
}

/// Encode one client → server WebSocket frame (masked, as RFC 6455 requires of clients).
/// `opcode` 1 = text, 2 = binary, 0 = continuation; `fin` marks the last frame of a message.
pub fn client_frame(opcode: u8, fin: bool, payload: &[u8]) -> Vec<u8> {
    let mask = [0x37u8, 0xfa, 0x21, 0x3d];
    let mut frame = vec![if fin { 0x80 } else { 0 } | (opcode & 0x0f)];
    let len = payload.len();
    if len < 126 {
        frame.push(0x80 | len as u8);
    } else if len <= usize::from(u16::MAX) {
        frame.push(0x80 | 126);
        frame.extend_from_slice(&(len as u16).to_be_bytes());
    } else {
        frame.push(0x80 | 127);
        frame.extend_from_slice(&(len as u64).to_be_bytes());
    }
    frame.extend_from_slice(&mask);
    frame.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    frame
}

/// A loopback listener whose accept queue is full and never drained: the kernel drops the
/// SYNs of further connections, so connecting to [`BlackHole::addr`] neither succeeds nor is
/// refused (it hangs until the client gives up). The address stays so while this lives.
pub struct BlackHole {
    /// Where to connect.
    pub addr: SocketAddr,
    _listener: tokio::net::TcpListener,
    _fillers: Vec<std::net::TcpStream>,
}

impl BlackHole {
    /// Listen with a backlog of 0 and connect until a connection no longer completes.
    pub async fn start() -> BlackHole {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let listener = socket.listen(0).unwrap();
        let addr = listener.local_addr().unwrap();
        let mut fillers = Vec::new();
        for _ in 0..8 {
            match std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(300)) {
                Ok(stream) => fillers.push(stream),
                Err(_) => {
                    return BlackHole {
                        addr,
                        _listener: listener,
                        _fillers: fillers,
                    };
                }
            }
        }
        panic!("the accept queue of {addr} never filled");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_plain_and_chunked_responses() {
        let plain = parse_response(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n").unwrap();
        assert_eq!(plain.status, 200);
        assert_eq!(plain.header("Content-Length"), Some("0"));
        assert!(plain.body.is_empty());
        let chunked = parse_response(
            b"HTTP/1.1 405 Method Not Allowed\r\ntransfer-encoding: chunked\r\nallow: GET,HEAD\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
        )
        .unwrap();
        assert_eq!(chunked.status, 405);
        assert_eq!(chunked.body_text(), "abc");
        assert_eq!(chunked.header("allow"), Some("GET,HEAD"));
    }

    #[test]
    fn encodes_masked_frames() {
        let frame = client_frame(1, true, b"hi");
        assert_eq!(frame[0], 0x81);
        assert_eq!(frame[1], 0x82);
        assert_eq!(frame[6] ^ frame[2], b'h');
        let long = client_frame(2, false, &[0u8; 300]);
        assert_eq!(long[0], 0x02);
        assert_eq!(long[1], 0x80 | 126);
        assert_eq!(u16::from_be_bytes([long[2], long[3]]), 300);
    }
}
