//! JSON Schemas of the credential types, built from small description tables.
//!
//! The output has the shape of a pydantic `model_json_schema()` of an
//! AgentScope credential (keys sorted inside every property, `required` only
//! when some field is required), so a frontend that renders AgentScope's
//! credential forms renders ours the same way.

use serde_json::{Map, Value, json};

/// How one provider-specific credential field is typed.
#[derive(Debug, Clone, Copy)]
pub(crate) enum FieldKind {
    /// A required secret string (`format: password`, `writeOnly`).
    Secret,
    /// A string that may be `null`, `null` by default.
    OptionalString,
    /// A string with a default value.
    String {
        /// The default value.
        default: &'static str,
    },
}

/// One provider-specific credential field.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FieldSpec {
    pub(crate) name: &'static str,
    pub(crate) title: &'static str,
    pub(crate) description: &'static str,
    pub(crate) kind: FieldKind,
}

/// Everything the schema of one credential type is built from.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SchemaSpec {
    pub(crate) type_name: &'static str,
    pub(crate) title: &'static str,
    pub(crate) description: &'static str,
    /// Fields after the common `id`, `name` and `type`, in wire order.
    pub(crate) fields: &'static [FieldSpec],
}

impl SchemaSpec {
    /// The JSON Schema object of this credential type.
    pub(crate) fn to_json(self) -> Value {
        let mut properties = Map::new();
        properties.insert(
            "id".into(),
            json!({
                "description": "Unique identifier of the stored credential.",
                "title": "Id",
                "type": "string",
            }),
        );
        properties.insert(
            "name".into(),
            json!({
                "default": "",
                "description": "Name shown to people when they pick this credential.",
                "title": "Name",
                "type": "string",
            }),
        );
        properties.insert(
            "type".into(),
            json!({
                "const": self.type_name,
                "default": self.type_name,
                "title": "Type",
                "type": "string",
            }),
        );
        let mut required = Vec::new();
        for field in self.fields {
            properties.insert(field.name.into(), field.to_json());
            if matches!(field.kind, FieldKind::Secret) {
                required.push(Value::from(field.name));
            }
        }

        let mut schema = Map::new();
        schema.insert("description".into(), self.description.into());
        schema.insert("properties".into(), Value::Object(properties));
        if !required.is_empty() {
            schema.insert("required".into(), Value::Array(required));
        }
        schema.insert("title".into(), self.title.into());
        schema.insert("type".into(), "object".into());
        Value::Object(schema)
    }
}

impl FieldSpec {
    fn to_json(self) -> Value {
        match self.kind {
            FieldKind::Secret => json!({
                "description": self.description,
                "format": "password",
                "title": self.title,
                "type": "string",
                "writeOnly": true,
            }),
            FieldKind::OptionalString => json!({
                "anyOf": [{"type": "string"}, {"type": "null"}],
                "default": null,
                "description": self.description,
                "title": self.title,
            }),
            FieldKind::String { default } => json!({
                "default": default,
                "description": self.description,
                "title": self.title,
                "type": "string",
            }),
        }
    }
}
