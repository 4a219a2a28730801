mod common;
mod conformance;
mod hitl;
mod interrupt;
mod loop_basics;
mod middleware;
mod structured;
mod wire;
