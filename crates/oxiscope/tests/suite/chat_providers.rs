//! `oxiscope chat` with the providers of the registry beyond Chat
//! Completions: Gemini and OpenAI's Responses API against scripted fake
//! servers in their own wire formats, and the errors of a provider without
//! its key or of a name that is not listed.

use oxiscope_test_support::ScriptedResponse;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::chat_env::{ChatEnv, run, stderr, stdout};

/// A `streamGenerateContent?alt=sse` body: each event one whole
/// `GenerateContentResponse`, the last with a finish reason and usage.
fn gemini_stream(parts: &[Value], prompt: u64, output: u64) -> ScriptedResponse {
    let (last, first) = parts.split_last().unwrap_or((&Value::Null, &[]));
    let mut body = String::new();
    for part in first {
        let event = json!({"candidates": [{"content": {"role": "model", "parts": [part]},
            "index": 0}], "modelVersion": "gemini-2.5-flash"});
        body.push_str(&format!("data: {event}\r\n\r\n"));
    }
    let event = json!({
        "candidates": [{"content": {"role": "model", "parts": [last]}, "finishReason": "STOP",
            "index": 0}],
        "usageMetadata": {"promptTokenCount": prompt, "candidatesTokenCount": output,
            "totalTokenCount": prompt + output},
        "modelVersion": "gemini-2.5-flash",
    });
    body.push_str(&format!("data: {event}\r\n\r\n"));
    ScriptedResponse::new(200)
        .with_header("content-type", "text/event-stream")
        .with_body(body)
}

/// The `parts` of every content of a Gemini request body, flattened.
fn sent_parts(body: &Value) -> Vec<Value> {
    body["contents"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|c| c["parts"].as_array().cloned().unwrap_or_default())
        .collect()
}

#[test]
fn gemini_runs_a_tool_and_answers_through_its_own_wire() {
    let env = ChatEnv::new();
    env.server.push(gemini_stream(
        &[json!({"functionCall": {"name": "Bash", "args": {"command": "echo hi > made.txt"}}})],
        40,
        12,
    ));
    env.server.push(gemini_stream(
        &[json!({"text": "Made "}), json!({"text": "it."})],
        60,
        3,
    ));
    let mut cmd = env.bare(&[
        "chat",
        "--provider",
        "gemini",
        "--no-color",
        "--allow",
        "Bash(echo:*)",
        "-p",
        "make a file",
    ]);
    cmd.env("GEMINI_API_KEY", "g-key")
        .env("GOOGLE_GEMINI_BASE_URL", env.server.base_url());
    let out = run(cmd);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Made it.\n");
    assert_eq!(
        std::fs::read_to_string(env.work().join("made.txt")).unwrap(),
        "hi\n"
    );

    let requests = env.requests();
    assert_eq!(requests.len(), 2);
    for sent in &requests {
        // The default model, at the base URL with the API version added.
        assert_eq!(
            sent.path,
            "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
        );
        assert_eq!(sent.query.as_deref(), Some("alt=sse"));
        assert_eq!(sent.header("x-goog-api-key"), Some("g-key"));
    }
    let first = requests[0].body_json().unwrap();
    let tools: Vec<&str> = first["tools"][0]["functionDeclarations"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["name"].as_str())
        .collect();
    assert!(tools.contains(&"Bash"), "{tools:?}");
    assert!(first["systemInstruction"]["parts"][0]["text"].is_string());
    // The second turn sends the call back and its result (the formatter
    // writes proto field names, which the API also reads, as AgentScope's
    // payloads do).
    let parts = sent_parts(&requests[1].body_json().unwrap());
    let named = |key: &str| {
        parts
            .iter()
            .find_map(|p| p.get(key))
            .map(|v| v["name"].clone())
    };
    assert_eq!(named("function_call"), Some(json!("Bash")), "{parts:?}");
    assert_eq!(named("function_response"), Some(json!("Bash")), "{parts:?}");
}

#[test]
fn gemini_takes_its_settings_from_the_config_file() {
    let env = ChatEnv::new();
    let base = format!("{}/v1beta", env.server.base_url());
    std::fs::write(
        env.config().join("config.toml"),
        format!(
            "provider = \"gemini\"\nmodel = \"gemini-2.5-flash-lite\"\napi_key = \"g-file\"\n\
             base_url = \"{base}\"\n"
        ),
    )
    .unwrap();
    env.server
        .push(gemini_stream(&[json!({"text": "From the file."})], 5, 4));
    let out = run(env.bare(&["chat", "-p", "hi", "--output", "json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let msg: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(msg["finished_reason"], "completed");
    assert_eq!(msg["usage"]["input_tokens"], 5);
    let sent = &env.requests()[0];
    assert_eq!(
        sent.path,
        "/v1beta/models/gemini-2.5-flash-lite:streamGenerateContent"
    );
    assert_eq!(sent.header("x-goog-api-key"), Some("g-file"));
}

#[test]
fn openai_responses_calls_the_responses_api() {
    let env = ChatEnv::new();
    let events = [
        json!({"type": "response.created", "sequence_number": 0,
            "response": {"id": "resp_1", "object": "response", "status": "in_progress",
                "output": []}}),
        json!({"type": "response.output_item.added", "sequence_number": 1, "output_index": 0,
            "item": {"id": "msg_1", "type": "message", "status": "in_progress",
                "role": "assistant", "content": []}}),
        json!({"type": "response.output_text.delta", "sequence_number": 2, "item_id": "msg_1",
            "output_index": 0, "content_index": 0, "delta": "Via responses."}),
        json!({"type": "response.output_item.done", "sequence_number": 3, "output_index": 0,
            "item": {"id": "msg_1", "type": "message", "status": "completed",
                "role": "assistant", "content": [{"type": "output_text",
                    "text": "Via responses.", "annotations": []}]}}),
        json!({"type": "response.completed", "sequence_number": 4, "response": {
            "id": "resp_1", "object": "response", "status": "completed",
            "usage": {"input_tokens": 9, "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": 3, "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": 12}}}),
    ];
    let body: String = events
        .iter()
        .map(|e| ScriptedResponse::sse_frame(e["type"].as_str(), &e.to_string()))
        .collect();
    env.server.push(
        ScriptedResponse::new(200)
            .with_header("content-type", "text/event-stream")
            .with_body(body),
    );
    let mut cmd = env.bare(&["chat", "--provider", "openai-responses", "-p", "hi"]);
    cmd.env("OPENAI_API_KEY", "sk-resp")
        .env("OPENAI_BASE_URL", format!("{}/v1", env.server.base_url()));
    let out = run(cmd);
    assert_eq!(stdout(&out), "Via responses.\n", "{}", stderr(&out));
    let sent = &env.requests()[0];
    assert_eq!(sent.path, "/v1/responses");
    assert_eq!(sent.header("authorization"), Some("Bearer sk-resp"));
    assert_eq!(sent.body_json().unwrap()["model"], "gpt-4.1-mini");
}

#[test]
fn a_provider_without_its_key_names_the_variables_and_sends_nothing() {
    let env = ChatEnv::new();
    for (name, vars) in [
        ("gemini", "GOOGLE_API_KEY or GEMINI_API_KEY"),
        ("minimax", "MINIMAX_API_KEY"),
    ] {
        let out = run(env.bare(&["chat", "--provider", name, "-p", "hi"]));
        assert_eq!(out.status.code(), Some(2));
        let err = stderr(&out);
        assert!(
            err.starts_with(&format!(
                "oxiscope chat: {name} needs an API key ({vars}).\n"
            )),
            "{err}"
        );
        assert_eq!(err.lines().count(), 3, "{err}");
    }
    assert!(env.requests().is_empty());
}

#[test]
fn the_provider_flag_takes_and_lists_the_registry_names() {
    let env = ChatEnv::new();
    let out = run(env.bare(&["chat", "--provider", "bard", "-p", "hi"]));
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    for name in ["openai-responses", "gemini", "minimax", "vllm"] {
        assert!(err.contains(name), "{name}: {err}");
    }
    let help = stdout(&run(env.bare(&["chat", "--help"])));
    let gemini = help
        .lines()
        .find(|l| l.trim_start().starts_with("- gemini:"));
    assert!(
        gemini.is_some_and(|l| l.ends_with("Google Gemini API (GOOGLE_API_KEY or GEMINI_API_KEY)")),
        "{help}"
    );
    assert!(help.contains("GOOGLE_GEMINI_BASE_URL"), "{help}");
    assert!(help.contains("MINIMAX_API_KEY"), "{help}");
}
