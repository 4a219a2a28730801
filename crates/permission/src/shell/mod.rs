//! Shell-command analysis for the Bash tool: parsing, read-only detection,
//! dangerous patterns, target paths and rule matching.

mod analyze;
mod ast;
mod catalog;
mod danger;
mod lex;
mod parse;
mod rules;
mod sed;
mod wrappers;

pub use analyze::{Analysis, Concern, analyze, edits_within, is_read_only_command};
pub use ast::{Expansion, Hazard, Redirect, RedirectOp, Script, SimpleCommand, Word};
pub use parse::{ParseError, parse};
pub use rules::{
    BashPattern, Token, all_parts_allowed, any_part_matches, lenient_chunks, suggestions,
};
pub use sed::{SedCall, check_sed};
