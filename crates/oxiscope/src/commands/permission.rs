//! `oxiscope permission check`: decide one tool call against a mode and a
//! rule set, the way an agent would.
#![allow(clippy::print_stdout)]

use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Args, Subcommand};
use oxiscope_permission::{
    PathEnv, PermissionBehavior, PermissionContext, PermissionDecision, PermissionMode,
    format_rule, parse_rule, policy_for,
};
use serde_json::Value;

#[derive(Debug, Subcommand)]
pub(crate) enum PermissionCommand {
    /// Decide one tool call and print the decision as JSON.
    ///
    /// The decision goes to stdout as one JSON object (AgentScope's
    /// PermissionDecision shape); a one-line explanation goes to stderr.
    /// Working directories are the current directory plus each --workdir.
    Check(CheckArgs),
}

#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    /// Permission mode: default, accept-edits, explore, bypass or dont-ask.
    #[arg(long, default_value = "default", value_parser = parse_mode)]
    mode: PermissionMode,
    /// An allow rule, `Tool(content)` or `Tool` (repeatable).
    #[arg(long = "allow", value_name = "RULE")]
    allow: Vec<String>,
    /// An ask rule (repeatable).
    #[arg(long = "ask", value_name = "RULE")]
    ask: Vec<String>,
    /// A deny rule (repeatable).
    #[arg(long = "deny", value_name = "RULE")]
    deny: Vec<String>,
    /// An extra working directory (repeatable).
    #[arg(long = "workdir", value_name = "DIR")]
    workdirs: Vec<String>,
    /// The tool name: Bash, Read, Write, Edit, Glob, Grep, or any other
    /// (treated as a tool without its own checks).
    tool: String,
    /// The tool input as a JSON object, e.g. '{"command": "ls"}'.
    #[arg(value_name = "JSON_INPUT")]
    input: String,
}

fn parse_mode(text: &str) -> Result<PermissionMode, String> {
    text.parse()
        .map_err(|e: oxiscope_permission::Error| e.to_string())
}

pub(crate) fn run(command: PermissionCommand) -> anyhow::Result<ExitCode> {
    match command {
        PermissionCommand::Check(args) => check(&args),
    }
}

/// Builds the context the flags describe.
fn context(args: &CheckArgs) -> anyhow::Result<PermissionContext> {
    let mut ctx = PermissionContext::new(args.mode);
    let groups = [
        (&args.allow, PermissionBehavior::Allow),
        (&args.ask, PermissionBehavior::Ask),
        (&args.deny, PermissionBehavior::Deny),
    ];
    for (texts, behavior) in groups {
        for text in texts {
            ctx.add_rule(parse_rule(text, behavior, "cli")?);
        }
    }
    for dir in &args.workdirs {
        ctx.add_working_directory(dir.clone(), "cli");
    }
    Ok(ctx)
}

fn check(args: &CheckArgs) -> anyhow::Result<ExitCode> {
    let ctx = context(args)?;
    let input: Value = serde_json::from_str(&args.input)
        .with_context(|| format!("the tool input is not valid JSON: {}", args.input))?;
    anyhow::ensure!(input.is_object(), "the tool input must be a JSON object");
    let env = PathEnv::from_process();
    let policy = policy_for(&args.tool, &env);
    let decision = oxiscope_permission::decide(policy.as_ref(), &input, &ctx);
    println!("{}", serde_json::to_string(&decision)?);
    eprintln!("{}", explain(&args.tool, &decision));
    Ok(ExitCode::SUCCESS)
}

/// One line for people: `ASK (safety check, allow rules cannot override): ...`.
fn explain(tool: &str, decision: &PermissionDecision) -> String {
    let verdict = decision.behavior.as_str().to_uppercase();
    let immune = if decision.bypass_immune {
        " (safety check, allow rules cannot override)"
    } else {
        ""
    };
    let reason = decision
        .decision_reason
        .as_deref()
        .map(|r| format!(" [{r}]"))
        .unwrap_or_default();
    let suggestions = decision
        .suggested_rules
        .as_deref()
        .filter(|rules| !rules.is_empty() && !decision.bypass_immune)
        .map(|rules| {
            let list: Vec<String> = rules.iter().map(format_rule).collect();
            format!(
                "; to allow similar calls: --allow '{}'",
                list.join("' --allow '")
            )
        })
        .unwrap_or_default();
    format!(
        "{tool}: {verdict}{immune}: {}{reason}{suggestions}",
        decision.message
    )
}
