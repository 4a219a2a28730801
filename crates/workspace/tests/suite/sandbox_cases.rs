// The sandbox as an attacker meets it: what commands and file tools can
// and cannot reach. Included once per tier by `sandbox.rs`, where `TIER`
// names the tier.

use std::io::ErrorKind;
use std::path::Path;
use std::time::{Duration, Instant};

use oxiscope_tool::{ExecBackend, ExecOutput, ExecRequest, GlobRequest, GrepMode, GrepRequest};
use oxiscope_workspace::{Limits, SandboxConfig, Workspace};
use pretty_assertions::assert_eq;
use tokio_util::sync::CancellationToken;

use crate::suite::support::{Scratch, require_sandbox};

async fn run(backend: &dyn ExecBackend, command: &str) -> ExecOutput {
    run_for(backend, command, Duration::from_secs(30)).await
}

async fn run_for(backend: &dyn ExecBackend, command: &str, timeout: Duration) -> ExecOutput {
    backend
        .exec(
            ExecRequest {
                command: command.to_owned(),
                cwd: "/workspace".into(),
                timeout,
                max_output: 64 * 1024,
            },
            CancellationToken::new(),
        )
        .await
        .unwrap()
}

/// A search with the defaults the tests do not vary.
fn grep_request(
    pattern: impl Into<String>,
    root: impl Into<std::path::PathBuf>,
    mode: GrepMode,
    line_numbers: bool,
) -> GrepRequest {
    GrepRequest {
        pattern: pattern.into(),
        root: root.into(),
        mode,
        glob: None,
        file_type: None,
        before: 0,
        after: 0,
        line_numbers,
        case_insensitive: false,
        multiline: false,
        max_entries: 100,
    }
}

fn text(out: &ExecOutput) -> String {
    String::from_utf8_lossy(&out.output).into_owned()
}

#[tokio::test]
async fn commands_run_in_the_workspace_and_their_files_land_there() {
    let scratch = Scratch::new();
    let ws = require_sandbox!(scratch);
    let out = run(&*ws.backend(), "pwd; echo hello > note.txt; echo $HOME").await;
    assert_eq!(out.exit_code, Some(0), "{}", text(&out));
    assert_eq!(text(&out), "/workspace\n/workspace\n");
    assert_eq!(
        std::fs::read_to_string(scratch.root().join("note.txt")).unwrap(),
        "hello\n"
    );
}

#[tokio::test]
async fn the_servers_environment_never_reaches_a_command() {
    let scratch = Scratch::new();
    let ws = require_sandbox!(scratch);
    let out = run(
        &*ws.backend(),
        "env; cat /proc/self/environ | tr '\\0' '\\n'",
    )
    .await;
    let env = text(&out);
    // Cargo gives every test process these; the sandbox must not inherit them.
    for host_var in ["CARGO_MANIFEST_DIR", "CARGO_PKG_NAME", "RUST_"] {
        assert!(!env.contains(host_var), "{host_var} leaked:\n{env}");
    }
    assert!(env.contains("HOME=/workspace"), "{env}");
}

/// Fails with what leaked when `seen`, gathered inside a sandbox over
/// `scratch`, shows anything of this process: a variable of its
/// environment or the host path of the workspace.
fn assert_nothing_of_the_host(seen: &str, scratch: &Scratch) {
    if let Some(pair) = oxiscope_test_support::leaked_env_pair(seen) {
        panic!("the server's {pair:?} is visible inside:\n{seen}");
    }
    let host = scratch.path().display().to_string();
    // Mount tables name the workspace's directory on its file system;
    // process environments, command lines and descriptors never may.
    let outside_mounts: String = seen
        .lines()
        .filter(|l| !l.contains("mountinfo"))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        !outside_mounts.contains(&host),
        "the host path {host} is visible inside:\n{seen}"
    );
}

#[tokio::test]
async fn no_process_inside_shows_the_servers_environment_command_line_or_files() {
    let scratch = Scratch::new();
    let ws = require_sandbox!(scratch);
    let out = run_for(
        &*ws.backend(),
        oxiscope_test_support::PROC_SWEEP,
        Duration::from_secs(60),
    )
    .await;
    let seen = text(&out);
    assert!(
        seen.contains("SWEEP-DONE"),
        "the sweep did not finish:\n{seen}"
    );
    // The launcher's init process is visible and was read.
    assert!(seen.contains("== /proc/1\n"), "{seen}");
    assert!(seen.contains("fd /proc/1/fd/0"), "{seen}");
    assert_nothing_of_the_host(&seen, &scratch);
}

#[tokio::test]
async fn an_mcp_server_declared_by_a_tenant_reads_nothing_of_the_server() {
    let scratch = Scratch::new();
    let ws = require_sandbox!(scratch);
    let script = format!(
        "{{ {} }} > /workspace/mcp-sweep.txt 2>&1",
        oxiscope_test_support::PROC_SWEEP
    );
    let decl: oxiscope_workspace::McpDeclaration = serde_json::from_value(serde_json::json!({
        "name": "sweep", "is_stateful": true,
        "mcp_config": {"type": "stdio_mcp", "command": "bash", "args": ["-c", script],
                       "env": {"TENANT_MARK": "declared-by-the-tenant"}}
    }))
    .unwrap();
    ws.add_mcp(decl, "a", "s").await.unwrap();
    // Not an MCP server: it fails the handshake, after the sweep.
    let _ = oxiscope_workspace::assemble_toolkit(&ws, "a", "s").await;
    let path = scratch.root().join("mcp-sweep.txt");
    let deadline = Instant::now() + Duration::from_secs(30);
    let seen = loop {
        let seen = std::fs::read_to_string(&path).unwrap_or_default();
        if seen.contains("SWEEP-DONE") || Instant::now() > deadline {
            break seen;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(
        seen.contains("SWEEP-DONE"),
        "the sweep did not finish:\n{seen}"
    );
    // Its own declared variable reached it...
    assert!(
        seen.contains("TENANT_MARK=declared-by-the-tenant"),
        "{seen}"
    );
    // ...and nothing of the server did.
    assert_nothing_of_the_host(&seen, &scratch);
}

#[tokio::test]
async fn nothing_of_the_host_outside_the_workspace_is_visible_or_writable() {
    let scratch = Scratch::new();
    let ws = require_sandbox!(scratch);
    let backend = ws.backend();
    let secret = scratch.path().join("secret.key");
    let out = run(
        &*backend,
        &format!(
            "cat ../secret.key {} 2>&1; ls / ; ls /proc | grep -c '^[0-9]'",
            secret.display()
        ),
    )
    .await;
    let seen = text(&out);
    assert!(!seen.contains("HOST-SECRET-KEY"), "{seen}");
    for host_only in ["root", "home", "work", "var", "opt", "srv"] {
        assert!(
            !seen.lines().any(|l| l == host_only),
            "/{host_only} is visible:\n{seen}"
        );
    }
    let processes: usize = seen.lines().last().unwrap().trim().parse().unwrap();
    assert!(processes < 10, "host processes are visible: {processes}");
    let out = run(
        &*backend,
        // `exec 2>&1` first: a failed redirection's message is the shell's
        // own, written to whatever stderr is when it fails, and two pipes
        // read concurrently have no order.
        "exec 2>&1; touch /usr/planted; echo x > /etc/planted; echo 61 > /proc/sys/vm/swappiness; echo done",
    )
    .await;
    assert!(text(&out).ends_with("done\n"), "{}", text(&out));
    assert!(!Path::new("/usr/planted").exists());
    assert!(!Path::new("/etc/planted").exists());
    assert_ne!(
        std::fs::read_to_string("/proc/sys/vm/swappiness")
            .unwrap()
            .trim(),
        "61"
    );
}

#[tokio::test]
async fn the_file_tools_refuse_every_way_out() {
    let scratch = Scratch::new();
    let ws = require_sandbox!(scratch);
    let backend = ws.backend();
    // Links planted from inside: to /, to the host directory, to the key.
    let out = run(
        &*backend,
        &format!(
            "ln -s / slash && ln -s {} up && ln -s ../secret.key key && mkfifo pipe && mkdir -p d && echo ok",
            scratch.path().display()
        ),
    )
    .await;
    assert_eq!(text(&out), "ok\n");
    for path in [
        "/workspace/slash/etc/hostname",
        "/workspace/up/secret.key",
        "/workspace/key",
        "/workspace/../secret.key",
        "/workspace/d/../../secret.key",
        "../secret.key",
        "/etc/hostname",
        "/dev/zero",
        "/proc/self/environ",
    ] {
        let err = backend.read(Path::new(path), 1 << 20).await.unwrap_err();
        assert!(
            matches!(
                err.kind(),
                ErrorKind::PermissionDenied | ErrorKind::NotFound
            ),
            "{path}: {err}"
        );
        assert!(
            !err.to_string().contains(&*scratch.path().to_string_lossy()),
            "{path}: the host path leaked: {err}"
        );
        assert!(backend.metadata(Path::new(path)).await.is_err(), "{path}");
    }
    for path in [
        "/workspace/up/planted",
        "/workspace/slash/tmp/planted",
        "/tmp/planted",
        "/workspace/../planted",
    ] {
        assert!(
            backend.write(Path::new(path), b"x").await.is_err(),
            "{path}"
        );
    }
    assert!(!scratch.path().join("planted").exists());
    assert!(!Path::new("/tmp/planted").exists());
    // A FIFO is refused at once instead of blocking the read.
    let err = tokio::time::timeout(
        Duration::from_secs(5),
        backend.read(Path::new("/workspace/pipe"), 100),
    )
    .await
    .expect("reading a FIFO must not block")
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput, "{err}");
    // Searches through the links find nothing outside.
    let found = backend
        .grep(grep_request(
            "HOST-SECRET",
            "/workspace",
            GrepMode::FilesWithMatches,
            false,
        ))
        .await
        .unwrap();
    assert!(found.entries.is_empty(), "{:?}", found.entries);
    for root in ["/workspace/slash", "/workspace/up", "/workspace/key", "/"] {
        assert!(
            backend
                .grep(grep_request("x", root, GrepMode::FilesWithMatches, false))
                .await
                .is_err(),
            "grep under {root}"
        );
    }
    for pattern in ["/etc/*", "/workspace/../*", "/workspace/slash/etc/*"] {
        let found = backend
            .glob(GlobRequest {
                pattern: pattern.into(),
                root: "/workspace".into(),
            })
            .await;
        assert!(
            found.as_ref().map_or(true, Vec::is_empty),
            "{pattern}: {found:?}"
        );
    }
}

#[tokio::test]
async fn file_tools_work_inside_and_name_paths_as_the_sandbox_sees_them() {
    let scratch = Scratch::new();
    let ws = require_sandbox!(scratch);
    let backend = ws.backend();
    backend
        .write(Path::new("/workspace/src/lib.rs"), b"fn needle() {}\n")
        .await
        .unwrap();
    backend
        .write(Path::new("notes/a.txt"), b"needle here\n")
        .await
        .unwrap();
    assert_eq!(
        backend
            .read(Path::new("/workspace/src/lib.rs"), 100)
            .await
            .unwrap(),
        b"fn needle() {}\n"
    );
    let out = run(&*backend, "cat notes/a.txt").await;
    assert_eq!(text(&out), "needle here\n");
    let found = backend
        .grep(grep_request(
            "needle",
            "/workspace",
            GrepMode::Content,
            true,
        ))
        .await
        .unwrap();
    let mut entries = found.entries.clone();
    entries.sort();
    assert_eq!(
        entries,
        [
            "/workspace/notes/a.txt:1:needle here",
            "/workspace/src/lib.rs:1:fn needle() {}"
        ]
    );
    let file = backend
        .grep(grep_request(
            "needle",
            "/workspace/src/lib.rs",
            GrepMode::FilesWithMatches,
            false,
        ))
        .await
        .unwrap();
    assert_eq!(file.entries, ["/workspace/src/lib.rs"]);
    let globbed = backend
        .glob(GlobRequest {
            pattern: "**/*.rs".into(),
            root: "/workspace".into(),
        })
        .await
        .unwrap();
    let paths: Vec<_> = globbed.iter().map(|m| m.path.clone()).collect();
    assert_eq!(paths, [Path::new("/workspace/src/lib.rs")]);
    let absolute = backend
        .glob(GlobRequest {
            pattern: "/workspace/notes/*.txt".into(),
            root: "/workspace/src".into(),
        })
        .await
        .unwrap();
    assert_eq!(absolute[0].path, Path::new("/workspace/notes/a.txt"));
}

#[tokio::test]
async fn a_fork_bomb_and_an_endless_writer_are_stopped() {
    let scratch = Scratch::new();
    let config = SandboxConfig {
        limits: Limits {
            processes: 64,
            file_size: 1 << 20,
            ..Limits::default()
        },
        ..SandboxConfig::default()
    };
    let ws = require_sandbox!(scratch, config);
    let backend = ws.backend();
    let started = Instant::now();
    let out = run_for(
        &*backend,
        "bomb() { bomb | bomb & }; bomb; sleep 1; echo still-here",
        Duration::from_secs(10),
    )
    .await;
    assert!(started.elapsed() < Duration::from_secs(30));
    assert!(
        text(&out).contains("fork") || text(&out).contains("Resource temporarily unavailable"),
        "the process limit did not bite: {}",
        text(&out)
    );
    // Nothing of it survives the call.
    let out = run(&*backend, "ls /proc | grep -c '^[0-9]'").await;
    let left: usize = text(&out).trim().parse().unwrap();
    assert!(left < 10, "{left} processes survived");

    let out = run_for(
        &*backend,
        "yes > big; echo exit=$?",
        Duration::from_secs(20),
    )
    .await;
    assert!(text(&out).contains("exit=153"), "{}", text(&out));
    let size = std::fs::metadata(scratch.root().join("big")).unwrap().len();
    assert!(size <= 1 << 20, "{size}");
}

#[tokio::test]
async fn the_network_is_off_unless_configured() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let probe =
        format!("(exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo reached || echo blocked");

    let scratch = Scratch::new();
    let ws = require_sandbox!(scratch);
    let out = run(&*ws.backend(), &probe).await;
    assert_eq!(text(&out), "blocked\n");
    assert!(ws.instructions().contains("no network"));

    let scratch = Scratch::new();
    let config = SandboxConfig {
        network: true,
        ..SandboxConfig::default()
    };
    let ws = require_sandbox!(scratch, config);
    let out = run(&*ws.backend(), &probe).await;
    assert_eq!(text(&out), "reached\n");
}

#[tokio::test]
async fn a_timeout_kills_the_whole_sandbox() {
    let scratch = Scratch::new();
    let ws = require_sandbox!(scratch);
    let started = Instant::now();
    let out = run_for(
        &*ws.backend(),
        "(sleep 61.25 &) ; sleep 61.25",
        Duration::from_millis(500),
    )
    .await;
    assert!(out.timed_out);
    assert!(started.elapsed() < Duration::from_secs(10));
    // The kill is delivered asynchronously to the sandbox's pid
    // namespace: wait (bounded) for its processes to disappear.
    let mut left = String::new();
    for _ in 0..100 {
        let ps = std::process::Command::new("pgrep")
            .args(["-f", "sleep 61.25"])
            .output()
            .unwrap();
        left = String::from_utf8_lossy(&ps.stdout).trim().to_owned();
        if left.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        left.is_empty(),
        "sandboxed processes outlived the call: {left}"
    );
}

#[tokio::test]
async fn offloaded_files_stay_inside_even_through_planted_links() {
    use oxiscope_message::{RichContent, ToolResultBlock, ToolResultState};
    use oxiscope_tool::Offloader;

    let scratch = Scratch::new();
    let ws = require_sandbox!(scratch);
    let backend = ws.backend();
    let out = run(
        &*backend,
        &format!(
            "mv sessions sessions.old && mkdir sessions && ln -s {} sessions/s1; echo ok",
            scratch.path().display()
        ),
    )
    .await;
    assert!(text(&out).contains("ok"), "{}", text(&out));
    let result = ToolResultBlock::new(
        "call-1",
        "Bash",
        RichContent::Text("a long output".into()),
        ToolResultState::Success,
    );
    assert!(ws.offload_tool_result("s1", &result).await.is_err());
    assert!(!scratch.path().join("tool_result-call-1.txt").exists());
    let path = ws.offload_tool_result("s2", &result).await.unwrap();
    assert_eq!(path, "/workspace/sessions/s2/tool_result-call-1.txt");
    let back = backend.read(Path::new(&path), 100).await.unwrap();
    assert_eq!(back, b"a long output");
}

#[tokio::test]
async fn files_and_declarations_survive_a_restart() {
    let scratch = Scratch::new();
    let decl: oxiscope_workspace::McpDeclaration = serde_json::from_value(serde_json::json!({
        "name": "tools", "is_stateful": true,
        "mcp_config": {"type": "stdio_mcp", "command": "node", "args": ["/workspace/server.js"]}
    }))
    .unwrap();
    {
        let ws = require_sandbox!(scratch);
        run(&*ws.backend(), "echo kept > kept.txt").await;
        ws.add_mcp(decl.clone(), "agent", "s1").await.unwrap();
        ws.close().await;
    }
    let ws = require_sandbox!(scratch);
    let out = run(&*ws.backend(), "cat kept.txt").await;
    assert_eq!(text(&out), "kept\n");
    assert_eq!(ws.mcp_declarations("agent", "s1").await.unwrap(), [decl]);
}

#[tokio::test]
async fn searches_never_follow_a_directory_swapped_for_a_link_mid_walk() {
    let scratch = Scratch::new();
    let ws = require_sandbox!(scratch);
    let backend = ws.backend();
    // A process inside keeps swapping a real directory and a link to the
    // host directory holding the secret, while the server walks.
    let setup = format!(
        "mkdir -p d && echo inside > d/f.txt && ln -s {} L && echo ready",
        scratch.path().display()
    );
    assert_eq!(text(&run(&*backend, &setup).await), "ready\n");
    let swapper = {
        let backend = backend.clone();
        tokio::spawn(async move {
            run_for(
                &*backend,
                "perl -e 'my $t = time + 6; while (time < $t) { rename \"d\", \"D\"; rename \"L\", \"d\"; rename \"d\", \"L\"; rename \"D\", \"d\" }'",
                Duration::from_secs(8),
            )
            .await
        })
    };
    let mut leaked = Vec::new();
    for _ in 0..150 {
        let found = backend
            .grep(grep_request(
                "SECRET|inside",
                "/workspace",
                GrepMode::Content,
                false,
            ))
            .await;
        if let Ok(found) = found {
            leaked.extend(found.entries.into_iter().filter(|e| e.contains("SECRET")));
        }
        if let Ok(found) = backend
            .glob(GlobRequest {
                pattern: "**/*".into(),
                root: "/workspace".into(),
            })
            .await
        {
            leaked.extend(
                found
                    .into_iter()
                    .map(|m| m.path.display().to_string())
                    .filter(|p| p.contains("secret")),
            );
        }
    }
    swapper.await.unwrap();
    assert!(
        leaked.is_empty(),
        "the walk followed a swapped link: {leaked:?}"
    );
}

#[tokio::test]
async fn what_the_server_writes_belongs_to_the_sandbox_and_memory_dirs_are_bounded() {
    let scratch = Scratch::new();
    let config = SandboxConfig {
        limits: Limits {
            tmpfs_size: 8 << 20,
            ..Limits::default()
        },
        ..SandboxConfig::default()
    };
    let ws = require_sandbox!(scratch, config);
    let backend = ws.backend();
    backend
        .write(Path::new("/workspace/made/by/tool.txt"), b"one\n")
        .await
        .unwrap();
    let out = run(
        &*backend,
        "echo two >> made/by/tool.txt && touch sessions/mine made/new && cat made/by/tool.txt",
    )
    .await;
    assert_eq!(text(&out), "one\ntwo\n");
    let out = run(
        &*backend,
        "head -c 20000000 /dev/zero > /tmp/big; echo tmp=$?; head -c 20000000 /dev/zero > /dev/shm/big; echo shm=$?; unshare -Ur true 2>/dev/null; echo userns=$?",
    )
    .await;
    let seen = text(&out);
    assert!(seen.contains("tmp=1"), "{seen}");
    assert!(seen.contains("shm=1"), "{seen}");
    assert!(!seen.contains("userns=0"), "{seen}");
}

#[tokio::test]
async fn a_declared_environment_cannot_lift_the_limits() {
    let scratch = Scratch::new();
    let ws = require_sandbox!(scratch);
    let decl = |env: serde_json::Value| -> oxiscope_workspace::McpDeclaration {
        serde_json::from_value(serde_json::json!({
            "name": "x", "is_stateful": true,
            "mcp_config": {"type": "stdio_mcp", "command": "bash",
                           "args": ["-c", "ulimit -v > /workspace/limit; echo \"$LD_X\" > /workspace/var"],
                           "env": env}
        }))
        .unwrap()
    };
    let err = ws
        .add_mcp(
            decl(serde_json::json!({"BASH_FUNC_ulimit%%": "() { :; }"})),
            "a",
            "s",
        )
        .await
        .unwrap_err();
    assert!(err.to_string().contains("not a plain name"), "{err}");
    // The launcher's options are NUL-separated: a value holding one would
    // add options of its own (here, the host's root in the sandbox).
    let err = ws
        .add_mcp(
            decl(serde_json::json!({"K": "x\0--bind\0/\0/host"})),
            "a",
            "s",
        )
        .await
        .unwrap_err();
    assert!(err.to_string().contains("NUL byte"), "{err}");
    // A startup file that would lift the limits and records which shell
    // read it: the limit-setting shell is `oxiscope-sandbox`, the
    // declared program `bash`.
    std::fs::write(
        scratch.root().join("pre.sh"),
        "echo \"$0\" >> /workspace/pre-ran; ulimit -v unlimited 2>/dev/null\n",
    )
    .unwrap();
    ws.add_mcp(
        decl(serde_json::json!({"BASH_ENV": "/workspace/pre.sh", "LD_X": "given"})),
        "a",
        "s",
    )
    .await
    .unwrap();
    let _ = oxiscope_workspace::assemble_toolkit(&ws, "a", "s").await;
    let read = |name: &str| std::fs::read_to_string(scratch.root().join(name)).unwrap_or_default();
    let deadline = Instant::now() + Duration::from_secs(20);
    while read("var").is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The program got its variables (BASH_ENV was read by it)...
    assert_eq!(read("var"), "given\n");
    // (Once per start: the supervisor restarts a server that exits.)
    let readers = read("pre-ran");
    assert!(
        !readers.is_empty() && readers.lines().all(|l| l == "bash"),
        "BASH_ENV reached another shell: {readers:?}"
    );
    // ...but the limits were set before, by a shell that never saw them:
    // the program's own `ulimit -v unlimited` cannot lift a hard limit.
    let limit = Limits::default().address_space / 1024;
    assert_eq!(read("limit"), format!("{limit}\n"));
}
