mod common;
mod conformance;
mod hitl;
mod interrupt;
mod loop_basics;
mod structured;
mod wire;
