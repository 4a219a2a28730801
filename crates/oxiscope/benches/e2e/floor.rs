//! The floor: a bare Rust client doing the same HTTP work as the agent and
//! nothing else. It keeps the conversation as small typed structs and
//! serialises it per request, splits the SSE body into lines on bytes,
//! deserialises each chunk from the byte slice into small typed structs
//! (borrowing its strings where no escape forces a copy), appends text and
//! each call's arguments to one `String`, runs the tool calls (a round's
//! calls concurrently) and posts the results back.

use std::borrow::Cow;

use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// A message of the conversation, as the wire wants it.
#[derive(Debug, Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
enum Message {
    System {
        content: String,
    },
    User {
        content: String,
    },
    Assistant {
        content: String,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<Call>,
    },
    Tool {
        tool_call_id: String,
        content: String,
    },
}

#[derive(Debug, Serialize)]
struct Call {
    id: String,
    #[serde(rename = "type")]
    kind: &'static str,
    function: Function,
}

#[derive(Debug, Serialize)]
struct Function {
    name: String,
    arguments: String,
}

#[derive(Serialize)]
struct Request<'a> {
    model: &'a str,
    messages: &'a [Message],
    tools: &'a Value,
    stream: bool,
    stream_options: StreamOptions,
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

#[derive(Deserialize)]
struct Chunk<'a> {
    #[serde(default, borrow)]
    choices: Vec<Choice<'a>>,
    #[serde(default)]
    usage: Option<Usage>,
}

#[derive(Deserialize)]
struct Choice<'a> {
    #[serde(default, borrow)]
    delta: Delta<'a>,
}

#[derive(Default, Deserialize)]
struct Delta<'a> {
    #[serde(default, borrow)]
    content: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    tool_calls: Vec<CallDelta<'a>>,
}

#[derive(Deserialize)]
struct CallDelta<'a> {
    #[serde(default)]
    index: usize,
    #[serde(default, borrow)]
    id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    function: Option<FunctionDelta<'a>>,
}

#[derive(Deserialize)]
struct FunctionDelta<'a> {
    #[serde(default, borrow)]
    name: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    arguments: Option<Cow<'a, str>>,
}

#[derive(Debug, Default, Deserialize)]
struct Usage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
}

#[derive(Deserialize)]
struct EchoArgs {
    n: u32,
}

/// What a reply did, for the caller's checks.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Model calls made.
    pub calls: usize,
    /// Tool calls run.
    pub tools: usize,
    /// Bytes of answer text streamed.
    pub text: usize,
    /// Tokens the server reported, in + out.
    pub tokens: u64,
}

/// One model answer, accumulated.
#[derive(Default)]
struct Answer {
    text: String,
    /// (id, name, arguments) per call index.
    calls: Vec<(String, String, String)>,
    usage: Usage,
}

/// The tool list the agent sends (the same schema).
pub fn tools() -> Value {
    json!([{"type": "function", "function": {"name": "echo", "description": "Echo a number.",
        "parameters": {"type": "object", "properties": {"n": {"type": "integer"}},
                       "required": ["n"]}}}])
}

/// A plain reqwest client (rustls needs a crypto provider even for http).
pub fn client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder().build().unwrap()
}

/// One reply: `user` asks, then model calls and tool rounds until the model
/// answers without a call.
pub async fn reply(client: &reqwest::Client, url: &str, tools: &Value, user: &str) -> Outcome {
    let mut messages = vec![
        Message::System {
            content: super::SYSTEM_PROMPT.to_owned(),
        },
        Message::User {
            content: user.to_owned(),
        },
    ];
    let mut outcome = Outcome::default();
    loop {
        let answer = call(client, url, tools, &messages).await;
        outcome.calls += 1;
        outcome.text += answer.text.len();
        outcome.tokens += answer.usage.prompt_tokens + answer.usage.completion_tokens;
        if answer.calls.is_empty() {
            return outcome;
        }
        let results = futures_util::future::join_all(
            answer
                .calls
                .iter()
                .map(|(id, _, args)| async move { (id.clone(), echo(args)) }),
        )
        .await;
        outcome.tools += results.len();
        messages.push(Message::Assistant {
            content: answer.text,
            tool_calls: answer
                .calls
                .into_iter()
                .map(|(id, name, arguments)| Call {
                    id,
                    kind: "function",
                    function: Function { name, arguments },
                })
                .collect(),
        });
        messages.extend(
            results
                .into_iter()
                .map(|(tool_call_id, content)| Message::Tool {
                    tool_call_id,
                    content,
                }),
        );
    }
}

fn echo(args: &str) -> String {
    match serde_json::from_str::<EchoArgs>(args) {
        Ok(a) => a.n.to_string(),
        Err(e) => format!("Error: {e}"),
    }
}

/// One streamed model call.
async fn call(client: &reqwest::Client, url: &str, tools: &Value, messages: &[Message]) -> Answer {
    let body = serde_json::to_vec(&Request {
        model: "gpt-bench",
        messages,
        tools,
        stream: true,
        stream_options: StreamOptions {
            include_usage: true,
        },
    })
    .unwrap();
    let response = client
        .post(url)
        .header("content-type", "application/json")
        .bearer_auth("sk-bench")
        .body(body)
        .send()
        .await
        .unwrap();
    assert!(response.status().is_success(), "{}", response.status());
    let mut stream = response.bytes_stream();
    let mut buffer: Vec<u8> = Vec::new();
    let mut answer = Answer::default();
    let mut done = false;
    while let Some(bytes) = stream.next().await {
        buffer.extend_from_slice(&bytes.unwrap());
        let mut start = 0;
        while let Some(end) = memchr::memchr(b'\n', &buffer[start..]) {
            let line = &buffer[start..start + end];
            start += end + 1;
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            let Some(data) = line.strip_prefix(b"data:") else {
                continue;
            };
            let data = data.strip_prefix(b" ").unwrap_or(data);
            if data == b"[DONE]" {
                done = true;
                continue;
            }
            apply(&mut answer, serde_json::from_slice(data).unwrap());
        }
        buffer.drain(..start);
    }
    assert!(done, "the stream ended before [DONE]");
    answer
}

fn apply(answer: &mut Answer, chunk: Chunk<'_>) {
    if let Some(usage) = chunk.usage {
        answer.usage = usage;
    }
    let Some(choice) = chunk.choices.into_iter().next() else {
        return;
    };
    if let Some(text) = choice.delta.content {
        answer.text.push_str(&text);
    }
    for call in choice.delta.tool_calls {
        if answer.calls.len() <= call.index {
            answer.calls.resize_with(call.index + 1, Default::default);
        }
        let slot = &mut answer.calls[call.index];
        if let Some(id) = call.id {
            slot.0 = id.into_owned();
        }
        if let Some(f) = call.function {
            if let Some(name) = f.name {
                slot.1.push_str(&name);
            }
            if let Some(args) = f.arguments {
                slot.2.push_str(&args);
            }
        }
    }
}
