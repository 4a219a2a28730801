mod hostile;
mod local;
mod manager;
mod mcp;
mod sandbox;
mod support;
mod warm;
