//! The `/channels` operations, for the document [`super::document`]
//! builds.

#[allow(clippy::wildcard_imports)]
use super::*;

/// The fourteen `/channels` operations, and the webhook deliveries.
pub(super) fn channel_operations(g: &mut SchemaGenerator) -> Vec<Op> {
    use crate::channel_api::{
        BindingView, ChannelActionResponse as Action, ChannelChatIdsResponse as Chats,
        ChannelSessionsResponse as Sessions, CreateChannelRequest as Create,
        StartCredentialBindingRequest as StartBinding,
    };
    use oxiscope_channel::{
        ChannelStatus, ChannelTypeInfo, ChannelUpdate as Update, ChannelView as View,
    };
    const ID: Param = ("channel_id", "path", true);
    const BINDING: Param = ("binding_id", "path", true);
    let op = |method, path, params: Vec<Param>, body, status, response| Op {
        auth: params.contains(&USER),
        method,
        path,
        tag: "channels",
        params,
        body,
        status,
        response,
    };
    let one = "/channels/{channel_id}";
    vec![
        op(
            "get",
            "/channels/types",
            vec![],
            None,
            "200",
            Some(schema_ref::<Vec<ChannelTypeInfo>>(g)),
        ),
        op(
            "get",
            "/channels/",
            vec![USER],
            None,
            "200",
            Some(schema_ref::<Vec<View>>(g)),
        ),
        op(
            "post",
            "/channels/",
            vec![USER],
            Some(schema_ref::<Create>(g)),
            "201",
            Some(schema_ref::<View>(g)),
        ),
        op(
            "post",
            "/channels/bindings",
            vec![USER],
            Some(schema_ref::<StartBinding>(g)),
            "200",
            Some(schema_ref::<BindingView>(g)),
        ),
        op(
            "get",
            "/channels/bindings/{binding_id}",
            vec![BINDING, USER],
            None,
            "200",
            Some(schema_ref::<BindingView>(g)),
        ),
        op(
            "post",
            "/channels/bindings/{binding_id}/cancel",
            vec![BINDING, USER],
            None,
            "200",
            Some(schema_ref::<Action>(g)),
        ),
        op(
            "get",
            one,
            vec![ID, USER],
            None,
            "200",
            Some(schema_ref::<View>(g)),
        ),
        op(
            "patch",
            one,
            vec![ID, USER],
            Some(schema_ref::<Update>(g)),
            "200",
            Some(schema_ref::<View>(g)),
        ),
        op("delete", one, vec![ID, USER], None, "204", None),
        op(
            "post",
            "/channels/{channel_id}/enable",
            vec![ID, USER],
            None,
            "200",
            Some(schema_ref::<Action>(g)),
        ),
        op(
            "post",
            "/channels/{channel_id}/disable",
            vec![ID, USER],
            None,
            "200",
            Some(schema_ref::<Action>(g)),
        ),
        op(
            "get",
            "/channels/{channel_id}/status",
            vec![ID, USER],
            None,
            "200",
            Some(schema_ref::<ChannelStatus>(g)),
        ),
        op(
            "get",
            "/channels/{channel_id}/sessions",
            vec![ID, USER],
            None,
            "200",
            Some(schema_ref::<Sessions>(g)),
        ),
        op(
            "get",
            "/channels/{channel_id}/chat_ids",
            vec![ID, USER],
            None,
            "200",
            Some(schema_ref::<Chats>(g)),
        ),
        // Ours: a platform's push delivery, proven by its secret header.
        op(
            "post",
            "/channels/{channel_id}/webhook",
            vec![ID],
            None,
            "200",
            None,
        ),
    ]
}
