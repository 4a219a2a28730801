mod bus;
mod bus_limits;
mod library;
mod sqlite;
mod usage;
