//! [`Storage`](crate::Storage) for [`SqliteStorage`]: its inherent
//! methods, boxed.

use super::SqliteStorage;

crate::sql_storage::impl_storage!(SqliteStorage);
