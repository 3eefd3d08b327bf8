//! Issue 10 §7, performed as the attacks: a client that sends its headers a byte at a time
//! (slowloris) is cut off; connections beyond the cap wait instead of being served; a request
//! that takes too long is answered 503. No assertion is on a duration: each test waits for the
//! event it expects (with a generous deadline) or compares the order of two events.

mod common;

use axum::Router;
use axum::routing::get;
use common::*;
use orthomask_server::listener::{ConnectionLimits, serve};
use orthomask_server::run::{bind, start_msp};
use orthomask_server::{Limits, MspConfig};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

fn provider_config(dir: &std::path::Path, connections: ConnectionLimits) -> MspConfig {
    MspConfig {
        data_dir: dir.to_owned(),
        public_url: "http://127.0.0.1".into(),
        collector_url: "http://127.0.0.1:9".into(),
        right_urls: Vec::new(),
        peer_token: "peer-token-of-the-listener-test-0123456789".into(),
        limits: Limits {
            connections,
            ..loose_limits()
        },
        allowed_origins: Vec::new(),
    }
}

/// Read until the server closes the connection; what it sent before closing.
async fn until_closed(stream: &mut TcpStream) -> Vec<u8> {
    let mut seen = Vec::new();
    let mut buf = [0u8; 1024];
    let read_all = async {
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => seen.extend_from_slice(&buf[..n]),
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(60), read_all)
        .await
        .expect("the server never closed the connection");
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_never_finishes_its_headers_is_cut_off() {
    let dir = tempfile::tempdir().unwrap();
    let limits = ConnectionLimits {
        header_read_timeout: Duration::from_millis(500),
        ..ConnectionLimits::default()
    };
    let msp = start_msp(
        provider_config(dir.path(), limits),
        bind("127.0.0.1:0").await.unwrap(),
    )
    .await
    .unwrap();
    let mut slow = TcpStream::connect(msp.addr()).await.unwrap();
    slow.write_all(b"GET /api/health HTTP/1.1\r\nHost: provider\r\nX-Slow: a")
        .await
        .unwrap();
    let seen = until_closed(&mut slow).await;
    assert!(
        !String::from_utf8_lossy(&seen).contains("200 OK"),
        "an unfinished request was answered"
    );
    // Control: a client that sends whole headers is served.
    let (status, _) = send(
        &client(),
        reqwest::Method::GET,
        &format!("{}/api/health", msp.url()),
        None,
        None,
    )
    .await;
    assert_eq!(status, 200);
    msp.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_beyond_the_cap_wait_for_a_free_place() {
    let dir = tempfile::tempdir().unwrap();
    let limits = ConnectionLimits {
        max_connections: 2,
        header_read_timeout: Duration::from_secs(120),
        ..ConnectionLimits::default()
    };
    let msp = start_msp(
        provider_config(dir.path(), limits),
        bind("127.0.0.1:0").await.unwrap(),
    )
    .await
    .unwrap();
    // Two connections that say nothing take both places.
    let held = [
        TcpStream::connect(msp.addr()).await.unwrap(),
        TcpStream::connect(msp.addr()).await.unwrap(),
    ];
    let released = Arc::new(AtomicBool::new(false));
    let flag = released.clone();
    let url = format!("{}/api/health", msp.url());
    let third = tokio::spawn(async move {
        let (status, _) = send(&client(), reqwest::Method::GET, &url, None, None).await;
        // Served only once a place was free: never before the held connections closed.
        (status, flag.load(Ordering::SeqCst))
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    released.store(true, Ordering::SeqCst);
    drop(held);
    let (status, after_release) = third.await.unwrap();
    assert_eq!(status, 200);
    assert!(
        after_release,
        "a third connection was served while two held both places"
    );
    msp.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_that_takes_too_long_is_answered_503() {
    let app = Router::new().route(
        "/slow",
        get(|| async {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            "never"
        }),
    );
    let listener = bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/slow", listener.local_addr().unwrap());
    let (stop, stopping) = tokio::sync::watch::channel(false);
    let server = tokio::spawn(serve(
        listener,
        app,
        ConnectionLimits {
            request_timeout: Duration::from_millis(200),
            ..ConnectionLimits::default()
        },
        stopping,
    ));
    let (status, body) = send(&client(), reqwest::Method::GET, &url, None, None).await;
    assert_eq!(status, 503, "{body}");
    assert!(
        body["error"].as_str().unwrap().contains("took longer"),
        "{body}"
    );
    stop.send(true).unwrap();
    server.await.unwrap();
}
