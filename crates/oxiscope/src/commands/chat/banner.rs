//! The line `oxiscope chat` starts with: what it talks to, where it
//! works, and how to leave.

use std::path::Path;

use super::settings::Settings;

/// One line: provider, model, endpoint, working directory, permission
/// mode and (when `interactive`) how to leave.
pub(crate) fn banner(settings: &Settings, workdir: &Path, interactive: bool) -> String {
    let model = &settings.model;
    let mut mode = settings.permissions.mode.as_str().replace('_', "-");
    if settings.deny_asks {
        mode.push_str(", what it would ask is denied");
    }
    let mut line = format!(
        "oxiscope chat · {} {} at {} · in {} · mode {mode}",
        model.provider,
        model.model,
        model.endpoint(),
        workdir.display(),
    );
    if interactive {
        line.push_str(" · type exit or press Ctrl+D to leave");
    }
    line
}

#[cfg(test)]
mod tests {
    use oxiscope::render::RenderOptions;
    use oxiscope_permission::{PermissionContext, PermissionMode};
    use oxiscope_providers::Provider;
    use pretty_assertions::assert_eq;

    use super::super::provider::ModelSettings;
    use super::*;

    #[test]
    fn the_banner_names_the_model_the_place_and_the_way_out() {
        let settings = Settings {
            model: ModelSettings {
                provider: Provider::find("openai").unwrap(),
                model: "gpt-test".to_owned(),
                base_url: Some("http://127.0.0.1:9/v1".to_owned()),
                api_key: Some("sk-secret".to_owned()),
            },
            permissions: PermissionContext::new(PermissionMode::AcceptEdits),
            deny_asks: false,
            render: RenderOptions::plain(),
            mcp: Vec::new(),
            skills: Vec::new(),
        };
        assert_eq!(
            banner(&settings, Path::new("/src/app"), true),
            "oxiscope chat · openai gpt-test at http://127.0.0.1:9/v1 · in /src/app · \
             mode accept-edits · type exit or press Ctrl+D to leave"
        );
        assert!(!banner(&settings, Path::new("/src/app"), false).contains("Ctrl+D"));
    }
}
