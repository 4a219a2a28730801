//! What the goal pipeline tells its agents: the structured-output schemas
//! of the executor's report and the verifier's verdict, and the messages
//! that carry the work between them.

use oxiscope_message::{Msg, MsgError};
use serde_json::{Value, json};

/// The name the pipeline's own messages carry.
pub(crate) const SENDER: &str = "GoalPipeline";

/// The schema of the executor's structured output.
pub(crate) fn report_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "report": {
                "type": "string",
                "description": "What you achieved, concretely enough to be checked: the files \
                    you created or changed (paths), entry points, and how to run or test the \
                    result."
            }
        },
        "required": ["report"]
    })
}

/// The schema of the verifier's structured output.
pub(crate) fn verdict_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "result": {
                "type": "string",
                "enum": ["pass", "fail", "impossible"],
                "description": "`pass` when the work meets the goal, `fail` when it does not \
                    yet, `impossible` when the goal cannot be reached at all."
            },
            "message": {
                "type": "string",
                "description": "For `fail`: what exactly is missing or wrong and where to fix \
                    it (it is sent to the executor word for word). For `impossible`: why. May \
                    be empty for `pass`."
            }
        },
        "required": ["result", "message"]
    })
}

/// What the verifier is asked when the goal is not yet in its context.
pub(crate) fn verify_with_goal(goal: &str, report: &str) -> Result<Msg, MsgError> {
    Msg::user(
        SENDER,
        format!(
            "<goal>\n{goal}\n</goal>\n\nAnother agent worked on the goal above and reports:\n\
             <report>\n{report}\n</report>\n\nCheck the actual work against the goal (use your \
             tools to inspect it rather than trusting the report), then give your verdict."
        ),
    )
}

/// What the verifier is asked when it already knows the goal.
pub(crate) fn verify_again(report: &str) -> Result<Msg, MsgError> {
    Msg::user(
        SENDER,
        format!(
            "The work was revised. The new report:\n<report>\n{report}\n</report>\n\nCheck the \
             work against the goal again, then give your verdict."
        ),
    )
}

/// What the executor is told after a refusal.
pub(crate) fn refused(message: &str) -> Result<Msg, MsgError> {
    Msg::user(
        SENDER,
        format!(
            "<system-reminder>A verifier checked your work and did not accept it:\n{message}\n\
             Fix this, then report again.</system-reminder>"
        ),
    )
}

/// What an agent is told when its reply ended without a valid structured
/// output.
pub(crate) fn output_missing(problem: &str) -> Result<Msg, MsgError> {
    Msg::user(
        SENDER,
        format!(
            "<system-reminder>Your reply ended without a valid structured output ({problem}). \
             Call the 'GenerateStructuredOutput' tool with the required fields now.\
             </system-reminder>"
        ),
    )
}
