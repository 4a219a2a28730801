//! Middleware hooks: system prompt, model call onion, permission review,
//! and asking for another round (`on_reply_end`, the one way to).

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use oxiscope_agent::{
    ActingCall, ActingNext, AgentState, EventStream, Middleware, ModelCall, ModelNext, ReActConfig,
    ReasoningCall, ReasoningNext, ReplyCall, ReplyEndAction, ReplyInput, ReplyItem, ReplyNext,
    StepItem, StepStream,
};
use oxiscope_message::{
    AgentEvent, MediaBlock, Msg, PermissionBehavior, Role, TextBlockDeltaEvent, ToolCallBlock,
};
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

/// Upper-cases the text of every reasoning step and records the order in
/// which layers saw the step.
#[derive(Debug)]
struct Shouter {
    label: &'static str,
    order: Arc<std::sync::Mutex<Vec<&'static str>>>,
}

impl Middleware for Shouter {
    fn on_reasoning<'a>(
        &'a self,
        call: ReasoningCall,
        next: ReasoningNext<'a>,
    ) -> BoxFuture<'a, StepStream> {
        Box::pin(async move {
            self.order.lock().unwrap().push(self.label);
            let events = next.run(call).await;
            let shout = self.label == "outer";
            let bogus: AgentEvent =
                TextBlockDeltaEvent::new("r".to_owned(), "no-such-block".to_owned(), "x".into())
                    .into();
            events
                .map(move |e| match e {
                    StepItem::Event(AgentEvent::TextBlockDelta(mut d)) if shout => {
                        d.delta = d.delta.to_uppercase();
                        StepItem::Event(AgentEvent::TextBlockDelta(d))
                    }
                    other => other,
                })
                // A delta for a block that is not open: dropped, not fatal.
                .chain(futures_util::stream::iter([StepItem::Event(bogus)]))
                .boxed()
        })
    }
}

#[tokio::test]
async fn reasoning_middleware_rewrites_the_events_the_state_records() {
    let model = scripted(vec![ScriptedTurn::text("quiet words")]);
    let order = Arc::new(std::sync::Mutex::new(Vec::new()));
    let dynamic: Arc<dyn DynChatModel> = model.clone();
    let agent = oxiscope_agent::Agent::builder("Friday", dynamic)
        .middleware(Shouter {
            label: "outer",
            order: order.clone(),
        })
        .middleware(Shouter {
            label: "inner",
            order: order.clone(),
        })
        .build()
        .unwrap();
    let events = collect(agent.reply_stream(user("hi"))).await;
    let streamed = rebuild(&events, None);
    assert_eq!(streamed.text(""), "QUIET WORDS");
    assert_eq!(state_reply(&agent).await.text(""), "QUIET WORDS");
    assert_eq!(*order.lock().unwrap(), ["outer", "inner"]);
    assert!(matches!(events.last(), Some(AgentEvent::ReplyEnd(e)) if e.error.is_none()));
}

/// Rewrites the input, and asks once for another round before the reply
/// ends.
#[derive(Debug, Default)]
struct OneMoreRound {
    asked: AtomicBool,
}

impl Middleware for OneMoreRound {
    fn on_reply(&self, mut call: ReplyCall, next: ReplyNext) -> EventStream {
        if let ReplyInput::Msgs(msgs) = &mut call.input {
            msgs.push(Msg::user("user", "(be thorough)").unwrap());
        }
        next.run(call)
    }

    fn on_reply_end(&self, _reply: &Msg, _state: &AgentState) -> ReplyEndAction {
        if self.asked.swap(true, Ordering::SeqCst) {
            ReplyEndAction::Finish
        } else {
            ReplyEndAction::Continue("Try again, thoroughly.".into())
        }
    }
}

#[tokio::test]
async fn a_reply_end_decision_runs_another_round_with_one_reply_end() {
    let model = scripted(vec![
        ScriptedTurn::text("First try."),
        ScriptedTurn::text("Second, thorough try."),
    ]);
    let dynamic: Arc<dyn DynChatModel> = model.clone();
    let agent = oxiscope_agent::Agent::builder("Friday", dynamic)
        .middleware(OneMoreRound::default())
        .build()
        .unwrap();
    let items: Vec<ReplyItem> = agent
        .reply_stream(user("Answer."))
        .with_message()
        .collect()
        .await;
    let events: Vec<AgentEvent> = items
        .iter()
        .filter_map(|i| match i {
            ReplyItem::Event(e) => Some(e.clone()),
            ReplyItem::Message(_) => None,
        })
        .collect();
    let t = types(&events);
    assert_eq!(t.iter().filter(|x| **x == "REPLY_START").count(), 1);
    assert_eq!(t.iter().filter(|x| **x == "REPLY_END").count(), 1);
    assert_eq!(t.last(), Some(&"REPLY_END"));
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].messages[2].text(""), "(be thorough)");
    // The second call reads the middleware's hint.
    let reply = requests[1].messages.last().unwrap();
    assert!(
        reply.content.iter().any(|b| matches!(b,
            oxiscope_message::ContentBlock::Hint(h) if h.hint == "Try again, thoroughly.".into())),
        "{:?}",
        reply.content
    );
    // The message comes last, and equals the state's.
    let Some(ReplyItem::Message(msg)) = items.last() else {
        panic!("no message at the end")
    };
    assert_eq!(msg.text(" "), "First try. Second, thorough try.");
    assert_eq!(*msg, rebuild(&events, None));
    assert_eq!(
        msg.finished_reason,
        Some(oxiscope_message::ReplyFinishedReason::Completed)
    );
    assert_eq!(*msg, state_reply(&agent).await);
}

/// Relays every event through a task and a channel: reads ahead, never
/// swallows.
#[derive(Debug, Default)]
struct Relay;

impl Middleware for Relay {
    fn on_reply(&self, call: ReplyCall, next: ReplyNext) -> EventStream {
        let mut inner = next.run(call);
        let (tx, rx) = tokio::sync::mpsc::channel(4);
        tokio::spawn(async move {
            while let Some(e) = inner.next().await {
                if tx.send(e).await.is_err() {
                    break;
                }
            }
        });
        tokio_stream_from(rx)
    }
}

fn tokio_stream_from(mut rx: tokio::sync::mpsc::Receiver<AgentEvent>) -> EventStream {
    futures_util::stream::poll_fn(move |cx| rx.poll_recv(cx)).boxed()
}

#[tokio::test]
async fn a_relaying_reply_middleware_does_not_start_rounds() {
    let model = scripted(vec![
        ScriptedTurn::text("Only answer."),
        ScriptedTurn::text("Must not be asked."),
    ]);
    let dynamic: Arc<dyn DynChatModel> = model.clone();
    let agent = oxiscope_agent::Agent::builder("Friday", dynamic)
        .middleware(Relay)
        .build()
        .unwrap();
    let events = collect(agent.reply_stream(user("Hi"))).await;
    let t = types(&events);
    assert_eq!(t.iter().filter(|x| **x == "REPLY_END").count(), 1, "{t:?}");
    assert_eq!(model.requests().len(), 1);
    let reply = state_reply(&agent).await;
    assert_eq!(
        reply.finished_reason,
        Some(oxiscope_message::ReplyFinishedReason::Completed)
    );
    // The agent is free for the next reply.
    let again = collect(agent.reply_stream(user("Again"))).await;
    assert!(matches!(again.last(), Some(AgentEvent::ReplyEnd(_))));
}

/// Holds the `REPLY_END` forever: never passes it on.
#[derive(Debug, Default)]
struct Holder;

impl Middleware for Holder {
    fn on_reply(&self, call: ReplyCall, next: ReplyNext) -> EventStream {
        let mut inner = next.run(call);
        let mut held = false;
        futures_util::stream::poll_fn(move |cx| {
            if held {
                return std::task::Poll::Pending;
            }
            match inner.as_mut().poll_next(cx) {
                std::task::Poll::Ready(Some(AgentEvent::ReplyEnd(_))) => {
                    held = true;
                    std::task::Poll::Pending
                }
                other => other,
            }
        })
        .boxed()
    }
}

#[tokio::test]
async fn a_reply_whose_end_is_held_by_a_middleware_has_ended_in_the_state() {
    let model = scripted(vec![ScriptedTurn::text("Done.")]);
    let dynamic: Arc<dyn DynChatModel> = model.clone();
    let agent = oxiscope_agent::Agent::builder("Friday", dynamic)
        .middleware(Holder)
        .build()
        .unwrap();
    let mut stream = agent.reply_stream(user("Hi"));
    // Read until the stream stalls on the held end.
    loop {
        match tokio::time::timeout(std::time::Duration::from_millis(200), stream.next()).await {
            Ok(Some(_)) => {}
            Ok(None) => panic!("the stream ended"),
            Err(_) => break,
        }
    }
    // The loop ended on its own: the held event changes only what the
    // consumer sees.
    let state = tokio::time::timeout(std::time::Duration::from_secs(5), agent.state())
        .await
        .expect("the reply released the agent");
    assert_eq!(
        state.reply_msg().unwrap().finished_reason,
        Some(oxiscope_message::ReplyFinishedReason::Completed)
    );
    drop(stream);
}

/// Asks for another round every time.
#[derive(Debug, Default)]
struct NeverDone;

impl Middleware for NeverDone {
    fn on_reply_end(&self, _reply: &Msg, _state: &AgentState) -> ReplyEndAction {
        ReplyEndAction::Continue("More.".into())
    }
}

#[tokio::test]
async fn a_middleware_that_always_asks_for_more_meets_max_iters() {
    let model = scripted(vec![
        ScriptedTurn::text("1"),
        ScriptedTurn::text("2"),
        ScriptedTurn::text("3"),
        ScriptedTurn::text("4"),
    ]);
    let dynamic: Arc<dyn DynChatModel> = model.clone();
    let agent = oxiscope_agent::Agent::builder("Friday", dynamic)
        .middleware(NeverDone)
        .react_config(ReActConfig {
            max_iters: 3,
            ..ReActConfig::default()
        })
        .build()
        .unwrap();
    let events = tokio::time::timeout(
        std::time::Duration::from_secs(5),
        collect(agent.reply_stream(user("Hi"))),
    )
    .await
    .expect("the reply ended");
    let t = types(&events);
    assert_eq!(t.iter().filter(|x| **x == "REPLY_END").count(), 1, "{t:?}");
    assert_eq!(model.requests().len(), 3);
    assert_eq!(rebuild(&events, None), state_reply(&agent).await);
    assert_eq!(
        state_reply(&agent).await.finished_reason,
        Some(oxiscope_message::ReplyFinishedReason::Completed)
    );
}
