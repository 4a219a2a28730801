mod bash;
mod common;
mod conformance;
mod engine;
mod files;
mod fuzz;
mod rules;
mod wire;
