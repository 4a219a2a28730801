//! `RagMiddleware` in agent runs with a scripted model: the static hint
//! reaches the model, the agentic tool returns the snippet, a deleted
//! document is no longer found.

use std::sync::Arc;

use futures_util::StreamExt;
use oxiscope_agent::Agent;
use oxiscope_message::{AgentEvent, ContentBlock, Msg, ToolResultState};
use oxiscope_model::DynChatModel;
use oxiscope_rag::middleware::{HINT_SOURCE, SEARCH_KNOWLEDGE_TOOL};
use oxiscope_rag::{KnowledgeBase, RagMiddleware, RagMode, RagParameters};
use oxiscope_test_support::{ScriptedModel, ScriptedTurn};

use super::support::*;

fn agent(model: &Arc<ScriptedModel>, middleware: RagMiddleware) -> Agent {
    let dynamic: Arc<dyn DynChatModel> = model.clone();
    Agent::builder("Friday", dynamic)
        .system_prompt("Answer using the retrieved material.")
        .workdir(std::env::temp_dir())
        .middleware(middleware)
        .build()
        .unwrap()
}

fn static_params(persist_hint: bool, emit_hint_event: bool) -> RagParameters {
    RagParameters {
        mode: RagMode::Static,
        top_k: 2,
        persist_hint,
        emit_hint_event,
        ..RagParameters::default()
    }
}

fn hints(msg: &Msg) -> Vec<String> {
    msg.content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Hint(h) if h.source.as_deref() == Some(HINT_SOURCE) => {
                Some(h.hint.text(""))
            }
            _ => None,
        })
        .collect()
}

async fn run(agent: &Agent, text: &str) -> Vec<AgentEvent> {
    agent
        .reply_stream(Msg::user("user", text).unwrap())
        .collect()
        .await
}

async fn knowledge() -> (tempfile::TempDir, KnowledgeBase, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir).await;
    let kb = kb(&store, "facts");
    let ids = fill(&kb).await;
    (dir, kb, ids)
}

fn kb_hint_events(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::HintBlock(h) if h.source.as_deref() == Some(HINT_SOURCE) => {
                Some(h.hint.text(""))
            }
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn static_mode_gives_the_model_the_hits_once_and_does_not_keep_them() {
    let (_dir, kb, _) = knowledge().await;
    let model = Arc::new(ScriptedModel::new(vec![
        ScriptedTurn::text("About 12 to 16 hours."),
        ScriptedTurn::text("Green tea: 80 degrees."),
    ]));
    let agent = agent(
        &model,
        RagMiddleware::new(vec![kb], static_params(false, true)).unwrap(),
    );
    let events = run(&agent, "How many hours do cats sleep?").await;

    let requests = model.requests();
    let sent: Vec<String> = requests[0].messages.iter().flat_map(hints).collect();
    assert_eq!(sent.len(), 1, "{:?}", requests[0].messages);
    assert!(sent[0].starts_with("<system-reminder>The following content is retrieved"));
    assert!(
        sent[0].contains(&format!("[1] (source: cats.md)\n{CATS}")),
        "{}",
        sent[0]
    );
    // No tool in static mode.
    assert!(
        requests[0]
            .tools
            .iter()
            .all(|t| t.function.name != SEARCH_KNOWLEDGE_TOOL)
    );
    // The consumer saw the hint; the reply does not keep it.
    assert_eq!(kb_hint_events(&events), sent);
    let state = agent.state().await;
    assert!(state.context.iter().all(|m| hints(m).is_empty()));

    // The next reply searches again, with its own input.
    run(&agent, "How do I brew green tea?").await;
    let second: Vec<String> = model.requests()[1]
        .messages
        .iter()
        .flat_map(hints)
        .collect();
    assert_eq!(second.len(), 1);
    assert!(second[0].contains("[1] (source: tea.md)"), "{}", second[0]);
}

#[tokio::test]
async fn a_persisted_hint_stays_in_the_context_and_can_be_kept_from_the_consumer() {
    let (_dir, kb, _) = knowledge().await;
    let model = Arc::new(ScriptedModel::new(vec![ScriptedTurn::text("12-16 hours.")]));
    let agent = agent(
        &model,
        RagMiddleware::new(vec![kb], static_params(true, false)).unwrap(),
    );
    let events = run(&agent, "How long do cats sleep?").await;
    let sent: Vec<String> = model.requests()[0]
        .messages
        .iter()
        .flat_map(hints)
        .collect();
    assert_eq!(sent.len(), 1);
    assert!(kb_hint_events(&events).is_empty());
    let state = agent.state().await;
    let kept: Vec<String> = state.context.iter().flat_map(hints).collect();
    assert_eq!(kept, sent);
}

#[tokio::test]
async fn agentic_mode_offers_the_tool_and_returns_the_snippet_until_the_document_is_deleted() {
    let (_dir, kb, ids) = knowledge().await;
    let args = r#"{"query": "How many hours do cats sleep per day?"}"#;
    let model = Arc::new(ScriptedModel::new(vec![
        ScriptedTurn::tool_call("c1", SEARCH_KNOWLEDGE_TOOL, args),
        ScriptedTurn::text("12 to 16 hours."),
        ScriptedTurn::tool_call(
            "c2",
            SEARCH_KNOWLEDGE_TOOL,
            r#"{"query": "cats sleep", "knowledge_bases": ["facts"]}"#,
        ),
        ScriptedTurn::text("I no longer know."),
        ScriptedTurn::tool_call(
            "c3",
            SEARCH_KNOWLEDGE_TOOL,
            r#"{"query": "tea", "knowledge_bases": ["other"]}"#,
        ),
        ScriptedTurn::text("Nothing."),
    ]));
    let params = RagParameters {
        mode: RagMode::Agentic,
        top_k: 1,
        score_threshold: Some(0.3),
        ..RagParameters::default()
    };
    let agent = agent(
        &model,
        RagMiddleware::new(vec![kb.clone()], params).unwrap(),
    );

    run(&agent, "How long do cats sleep?").await;
    let requests = model.requests();
    let tool = requests[0]
        .tools
        .iter()
        .find(|t| t.function.name == SEARCH_KNOWLEDGE_TOOL)
        .expect("search_knowledge offered");
    assert!(
        tool.function
            .description
            .contains("- **facts**: Facts about pets and drinks.")
    );
    let result = tool_result(&requests[1].messages, "c1");
    assert_eq!(result.1, ToolResultState::Success);
    assert_eq!(result.0, format!("[1] (source: cats.md)\n{CATS}"));

    kb.delete_document(&ids[0]).await.unwrap();
    run(&agent, "And now?").await;
    let result = tool_result(&model.requests()[3].messages, "c2");
    assert_eq!(result.0, "No relevant content found.");

    // Unknown knowledge-base names are refused by the schema's enum.
    run(&agent, "Tea?").await;
    let result = tool_result(&model.requests()[5].messages, "c3");
    assert_eq!(result.1, ToolResultState::Error);
    assert!(result.0.contains("/knowledge_bases"), "{}", result.0);
}

fn tool_result(messages: &[Msg], id: &str) -> (String, ToolResultState) {
    messages
        .iter()
        .flat_map(|m| &m.content)
        .find_map(|b| match b {
            ContentBlock::ToolResult(r) if r.id == id => Some((r.output.text(""), r.state)),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no result for {id} in {messages:?}"))
}

#[test]
fn parameters_are_checked() {
    let bad = [
        RagParameters {
            top_k: 0,
            ..RagParameters::default()
        },
        RagParameters {
            top_k: 51,
            ..RagParameters::default()
        },
        RagParameters {
            rerank_candidate_k: Some(2),
            ..RagParameters::default()
        },
        RagParameters {
            hint_template: "no placeholder".into(),
            ..RagParameters::default()
        },
    ];
    for p in bad {
        assert!(RagMiddleware::new(vec![], p).is_err());
    }
    let p: RagParameters = serde_json::from_str(r#"{"mode": "static", "top_k": 3}"#).unwrap();
    assert_eq!(p.mode, RagMode::Static);
    assert!(p.emit_hint_event && !p.persist_hint);
}

#[tokio::test]
async fn the_reranker_picks_what_the_static_hint_shows() {
    let (_dir, kb, _) = knowledge().await;
    let reranker_model = Arc::new(ScriptedModel::new(vec![ScriptedTurn::text("[1]")]));
    let dynamic: Arc<dyn DynChatModel> = reranker_model.clone();
    let params = RagParameters {
        top_k: 1,
        rerank_candidate_k: Some(3),
        ..static_params(false, false)
    };
    let middleware = RagMiddleware::new(vec![kb], params)
        .unwrap()
        .with_reranker(oxiscope_rag::LlmReranker::new(dynamic));
    let model = Arc::new(ScriptedModel::new(vec![ScriptedTurn::text("ok")]));
    let agent = agent(&model, middleware);
    run(&agent, "How many hours do cats sleep per day?").await;
    let sent: Vec<String> = model.requests()[0]
        .messages
        .iter()
        .flat_map(hints)
        .collect();
    assert_eq!(sent.len(), 1);
    // The vector search ranks cats.md first; the reranker chose number 1.
    assert!(!sent[0].contains("source: cats.md"), "{}", sent[0]);
    assert!(sent[0].contains("[1] (source: "), "{}", sent[0]);
    assert!(!sent[0].contains("[2]"), "{}", sent[0]);
    assert_eq!(reranker_model.requests().len(), 1);
}

#[tokio::test]
async fn a_failing_search_is_skipped_in_static_mode_and_an_error_result_in_agentic_mode() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir).await;
    // A collection of another size: every search fails.
    oxiscope_rag::VectorStore::create_collection(&store, "facts", 3)
        .await
        .unwrap();
    let broken = kb(&store, "facts");

    let model = Arc::new(ScriptedModel::new(vec![ScriptedTurn::text(
        "I don't know.",
    )]));
    let first = agent(
        &model,
        RagMiddleware::new(vec![broken.clone()], static_params(false, true)).unwrap(),
    );
    let events = run(&first, "cats?").await;
    assert!(kb_hint_events(&events).is_empty());
    assert!(
        model.requests()[0]
            .messages
            .iter()
            .all(|m| hints(m).is_empty())
    );
    assert_eq!(
        first.state().await.reply_msg().unwrap().text(""),
        "I don't know."
    );

    let model = Arc::new(ScriptedModel::new(vec![
        ScriptedTurn::tool_call("c1", SEARCH_KNOWLEDGE_TOOL, r#"{"query": "cats"}"#),
        ScriptedTurn::text("The search failed."),
    ]));
    let agent = agent(
        &model,
        RagMiddleware::new(vec![broken], RagParameters::default()).unwrap(),
    );
    run(&agent, "cats?").await;
    let (text, state) = tool_result(&model.requests()[1].messages, "c1");
    assert_eq!(state, ToolResultState::Error);
    assert!(text.starts_with("Search failed: "), "{text}");
}
