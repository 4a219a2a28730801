//! Throughput of the SSE decoder (placeholder, filled in below).

fn main() {}
