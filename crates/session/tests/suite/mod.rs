mod recipes;
mod sessions;
mod world;
