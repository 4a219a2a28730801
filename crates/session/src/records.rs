//! Views of stored records in the service's wire shapes.

use oxiscope_storage::AgentRecord;

use crate::api::AgentView;
use crate::spec::AgentSpec;

pub use crate::spec::SOURCE_KEY;

/// The API view of a stored agent: who made it (`source`) is shown beside
/// its data, not in it.
pub fn view(record: AgentRecord) -> AgentView {
    let spec = AgentSpec::of(&record);
    let source = spec.source.clone().unwrap_or_else(|| "user".to_owned());
    let data = spec.into_wire_data();
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
