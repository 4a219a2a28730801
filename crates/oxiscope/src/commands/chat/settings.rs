//! Where `oxiscope chat` gets its settings: flags, then the environment,
//! then the config file in the user's config dir.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use oxiscope_message::PermissionBehavior;
use oxiscope_permission::{PermissionContext, PermissionMode, parse_rule};
use oxiscope_providers::Provider;
use serde::Deserialize;

use super::ChatArgs;
use super::mcp_config::{ServerSpec, resolve_servers};
use super::provider::{ModelSettings, infer_provider, parse_provider};
use super::skills::{SkillsSection, skill_dirs};
use oxiscope::render::{RenderOptions, Verbosity};

/// Lines of a tool result shown before the rest collapses.
const DEFAULT_MAX_TOOL_LINES: usize = 20;

/// The config file, `config.toml` in the config dir. Every key is optional.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ConfigFile {
    pub(crate) provider: Option<String>,
    pub(crate) model: Option<String>,
    pub(crate) base_url: Option<String>,
    pub(crate) api_key: Option<String>,
    pub(crate) mode: Option<String>,
    pub(crate) verbosity: Option<String>,
    pub(crate) max_tool_lines: Option<usize>,
    pub(crate) color: Option<bool>,
    #[serde(default)]
    pub(crate) permissions: RuleLists,
    /// `[mcp_servers.NAME]` tables, checked one by one when resolved (so
    /// an error names its server); see `mcp_config`.
    #[serde(default)]
    pub(crate) mcp_servers: BTreeMap<String, toml::Value>,
    /// `[skills]`.
    #[serde(default)]
    pub(crate) skills: SkillsSection,
}

/// `[permissions]`: rules in the `Tool(content)` syntax.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RuleLists {
    #[serde(default)]
    pub(crate) allow: Vec<String>,
    #[serde(default)]
    pub(crate) ask: Vec<String>,
    #[serde(default)]
    pub(crate) deny: Vec<String>,
}

/// The config dir: `$OXISCOPE_CONFIG_DIR`, else `oxiscope` in the user's
/// config dir.
pub(crate) fn config_dir() -> anyhow::Result<PathBuf> {
    dir_from("OXISCOPE_CONFIG_DIR", dirs::config_dir())
}

/// The data dir (sessions, history): `$OXISCOPE_DATA_DIR`, else
/// `oxiscope` in the user's data dir.
pub(crate) fn data_dir() -> anyhow::Result<PathBuf> {
    dir_from("OXISCOPE_DATA_DIR", dirs::data_dir())
}

fn dir_from(var: &str, base: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    if let Some(dir) = std::env::var_os(var).filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    base.map(|b| b.join("oxiscope"))
        .with_context(|| format!("no home directory is known: set {var}"))
}

/// The config file's path.
pub(crate) fn config_path() -> anyhow::Result<PathBuf> {
    Ok(config_dir()?.join("config.toml"))
}

/// Reads the config file; a missing file is an empty config.
pub(crate) fn load_config(path: &Path) -> anyhow::Result<ConfigFile> {
    match std::fs::read_to_string(path) {
        Ok(text) => toml::from_str(&text).with_context(|| format!("in {}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(ConfigFile::default()),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// Everything `oxiscope chat` runs with.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    pub(crate) model: ModelSettings,
    pub(crate) permissions: PermissionContext,
    /// `-p` with no mode chosen: every call the mode asks about is denied
    /// (no permission mode says this; AgentScope's `dont_ask` also allows
    /// edits in the working directory).
    pub(crate) deny_asks: bool,
    pub(crate) render: RenderOptions,
    /// The MCP servers of the config file and `--mcp`.
    pub(crate) mcp: Vec<ServerSpec>,
    /// The skill directories of the config file and `--skills`.
    pub(crate) skills: Vec<PathBuf>,
}

impl Settings {
    /// Adds the rules of `lists` (from `source`) to the permissions.
    ///
    /// # Errors
    /// A rule does not parse.
    pub(crate) fn add_rules(&mut self, lists: &RuleLists, source: &str) -> anyhow::Result<()> {
        for (texts, behavior) in lists.by_behavior() {
            for text in texts {
                self.permissions
                    .add_rule(parse_rule(text, behavior, source)?);
            }
        }
        Ok(())
    }
}

impl RuleLists {
    /// Each list with the behaviour its rules have.
    fn by_behavior(&self) -> [(&Vec<String>, PermissionBehavior); 3] {
        [
            (&self.allow, PermissionBehavior::Allow),
            (&self.ask, PermissionBehavior::Ask),
            (&self.deny, PermissionBehavior::Deny),
        ]
    }
}

/// Why no model can be reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NotConfigured(pub(crate) String);

/// Merges flags, environment (`env`) and file: the first that says
/// something wins. `Ok(Err(..))` when no model is configured. The mode,
/// rules, display settings, MCP servers and skill paths are checked
/// first, so a bad value is reported even when no provider is configured.
/// Relative skill paths of the file are relative to `config_dir`.
pub(crate) fn resolve(
    args: &ChatArgs,
    env: &dyn Fn(&str) -> Option<String>,
    file: &ConfigFile,
    config_dir: &Path,
    one_shot: bool,
) -> anyhow::Result<Result<Settings, NotConfigured>> {
    let mcp = resolve_servers(&file.mcp_servers, &args.mcp, env)?;
    let skills = skill_dirs(&file.skills, &args.skills, config_dir, env)?;
    let env = |k: &str| env(k).filter(|v| !v.trim().is_empty());
    let mode_text = first(args.mode.clone(), env("OXISCOPE_MODE"), file.mode.clone());
    // A one-shot run with no mode chosen decides as the console would and
    // denies whatever the console would have asked about.
    let deny_asks = one_shot && mode_text.is_none();
    let mode = match mode_text {
        Some(text) => text
            .parse::<PermissionMode>()
            .map_err(|e| anyhow::anyhow!("{e}"))?,
        None => PermissionMode::Default,
    };
    let mut permissions = PermissionContext::new(mode);
    let lists = [
        (&file.permissions.allow, PermissionBehavior::Allow, "config"),
        (&file.permissions.ask, PermissionBehavior::Ask, "config"),
        (&file.permissions.deny, PermissionBehavior::Deny, "config"),
        (&args.allow, PermissionBehavior::Allow, "cli"),
        (&args.ask, PermissionBehavior::Ask, "cli"),
        (&args.deny, PermissionBehavior::Deny, "cli"),
    ];
    for (texts, behavior, source) in lists {
        for text in texts {
            permissions.add_rule(parse_rule(text, behavior, source)?);
        }
    }

    let verbosity = match first(
        args.verbosity.clone(),
        env("OXISCOPE_VERBOSITY"),
        file.verbosity.clone(),
    ) {
        Some(text) => text.parse::<Verbosity>()?,
        None => Verbosity::Default,
    };
    let max_lines = match (args.max_tool_lines, env("OXISCOPE_MAX_TOOL_LINES")) {
        (Some(n), _) => n,
        (None, Some(text)) => text
            .trim()
            .parse()
            .with_context(|| format!("OXISCOPE_MAX_TOOL_LINES is not a number: {text}"))?,
        (None, None) => file.max_tool_lines.unwrap_or(DEFAULT_MAX_TOOL_LINES),
    };
    let color = !args.no_color && env("NO_COLOR").is_none() && file.color.unwrap_or(true);
    let render = RenderOptions::default()
        .with_verbosity(verbosity)
        .with_max_tool_lines((max_lines > 0).then_some(max_lines))
        .with_color(color);

    let model = match resolve_model(args, &env, file)? {
        Ok(model) => model,
        Err(reason) => return Ok(Err(reason)),
    };
    Ok(Ok(Settings {
        model,
        permissions,
        deny_asks,
        render,
        mcp,
        skills,
    }))
}

/// The provider, model, endpoint and key.
fn resolve_model(
    args: &ChatArgs,
    env: &dyn Fn(&str) -> Option<String>,
    file: &ConfigFile,
) -> anyhow::Result<Result<ModelSettings, NotConfigured>> {
    let provider = match first(
        args.provider.clone(),
        env("OXISCOPE_PROVIDER"),
        file.provider.clone(),
    ) {
        Some(name) => Some(parse_provider(&name).map_err(anyhow::Error::msg)?),
        None => infer_provider(env),
    };
    let Some(provider) = provider else {
        return Ok(Err(NotConfigured("no model provider is configured".into())));
    };
    let api_key = first(
        args.api_key.clone(),
        env("OXISCOPE_API_KEY").or_else(|| provider.key_from_env(env)),
        file.api_key.clone(),
    );
    if provider.needs_key && api_key.is_none() {
        let vars = match provider.key_vars_text() {
            text if text.is_empty() => "OXISCOPE_API_KEY".to_owned(),
            text => text,
        };
        return Ok(Err(NotConfigured(format!(
            "{provider} needs an API key ({vars})"
        ))));
    }
    let base_url = first(
        args.base_url.clone(),
        env("OXISCOPE_BASE_URL").or_else(|| provider.url_var.and_then(env)),
        file.base_url.clone(),
    );
    if provider.needs_base_url && base_url.is_none() {
        return Ok(Err(NotConfigured(format!(
            "{provider} needs a base URL (--base-url or OXISCOPE_BASE_URL)"
        ))));
    }
    let model = first(
        args.model.clone(),
        env("OXISCOPE_MODEL"),
        file.model.clone(),
    )
    .or_else(|| provider.default_model.map(str::to_owned));
    let Some(model) = model else {
        return Ok(Err(NotConfigured(format!(
            "{provider} has no default model: name one with --model"
        ))));
    };

    Ok(Ok(ModelSettings {
        provider,
        model,
        base_url,
        api_key,
    }))
}

fn first(flag: Option<String>, env: Option<String>, file: Option<String>) -> Option<String> {
    flag.or(env).or(file).filter(|v| !v.trim().is_empty())
}

/// The three lines printed when nothing is configured: the reason, the
/// variables a provider is picked by (from the registry), and the other
/// ways to configure one.
pub(crate) fn how_to_configure(reason: &NotConfigured, config: &Path) -> String {
    let mut keys: Vec<&str> = Vec::new();
    let mut hosts: Vec<String> = Vec::new();
    for provider in Provider::all().iter().filter(|p| p.served()) {
        match (provider.key_vars, provider.url_var) {
            ([], Some(var)) if !provider.needs_base_url => {
                hosts.push(format!("{var}=... for {}", provider.label));
            }
            (vars, _) => {
                for var in vars {
                    if !keys.contains(var) {
                        keys.push(var);
                    }
                }
            }
        }
    }
    let keys = match keys.split_first() {
        Some((first, rest)) => format!("{first}=... (or {})", rest.join(", ")),
        None => String::new(),
    };
    let hosts: String = hosts.iter().map(|h| format!(", or {h}")).collect();
    format!(
        "oxiscope chat: {}.\n\
         Set a provider's key, e.g. {keys}{hosts},\n\
         or pass --provider/--model/--base-url/--api-key, or write them in {}.\n",
        reason.0,
        config.display()
    )
}

#[cfg(test)]
#[path = "settings_tests.rs"]
mod tests;
