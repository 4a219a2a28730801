mod bus;
mod sqlite;
