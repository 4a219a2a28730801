//! Skills from `--skills DIR` and the config file's `[skills] paths`:
//! each directory is one skill (it has a `SKILL.md`) or a directory of
//! skill directories. A skill that cannot be read is a warning, skipped.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use oxiscope_tool::Skill;
use serde::Deserialize;

use super::mcp_config::expand;

/// The file that makes a directory a skill.
const SKILL_FILE: &str = "SKILL.md";
/// The largest `SKILL.md` read (skills stay in memory with the agent).
const MAX_SKILL_FILE: u64 = 256 * 1024;
/// The most skills loaded from the flags and the config file (each is
/// listed in the system prompt).
const MAX_SKILLS: usize = 64;

/// `[skills]` in the config file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SkillsSection {
    /// Skill directories, or directories of them. `~/` is the home
    /// directory, `${VAR}` is replaced from the environment, and a
    /// relative path is relative to the config file's directory.
    #[serde(default)]
    pub(crate) paths: Vec<String>,
}

/// The skill directories to load: the config file's (`section`, relative
/// to `config_dir`), then the flags' (`flags`, relative to the current
/// directory).
///
/// # Errors
/// A config path names an unset variable.
pub(crate) fn skill_dirs(
    section: &SkillsSection,
    flags: &[PathBuf],
    config_dir: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> anyhow::Result<Vec<PathBuf>> {
    let mut dirs = Vec::new();
    for text in &section.paths {
        let expanded = expand(text, env)
            .map_err(|e| anyhow::anyhow!("in the config file: [skills] paths: {text}: {e}"))?;
        let path = match expanded.strip_prefix("~/") {
            Some(rest) => {
                let home = env("HOME").filter(|h| !h.is_empty()).ok_or_else(|| {
                    anyhow::anyhow!("in the config file: [skills] paths: {text}: HOME is not set")
                })?;
                Path::new(&home).join(rest)
            }
            None => config_dir.join(expanded),
        };
        dirs.push(path);
    }
    for flag in flags {
        dirs.push(std::path::absolute(flag).unwrap_or_else(|_| flag.clone()));
    }
    Ok(dirs)
}

/// The skills found in `dirs`, in order, and a warning for each one that
/// was skipped (unreadable, no front matter, a name taken by an earlier
/// skill or in `taken`), and one when more than [`MAX_SKILLS`] were found.
pub(crate) fn load_skills(dirs: &[PathBuf], taken: &[String]) -> (Vec<Skill>, Vec<String>) {
    let (mut skills, mut warnings) = find_skills(dirs, taken);
    if skills.len() > MAX_SKILLS {
        warnings.push(format!(
            "{} skills found; only the first {MAX_SKILLS} are offered",
            skills.len()
        ));
        skills.truncate(MAX_SKILLS);
    }
    (skills, warnings)
}

fn find_skills(dirs: &[PathBuf], taken: &[String]) -> (Vec<Skill>, Vec<String>) {
    let mut skills: Vec<Skill> = Vec::new();
    let mut warnings = Vec::new();
    let mut add = |found: Result<Skill, String>, warnings: &mut Vec<String>| match found {
        Ok(skill) if taken.contains(&skill.name) || skills.iter().any(|s| s.name == skill.name) => {
            warnings.push(format!(
                "skill `{}` in {}: a skill of that name is already loaded; skipped",
                skill.name,
                skill.dir.as_deref().unwrap_or(Path::new("?")).display()
            ));
        }
        Ok(skill) => skills.push(skill),
        Err(warning) => warnings.push(warning),
    };
    for dir in dirs {
        if !dir.is_dir() {
            let why = if dir.exists() {
                "not a directory"
            } else {
                "no such directory"
            };
            warnings.push(format!("skills {}: {why}; skipped", dir.display()));
            continue;
        }
        if dir.join(SKILL_FILE).exists() {
            add(read_skill(dir), &mut warnings);
            continue;
        }
        let mut subdirs: Vec<PathBuf> = match std::fs::read_dir(dir) {
            Ok(entries) => entries
                .filter_map(Result::ok)
                .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect(),
            Err(e) => {
                warnings.push(format!("skills {}: {e}; skipped", dir.display()));
                continue;
            }
        };
        subdirs.sort();
        if subdirs.is_empty() {
            warnings.push(format!(
                "skills {}: no {SKILL_FILE} in it or in a directory in it; skipped",
                dir.display()
            ));
        }
        for sub in subdirs {
            add(read_skill(&sub), &mut warnings);
        }
    }
    (skills, warnings)
}

/// The skill in `dir`, or the warning saying why it is skipped.
fn read_skill(dir: &Path) -> Result<Skill, String> {
    let file = dir.join(SKILL_FILE);
    let skipped = |why: String| format!("skill {}: {why}; skipped", dir.display());
    let meta = std::fs::metadata(&file).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => skipped(format!("no {SKILL_FILE}")),
        _ => skipped(format!("{SKILL_FILE}: {e}")),
    })?;
    // Checked before opening: opening a FIFO would block.
    if !meta.is_file() {
        return Err(skipped(format!("{SKILL_FILE} is not a file")));
    }
    let too_big = || {
        skipped(format!(
            "{SKILL_FILE} is larger than {} KiB",
            MAX_SKILL_FILE / 1024
        ))
    };
    if meta.len() > MAX_SKILL_FILE {
        return Err(too_big());
    }
    let mut bytes = Vec::new();
    std::fs::File::open(&file)
        .and_then(|f| f.take(MAX_SKILL_FILE + 1).read_to_end(&mut bytes))
        .map_err(|e| skipped(format!("{SKILL_FILE}: {e}")))?;
    if bytes.len() as u64 > MAX_SKILL_FILE {
        return Err(too_big());
    }
    let text =
        String::from_utf8(bytes).map_err(|_| skipped(format!("{SKILL_FILE} is not UTF-8")))?;
    Skill::from_markdown(text, Some(dir.to_path_buf()))
        .map_err(|why| skipped(format!("{SKILL_FILE}: {why}")))
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn write_skill(dir: &Path, name: &str) {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(
            dir.join(SKILL_FILE),
            format!("---\nname: {name}\ndescription: Does {name}.\n---\n# {name}\nSteps.\n"),
        )
        .unwrap();
    }

    #[test]
    fn a_skill_dir_and_a_dir_of_skills_both_load_and_bad_ones_warn_once() {
        let root = tempfile::tempdir().unwrap();
        let single = root.path().join("single");
        write_skill(&single, "deploy");
        let many = root.path().join("many");
        write_skill(&many.join("a"), "alpha");
        write_skill(&many.join("b"), "beta");
        std::fs::create_dir_all(many.join("empty")).unwrap();
        std::fs::create_dir_all(many.join("broken")).unwrap();
        std::fs::write(many.join("broken").join(SKILL_FILE), "no front matter").unwrap();
        std::fs::create_dir_all(many.join(".git")).unwrap();
        write_skill(&many.join("dup"), "deploy");
        let missing = root.path().join("missing");

        let (skills, warnings) = load_skills(&[single, many, missing], &["taken".to_owned()]);
        let names: Vec<&str> = skills.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["deploy", "alpha", "beta"]);
        assert_eq!(skills[1].description, "Does alpha.");
        assert_eq!(warnings.len(), 4, "{warnings:#?}");
        assert!(warnings[0].contains("broken") && warnings[0].contains("front matter"));
        assert!(warnings[1].contains("`deploy`") && warnings[1].contains("already loaded"));
        assert!(warnings[2].contains("empty") && warnings[2].contains("no SKILL.md"));
        assert!(warnings[3].contains("no such directory"));
    }

    #[test]
    fn a_name_the_workspace_has_is_skipped_with_a_warning() {
        let root = tempfile::tempdir().unwrap();
        write_skill(root.path(), "taken");
        let (skills, warnings) = load_skills(&[root.path().to_path_buf()], &["taken".to_owned()]);
        assert!(skills.is_empty());
        assert_eq!(warnings.len(), 1);
    }

    #[test]
    fn at_most_the_limit_of_skills_is_offered() {
        let root = tempfile::tempdir().unwrap();
        for i in 0..MAX_SKILLS + 2 {
            write_skill(
                &root.path().join(format!("s{i:03}")),
                &format!("skill-{i:03}"),
            );
        }
        let (skills, warnings) = load_skills(&[root.path().to_path_buf()], &[]);
        assert_eq!(skills.len(), MAX_SKILLS);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("only the first"), "{warnings:?}");
    }

    #[cfg(unix)]
    #[test]
    fn a_skill_file_that_is_a_fifo_or_a_link_to_a_device_is_skipped_without_blocking() {
        let root = tempfile::tempdir().unwrap();
        let fifo = root.path().join("fifo");
        std::fs::create_dir_all(&fifo).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(fifo.join(SKILL_FILE))
            .status()
            .unwrap();
        assert!(made.success());
        let device = root.path().join("device");
        std::fs::create_dir_all(&device).unwrap();
        std::os::unix::fs::symlink("/dev/zero", device.join(SKILL_FILE)).unwrap();
        let (skills, warnings) = load_skills(&[root.path().to_path_buf()], &[]);
        assert!(skills.is_empty());
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(
            warnings.iter().all(|w| w.contains("not a file")),
            "{warnings:?}"
        );
    }

    #[test]
    fn an_oversized_skill_file_is_skipped() {
        let root = tempfile::tempdir().unwrap();
        let body = format!(
            "---\nname: big\ndescription: d\n---\n{}",
            "x".repeat(300 * 1024)
        );
        std::fs::write(root.path().join(SKILL_FILE), body).unwrap();
        let (skills, warnings) = load_skills(&[root.path().to_path_buf()], &[]);
        assert!(skills.is_empty());
        assert!(warnings[0].contains("larger than"), "{warnings:?}");
    }

    #[test]
    fn config_paths_expand_home_and_variables_and_are_relative_to_the_config_dir() {
        let env = |k: &str| match k {
            "HOME" => Some("/home/u".to_owned()),
            "TEAM" => Some("/srv/team".to_owned()),
            _ => None,
        };
        let section = SkillsSection {
            paths: vec!["~/skills".into(), "${TEAM}/skills".into(), "local".into()],
        };
        let dirs = skill_dirs(
            &section,
            &[PathBuf::from("/abs/flag")],
            Path::new("/cfg"),
            &env,
        )
        .unwrap();
        assert_eq!(
            dirs,
            [
                PathBuf::from("/home/u/skills"),
                PathBuf::from("/srv/team/skills"),
                PathBuf::from("/cfg/local"),
                PathBuf::from("/abs/flag"),
            ]
        );
        let unset = SkillsSection {
            paths: vec!["${NOPE}/x".into()],
        };
        let error = skill_dirs(&unset, &[], Path::new("/cfg"), &env).unwrap_err();
        assert!(error.to_string().contains("NOPE"), "{error}");
    }
}
