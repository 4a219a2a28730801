//! Agents over scripted models with the Read/Write/Edit tools and the
//! memory middleware.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use oxiscope_agent::{Agent, AgentState};
use oxiscope_memory::{AgenticMemoryMiddleware, MemoryMode, Parameters};
use oxiscope_message::{AgentEvent, ContentBlock, Msg};
use oxiscope_model::DynChatModel;
use oxiscope_permission::{PathEnv, PermissionContext, PermissionMode};
use oxiscope_test_support::ScriptedModel;
use oxiscope_tool::{Edit, Read, Toolkit, Write};

/// Parameters for tests: the first reasoning step waits for the
/// selection, so hints arrive deterministically.
pub(crate) fn params(mode: MemoryMode) -> Parameters {
    Parameters {
        mode,
        retrieval_wait: Duration::from_secs(30),
        ..Parameters::default()
    }
}

pub(crate) fn memory(
    workdir: &Path,
    selector: &Arc<ScriptedModel>,
    params: Parameters,
) -> AgenticMemoryMiddleware {
    let model: Arc<dyn DynChatModel> = selector.clone();
    AgenticMemoryMiddleware::builder(workdir, model)
        .parameters(params)
        .build()
        .unwrap()
}

pub(crate) fn agent(
    workdir: &Path,
    model: &Arc<ScriptedModel>,
    memory: AgenticMemoryMiddleware,
) -> Agent {
    let env = PathEnv::new(workdir, None);
    let mut toolkit = Toolkit::new();
    toolkit.register(Read::new(env.clone())).unwrap();
    toolkit.register(Write::new(env.clone())).unwrap();
    toolkit.register(Edit::new(env)).unwrap();
    let state = AgentState {
        permission_context: PermissionContext::new(PermissionMode::AcceptEdits),
        ..AgentState::default()
    };
    let dynamic: Arc<dyn DynChatModel> = model.clone();
    Agent::builder("Friday", dynamic)
        .system_prompt("You are Friday, a helpful assistant.")
        .toolkit(Arc::new(toolkit))
        .workdir(workdir)
        .state(state)
        .middleware(memory)
        .build()
        .unwrap()
}

pub(crate) async fn run(agent: &Agent, text: &str) -> Vec<AgentEvent> {
    agent
        .reply_stream(Msg::user("user", text).unwrap())
        .collect()
        .await
}

/// The source of hints middleware adds.
const MIDDLEWARE_HINT_SOURCE: &str = r#"{"label": "System", "sublabel": "Middleware"}"#;

/// The text of every memory hint (a middleware's hint block) in `msg`.
pub(crate) fn hints(msg: &Msg) -> Vec<String> {
    msg.content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Hint(h) if h.source.as_deref() == Some(MIDDLEWARE_HINT_SOURCE) => {
                Some(h.hint.text(""))
            }
            _ => None,
        })
        .collect()
}

/// The text of `msg`'s text blocks.
pub(crate) fn text(msg: &Msg) -> String {
    msg.content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The text of the tool results in `msg`.
pub(crate) fn tool_results(msg: &Msg) -> Vec<String> {
    msg.content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::ToolResult(r) => Some(r.output.text("")),
            _ => None,
        })
        .collect()
}

/// Whether the reply completed.
pub(crate) fn completed(events: &[AgentEvent]) -> bool {
    matches!(events.last(), Some(AgentEvent::ReplyEnd(e))
        if e.finished_reason == oxiscope_message::ReplyFinishedReason::Completed)
}

pub(crate) const PROFILE: &str = "---\nname: User profile\ndescription: When answering the \
user, read this for their location and answer style\ntype: user\n---\n\nThe user lives in \
Hangzhou and prefers concise answers in Chinese.\n";

/// Writes a memory file by hand.
pub(crate) fn write(dir: &Path, name: &str, content: &[u8]) {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}
