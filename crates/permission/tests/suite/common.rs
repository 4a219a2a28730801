//! Shared helpers: the reference environment and compact decision outcomes.

use std::path::PathBuf;

use oxiscope_permission::{
    PathEnv, PermissionBehavior, PermissionContext, PermissionDecision, PermissionMode,
};
use serde_json::Value;

pub(crate) const CWD: &str = "/tmp/wire-scratch/proj";
pub(crate) const EXTRA_WD: &str = "/tmp/wire-scratch/shared-wd";
pub(crate) const HOME: &str = "/root";

/// The environment the reference data was recorded in (lexical paths only,
/// so the test does not depend on this machine's file system).
pub(crate) fn reference_env() -> PathEnv {
    PathEnv::new(CWD, Some(PathBuf::from(HOME))).with_symlinks_followed(false)
}

pub(crate) fn reference_context(mode: PermissionMode) -> PermissionContext {
    let mut ctx = PermissionContext::new(mode);
    ctx.add_working_directory(EXTRA_WD, "session");
    ctx
}

pub(crate) use oxiscope_test_support::fixtures::load;

/// `allow`, `ask`, `ask!` (bypass-immune), `deny`.
pub(crate) fn outcome(decision: &PermissionDecision) -> String {
    let mut s = decision.behavior.as_str().to_owned();
    if decision.behavior == PermissionBehavior::Ask && decision.bypass_immune {
        s.push('!');
    }
    s
}

pub(crate) fn recorded_outcome(value: &Value) -> String {
    let mut s = value["behavior"].as_str().unwrap().to_owned();
    if s == "ask" && value["bypass_immune"].as_bool() == Some(true) {
        s.push('!');
    }
    s
}

/// How cautious an outcome is: allow < ask < ask! < deny.
pub(crate) fn caution(outcome: &str) -> u8 {
    match outcome {
        "allow" => 0,
        "passthrough" | "ask" => 1,
        "ask!" => 2,
        "deny" => 3,
        other => panic!("unknown outcome {other}"),
    }
}

pub(crate) fn mode_named(name: &str) -> PermissionMode {
    name.parse().unwrap()
}
