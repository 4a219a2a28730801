//! Structured output: asking a model for a JSON object that matches a JSON
//! Schema, through a forced tool call, with repair and bounded retries.
//!
//! The repair functions ([`repair_json_arguments`], [`JsonRepairer`],
//! [`coerce_to_schema`]) also serve tool-argument checking: they parse a
//! model's raw argument text leniently, coerce obvious type slips the schema
//! settles, and validate.

mod coerce;
mod error;
mod generate;
mod parse;
mod repair;

pub use coerce::coerce_to_schema;
pub use error::{AttemptFailure, RepairError, StructuredError, Violation};
pub use generate::{
    STRUCTURED_OUTPUT_TOOL, StructuredOptions, StructuredOutput, generate_structured_output,
    structured_output_tool,
};
pub use parse::parse_json_lenient;
pub use repair::{JsonRepairer, repair_json_arguments};
