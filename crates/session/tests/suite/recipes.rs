//! Recipes: what an application embedding the service adds to its
//! sessions' agents — a tool of its own on the host and a middleware —
//! and named recipes an agent's record chooses.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use oxiscope_agent::Middleware;
use oxiscope_message::PermissionBehavior;
use oxiscope_session::{ExtraTools, Recipes, SessionError};
use oxiscope_test_support::OpenAiScript;
use oxiscope_tool::{FunctionTool, Tool};
use pretty_assertions::assert_eq;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::world::{World, text_answer, types, user_msg};

/// The order a customer asks about.
#[derive(Deserialize, JsonSchema)]
struct Order {
    /// The order number.
    number: u32,
}

fn order_tool() -> Arc<dyn Tool> {
    Arc::new(
        FunctionTool::new("order_status", |o: Order| async move {
            format!("Order {} shipped yesterday.", o.number)
        })
        .with_description("The status of an order.")
        .with_permission(PermissionBehavior::Allow),
    )
}

/// Signs the system prompt, and counts the agents it was built into.
#[derive(Debug, Default)]
struct Desk(Arc<AtomicUsize>);

impl Middleware for Desk {
    fn on_system_prompt(&self, prompt: String) -> String {
        self.0.fetch_add(1, Ordering::SeqCst);
        format!("{prompt}\nYou staff the support desk.")
    }
}

#[tokio::test]
async fn an_applications_tool_and_middleware_reach_every_sessions_agent() {
    let replies = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&replies);
    let recipes = Recipes::default().every(
        move |builder: oxiscope_agent::AgentBuilder, s: &oxiscope_session::RecipeContext<'_>| {
            assert_eq!(s.user_id, "u");
            Ok(builder
                .middleware(ExtraTools::new(vec![order_tool()]))
                .middleware(Desk(Arc::clone(&seen))))
        },
    );
    let w = World::with(|c| c.with_recipes(recipes)).await;
    let mut events = w.subscribe().await;
    w.fake.push(
        OpenAiScript::new()
            .tool_call(0, "call_1", "order_status")
            .tool_args(0, json!({"number": 42}).to_string())
            .finish("tool_calls")
            .usage(10, 5, 0)
            .response(),
    );
    w.fake.push(text_answer("It shipped yesterday."));
    w.engine
        .sessions()
        .submit(w.key(), Some(user_msg("where is order 42?")), None)
        .await
        .unwrap();
    let got = events.until("REPLY_END").await;
    assert_eq!(
        got.last().unwrap()["finished_reason"],
        "completed",
        "{got:?}"
    );
    let result = got
        .iter()
        .find(|e| e["type"] == "TOOL_RESULT_END")
        .unwrap_or_else(|| panic!("no tool result in {:?}", types(&got)));
    assert_eq!(result["state"], "success", "{result}");
    // The model was offered the tool, and read its answer.
    let requests = w.fake.requests();
    assert!(
        body(&requests[0]).contains("order_status"),
        "{}",
        body(&requests[0])
    );
    assert!(
        body(&requests[1]).contains("Order 42 shipped yesterday."),
        "{}",
        body(&requests[1])
    );
    assert!(
        body(&requests[0]).contains("You staff the support desk."),
        "{}",
        body(&requests[0])
    );
    assert!(replies.load(Ordering::SeqCst) >= 1);
}

#[tokio::test]
async fn an_agent_chooses_a_named_recipe_and_an_unknown_one_is_refused() {
    let recipes = Recipes::default().named(
        "support",
        |builder: oxiscope_agent::AgentBuilder, _s: &oxiscope_session::RecipeContext<'_>| {
            Ok(builder.middleware(ExtraTools::new(vec![order_tool()])))
        },
    );
    let w = World::with(|c| c.with_recipes(recipes)).await;
    let mut agent = w
        .storage
        .get_agent("u", &w.agent_id)
        .await
        .unwrap()
        .unwrap();

    // Without a choice, no named recipe applies.
    let mut events = w.subscribe().await;
    w.fake.push(text_answer("Hi."));
    w.engine
        .sessions()
        .submit(w.key(), Some(user_msg("hi")), None)
        .await
        .unwrap();
    events.until("REPLY_END").await;
    w.settled().await;
    assert!(!body(&w.fake.requests()[0]).contains("order_status"));

    agent.data["recipe"] = json!("support");
    w.storage.update_agent(&agent).await.unwrap();
    w.fake.push(text_answer("Hello."));
    w.engine
        .sessions()
        .submit(w.key(), Some(user_msg("hello")), None)
        .await
        .unwrap();
    events.until("REPLY_END").await;
    w.settled().await;
    assert!(body(&w.fake.requests()[1]).contains("order_status"));

    agent.data["recipe"] = json!("no-such-recipe");
    w.storage.update_agent(&agent).await.unwrap();
    let refused = w
        .engine
        .sessions()
        .submit(w.key(), Some(user_msg("again")), None)
        .await;
    match refused {
        Err(SessionError::Invalid(message)) => {
            assert!(message.contains("no-such-recipe"), "{message}");
            assert!(message.contains("support"), "{message}");
        }
        other => panic!("{other:?}"),
    }
}

/// A model request's body, as text.
fn body(request: &oxiscope_test_support::RecordedRequest) -> String {
    String::from_utf8_lossy(&request.body).into_owned()
}
