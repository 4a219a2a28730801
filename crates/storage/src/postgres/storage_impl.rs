//! [`Storage`](crate::Storage) for [`PostgresStorage`]: its inherent
//! methods, boxed.

use super::PostgresStorage;

crate::sql_storage::impl_storage!(PostgresStorage);
