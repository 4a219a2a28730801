//! `/hub/mcp/*` and `/hub/skill/*`: browsing the configured hubs and
//! installing their cards into the caller's library.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::on;

use super::table::{Query, Route, optional, schema};
use crate::api::{
    CardsQuery, HubInfo, InstallMcpRequest, InstallSkillQuery, McpCard, McpHubPage, McpView,
    SkillCard, SkillHubPage, SkillView,
};
use crate::auth::UserId;
use crate::error::ApiResult;
use crate::extract::{ApiJson, ApiQuery};
use crate::service::hub::{self, HubKind};
use crate::service::library;
use crate::state::AppState;

/// The `/hub/` routes.
pub(super) const ROUTES: &[Route] = &[
    Route::get("/hub/mcp", |m| on(m, mcp_hubs)).ok(schema::<Vec<HubInfo>>),
    Route::get("/hub/mcp/{hub_id}/cards", |m| on(m, mcp_cards))
        .user()
        .query(PAGE)
        .ok(schema::<McpHubPage>),
    Route::get("/hub/mcp/{hub_id}/cards/{card_id}", |m| on(m, mcp_card))
        .user()
        .ok(schema::<McpCard>),
    Route::post("/hub/mcp/{hub_id}/cards/{card_id}/install", |m| {
        on(m, install_mcp)
    })
    .user()
    .body(schema::<InstallMcpRequest>)
    .created(schema::<McpView>),
    Route::get("/hub/skill", |m| on(m, skill_hubs)).ok(schema::<Vec<HubInfo>>),
    Route::get("/hub/skill/{hub_id}/cards", |m| on(m, skill_cards))
        .user()
        .query(PAGE)
        .ok(schema::<SkillHubPage>),
    Route::get("/hub/skill/{hub_id}/cards/{card_id}", |m| on(m, skill_card))
        .user()
        .ok(schema::<SkillCard>),
    Route::post("/hub/skill/{hub_id}/cards/{card_id}/install", |m| {
        on(m, install_skill)
    })
    .user()
    .query(&[optional("name")])
    .created(schema::<SkillView>),
];

/// A page of a hub's catalogue.
const PAGE: &[Query] = &[optional("q"), optional("cursor"), optional("limit")];

/// `GET /hub/mcp`: every MCP hub.
pub(super) async fn mcp_hubs(State(state): State<AppState>) -> ApiResult<Json<Vec<HubInfo>>> {
    Ok(Json(state.hubs().list(HubKind::Mcp).await?))
}

/// `GET /hub/skill`: every skill hub.
pub(super) async fn skill_hubs(State(state): State<AppState>) -> ApiResult<Json<Vec<HubInfo>>> {
    Ok(Json(state.hubs().list(HubKind::Skill).await?))
}

/// `GET /hub/mcp/{hub_id}/cards`: a page of an MCP hub's catalogue.
pub(super) async fn mcp_cards(
    State(state): State<AppState>,
    UserId(_user): UserId,
    Path(hub_id): Path<String>,
    ApiQuery(query): ApiQuery<CardsQuery>,
) -> ApiResult<Json<McpHubPage>> {
    Ok(Json(hub::mcp_cards(state.hubs(), &hub_id, &query).await?))
}

/// `GET /hub/mcp/{hub_id}/cards/{card_id}`: one MCP card.
pub(super) async fn mcp_card(
    State(state): State<AppState>,
    UserId(_user): UserId,
    Path((hub_id, card_id)): Path<(String, String)>,
) -> ApiResult<Json<McpCard>> {
    Ok(Json(hub::mcp_card(state.hubs(), &hub_id, &card_id).await?))
}

/// `POST /hub/mcp/{hub_id}/cards/{card_id}/install`: fills the card's
/// template and adds it to the caller's library.
pub(super) async fn install_mcp(
    State(state): State<AppState>,
    UserId(user): UserId,
    Path((hub_id, card_id)): Path<(String, String)>,
    ApiJson(body): ApiJson<InstallMcpRequest>,
) -> ApiResult<(StatusCode, Json<McpView>)> {
    let view = library::install_mcp(&state, &user, &hub_id, &card_id, body).await?;
    Ok((StatusCode::CREATED, Json(view)))
}

/// `GET /hub/skill/{hub_id}/cards`: a page of a skill hub's catalogue.
pub(super) async fn skill_cards(
    State(state): State<AppState>,
    UserId(_user): UserId,
    Path(hub_id): Path<String>,
    ApiQuery(query): ApiQuery<CardsQuery>,
) -> ApiResult<Json<SkillHubPage>> {
    Ok(Json(hub::skill_cards(state.hubs(), &hub_id, &query).await?))
}

/// `GET /hub/skill/{hub_id}/cards/{card_id}`: one skill card with its
/// `SKILL.md`.
pub(super) async fn skill_card(
    State(state): State<AppState>,
    UserId(_user): UserId,
    Path((hub_id, card_id)): Path<(String, String)>,
) -> ApiResult<Json<SkillCard>> {
    let (card, _, _) = hub::skill_card(state.hubs(), &hub_id, &card_id).await?;
    Ok(Json(card))
}

/// `POST /hub/skill/{hub_id}/cards/{card_id}/install`: adds the card to
/// the caller's library.
pub(super) async fn install_skill(
    State(state): State<AppState>,
    UserId(user): UserId,
    Path((hub_id, card_id)): Path<(String, String)>,
    ApiQuery(query): ApiQuery<InstallSkillQuery>,
) -> ApiResult<(StatusCode, Json<SkillView>)> {
    let view = library::install_skill(&state, &user, &hub_id, &card_id, query.name).await?;
    Ok((StatusCode::CREATED, Json(view)))
}
