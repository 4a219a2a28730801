//! The `list_tools` middleware hook: tools a middleware adds are offered and
//! run; tools it takes away are neither.

use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use oxiscope_agent::{ActingCall, ActingNext, Agent, AgentState, Middleware, ReplyInput, ToolList};
use oxiscope_message::{
    AgentEvent, ConfirmResult, ContentBlock, Msg, ReplyFinishedReason, ToolResultState,
    UserConfirmResultEvent,
};
use oxiscope_model::DynChatModel;
use oxiscope_test_support::{ScriptedModel, ScriptedTurn};
use oxiscope_tool::{FunctionTool, Tool, ToolStream};
use pretty_assertions::assert_eq;
use schemars::JsonSchema;
use serde::Deserialize;

use super::common::*;

/// Arguments of `lookup`.
#[derive(Debug, Deserialize, JsonSchema)]
struct Query {
    /// What to look up.
    q: String,
}

fn lookup_tool() -> Arc<dyn Tool> {
    Arc::new(
        FunctionTool::new("lookup", |a: Query| async move { format!("found {}", a.q) })
            .with_description("Look something up in the knowledge base."),
    )
}

/// Adds `lookup`.
#[derive(Debug)]
struct AddsLookup;

impl Middleware for AddsLookup {
    fn list_tools(&self, tools: &mut ToolList, _state: &AgentState) {
        assert!(tools.add(lookup_tool()));
        // A second tool of the same name is refused.
        assert!(!tools.add(lookup_tool()));
    }
}

/// Takes `delete_file` away and records the names it was shown.
#[derive(Debug, Default)]
struct HidesDelete {
    seen: Mutex<Vec<Vec<String>>>,
}

impl Middleware for HidesDelete {
    fn list_tools(&self, tools: &mut ToolList, _state: &AgentState) {
        self.seen
            .lock()
            .unwrap()
            .push(tools.names().map(str::to_owned).collect());
        tools.retain(|s| s.function.name != "delete_file");
    }
}

/// Records the tool calls that pass `on_acting`.
#[derive(Debug, Default)]
struct RecordsActing {
    calls: Mutex<Vec<String>>,
}

impl Middleware for RecordsActing {
    fn on_acting<'a>(
        &'a self,
        call: ActingCall,
        next: ActingNext<'a>,
    ) -> BoxFuture<'a, ToolStream> {
        self.calls.lock().unwrap().push(call.call.name.clone());
        next.run(call)
    }
}

fn with_middlewares(
    model: &Arc<ScriptedModel>,
    state: AgentState,
    hides: Arc<HidesDelete>,
    acting: Arc<RecordsActing>,
) -> Agent {
    let dynamic: Arc<dyn DynChatModel> = model.clone();
    Agent::builder("Friday", dynamic)
        .toolkit(toolkit())
        .workdir(std::env::temp_dir())
        .middleware(AddsLookup)
        .middleware(Shared(hides))
        .middleware(Shared(acting))
        .state(state)
        .build()
        .unwrap()
}

/// A middleware the test keeps a handle on.
#[derive(Debug)]
struct Shared<M>(Arc<M>);

impl<M: Middleware> Middleware for Shared<M> {
    fn list_tools(&self, tools: &mut ToolList, state: &AgentState) {
        self.0.list_tools(tools, state);
    }

    fn on_acting<'a>(
        &'a self,
        call: ActingCall,
        next: ActingNext<'a>,
    ) -> BoxFuture<'a, ToolStream> {
        self.0.on_acting(call, next)
    }
}

fn results(msg: &Msg) -> Vec<(String, ToolResultState, String)> {
    msg.content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::ToolResult(r) => Some((r.name.clone(), r.state, r.output.text(""))),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_tool_a_middleware_adds_is_offered_and_called_and_a_hidden_one_is_not() {
    let model = scripted(vec![
        ScriptedTurn::tool_call("c1", "lookup", r#"{"q": "refunds"}"#).and_tool_call(
            "c2",
            "delete_file",
            r#"{"path": "a.txt"}"#,
        ),
        ScriptedTurn::text("Refunds take five days."),
    ]);
    let mut state = AgentState::default();
    state
        .permission_context
        .add_rule(oxiscope_message::PermissionRule::new(
            "lookup",
            None,
            oxiscope_message::PermissionBehavior::Allow,
            "session",
        ));
    let hides = Arc::new(HidesDelete::default());
    let acting = Arc::new(RecordsActing::default());
    let agent = with_middlewares(&model, state, hides.clone(), acting.clone());
    let events = collect(agent.reply_stream(user("How long do refunds take?"))).await;
    let Some(AgentEvent::ReplyEnd(end)) = events.last() else {
        panic!("no end: {events:?}");
    };
    assert_eq!(end.finished_reason, ReplyFinishedReason::Completed);

    // Offered: the toolkit's tools minus delete_file, then lookup.
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        let names: Vec<&str> = request
            .tools
            .iter()
            .map(|t| t.function.name.as_str())
            .collect();
        assert_eq!(names, ["get_weather", "open_url", "lookup"]);
    }
    // The second middleware saw what the first one added.
    let seen = hides.seen.lock().unwrap().clone();
    assert!(!seen.is_empty());
    for names in seen {
        assert_eq!(names, ["get_weather", "delete_file", "open_url", "lookup"]);
    }

    // lookup ran through on_acting; delete_file did not run.
    assert_eq!(*acting.calls.lock().unwrap(), ["lookup"]);
    let reply = state_reply(&agent).await;
    assert_eq!(
        results(&reply),
        [
            (
                "lookup".to_owned(),
                ToolResultState::Success,
                "found refunds".to_owned()
            ),
            (
                "delete_file".to_owned(),
                ToolResultState::Error,
                "ToolNotFoundError: The tool named 'delete_file' doesn't exist.".to_owned()
            ),
        ]
    );
}

#[tokio::test]
async fn a_middleware_tool_that_asks_runs_after_the_confirmation_in_a_new_agent() {
    let model = scripted(vec![
        ScriptedTurn::tool_call("c1", "lookup", r#"{"q": "plans"}"#),
        ScriptedTurn::text("Here are the plans."),
    ]);
    let first = with_middlewares(
        &model,
        AgentState::default(),
        Arc::default(),
        Arc::default(),
    );
    let pause = collect(first.reply_stream(user("Find the plans"))).await;
    let Some(AgentEvent::RequireUserConfirm(ask)) = pause.last() else {
        panic!("expected a confirmation request: {pause:?}");
    };
    let saved = serde_json::to_string(&first.state().await).unwrap();
    let acting = Arc::new(RecordsActing::default());
    let second = with_middlewares(
        &model,
        serde_json::from_str(&saved).unwrap(),
        Arc::default(),
        acting.clone(),
    );
    let answer = UserConfirmResultEvent::new(
        ask.reply_id.clone(),
        vec![ConfirmResult {
            confirmed: true,
            tool_call: ask.tool_calls[0].clone(),
            rules: None,
        }],
    );
    let input: ReplyInput = answer.into();
    let resume = collect(second.reply_stream(input)).await;
    let Some(AgentEvent::ReplyEnd(end)) = resume.last() else {
        panic!("no end: {resume:?}");
    };
    assert_eq!(end.finished_reason, ReplyFinishedReason::Completed);
    assert_eq!(*acting.calls.lock().unwrap(), ["lookup"]);
    assert_eq!(
        results(&state_reply(&second).await),
        [(
            "lookup".to_owned(),
            ToolResultState::Success,
            "found plans".to_owned()
        )]
    );
}

#[tokio::test]
async fn without_list_tools_the_offer_is_the_toolkit() {
    let model = scripted(vec![ScriptedTurn::text("Hi.")]);
    let agent = agent(&model, AgentState::default());
    collect(agent.reply_stream(user("Hello"))).await;
    let names: Vec<String> = model.requests()[0]
        .tools
        .iter()
        .map(|t| t.function.name.clone())
        .collect();
    assert_eq!(names, ["get_weather", "delete_file", "open_url"]);
}
