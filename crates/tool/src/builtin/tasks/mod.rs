//! `TaskCreate`, `TaskGet`, `TaskList`, `TaskUpdate`: the session's task
//! list in `tasks_context`. Always allowed; state-injected.

mod graph;

use std::fmt::Write as _;
use std::sync::LazyLock;

use oxiscope_permission::{PermissionContext, PermissionDecision};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::parse;
use super::pyrepr::py_repr;
use crate::chunk::ToolChunk;
use crate::state::{Task, TaskState, TasksContext};
use crate::tool::{Tool, ToolCallContext, ToolFlags, ToolStream, once_future};

fn nullable(inner: &Value, description: &str) -> Value {
    json!({"anyOf": [inner, {"type": "null"}], "default": null, "description": description})
}

static CREATE_SCHEMA: LazyLock<Value> = LazyLock::new(|| {
    json!({
        "description": "Arguments of TaskCreate.",
        "properties": {
            "subject": {"type": "string", "description": "A short title in the imperative."},
            "description": {"type": "string", "description": "What has to be done, in detail."},
            "metadata": nullable(&json!({"additionalProperties": true, "type": "object"}),
                "Free-form data to attach."),
        },
        "required": ["subject", "description"],
        "type": "object"
    })
});

static GET_SCHEMA: LazyLock<Value> = LazyLock::new(|| {
    json!({
        "description": "Arguments of TaskGet.",
        "properties": {"task_id": {"type": "string", "description": "The task id."}},
        "required": ["task_id"],
        "type": "object"
    })
});

static LIST_SCHEMA: LazyLock<Value> = LazyLock::new(
    || json!({"description": "TaskList takes no arguments.", "properties": {}, "type": "object"}),
);

static UPDATE_SCHEMA: LazyLock<Value> = LazyLock::new(|| {
    let ids = json!({"items": {"type": "string"}, "type": "array"});
    json!({
        "description": "Arguments of TaskUpdate.",
        "properties": {
            "task_id": {"type": "string", "description": "The task to change."},
            "subject": nullable(&json!({"type": "string"}), "A new title."),
            "description": nullable(&json!({"type": "string"}), "A new description."),
            "add_blocks": nullable(&ids, "Ids of tasks that must wait for this one."),
            "status": nullable(
                &json!({"enum": ["pending", "in_progress", "completed", "deleted"], "type": "string"}),
                "The new status; `deleted` removes the task."),
            "add_blocked_by": nullable(&ids, "Ids of tasks this one must wait for."),
            "owner": nullable(&json!({"type": "string"}), "Who works on the task."),
            "metadata": nullable(&json!({"additionalProperties": true, "type": "object"}),
                "Keys to merge into the metadata; a null value removes a key."),
        },
        "required": ["task_id"],
        "type": "object"
    })
});

fn task_flags() -> ToolFlags {
    ToolFlags {
        concurrency_safe: true,
        state_injected: true,
        ..ToolFlags::default()
    }
}

fn always_allowed(name: &str) -> PermissionDecision {
    PermissionDecision::allow(format!("{name} only changes the session's task list"))
}

macro_rules! task_tool {
    ($ty:ident, $name:literal, $schema:ident, $description:literal, $run:ident) => {
        #[doc = concat!("The `", $name, "` tool.")]
        #[derive(Debug, Clone, Copy, Default)]
        pub struct $ty;

        impl Tool for $ty {
            fn name(&self) -> &str {
                $name
            }

            fn description(&self) -> &str {
                $description
            }

            fn input_schema(&self) -> &Value {
                &$schema
            }

            fn flags(&self) -> ToolFlags {
                task_flags()
            }

            fn check_permissions(&self, _: &Value, _: &PermissionContext) -> PermissionDecision {
                always_allowed($name)
            }

            fn call(&self, input: Value, ctx: ToolCallContext) -> ToolStream {
                once_future(async move {
                    let mut tasks = ctx.session.tasks_context().lock().await;
                    $run(input, &mut tasks).unwrap_or_else(|chunk| chunk)
                })
            }
        }
    };
}

task_tool!(
    TaskCreate,
    "TaskCreate",
    CREATE_SCHEMA,
    "Add a task to your task list. Use it to plan work with several steps and to keep \
     track of progress; new tasks start as pending. Link tasks with TaskUpdate.",
    create
);
task_tool!(
    TaskGet,
    "TaskGet",
    GET_SCHEMA,
    "Show one task in full: subject, description, status, owner and dependencies.",
    get
);
task_tool!(
    TaskList,
    "TaskList",
    LIST_SCHEMA,
    "List all tasks with their status, owner and what blocks them. Check it to pick the \
     next task that nothing blocks.",
    list
);
task_tool!(
    TaskUpdate,
    "TaskUpdate",
    UPDATE_SCHEMA,
    "Change a task: status (pending, in_progress, completed, or deleted to remove it), \
     subject, description, owner, metadata, and dependencies (add_blocks / add_blocked_by). \
     Mark a task in_progress when you start it and completed as soon as it is done.",
    update
);

#[derive(Deserialize)]
struct CreateArgs {
    subject: String,
    description: String,
    #[serde(default)]
    metadata: Option<Map<String, Value>>,
}

fn create(input: Value, tasks: &mut TasksContext) -> Result<ToolChunk, ToolChunk> {
    let args: CreateArgs = parse("TaskCreate", input)?;
    let id = tasks.create(
        args.subject.clone(),
        args.description,
        args.metadata.unwrap_or_default(),
    );
    Ok(ToolChunk::text(format!(
        "Task (id={id}) created successfully: {}",
        args.subject
    ))
    .with_metadata("task_id", id))
}

#[derive(Deserialize)]
struct GetArgs {
    task_id: String,
}

/// TaskUpdate's answer for an unknown id.
fn missing(id: &str) -> ToolChunk {
    ToolChunk::error(format!(
        "TaskNotFoundError: The task (id={id}) does not exist."
    ))
}

fn refs(ids: &[String]) -> String {
    ids.iter()
        .map(|i| format!("#{i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn get(input: Value, tasks: &mut TasksContext) -> Result<ToolChunk, ToolChunk> {
    let args: GetArgs = parse("TaskGet", input)?;
    let task = tasks
        .task(&args.task_id)
        .ok_or_else(|| ToolChunk::error("Task not found"))?;
    let mut out = format!(
        "Task (id={}): {}\nStatus: {}\nDescription: {}",
        task.id,
        task.subject,
        task.state.as_str(),
        task.description
    );
    if let Some(owner) = task.owner.as_deref().filter(|o| !o.is_empty()) {
        let _ = write!(out, "\nOwner: {owner}");
    }
    if !task.blocked_by.is_empty() {
        let _ = write!(out, "\nBlocked by: {}", refs(&task.blocked_by));
    }
    if !task.blocks.is_empty() {
        let _ = write!(out, "\nBlocks: {}", refs(&task.blocks));
    }
    if !task.metadata.is_empty() {
        let metadata = Value::Object(task.metadata.clone());
        let _ = write!(out, "\nMetadata: {}", py_repr(&metadata));
    }
    Ok(ToolChunk::text(out))
}

/// `id [state] subject(owner)[blocked by a, b]`, as AgentScope lists a task.
fn list_line(task: &Task) -> String {
    let mut line = format!("{} [{}] {}", task.id, task.state.as_str(), task.subject);
    if let Some(owner) = task.owner.as_deref().filter(|o| !o.is_empty()) {
        let _ = write!(line, "({owner})");
    }
    if !task.blocked_by.is_empty() {
        let _ = write!(line, "[blocked by {}]", task.blocked_by.join(", "));
    }
    line
}

fn list(_input: Value, tasks: &mut TasksContext) -> Result<ToolChunk, ToolChunk> {
    if tasks.tasks.is_empty() {
        return Ok(ToolChunk::text("No tasks available."));
    }
    let lines: Vec<String> = tasks.tasks.iter().map(list_line).collect();
    Ok(ToolChunk::text(lines.join("\n")))
}

#[derive(Deserialize)]
struct UpdateArgs {
    task_id: String,
    #[serde(default)]
    subject: Option<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    add_blocks: Option<Vec<String>>,
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    add_blocked_by: Option<Vec<String>>,
    #[serde(default)]
    owner: Option<String>,
    #[serde(default)]
    metadata: Option<Map<String, Value>>,
}

fn update(input: Value, tasks: &mut TasksContext) -> Result<ToolChunk, ToolChunk> {
    let args: UpdateArgs = parse("TaskUpdate", input)?;
    let id = args.task_id.as_str();
    let Some(before) = tasks.task(id).cloned() else {
        return Err(missing(id));
    };
    if args.status.as_deref() == Some("deleted") {
        tasks.delete(id);
        return Ok(ToolChunk::text(format!("Task (id={id}) has been deleted.")));
    }
    // Check every dependency first so a failed update changes nothing.
    let mut trial = tasks.clone();
    for other in args.add_blocks.iter().flatten() {
        trial.add_dependency(id, other).map_err(ToolChunk::error)?;
    }
    for other in args.add_blocked_by.iter().flatten() {
        trial.add_dependency(other, id).map_err(ToolChunk::error)?;
    }
    // Named as AgentScope names them, in its order.
    let mut changed = Vec::new();
    if let Some(task) = trial.task_mut_pub(id) {
        if let Some(subject) = args.subject.filter(|s| !s.is_empty()) {
            task.subject = subject;
            changed.push("subject");
        }
        if let Some(description) = args.description {
            task.description = description;
            changed.push("description");
        }
        if task.blocks.len() > before.blocks.len() {
            changed.push("add_blocks");
        }
        if task.blocked_by.len() > before.blocked_by.len() {
            changed.push("add_blocked_by");
        }
    }
    if let Some(status) = args.status.as_deref() {
        let state = match status {
            "pending" => TaskState::Pending,
            "in_progress" => TaskState::InProgress,
            "completed" => TaskState::Completed,
            other => return Err(ToolChunk::error(format!("Unknown status `{other}`."))),
        };
        trial.set_state(id, state);
        changed.push("status");
    }
    if let Some(task) = trial.task_mut_pub(id) {
        if let Some(owner) = args.owner {
            task.owner = Some(owner);
            changed.push("owner");
        }
        if let Some(metadata) = args.metadata.filter(|m| !m.is_empty()) {
            for (key, value) in metadata {
                if value.is_null() {
                    task.metadata.remove(&key);
                } else {
                    task.metadata.insert(key, value);
                }
            }
            changed.push("metadata");
        }
    }
    let completed = trial
        .task(id)
        .is_some_and(|t| t.state == TaskState::Completed);
    *tasks = trial;
    let mut text = if changed.is_empty() {
        format!(
            "No updates were made to the task (id={id}). Make sure you provided at least one \
             field to update and the values are correct."
        )
    } else {
        format!("Update task (id={id}) {}.", changed.join(", "))
    };
    if completed {
        text.push_str(
            "\n\nTask completed. Call TaskList now to find your next available task or see if \
             your work unblocked others.",
        );
    }
    Ok(ToolChunk::text(text))
}
