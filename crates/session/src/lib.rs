//! The engine of `oxiscope serve`, with no HTTP in it.
//!
//! What happens to a session between requests belongs here, so that every
//! door into the service — the REST + SSE routes today, IM channels,
//! realtime voice, schedules and teams — is a thin layer over one engine.
//! The split from the HTTP crate (`oxiscope-server`) is under way
//! (issue #30); this crate holds so far:
//!
//! - [`TenantPolicy`]: what the operator lets tenants choose (permission
//!   modes, confirmation rules, model endpoints, media, quotas and
//!   per-user caps) and the checks that apply it;
//! - [`Sealer`]: secrets at rest and capability tokens, sealed with a key
//!   per [`Purpose`];
//! - [`to_python_json`]: JSON as Python's `json.dumps` writes it, the form
//!   AgentScope's stored state and tools expect;
//! - [`SessionError`]: refusals and failures as data.

mod error;
mod policy;
mod pyjson;
mod sealing;

pub use error::{Result, SessionError};
pub use policy::{QuotaWindow, TenantPolicy, mode_within, schedule_mode_within};
pub use pyjson::to_python_json;
pub use sealing::{CryptoError, KEY_ENV, KEY_FILE, PREFIX as SEALED_PREFIX, Purpose, Sealer};
