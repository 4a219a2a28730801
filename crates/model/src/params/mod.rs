//! Parameter schemas of the chat model classes.

mod families;
mod spec;

pub(crate) use families::base_schema;
