mod files;
mod modes;
mod sessions;
mod support;
