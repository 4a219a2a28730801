//! OpenAI Chat Completions.
