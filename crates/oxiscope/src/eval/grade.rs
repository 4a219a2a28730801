//! The graders: what a run's answer and workspace are checked against.
//! Files are read and commands run through the workspace's backend, as
//! the agent's own tools were.

use std::path::Path;
use std::time::Duration;

use oxiscope_agent::pipeline::CancellationToken;
use oxiscope_tool::{ExecBackend, ExecRequest};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::suite::{CommandCheck, FileCheck, Grader};

/// What a run answered.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Answer {
    /// The reply's final text.
    pub text: String,
    /// Its structured output, when it has one.
    pub structured: Option<Value>,
}

/// A grader's verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Grade {
    /// Which grader ([`Grader::label`]).
    pub grader: String,
    /// Whether it passed.
    pub passed: bool,
    /// Why, in a line.
    pub detail: String,
}

impl Grade {
    pub(super) fn new(grader: &Grader, passed: bool, detail: impl Into<String>) -> Self {
        Self {
            grader: grader.label(),
            passed,
            detail: detail.into(),
        }
    }
}

/// Bytes of a file a file grader reads, at most.
const MAX_FILE: u64 = 8 * 1024 * 1024;

/// Bytes of a command's output kept for the verdict.
const MAX_OUTPUT: usize = 64 * 1024;

/// Grades `answer` with one of the graders that need no model (a judge is
/// graded by [`super::judge`]); files and commands through `backend` in
/// `workdir`.
pub(super) async fn grade(
    grader: &Grader,
    answer: &Answer,
    backend: &dyn ExecBackend,
    workdir: &Path,
) -> Grade {
    let (passed, detail) = match grader {
        Grader::Exact(want) => {
            let got = answer.text.trim();
            (got == want.trim(), format!("the answer is {}", quoted(got)))
        }
        Grader::Regex(re) => match regex::Regex::new(re) {
            Ok(re) => (
                re.is_match(&answer.text),
                format!("the answer is {}", quoted(answer.text.trim())),
            ),
            Err(e) => (false, format!("invalid regex: {e}")),
        },
        Grader::JsonSchema(schema) => json_schema(schema, answer),
        Grader::File(check) => file(check, backend, workdir).await,
        Grader::Command(check) => command(check, backend, workdir).await,
        Grader::Judge(_) => (false, "a judge needs a model".to_owned()),
    };
    Grade::new(grader, passed, detail)
}

/// The first 200 characters of `text`, quoted.
fn quoted(text: &str) -> String {
    let mut short: String = text.chars().take(200).collect();
    if short.len() < text.len() {
        short.push('…');
    }
    format!("{short:?}")
}

fn json_schema(schema: &Value, answer: &Answer) -> (bool, String) {
    let validator = match jsonschema::validator_for(schema) {
        Ok(v) => v,
        Err(e) => return (false, format!("invalid schema: {e}")),
    };
    let (value, source) = match &answer.structured {
        Some(value) => (value.clone(), "the structured output"),
        None => match serde_json::from_str::<Value>(unfenced(&answer.text)) {
            Ok(value) => (value, "the answer"),
            Err(e) => return (false, format!("the answer is not JSON: {e}")),
        },
    };
    match validator.iter_errors(&value).next() {
        None => (true, format!("{source} follows the schema")),
        Some(error) => (
            false,
            format!("{source} does not follow the schema: {error}"),
        ),
    }
}

/// `text` trimmed, without a Markdown code fence around it.
fn unfenced(text: &str) -> &str {
    let text = text.trim();
    let Some(body) = text.strip_prefix("```") else {
        return text;
    };
    let body = body.split_once('\n').map_or("", |(_, rest)| rest);
    body.strip_suffix("```").unwrap_or(body).trim()
}

async fn file(check: &FileCheck, backend: &dyn ExecBackend, workdir: &Path) -> (bool, String) {
    let rel = match oxiscope_workspace::safe_relative_path(&check.path, 64) {
        Ok(rel) => rel,
        Err(e) => return (false, e.to_string()),
    };
    let path = workdir.join(rel);
    let bytes = match backend.read(&path, MAX_FILE).await {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return (!check.exists, format!("{} does not exist", check.path));
        }
        Err(e) => return (false, format!("{} cannot be read: {e}", check.path)),
    };
    if !check.exists {
        return (false, format!("{} exists", check.path));
    }
    let text = String::from_utf8_lossy(&bytes);
    if let Some(want) = &check.equals
        && text.trim_end() != want.trim_end()
    {
        return (false, format!("{} holds {}", check.path, quoted(&text)));
    }
    if let Some(want) = &check.contains
        && !text.contains(want.as_str())
    {
        return (false, format!("{} does not contain {want:?}", check.path));
    }
    (true, format!("{} is as expected", check.path))
}

async fn command(
    check: &CommandCheck,
    backend: &dyn ExecBackend,
    workdir: &Path,
) -> (bool, String) {
    let request = ExecRequest {
        command: check.run.clone(),
        cwd: workdir.to_path_buf(),
        timeout: Duration::from_secs(check.timeout_secs),
        max_output: MAX_OUTPUT,
    };
    match backend.exec(request, CancellationToken::new()).await {
        Ok(out) if out.timed_out => (false, format!("timed out after {} s", check.timeout_secs)),
        Ok(out) => {
            let output = String::from_utf8_lossy(&out.output);
            let tail: String = output
                .trim_end()
                .chars()
                .rev()
                .take(200)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            match out.exit_code {
                Some(code) => (
                    code == check.exit,
                    format!(
                        "exit status {code} (wanted {}); output {tail:?}",
                        check.exit
                    ),
                ),
                None => (false, format!("killed by a signal; output {tail:?}")),
            }
        }
        Err(e) => (false, format!("cannot start: {e}")),
    }
}

#[cfg(test)]
#[path = "grade_tests.rs"]
mod tests;
