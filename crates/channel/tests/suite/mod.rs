mod records;
mod telegram;
mod world;
