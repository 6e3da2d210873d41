//! [`build_http_client`] over TLS: a server whose certificate is signed by a private CA is
//! trusted only with that CA in `[http] ca_certificate` or `SSL_CERT_FILE`, and HTTP/2 is
//! offered by ALPN.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::rustls::crypto::aws_lc_rs;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};

use super::tests::TEST_CA;
use super::*;

/// The server certificate (IP SAN 127.0.0.1, signed by [`TEST_CA`]) and its key, made for
/// these tests only.
const SERVER_CERT: &str = include_str!("../testdata/http/localhost.pem");
const SERVER_KEY: &str = include_str!("../testdata/http/localhost.key");

const TIMEOUT: Duration = Duration::from_secs(20);

/// A TLS server on 127.0.0.1 offering `alpn`. For each handshake that succeeds it reports
/// the negotiated protocol; over `http/1.1` it answers one request with `200 ok`.
async fn tls_server(alpn: &[&[u8]]) -> (SocketAddr, mpsc::UnboundedReceiver<Option<Vec<u8>>>) {
    let certs = vec![CertificateDer::from_pem_slice(SERVER_CERT.as_bytes()).unwrap()];
    let key = PrivateKeyDer::from_pem_slice(SERVER_KEY.as_bytes()).unwrap();
    let mut config = ServerConfig::builder_with_provider(Arc::new(aws_lc_rs::default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .unwrap();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    let acceptor = TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (sender, receiver) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            let sender = sender.clone();
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let protocol = tls.get_ref().1.alpn_protocol().map(<[u8]>::to_vec);
                let http1 = protocol.as_deref() == Some(b"http/1.1");
                let _ = sender.send(protocol);
                if !http1 {
                    return;
                }
                let mut request = Vec::new();
                let mut buf = [0u8; 1024];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match tls.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => request.extend_from_slice(&buf[..n]),
                    }
                }
                let answer = "HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok";
                let _ = tls.write_all(answer.as_bytes()).await;
                let _ = tls.shutdown().await;
            });
        }
    });
    (addr, receiver)
}

async fn get(client: &reqwest::Client, addr: SocketAddr) -> Result<String, reqwest::Error> {
    let send = async {
        client
            .get(format!("https://{addr}/"))
            .send()
            .await?
            .text()
            .await
    };
    tokio::time::timeout(TIMEOUT, send)
        .await
        .expect("the request must end")
}

#[tokio::test]
async fn private_ca_is_trusted_only_when_configured() {
    let (addr, mut handshakes) = tls_server(&[b"http/1.1"]).await;

    let plain = build_with_env(&HttpConfig::default(), HttpUse::Model, |_| None).unwrap();
    let err = get(&plain, addr).await.unwrap_err();
    let chain = crate::model::error_chain(&err);
    assert!(chain.to_lowercase().contains("certificate"), "{chain}");

    let dir = tempfile::tempdir().unwrap();
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, TEST_CA).unwrap();
    let config = HttpConfig {
        ca_certificate: Some(ca.clone()),
        ..HttpConfig::default()
    };
    for purpose in [HttpUse::Model, HttpUse::Mcp] {
        let client = build_with_env(&config, purpose, |_| None).unwrap();
        assert_eq!(get(&client, addr).await.unwrap(), "ok");
    }
    let from_env = build_with_env(&HttpConfig::default(), HttpUse::Model, |name| {
        (name == SSL_CERT_FILE).then(|| ca.clone().into())
    })
    .unwrap();
    assert_eq!(get(&from_env, addr).await.unwrap(), "ok");
    let mut protocols = Vec::new();
    while let Ok(protocol) = handshakes.try_recv() {
        protocols.push(protocol);
    }
    assert_eq!(protocols, vec![Some(b"http/1.1".to_vec()); 3]);
}

#[tokio::test]
async fn http2_is_offered_over_tls() {
    let (addr, mut handshakes) = tls_server(&[b"h2", b"http/1.1"]).await;
    let dir = tempfile::tempdir().unwrap();
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, TEST_CA).unwrap();
    let config = HttpConfig {
        ca_certificate: Some(ca),
        ..HttpConfig::default()
    };
    let client = build_with_env(&config, HttpUse::Model, |_| None).unwrap();
    // The server stops after the handshake; only the negotiated protocol matters here.
    let _ = get(&client, addr).await;
    let protocol = tokio::time::timeout(TIMEOUT, handshakes.recv())
        .await
        .expect("a handshake")
        .expect("the server is running");
    assert_eq!(protocol.as_deref(), Some(&b"h2"[..]));
}
