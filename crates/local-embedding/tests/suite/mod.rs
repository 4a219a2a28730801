mod download;
mod golden;
mod load_errors;
mod support;
mod tokenizer;
