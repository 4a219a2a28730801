//! `/workspace/`: MCP servers attached to a session (a real npm server in
//! the sandbox), skills from the workspace and from uploads, directory
//! listings, the workspace status and file downloads — each also as an
//! attacker would call it.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use oxiscope_server::{AuthMode, TenantPolicy, WorkspaceMode};
use oxiscope_test_support::OpenAiScript;
use oxiscope_workspace::SandboxConfig;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::chat::user_msg;
use super::common::{Harness, Setup, text_answer};

const SKILL_MD: &str = "---\nname: greet\ndescription: Says hello.\n---\n# Greet\nSay hello.\n";

fn q(s: &Setup) -> String {
    format!("agent_id={}&session_id={}", s.agent_id, s.session_id)
}

// ---------------------------------------------------------------- MCP

/// The npm MCP test servers, where a sandbox user can read them.
fn mcp_servers() -> Option<PathBuf> {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../mcp/tests/servers"));
    let dir = std::fs::canonicalize(&dir).unwrap_or(dir);
    let sdk = dir.join("node_modules/@modelcontextprotocol/sdk/package.json");
    let node = std::process::Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !(sdk.is_file() && node) {
        oxiscope_test_support::skip(&format!(
            "the MCP test servers cannot run (node: {node}; {} exists: {}); run \
             `npm ci --prefix crates/mcp/tests/servers`",
            sdk.display(),
            sdk.is_file()
        ));
        return None;
    }
    use std::os::unix::fs::MetadataExt as _;
    let passable = dir
        .ancestors()
        .skip(1)
        .all(|d| std::fs::metadata(d).is_ok_and(|m| m.mode() & 0o001 != 0));
    if passable {
        return Some(dir);
    }
    static COPY: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    Some(
        COPY.get_or_init(|| {
            let to =
                std::env::temp_dir().join(format!("oxiscope-ws-routes-{}", std::process::id()));
            copy_tree(&dir, &to);
            to
        })
        .clone(),
    )
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    std::fs::set_permissions(to, std::fs::Permissions::from_mode(0o755)).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let kind = entry.file_type().unwrap();
        let target = to.join(entry.file_name());
        if kind.is_symlink() {
            let _ = std::os::unix::fs::symlink(std::fs::read_link(entry.path()).unwrap(), &target);
        } else if kind.is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// A sandboxed server whose tenants may use the `bypass` mode; `None`
/// after a loud skip where bubblewrap cannot run.
async fn sandboxed(servers: &Path) -> Option<Harness> {
    let config = SandboxConfig {
        ro_binds: vec![servers.to_path_buf()],
        ..SandboxConfig::default()
    };
    if let Err(e) = oxiscope_workspace::probe_sandbox(&config).await {
        oxiscope_test_support::skip(&format!("no sandbox: {e}"));
        return None;
    }
    Some(
        Harness::start_custom(AuthMode::DevHeader, move |c| {
            c.with_workspace(WorkspaceMode::Sandbox(config))
                .with_policy(TenantPolicy {
                    allowed_modes: oxiscope_permission::PermissionMode::ALL.to_vec(),
                    private_model_endpoints: true,
                    ..TenantPolicy::default()
                })
        })
        .await,
    )
}

/// Runs `dynamic-tools.mjs` until `/workspace/mcp.dead` appears, then
/// kills it; once that file exists, every start fails.
const WRAPPER: &str = r#"if [ -e /workspace/mcp.dead ]; then echo "the server is gone for good" >&2; exit 3; fi
exec 3<&0
node "$1" <&3 3<&- &
child=$!
while [ ! -e /workspace/mcp.dead ]; do sleep 0.1; done
kill $child
exit 1
"#;

async fn list_mcps(h: &Harness, s: &Setup) -> Vec<Value> {
    let (code, body) = h.get(&format!("/workspace/mcp?{}", q(s)), "u").await;
    assert_eq!(code, 200, "{body}");
    body.as_array().unwrap().clone()
}

#[tokio::test]
async fn an_mcp_server_attaches_serves_a_run_dies_and_detaches() {
    let Some(servers) = mcp_servers() else { return };
    let Some(h) = sandboxed(&servers).await else {
        return;
    };
    let s = h.setup("u").await;
    assert_eq!(list_mcps(&h, &s).await, Vec::<Value>::new());
    let dir = h.workspace_dir("u", &s.agent_id);
    std::fs::write(dir.join("mcp.sh"), WRAPPER).unwrap();
    let decl = json!({
        "name": "dyn",
        "is_stateful": true,
        "mcp_config": {"type": "stdio_mcp", "command": "sh",
                       "args": ["/workspace/mcp.sh", servers.join("dynamic-tools.mjs")]},
        "enable_tools": ["echo"],
    });
    let (code, body) = h
        .post(&format!("/workspace/mcp?{}", q(&s)), "u", decl.clone())
        .await;
    assert_eq!((code, body), (201, Value::Null));
    let (code, body) = h
        .post(&format!("/workspace/mcp?{}", q(&s)), "u", decl)
        .await;
    assert_eq!(code, 409, "{body}");

    let listed = list_mcps(&h, &s).await;
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["name"], "dyn");
    assert_eq!(listed[0]["mcp_config"]["type"], "stdio_mcp");
    assert_eq!(listed[0]["is_healthy"], true, "{}", listed[0]);
    assert_eq!(listed[0]["error"], Value::Null);
    assert_eq!(
        listed[0]["tools"],
        json!([{"name": "echo", "description": "Answers with the text it got."}])
    );

    // A run calls the server's tool.
    let (code, body) = h
        .patch_session("u", &s, json!({"permission_mode": "bypass"}))
        .await;
    assert_eq!(code, 200, "{body}");
    h.fake.push(
        OpenAiScript::new()
            .tool_call(0, "call_1", "mcp__dyn__echo")
            .tool_args(0, r#"{"text": "hello"}"#)
            .finish("tool_calls")
            .usage(10, 5, 0)
            .response(),
    );
    h.fake.push(text_answer("done"));
    let (code, _) = h.chat("u", &s, user_msg("echo hello")).await;
    assert_eq!(code, 200);
    assert_eq!(h.wait_not_running("u", &s).await, "idle");
    let requests = h.fake.requests();
    assert_eq!(requests.len(), 2);
    let second = String::from_utf8_lossy(&requests[1].body);
    assert!(second.contains("echo: hello"), "{second}");

    // The server dies and cannot come back: the list says so.
    std::fs::write(dir.join("mcp.dead"), "").unwrap();
    let mut dead = Value::Null;
    for _ in 0..100 {
        let listed = list_mcps(&h, &s).await;
        if listed[0]["is_healthy"] == false {
            dead = listed[0].clone();
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(dead["is_healthy"], false, "the death was never seen");
    assert!(
        dead["error"].as_str().is_some_and(|e| !e.is_empty()),
        "{dead}"
    );
    assert_eq!(dead["tools"], json!([]));

    // The next run goes on without it.
    h.fake.push(text_answer("still here"));
    let (code, _) = h.chat("u", &s, user_msg("again")).await;
    assert_eq!(code, 200);
    assert_eq!(h.wait_not_running("u", &s).await, "idle");
    assert_eq!(h.fake.requests().len(), 3);

    let path = format!("/workspace/mcp/dyn?{}", q(&s));
    let (code, _) = h.call(reqwest::Method::DELETE, &path, "u", None).await;
    assert_eq!(code, 204);
    assert_eq!(list_mcps(&h, &s).await, Vec::<Value>::new());
    let (code, _) = h.call(reqwest::Method::DELETE, &path, "u", None).await;
    assert_eq!(code, 404);
}

#[tokio::test]
async fn unusable_mcp_declarations_are_refused() {
    let h = Harness::start().await;
    let s = h.setup("u").await;
    let sandboxed = matches!(h.state.config().workspace, WorkspaceMode::Sandbox(_));
    let stdio = |name: &str, env: Value| {
        json!({"name": name, "is_stateful": true,
               "mcp_config": {"type": "stdio_mcp", "command": "true", "env": env}})
    };
    let mut bad = vec![
        stdio("../x", json!({})),
        json!({"name": "x", "is_stateful": false, "mcp_config": {"type": "stdio_mcp", "command": "true"}}),
        json!({"name": "x", "is_stateful": true, "mcp_config": {"type": "http_mcp", "url": "file:///etc/passwd"}}),
    ];
    if sandboxed {
        // No network in the sandbox, so no HTTP servers; env names are
        // plain names.
        bad.push(json!({"name": "x", "is_stateful": true,
                        "mcp_config": {"type": "http_mcp", "url": "http://127.0.0.1:9/mcp"}}));
        bad.push(stdio("x", json!({"A=B": "1"})));
    }
    for decl in bad {
        let (code, body) = h
            .post(&format!("/workspace/mcp?{}", q(&s)), "u", decl.clone())
            .await;
        assert_eq!(code, 422, "{decl}: {body}");
        assert!(
            body["detail"].is_string() || body["detail"].is_array(),
            "{body}"
        );
    }
    // A malformed body is FastAPI's 422 too.
    let (code, _) = h
        .post(
            &format!("/workspace/mcp?{}", q(&s)),
            "u",
            json!({"name": 1}),
        )
        .await;
    assert_eq!(code, 422);
    assert_eq!(list_mcps(&h, &s).await, Vec::<Value>::new());
    // Another user sees no such session.
    let (code, _) = h.get(&format!("/workspace/mcp?{}", q(&s)), "mallory").await;
    assert_eq!(code, 404);
}

// ---------------------------------------------------------------- skills

fn write_skill(dir: &Path) {
    std::fs::create_dir_all(dir.join("scripts")).unwrap();
    std::fs::write(dir.join("SKILL.md"), SKILL_MD).unwrap();
    std::fs::write(dir.join("scripts/run.sh"), "echo hi\n").unwrap();
}

async fn skill_names(h: &Harness, s: &Setup) -> Vec<String> {
    let (code, body) = h.get(&format!("/workspace/skill?{}", q(s)), "u").await;
    assert_eq!(code, 200, "{body}");
    body.as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn a_skill_folder_of_the_workspace_is_added_and_links_out_are_refused() {
    let h = Harness::start().await;
    let s = h.setup("u").await;
    let before = skill_names(&h, &s).await;
    let dir = h.workspace_dir("u", &s.agent_id);
    write_skill(&dir.join("drafts/greet"));
    let workdir = h.tool_dir("u", &s.agent_id);
    let path = format!("/workspace/skill?{}", q(&s));

    let (code, body) = h
        .post(&path, "u", json!({"skill_path": "drafts/greet"}))
        .await;
    assert_eq!((code, &body), (201, &Value::Null));
    let (_, listed) = h.get(&path, "u").await;
    let greet = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "greet")
        .unwrap()
        .clone();
    assert_eq!(greet["description"], "Says hello.");
    assert_eq!(greet["markdown"], SKILL_MD);
    let shown = greet["dir"].as_str().unwrap();
    assert!(shown.starts_with(&workdir.display().to_string()), "{shown}");
    assert!(greet["updated_at"].as_f64().unwrap() > 1.0e9);
    // The same folder again (absolute, as the agent sees it) is taken.
    let absolute = workdir.join("drafts/greet").display().to_string();
    let (code, _) = h.post(&path, "u", json!({"skill_path": absolute})).await;
    assert_eq!(code, 409);

    // Escapes: `..`, another absolute path, links out.
    let outside = h.dir.path().join("outside-skill");
    write_skill(&outside);
    std::os::unix::fs::symlink(&outside, dir.join("linked")).unwrap();
    std::fs::create_dir_all(dir.join("evil")).unwrap();
    std::os::unix::fs::symlink(outside.join("SKILL.md"), dir.join("evil/SKILL.md")).unwrap();
    for (skill_path, want) in [
        ("../../outside-skill", 403),
        (outside.to_str().unwrap(), 403),
        ("linked", 422),
        ("evil", 422),
        ("missing", 422),
    ] {
        let (code, body) = h.post(&path, "u", json!({"skill_path": skill_path})).await;
        assert_eq!(code, want, "{skill_path}: {body}");
    }
    let mut want = before.clone();
    want.push("greet".to_owned());
    want.sort();
    let mut got = skill_names(&h, &s).await;
    got.sort();
    assert_eq!(got, want);

    let delete = format!("/workspace/skill/greet?{}", q(&s));
    let (code, _) = h.call(reqwest::Method::DELETE, &delete, "u", None).await;
    assert_eq!(code, 204);
    let (code, _) = h.call(reqwest::Method::DELETE, &delete, "u", None).await;
    assert_eq!(code, 404);
    assert_eq!(skill_names(&h, &s).await, before);
    // Another user's session is not found.
    let (code, _) = h
        .post(&path, "mallory", json!({"skill_path": "drafts/greet"}))
        .await;
    assert_eq!(code, 404);
}

/// One multipart part: its name, file name and bytes.
type Part<'a> = (&'a str, Option<&'a str>, Vec<u8>);

/// A multipart body of `parts` (name, file name, bytes) and its boundary.
fn multipart(parts: &[(&str, Option<&str>, &[u8])]) -> (String, Vec<u8>) {
    let boundary = "oxiscopeBoundary7MA4YWxkTrZu0gW".to_owned();
    let mut body = Vec::new();
    for (name, file, bytes) in parts {
        body.extend(format!("--{boundary}\r\n").as_bytes());
        match file {
            Some(file) => body.extend(
                format!(
                    "Content-Disposition: form-data; name=\"{name}\"; filename=\"{file}\"\r\n\
                     Content-Type: application/octet-stream\r\n\r\n"
                )
                .as_bytes(),
            ),
            None => body.extend(
                format!("Content-Disposition: form-data; name=\"{name}\"\r\n\r\n").as_bytes(),
            ),
        }
        body.extend(*bytes);
        body.extend(b"\r\n");
    }
    body.extend(format!("--{boundary}--\r\n").as_bytes());
    (boundary, body)
}

async fn upload(h: &Harness, s: &Setup, parts: &[(&str, Option<&str>, &[u8])]) -> (u16, Value) {
    let (boundary, body) = multipart(parts);
    let res = h
        .http
        .post(format!("{}/workspace/skill/upload?{}", h.base, q(s)))
        .header("x-user-id", "u")
        .header(
            "content-type",
            format!("multipart/form-data; boundary={boundary}"),
        )
        .body(body)
        .send()
        .await
        .unwrap();
    let code = res.status().as_u16();
    let text = res.text().await.unwrap();
    (
        code,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

fn manifest(entries: &[(&str, usize)]) -> Vec<u8> {
    json!({"entries": entries.iter().map(|(p, n)| json!({"path": p, "size": n})).collect::<Vec<_>>()})
        .to_string()
        .into_bytes()
}

/// Every file under `dir`.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() && !path.is_symlink() {
                out.extend(files_under(&path));
            } else {
                out.push(path);
            }
        }
    }
    out
}

#[tokio::test]
async fn an_uploaded_folder_becomes_a_skill() {
    let h = Harness::start().await;
    let s = h.setup("u").await;
    let script = b"echo hi\n";
    // More than axum's default 2 MB body limit.
    let data: Vec<u8> = (0..3u32 << 20).map(|i| (i % 251) as u8).collect();
    let (code, body) = upload(
        &h,
        &s,
        &[
            (
                "manifest",
                None,
                &manifest(&[
                    ("greet/SKILL.md", SKILL_MD.len()),
                    ("greet/scripts/run.sh", script.len()),
                    ("greet/data.bin", data.len()),
                ]),
            ),
            ("files", Some("SKILL.md"), SKILL_MD.as_bytes()),
            ("files", Some("run.sh"), script),
            ("files", Some("data.bin"), &data),
        ],
    )
    .await;
    assert_eq!((code, body), (201, Value::Null));
    assert!(skill_names(&h, &s).await.contains(&"greet".to_owned()));
    let dir = h.workspace_dir("u", &s.agent_id);
    let copied = dir.join(format!("skills/{}/greet/scripts/run.sh", s.agent_id));
    assert_eq!(std::fs::read(copied).unwrap(), script);
    let copied = dir.join(format!("skills/{}/greet/data.bin", s.agent_id));
    assert_eq!(std::fs::read(copied).unwrap(), data);
    // Nothing stays in staging.
    assert_eq!(
        files_under(&h.dir.path().join("staging")),
        Vec::<PathBuf>::new()
    );
}

#[tokio::test]
async fn hostile_uploads_are_refused_and_leave_nothing_behind() {
    let h = Harness::start().await;
    let s = h.setup("u").await;
    let before = skill_names(&h, &s).await;
    let md = SKILL_MD.as_bytes();
    let n = md.len();
    let big = vec![b'x'; 11 << 20];
    let cases: Vec<(&str, Vec<Part<'_>>, u16)> = vec![
        (
            "traversal",
            vec![
                (
                    "manifest",
                    None,
                    manifest(&[("greet/SKILL.md", n), ("greet/../../x", 1)]),
                ),
                ("files", Some("a"), md.to_vec()),
                ("files", Some("b"), b"x".to_vec()),
            ],
            422,
        ),
        (
            "absolute",
            vec![
                ("manifest", None, manifest(&[("/greet/SKILL.md", n)])),
                ("files", Some("a"), md.to_vec()),
            ],
            422,
        ),
        (
            "two folders",
            vec![
                (
                    "manifest",
                    None,
                    manifest(&[("greet/SKILL.md", n), ("other/x", 1)]),
                ),
                ("files", Some("a"), md.to_vec()),
                ("files", Some("b"), b"x".to_vec()),
            ],
            422,
        ),
        (
            "no SKILL.md",
            vec![
                ("manifest", None, manifest(&[("greet/README.md", n)])),
                ("files", Some("a"), md.to_vec()),
            ],
            422,
        ),
        (
            "more parts than entries",
            vec![
                ("manifest", None, manifest(&[("greet/SKILL.md", n)])),
                ("files", Some("a"), md.to_vec()),
                ("files", Some("b"), b"x".to_vec()),
            ],
            422,
        ),
        (
            "fewer parts than entries",
            vec![
                (
                    "manifest",
                    None,
                    manifest(&[("greet/SKILL.md", n), ("greet/x", 1)]),
                ),
                ("files", Some("a"), md.to_vec()),
            ],
            422,
        ),
        (
            "more bytes than announced",
            vec![
                (
                    "manifest",
                    None,
                    manifest(&[("greet/SKILL.md", n), ("greet/x", 1)]),
                ),
                ("files", Some("a"), md.to_vec()),
                ("files", Some("b"), b"xxxx".to_vec()),
            ],
            422,
        ),
        (
            "fewer bytes than announced",
            vec![
                ("manifest", None, manifest(&[("greet/SKILL.md", n + 10)])),
                ("files", Some("a"), md.to_vec()),
            ],
            422,
        ),
        (
            "bad front matter",
            vec![
                ("manifest", None, manifest(&[("greet/SKILL.md", 6)])),
                ("files", Some("a"), b"# hi\n\n".to_vec()),
            ],
            422,
        ),
        (
            "files before the manifest",
            vec![
                ("files", Some("a"), md.to_vec()),
                ("manifest", None, manifest(&[("greet/SKILL.md", n)])),
            ],
            422,
        ),
        (
            "a manifest that is not JSON",
            vec![("manifest", None, b"{entries".to_vec())],
            422,
        ),
        (
            "a file over the per-file limit, announced",
            vec![
                (
                    "manifest",
                    None,
                    manifest(&[("greet/SKILL.md", n), ("greet/big", big.len())]),
                ),
                ("files", Some("a"), md.to_vec()),
            ],
            413,
        ),
        (
            "a file over the limit, announced small",
            vec![
                (
                    "manifest",
                    None,
                    manifest(&[("greet/SKILL.md", n), ("greet/big", 10)]),
                ),
                ("files", Some("a"), md.to_vec()),
                ("files", Some("b"), big.clone()),
            ],
            422,
        ),
    ];
    for (what, parts, want) in cases {
        let parts: Vec<(&str, Option<&str>, &[u8])> = parts
            .iter()
            .map(|(a, b, c)| (*a, *b, c.as_slice()))
            .collect();
        let (code, body) = upload(&h, &s, &parts).await;
        assert_eq!(code, want, "{what}: {body}");
        assert!(body["detail"].is_string(), "{what}: {body}");
    }
    // A manifest over its own limit.
    let huge = vec![b' '; (1 << 20) + 1];
    let (code, _) = upload(&h, &s, &[("manifest", None, &huge)]).await;
    assert_eq!(code, 413);

    assert_eq!(skill_names(&h, &s).await, before);
    assert_eq!(
        files_under(&h.dir.path().join("staging")),
        Vec::<PathBuf>::new()
    );
    // Nothing named `x` landed anywhere in the data directory.
    let stray: Vec<PathBuf> = files_under(h.dir.path())
        .into_iter()
        .filter(|p| p.file_name().is_some_and(|n| n == "x"))
        .collect();
    assert_eq!(stray, Vec::<PathBuf>::new());
}

// ---------------------------------------------------------------- files

#[tokio::test]
async fn directories_list_one_level_and_stay_inside_the_workspace() {
    let h = Harness::start().await;
    let s = h.setup("u").await;
    let (code, _) = h.get(&format!("/workspace/status?{}", q(&s)), "u").await;
    assert_eq!(code, 200);
    let dir = h.workspace_dir("u", &s.agent_id);
    std::fs::create_dir_all(dir.join("src/deep")).unwrap();
    std::fs::write(dir.join("src/main.rs"), "fn main() {}\n").unwrap();
    std::os::unix::fs::symlink("/etc", dir.join("src/etc")).unwrap();
    std::os::unix::fs::symlink("/etc", dir.join("etc-link")).unwrap();
    let workdir = h.tool_dir("u", &s.agent_id);

    let list = |path: String| {
        let h = &h;
        let s = &s;
        async move {
            h.get(&format!("/workspace/directories?{}&path={path}", q(s)), "u")
                .await
        }
    };
    let (code, listing) = list("src".to_owned()).await;
    assert_eq!(code, 200, "{listing}");
    assert_eq!(listing["path"], workdir.join("src").display().to_string());
    let mut entries = listing["entries"].as_array().unwrap().clone();
    entries.sort_by_key(|e| e["name"].as_str().unwrap().to_owned());
    let names: Vec<(&str, bool, Option<u64>)> = entries
        .iter()
        .map(|e| {
            (
                e["name"].as_str().unwrap(),
                e["is_dir"].as_bool().unwrap(),
                e["size_bytes"].as_u64(),
            )
        })
        .collect();
    assert_eq!(
        names,
        vec![
            ("deep", true, None),
            ("etc", false, None),
            ("main.rs", false, Some(13))
        ]
    );
    assert!(entries[2]["updated_at"].as_f64().unwrap() > 1.0e9);
    // The root, by an empty path or the workdir itself.
    let (code, root) = list(String::new()).await;
    assert_eq!(code, 200);
    assert_eq!(root["path"], workdir.display().to_string());
    let (code, same) = list(workdir.display().to_string()).await;
    assert_eq!((code, &same["path"]), (200, &root["path"]));

    for (path, want) in [
        ("..", 403),
        ("src/../..", 403),
        ("/etc", 403),
        ("etc-link", 403),
        ("src/etc", 403),
        ("missing", 404),
        ("src/main.rs", 422),
    ] {
        let (code, body) = list(path.to_owned()).await;
        assert_eq!(code, want, "{path}: {body}");
        assert!(!body.to_string().contains("passwd"), "{path}: {body}");
    }
    // Another user, or another agent, finds no such session.
    let (code, _) = h
        .get(&format!("/workspace/directories?{}", q(&s)), "mallory")
        .await;
    assert_eq!(code, 404);
    let (code, _) = h
        .get(
            &format!(
                "/workspace/directories?agent_id=other&session_id={}",
                s.session_id
            ),
            "u",
        )
        .await;
    assert_eq!(code, 404);
}

#[tokio::test]
async fn the_status_names_the_workdir_the_cwd_and_the_branch() {
    let h = Harness::start().await;
    let s = h.setup("u").await;
    let path = format!("/workspace/status?{}", q(&s));
    let workdir = h.tool_dir("u", &s.agent_id).display().to_string();
    let (code, status) = h.get(&path, "u").await;
    assert_eq!(code, 200);
    assert_eq!(
        status,
        json!({"workdir": workdir, "cwd": workdir, "git": null})
    );

    let dir = h.workspace_dir("u", &s.agent_id);
    std::fs::create_dir_all(dir.join("proj/.git/refs/heads")).unwrap();
    std::fs::create_dir_all(dir.join("proj/src")).unwrap();
    std::fs::write(dir.join("proj/.git/HEAD"), "ref: refs/heads/feature\n").unwrap();
    let id = "89abcdef0123456789abcdef0123456789abcdef";
    std::fs::write(dir.join("proj/.git/refs/heads/feature"), format!("{id}\n")).unwrap();
    // A config that would run a command if git were run on it.
    std::fs::write(
        dir.join("proj/.git/config"),
        "[core]\n\tfsmonitor = touch /tmp/oxiscope-pwned\n",
    )
    .unwrap();
    let (code, _) = h
        .call(
            reqwest::Method::PATCH,
            &format!("/sessions/{}?agent_id={}", s.session_id, s.agent_id),
            "u",
            Some(json!({"cwd": "proj/src"})),
        )
        .await;
    assert_eq!(code, 200);
    let (code, status) = h.get(&path, "u").await;
    assert_eq!(code, 200);
    assert_eq!(status["cwd"], format!("{workdir}/proj/src"));
    assert_eq!(status["git"]["branch"], "feature");
    assert_eq!(status["git"]["head"], id);
    assert!(!Path::new("/tmp/oxiscope-pwned").exists());
}

async fn mint(h: &Harness, user: &str, s: &Setup, path: &str) -> (u16, Value) {
    h.post(
        &format!("/workspace/files/download-token?{}&path={path}", q(s)),
        user,
        Value::Null,
    )
    .await
}

/// `GET /workspace/files` with only a token (no identity header).
async fn fetch_with_token(h: &Harness, s: &Setup, path: &str, token: &str) -> reqwest::Response {
    h.http
        .get(format!(
            "{}/workspace/files?{}&path={path}&token={token}",
            h.base,
            q(s)
        ))
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn download_tokens_fetch_one_file_of_one_session_for_a_short_time() {
    let h = Harness::start_custom(AuthMode::DevHeader, |c| {
        c.with_workspace(WorkspaceMode::Local)
            .with_download_token_ttl(Duration::from_secs(1))
    })
    .await;
    let s = h.setup("u").await;
    let (code, _) = h.get(&format!("/workspace/status?{}", q(&s)), "u").await;
    assert_eq!(code, 200);
    let dir = h.workspace_dir("u", &s.agent_id);
    std::fs::create_dir_all(dir.join("out")).unwrap();
    std::fs::write(dir.join("out/a.txt"), "report A\n").unwrap();
    std::fs::write(dir.join("out/b.txt"), "report B\n").unwrap();
    std::fs::write(dir.join("page.html"), "<script>alert(1)</script>").unwrap();
    std::os::unix::fs::symlink("/etc/passwd", dir.join("passwd")).unwrap();

    let (code, minted) = mint(&h, "u", &s, "out/a.txt").await;
    assert_eq!(code, 200, "{minted}");
    let token = minted["token"].as_str().unwrap().to_owned();
    assert!(minted["expires_at"].as_f64().unwrap() > 1.0e9);

    let res = fetch_with_token(&h, &s, "out/a.txt", &token).await;
    assert_eq!(res.status().as_u16(), 200);
    assert_eq!(res.headers()["content-type"], "text/plain; charset=utf-8");
    assert_eq!(res.headers()["x-content-type-options"], "nosniff");
    assert_eq!(res.text().await.unwrap(), "report A\n");
    // The same file named as the agent sees it is the same file.
    let absolute = dir.join("out/a.txt").display().to_string();
    assert_eq!(
        fetch_with_token(&h, &s, &absolute, &token)
            .await
            .status()
            .as_u16(),
        200
    );
    // Not another file, not with a damaged token.
    assert_eq!(
        fetch_with_token(&h, &s, "out/b.txt", &token)
            .await
            .status()
            .as_u16(),
        403
    );
    let mut damaged = token.clone().into_bytes();
    let i = damaged.len() / 2;
    damaged[i] = if damaged[i] == b'A' { b'B' } else { b'A' };
    let damaged = String::from_utf8(damaged).unwrap();
    assert_eq!(
        fetch_with_token(&h, &s, "out/a.txt", &damaged)
            .await
            .status()
            .as_u16(),
        401
    );
    // Not for another session of the same user.
    let (code, other) = h
        .post(
            "/sessions/",
            "u",
            json!({"agent_id": s.agent_id, "workspace_id": "second"}),
        )
        .await;
    assert_eq!(code, 201, "{other}");
    let second = Setup {
        credential_id: s.credential_id.clone(),
        agent_id: s.agent_id.clone(),
        session_id: other["session_id"].as_str().unwrap().to_owned(),
    };
    assert_eq!(
        fetch_with_token(&h, &second, "out/a.txt", &token)
            .await
            .status()
            .as_u16(),
        403
    );
    // Expired.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let res = fetch_with_token(&h, &s, "out/a.txt", &token).await;
    assert_eq!(res.status().as_u16(), 401);
    assert!(res.text().await.unwrap().contains("expired"));

    // Minting: missing files, paths outside, links out, other users.
    for (path, want) in [
        ("out/missing.txt", 404),
        ("../../etc/passwd", 403),
        ("/etc/passwd", 403),
        ("passwd", 403),
        ("out", 422),
    ] {
        let (code, body) = mint(&h, "u", &s, path).await;
        assert_eq!(code, want, "{path}: {body}");
    }
    let (code, _) = mint(&h, "mallory", &s, "out/a.txt").await;
    assert_eq!(code, 404);

    // With the identity header instead of a token; forced download.
    let res = h
        .http
        .get(format!(
            "{}/workspace/files?{}&path=out/b.txt&download=true",
            h.base,
            q(&s)
        ))
        .header("x-user-id", "u")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 200);
    assert_eq!(
        res.headers()["content-disposition"],
        "attachment; filename=\"b.txt\"; filename*=UTF-8''b.txt"
    );
    assert_eq!(res.text().await.unwrap(), "report B\n");
    // An HTML file is never served as a page of the API's origin.
    let (code, _) = h
        .get(&format!("/workspace/files?{}&path=page.html", q(&s)), "u")
        .await;
    assert_eq!(code, 200);
    let res = h
        .http
        .get(format!(
            "{}/workspace/files?{}&path=page.html",
            h.base,
            q(&s)
        ))
        .header("x-user-id", "u")
        .send()
        .await
        .unwrap();
    assert_eq!(res.headers()["content-type"], "text/plain; charset=utf-8");
    // Another user's session, with the header, is not found; no
    // credentials at all is refused.
    let (code, _) = h
        .get(
            &format!("/workspace/files?{}&path=out/a.txt", q(&s)),
            "mallory",
        )
        .await;
    assert_eq!(code, 404);
    let res = h
        .http
        .get(format!(
            "{}/workspace/files?{}&path=out/a.txt",
            h.base,
            q(&s)
        ))
        .send()
        .await
        .unwrap();
    assert!(
        matches!(res.status().as_u16(), 401 | 422),
        "{}",
        res.status()
    );
}

// ---------------------------------------------------------------- contract

/// Our `/workspace/` operations against AgentScope's document: the same
/// parameters, and at least the reference's properties in every request
/// and success body.
#[test]
fn the_workspace_operations_match_agentscopes_document() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fixtures/agentscope-2.0.11/openapi.stripped.json"
    );
    let reference: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let ours = oxiscope_server::openapi_document(AuthMode::DevHeader);
    let params = |op: &Value| {
        let mut ps: Vec<(String, String, bool)> = op["parameters"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|p| {
                (
                    p["name"].as_str().unwrap().to_owned(),
                    p["in"].as_str().unwrap().to_owned(),
                    p["required"].as_bool().unwrap_or(false),
                )
            })
            .collect();
        ps.sort();
        ps
    };
    let props = |doc: &Value, schema: &Value| -> Vec<String> {
        let schema = match schema.get("items") {
            Some(items) => items,
            None => schema,
        };
        let resolved = match schema.get("$ref").and_then(Value::as_str) {
            Some(r) => &doc["components"]["schemas"][r.rsplit('/').next().unwrap()],
            None => schema,
        };
        let mut names: Vec<String> = resolved["properties"]
            .as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        names.sort();
        names
    };
    let body = |op: &Value, media: &str| op["requestBody"]["content"][media]["schema"].clone();
    let mut checked = 0;
    for (path, item) in reference["paths"].as_object().unwrap() {
        if !path.starts_with("/workspace/") {
            continue;
        }
        for (method, theirs) in item.as_object().unwrap() {
            let mine = &ours["paths"][path][method];
            assert!(mine.is_object(), "missing {method} {path}");
            assert_eq!(params(mine), params(theirs), "{method} {path}");
            for media in ["application/json", "multipart/form-data"] {
                let want = props(&reference, &body(theirs, media));
                let got = props(&ours, &body(mine, media));
                for p in &want {
                    assert!(got.contains(p), "{method} {path}: request lacks {p}");
                }
            }
            for (code, response) in theirs["responses"].as_object().unwrap() {
                if !code.starts_with('2') {
                    continue;
                }
                let schema = &response["content"]["application/json"]["schema"];
                let want = props(&reference, schema);
                let got = props(
                    &ours,
                    &mine["responses"][code]["content"]["application/json"]["schema"],
                );
                for p in &want {
                    assert!(
                        got.contains(p),
                        "{method} {path} {code}: response lacks {p}"
                    );
                }
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 13);
}
