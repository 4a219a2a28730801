//! The engine driven without HTTP, as a door drives it.

mod suite;
