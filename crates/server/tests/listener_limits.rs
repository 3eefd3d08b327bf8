//! Issue 10 §7 and issue 24, performed as the attacks: a client that sends its headers a byte at
//! a time (slowloris) is cut off, and one client opening many such connections holds at most
//! half of the places; a connection beyond the cap is answered 503 with `Retry-After`
//! at once instead of waiting unseen in the kernel's backlog, and one beyond the busy answers
//! too is answered, not closed; idle keep-alive connections give
//! their places back; a request that takes too long is answered 503. No assertion is on a duration: each test waits for the
//! event it expects (with a generous deadline) or compares the order of two events.

mod common;

use axum::Router;
use axum::routing::get;
use common::*;
use orthomask_server::listener::{BUSY_RETRY_AFTER_S, ConnectionLimits, SharedPlaces, serve};
use orthomask_server::run::{bind, start_msp};
use orthomask_server::{Limits, MspConfig};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

fn provider_config(dir: &std::path::Path, connections: ConnectionLimits) -> MspConfig {
    MspConfig {
        data_dir: dir.to_owned(),
        public_url: "http://127.0.0.1".into(),
        collector_url: "http://127.0.0.1:9".into(),
        right_urls: Vec::new(),
        // The collector is never reached: any key of its own pins it.
        peer_keys: orthomask_server::peers::PeerKeys {
            collector: Some(
                orthomask_server::peers::Identity::from_secret(
                    orthomask_server::peers::Party::Collector,
                    [9; 32],
                )
                .public_key(),
            ),
            ..Default::default()
        },
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
    tokio::time::timeout(HANG_GUARD, read_all)
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
    let msp = provider_with(dir.path(), limits).await;
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

/// A whole request for the health endpoint, after which the server closes the connection.
const HEALTH_REQUEST: &[u8] = b"GET /api/health HTTP/1.1\r\nHost: msp\r\nConnection: close\r\n\r\n";

/// Send [`HEALTH_REQUEST`] on `stream` and read the answer to the end: it must be a 503 with
/// `Retry-After` (`what` names the connection in the failure). The answer, for further checks.
async fn busy_answer_to(mut stream: TcpStream, what: &str) -> String {
    stream.write_all(HEALTH_REQUEST).await.unwrap();
    let answer = String::from_utf8_lossy(&until_closed(&mut stream).await).into_owned();
    assert!(
        answer.starts_with("HTTP/1.1 503"),
        "{what} was not answered 503: {answer:?}"
    );
    assert!(
        answer
            .to_ascii_lowercase()
            .contains(&format!("retry-after: {BUSY_RETRY_AFTER_S}\r\n")),
        "{what}: {answer}"
    );
    answer
}

/// A provider that serves two connections at once, and waits long for headers (so that a
/// connection that says nothing keeps its place).
async fn provider_with_two_places(dir: &std::path::Path) -> orthomask_server::Running {
    let limits = ConnectionLimits {
        max_connections: 2,
        header_read_timeout: Duration::from_secs(120),
        ..ConnectionLimits::default()
    };
    provider_with(dir, limits).await
}

/// A provider on loopback with `limits`.
async fn provider_with(
    dir: &std::path::Path,
    limits: ConnectionLimits,
) -> orthomask_server::Running {
    start_msp(
        provider_config(dir, limits),
        bind("127.0.0.1:0").await.unwrap(),
    )
    .await
    .unwrap()
}

/// Ask for `url` until a request is served (200); the test fails naming `what` after the hang
/// guard.
async fn wait_until_served(url: &str, what: &str) {
    poll_until(what, HANG_GUARD, || async move {
        match client().get(url).send().await {
            Ok(answer) if answer.status() == 200 => Ok(()),
            Ok(answer) => Err(answer.status().to_string()),
            Err(e) => Err(e.to_string()),
        }
    })
    .await;
}

/// A keep-alive connection to `msp` whose first request has been answered (200): proof that the
/// server accepted it and gave it a place, which it keeps while it stays open and idle.
async fn answered_connection(msp: &orthomask_server::Running) -> TcpStream {
    let mut connection = TcpStream::connect(msp.addr()).await.unwrap();
    connection
        .write_all(b"GET /api/health HTTP/1.1\r\nHost: msp\r\n\r\n")
        .await
        .unwrap();
    let mut first = [0u8; 12];
    connection.read_exact(&mut first).await.unwrap();
    assert_eq!(&first, b"HTTP/1.1 200");
    connection
}

/// Two connections hold both places — each answered once, so the server has accepted both
/// before a third is tried; a third is answered at once — while the two still hold their
/// places, so it cannot have waited for one — with 503, `Retry-After` and the reason; once the
/// two close, a request is served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_over_the_cap_is_answered_503_with_retry_after() {
    let dir = tempfile::tempdir().unwrap();
    let msp = provider_with_two_places(dir.path()).await;
    // Both places are taken: the server answered a request on each connection, and neither
    // has closed (an answered connection gives its place back only when one is needed, after
    // the connection that needs it has been judged). A request on a third connection is then
    // over the cap — with the cap broken it would be served.
    let held = [
        answered_connection(&msp).await,
        answered_connection(&msp).await,
    ];
    let url = format!("{}/api/health", msp.url());
    let answer = client().get(&url).send().await.unwrap();
    assert_eq!(
        answer.status(),
        503,
        "a third connection was served while two held both places"
    );
    assert_eq!(
        answer.headers()["retry-after"],
        BUSY_RETRY_AFTER_S.to_string().as_str()
    );
    assert_eq!(answer.headers()["connection"], "close");
    let body: serde_json::Value = serde_json::from_str(&answer.text().await.unwrap()).unwrap();
    assert!(
        one_line_error(&body).contains("serving as many connections as it may (2)"),
        "{body}"
    );
    drop(held);
    wait_until_served(&url, "a request served once the places are free").await;
    msp.stop().await;
}

/// Issue 24: a burst at one service takes the places its process's other listeners do not use,
/// and never their own. Two providers with a place of their own each share a pool of two: the
/// first serves three connections at once (without the pool its second would be turned away),
/// the second still serves one of its own, and beyond that both answer 503 with the places of
/// the first and the pool in their reason. Each connection is answered once before the next is
/// opened, so every place counted is held when the next is judged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_at_one_service_takes_the_shared_places_but_not_the_others_own() {
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let pool = SharedPlaces::new(2);
    let limits = ConnectionLimits {
        max_connections: 1,
        shared: Some(pool.clone()),
        header_read_timeout: Duration::from_secs(120),
        ..ConnectionLimits::default()
    };
    let busy = provider_with(dirs[0].path(), limits.clone()).await;
    let quiet = provider_with(dirs[1].path(), limits).await;
    let mut held = Vec::new();
    for _ in 0..3 {
        held.push(answered_connection(&busy).await);
    }
    // The quiet service's own place is still its own…
    held.push(answered_connection(&quiet).await);
    // …but the pool is the busy one's now.
    let refused = busy_answer_to(
        TcpStream::connect(quiet.addr()).await.unwrap(),
        "the quiet service's second connection with the pool taken",
    )
    .await;
    assert!(
        refused.contains("serving as many connections as it may (3)"),
        "{refused}"
    );
    busy_answer_to(
        TcpStream::connect(busy.addr()).await.unwrap(),
        "the busy service's fourth connection",
    )
    .await;
    drop(held);
    let url = format!("{}/api/health", quiet.url());
    wait_until_served(&url, "a request served once the places are free").await;
    busy.stop().await;
    quiet.stop().await;
}

/// Beyond both caps — every place held, and every busy answer's too (a provider with two places
/// has two) — a connection is not closed unanswered: it waits for the first of them to free and
/// is then answered 503 with `Retry-After`. All four are held by clients that connect before the
/// fifth, so the listener (which takes connections in the order they came) has given them the
/// places and the busy answers' when it takes the fifth; it frees the busy answers' only when it
/// cuts their clients off (the busy answer's header deadline).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_beyond_every_place_waits_and_is_answered_503() {
    let dir = tempfile::tempdir().unwrap();
    let msp = provider_with_two_places(dir.path()).await;
    // The places: two connections that say nothing (never answered, so never shed; the
    // provider waits two minutes for headers).
    let _placed = [
        TcpStream::connect(msp.addr()).await.unwrap(),
        TcpStream::connect(msp.addr()).await.unwrap(),
    ];
    // The busy answers': two that begin a request and never finish its headers.
    let mut silent = Vec::new();
    for _ in 0..2 {
        let mut stream = TcpStream::connect(msp.addr()).await.unwrap();
        stream
            .write_all(b"GET /api/health HTTP/1.1\r\nHost: msp\r\nX-Slow: a")
            .await
            .unwrap();
        silent.push(stream);
    }
    let fifth = TcpStream::connect(msp.addr()).await.unwrap();
    busy_answer_to(fifth, "a connection beyond every place").await;
    // The two that never finished were cut off, not answered.
    for mut stream in silent {
        let seen = until_closed(&mut stream).await;
        assert!(
            !String::from_utf8_lossy(&seen).contains("200 OK"),
            "an unfinished request was served"
        );
    }
    msp.stop().await;
}

/// A connection from `local`, an address of this host other than 127.0.0.1 (which has no share:
/// `address_share`), so that the listener counts it as an outside client's.
async fn connect_from(local: &str, server: std::net::SocketAddr) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind(format!("{local}:0").parse().unwrap()).unwrap();
    socket.connect(server).await.unwrap()
}

/// The address of the attacking client in the tests of an address's share.
const ATTACKER: &str = "127.0.0.2";

/// A provider with four places (and four busy answers) that waits two minutes for headers, and
/// two silent connections from [`ATTACKER`]: its share of the places.
async fn attacker_holding_its_share(
    dir: &std::path::Path,
) -> (orthomask_server::Running, [TcpStream; 2]) {
    let limits = ConnectionLimits {
        max_connections: 4,
        header_read_timeout: Duration::from_secs(120),
        ..ConnectionLimits::default()
    };
    let msp = provider_with(dir, limits).await;
    let held = [
        connect_from(ATTACKER, msp.addr()).await,
        connect_from(ATTACKER, msp.addr()).await,
    ];
    (msp, held)
}

/// A slowloris at scale: one client opens connections and never finishes a request, as fast as
/// it likes. It gets half of the places (one address's share), and its next connection is
/// answered 503 with `Retry-After` while places are free; another address is served meanwhile,
/// from the half the first cannot take.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_address_holds_at_most_half_the_places() {
    let dir = tempfile::tempdir().unwrap();
    let (msp, _held) = attacker_holding_its_share(dir.path()).await;
    let third = connect_from(ATTACKER, msp.addr()).await;
    let answer = busy_answer_to(third, "an address's third connection of four places").await;
    assert!(
        answer.contains("as many of the service's connections as one address may (2)"),
        "{answer}"
    );
    // Another address is served, while the attacker still holds its two.
    for other in ["127.0.0.3", "127.0.0.4"] {
        let mut stream = connect_from(other, msp.addr()).await;
        stream.write_all(HEALTH_REQUEST).await.unwrap();
        let answer = String::from_utf8_lossy(&until_closed(&mut stream).await).into_owned();
        assert!(answer.starts_with("HTTP/1.1 200"), "{other}: {answer:?}");
    }
    msp.stop().await;
}

/// The same client goes on: it takes busy answers too, with requests it never finishes, and
/// opens more connections. It gets half of the busy answers; beyond them its connections are
/// closed at once, so the listener never waits on them, and another address is served while the
/// flood's busy answers are still open (they end only at the busy answer's header deadline).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_from_one_address_does_not_stall_the_listener() {
    let dir = tempfile::tempdir().unwrap();
    let (msp, _held) = attacker_holding_its_share(dir.path()).await;
    // Five more that begin a request and never finish it: two busy answers' worth (half of
    // four), then three the listener has no busy answer for.
    let mut flood = Vec::new();
    for _ in 0..5 {
        let mut stream = connect_from(ATTACKER, msp.addr()).await;
        stream
            .write_all(b"GET /api/health HTTP/1.1\r\nHost: msp\r\nX-Slow: a")
            .await
            .unwrap();
        flood.push(stream);
    }
    let mut other = connect_from("127.0.0.3", msp.addr()).await;
    other.write_all(HEALTH_REQUEST).await.unwrap();
    let answer = String::from_utf8_lossy(&until_closed(&mut other).await).into_owned();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer:?}");
    // Served while the flood's two busy answers are still waiting for their headers: the
    // listener did not wait for one of them to end.
    for held in &flood[..2] {
        let mut byte = [0u8; 1];
        assert!(
            matches!(held.try_read(&mut byte), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
            "a busy answer of the flood had ended before another address was served"
        );
    }
    for mut closed in flood.drain(2..) {
        assert!(
            until_closed(&mut closed).await.is_empty(),
            "a connection over its address's share, beyond half the busy answers, was answered"
        );
    }
    msp.stop().await;
}

/// A keep-alive connection that has been answered and sits idle gives its place back when a
/// connection finds none: the server closes it (it reads the end of the stream), and the next
/// request is served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_keep_alive_connections_give_their_places_back() {
    let dir = tempfile::tempdir().unwrap();
    let msp = provider_with_two_places(dir.path()).await;
    // One place: a keep-alive connection, answered once and now idle.
    let mut idle = answered_connection(&msp).await;
    // The other place: a connection that says nothing (not answered, so not shed).
    let _silent = TcpStream::connect(msp.addr()).await.unwrap();
    let url = format!("{}/api/health", msp.url());
    let over = client().get(&url).send().await.unwrap();
    assert_eq!(over.status(), 503, "no place was free when it came");
    // The idle connection is closed by the server (the rest of its first answer, then the end).
    let rest = until_closed(&mut idle).await;
    assert!(
        !rest.is_empty(),
        "the first answer's rest came before the end"
    );
    wait_until_served(&url, "the idle connection's place to serve a new request").await;
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
