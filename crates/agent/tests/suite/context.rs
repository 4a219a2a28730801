//! Context management: compression across the threshold (also in the middle
//! of a tool loop), summaries that fail, the truncation fallback, tool
//! result and image limits, offloading, manual and agentic compression, and
//! the runtime-state dimensions that come with them.

use std::sync::Arc;

use oxiscope_agent::{
    Agent, AgentError, AgentState, ConfigError, ContextConfig, ContextError, InjectionConfig,
};
use oxiscope_message::{
    AgentEvent, Base64Source, ContentBlock, DataBlock, DataSource, Msg, PermissionBehavior,
    PermissionRule, ReplyFinishedReason, Role,
};
use oxiscope_model::{DynChatModel, ModelError, STRUCTURED_OUTPUT_TOOL, ToolChoice};
use oxiscope_test_support::{ScriptedModel, ScriptedTurn};
use oxiscope_tool::{FileOffloader, FunctionTool, Toolkit};
use schemars::JsonSchema;
use serde::Deserialize;

use super::common::{collect, types, user};

/// Arguments of `dump`.
#[derive(Debug, Deserialize, JsonSchema)]
struct Size {
    /// How many tokens of output (4 ASCII characters each).
    tokens: usize,
}

/// Arguments of `flaky`.
#[derive(Debug, Deserialize, JsonSchema)]
struct Query {
    /// Anything.
    q: String,
}

fn toolkit() -> Arc<Toolkit> {
    let mut toolkit = Toolkit::new();
    toolkit
        .register(
            FunctionTool::new("dump", |s: Size| async move { "abc\n".repeat(s.tokens) })
                .with_description("Print some output."),
        )
        .unwrap();
    toolkit
        .register(
            FunctionTool::new("flaky", |q: Query| async move {
                Err::<String, String>(format!("no result for {}", q.q))
            })
            .with_description("Always fails."),
        )
        .unwrap();
    Arc::new(toolkit)
}

fn allowing(tools: &[&str]) -> AgentState {
    let mut state = AgentState::default();
    for t in tools {
        state.permission_context.add_rule(PermissionRule::new(
            *t,
            None,
            PermissionBehavior::Allow,
            "session",
        ));
    }
    state
}

const SUMMARY: &str = r#"{"task_overview": "Dump output four times", "current_state": "Two dumps done", "important_discoveries": "dump works", "next_steps": "Finish", "context_to_preserve": "none"}"#;

fn summary_turn() -> ScriptedTurn {
    ScriptedTurn::tool_call("sum-1", STRUCTURED_OUTPUT_TOOL, SUMMARY).with_usage(900, 60)
}

/// A summary call that fails before it starts.
fn failing() -> ScriptedTurn {
    ScriptedTurn::error(ModelError::InvalidRequest {
        message: "summary refused".into(),
    })
}

fn model(turns: Vec<ScriptedTurn>) -> Arc<ScriptedModel> {
    Arc::new(ScriptedModel::new(turns).with_context_size(10_000))
}

fn agent_with(model: &Arc<ScriptedModel>, config: ContextConfig) -> oxiscope_agent::AgentBuilder {
    let dynamic: Arc<dyn DynChatModel> = model.clone();
    Agent::builder("Friday", dynamic)
        .system_prompt("You are Friday.")
        .toolkit(toolkit())
        .workdir(std::env::temp_dir())
        .context_config(config)
        .state(allowing(&["dump", "flaky"]))
}

/// An agent that may compress with the `CompressContext` tool.
fn agentic(model: &Arc<ScriptedModel>) -> Agent {
    let config = ContextConfig {
        compression_tool_enabled: true,
        ..ContextConfig::default()
    };
    agent_with(model, config).build().unwrap()
}

/// Four dumps (3000, 3000, 100 and 2000 tokens): the prompt crosses the
/// 8,000-token threshold only after the fourth, in the middle of the loop.
fn loop_script(summary: Vec<ScriptedTurn>) -> Vec<ScriptedTurn> {
    let mut turns = vec![
        ScriptedTurn::tool_call("c1", "dump", r#"{"tokens": 3000}"#),
        ScriptedTurn::tool_call("c2", "dump", r#"{"tokens": 3000}"#),
        ScriptedTurn::tool_call("c3", "dump", r#"{"tokens": 100}"#),
        ScriptedTurn::tool_call("c4", "dump", r#"{"tokens": 2000}"#),
    ];
    turns.extend(summary);
    turns.push(ScriptedTurn::text("All four dumps are done.").with_usage(10, 5));
    turns
}

fn reserve_config() -> ContextConfig {
    ContextConfig {
        reserve_ratio: 0.3,
        ..ContextConfig::default()
    }
}

/// Every tool call has its result in the same message and the reverse:
/// what every provider requires.
fn assert_valid(msgs: &[Msg]) {
    for m in msgs {
        let calls: Vec<&str> = m.tool_calls().map(|c| c.id.as_str()).collect();
        let results: Vec<&str> = m.tool_results().map(|r| r.id.as_str()).collect();
        for c in &calls {
            assert!(results.contains(c), "call {c} without result in {m:?}");
        }
        for r in &results {
            assert!(calls.contains(r), "orphan result {r} in {m:?}");
        }
    }
}

fn call_ids(m: &Msg) -> Vec<String> {
    m.tool_calls().map(|c| c.id.to_string()).collect()
}

#[tokio::test]
async fn the_context_is_compressed_in_the_middle_of_a_tool_loop() {
    let model = model(loop_script(vec![summary_turn()]));
    let agent = agent_with(&model, reserve_config()).build().unwrap();
    let events = collect(agent.reply_stream(user("Dump four times."))).await;

    let end = events.last().unwrap();
    assert!(
        matches!(end, AgentEvent::ReplyEnd(e) if e.finished_reason == ReplyFinishedReason::Completed),
        "{end:?}"
    );
    let requests = model.requests();
    assert_eq!(requests.len(), 6);
    // The fifth call is the summary: forced, over the older part.
    let summary_call = &requests[4];
    assert_eq!(
        summary_call.tool_choice,
        Some(ToolChoice::tool(STRUCTURED_OUTPUT_TOOL))
    );
    let asked = summary_call.messages.last().unwrap().text("");
    assert!(asked.contains("summary"), "{asked}");
    let summarised: Vec<String> = summary_call.messages.iter().flat_map(call_ids).collect();
    assert_eq!(summarised, ["c1", "c2"]);
    assert_valid(&summary_call.messages);

    // The next reasoning call sees the summary and the two newest rounds.
    let next = &requests[5];
    assert_valid(&next.messages);
    assert_eq!(next.messages[0].role, Role::System);
    let summary_text = next.messages[1].text("");
    assert!(
        summary_text.contains("Dump output four times"),
        "{summary_text}"
    );
    assert!(
        summary_text.contains("## Next steps\nFinish"),
        "{summary_text}"
    );
    let kept: Vec<String> = next.messages.iter().flat_map(call_ids).collect();
    assert_eq!(kept, ["c3", "c4"]);

    // The state agrees, and the summary's tokens count in the reply.
    let state = agent.state().await;
    assert!(state.summary.text("").contains("Dump output four times"));
    assert_eq!(state.context.len(), 1, "the question was summarised away");
    let reply = state.reply_msg().unwrap();
    assert_eq!(reply.text(""), "All four dumps are done.");
    let usage = reply.usage.unwrap();
    assert_eq!((usage.input_tokens, usage.output_tokens), (910, 65));
    let starts = types(&events)
        .iter()
        .filter(|t| **t == "MODEL_CALL_START")
        .count();
    assert_eq!(starts, 6);
}

#[tokio::test]
async fn compressed_messages_are_offloaded_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let model = model(loop_script(vec![summary_turn()]));
    let agent = agent_with(&model, reserve_config())
        .offloader(Arc::new(FileOffloader::new(dir.path())))
        .build()
        .unwrap();
    let _ = collect(agent.reply_stream(user("Dump four times."))).await;
    let state = agent.state().await;
    let path = dir
        .path()
        .join("sessions")
        .join(&state.session_id)
        .join("context.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<Msg> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // The question, and the part of the reply that left the context.
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0].text(""), "Dump four times.");
    assert_eq!(lines[1].id, state.reply_context.reply_id);
    assert_eq!(call_ids(&lines[1]), ["c1", "c2"]);
    assert_eq!(lines[1].tool_results().count(), 2);
    let summary = state.summary.text("");
    assert!(summary.contains(&path.display().to_string()), "{summary}");
    // Nothing that stayed was offloaded.
    assert!(!text.contains("\"c3\""));
}

#[tokio::test]
async fn a_summariser_that_fails_twice_is_retried() {
    let model = model(loop_script(vec![failing(), failing(), summary_turn()]));
    let agent = agent_with(&model, reserve_config()).build().unwrap();
    let events = collect(agent.reply_stream(user("Dump four times."))).await;
    assert!(matches!(events.last(), Some(AgentEvent::ReplyEnd(e)) if e.error.is_none()));
    assert!(
        agent
            .state()
            .await
            .summary
            .text("")
            .contains("Dump output four times")
    );
}

#[tokio::test]
async fn a_summariser_that_keeps_failing_falls_back_to_truncation() {
    let model = model(loop_script(vec![failing(), failing(), failing()]));
    let agent = agent_with(&model, reserve_config()).build().unwrap();
    let events = collect(agent.reply_stream(user("Dump four times."))).await;
    assert!(matches!(events.last(), Some(AgentEvent::ReplyEnd(e)) if e.error.is_none()));
    let requests = model.requests();
    let last = requests.last().unwrap();
    assert_valid(&last.messages);
    let kept: Vec<String> = last.messages.iter().flat_map(call_ids).collect();
    assert_eq!(kept, ["c3", "c4"]);
    let note = last.messages[1].text("");
    assert!(note.contains("removed"), "{note}");
}

#[tokio::test]
async fn without_the_fallback_a_failed_summary_leaves_the_context_alone() {
    let mut turns = loop_script(vec![failing(), failing(), failing()]);
    turns.pop();
    let model = model(turns);
    let config = ContextConfig {
        compression_fallback_to_truncation: false,
        ..reserve_config()
    };
    let agent = agent_with(&model, config).build().unwrap();
    let events = collect(agent.reply_stream(user("Dump four times."))).await;
    let Some(AgentEvent::ReplyEnd(end)) = events.last() else {
        panic!("no end")
    };
    assert_eq!(end.finished_reason, ReplyFinishedReason::Error);
    assert!(end.error.as_ref().unwrap().message.contains("summary"));
    let state = agent.state().await;
    assert_eq!(state.summary.text(""), "");
    assert_eq!(state.context.len(), 2);
    assert_eq!(call_ids(&state.context[1]), ["c1", "c2", "c3", "c4"]);
    assert_valid(&state.context);
}

#[tokio::test]
async fn huge_tool_results_are_cut_and_offloaded() {
    let dir = tempfile::tempdir().unwrap();
    let model = model(vec![
        ScriptedTurn::tool_call("big", "dump", r#"{"tokens": 2000}"#),
        ScriptedTurn::text("Seen it."),
    ]);
    let config = ContextConfig {
        tool_result_limit: 100,
        ..ContextConfig::default()
    };
    let agent = agent_with(&model, config)
        .offloader(Arc::new(FileOffloader::new(dir.path())))
        .build()
        .unwrap();
    let _ = collect(agent.reply_stream(user("Dump."))).await;
    let requests = model.requests();
    let reply = requests[1].messages.last().unwrap();
    let result = reply.tool_results().next().unwrap().output.text("");
    let kept = result.split("\n<<<TRUNCATED>>>").next().unwrap();
    assert!(
        kept.len() <= 400 && kept.len() > 300,
        "{} bytes kept",
        kept.len()
    );
    assert!(kept.starts_with("abc\nabc\n"));
    assert!(result.contains("<<<TRUNCATED>>>"), "{result}");
    let session = agent.state().await.session_id;
    let file = dir
        .path()
        .join("sessions")
        .join(session)
        .join("tool_result-big.txt");
    assert!(result.contains(&file.display().to_string()), "{result}");
    assert_eq!(std::fs::read_to_string(file).unwrap(), "abc\n".repeat(2000));
}

fn image(seed: u8) -> ContentBlock {
    use base64::Engine as _;
    let data = base64::engine::general_purpose::STANDARD.encode([seed; 16]);
    DataBlock::new(DataSource::Base64(Base64Source {
        data,
        media_type: "image/png".into(),
    }))
    .into()
}

#[tokio::test]
async fn only_the_newest_images_reach_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let model = model(vec![ScriptedTurn::text("Nice pictures.")]);
    let config = ContextConfig {
        max_image_num: 1,
        ..ContextConfig::default()
    };
    let agent = agent_with(&model, config)
        .offloader(Arc::new(FileOffloader::new(dir.path())))
        .build()
        .unwrap();
    let mut msg = Msg::user("user", "Look").unwrap();
    msg.content.extend([image(1), image(2), image(3)]);
    let _ = collect(agent.reply_stream(msg)).await;
    let sent = &model.requests()[0].messages[1];
    let images = sent
        .content
        .iter()
        .filter(|b| matches!(b, ContentBlock::Data(_)))
        .count();
    assert_eq!(images, 1);
    assert!(
        matches!(&sent.content[3], ContentBlock::Data(_)),
        "the newest stays"
    );
    let notes = sent.text("\n");
    assert_eq!(notes.matches("image was removed").count(), 2, "{notes}");
    let data_files = std::fs::read_dir(dir.path().join("data")).unwrap().count();
    assert_eq!(data_files, 2);
}

#[tokio::test]
async fn manual_compression_is_a_no_op_below_the_threshold_and_works_above() {
    let model = model(vec![
        ScriptedTurn::text("First answer."),
        ScriptedTurn::text("Second answer."),
        summary_turn(),
    ]);
    let agent = agent_with(&model, ContextConfig::default())
        .build()
        .unwrap();
    let _ = collect(agent.reply_stream(user("One"))).await;
    let _ = collect(agent.reply_stream(user("Two"))).await;
    let outcome = agent.compress_context(None, None).await.unwrap();
    assert!(!outcome.compressed);
    assert_eq!(agent.state().await.context.len(), 4);

    // A one-off config with a tiny threshold compresses all but the newest.
    let eager = ContextConfig {
        trigger_ratio: 0.015,
        reserve_ratio: 0.002,
        context_buffer_ratio: 0.0,
        ..ContextConfig::default()
    };
    let outcome = agent
        .compress_context(Some(eager), Some("Keep the answers.".into()))
        .await
        .unwrap();
    assert!(outcome.compressed, "{outcome:?}");
    assert!(outcome.tokens_after < outcome.tokens_before);
    assert_eq!(outcome.usage.as_ref().unwrap().input_tokens, 900);
    let asked = model.requests()[2].messages.last().unwrap().text("");
    assert!(asked.ends_with("Keep the answers."), "{asked}");
    let state = agent.state().await;
    assert!(state.context.len() < 4);
    assert!(state.summary.text("").contains("Task overview"));
}

#[tokio::test]
async fn a_system_prompt_above_the_threshold_is_a_typed_error() {
    let model = model(vec![]);
    let dynamic: Arc<dyn DynChatModel> = model.clone();
    let agent = Agent::builder("Friday", dynamic)
        .system_prompt("word ".repeat(10_000))
        .context_size(1_000)
        .build()
        .unwrap();
    agent
        .observe(vec![Msg::user("u", "hi").unwrap()])
        .await
        .unwrap();
    let err = agent.compress_context(None, None).await.unwrap_err();
    assert!(
        matches!(
            err,
            AgentError::Context(ContextError::SystemPromptTooLarge { .. })
        ),
        "{err:?}"
    );
}

#[test]
fn a_buffer_not_below_the_trigger_is_refused_at_construction() {
    let model = model(vec![]);
    let dynamic: Arc<dyn DynChatModel> = model;
    let config = ContextConfig {
        trigger_ratio: 0.5,
        context_buffer_ratio: 0.5,
        ..ContextConfig::default()
    };
    let err = Agent::builder("Friday", dynamic)
        .context_config(config)
        .build()
        .unwrap_err();
    assert!(
        matches!(
            err,
            AgentError::Config(ConfigError::BufferNotBelowTrigger { .. })
        ),
        "{err:?}"
    );
    let too_high = ContextConfig {
        trigger_ratio: 0.95,
        ..ContextConfig::default()
    };
    assert!(too_high.validate().is_err());
}

#[tokio::test]
async fn the_agent_can_compress_with_the_tool_once_in_the_buffer() {
    // 4,000 tokens of output: above the buffer (6,000 tokens from 0.8 - 0.2
    // of 10,000)? No: the first call is refused as too early.
    let model = model(vec![
        ScriptedTurn::tool_call("c1", "dump", r#"{"tokens": 4000}"#),
        ScriptedTurn::tool_call("k1", "CompressContext", "{}"),
        ScriptedTurn::tool_call("c2", "dump", r#"{"tokens": 2500}"#),
        ScriptedTurn::tool_call(
            "k2",
            "CompressContext",
            r#"{"instructions": "Keep sizes."}"#,
        ),
        summary_turn(),
        ScriptedTurn::text("Compressed and done."),
    ]);
    let agent = agentic(&model);
    let _ = collect(agent.reply_stream(user("Work."))).await;
    let requests = model.requests();
    assert!(
        requests[0]
            .tools
            .iter()
            .any(|t| t.function.name == "CompressContext")
    );
    let state = agent.state().await;
    let reply = state.reply_msg().unwrap();
    let result = |id: &str| {
        requests
            .iter()
            .flat_map(|r| r.messages.iter())
            .flat_map(|m| m.tool_results())
            .find(|r| r.id == id)
            .map(|r| r.output.text(""))
            .unwrap()
    };
    assert!(
        result("k1").contains("Nothing was compressed"),
        "{}",
        result("k1")
    );
    assert!(result("k2").contains("was compressed"), "{}", result("k2"));
    assert!(
        requests[4]
            .messages
            .last()
            .unwrap()
            .text("")
            .ends_with("Keep sizes.")
    );
    assert!(state.summary.text("").contains("Dump output four times"));
    assert_eq!(reply.text(""), "Compressed and done.");
    assert_valid(&state.context);
}

#[tokio::test]
async fn a_failed_agentic_compression_is_an_error_result_and_changes_nothing() {
    let model = model(vec![
        ScriptedTurn::tool_call("c1", "dump", r#"{"tokens": 6500}"#),
        ScriptedTurn::tool_call("k1", "CompressContext", "{}"),
        failing(),
        failing(),
        failing(),
        ScriptedTurn::text("Carrying on."),
    ]);
    let agent = agentic(&model);
    let events = collect(agent.reply_stream(user("Work."))).await;
    assert!(matches!(events.last(), Some(AgentEvent::ReplyEnd(e)) if e.error.is_none()));
    let state = agent.state().await;
    assert_eq!(state.summary.text(""), "");
    let reply = state.reply_msg().unwrap();
    let k1 = reply.tool_results().find(|r| r.id == "k1").unwrap();
    assert_eq!(k1.state, oxiscope_message::ToolResultState::Error);
    assert!(k1.output.text("").contains("unchanged"));
    assert_eq!(call_ids(reply), ["c1", "k1"]);
}

#[tokio::test]
async fn repeated_identical_failures_and_open_tasks_are_injected() {
    let model = model(vec![
        ScriptedTurn::tool_call("f1", "flaky", r#"{"q": "x"}"#),
        ScriptedTurn::tool_call("f2", "flaky", r#"{ "q":"x" }"#),
        ScriptedTurn::tool_call("f3", "flaky", r#"{"q": "x"}"#),
        ScriptedTurn::text("I give up."),
    ]);
    let mut state = allowing(&["flaky"]);
    state.tasks_context.tasks.push(
        serde_json::from_value(serde_json::json!({
            "subject": "Find x", "description": "", "state": "in_progress", "metadata": {},
            "created_at": "2026-11-30T00:00:00", "id": "t1"
        }))
        .unwrap(),
    );
    let dynamic: Arc<dyn DynChatModel> = model.clone();
    let agent = Agent::builder("Friday", dynamic)
        .toolkit(toolkit())
        .state(state)
        .injection_config(InjectionConfig::default())
        .build()
        .unwrap();
    let _ = collect(agent.reply_stream(user("Find x."))).await;
    let hints = |i: usize| -> String {
        model.requests()[i]
            .messages
            .last()
            .unwrap()
            .content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Hint(h) => Some(h.hint.text("")),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    // The first step: time and the open task.
    assert!(
        hints(0).contains("<tasks>You have 1 in-progress"),
        "{}",
        hints(0)
    );
    // After three identical failures (key order and spacing aside).
    assert!(!hints(2).contains("<tool-failure>"));
    let last = hints(3);
    assert!(last.contains("<tool-failure>"), "{last}");
    assert!(last.contains("'flaky'") && last.contains('3'), "{last}");
    assert_eq!(
        last.matches("<tasks>").count(),
        1,
        "the tasks are not repeated"
    );
}

#[tokio::test]
async fn an_interrupt_during_compression_loses_nothing() {
    let model = model(loop_script(vec![summary_turn().hang_after(0)]));
    let agent = agent_with(&model, reserve_config()).build().unwrap();
    let cancel = tokio_util::sync::CancellationToken::new();
    let stream = agent.reply_stream_with(user("Dump four times."), None, cancel.clone());
    let events = tokio::spawn(collect(stream));
    // Wait for the summary call to be in flight, then interrupt.
    for _ in 0..500 {
        if model.requests().len() == 5 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert_eq!(model.requests().len(), 5, "the summary call started");
    cancel.cancel();
    let events = events.await.unwrap();
    let Some(AgentEvent::ReplyEnd(end)) = events.last() else {
        panic!("no end: {:?}", types(&events))
    };
    assert_eq!(end.finished_reason, ReplyFinishedReason::Interrupted);
    assert_eq!(
        model.requests().len(),
        5,
        "no model call after the interrupt"
    );
    let state = agent.state().await;
    assert_eq!(state.summary.text(""), "", "nothing was summarised");
    assert_eq!(state.context.len(), 2);
    assert_eq!(call_ids(&state.context[1]), ["c1", "c2", "c3", "c4"]);
    assert_valid(&state.context);
}

#[tokio::test]
async fn compressing_by_tool_keeps_the_calls_of_the_same_batch() {
    let model = model(vec![
        ScriptedTurn::tool_call("c1", "dump", r#"{"tokens": 6500}"#),
        ScriptedTurn::tool_call("k1", "CompressContext", "{}").and_tool_call(
            "n1",
            "dump",
            r#"{"tokens": 10}"#,
        ),
        summary_turn(),
        ScriptedTurn::text("Done."),
    ]);
    let agent = agentic(&model);
    let _ = collect(agent.reply_stream(user("Work."))).await;
    let requests = model.requests();
    assert_eq!(requests.len(), 4);
    for r in &requests {
        assert_valid(&r.messages);
    }
    let summarised: Vec<String> = requests[2].messages.iter().flat_map(call_ids).collect();
    assert_eq!(summarised, ["c1"]);
    let kept: Vec<String> = requests[3].messages.iter().flat_map(call_ids).collect();
    assert_eq!(kept, ["k1", "n1"]);
    let state = agent.state().await;
    assert_valid(&state.context);
    let reply = state.reply_msg().unwrap();
    let n1 = reply.tool_results().find(|r| r.id == "n1").unwrap();
    assert_eq!(n1.output.text(""), "abc\n".repeat(10));
}

#[tokio::test]
async fn compressing_a_parked_reply_keeps_the_waiting_calls() {
    let model = model(vec![
        ScriptedTurn::tool_call("c1", "dump", r#"{"tokens": 3000}"#),
        ScriptedTurn::tool_call("f1", "flaky", r#"{"q": "x"}"#),
        summary_turn(),
    ]);
    let dynamic: Arc<dyn DynChatModel> = model.clone();
    let agent = Agent::builder("Friday", dynamic)
        .toolkit(toolkit())
        .state(allowing(&["dump"]))
        .build()
        .unwrap();
    let _ = collect(agent.reply_stream(user("Work."))).await;
    assert!(agent.state().await.is_parked());
    let eager = ContextConfig {
        trigger_ratio: 0.1,
        reserve_ratio: 0.05,
        context_buffer_ratio: 0.0,
        ..ContextConfig::default()
    };
    let outcome = agent.compress_context(Some(eager), None).await.unwrap();
    assert!(outcome.compressed, "{outcome:?}");
    let state = agent.state().await;
    assert!(state.is_parked(), "still waiting for the confirmation");
    let pending: Vec<&str> = state
        .pending_tool_calls()
        .iter()
        .map(|c| c.id.as_str())
        .collect();
    assert_eq!(pending, ["f1"]);
    assert_eq!(call_ids(state.reply_msg().unwrap()), ["f1"]);
}

/// Counts the model calls that pass `on_model_call`.
#[derive(Debug, Default)]
struct CountCalls(std::sync::atomic::AtomicUsize);

impl oxiscope_agent::Middleware for CountCalls {
    fn on_model_call<'a>(
        &'a self,
        call: oxiscope_agent::ModelCall<'a>,
        next: oxiscope_agent::ModelNext<'a>,
    ) -> futures_util::future::BoxFuture<
        'a,
        Result<oxiscope_model::ChatStream, oxiscope_model::ModelError>,
    > {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        next.run(call)
    }
}

#[tokio::test]
async fn the_summary_call_passes_the_model_call_middleware() {
    let model = model(loop_script(vec![summary_turn()]));
    let counter = Arc::new(CountCalls::default());
    let agent = agent_with(&model, reserve_config())
        .middleware(SharedCount(counter.clone()))
        .build()
        .unwrap();
    let _ = collect(agent.reply_stream(user("Dump four times."))).await;
    assert_eq!(model.requests().len(), 6);
    assert_eq!(counter.0.load(std::sync::atomic::Ordering::SeqCst), 6);
}

#[derive(Debug)]
struct SharedCount(Arc<CountCalls>);

impl oxiscope_agent::Middleware for SharedCount {
    fn on_model_call<'a>(
        &'a self,
        call: oxiscope_agent::ModelCall<'a>,
        next: oxiscope_agent::ModelNext<'a>,
    ) -> futures_util::future::BoxFuture<
        'a,
        Result<oxiscope_model::ChatStream, oxiscope_model::ModelError>,
    > {
        self.0.on_model_call(call, next)
    }
}

/// An offloader whose storage is gone.
#[derive(Debug)]
struct BrokenOffloader;

impl oxiscope_tool::Offloader for BrokenOffloader {
    fn offload_context<'a>(
        &'a self,
        _session_id: &'a str,
        _msgs: &'a [Msg],
    ) -> futures_util::future::BoxFuture<'a, Result<String, oxiscope_tool::OffloadError>> {
        Box::pin(async { Err(broken()) })
    }

    fn offload_tool_result<'a>(
        &'a self,
        _session_id: &'a str,
        _result: &'a oxiscope_message::ToolResultBlock,
    ) -> futures_util::future::BoxFuture<'a, Result<String, oxiscope_tool::OffloadError>> {
        Box::pin(async { Err(broken()) })
    }

    fn offload_data_block<'a>(
        &'a self,
        _session_id: &'a str,
        _block: &'a DataBlock,
    ) -> futures_util::future::BoxFuture<'a, Result<String, oxiscope_tool::OffloadError>> {
        Box::pin(async { Err(broken()) })
    }
}

fn broken() -> oxiscope_tool::OffloadError {
    oxiscope_tool::OffloadError::Io {
        path: "/gone".into(),
        source: std::io::Error::other("disk gone"),
    }
}

#[tokio::test]
async fn a_failing_offloader_does_not_stop_compression_or_truncation() {
    // Truncation without a file to point at.
    let model_a = model(vec![
        ScriptedTurn::tool_call("big", "dump", r#"{"tokens": 2000}"#),
        ScriptedTurn::text("Seen it."),
    ]);
    let config = ContextConfig {
        tool_result_limit: 100,
        ..ContextConfig::default()
    };
    let agent = agent_with(&model_a, config)
        .offloader(Arc::new(BrokenOffloader))
        .build()
        .unwrap();
    let events = collect(agent.reply_stream(user("Dump."))).await;
    assert!(matches!(events.last(), Some(AgentEvent::ReplyEnd(e)) if e.error.is_none()));
    let cut = model_a.requests()[1].messages.last().unwrap().clone();
    let result = cut.tool_results().next().unwrap().output.text("");
    assert!(result.contains("<<<TRUNCATED>>>") && !result.contains("refer to the file"));

    // Compression with nowhere to keep the old messages.
    let model_b = model(loop_script(vec![summary_turn()]));
    let agent = agent_with(&model_b, reserve_config())
        .offloader(Arc::new(BrokenOffloader))
        .build()
        .unwrap();
    let events = collect(agent.reply_stream(user("Dump four times."))).await;
    assert!(matches!(events.last(), Some(AgentEvent::ReplyEnd(e)) if e.error.is_none()));
    let state = agent.state().await;
    let summary = state.summary.text("");
    assert!(summary.contains("Dump output four times"), "{summary}");
    assert!(
        !summary.contains("full text of the summarised"),
        "{summary}"
    );
    assert_valid(&state.context);
}
