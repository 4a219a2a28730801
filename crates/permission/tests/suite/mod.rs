mod common;
mod conformance;
