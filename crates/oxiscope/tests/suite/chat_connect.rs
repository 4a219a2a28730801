//! A one-shot chat whose model server is down says so, and prints nothing on stdout.

use super::chat_env::ChatEnv;

#[test]
fn a_refused_connection_names_the_endpoint_and_stdout_stays_empty() {
    let env = ChatEnv::new();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let base = format!("http://127.0.0.1:{port}/v1");
    let out = env
        .bare(&[
            "chat",
            "--provider",
            "openai",
            "--api-key",
            "sk-test",
            "--base-url",
            &base,
            "--no-color",
            "-p",
            "hello",
        ])
        .output()
        .unwrap();

    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "", "{stderr}");
    let endpoint = format!("http://127.0.0.1:{port}");
    assert!(
        stderr.contains(&format!(
            "connection refused by {endpoint}: is the server running at {endpoint}?"
        )),
        "{stderr}"
    );
    // Each retry is announced on stderr before the final error.
    assert!(stderr.contains("retrying in"), "{stderr}");
    assert!(!stderr.contains("sk-test"), "{stderr}");
}
