//! The judge grader: a model reads the task, the answer and the rubric and
//! returns a verdict as structured output. Its call is recorded on a tape
//! of its own, so a suite run from tapes replays the verdict too.

use std::sync::Arc;

use oxiscope_agent::Agent;
use oxiscope_message::Msg;
use oxiscope_model::DynChatModel;
use serde::Deserialize;
use serde_json::{Value, json};

use super::grade::{Answer, Grade};
use super::suite::Grader;
use crate::tape::{Divergence, Tape, TapeRecorder, TapeReplayer};

/// The judge's instructions.
const PROMPT: &str = "You grade the answer an AI agent gave to a task. Read the task, the \
answer and the rubric, then decide whether the answer meets the rubric. Give your verdict \
with `pass` (true or false) and a one-sentence `reason`.";

/// Where the judge's verdict comes from.
pub(super) enum JudgeSource<'a> {
    /// This model, recorded.
    Live(Arc<dyn DynChatModel>),
    /// A recorded verdict.
    Tape(&'a Tape),
}

/// What a judge grader gave: its grade, the tape of its call (when live)
/// and where a replay parted from the recorded call.
pub(super) struct Judged {
    pub grade: Grade,
    pub tape: Option<Tape>,
    pub divergence: Option<Divergence>,
}

#[derive(Deserialize)]
struct Verdict {
    pass: bool,
    #[serde(default)]
    reason: String,
}

/// Asks the judge whether `answer` to `task` meets `rubric`.
pub(super) async fn judge(
    grader: &Grader,
    rubric: &str,
    task: &str,
    answer: &Answer,
    source: JudgeSource<'_>,
) -> Judged {
    let failed = |detail: String, tape, divergence| Judged {
        grade: Grade::new(grader, false, detail),
        tape,
        divergence,
    };
    let (model, recorder, replayer) = match source {
        JudgeSource::Live(model) => (model, Some(TapeRecorder::new()), None),
        JudgeSource::Tape(tape) => {
            let replayer = TapeReplayer::new(tape.clone());
            (crate::tape::offline_model(tape), None, Some(replayer))
        }
    };
    let mut builder = Agent::builder("Judge", model).system_prompt(PROMPT);
    if let Some(recorder) = &recorder {
        builder = builder.middleware(recorder.clone());
    }
    if let Some(replayer) = &replayer {
        builder = builder.middleware(replayer.clone());
    }
    let agent = match builder.build() {
        Ok(agent) => agent,
        Err(e) => return failed(format!("cannot build the judge: {e}"), None, None),
    };
    let structured = answer
        .structured
        .as_ref()
        .map(|v| format!("\n\nIts structured output:\n{v}"))
        .unwrap_or_default();
    let question = format!(
        "<task>\n{task}\n</task>\n\n<answer>\n{}{structured}\n</answer>\n\n<rubric>\n{rubric}\n</rubric>",
        answer.text
    );
    let reply = match Msg::user("grader", question) {
        Ok(msg) => agent.reply_with(msg, Some(verdict_schema())).await,
        Err(e) => return failed(format!("cannot ask the judge: {e}"), None, None),
    };
    let tape = recorder.map(|r| r.tape());
    let divergence = replayer.and_then(|r| r.report().divergence);
    let verdict = reply
        .map_err(|e| e.to_string())
        .and_then(|msg| msg.structured_output.ok_or_else(|| "no verdict".to_owned()))
        .and_then(|map| {
            serde_json::from_value::<Verdict>(Value::Object(*map)).map_err(|e| e.to_string())
        });
    match verdict {
        Ok(v) => Judged {
            grade: Grade::new(grader, v.pass, format!("the judge says: {}", v.reason)),
            tape,
            divergence,
        },
        Err(e) => failed(format!("the judge gave no verdict: {e}"), tape, divergence),
    }
}

/// The verdict's shape.
fn verdict_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "pass": {"type": "boolean", "description": "Whether the answer meets the rubric."},
            "reason": {"type": "string", "description": "Why, in one sentence."}
        },
        "required": ["pass", "reason"]
    })
}
