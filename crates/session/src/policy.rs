//! [`TenantPolicy`]: what the operator lets tenants choose.
//!
//! A tenant controls its model and answers its own confirmations, so the
//! permission engine protects a tenant from its model, never the server
//! from the tenant. The operator decides which permission modes tenants
//! may pick, which rules a confirmation may add, and whether tenants'
//! messages may name remote media; a request outside the policy gets a
//! `403` naming the setting.

use oxiscope_agent::AgentState;
use oxiscope_message::{PermissionRule, ToolCallState, UserConfirmResultEvent};
use oxiscope_permission::PermissionMode;
use serde::{Deserialize, Serialize};

use crate::error::{Result, SessionError};

/// The operator's rules for tenants.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TenantPolicy {
    /// The permission modes agents and sessions may use (`allowed_modes`).
    pub allowed_modes: Vec<PermissionMode>,
    /// The most rules one confirmed call may add (`max_confirm_rules`);
    /// each must be one the agent suggested for that very call.
    pub max_confirm_rules: usize,
    /// Whether messages may carry `http(s)` media URLs for the server to
    /// download (`remote_media`; public addresses only either way).
    pub remote_media: bool,
    /// Whether a tenant's model credential may name an endpoint at a
    /// non-public address (`private_model_endpoints`; default `false`):
    /// loopback, a private network, link-local (cloud metadata). A local
    /// Ollama or vLLM server on this machine or a private network needs it
    /// `true`; otherwise the server calls model endpoints at public
    /// addresses only, and a run on another endpoint ends with an error
    /// naming it.
    pub private_model_endpoints: bool,
    /// The most tokens (input plus output, as the providers report them)
    /// one user may spend in [`Self::user_token_quota_window`]
    /// (`user_token_quota`; `None`, the default: no quota). A chat sent
    /// when the user is at or over it gets a `429` naming the quota before
    /// any model is called; a reply that crosses it while running still
    /// finishes, and the next chat is refused.
    pub user_token_quota: Option<u64>,
    /// The window [`Self::user_token_quota`] counts over
    /// (`user_token_quota_window`: `total`, the default, `day` or `month`,
    /// UTC calendar periods).
    pub user_token_quota_window: QuotaWindow,
    /// The most schedules one user may keep (`max_schedules_per_user`,
    /// default 100), made through the API or by an agent's
    /// `ScheduleCreate`; one more is refused with a `403`.
    pub max_schedules_per_user: usize,
    /// The most members one agent team may have, created and invited
    /// together (`max_team_members`, default 8); `AgentCreate` and
    /// `AgentInvite` beyond it are refused to the leader's model.
    pub max_team_members: usize,
    /// The shortest time between two fires of a schedule, in seconds
    /// (`min_schedule_interval_secs`, default 60); a rule that fires more
    /// often is refused with a `422`.
    pub min_schedule_interval_secs: u64,
    /// The most chats one user may have running at once, across all of
    /// the user's sessions and every replica (`max_concurrent_runs_per_user`,
    /// default 16): a chat past it is answered `429` naming the setting.
    /// Runs started by queued inputs (team messages, schedules, background
    /// results) count while they run but are not refused.
    pub max_concurrent_runs_per_user: usize,
    /// The most sessions one user may keep (`max_sessions_per_user`,
    /// default 1000), made through the API, by a schedule or for a team
    /// member; one more is refused with a `429` naming the setting.
    pub max_sessions_per_user: usize,
    /// The most workspaces one user may have open at once on a replica
    /// (`max_live_workspaces_per_user`, default 32): each may hold MCP
    /// server processes. A chat or workspace request that would open one
    /// more is answered `429`; an open workspace closes after it has been
    /// idle for the workspace TTL.
    pub max_live_workspaces_per_user: usize,
}

/// The period a user token quota counts over.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QuotaWindow {
    /// Every token the user ever spent.
    #[default]
    Total,
    /// The current UTC day.
    Day,
    /// The current UTC calendar month.
    Month,
}

impl QuotaWindow {
    /// The name used in the policy file and in messages.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Total => "total",
            Self::Day => "day",
            Self::Month => "month",
        }
    }

    /// The first UTC day (`YYYY-MM-DD`) the window counts from `today`;
    /// `None` for [`Self::Total`].
    #[must_use]
    pub fn since(self, today: chrono::NaiveDate) -> Option<String> {
        match self {
            Self::Total => None,
            Self::Day => Some(today.format("%Y-%m-%d").to_string()),
            Self::Month => Some(today.format("%Y-%m-01").to_string()),
        }
    }
}

impl std::str::FromStr for QuotaWindow {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "total" => Ok(Self::Total),
            "day" => Ok(Self::Day),
            "month" => Ok(Self::Month),
            other => Err(format!(
                "unknown quota window {other:?}: expected total, day or month"
            )),
        }
    }
}

impl Default for TenantPolicy {
    /// Every mode but `bypass`, 4 rules per confirmed call, remote media
    /// allowed, model endpoints at public addresses only, no token quota,
    /// 100 schedules per user, 8 members per team, 16 chats running at
    /// once and 1000 sessions per user.
    fn default() -> Self {
        Self {
            allowed_modes: PermissionMode::ALL
                .into_iter()
                .filter(|m| *m != PermissionMode::Bypass)
                .collect(),
            max_confirm_rules: 4,
            remote_media: true,
            private_model_endpoints: false,
            user_token_quota: None,
            user_token_quota_window: QuotaWindow::Total,
            max_schedules_per_user: 100,
            max_team_members: 8,
            min_schedule_interval_secs: 60,
            max_concurrent_runs_per_user: 16,
            max_sessions_per_user: 1000,
            max_live_workspaces_per_user: 32,
        }
    }
}

/// How much a mode lets run without the user: `explore` only reads,
/// `default` asks before anything else, `accept_edits` and `dont_ask` let
/// working-directory edits through unasked, `bypass` everything.
fn trust(mode: PermissionMode) -> u8 {
    match mode {
        PermissionMode::Explore => 0,
        PermissionMode::Default => 1,
        PermissionMode::AcceptEdits | PermissionMode::DontAsk => 2,
        PermissionMode::Bypass => 3,
    }
}

/// Whether a run a session's model sets up beside it, in the session's
/// own workspace (a team worker), may have `requested` mode when the
/// session runs in `creator` mode: never more trust than the session.
#[must_use]
pub fn mode_within(creator: PermissionMode, requested: PermissionMode) -> bool {
    trust(requested) <= trust(creator)
}

/// Whether a schedule a session's model creates may run in `requested`
/// mode when the session runs in `creator` mode. Scheduled runs work in a
/// workspace of their own and nobody answers their prompts, so the
/// unattended modes (`dont_ask`, AgentScope's default for them, and
/// `accept_edits`) are within reach of a `default` session; `bypass` only
/// of a `bypass` session, and an `explore` session makes `explore`
/// schedules only.
#[must_use]
pub fn schedule_mode_within(creator: PermissionMode, requested: PermissionMode) -> bool {
    mode_within(creator, requested) || (creator != PermissionMode::Explore && trust(requested) <= 2)
}

impl TenantPolicy {
    /// `403` unless `mode` is allowed.
    ///
    /// # Errors
    /// [`SessionError::Forbidden`] naming the setting.
    pub fn check_mode(&self, mode: PermissionMode) -> Result<()> {
        if self.allowed_modes.contains(&mode) {
            return Ok(());
        }
        let allowed: Vec<&str> = self.allowed_modes.iter().map(|m| m.as_str()).collect();
        Err(SessionError::Forbidden(format!(
            "The permission mode {:?} is not allowed on this server (operator policy \
             allowed_modes: {}).",
            mode.as_str(),
            allowed.join(", ")
        )))
    }

    /// The mode a stored state runs with: its own when allowed, else
    /// `default` (a state saved before the policy changed).
    #[must_use]
    pub fn effective_mode(&self, mode: PermissionMode) -> PermissionMode {
        if self.allowed_modes.contains(&mode) {
            mode
        } else {
            PermissionMode::Default
        }
    }

    /// `403` unless every rule a confirmation adds is one the agent
    /// suggested for the call it confirms, within the per-call maximum.
    ///
    /// # Errors
    /// [`SessionError::Forbidden`] naming the setting.
    pub fn check_confirm(&self, state: &AgentState, event: &UserConfirmResultEvent) -> Result<()> {
        let calls = state
            .reply_msg()
            .map(|m| m.tool_calls().cloned().collect::<Vec<_>>())
            .unwrap_or_default();
        for answer in &event.confirm_results {
            let rules = answer.rules.as_deref().unwrap_or_default();
            if rules.is_empty() {
                continue;
            }
            if !answer.confirmed {
                return Err(SessionError::Forbidden(
                    "A denied call cannot add permission rules (operator policy \
                     max_confirm_rules)."
                        .to_owned(),
                ));
            }
            if rules.len() > self.max_confirm_rules {
                return Err(SessionError::Forbidden(format!(
                    "A confirmation may add at most {} rules per call (operator policy \
                     max_confirm_rules); {} were sent for {}.",
                    self.max_confirm_rules,
                    rules.len(),
                    answer.tool_call.name
                )));
            }
            let suggested: &[PermissionRule] = calls
                .iter()
                .find(|c| c.id == answer.tool_call.id && c.state == ToolCallState::Asking)
                .map(|c| c.suggested_rules.as_slice())
                .unwrap_or_default();
            if let Some(foreign) = rules.iter().find(|r| !suggested.iter().any(|s| same(s, r))) {
                return Err(SessionError::Forbidden(format!(
                    "The rule {}({}) was not suggested for the confirmed call {} (operator \
                     policy: a confirmation may only add the rules suggested for its call).",
                    foreign.tool_name,
                    foreign.rule_content.as_deref().unwrap_or_default(),
                    answer.tool_call.id
                )));
            }
        }
        Ok(())
    }
}

/// Whether two rules say the same thing (their sources may differ).
fn same(a: &PermissionRule, b: &PermissionRule) -> bool {
    a.tool_name == b.tool_name && a.rule_content == b.rule_content && a.behavior == b.behavior
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_session_sets_up_never_gets_more_trust_than_the_session() {
        use PermissionMode::{AcceptEdits, Bypass, Default, DontAsk, Explore};
        // Beside the session, in its workspace: at most the session's trust.
        let within = |c, r| mode_within(c, r);
        assert!(within(Default, Explore) && within(Default, Default));
        assert!(!within(Default, AcceptEdits) && !within(Default, DontAsk));
        assert!(within(AcceptEdits, DontAsk) && within(DontAsk, AcceptEdits));
        assert!(!within(AcceptEdits, Bypass) && within(Bypass, Bypass));
        assert!(!within(Explore, Default));
        // Schedules, unattended in their own workspace.
        for creator in PermissionMode::ALL {
            assert!(schedule_mode_within(creator, Explore), "{creator:?}");
            assert_eq!(schedule_mode_within(creator, Bypass), creator == Bypass);
            for requested in [Default, AcceptEdits, DontAsk] {
                assert_eq!(
                    schedule_mode_within(creator, requested),
                    creator != Explore,
                    "{creator:?} -> {requested:?}"
                );
            }
        }
    }

    #[test]
    fn bypass_is_refused_by_default_and_stored_states_fall_back() {
        let policy = TenantPolicy::default();
        assert!(policy.check_mode(PermissionMode::Default).is_ok());
        let err = policy.check_mode(PermissionMode::Bypass).unwrap_err();
        assert!(err.to_string().contains("allowed_modes"), "{err}");
        assert!(matches!(err, SessionError::Forbidden(_)), "{err:?}");
        assert_eq!(
            policy.effective_mode(PermissionMode::Bypass),
            PermissionMode::Default
        );
    }

    #[test]
    fn a_policy_file_reads_with_snake_case_modes() {
        let policy: TenantPolicy =
            toml_like(r#"{"allowed_modes": ["default", "dont_ask"], "max_confirm_rules": 1}"#);
        assert_eq!(policy.allowed_modes.len(), 2);
        assert!(policy.remote_media);
        assert!(!policy.private_model_endpoints);
        assert!(toml_like(r#"{"private_model_endpoints": true}"#).private_model_endpoints);
        assert!(serde_json::from_str::<TenantPolicy>(r#"{"alowed_modes": []}"#).is_err());
    }

    fn toml_like(json: &str) -> TenantPolicy {
        serde_json::from_str(json).unwrap()
    }
}
