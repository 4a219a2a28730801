//! Skills: loading, the viewer tool, the prompt fragment.

use oxiscope_message::ToolResultState;
use oxiscope_tool::{Error, SessionState, Skill, SkillLoader, ToolContext, Toolkit};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{ctx, expect, run};

const REVIEW: &str = "---\nname: code-review\ndescription: Review a diff for bugs\n---\n\n# Review\nRead the diff.\n";

fn skills_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let review = dir.path().join("review");
    std::fs::create_dir(&review).unwrap();
    std::fs::write(review.join("SKILL.md"), REVIEW).unwrap();
    let release = dir.path().join("release");
    std::fs::create_dir(&release).unwrap();
    std::fs::write(
        release.join("SKILL.md"),
        "---\nname: release\ndescription: \"Cut a release: tag, notes\"\n---\nSteps.\n",
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("not-a-skill")).unwrap();
    dir
}

#[test]
fn the_loader_reads_front_matter_from_sub_directories() {
    let dir = skills_dir();
    let skills = SkillLoader::new(dir.path()).load().unwrap();
    let names: Vec<(&str, &str)> = skills
        .iter()
        .map(|s| (s.name.as_str(), s.description.as_str()))
        .collect();
    assert_eq!(
        names,
        [
            ("release", "Cut a release: tag, notes"),
            ("code-review", "Review a diff for bugs")
        ]
    );
    assert_eq!(skills[1].content, REVIEW);
    assert_eq!(
        skills[1].dir.as_deref(),
        Some(dir.path().join("review").as_path())
    );
    assert!(
        SkillLoader::new(dir.path())
            .scan_subdirs(false)
            .load()
            .unwrap()
            .is_empty()
    );
    let single = SkillLoader::new(dir.path().join("review")).load().unwrap();
    assert_eq!(single.len(), 1);
}

#[test]
fn bad_skill_files_are_typed_errors() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("SKILL.md"), "# no front matter\n").unwrap();
    let err = SkillLoader::new(dir.path()).load().unwrap_err();
    assert!(matches!(err, Error::InvalidSkill { .. }), "{err}");
    std::fs::write(dir.path().join("SKILL.md"), "---\nname: x\n---\nbody\n").unwrap();
    let err = SkillLoader::new(dir.path()).load().unwrap_err();
    assert!(err.to_string().contains("description"), "{err}");
    let err = SkillLoader::new(dir.path().join("missing"))
        .load()
        .unwrap_err();
    assert!(matches!(err, Error::SkillIo { .. }));
}

#[tokio::test]
async fn the_skill_viewer_returns_the_full_markdown() {
    let dir = skills_dir();
    let mut toolkit = Toolkit::new();
    toolkit
        .add_skills(SkillLoader::new(dir.path()).load().unwrap())
        .unwrap();
    toolkit
        .add_skills([Skill::new("inline", "An in-memory skill", "Do it.")])
        .unwrap();
    let names: Vec<String> = toolkit
        .schemas(&ToolContext::default())
        .into_iter()
        .map(|s| s.function.name)
        .collect();
    assert_eq!(names, ["Skill"]);

    let session = SessionState::default();
    let view = run(
        &toolkit,
        "Skill",
        json!({"skill_name": "code-review"}),
        ctx(dir.path(), &session),
    )
    .await;
    assert_eq!(expect(&view, ToolResultState::Success), REVIEW);
    let inline = run(
        &toolkit,
        "Skill",
        json!({"skill_name": "inline"}),
        ctx(dir.path(), &session),
    )
    .await;
    assert_eq!(expect(&inline, ToolResultState::Success), "Do it.");
    let unknown = run(
        &toolkit,
        "Skill",
        json!({"skill_name": "nope"}),
        ctx(dir.path(), &session),
    )
    .await;
    assert!(expect(&unknown, ToolResultState::Error).contains("skill_name"));

    let prompt = toolkit.skills_prompt().unwrap();
    assert!(
        prompt.contains("- code-review: Review a diff for bugs"),
        "{prompt}"
    );
    assert!(
        prompt.contains("- inline: An in-memory skill\n"),
        "{prompt}"
    );
    assert!(prompt.contains("`Skill` tool"), "{prompt}");
    assert!(Toolkit::new().skills_prompt().is_none());
    assert!(matches!(
        toolkit.add_skills([Skill::new("inline", "again", "x")]),
        Err(Error::DuplicateSkill { .. })
    ));
}
