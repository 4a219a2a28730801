//! Views of stored records in the service's wire shapes.

use oxiscope_storage::AgentRecord;
use serde_json::{Map, Value};

use crate::api::AgentView;

/// Where a stored agent's data keeps who made it, when not the user
/// (`"team"`: a worker a team leader created); the view shows it as
/// `source`, not in `data`.
pub const SOURCE_KEY: &str = "source";

/// The API view of a stored agent.
pub fn view(record: AgentRecord) -> AgentView {
    let mut data = match record.data {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    let source = match data.remove(SOURCE_KEY) {
        Some(Value::String(source)) => source,
        _ => "user".to_owned(),
    };
    AgentView {
        id: record.id,
        updated_at: record.updated_at,
        created_at: record.created_at,
        user_id: record.user_id,
        source,
        data,
        editable: true,
    }
}
