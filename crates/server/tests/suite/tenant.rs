//! A hostile tenant against the real HTTP service: it scripts its own
//! model and confirms every call (in the default mode: reads run, the
//! rest asks), so only the sandbox stands between it and the server's
//! key, database, environment and other users' files.

use oxiscope_server::KEY_FILE;
use oxiscope_test_support::{OpenAiScript, ScriptedResponse};
use oxiscope_workspace::SandboxConfig;
use serde_json::{Value, json};

use super::chat::user_msg;
use super::common::{Harness, Setup, Sse, text_answer};

const KEY_CANARY: &str = "MASTERKEY-CANARY-7f3a";
const DB_CANARY: &str = "BOBS-AGENT-CANARY-91c2";
const BOB_CANARY: &str = "BOB-PRIVATE-CANARY-55e0";

/// One model turn calling every tool in `calls` (name, arguments).
///
/// Call ids are unique across turns: a call whose id repeats one of an
/// earlier turn of the reply is not a new call, and is dropped (this is
/// why the shell round of this suite once never ran).
fn round(calls: &[(&str, Value)]) -> ScriptedResponse {
    static TURN: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let turn = TURN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut script = OpenAiScript::new();
    for (i, (name, args)) in calls.iter().enumerate() {
        script = script
            .tool_call(i, format!("call_{turn}_{i}_{name}"), *name)
            .tool_args(i, args.to_string());
    }
    script.finish("tool_calls").usage(10, 5, 0).response()
}

/// Sends `input` and answers every confirmation with yes until the reply
/// ends.
async fn run_confirming(h: &Harness, user: &str, s: &Setup, sse: &mut Sse, input: Value) {
    let (code, body) = h.chat(user, s, input).await;
    assert_eq!(code, 200, "{body}");
    loop {
        let event = sse.next().await;
        match event["type"].as_str() {
            Some("REPLY_END") => break,
            Some("REQUIRE_USER_CONFIRM") => {
                h.wait_not_running(user, s).await;
                let results: Vec<Value> = event["tool_calls"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|call| json!({"confirmed": true, "tool_call": call}))
                    .collect();
                let answer = json!({"type": "USER_CONFIRM_RESULT", "reply_id": event["reply_id"], "confirm_results": results});
                let (code, body) = h.chat(user, s, answer).await;
                assert_eq!(code, 200, "{body}");
            }
            _ => {}
        }
    }
    h.wait_not_running(user, s).await;
}

#[tokio::test]
async fn a_tenant_that_confirms_everything_reaches_nothing_of_the_server() {
    let Some(h) = Harness::start_sandboxed(SandboxConfig::default()).await else {
        return;
    };
    let data = h.dir.path().to_path_buf();
    std::fs::write(data.join(KEY_FILE), KEY_CANARY).unwrap();

    // Bob: an agent whose name lands in the database, a private file.
    let (code, bob_agent) = h
        .post(
            "/agent/",
            "bob",
            json!({"name": DB_CANARY, "system_prompt": "x"}),
        )
        .await;
    assert_eq!(code, 201, "{bob_agent}");
    let bob_id = bob_agent["agent_id"].as_str().unwrap().to_owned();
    let bob_dir = h.workspace_dir("bob", &bob_id);
    std::fs::create_dir_all(&bob_dir).unwrap();
    std::fs::write(bob_dir.join("private.txt"), BOB_CANARY).unwrap();

    let s = h.setup("alice").await;
    let alice_dir = h.workspace_dir("alice", &s.agent_id);
    let key = data.join(KEY_FILE).display().to_string();
    let bob_file = bob_dir.join("private.txt").display().to_string();
    let planted = format!("/tmp/oxiscope-planted-{}", std::process::id());
    let d = data.display().to_string();

    // Round 1: plant links to the root, the data directory and Bob.
    h.fake.push(round(&[(
        "Bash",
        json!({"command": format!("ln -s / root; ln -s {d} datadir; ln -s {} bob; echo planted", bob_dir.display())}),
    )]));
    // Round 2: every way to read what is not the tenant's.
    h.fake.push(round(&[
        ("Read", json!({"file_path": "../../secret.key"})),
        ("Read", json!({"file_path": key})),
        (
            "Read",
            json!({"file_path": format!("/workspace/root{key}")}),
        ),
        (
            "Read",
            json!({"file_path": format!("/workspace/datadir/{KEY_FILE}")}),
        ),
        ("Read", json!({"file_path": bob_file})),
        ("Read", json!({"file_path": "/workspace/bob/private.txt"})),
        (
            "Read",
            json!({"file_path": "/workspace/../bob/private.txt"}),
        ),
        ("Read", json!({"file_path": "/proc/self/environ"})),
        (
            "Glob",
            json!({"pattern": "**/private.txt", "path": "/workspace/root"}),
        ),
        ("Glob", json!({"pattern": "/**/secret.key"})),
        (
            "Grep",
            json!({"pattern": "CANARY", "path": "/workspace", "output_mode": "content"}),
        ),
        (
            "Grep",
            json!({"pattern": "CANARY", "path": "/workspace/datadir"}),
        ),
    ]));
    // Round 3: the shell.
    h.fake.push(round(&[(
        "Bash",
        json!({"command": format!(
            "env; cat /proc/self/environ /proc/1/environ; strings {d}/*.db* | head -50; \
             cat {key} {bob_file} ../*/private.txt 2>&1; find / -name 'private.txt' -o -name '*.db' 2>/dev/null | head; \
             cat datadir/* root{key} bob/private.txt 2>&1; ls -la {d} 2>&1"
        )}),
    )]));
    // Round 3b: every process the sandbox can see, and what it holds.
    h.fake.push(round(&[(
        "Bash",
        json!({"command": oxiscope_test_support::PROC_SWEEP}),
    )]));
    // Round 4: writes outside.
    h.fake.push(round(&[
        ("Write", json!({"file_path": planted, "content": "x"})),
        ("Write", json!({"file_path": "../../planted", "content": "x"})),
        ("Write", json!({"file_path": format!("{d}/planted"), "content": "x"})),
        ("Write", json!({"file_path": "/workspace/root/tmp/planted-link", "content": "x"})),
        ("Write", json!({"file_path": "/workspace/bob/planted", "content": "x"})),
        ("Edit", json!({"file_path": format!("/workspace/datadir/{KEY_FILE}"), "old_string": "MASTERKEY", "new_string": "owned"})),
        ("Bash", json!({"command": format!("echo x > {planted}-bash; touch {d}/planted-bash {}/planted-bash; echo done", bob_dir.display())})),
    ]));
    h.fake.push(text_answer("Done."));

    let mut sse = h.subscribe("alice", &s, None).await;
    run_confirming(&h, "alice", &s, &mut sse, user_msg("go")).await;

    // Everything the tenant could see: the events, the stored messages,
    // what was sent to its model.
    let page = h.messages("alice", &s).await;
    let mut seen = sse.raw.join("\n");
    seen.push_str(&page.to_string());
    for request in h.fake.requests() {
        seen.push_str(&request.body_text());
    }
    assert!(seen.contains("planted"), "the attack did not run: {seen}");
    eprintln!(
        "DEBUG requests={} pending={}",
        h.fake.request_count(),
        h.fake.pending_responses()
    );
    for r in h.fake.requests() {
        let b = r.body_text();
        eprintln!(
            "DEBUG REQ len={} tail={}",
            b.len(),
            &b[b.len().saturating_sub(300)..]
        );
    }
    assert!(
        seen.contains("SWEEP-DONE"),
        "the /proc sweep did not finish: {seen}"
    );
    assert!(seen.contains("== /proc/1"), "{seen}");
    // Nothing of the server's environment (its provider keys, its
    // database URL...) is visible in any process inside.
    if let Some(pair) = oxiscope_test_support::leaked_env_pair(&seen) {
        panic!("the server's {pair:?} reached the tenant");
    }
    assert!(seen.contains("outside the workspace"), "{seen}");
    for canary in [
        KEY_CANARY,
        DB_CANARY,
        BOB_CANARY,
        "CARGO_MANIFEST_DIR",
        "CARGO_PKG_NAME",
    ] {
        assert!(!seen.contains(canary), "{canary} reached the tenant");
    }
    // Nothing was written outside alice's workspace.
    for path in [
        planted.clone(),
        format!("{planted}-bash"),
        format!("{d}/planted"),
        format!("{d}/planted-bash"),
        "/planted".to_owned(),
        "/tmp/planted-link".to_owned(),
        bob_dir.join("planted").display().to_string(),
        bob_dir.join("planted-bash").display().to_string(),
    ] {
        assert!(!std::path::Path::new(&path).exists(), "{path} was written");
    }
    assert_eq!(
        std::fs::read_to_string(data.join(KEY_FILE)).unwrap(),
        KEY_CANARY
    );
    // The links are alice's own business, inside her workspace.
    assert!(alice_dir.join("root").is_symlink());
}

#[tokio::test]
async fn two_users_naming_the_same_workspace_get_different_directories() {
    let Some(h) = Harness::start_sandboxed(SandboxConfig::default()).await else {
        return;
    };
    let mut dirs = Vec::new();
    for user in ["alice", "bob"] {
        let s = h.setup(user).await;
        let (code, body) = h
            .post(
                "/sessions/",
                user,
                json!({"agent_id": s.agent_id, "workspace_id": "shared",
                       "chat_model_config": {"type": "openai_credential", "credential_id": s.credential_id, "model": "gpt-4.1", "parameters": {}}}),
            )
            .await;
        assert_eq!(code, 201, "{body}");
        let session = Setup {
            session_id: body["session_id"].as_str().unwrap().to_owned(),
            ..s
        };
        h.fake.push(round(&[(
            "Bash",
            json!({"command": format!("echo {user} > owner.txt; cat owner.txt")}),
        )]));
        h.fake.push(text_answer("ok"));
        let mut sse = h.subscribe(user, &session, None).await;
        run_confirming(&h, user, &session, &mut sse, user_msg("write")).await;
        dirs.push(h.workspace_dir(user, "shared"));
    }
    assert_ne!(dirs[0], dirs[1]);
    assert_eq!(
        std::fs::read_to_string(dirs[0].join("owner.txt")).unwrap(),
        "alice\n"
    );
    assert_eq!(
        std::fs::read_to_string(dirs[1].join("owner.txt")).unwrap(),
        "bob\n"
    );
    // An id that would climb out is refused.
    let s = h.setup("alice").await;
    let (code, _) = h
        .post(
            "/sessions/",
            "alice",
            json!({"agent_id": s.agent_id, "workspace_id": "../bob"}),
        )
        .await;
    assert_eq!(code, 422);
}
