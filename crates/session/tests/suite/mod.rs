mod sessions;
mod world;
