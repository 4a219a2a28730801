//! Transport failures say what failed, where, and what to check; retries are logged.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use oxiscope_http::{ConnectFailure, Error, HttpClient, RetryPolicy};
use pretty_assertions::assert_eq;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpListener;

use super::{bounded, quick_client};

/// A loopback port with nothing listening on it.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

#[tokio::test]
async fn refused_names_the_endpoint_and_asks_whether_the_server_runs() {
    let port = closed_port();
    let http = quick_client(1);

    let err = bounded(http.send(http.get(format!(
        "http://user:secret@127.0.0.1:{port}/v1/chat?key=sk-123"
    ))))
    .await
    .unwrap_err();

    let Error::Connect { kind, endpoint, .. } = &err else {
        panic!("{err:?}");
    };
    assert_eq!(
        (*kind, endpoint.as_str()),
        (
            ConnectFailure::Refused,
            format!("http://127.0.0.1:{port}").as_str()
        )
    );
    assert_eq!(
        err.to_string(),
        format!(
            "connection refused by http://127.0.0.1:{port}: is the server running at \
             http://127.0.0.1:{port}?"
        )
    );
    assert!(err.is_retryable());
}

#[tokio::test]
async fn a_server_that_accepts_and_never_answers_times_out_naming_the_endpoint() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            open.push(socket);
        }
    });
    let http = HttpClient::builder()
        .with_retry(RetryPolicy::none())
        .with_response_timeout(Duration::from_millis(200))
        .build()
        .unwrap();

    let err = bounded(http.send(http.get(format!("http://127.0.0.1:{port}/slow?token=x"))))
        .await
        .unwrap_err();
    held.abort();

    assert!(
        matches!(&err, Error::Timeout { after, endpoint }
            if *after == Duration::from_millis(200) && *endpoint == format!("http://127.0.0.1:{port}")),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(
        message.starts_with(&format!(
            "no response from http://127.0.0.1:{port} within 200ms"
        )),
        "{message}"
    );
    assert!(!message.contains("token"), "{message}");
}

#[tokio::test]
async fn garbage_to_a_tls_client_is_a_tls_failure() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let mut hello = [0u8; 512];
            let _ = socket.read(&mut hello).await;
            let _ = socket.write_all(b"this is not TLS at all\r\n\r\n").await;
            let _ = socket.shutdown().await;
        }
    });
    let http = quick_client(1);

    let err = bounded(http.send(http.get(format!("https://127.0.0.1:{port}/"))))
        .await
        .unwrap_err();
    server.abort();

    assert!(
        matches!(&err, Error::Connect { kind: ConnectFailure::Tls, endpoint, .. }
            if *endpoint == format!("https://127.0.0.1:{port}")),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(
        message.starts_with(&format!(
            "TLS handshake with https://127.0.0.1:{port} failed"
        )),
        "{message}"
    );
}

#[tokio::test]
async fn an_unresolvable_host_is_a_dns_failure() {
    let http = quick_client(1);

    let err = bounded(http.send(http.get("https://no-such-host.invalid/v1?api_key=x")))
        .await
        .unwrap_err();

    assert!(
        matches!(&err, Error::Connect { kind: ConnectFailure::Dns, endpoint, .. }
            if endpoint == "https://no-such-host.invalid:443"),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(
        message.starts_with("cannot resolve the host of https://no-such-host.invalid:443"),
        "{message}"
    );
    assert!(!message.contains("api_key"), "{message}");
}

/// Collects what the subscriber writes.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn each_retry_is_logged_as_a_warning_with_attempt_delay_and_endpoint() {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::WARN)
        .with_ansi(false)
        .without_time()
        .with_writer(move || writer.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    let port = closed_port();
    let http = quick_client(3);

    let err = bounded(http.send(http.get(format!("http://127.0.0.1:{port}/x?secret=1"))))
        .await
        .unwrap_err();

    assert!(matches!(err, Error::Connect { .. }), "{err:?}");
    let log = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines.len(), 2, "{log}");
    for (n, line) in lines.iter().enumerate() {
        let attempt = n + 1;
        assert!(line.contains("WARN"), "{line}");
        assert!(
            line.contains(&format!(
                "(attempt {attempt} of 3 failed): connection refused"
            )),
            "{line}"
        );
        assert!(
            line.contains(&format!("endpoint=http://127.0.0.1:{port}")),
            "{line}"
        );
        assert!(line.contains(&format!("attempt={attempt}")), "{line}");
        assert!(line.contains("delay_ms="), "{line}");
        assert!(!line.contains("secret"), "{line}");
    }
}
