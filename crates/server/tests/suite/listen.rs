//! The listener's limits: connections per client address and in all,
//! request-head and idle timeouts, request time bounds, and a graceful
//! stop that idle connections do not hold up.

use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use axum::routing::{get, post};
use oxiscope_server::{ListenLimits, listen};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// A listener over a small app: `/ok`, `/slow` (2 s), and an upload path
/// that answers after 1.5 s.
struct Server {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<std::io::Result<()>>,
}

async fn start(limits: ListenLimits) -> Server {
    let router = Router::new()
        .route("/ok", get(|| async { "ok" }))
        .route(
            "/slow",
            get(|| async {
                tokio::time::sleep(Duration::from_secs(2)).await;
                "slow"
            }),
        )
        .route(
            "/knowledge_bases/{id}/documents",
            post(|| async {
                tokio::time::sleep(Duration::from_millis(1500)).await;
                "stored"
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(listen(listener, router, limits, async move {
        let _ = stopped.await;
    }));
    Server {
        addr,
        stop: Some(stop),
        task,
    }
}

/// A connection to `addr` from the loopback address `from`.
async fn connect_from(from: &str, addr: SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind(format!("{from}:0").parse().unwrap()).unwrap();
    socket.connect(addr).await.unwrap()
}

/// Sends a request on `stream` and reads its answer: status and body.
async fn request(stream: &mut TcpStream, method: &str, path: &str) -> (u16, String) {
    let head = format!("{method} {path} HTTP/1.1\r\nHost: test\r\nContent-Length: 0\r\n\r\n");
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut got = Vec::new();
    let mut buf = [0_u8; 4096];
    loop {
        let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buf))
            .await
            .expect("an answer in time")
            .unwrap();
        assert!(
            n > 0,
            "closed before the answer: {:?}",
            String::from_utf8_lossy(&got)
        );
        got.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&got).into_owned();
        let Some((head, body)) = text.split_once("\r\n\r\n") else {
            continue;
        };
        let length: usize = head
            .lines()
            .find_map(|l| {
                l.to_ascii_lowercase()
                    .strip_prefix("content-length: ")
                    .map(str::to_owned)
            })
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        if body.len() >= length {
            let status = head[9..12].parse().unwrap();
            return (status, body.to_owned());
        }
    }
}

/// Whether the server closes `stream` within `within` (reads give EOF or
/// a reset).
async fn closed_within(stream: &mut TcpStream, within: Duration) -> bool {
    let mut buf = [0_u8; 256];
    match tokio::time::timeout(within, stream.read(&mut buf)).await {
        Ok(Ok(0) | Err(_)) => true,
        Ok(Ok(_)) | Err(_) => false,
    }
}

#[tokio::test]
async fn idle_connections_from_one_address_do_not_keep_another_client_out() {
    let server = start(ListenLimits {
        max_connections: 60,
        max_connections_per_ip: 20,
        header_timeout: Duration::from_secs(30),
        ..ListenLimits::default()
    })
    .await;
    // One client opens far more connections than the server takes in all,
    // and sends nothing on them.
    let mut idle = Vec::new();
    for _ in 0..100 {
        idle.push(connect_from("127.0.0.1", server.addr).await);
    }
    // Its first 20 are held; the rest are closed at once.
    let mut refused = 0;
    for stream in &mut idle[20..] {
        if closed_within(stream, Duration::from_secs(2)).await {
            refused += 1;
        }
    }
    assert_eq!(refused, 80);
    assert!(!closed_within(&mut idle[0], Duration::from_millis(200)).await);
    // Another client is served at once.
    let mut other = connect_from("127.0.0.2", server.addr).await;
    let answered =
        tokio::time::timeout(Duration::from_secs(2), request(&mut other, "GET", "/ok")).await;
    assert_eq!(answered.unwrap(), (200, "ok".to_owned()));
    // A place given back is taken again.
    idle.truncate(19);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut again = connect_from("127.0.0.1", server.addr).await;
    assert_eq!(request(&mut again, "GET", "/ok").await.0, 200);
    drop(server.stop);
}

#[tokio::test]
async fn a_connection_without_a_complete_head_is_closed_after_the_header_timeout() {
    let server = start(ListenLimits {
        header_timeout: Duration::from_secs(1),
        idle_timeout: Duration::from_secs(3),
        ..ListenLimits::default()
    })
    .await;
    // Silent, and a head that never ends.
    let mut silent = connect_from("127.0.0.1", server.addr).await;
    let mut partial = connect_from("127.0.0.1", server.addr).await;
    partial
        .write_all(b"GET /ok HTTP/1.1\r\nHost: test\r\nX-Slow: ")
        .await
        .unwrap();
    let started = std::time::Instant::now();
    assert!(closed_within(&mut partial, Duration::from_secs(4)).await);
    assert!(closed_within(&mut silent, Duration::from_secs(4)).await);
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "{:?}",
        started.elapsed()
    );

    // A kept-alive connection may wait longer than the head timeout for its
    // next request, up to the idle timeout.
    let mut kept = connect_from("127.0.0.1", server.addr).await;
    assert_eq!(request(&mut kept, "GET", "/ok").await.0, 200);
    tokio::time::sleep(Duration::from_millis(1800)).await;
    assert_eq!(request(&mut kept, "GET", "/ok").await.0, 200);
    let idle_from = std::time::Instant::now();
    assert!(closed_within(&mut kept, Duration::from_secs(6)).await);
    assert!(
        idle_from.elapsed() >= Duration::from_millis(2900),
        "{:?}",
        idle_from.elapsed()
    );
    drop(server.stop);
}

#[tokio::test]
async fn a_slow_request_is_answered_503_but_an_upload_has_its_own_bound() {
    let server = start(ListenLimits {
        request_timeout: Duration::from_secs(1),
        upload_timeout: Duration::from_secs(10),
        ..ListenLimits::default()
    })
    .await;
    let mut stream = connect_from("127.0.0.1", server.addr).await;
    let (status, body) = request(&mut stream, "GET", "/slow").await;
    assert_eq!(status, 503);
    assert!(body.contains("--request-timeout-secs"), "{body}");
    // The connection goes on.
    let (status, body) = request(&mut stream, "POST", "/knowledge_bases/kb1/documents").await;
    assert_eq!((status, body.as_str()), (200, "stored"));
    drop(server.stop);
}

#[tokio::test]
async fn a_stop_lets_the_request_in_flight_finish_and_idle_connections_go() {
    let mut server = start(ListenLimits::default()).await;
    let mut idle = connect_from("127.0.0.1", server.addr).await;
    assert_eq!(request(&mut idle, "GET", "/ok").await.0, 200);
    let mut busy = connect_from("127.0.0.1", server.addr).await;
    let addr = server.addr;
    let slow = tokio::spawn(async move { request(&mut busy, "GET", "/slow").await });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let _ = server.stop.take().unwrap().send(());
    assert!(closed_within(&mut idle, Duration::from_secs(1)).await);
    assert_eq!(slow.await.unwrap(), (200, "slow".to_owned()));
    tokio::time::timeout(Duration::from_secs(3), server.task)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    // No longer accepting.
    assert!(TcpStream::connect(addr).await.is_err());
}
