//! A hostile tenant against the workspace, library and hub routes: what
//! the other suites do not already cover (error bodies that would show the
//! server's paths, limits on what one request or one session may make the
//! server do, one tenant's stalled uploads against another's).

use std::time::Duration;

use oxiscope_server::{AuthMode, WorkspaceMode};
use serde_json::json;
use tokio::io::AsyncWriteExt as _;

use super::common::{Harness, Setup};

fn q(s: &Setup) -> String {
    format!("agent_id={}&session_id={}", s.agent_id, s.session_id)
}

const BOUNDARY: &str = "attackBoundary5d1c0e";

fn part_header(name: &str, file: Option<&str>) -> String {
    match file {
        Some(file) => format!(
            "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{name}\"; \
             filename=\"{file}\"\r\nContent-Type: application/octet-stream\r\n\r\n"
        ),
        None => format!("--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n"),
    }
}

fn manifest(entries: &[(&str, usize)]) -> String {
    json!({"entries": entries.iter().map(|(p, n)| json!({"path": p, "size": n})).collect::<Vec<_>>()})
        .to_string()
}

/// A whole multipart upload: the manifest of `files`, then each file.
fn upload_body(files: &[(&str, Vec<u8>)]) -> Vec<u8> {
    let entries: Vec<(&str, usize)> = files.iter().map(|(p, b)| (*p, b.len())).collect();
    let mut body = part_header("manifest", None).into_bytes();
    body.extend(manifest(&entries).as_bytes());
    body.extend(b"\r\n");
    for (path, bytes) in files {
        body.extend(part_header("files", path.rsplit('/').next()).as_bytes());
        body.extend(bytes);
        body.extend(b"\r\n");
    }
    body.extend(format!("--{BOUNDARY}--\r\n").as_bytes());
    body
}

async fn upload(h: &Harness, user: &str, s: &Setup, body: Vec<u8>) -> (u16, String) {
    let res = h
        .http
        .post(format!("{}/workspace/skill/upload?{}", h.base, q(s)))
        .header("x-user-id", user)
        .header(
            "content-type",
            format!("multipart/form-data; boundary={BOUNDARY}"),
        )
        .body(body)
        .send()
        .await
        .unwrap();
    let code = res.status().as_u16();
    (code, res.text().await.unwrap())
}

/// Neither the data directory nor the staging area shows in `body`.
fn assert_no_host_paths(h: &Harness, what: &str, body: &str) {
    let data = h.dir.path().display().to_string();
    let canonical = std::fs::canonicalize(h.dir.path())
        .unwrap()
        .display()
        .to_string();
    assert!(
        !body.contains(&data) && !body.contains(&canonical) && !body.contains("staging"),
        "{what}: the body shows the server's paths: {body}"
    );
}

/// A `SKILL.md` the loader refuses (too large) and a file where the
/// upload needs a folder are refused with messages naming the skill's own
/// paths, never the server's staging directory.
#[tokio::test]
async fn skill_staging_errors_do_not_show_the_servers_paths() {
    let h = Harness::start_custom(AuthMode::DevHeader, |c| {
        c.with_workspace(WorkspaceMode::Local)
    })
    .await;
    let s = h.setup("u").await;
    let mut huge = b"---\nname: greet\ndescription: Says hello.\n---\n".to_vec();
    huge.extend(vec![b'x'; 300 * 1024]);
    let (code, body) = upload(&h, "u", &s, upload_body(&[("greet/SKILL.md", huge)])).await;
    assert!(matches!(code, 413 | 422), "{code}: {body}");
    assert_no_host_paths(&h, "a large SKILL.md", &body);

    let md = b"---\nname: greet\ndescription: Says hello.\n---\n# Greet\n".to_vec();
    let (code, body) = upload(
        &h,
        "u",
        &s,
        upload_body(&[
            ("greet/SKILL.md", md),
            ("greet/a", b"file".to_vec()),
            ("greet/a/b", b"under a file".to_vec()),
        ]),
    )
    .await;
    assert_eq!(code, 422, "{body}");
    assert_no_host_paths(&h, "a file where a folder goes", &body);
}

/// One session cannot declare MCP servers without end (each is a process
/// started on every listing and every run).
#[tokio::test]
async fn a_session_declares_a_bounded_number_of_mcp_servers() {
    let h = Harness::start_custom(AuthMode::DevHeader, |c| {
        c.with_workspace(WorkspaceMode::Local)
    })
    .await;
    let s = h.setup("u").await;
    let mut refused = None;
    for i in 0..200 {
        let (code, body) = h
            .post(
                &format!("/workspace/mcp?{}", q(&s)),
                "u",
                json!({"name": format!("m{i}"), "is_stateful": true,
                       "mcp_config": {"type": "stdio_mcp", "command": "true"}}),
            )
            .await;
        if code != 201 {
            refused = Some((i, code, body));
            break;
        }
    }
    let Some((i, code, body)) = refused else {
        panic!("200 MCP servers were declared in one session");
    };
    assert!(i >= 16, "refused too early, at {i}: {body}");
    assert_eq!(code, 422, "{body}");
    assert!(
        body["detail"].as_str().unwrap().contains("at most"),
        "{body}"
    );
}

/// `from-library` takes a bounded list of ids: each one is a lookup, and
/// a skill's is a hub download and a staging.
#[tokio::test]
async fn from_library_takes_a_bounded_list_of_ids() {
    let h = Harness::start_custom(AuthMode::DevHeader, |c| {
        c.with_workspace(WorkspaceMode::Local)
    })
    .await;
    let s = h.setup("u").await;
    let ids: Vec<String> = (0..5000).map(|i| format!("id{i}")).collect();
    for (route, field) in [
        ("/workspace/mcp/from-library", "mcp_ids"),
        ("/workspace/skill/from-library", "skill_ids"),
    ] {
        let (code, body) = h
            .post(&format!("{route}?{}", q(&s)), "u", json!({ field: ids }))
            .await;
        let shown: String = body.to_string().chars().take(300).collect();
        assert_eq!(code, 422, "{route}: {shown}");
    }
}

/// Starts an upload of user `user` that sends its manifest and then
/// stalls, holding the connection.
async fn stalled_upload(h: &Harness, user: &str, s: &Setup) -> tokio::net::TcpStream {
    let addr = h.base.trim_start_matches("http://").to_owned();
    let mut stream = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let mut body = part_header("manifest", None).into_bytes();
    body.extend(manifest(&[("slow/SKILL.md", 1000)]).as_bytes());
    body.extend(b"\r\n");
    body.extend(part_header("files", Some("SKILL.md")).as_bytes());
    body.extend(b"---\nname: slow\n");
    let head = format!(
        "POST /workspace/skill/upload?{} HTTP/1.1\r\nHost: {addr}\r\nx-user-id: {user}\r\n\
         content-type: multipart/form-data; boundary={BOUNDARY}\r\ncontent-length: {}\r\n\r\n",
        q(s),
        body.len() + 5000
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(&body).await.unwrap();
    stream.flush().await.unwrap();
    stream
}

/// A tenant that opens uploads and never finishes them holds at most its
/// own turn: another tenant's upload goes through.
#[tokio::test]
async fn one_tenants_stalled_uploads_do_not_block_another_tenants() {
    let h = Harness::start_custom(AuthMode::DevHeader, |c| {
        c.with_workspace(WorkspaceMode::Local)
    })
    .await;
    let mallory = h.setup("mallory").await;
    let alice = h.setup("alice").await;
    let mut held = Vec::new();
    for _ in 0..6 {
        held.push(stalled_upload(&h, "mallory", &mallory).await);
    }
    // Let the server take them in.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let md = b"---\nname: greet\ndescription: Says hello.\n---\n# Greet\n".to_vec();
    let done = tokio::time::timeout(
        Duration::from_secs(20),
        upload(&h, "alice", &alice, upload_body(&[("greet/SKILL.md", md)])),
    )
    .await;
    let Ok((code, body)) = done else {
        panic!("alice's upload waited behind mallory's stalled ones");
    };
    assert_eq!(code, 201, "{body}");
    let (_, listed) = h
        .get(&format!("/workspace/skill?{}", q(&alice)), "alice")
        .await;
    let names: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["name"].as_str())
        .collect();
    assert!(names.contains(&"greet"), "{listed}");
    drop(held);
}

/// An upload that stalls is answered 408 at the skill-install time limit,
/// naming it, and its tenant's next install takes the freed turn.
#[tokio::test]
async fn a_stalled_upload_is_cut_off_at_the_install_time_limit() {
    use tokio::io::AsyncReadExt as _;
    let h = Harness::start_custom(AuthMode::DevHeader, |c| {
        c.with_workspace(WorkspaceMode::Local)
            .with_skill_install_limit(Duration::from_secs(1))
    })
    .await;
    let s = h.setup("mallory").await;
    let mut stream = stalled_upload(&h, "mallory", &s).await;
    let mut answer = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(15), async {
        let mut buf = [0u8; 4096];
        while !String::from_utf8_lossy(&answer).contains("}") {
            let n = stream.read(&mut buf).await.unwrap();
            if n == 0 {
                break;
            }
            answer.extend_from_slice(&buf[..n]);
        }
    })
    .await;
    let answer = String::from_utf8_lossy(&answer).into_owned();
    assert!(
        read.is_ok(),
        "the stalled upload was not cut off: {answer:?}"
    );
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("time limit of 1 s"), "{answer}");
    let md = b"---\nname: greet\ndescription: Says hello.\n---\n# Greet\n".to_vec();
    let (code, body) = upload(&h, "mallory", &s, upload_body(&[("greet/SKILL.md", md)])).await;
    assert_eq!(code, 201, "{body}");
}

/// A `SKILL.md` whose front matter is a "billion laughs" of YAML aliases
/// is refused (or read) quickly, not expanded.
#[tokio::test]
async fn a_yaml_alias_bomb_in_skill_md_is_cheap() {
    let h = Harness::start_custom(AuthMode::DevHeader, |c| {
        c.with_workspace(WorkspaceMode::Local)
    })
    .await;
    let s = h.setup("u").await;
    let mut yaml = String::from(
        "---\nname: bomb\ndescription: x\nx0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n",
    );
    for i in 1..12 {
        let prev = format!("*a{}", i - 1);
        yaml.push_str(&format!("x{i}: &a{i} [{}]\n", vec![prev; 9].join(", ")));
    }
    yaml.push_str("---\n# Bomb\n");
    let started = std::time::Instant::now();
    let (code, body) = upload(
        &h,
        "u",
        &s,
        upload_body(&[("bomb/SKILL.md", yaml.into_bytes())]),
    )
    .await;
    let took = started.elapsed();
    assert!(took < Duration::from_secs(5), "{took:?}: {code} {body}");
}

/// A remote hub's card whose archive lives on another server (a private
/// one, here loopback) does not make this server fetch it: only the hub's
/// own origin, or public addresses, are reached for a tenant's install.
#[tokio::test]
async fn a_remote_hubs_card_cannot_send_the_server_to_a_private_address() {
    use oxiscope_server::HubSource;
    use oxiscope_test_support::{FakeServer, ScriptedResponse};
    let hub = FakeServer::start().await.unwrap();
    let internal = FakeServer::start().await.unwrap();
    let catalogue = json!({
        "kind": "skill", "hub_id": "remote", "display_name": "Remote",
        "cards": [{"id": "r1", "name": "inside", "markdown": "body",
                   "archive_url": internal.url("/metadata/secret.tar.gz")}]
    });
    for _ in 0..4 {
        hub.push_for("/hub.json", ScriptedResponse::json(200, &catalogue));
    }
    let h = Harness::start_with_hubs_local(
        vec![HubSource::Remote(hub.url("/hub.json"))],
        Duration::from_secs(300),
    )
    .await;
    let s = h.setup("u").await;
    let (code, view) = h
        .post("/hub/skill/remote/cards/r1/install", "u", json!({}))
        .await;
    assert_eq!(code, 201, "{view}");
    let id = view["id"].as_str().unwrap().to_owned();
    internal.push_for(
        "/metadata/secret.tar.gz",
        ScriptedResponse::new(200).with_body(b"not even an archive".to_vec()),
    );
    let (code, out) = h
        .post(
            &format!("/workspace/skill/from-library?{}", q(&s)),
            "u",
            json!({"skill_ids": [id]}),
        )
        .await;
    assert_eq!(code, 201, "{out}");
    assert_eq!(out["added"], json!([]), "{out}");
    assert!(out["failed"][&id].is_string(), "{out}");
    assert_eq!(
        internal.request_count(),
        0,
        "the server fetched a private address"
    );
}
