//! The goal pipeline against scripted executor and verifier models: pass,
//! refusal then pass, impossible, invalid verdicts, the refusal budget, and
//! confirmations routed by `reply_id` (also after a save and load).

use std::sync::Arc;

use futures_util::StreamExt;
use oxiscope_agent::pipeline::{
    GoalOutcome, GoalPhase, GoalPipeline, PipelineProtocol, VerdictResult,
};
use oxiscope_agent::{Agent, ReActConfig, ReplyInput};
use oxiscope_message::{
    AgentEvent, ConfirmResult, ReplyFinishedReason, UserConfirmResultEvent, UserInterruptEvent,
};
use oxiscope_model::DynChatModel;
use oxiscope_test_support::{ScriptedModel, ScriptedTurn};
use pretty_assertions::assert_eq;
use tokio_util::sync::CancellationToken;

use super::common::{scripted, toolkit, types, user};

const GOAL: &str = "Write hello.py that prints hello";

fn report(id: &str, text: &str) -> ScriptedTurn {
    let args = serde_json::json!({ "report": text }).to_string();
    ScriptedTurn::tool_call(id, "GenerateStructuredOutput", &args)
}

fn verdict(id: &str, result: &str, message: &str) -> ScriptedTurn {
    let args = serde_json::json!({ "result": result, "message": message }).to_string();
    ScriptedTurn::tool_call(id, "GenerateStructuredOutput", &args)
}

fn build_agent(name: &str, model: &Arc<ScriptedModel>, react: ReActConfig) -> Agent {
    let dynamic: Arc<dyn DynChatModel> = model.clone();
    Agent::builder(name, dynamic)
        .system_prompt(format!("You are {name}."))
        .toolkit(toolkit())
        .workdir(std::env::temp_dir())
        .react_config(react)
        .build()
        .unwrap()
}

/// A verifier that gets one round per reply and no grace rounds, so a reply
/// without a valid verdict ends at once.
fn strict() -> ReActConfig {
    ReActConfig {
        max_iters: 1,
        structured_output_grace_iters: 0,
        ..ReActConfig::default()
    }
}

struct Fixture {
    executor: Arc<ScriptedModel>,
    verifier: Arc<ScriptedModel>,
    pipe: GoalPipeline,
}

fn fixture(
    executor: Vec<ScriptedTurn>,
    verifier: Vec<ScriptedTurn>,
    configure: impl FnOnce(
        oxiscope_agent::pipeline::GoalPipelineBuilder,
    ) -> oxiscope_agent::pipeline::GoalPipelineBuilder,
    verifier_react: ReActConfig,
) -> Fixture {
    let executor = scripted(executor);
    let verifier = scripted(verifier);
    let pipe = configure(GoalPipeline::builder(
        build_agent("Executor", &executor, ReActConfig::default()),
        build_agent("Verifier", &verifier, verifier_react),
    ))
    .build();
    Fixture {
        executor,
        verifier,
        pipe,
    }
}

async fn run(pipe: &GoalPipeline, input: impl Into<ReplyInput>) -> Vec<AgentEvent> {
    let events: Vec<AgentEvent> = pipe.reply_stream(input).collect().await;
    assert_well_formed(&events);
    events
}

/// Each reply in the stream has one start and exactly one end, and the
/// stream's last event is a reply end unless it parked.
fn assert_well_formed(events: &[AgentEvent]) {
    let parked = matches!(
        events.last(),
        Some(AgentEvent::RequireUserConfirm(_) | AgentEvent::RequireExternalExecution(_))
    );
    let mut open: Vec<String> = Vec::new();
    for event in events {
        match event {
            AgentEvent::ReplyStart(s) => {
                assert!(open.is_empty(), "a reply started inside another: {open:?}");
                open.push(s.reply_id.clone());
            }
            AgentEvent::ReplyEnd(e) => {
                assert_eq!(open.pop().as_deref(), Some(e.reply_id.as_str()));
            }
            AgentEvent::RequireUserConfirm(e) => {
                assert_eq!(open.pop().as_deref(), Some(e.reply_id.as_str()));
            }
            _ => assert_eq!(open.len(), 1, "an event outside a reply: {event:?}"),
        }
    }
    assert!(open.is_empty(), "a reply without an end: {open:?}");
    if !parked && !events.is_empty() {
        assert_eq!(types(events).last(), Some(&"REPLY_END"));
    }
}

/// The names of the agents whose replies the stream holds, in order.
fn speakers(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ReplyStart(s) => Some(s.name.clone()),
            _ => None,
        })
        .collect()
}

/// The last user message of a recorded request, as JSON.
fn last_text(model: &ScriptedModel, request: usize) -> String {
    let requests = model.requests();
    let msg = requests[request]
        .messages
        .iter()
        .rev()
        .find(|m| m.role == oxiscope_message::Role::User)
        .unwrap();
    serde_json::to_string(msg).unwrap()
}

fn all_text(model: &ScriptedModel, request: usize) -> String {
    serde_json::to_string(&model.requests()[request].messages).unwrap()
}

#[tokio::test]
async fn a_pass_at_the_first_try_ends_the_run() {
    let f = fixture(
        vec![report("r1", "hello.py written; run python hello.py")],
        vec![verdict("v1", "pass", "prints hello")],
        |b| b,
        ReActConfig::default(),
    );
    let events = run(&f.pipe, user(GOAL)).await;
    assert_eq!(speakers(&events), ["Executor", "Verifier"]);
    let progress = f.pipe.progress().await;
    assert_eq!(
        progress.outcome,
        Some(GoalOutcome::Passed {
            report: "hello.py written; run python hello.py".to_owned(),
            message: "prints hello".to_owned(),
        })
    );
    assert_eq!(progress.phase, GoalPhase::Idle);
    assert_eq!(progress.refusals, 0);
    // The verifier judged the goal against the report.
    let asked = last_text(&f.verifier, 0);
    assert!(
        asked.contains(GOAL) && asked.contains("run python hello.py"),
        "{asked}"
    );
    // Both agents were offered the structured-output tool with their schema.
    let tool = |m: &ScriptedModel| {
        m.requests()[0]
            .tools
            .iter()
            .find(|t| t.function.name == "GenerateStructuredOutput")
            .map(|t| t.function.parameters.clone())
            .unwrap()
    };
    assert_eq!(tool(&f.executor)["required"], serde_json::json!(["report"]));
    assert_eq!(
        tool(&f.verifier)["properties"]["result"]["enum"],
        serde_json::json!(["pass", "fail", "impossible"])
    );
}

#[tokio::test]
async fn a_refusal_sends_its_reason_to_the_executor_and_the_next_pass_ends_the_run() {
    let f = fixture(
        vec![
            report("r1", "hello.py written"),
            report("r2", "hello.py prints hello now"),
        ],
        vec![
            verdict("v1", "fail", "hello.py prints nothing: add print('hello')"),
            verdict("v2", "pass", ""),
        ],
        |b| b,
        ReActConfig::default(),
    );
    let events = run(&f.pipe, user(GOAL)).await;
    assert_eq!(
        speakers(&events),
        ["Executor", "Verifier", "Executor", "Verifier"]
    );
    let progress = f.pipe.progress().await;
    assert_eq!(progress.refusals, 1);
    assert!(matches!(progress.outcome, Some(GoalOutcome::Passed { .. })));
    // The reason reached the executor verbatim.
    let told = last_text(&f.executor, 1);
    assert!(
        told.contains("hello.py prints nothing: add print('hello')"),
        "{told}"
    );
    // The verifier's conversation was reset: the second check sees the goal
    // and the new report, not its earlier verdict.
    let second = all_text(&f.verifier, 1);
    assert!(
        second.contains(GOAL) && second.contains("prints hello now"),
        "{second}"
    );
    assert!(!second.contains("prints nothing"), "{second}");
}

#[tokio::test]
async fn without_reset_the_verifier_keeps_its_earlier_verdict() {
    let f = fixture(
        vec![report("r1", "first"), report("r2", "second")],
        vec![
            verdict("v1", "fail", "missing tests"),
            verdict("v2", "pass", ""),
        ],
        |b| b.verifier_reset_context(false),
        ReActConfig::default(),
    );
    run(&f.pipe, user(GOAL)).await;
    let second = all_text(&f.verifier, 1);
    assert!(
        second.contains("missing tests") && second.contains("second"),
        "{second}"
    );
}

#[tokio::test]
async fn an_impossible_verdict_ends_the_run_with_it() {
    let f = fixture(
        vec![report("r1", "cannot find a python interpreter")],
        vec![verdict("v1", "impossible", "no interpreter exists here")],
        |b| b,
        ReActConfig::default(),
    );
    let events = run(&f.pipe, user(GOAL)).await;
    assert_eq!(speakers(&events), ["Executor", "Verifier"]);
    let progress = f.pipe.progress().await;
    assert_eq!(
        progress.outcome,
        Some(GoalOutcome::Impossible {
            message: "no interpreter exists here".to_owned()
        })
    );
    assert_eq!(
        progress.verdict.map(|v| v.result),
        Some(VerdictResult::Impossible)
    );
    assert_eq!(f.executor.remaining(), 0);
}

#[tokio::test]
async fn refusals_stop_at_max_iters_and_the_last_message_stays_with_the_verifier() {
    let f = fixture(
        vec![report("r1", "a"), report("r2", "b"), report("r3", "never")],
        vec![
            verdict("v1", "fail", "wrong a"),
            verdict("v2", "fail", "wrong b"),
        ],
        |b| b.max_iters(2),
        ReActConfig::default(),
    );
    let events = run(&f.pipe, user(GOAL)).await;
    assert_eq!(speakers(&events).len(), 4);
    let progress = f.pipe.progress().await;
    assert_eq!(progress.refusals, 2);
    assert_eq!(
        progress.outcome,
        Some(GoalOutcome::MaxIters {
            message: "wrong b".to_owned()
        })
    );
    assert_eq!(f.executor.remaining(), 1, "no third attempt");
    let kept = serde_json::to_string(&f.pipe.verifier().state().await.context).unwrap();
    assert!(kept.contains("wrong b"), "{kept}");
}

#[tokio::test]
async fn an_invalid_verdict_is_asked_again_without_spending_an_attempt() {
    let f = fixture(
        vec![report("r1", "done")],
        vec![
            verdict("v1", "maybe", "not sure"),
            // The final answer of the reply that hit its round limit.
            ScriptedTurn::text("I could not decide."),
            verdict("v2", "pass", "fine"),
        ],
        |b| b.max_iters(1),
        strict(),
    );
    let events = run(&f.pipe, user(GOAL)).await;
    assert_eq!(speakers(&events), ["Executor", "Verifier", "Verifier"]);
    let progress = f.pipe.progress().await;
    assert_eq!(progress.refusals, 0);
    assert_eq!(progress.retries, 0);
    assert!(matches!(progress.outcome, Some(GoalOutcome::Passed { .. })));
    assert_eq!(f.verifier.remaining(), 0);
    let reminder = last_text(&f.verifier, 2);
    assert!(
        reminder.contains("without a valid structured output"),
        "{reminder}"
    );
}

#[tokio::test]
async fn invalid_verdicts_beyond_max_retries_end_the_run_cleanly() {
    let f = fixture(
        vec![report("r1", "done")],
        vec![
            ScriptedTurn::text("Looks fine to me."),
            ScriptedTurn::text("Still fine."),
            ScriptedTurn::text("Really fine."),
            ScriptedTurn::text("Fine!"),
        ],
        |b| b.max_retries(1),
        strict(),
    );
    let events = run(&f.pipe, user(GOAL)).await;
    assert_eq!(speakers(&events), ["Executor", "Verifier", "Verifier"]);
    let progress = f.pipe.progress().await;
    assert_eq!(
        progress.outcome,
        Some(GoalOutcome::InvalidOutput {
            agent: "Verifier".to_owned()
        })
    );
    assert_eq!(progress.refusals, 0);
    assert_eq!(progress.phase, GoalPhase::Idle);
    assert_eq!(f.executor.remaining(), 0);
}

fn asked(events: &[AgentEvent]) -> (String, Vec<oxiscope_message::ToolCallBlock>) {
    match events.last() {
        Some(AgentEvent::RequireUserConfirm(e)) => (e.reply_id.clone(), e.tool_calls.clone()),
        other => panic!("expected a confirmation request, got {other:?}"),
    }
}

fn approve(reply_id: &str, calls: &[oxiscope_message::ToolCallBlock]) -> UserConfirmResultEvent {
    UserConfirmResultEvent::new(
        reply_id.to_owned(),
        calls
            .iter()
            .map(|c| ConfirmResult {
                confirmed: true,
                tool_call: c.clone(),
                rules: None,
            })
            .collect(),
    )
}

#[tokio::test]
async fn confirmations_are_routed_by_reply_id_also_after_a_save_and_load() {
    let executor = scripted(vec![
        ScriptedTurn::tool_call("d1", "delete_file", r#"{"path": "old.log"}"#),
        report("r1", "old.log deleted"),
        report("r2", "old.log really deleted"),
    ]);
    let verifier = scripted(vec![
        verdict("v1", "fail", "a backup is left"),
        ScriptedTurn::tool_call("d2", "delete_file", r#"{"path": "old.log.bak"}"#),
        verdict("v2", "pass", "gone"),
    ]);
    let build = || {
        GoalPipeline::builder(
            build_agent("Executor", &executor, ReActConfig::default()),
            build_agent("Verifier", &verifier, ReActConfig::default()),
        )
        .build()
    };
    let first = build();
    // The executor parks on its confirmation: the stream ends there.
    let events = run(&first, user("Delete old.log")).await;
    let (exec_reply, calls) = asked(&events);
    assert_eq!(
        exec_reply,
        first.executor().state().await.reply_context.reply_id
    );
    assert_eq!(first.progress().await.phase, GoalPhase::Executing);

    // A restart: the state is saved, loaded into a new pipeline.
    let saved = serde_json::to_string(&first.save_state().await).unwrap();
    drop(first);
    let second = build();
    second
        .load_state(serde_json::from_str(&saved).unwrap())
        .await
        .unwrap();
    let events = run(&second, approve(&exec_reply, &calls)).await;
    // The executor finished, the verifier refused (spending an attempt),
    // the executor reported again, and the verifier parked on its own call.
    assert_eq!(
        speakers(&events),
        ["Executor", "Verifier", "Executor", "Verifier"]
    );
    let (ver_reply, calls) = asked(&events);
    assert_eq!(
        ver_reply,
        second.verifier().state().await.reply_context.reply_id
    );
    let progress = second.progress().await;
    assert_eq!(
        (progress.phase, progress.refusals),
        (GoalPhase::Verifying, 1)
    );

    // Once more through a save and load, then the verifier's answer.
    let saved = second.save_state().await;
    let third = build();
    third.load_state(saved).await.unwrap();
    let events = run(&third, approve(&ver_reply, &calls)).await;
    assert_eq!(speakers(&events), ["Verifier"]);
    let progress = third.progress().await;
    assert_eq!(progress.refusals, 1, "resuming keeps the spent attempts");
    assert!(matches!(progress.outcome, Some(GoalOutcome::Passed { .. })));
    assert_eq!((executor.remaining(), verifier.remaining()), (0, 0));
}

#[tokio::test]
async fn a_confirmation_for_an_unknown_reply_is_refused_and_the_run_stays_parked() {
    let f = fixture(
        vec![ScriptedTurn::tool_call(
            "d1",
            "delete_file",
            r#"{"path": "x"}"#,
        )],
        vec![],
        |b| b,
        ReActConfig::default(),
    );
    let events = run(&f.pipe, user("Delete x")).await;
    let (_, calls) = asked(&events);
    let refused = run(&f.pipe, approve("not-a-reply", &calls)).await;
    assert_eq!(types(&refused), ["REPLY_START", "REPLY_END"]);
    let Some(AgentEvent::ReplyEnd(end)) = refused.last() else {
        panic!("{refused:?}")
    };
    assert_eq!(end.finished_reason, ReplyFinishedReason::Error);
    assert!(f.pipe.executor().state().await.is_parked());
    assert_eq!(f.pipe.progress().await.phase, GoalPhase::Executing);
}

#[tokio::test]
async fn an_interrupt_of_the_parked_agent_ends_the_run() {
    let f = fixture(
        vec![ScriptedTurn::tool_call(
            "d1",
            "delete_file",
            r#"{"path": "x"}"#,
        )],
        vec![],
        |b| b,
        ReActConfig::default(),
    );
    let events = run(&f.pipe, user("Delete x")).await;
    let (reply_id, _) = asked(&events);
    let events = run(&f.pipe, UserInterruptEvent::new(reply_id)).await;
    let Some(AgentEvent::ReplyEnd(end)) = events.last() else {
        panic!("{events:?}")
    };
    assert_eq!(end.finished_reason, ReplyFinishedReason::Interrupted);
    let progress = f.pipe.progress().await;
    assert_eq!(progress.outcome, Some(GoalOutcome::Interrupted));
    assert_eq!(progress.phase, GoalPhase::Idle);
}

#[tokio::test]
async fn an_agent_is_a_pipeline_of_one() {
    let model = scripted(vec![ScriptedTurn::text("Hi!")]);
    let agent = build_agent("Friday", &model, ReActConfig::default());
    let target: &dyn PipelineProtocol = &agent;
    let events: Vec<AgentEvent> = target
        .reply_stream(user("Hello"), CancellationToken::new())
        .collect()
        .await;
    assert_well_formed(&events);
    let saved = target.save_state().await;
    let other = build_agent("Friday", &model, ReActConfig::default());
    PipelineProtocol::load_state(&other, saved).await.unwrap();
    assert_eq!(other.state().await.context.len(), 2);
    let bad = PipelineProtocol::load_state(&other, serde_json::json!([1, 2])).await;
    assert!(bad.is_err());
}

#[tokio::test]
async fn cancelling_a_run_ends_it_interrupted_with_one_reply_end() {
    let f = fixture(
        vec![ScriptedTurn::text("a long piece of work that never ends").hang_after(2)],
        vec![],
        |b| b,
        ReActConfig::default(),
    );
    let cancel = CancellationToken::new();
    let mut stream = PipelineProtocol::reply_stream(&f.pipe, user(GOAL), cancel.clone());
    let mut events = Vec::new();
    while let Some(event) = stream.next().await {
        if matches!(event, AgentEvent::TextBlockDelta(_)) {
            cancel.cancel();
        }
        events.push(event);
    }
    assert_well_formed(&events);
    let Some(AgentEvent::ReplyEnd(end)) = events.last() else {
        panic!("{:?}", types(&events))
    };
    assert_eq!(end.finished_reason, ReplyFinishedReason::Interrupted);
    let progress = f.pipe.progress().await;
    assert_eq!(progress.outcome, Some(GoalOutcome::Interrupted));
    assert_eq!(f.verifier.requests().len(), 0);
}

#[tokio::test]
async fn dropping_the_stream_interrupts_the_run() {
    let f = fixture(
        vec![ScriptedTurn::text("a long piece of work that never ends").hang_after(2)],
        vec![],
        |b| b,
        ReActConfig::default(),
    );
    let mut stream = f.pipe.reply_stream(user(GOAL));
    while let Some(event) = stream.next().await {
        if matches!(event, AgentEvent::TextBlockDelta(_)) {
            break;
        }
    }
    drop(stream);
    let progress = tokio::time::timeout(std::time::Duration::from_secs(10), f.pipe.progress())
        .await
        .expect("the run settles after the stream is dropped");
    assert_eq!(progress.outcome, Some(GoalOutcome::Interrupted));
    assert_eq!(progress.phase, GoalPhase::Idle);
}

#[tokio::test]
async fn a_new_message_starts_a_new_run_with_the_full_budget() {
    let f = fixture(
        vec![report("r1", "a"), report("r2", "b"), report("r3", "c")],
        vec![
            verdict("v1", "fail", "not yet"),
            verdict("v2", "pass", ""),
            verdict("v3", "pass", ""),
        ],
        |b| b,
        ReActConfig::default(),
    );
    assert_eq!(f.pipe.run(user(GOAL)).await.refusals, 1);
    let second = f.pipe.run(user("Now add a README")).await;
    assert_eq!(second.refusals, 0);
    assert_eq!(second.goal, "Now add a README");
    assert!(matches!(second.outcome, Some(GoalOutcome::Passed { .. })));
}

#[tokio::test]
async fn a_sibling_shares_model_tools_and_rules_but_not_the_conversation() {
    let model = scripted(vec![
        ScriptedTurn::text("Hi!"),
        ScriptedTurn::text("Hello."),
    ]);
    let dynamic: Arc<dyn DynChatModel> = model.clone();
    let first = Agent::builder("Executor", dynamic)
        .toolkit(toolkit())
        .state(super::common::state_allowing_weather())
        .build()
        .unwrap();
    first.reply(user("hi")).await.unwrap();
    let second = first.sibling("Verifier", "You check.");
    assert_eq!(second.name(), "Verifier");
    let state = second.state().await;
    assert!(state.context.is_empty());
    assert_eq!(
        state.permission_context,
        first.state().await.permission_context
    );
    let reply = second.reply(user("check")).await.unwrap();
    assert_eq!(reply.name, "Verifier");
    let request = &model.requests()[1];
    assert!(
        request
            .tools
            .iter()
            .any(|t| t.function.name == "get_weather")
    );
    assert!(
        serde_json::to_string(&request.messages)
            .unwrap()
            .contains("You check.")
    );
}
