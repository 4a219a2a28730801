//! The task tools over `tasks_context`.

use oxiscope_message::{PermissionBehavior, ToolResultState};
use oxiscope_permission::{PermissionContext, PermissionMode};
use oxiscope_tool::{SessionState, TaskState, ToolResponse, Toolkit};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::support::{builtin_toolkit, ctx, expect, run};

struct Env {
    dir: tempfile::TempDir,
    toolkit: Toolkit,
    session: SessionState,
}

impl Env {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let toolkit = builtin_toolkit(dir.path());
        Self {
            dir,
            toolkit,
            session: SessionState::default(),
        }
    }

    async fn call(&self, tool: &str, input: Value) -> ToolResponse {
        run(
            &self.toolkit,
            tool,
            input,
            ctx(self.dir.path(), &self.session),
        )
        .await
    }

    async fn create(&self, subject: &str) -> String {
        let r = self
            .call(
                "TaskCreate",
                json!({"subject": subject, "description": "d"}),
            )
            .await;
        expect(&r, ToolResultState::Success);
        r.metadata["task_id"].as_str().unwrap().to_owned()
    }

    async fn edges(&self) -> Vec<(String, Vec<String>, Vec<String>)> {
        let tasks = self.session.tasks_context().lock().await.clone();
        tasks
            .tasks
            .into_iter()
            .map(|t| (t.id, t.blocks, t.blocked_by))
            .collect()
    }
}

fn e(id: &str, blocks: &[&str], blocked_by: &[&str]) -> (String, Vec<String>, Vec<String>) {
    let v = |s: &[&str]| s.iter().map(|x| (*x).to_owned()).collect();
    (id.to_owned(), v(blocks), v(blocked_by))
}

#[tokio::test]
async fn ids_are_increasing_numeric_strings() {
    let env = Env::new();
    assert_eq!(env.create("one").await, "1");
    assert_eq!(env.create("two").await, "2");
    env.call("TaskUpdate", json!({"task_id": "2", "status": "deleted"}))
        .await;
    assert_eq!(env.create("three").await, "2");
    assert_eq!(env.create("four").await, "3");
}

#[tokio::test]
async fn dependencies_are_recorded_on_both_sides_and_completion_releases_them() {
    let env = Env::new();
    for s in ["design", "build", "ship"] {
        env.create(s).await;
    }
    let r = env
        .call(
            "TaskUpdate",
            json!({"task_id": "1", "add_blocks": ["2", "3"]}),
        )
        .await;
    expect(&r, ToolResultState::Success);
    let r = env
        .call(
            "TaskUpdate",
            json!({"task_id": "3", "add_blocked_by": ["2"]}),
        )
        .await;
    expect(&r, ToolResultState::Success);
    assert_eq!(
        env.edges().await,
        [
            e("1", &["2", "3"], &[]),
            e("2", &["3"], &["1"]),
            e("3", &[], &["1", "2"])
        ]
    );

    let list = env.call("TaskList", json!({})).await;
    let text = expect(&list, ToolResultState::Success);
    assert!(
        text.contains("#3 [pending] ship (blocked by #1, #2)"),
        "{text}"
    );

    env.call(
        "TaskUpdate",
        json!({"task_id": "1", "status": "completed", "owner": "Friday"}),
    )
    .await;
    assert_eq!(
        env.edges().await,
        [e("1", &[], &[]), e("2", &["3"], &[]), e("3", &[], &["2"])]
    );
    let tasks = env.session.tasks_context().lock().await.clone();
    assert_eq!(tasks.tasks[0].state, TaskState::Completed);
    assert_eq!(tasks.tasks[0].owner.as_deref(), Some("Friday"));
}

#[tokio::test]
async fn deleting_a_task_connects_what_it_waited_for_to_what_waited_for_it() {
    let env = Env::new();
    for s in ["a", "b", "c"] {
        env.create(s).await;
    }
    env.call(
        "TaskUpdate",
        json!({"task_id": "2", "add_blocked_by": ["1"], "add_blocks": ["3"]}),
    )
    .await;
    let r = env
        .call("TaskUpdate", json!({"task_id": "2", "status": "deleted"}))
        .await;
    assert!(expect(&r, ToolResultState::Success).contains("deleted"));
    assert_eq!(
        env.edges().await,
        [e("1", &["3"], &[]), e("3", &[], &["1"])]
    );
}

#[tokio::test]
async fn cycles_unknown_tasks_and_bad_statuses_are_errors_that_change_nothing() {
    let env = Env::new();
    env.create("a").await;
    env.create("b").await;
    env.call("TaskUpdate", json!({"task_id": "1", "add_blocks": ["2"]}))
        .await;
    let before = env.edges().await;
    let cycle = env
        .call(
            "TaskUpdate",
            json!({"task_id": "2", "add_blocks": ["1"], "subject": "x"}),
        )
        .await;
    assert!(expect(&cycle, ToolResultState::Error).contains("cycle"));
    let ghost = env
        .call("TaskUpdate", json!({"task_id": "1", "add_blocks": ["9"]}))
        .await;
    assert!(expect(&ghost, ToolResultState::Error).contains("#9 does not exist"));
    let status = env
        .call("TaskUpdate", json!({"task_id": "1", "status": "done"}))
        .await;
    expect(&status, ToolResultState::Error);
    assert_eq!(env.edges().await, before);
    assert_eq!(
        env.session.tasks_context().lock().await.tasks[1].subject,
        "b"
    );
    let missing = env.call("TaskGet", json!({"task_id": "42"})).await;
    assert!(expect(&missing, ToolResultState::Error).contains("#42 does not exist"));
}

#[tokio::test]
async fn task_get_shows_details_and_metadata_merges() {
    let env = Env::new();
    let r = env
        .call(
            "TaskCreate",
            json!({"subject": "Fix", "description": "the bug", "metadata": {"p": 1, "q": 2}}),
        )
        .await;
    expect(&r, ToolResultState::Success);
    env.call(
        "TaskUpdate",
        json!({"task_id": "1", "metadata": {"p": null, "r": 3}, "status": "in_progress"}),
    )
    .await;
    let got = env.call("TaskGet", json!({"task_id": "1"})).await;
    let text = expect(&got, ToolResultState::Success);
    assert!(
        text.starts_with("Task #1: Fix\nStatus: in_progress\nDescription: the bug"),
        "{text}"
    );
    assert!(text.contains(r#"Metadata: {"q":2,"r":3}"#), "{text}");
    let empty = Env::new();
    assert_eq!(
        expect(
            &empty.call("TaskList", json!({})).await,
            ToolResultState::Success
        ),
        "No tasks."
    );
}

#[test]
fn task_tools_are_always_allowed() {
    let env = Env::new();
    for mode in [PermissionMode::Default, PermissionMode::DontAsk] {
        let perm = PermissionContext::new(mode);
        for tool in ["TaskCreate", "TaskGet", "TaskList", "TaskUpdate"] {
            let decision = env
                .toolkit
                .decide(tool, &json!({"task_id": "1"}), &perm)
                .unwrap();
            assert_eq!(
                decision.behavior,
                PermissionBehavior::Allow,
                "{tool} in {mode:?}"
            );
        }
    }
}
