//! `oxiscope config`: where the configuration lives, a commented file to
//! start from, and the settings in effect.
#![allow(clippy::print_stdout)]

use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::Subcommand;
use oxiscope_message::PermissionRule;
use oxiscope_permission::format_rule;

use super::chat::settings::{self, Settings};
use super::chat::{ChatArgs, project, working_dir};

/// The file `config init` writes: every key, commented out.
const TEMPLATE: &str = include_str!("config_template.toml");

#[derive(Debug, Subcommand)]
pub(crate) enum ConfigCommand {
    /// Print the path of the config file (`config.toml`; it may not exist yet).
    Path,
    /// Print the data dir, where sessions and the prompt history are kept.
    DataDir,
    /// Write a commented config file at `oxiscope config path`.
    Init {
        /// Replace the file if it exists.
        #[arg(long)]
        force: bool,
    },
    /// Print the settings `oxiscope chat` would run with, from these flags,
    /// the environment, the config file and the project's settings file
    /// (the API key masked).
    Show(Box<ChatArgs>),
}

pub(crate) fn run(command: &ConfigCommand) -> anyhow::Result<ExitCode> {
    match command {
        ConfigCommand::Path => println!("{}", settings::config_path()?.display()),
        ConfigCommand::DataDir => println!("{}", settings::data_dir()?.display()),
        ConfigCommand::Init { force } => return init(*force),
        ConfigCommand::Show(args) => print!("{}", show(args)?),
    }
    Ok(ExitCode::SUCCESS)
}

fn init(force: bool) -> anyhow::Result<ExitCode> {
    let path = settings::config_path()?;
    if path.exists() && !force {
        eprintln!(
            "oxiscope config init: {} exists; --force replaces it.",
            path.display()
        );
        return Ok(ExitCode::from(1));
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    std::fs::write(&path, TEMPLATE).with_context(|| format!("cannot write {}", path.display()))?;
    println!("Wrote {}", path.display());
    Ok(ExitCode::SUCCESS)
}

/// The settings in effect, one per line.
fn show(args: &ChatArgs) -> anyhow::Result<String> {
    let workdir = working_dir(args.cwd.as_deref())?;
    let config_dir = settings::config_dir()?;
    let config_path = settings::config_path()?;
    let file = settings::load_config(&config_path)?;
    let project_rules = project::load(&workdir)?;
    let env = |k: &str| std::env::var(k).ok();
    let resolved = settings::resolve(args, &env, &file, &config_dir, args.prompt.is_some())?;
    let mut out = String::new();
    let _ = writeln!(out, "config file: {}", described(&config_path));
    let _ = writeln!(
        out,
        "project settings: {}",
        described(&project::settings_path(&workdir))
    );
    let mut settings = match resolved {
        Ok(settings) => settings,
        Err(reason) => {
            let _ = writeln!(out, "model: not configured ({})", reason.0);
            return Ok(out);
        }
    };
    settings.add_rules(&project_rules, "project")?;
    out.push_str(&settings_text(&settings));
    Ok(out)
}

fn described(path: &Path) -> String {
    let state = if path.exists() { "" } else { " (not there)" };
    format!("{}{state}", path.display())
}

/// `settings` as `key: value` lines.
fn settings_text(settings: &Settings) -> String {
    let model = &settings.model;
    let mut out = String::new();
    let mut line = |key: &str, value: &str| {
        let _ = writeln!(out, "{key}: {value}");
    };
    line("provider", &model.provider.to_string());
    line("model", &model.model);
    line("endpoint", &model.endpoint());
    line(
        "api_key",
        &model.api_key.as_deref().map_or("(none)".into(), mask),
    );
    line("mode", &settings.permissions.mode.to_string());
    let rule_lists = [
        ("allow", &settings.permissions.allow_rules),
        ("ask", &settings.permissions.ask_rules),
        ("deny", &settings.permissions.deny_rules),
    ];
    for (key, rules) in rule_lists {
        let texts: Vec<String> = rules.values().flatten().map(rule_with_source).collect();
        line(key, &texts.join(", "));
    }
    let render = &settings.render;
    line("verbosity", render.verbosity.as_str());
    line(
        "max_tool_lines",
        &render
            .max_tool_lines
            .map_or("all".to_owned(), |n| n.to_string()),
    );
    line("color", &render.color.to_string());
    let servers: Vec<&str> = settings.mcp.iter().map(|s| s.name()).collect();
    line("mcp_servers", &servers.join(", "));
    let skills: Vec<String> = settings
        .skills
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    line("skills", &skills.join(", "));
    out
}

fn rule_with_source(rule: &PermissionRule) -> String {
    format!("{} ({})", format_rule(rule), rule.source)
}

/// A key with all but its first three and last four characters hidden
/// (`sk-...abcd`); a short key is hidden whole.
pub(crate) fn mask(key: &str) -> String {
    let chars: Vec<char> = key.chars().collect();
    if chars.len() < 12 {
        return "***".to_owned();
    }
    let head: String = chars[..3].iter().collect();
    let tail: String = chars[chars.len() - 4..].iter().collect();
    format!("{head}...{tail}")
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn a_key_shows_only_its_ends() {
        assert_eq!(mask("sk-proj-1234567890abcd"), "sk-...abcd");
        assert_eq!(mask("sk-short"), "***");
    }

    #[test]
    fn the_template_is_a_config_file_that_sets_nothing() {
        let file: settings::ConfigFile = toml::from_str(TEMPLATE).unwrap();
        assert_eq!(file, settings::ConfigFile::default());
        // Each key, uncommented, is one the config file takes.
        let uncommented: String = TEMPLATE
            .lines()
            .filter_map(|l| l.strip_prefix("# "))
            .filter(|l| l.contains(" = ") || l.starts_with('['))
            .map(|l| format!("{l}\n"))
            .collect();
        let file: settings::ConfigFile = toml::from_str(&uncommented).unwrap();
        assert_eq!(file.model.as_deref(), Some("gpt-4.1"));
        assert_eq!(file.mcp_servers.len(), 1);
    }
}
