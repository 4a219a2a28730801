use std::sync::Arc;

use oxiscope_agent::pipeline::GoalPipeline;
use oxiscope_agent::{Agent, AgentState};
use oxiscope_message::{PermissionBehavior, ToolResultState};
use oxiscope_model::DynChatModel;
use oxiscope_test_support::{ScriptedModel, ScriptedTurn};
use oxiscope_tool::{FunctionTool, ToolFlags, Toolkit};
use pretty_assertions::assert_eq;
use schemars::JsonSchema;
use serde::Deserialize;

use super::*;

/// Remove a file.
#[derive(Deserialize, JsonSchema)]
struct Remove {
    /// The path.
    path: String,
}

fn agent(model: &Arc<ScriptedModel>, external: bool) -> Agent {
    let tool = FunctionTool::new("remove", |r: Remove| async move {
        format!("removed {}", r.path)
    });
    let tool = if external {
        tool.with_flags(ToolFlags {
            external: true,
            ..ToolFlags::default()
        })
        .with_permission(PermissionBehavior::Allow)
    } else {
        tool
    };
    let mut toolkit = Toolkit::new();
    toolkit.register(tool).unwrap();
    let dynamic: Arc<dyn DynChatModel> = model.clone();
    Agent::builder("Friday", dynamic)
        .toolkit(Arc::new(toolkit))
        .workdir(std::env::temp_dir())
        .build()
        .unwrap()
}

/// Runs a console over `input` with `target`; returns the summary and
/// what it printed.
async fn console(target: &dyn PipelineProtocol, input: &str) -> (ConsoleSummary, String) {
    let mut console = Console::new(input.as_bytes(), Vec::new(), RenderOptions::plain());
    let summary = console.run(target).await.unwrap();
    (summary, String::from_utf8(console.into_output()).unwrap())
}

fn remove_call(id: &str, path: &str) -> ScriptedTurn {
    ScriptedTurn::tool_call(id, "remove", format!(r#"{{"path": "{path}"}}"#))
}

/// The tool results of the model's request `n`: `(id, state)`, by id.
fn results(model: &ScriptedModel, n: usize) -> Vec<(String, ToolResultState)> {
    model.requests()[n]
        .messages
        .iter()
        .flat_map(Msg::tool_results)
        .map(|r| (r.id.to_string(), r.state))
        .collect::<std::collections::BTreeMap<_, _>>()
        .into_iter()
        .collect()
}

#[tokio::test]
async fn each_line_is_a_reply_until_exit() {
    let model = Arc::new(ScriptedModel::new([
        ScriptedTurn::text("Hello!"),
        ScriptedTurn::text("Fine, thanks."),
    ]));
    let agent = agent(&model, false);
    let (summary, screen) = console(&agent, "Hi\n\n  \nHow are you?\nexit\nnot read\n").await;
    assert_eq!(summary.replies, 2);
    assert_eq!(summary.failed, 0);
    assert_eq!(screen.matches("user> ").count(), 5, "{screen}");
    let hello = screen.find("Hello!").unwrap();
    assert!(screen[hello..].contains("Fine, thanks."), "{screen}");
    assert!(!screen.contains("not read"));
    assert_eq!(agent.state().await.context.len(), 4);
    assert_eq!(model.requests().len(), 2);
}

#[tokio::test]
async fn the_end_of_the_input_leaves_like_exit() {
    let model = Arc::new(ScriptedModel::new([ScriptedTurn::text("Bye.")]));
    let agent = agent(&model, false);
    let (summary, screen) = console(&agent, "Hi").await;
    assert_eq!(summary.replies, 1);
    assert!(screen.ends_with("user> \n"), "{screen:?}");
}

#[tokio::test]
async fn a_confirmation_is_asked_and_each_answer_applies() {
    let model = Arc::new(ScriptedModel::new([
        remove_call("c1", "a.txt")
            .and_tool_call("c2", "remove", r#"{"path": "b.txt"}"#)
            .and_tool_call("c3", "remove", r#"{"path": "c.txt"}"#),
        ScriptedTurn::text("Removed a and c."),
    ]));
    let agent = agent(&model, false);
    let (summary, screen) = console(&agent, "clean up\ny\nno\nalways\nexit\n").await;
    assert_eq!(summary.confirmations, 3);
    assert_eq!(screen.matches("Allow remove(").count(), 3, "{screen}");
    assert!(
        screen.contains("[y] once  [a] always allow remove("),
        "{screen}"
    );
    assert!(screen.contains("Removed a and c."), "{screen}");
    assert_eq!(
        results(&model, 1),
        [
            ("c1".to_owned(), ToolResultState::Success),
            ("c2".to_owned(), ToolResultState::Denied),
            ("c3".to_owned(), ToolResultState::Success)
        ]
    );
    // "always" kept the suggested rule in the agent's permission context.
    let state: AgentState = agent.state().await;
    let rules = state
        .permission_context
        .rules_for(PermissionBehavior::Allow, "remove");
    assert_eq!(rules.len(), 1, "{rules:?}");
}

#[tokio::test]
async fn no_answer_interrupts_the_reply() {
    let model = Arc::new(ScriptedModel::new([remove_call("c1", "a.txt")]));
    let agent = agent(&model, false);
    let (summary, screen) = console(&agent, "clean up\n").await;
    assert_eq!(summary.interrupted, 1, "{screen}");
    assert_eq!(summary.confirmations, 0);
    assert!(
        screen.contains("(no answer: the reply is interrupted)"),
        "{screen}"
    );
    let state = agent.state().await;
    let reply = state.reply_msg().unwrap();
    assert_eq!(
        reply.finished_reason,
        Some(ReplyFinishedReason::Interrupted)
    );
    assert_eq!(model.requests().len(), 1);
}

#[tokio::test]
async fn a_call_run_outside_the_agent_interrupts_the_reply() {
    let model = Arc::new(ScriptedModel::new([remove_call("c1", "a.txt")]));
    let agent = agent(&model, true);
    let (summary, screen) = console(&agent, "clean up\nexit\n").await;
    assert!(
        screen.contains("run outside the agent; it is interrupted"),
        "{screen}"
    );
    assert_eq!(summary.interrupted, 1);
}

#[tokio::test]
async fn a_goal_pipeline_runs_in_the_console() {
    let submit = |args: &str| ScriptedTurn::tool_call("s", "GenerateStructuredOutput", args);
    let model = Arc::new(ScriptedModel::new([
        submit(r#"{"report": "draft"}"#),
        submit(r#"{"result": "fail", "message": "too short"}"#),
        submit(r#"{"report": "longer draft"}"#),
        submit(r#"{"result": "pass", "message": "good"}"#),
    ]));
    let executor = agent(&model, false);
    let verifier = executor.sibling("Verifier", "Be strict.");
    let pipeline = GoalPipeline::builder(executor, verifier)
        .max_iters(3)
        .build();
    let (summary, _screen) = console(&pipeline, "write it\nexit\n").await;
    assert_eq!(summary.replies, 1);
    assert_eq!(summary.failed, 0);
    assert_eq!(model.requests().len(), 4);
    let progress = pipeline.progress().await;
    assert_eq!(progress.refusals, 1);
    assert!(progress.outcome.is_some());
}

#[test]
fn answers_parse_and_become_confirm_results() {
    assert_eq!(Answer::parse(" Y \n"), Answer::Once);
    assert_eq!(Answer::parse("always"), Answer::Always);
    assert_eq!(Answer::parse(""), Answer::Deny);
    assert_eq!(Answer::parse("nope"), Answer::Deny);
}
