//! Anthropic Messages.
