mod bus;
mod bus_limits;
mod sqlite;
