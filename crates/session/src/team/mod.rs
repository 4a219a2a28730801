//! Agent teams (AgentScope's "Agent Team"): a leader session spawns
//! worker agents and exchanges messages with them through five tools.
//!
//! - `TeamCreate` makes the calling session the leader of a new team.
//! - `AgentCreate` spawns a worker from a sub-agent template (the built-in
//!   one, or the operator's: [`TeamTemplates`]): a new agent and a session
//!   beside the leader's (same workspace and model, the leader's
//!   permissions merged as the template says); its first task is queued at
//!   once, so it starts working.
//! - `AgentInvite` borrows one of the user's own agents whose
//!   `invite_config` is invitable with a description: a fresh session of
//!   it joins the team (its record and other sessions stay untouched).
//! - `TeamSay` sends a message to a member by name, or to every other
//!   member; workers report to the leader with it.
//! - `TeamDelete` dissolves the team: created workers lose agent and
//!   session, invited ones their borrowed session; their runs stop and
//!   their bus state is dropped; the leader stays, out of the team.
//!
//! A worker session gets `TeamSay` only; any other session the leader set
//! (each leader tool checks at call time that the caller leads a team).
//! A member's reply ends only once it reported to the leader with
//! `TeamSay` (it is reminded up to three times a reply); a member's turn
//! that fails or is interrupted is reported to the leader by the service.
//! Messages are hints (`<team-message from="...">`) queued in the
//! recipient's inbox by [`crate::deliver::deliver_hint`], so the
//! recipient runs on whichever replica takes its lock. A team has at most
//! the operator's `max_team_members` members (8 by default), workers spend
//! the user's token quota, and only the user's own agents can be invited.
//! A member's confirmations show on the leader's stream, and the
//! leader's user may answer them there (see [`parked_member`]).
//! Deleting the leader's session
//! dissolves its team; sessions list their team (`team_id`, `team`).

mod confirm;
mod middleware;
mod nudge;
mod ops;
mod report;
mod roster;
mod spawn;
mod template;
mod tool;
mod view;

pub use confirm::{
    AnsweredOn, CONFIRMATION_ANSWERED, CONFIRMATION_REQUIRED, confirmation_answered, parked_member,
};
pub use middleware::team_middleware;
pub use report::turn_not_completed;
pub use template::{TeamTemplates, TemplateError};
pub use view::{session_deleting, session_team};

#[cfg(test)]
mod roster_tests;
