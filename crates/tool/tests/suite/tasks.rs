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
        text.contains("\n3 [pending] ship[blocked by 1, 2]"),
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
    assert_eq!(
        expect(&ghost, ToolResultState::Error),
        "TaskNotFoundError: The task (id=9) does not exist."
    );
    let unknown = env
        .call("TaskUpdate", json!({"task_id": "9", "subject": "x"}))
        .await;
    assert_eq!(
        expect(&unknown, ToolResultState::Error),
        "TaskNotFoundError: The task (id=9) does not exist."
    );
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
    assert_eq!(expect(&missing, ToolResultState::Error), "Task not found");
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
    // Metadata as Python prints a dict.
    assert_eq!(
        expect(&got, ToolResultState::Success),
        "Task (id=1): Fix\nStatus: in_progress\nDescription: the bug\nMetadata: {'q': 2, 'r': 3}"
    );
    let empty = Env::new();
    assert_eq!(
        expect(
            &empty.call("TaskList", json!({})).await,
            ToolResultState::Success
        ),
        "No tasks available."
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

#[tokio::test]
async fn task_results_read_as_agentscopes() {
    let env = Env::new();
    let created = env
        .call(
            "TaskCreate",
            json!({"subject": "Design", "description": "d"}),
        )
        .await;
    assert_eq!(
        expect(&created, ToolResultState::Success),
        "Task (id=1) created successfully: Design"
    );
    env.create("Build").await;
    let text = |r: &ToolResponse| expect(r, ToolResultState::Success);

    let update = |input: Value| env.call("TaskUpdate", input);
    let r = update(json!({"task_id": "2", "subject": "Build it", "description": "x",
        "add_blocked_by": ["1"], "status": "in_progress", "owner": "Friday", "metadata": {"k": "v"}}))
    .await;
    assert_eq!(
        text(&r),
        "Update task (id=2) subject, description, add_blocked_by, status, owner, metadata."
    );
    // An edge that already exists, an empty subject and empty metadata
    // change nothing.
    let r =
        update(json!({"task_id": "1", "add_blocks": ["2"], "subject": "", "metadata": {}})).await;
    assert_eq!(
        text(&r),
        "No updates were made to the task (id=1). Make sure you provided at least one field to \
         update and the values are correct."
    );
    let r = update(json!({"task_id": "1", "status": "completed"})).await;
    assert_eq!(
        text(&r),
        "Update task (id=1) status.\n\nTask completed. Call TaskList now to find your next \
         available task or see if your work unblocked others."
    );
    let list = env.call("TaskList", json!({})).await;
    assert_eq!(
        text(&list),
        "1 [completed] Design\n2 [in_progress] Build it(Friday)"
    );
    let got = env.call("TaskGet", json!({"task_id": "2"})).await;
    assert_eq!(
        text(&got),
        "Task (id=2): Build it\nStatus: in_progress\nDescription: x\nOwner: Friday\n\
         Metadata: {'k': 'v'}"
    );
    let r = update(json!({"task_id": "2", "status": "deleted"})).await;
    assert_eq!(text(&r), "Task (id=2) has been deleted.");
}

#[tokio::test]
async fn task_metadata_prints_like_a_python_dict() {
    let env = Env::new();
    let metadata = json!({"s": "it's", "q": "say \"hi\"", "n": null, "b": [true, false],
        "f": 1.5, "nested": {"x": "a\\b\n"}});
    env.call(
        "TaskCreate",
        json!({"subject": "S", "description": "d", "metadata": metadata}),
    )
    .await;
    let got = env.call("TaskGet", json!({"task_id": "1"})).await;
    let text = expect(&got, ToolResultState::Success);
    assert_eq!(
        text.rsplit_once("Metadata: ").unwrap().1,
        r#"{'s': "it's", 'q': 'say "hi"', 'n': None, 'b': [True, False], 'f': 1.5, 'nested': {'x': 'a\\b\n'}}"#
    );
}
