//! Middleware: onion order, rewriting, short-circuiting, whole responses.

use std::sync::{Arc, Mutex};

use futures_util::StreamExt;
use oxiscope_message::ToolResultState;
use oxiscope_tool::{
    FunctionTool, Next, SessionState, ToolCallContext, ToolChunk, ToolInvocation, ToolMiddleware,
    ToolStream, Toolkit, collect, replay,
};
use pretty_assertions::assert_eq;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::support::{expect, run};

/// Echo a word.
#[derive(Deserialize, JsonSchema)]
struct Echo {
    /// The word.
    word: String,
}

type Log = Arc<Mutex<Vec<String>>>;

fn echo(log: Log) -> FunctionTool {
    FunctionTool::new("echo", move |e: Echo| {
        let log = Arc::clone(&log);
        async move {
            log.lock().unwrap().push("tool".into());
            e.word
        }
    })
}

#[derive(Debug)]
struct Tracer {
    name: &'static str,
    log: Log,
}

impl ToolMiddleware for Tracer {
    fn call(&self, call: ToolInvocation, next: Next) -> ToolStream {
        self.log
            .lock()
            .unwrap()
            .push(format!("{} before", self.name));
        let (name, log) = (self.name, Arc::clone(&self.log));
        let tagged = next.run(call).map(move |mut chunk| {
            log.lock().unwrap().push(format!("{name} after"));
            if let Some(oxiscope_message::MediaBlock::Text(t)) = chunk.content.first_mut() {
                t.text = format!("{name}({})", t.text);
            }
            chunk
        });
        Box::pin(tagged)
    }
}

fn ctx() -> ToolCallContext {
    ToolCallContext::local(std::env::temp_dir()).with_session(SessionState::default())
}

#[tokio::test]
async fn the_first_middleware_registered_is_the_outermost() {
    let log: Log = Arc::default();
    let mut toolkit = Toolkit::new();
    toolkit.register(echo(Arc::clone(&log))).unwrap();
    toolkit.add_middleware(Tracer {
        name: "outer",
        log: Arc::clone(&log),
    });
    toolkit.add_middleware(Tracer {
        name: "inner",
        log: Arc::clone(&log),
    });
    let response = run(&toolkit, "echo", json!({"word": "hi"}), ctx()).await;
    assert_eq!(
        expect(&response, ToolResultState::Success),
        "outer(inner(hi))"
    );
    assert_eq!(
        *log.lock().unwrap(),
        [
            "outer before",
            "inner before",
            "tool",
            "inner after",
            "outer after"
        ]
    );
}

#[derive(Debug)]
struct Rewrite;

impl ToolMiddleware for Rewrite {
    fn call(&self, mut call: ToolInvocation, next: Next) -> ToolStream {
        call.input["word"] = json!("rewritten");
        next.run(call)
    }
}

#[derive(Debug)]
struct Block;

impl ToolMiddleware for Block {
    fn call(&self, call: ToolInvocation, _next: Next) -> ToolStream {
        let chunk = ToolChunk::error(format!("{} is blocked", call.tool.name()));
        Box::pin(futures_util::stream::once(async move { chunk }))
    }
}

#[tokio::test]
async fn middleware_can_rewrite_the_input_or_skip_the_tool() {
    let log: Log = Arc::default();
    let mut toolkit = Toolkit::new();
    toolkit.register(echo(Arc::clone(&log))).unwrap();
    toolkit.add_middleware(Rewrite);
    let response = run(&toolkit, "echo", json!({"word": "hi"}), ctx()).await;
    assert_eq!(expect(&response, ToolResultState::Success), "rewritten");

    toolkit.add_middleware(Block);
    let blocked = run(&toolkit, "echo", json!({"word": "hi"}), ctx()).await;
    assert_eq!(expect(&blocked, ToolResultState::Error), "echo is blocked");
    assert_eq!(
        log.lock().unwrap().len(),
        1,
        "the tool ran only the first time"
    );
}

#[derive(Debug)]
struct Shout;

impl ToolMiddleware for Shout {
    fn call(&self, call: ToolInvocation, next: Next) -> ToolStream {
        let stream = next.run(call);
        Box::pin(
            futures_util::stream::once(async move {
                let mut whole = collect(stream).await;
                for block in &mut whole.content {
                    if let oxiscope_message::MediaBlock::Text(t) = block {
                        t.text = t.text.to_uppercase();
                    }
                }
                whole
            })
            .flat_map(replay),
        )
    }
}

#[tokio::test]
async fn middleware_can_work_on_the_whole_response_of_a_streaming_tool() {
    #[derive(Debug)]
    struct Words;
    impl oxiscope_tool::Tool for Words {
        fn name(&self) -> &str {
            "words"
        }
        fn description(&self) -> &str {
            "streams words"
        }
        fn input_schema(&self) -> &serde_json::Value {
            static S: std::sync::LazyLock<serde_json::Value> =
                std::sync::LazyLock::new(|| json!({"type": "object", "properties": {}}));
            &S
        }
        fn call(&self, _: serde_json::Value, _: ToolCallContext) -> ToolStream {
            Box::pin(futures_util::stream::iter([
                ToolChunk::partial("a "),
                ToolChunk::text("b"),
            ]))
        }
    }
    let mut toolkit = Toolkit::new();
    toolkit.register(Words).unwrap();
    toolkit.add_middleware(Shout);
    let response = run(&toolkit, "words", json!({}), ctx()).await;
    assert_eq!(expect(&response, ToolResultState::Success), "A B");
}
