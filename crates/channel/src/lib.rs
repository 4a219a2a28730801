//! IM channels for the Oxiscope service: a channel is one more door into
//! the session engine's [`Sessions`](oxiscope_session::Sessions).
//!
//! - [`Channel`] and [`ChannelType`]: one platform connection and the
//!   self-describing type that opens it (type id, credential and config
//!   JSON Schemas); a custom platform is one implementation registered in
//!   the [`Registry`] when the server is built.
//! - [`Routing`]: AgentScope's ordered bindings (first match wins, one
//!   catch-all, last) deciding which agent answers and which session a
//!   message joins.
//! - [`ChannelRuntime`]: an inbound message → deduplicated by its platform
//!   id → routed → its session (opened with `origin: channel`) → submitted
//!   (or queued with [`Origin::Channel`](oxiscope_session::inbox::Origin))
//!   → the reply's events → the reply sent back, split to the platform's
//!   size limit; confirmations are asked and answered in the chat.
//! - [`ChannelHost`]: the runtimes of one replica, started and stopped with
//!   the channels' records ([`Channels`] keeps those, credentials sealed).
//! - Platforms: [`telegram`], [`slack`], [`discord`].
//!
//! It holds no HTTP routes: the server maps the `/channels` operations
//! onto [`Channels`] and [`ChannelHost`].

mod channel;
mod context;
pub mod discord;
mod error;
mod host;
mod inbound;
mod open;
mod pump;
mod records;
mod registry;
mod routing;
mod runtime;
mod settings;
pub mod slack;
mod split;
pub mod telegram;

pub use channel::{
    Capabilities, Channel, ChannelSpec, ChannelStatus, ChannelType, ChannelTypeInfo, Handled,
    InboundSink, StatusCell,
};
pub use error::{Error, Result};
pub use host::ChannelHost;
pub use inbound::{Attachment, ChatKind, Inbound, Sender};
pub use records::{ChannelUpdate, ChannelView, Channels, NewChannel};
pub use registry::Registry;
pub use routing::{Binding, CATCH_ALL, Route, Routing, SessionScope};
pub use runtime::ChannelRuntime;
pub use settings::{ChannelData, CommonConfig, SessionSettings};
pub use split::split_message;
