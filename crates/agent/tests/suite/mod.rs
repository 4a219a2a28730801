mod common;
mod hitl;
mod interrupt;
mod loop_basics;
mod wire;
