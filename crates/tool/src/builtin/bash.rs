//! `Bash`: one shell command in its own process group.

use std::sync::LazyLock;
use std::time::Duration;

use oxiscope_message::ToolResultState;
use oxiscope_permission::{BashPolicy, PathEnv};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{INTERRUPTED_TEXT, delegate_permissions, parse};
use crate::backend::{ExecOutput, ExecRequest};
use crate::chunk::ToolChunk;
use crate::tool::{Tool, ToolCallContext, ToolFlags, ToolStream, once_future};

/// Default time limit in milliseconds.
const DEFAULT_TIMEOUT_MS: u64 = 120_000;
/// Combined stdout/stderr kept, in bytes.
const MAX_OUTPUT_BYTES: usize = 30_000;
/// Appended to output cut at [`MAX_OUTPUT_BYTES`].
const TRUNCATED_NOTICE: &str = "\n... (output truncated)";
/// The result of a successful command that printed nothing.
const NO_OUTPUT: &str = "(no output)";

static SCHEMA: LazyLock<Value> = LazyLock::new(|| {
    json!({
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "The command line to run."},
            "description": {"type": "string",
                "description": "A few words saying what the command does, for the user."},
            "timeout": {"type": "integer", "default": 120_000, "maximum": 600_000, "minimum": 0,
                "description": "Time limit in milliseconds (at most 600000)."}
        },
        "required": ["command"]
    })
});

const DESCRIPTION: &str = "Run a bash command and return its combined output and exit code. \
Each call starts a fresh shell in the session's working directory, so `cd` and variables do \
not carry over; use absolute paths. The command is stopped, with everything it started, \
when the time limit passes (default 2 minutes, at most 10) or the user interrupts. Long \
output is cut. Prefer the dedicated tools for files and search: Read instead of cat/head/tail, \
Edit or Write instead of sed/echo redirection, Glob instead of find/ls, Grep instead of \
grep/rg. Quote paths that contain spaces. Chain dependent commands with `&&`; make separate \
calls for independent ones.";

#[derive(Deserialize)]
struct Args {
    command: String,
    timeout: u64,
}

/// Runs shell commands; permission hooks come from [`BashPolicy`].
#[derive(Debug, Clone)]
pub struct Bash {
    policy: BashPolicy,
}

impl Bash {
    /// A Bash tool judging commands relative to `env`.
    #[must_use]
    pub fn new(env: PathEnv) -> Self {
        Self {
            policy: BashPolicy::new(env),
        }
    }
}

impl Tool for Bash {
    fn name(&self) -> &str {
        "Bash"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn input_schema(&self) -> &Value {
        &SCHEMA
    }

    delegate_permissions!();

    fn flags(&self) -> ToolFlags {
        ToolFlags::default()
    }

    fn call(&self, input: Value, ctx: ToolCallContext) -> ToolStream {
        once_future(async move {
            match parse::<Args>("Bash", input) {
                Ok(args) => run(args, ctx).await,
                Err(chunk) => chunk,
            }
        })
    }
}

async fn run(args: Args, ctx: ToolCallContext) -> ToolChunk {
    if args.command.trim().is_empty() {
        return ToolChunk::error("The command is empty.");
    }
    let timeout_ms = if args.timeout == 0 {
        DEFAULT_TIMEOUT_MS
    } else {
        args.timeout
    };
    let request = ExecRequest {
        command: args.command.clone(),
        cwd: ctx.cwd.clone(),
        timeout: Duration::from_millis(timeout_ms),
        max_output: MAX_OUTPUT_BYTES,
    };
    let out = match ctx.backend.exec(request, ctx.cancel.clone()).await {
        Ok(out) => out,
        Err(e) => {
            return ToolChunk::error(format!("Command failed: {}\nError: {e}", args.command));
        }
    };
    let exit_code = out.exit_code.map_or(Value::Null, Value::from);
    let (text, state) = result_text(&args.command, &out, timeout_ms);
    ToolChunk::text(text)
        .with_state(state)
        .with_metadata("exit_code", exit_code)
        .with_metadata("truncated", out.truncated())
        .with_metadata("timed_out", out.timed_out)
}

/// The result text in AgentScope's words: the output on success, `Command
/// failed: ...` with the output otherwise, a timeout naming the command.
///
/// Two differences: stdout and stderr arrive interleaved, so a failure
/// shows one `Output:` section (not `Stdout:` and `Stderr:`) followed by
/// the exit code, which AgentScope leaves out; and a silent success says
/// `(no output)`, since an empty tool result is refused by some model APIs.
fn result_text(command: &str, out: &ExecOutput, timeout_ms: u64) -> (String, ToolResultState) {
    if out.timed_out {
        let text = format!("Command timed out after {timeout_ms}ms: {command}");
        return (text, ToolResultState::Error);
    }
    if out.cancelled {
        return (INTERRUPTED_TEXT.to_owned(), ToolResultState::Interrupted);
    }
    let mut output = String::from_utf8_lossy(&out.output).replace("\r\n", "\n");
    if out.truncated() {
        output.push_str(TRUNCATED_NOTICE);
    }
    if out.exit_code == Some(0) {
        if output.is_empty() {
            output = NO_OUTPUT.to_owned();
        }
        return (output, ToolResultState::Success);
    }
    let mut text = format!("Command failed: {command}\n");
    if !output.is_empty() {
        text.push_str("\nOutput:\n");
        text.push_str(&output);
        if !output.ends_with('\n') {
            text.push('\n');
        }
    }
    match out.exit_code {
        Some(code) => text.push_str(&format!("\nExit code: {code}")),
        None => text.push_str("\nKilled by a signal."),
    }
    (text, ToolResultState::Error)
}
