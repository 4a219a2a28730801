//! Errors of the message crate.

use crate::block::BlockKind;
use crate::msg::Role;

/// A message that breaks the role rules.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MsgError {
    /// A block kind the role may not hold (user: text and data; system:
    /// text; assistant: any).
    #[error("a {} message may not hold a `{}` block (block {index})", role.as_str(), kind.as_str())]
    BlockNotAllowed {
        /// The message role.
        role: Role,
        /// The offending block kind.
        kind: BlockKind,
        /// Its position in `content`.
        index: usize,
    },
}

/// An event that cannot be applied to a message. The message is unchanged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AppendError {
    /// No block with this id (of the kind the event needs) is in the message.
    #[error("{event}: no {kind} block with id {id:?} in the message")]
    UnknownBlock {
        /// The event type, e.g. `TEXT_BLOCK_DELTA`.
        event: &'static str,
        /// The block kind looked for.
        kind: &'static str,
        /// The id looked for.
        id: String,
    },
    /// A delta or end for a block that has already ended.
    #[error("{event}: the {kind} block {id:?} has already ended")]
    BlockFinished {
        /// The event type.
        event: &'static str,
        /// The block kind.
        kind: &'static str,
        /// The block id.
        id: String,
    },
    /// A start event for a block id that is already in the message.
    #[error("{event}: a block with id {id:?} is already in the message")]
    DuplicateBlock {
        /// The event type.
        event: &'static str,
        /// The duplicated id.
        id: String,
    },
    /// A delta whose media type differs from the block it extends.
    #[error("{event}: media type {got:?} does not match the block's {expected:?}")]
    MediaTypeMismatch {
        /// The event type.
        event: &'static str,
        /// The block's media type.
        expected: String,
        /// The event's media type.
        got: String,
    },
    /// A data delta whose URL is not an absolute URL.
    #[error("{event}: invalid URL {url:?}: {reason}")]
    InvalidUrl {
        /// The event type.
        event: &'static str,
        /// The rejected URL.
        url: String,
        /// Why it was rejected.
        reason: String,
    },
}
