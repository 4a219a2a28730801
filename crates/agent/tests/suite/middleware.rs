//! Middleware hooks: system prompt, model call onion, permission review,
//! and asking for another round.

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use oxiscope_agent::{
    ActingCall, ActingNext, AgentState, Middleware, ModelCall, ModelNext, ReplyEndAction,
};
use oxiscope_message::{MediaBlock, Msg, PermissionBehavior, Role, ToolCallBlock};
use oxiscope_model::{ChatStream, DynChatModel, ModelError};
use oxiscope_permission::{PermissionContext, PermissionDecision};
use oxiscope_test_support::ScriptedTurn;
use oxiscope_tool::ToolStream;
use pretty_assertions::assert_eq;
use serde_json::Value;

use super::common::*;

#[derive(Debug, Default)]
struct Recorder {
    order: Arc<std::sync::Mutex<Vec<&'static str>>>,
    label: &'static str,
    rounds_wanted: AtomicUsize,
}

impl Middleware for Recorder {
    fn on_system_prompt(&self, prompt: String) -> String {
        format!("{prompt} [{}]", self.label)
    }

    fn on_model_call<'a>(
        &'a self,
        mut call: ModelCall<'a>,
        next: ModelNext<'a>,
    ) -> BoxFuture<'a, Result<ChatStream, ModelError>> {
        self.order.lock().unwrap().push(self.label);
        if self.label == "outer" {
            let mut msgs = call.messages.into_owned();
            msgs.push(Msg::from_text("note", Role::User, "added by middleware"));
            call.messages = Cow::Owned(msgs);
        }
        next.run(call)
    }

    fn on_check_permission(
        &self,
        call: &ToolCallBlock,
        _input: &Value,
        _context: &PermissionContext,
        decision: PermissionDecision,
    ) -> PermissionDecision {
        if call.name == "delete_file" && decision.behavior == PermissionBehavior::Ask {
            PermissionDecision::allow("allowed by the test middleware")
        } else {
            decision
        }
    }

    fn on_acting<'a>(
        &'a self,
        call: ActingCall,
        next: ActingNext<'a>,
    ) -> BoxFuture<'a, ToolStream> {
        Box::pin(async move {
            let label = self.label;
            let chunks = next.run(call).await;
            chunks
                .map(move |mut chunk| {
                    if let Some(MediaBlock::Text(t)) = chunk.content.first_mut() {
                        t.text = format!("{label}: {}", t.text);
                    }
                    chunk
                })
                .boxed()
        })
    }

    fn on_reply_end(&self, _reply: &Msg, _state: &AgentState) -> ReplyEndAction {
        if self.rounds_wanted.fetch_sub(1, Ordering::SeqCst) > 0 {
            ReplyEndAction::Continue("Keep going: check once more.".into())
        } else {
            self.rounds_wanted.store(0, Ordering::SeqCst);
            ReplyEndAction::Finish
        }
    }
}

#[tokio::test]
async fn middlewares_wrap_the_model_call_in_order_and_shape_the_reply() {
    let model = scripted(vec![
        ScriptedTurn::tool_call("c1", "delete_file", r#"{"path": "a"}"#),
        ScriptedTurn::text("Deleted."),
        ScriptedTurn::text("Checked again."),
    ]);
    let order = Arc::new(std::sync::Mutex::new(Vec::new()));
    let outer = Recorder {
        order: order.clone(),
        label: "outer",
        rounds_wanted: AtomicUsize::new(1),
    };
    let inner = Recorder {
        order: order.clone(),
        label: "inner",
        rounds_wanted: AtomicUsize::new(0),
    };
    let dynamic: Arc<dyn DynChatModel> = model.clone();
    let agent = oxiscope_agent::Agent::builder("Friday", dynamic)
        .system_prompt("Base.")
        .toolkit(toolkit())
        .middleware(outer)
        .middleware(inner)
        .build()
        .unwrap();
    let events = collect(agent.reply_stream(user("rm a"))).await;
    let t = types(&events);
    assert!(
        !t.contains(&"REQUIRE_USER_CONFIRM"),
        "the middleware allowed the call: {t:?}"
    );
    let reply = rebuild(&events, None);
    assert_eq!(reply.text(" "), "Deleted. Checked again.");
    // Acting onion: the outer layer wraps the inner one.
    assert_eq!(
        reply.tool_results().next().unwrap().output.text(""),
        "outer: inner: Deleted a"
    );

    let requests = model.requests();
    assert_eq!(requests.len(), 3, "the veto asked for one more round");
    assert_eq!(requests[0].messages[0].text(""), "Base. [outer] [inner]");
    assert_eq!(
        requests[0].messages.last().unwrap().text(""),
        "added by middleware"
    );
    assert_eq!(order.lock().unwrap()[..2], ["outer", "inner"]);
}
