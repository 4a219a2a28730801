//! Sub-agent templates: the blueprints `AgentCreate` makes workers from.
//!
//! There is always a `default` template (the built-in one: the worker's
//! system prompt names its team, role and leader; it takes the leader's
//! permission mode, rules and working directories). The operator may add
//! templates, or replace `default`, with `oxiscope serve --team-templates
//! DIR`: every `*.json` file there is one template with AgentScope's
//! `SubAgentTemplate` fields (`type`, `description`,
//! `system_prompt_template`, and optionally `permission_context`,
//! `context_config`, `react_config`, `override_leader_mode`,
//! `extend_leader_permission_rules`, `extend_leader_working_directories`).
//! With templates besides `default`, `AgentCreate` gains a
//! `subagent_type` enum listing them with their descriptions.
//!
//! The system prompt's placeholders are `{team_name}`,
//! `{team_description}`, `{member_name}`, `{member_description}` and
//! `{leader_name}`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use oxiscope_permission::PermissionContext;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::roster::TeamData;

/// Why the operator's templates cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TemplateError {
    /// The directory or a file cannot be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The failure.
        source: std::io::Error,
    },
    /// A file is not a template.
    #[error("{path} is not a sub-agent template: {source}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The failure.
        source: serde_json::Error,
    },
    /// A template lacks a required text.
    #[error("{path}: `{field}` must not be empty")]
    Empty {
        /// The file.
        path: PathBuf,
        /// The field.
        field: &'static str,
    },
    /// Two templates have the same type.
    #[error("two sub-agent templates have the type {kind:?}")]
    Duplicate {
        /// The type.
        kind: String,
    },
}

fn yes() -> bool {
    true
}

/// One sub-agent template (AgentScope's `SubAgentTemplate`).
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct SubAgentTemplate {
    /// The routing key (`subagent_type`).
    #[serde(rename = "type")]
    pub(super) kind: String,
    /// What the type is for, shown to the leader.
    pub(super) description: String,
    /// The worker's system prompt, with placeholders.
    pub(super) system_prompt_template: String,
    /// The worker's permissions before the leader's are merged in.
    #[serde(default)]
    pub(super) permission_context: PermissionContext,
    /// The worker's `chat_config.context_config`.
    #[serde(default)]
    pub(super) context_config: Map<String, Value>,
    /// The worker's `chat_config.react_config` (the defaults when absent).
    #[serde(default)]
    pub(super) react_config: Option<Map<String, Value>>,
    /// The template's mode wins over the leader's.
    #[serde(default)]
    pub(super) override_leader_mode: bool,
    /// The leader's allow rules are added after the template's (its deny
    /// and ask rules always are).
    #[serde(default = "yes")]
    pub(super) extend_leader_permission_rules: bool,
    /// The leader's working directories are added (the template's win).
    #[serde(default = "yes")]
    pub(super) extend_leader_working_directories: bool,
}

/// The built-in template's system prompt.
const DEFAULT_PROMPT: &str = "You are {member_name}, a member of the team '{team_name}' led by \
                              {leader_name}.\n\nThe team's purpose: {team_description}\n\nYour \
                              role: {member_description}\n\nYou talk to the leader and the other \
                              members only through the TeamSay tool. Use it when you have \
                              something for them (always for your final report to \
                              {leader_name}); keep your own reasoning to yourself.";

impl SubAgentTemplate {
    /// The built-in `default` template.
    fn builtin() -> Self {
        Self {
            kind: "default".to_owned(),
            description: "A general worker with the leader's settings.".to_owned(),
            system_prompt_template: DEFAULT_PROMPT.to_owned(),
            permission_context: PermissionContext::default(),
            context_config: Map::new(),
            react_config: None,
            override_leader_mode: false,
            extend_leader_permission_rules: true,
            extend_leader_working_directories: true,
        }
    }

    /// The system prompt for member `name` of `team`, placeholders filled
    /// in one pass (a value that itself looks like a placeholder stays as
    /// it is).
    pub(super) fn render(
        &self,
        team: &TeamData,
        name: &str,
        description: &str,
        leader: &str,
    ) -> String {
        let values = [
            ("{team_name}", team.name.as_str()),
            ("{team_description}", team.description.as_str()),
            ("{member_name}", name),
            ("{member_description}", description),
            ("{leader_name}", leader),
        ];
        let template = self.system_prompt_template.as_str();
        let mut out = String::with_capacity(template.len());
        let mut rest = template;
        'scan: while let Some(open) = rest.find('{') {
            out.push_str(&rest[..open]);
            let tail = &rest[open..];
            for (key, value) in values {
                if let Some(after) = tail.strip_prefix(key) {
                    out.push_str(value);
                    rest = after;
                    continue 'scan;
                }
            }
            out.push('{');
            rest = &tail[1..];
        }
        out.push_str(rest);
        out
    }

    /// The worker's permissions: the template's, with the leader's mode
    /// (unless the template pins its own, and that one is within the
    /// leader's reach: a worker never gets more trust than its leader), rules
    /// and working directories layered in as the template's flags say.
    pub(super) fn permissions(&self, leader: &PermissionContext) -> PermissionContext {
        let mut merged = self.permission_context.clone();
        if !self.override_leader_mode || !crate::mode_within(leader.mode, merged.mode) {
            merged.mode = leader.mode;
        }
        if self.extend_leader_working_directories {
            for (path, dir) in &leader.working_directories {
                merged
                    .working_directories
                    .entry(path.clone())
                    .or_insert_with(|| dir.clone());
            }
        }
        // The leader's deny and ask rules always hold for its workers (what
        // the user forbade or wants to be asked about the leader doing, a
        // worker in the same workspace may not do unasked); the flag
        // decides only whether its allow rules carry over.
        let mut layers = vec![
            (&mut merged.deny_rules, &leader.deny_rules),
            (&mut merged.ask_rules, &leader.ask_rules),
        ];
        if self.extend_leader_permission_rules {
            layers.push((&mut merged.allow_rules, &leader.allow_rules));
        }
        for (mine, theirs) in layers {
            for (tool, rules) in theirs {
                mine.entry(tool.clone())
                    .or_default()
                    .extend(rules.iter().cloned());
            }
        }
        merged
    }
}

/// The sub-agent templates of a server, by type; `default` is always
/// there.
#[derive(Debug, Clone)]
pub struct TeamTemplates {
    by_kind: BTreeMap<String, SubAgentTemplate>,
}

impl Default for TeamTemplates {
    fn default() -> Self {
        let builtin = SubAgentTemplate::builtin();
        Self {
            by_kind: BTreeMap::from([(builtin.kind.clone(), builtin)]),
        }
    }
}

impl TeamTemplates {
    /// The built-in template plus one per `*.json` file of `dir` (a file
    /// of type `default` replaces the built-in one).
    ///
    /// # Errors
    /// The directory or a file cannot be read, a file is not a template
    /// or has an empty type, description or prompt, or two files have
    /// the same type.
    pub fn load_dir(dir: &Path) -> Result<Self, TemplateError> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| TemplateError::Io { path, source }
        };
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(io(dir))?
            .map(|e| e.map(|e| e.path()).map_err(io(dir)))
            .collect::<Result<_, _>>()?;
        files.retain(|p| p.extension().is_some_and(|e| e == "json"));
        files.sort();
        let mut loaded = BTreeMap::new();
        for path in files {
            let text = std::fs::read_to_string(&path).map_err(io(&path))?;
            let template: SubAgentTemplate =
                serde_json::from_str(&text).map_err(|source| TemplateError::Invalid {
                    path: path.clone(),
                    source,
                })?;
            for (field, value) in [
                ("type", &template.kind),
                ("description", &template.description),
                ("system_prompt_template", &template.system_prompt_template),
            ] {
                if value.trim().is_empty() {
                    return Err(TemplateError::Empty { path, field });
                }
            }
            if loaded.contains_key(&template.kind) {
                return Err(TemplateError::Duplicate {
                    kind: template.kind,
                });
            }
            loaded.insert(template.kind.clone(), template);
        }
        let mut templates = Self::default();
        templates.by_kind.extend(loaded);
        Ok(templates)
    }

    /// The types, in order.
    #[must_use]
    pub fn kinds(&self) -> Vec<&str> {
        self.by_kind.keys().map(String::as_str).collect()
    }

    /// The template of type `kind`.
    pub(super) fn get(&self, kind: &str) -> Option<&SubAgentTemplate> {
        self.by_kind.get(kind)
    }

    /// Whether the leader chooses a type (templates besides `default`).
    pub(super) fn has_choice(&self) -> bool {
        self.by_kind.keys().any(|k| k != "default")
    }

    /// The templates, in type order.
    pub(super) fn iter(&self) -> impl Iterator<Item = &SubAgentTemplate> {
        self.by_kind.values()
    }
}

#[cfg(test)]
#[path = "template_tests.rs"]
mod tests;
