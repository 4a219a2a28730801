//! Pieces every credential struct shares.

/// A fresh credential id: 32 lowercase hex digits, like AgentScope's
/// `uuid4().hex`. Used when a payload carries no `id`.
pub(crate) fn new_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// Adds the builder methods for the fields every credential has (`id`,
/// `name`) to a credential struct.
macro_rules! common_builders {
    ($ty:ty) => {
        impl $ty {
            /// Replaces the generated id.
            #[must_use]
            pub fn with_id(mut self, id: impl Into<String>) -> Self {
                self.id = id.into();
                self
            }

            /// Sets the display name.
            #[must_use]
            pub fn with_name(mut self, name: impl Into<String>) -> Self {
                self.name = name.into();
                self
            }
        }
    };
}

pub(crate) use common_builders;

/// Declares a credential struct: the fields every credential has (`id`,
/// `name`, and the `type` tag naming `$type_name`), then the given fields in
/// wire order, with its [`TypeName`](crate::tag::TypeName) and the common
/// builders.
macro_rules! credential_struct {
    (
        $(#[$struct_meta:meta])*
        pub struct $ty:ident = $type_name:literal {
            $(
                $(#[$field_meta:meta])*
                pub $field:ident: $field_ty:ty,
            )*
        }
    ) => {
        $(#[$struct_meta])*
        #[derive(Debug, Clone, PartialEq, Eq, ::serde::Serialize, ::serde::Deserialize)]
        pub struct $ty {
            /// Id of the stored credential; generated when absent.
            #[serde(default = "crate::credential::common::new_id")]
            pub id: String,
            /// Display name; empty by default.
            #[serde(default)]
            pub name: String,
            #[serde(rename = "type", default)]
            tag: $crate::tag::TypeTag<Self>,
            $(
                $(#[$field_meta])*
                pub $field: $field_ty,
            )*
        }

        impl $crate::tag::TypeName for $ty {
            const TYPE: &'static str = $type_name;
        }

        $crate::credential::common::common_builders!($ty);
    };
}

pub(crate) use credential_struct;

/// Declares a credential made of an API key and one endpoint string with a
/// default (`base_url`, or `api_host` for xAI), in this wire order after the
/// common `id`, `name` and `type`: the struct with its serde shape, its
/// [`TypeName`](crate::tag::TypeName), `new`, the endpoint builder, the
/// common builders and the module's `SCHEMA`.
///
/// Expand it once per module: it defines the module-level `SCHEMA` and the
/// serde default function `default_endpoint`.
macro_rules! key_and_endpoint_credential {
    (
        $(#[$struct_meta:meta])*
        pub struct $ty:ident = $type_name:literal {
            $(#[$field_meta:meta])*
            $field:ident,
            $(#[$const_meta:meta])*
            const $default_const:ident = $default:literal,
            $(#[$new_meta:meta])*
            fn new,
            $(#[$with_meta:meta])*
            fn $with:ident,
        }
        schema {
            title: $title:literal,
            description: $description:literal,
            api_key: ($key_title:literal, $key_description:literal),
            endpoint: ($field_title:literal, $field_description:literal),
        }
    ) => {
        $crate::credential::common::credential_struct! {
            $(#[$struct_meta])*
            pub struct $ty = $type_name {
                /// The API key.
                pub api_key: $crate::Secret,
                $(#[$field_meta])*
                #[serde(default = "default_endpoint")]
                pub $field: String,
            }
        }

        impl $ty {
            $(#[$const_meta])*
            pub const $default_const: &'static str = $default;

            $(#[$new_meta])*
            pub fn new(api_key: impl Into<$crate::Secret>) -> Self {
                Self {
                    id: $crate::credential::common::new_id(),
                    name: String::new(),
                    tag: $crate::tag::TypeTag::default(),
                    api_key: api_key.into(),
                    $field: default_endpoint(),
                }
            }

            $(#[$with_meta])*
            #[must_use]
            pub fn $with(mut self, $field: impl Into<String>) -> Self {
                self.$field = $field.into();
                self
            }
        }

        fn default_endpoint() -> String {
            $ty::$default_const.to_owned()
        }

        pub(super) const SCHEMA: $crate::credential::schema::SchemaSpec =
            $crate::credential::schema::SchemaSpec {
                type_name: <$ty as $crate::tag::TypeName>::TYPE,
                title: $title,
                description: $description,
                fields: &[
                    $crate::credential::schema::FieldSpec {
                        name: "api_key",
                        title: $key_title,
                        description: $key_description,
                        kind: $crate::credential::schema::FieldKind::Secret,
                    },
                    $crate::credential::schema::FieldSpec {
                        name: stringify!($field),
                        title: $field_title,
                        description: $field_description,
                        kind: $crate::credential::schema::FieldKind::String {
                            default: $ty::$default_const,
                        },
                    },
                ],
            };
    };
}

pub(crate) use key_and_endpoint_credential;
