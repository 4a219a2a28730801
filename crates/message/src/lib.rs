//! Messages, content blocks and agent events (work in progress, issue #2).

mod permission;

pub use permission::{PermissionBehavior, PermissionRule};
