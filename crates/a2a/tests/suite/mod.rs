mod fake;
mod real;
