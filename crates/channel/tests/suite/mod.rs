mod discord;
mod records;
mod slack;
mod telegram;
mod world;
