//! Ollama's native chat API.
