mod fixtures;
mod robustness;
mod streams;
mod wire;
