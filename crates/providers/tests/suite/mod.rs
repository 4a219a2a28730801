mod openai_formatter_golden;
mod openai_model;
mod anthropic_formatter_golden;
mod ollama_formatter_golden;
mod anthropic_model;
mod ollama_model;
mod anthropic_format;
mod ollama_format;
