//! `oxiscope chat --goal-verifier FILE`: the console drives a goal
//! pipeline instead of the lone assistant. The assistant is the executor;
//! the verifier shares its model, tools, working directory and permission
//! rules, with the system prompt read from FILE. Each message typed at the
//! prompt starts a run: the executor works and reports, the verifier
//! judges, a refusal goes back to the executor, until a pass, an
//! `impossible` verdict or the refusal budget ends it.

use std::path::Path;

use anyhow::Context as _;
use oxiscope_agent::Agent;
use oxiscope_agent::pipeline::{GoalOutcome, GoalPipeline, GoalProgress};

/// The verifier's name on its replies.
const VERIFIER: &str = "Verifier";

/// The verifier's system prompt, read from `prompt_file` (before anything
/// starts, so a bad file fails fast).
///
/// # Errors
/// When the file cannot be read or holds only whitespace.
pub(crate) fn read_prompt(prompt_file: &Path) -> anyhow::Result<String> {
    let prompt = std::fs::read_to_string(prompt_file)
        .with_context(|| format!("cannot read the verifier prompt {}", prompt_file.display()))?;
    if prompt.trim().is_empty() {
        anyhow::bail!("the verifier prompt {} is empty", prompt_file.display());
    }
    Ok(prompt)
}

/// The pipeline around `executor`, with a verifier made from it.
pub(crate) fn pipeline(executor: &Agent, prompt: String, max_iters: Option<u32>) -> GoalPipeline {
    let verifier = executor.sibling(VERIFIER, prompt);
    let mut builder = GoalPipeline::builder(executor.clone(), verifier);
    if let Some(n) = max_iters {
        builder = builder.max_iters(n);
    }
    builder.build()
}

/// The line printed when a run ends (`None` while one is parked or going).
pub(crate) fn outcome_line(progress: &GoalProgress) -> Option<String> {
    let refusals = match progress.refusals {
        0 => String::new(),
        1 => " after 1 refusal".to_owned(),
        n => format!(" after {n} refusals"),
    };
    Some(match progress.outcome.as_ref()? {
        GoalOutcome::Passed { .. } => format!("[goal: passed{refusals}]"),
        GoalOutcome::Impossible { message } => format!("[goal: impossible: {message}]"),
        GoalOutcome::MaxIters { message } => {
            format!("[goal: stopped{refusals}, the limit; last refusal: {message}]")
        }
        GoalOutcome::InvalidOutput { agent } => {
            format!("[goal: stopped, {agent} gave no valid structured output]")
        }
        GoalOutcome::Interrupted => "[goal: interrupted]".to_owned(),
        GoalOutcome::Failed { message } => format!("[goal: failed: {message}]"),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_outcome_line_names_the_result_and_the_refusals() {
        let mut progress = GoalProgress::default();
        assert_eq!(outcome_line(&progress), None);
        progress.refusals = 2;
        progress.outcome = Some(GoalOutcome::Passed {
            report: "r".to_owned(),
            message: String::new(),
        });
        assert_eq!(
            outcome_line(&progress).unwrap(),
            "[goal: passed after 2 refusals]"
        );
        progress.outcome = Some(GoalOutcome::InvalidOutput {
            agent: "Verifier".to_owned(),
        });
        assert!(outcome_line(&progress).unwrap().contains("Verifier"));
    }
}
