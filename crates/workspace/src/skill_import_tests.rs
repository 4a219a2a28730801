use std::io::Write as _;
use std::path::Path;

use pretty_assertions::assert_eq;

use super::*;

const SKILL_MD: &str = "---\nname: greet\ndescription: Says hello.\n---\n# Greet\nSay hello.\n";

/// A tar entry: path, kind, bytes (or link target for links).
enum Item<'a> {
    File(&'a str, &'a [u8]),
    Dir(&'a str),
    Symlink(&'a str, &'a str),
    HardLink(&'a str, &'a str),
    Fifo(&'a str),
}

/// Writes a raw 512-byte ustar header (the `tar` builder refuses the
/// hostile names these tests need).
fn header(name: &str, kind: u8, size: u64, link: &str) -> [u8; 512] {
    let mut h = [0u8; 512];
    h[..name.len()].copy_from_slice(name.as_bytes());
    h[100..107].copy_from_slice(b"0000644");
    h[108..115].copy_from_slice(b"0000000");
    h[116..123].copy_from_slice(b"0000000");
    let size = format!("{size:011o}");
    h[124..135].copy_from_slice(size.as_bytes());
    h[136..147].copy_from_slice(b"00000000000");
    h[156] = kind;
    h[157..157 + link.len()].copy_from_slice(link.as_bytes());
    h[257..263].copy_from_slice(b"ustar\0");
    h[263..265].copy_from_slice(b"00");
    h[148..156].copy_from_slice(b"        ");
    let sum: u32 = h.iter().map(|&b| u32::from(b)).sum();
    let sum = format!("{sum:06o}\0 ");
    h[148..156].copy_from_slice(sum.as_bytes());
    h
}

fn tar_gz(items: &[Item<'_>]) -> Vec<u8> {
    let mut raw = Vec::new();
    for item in items {
        match item {
            Item::File(name, data) => {
                raw.extend(header(name, b'0', data.len() as u64, ""));
                raw.extend(*data);
                raw.resize(raw.len().div_ceil(512) * 512, 0);
            }
            Item::Dir(name) => raw.extend(header(name, b'5', 0, "")),
            Item::Symlink(name, to) => raw.extend(header(name, b'2', 0, to)),
            Item::HardLink(name, to) => raw.extend(header(name, b'1', 0, to)),
            Item::Fifo(name) => raw.extend(header(name, b'6', 0, "")),
        }
    }
    raw.extend([0u8; 1024]);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&raw).unwrap();
    gz.finish().unwrap()
}

struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
        }
    }
    fn staging(&self) -> PathBuf {
        self.dir.path().join("staging")
    }
    /// Every path under the scratch directory but the staging one.
    fn outside(&self) -> Vec<PathBuf> {
        let mut found = Vec::new();
        for entry in std::fs::read_dir(self.dir.path()).unwrap() {
            let path = entry.unwrap().path();
            if path != self.staging() {
                found.push(path);
            }
        }
        found
    }
    fn stage(&self, archive: &[u8], limits: &SkillLimits) -> Result<PathBuf> {
        stage_skill_archive(archive, limits, &self.staging())
    }
}

fn reason(e: &Error) -> String {
    e.to_string()
}

#[test]
fn a_skill_in_a_single_top_folder_is_staged_under_its_name() {
    let s = Scratch::new();
    let archive = tar_gz(&[
        Item::Dir("my-skill/"),
        Item::File("my-skill/SKILL.md", SKILL_MD.as_bytes()),
        Item::File("my-skill/scripts/run.sh", b"echo hi\n"),
    ]);
    let staged = s.stage(&archive, &SkillLimits::default()).unwrap();
    assert_eq!(staged, s.staging().join("greet"));
    assert_eq!(
        std::fs::read_to_string(staged.join("SKILL.md")).unwrap(),
        SKILL_MD
    );
    assert_eq!(
        std::fs::read(staged.join("scripts/run.sh")).unwrap(),
        b"echo hi\n"
    );
    assert!(!s.staging().join(EXTRACT_DIR).exists());
}

#[test]
fn a_skill_at_the_top_with_dot_slash_names_is_staged() {
    let s = Scratch::new();
    let archive = tar_gz(&[
        Item::Dir("./"),
        Item::File("./SKILL.md", SKILL_MD.as_bytes()),
        Item::File("./notes.txt", b"n"),
    ]);
    let staged = s.stage(&archive, &SkillLimits::default()).unwrap();
    assert_eq!(staged, s.staging().join("greet"));
    assert!(staged.join("notes.txt").is_file());
}

#[test]
fn hostile_archives_are_refused_and_write_nothing_outside_the_staging_directory() {
    let cases: Vec<(&str, Vec<Item<'_>>)> = vec![
        ("zip slip", vec![Item::File("../x", b"evil")]),
        ("nested zip slip", vec![Item::File("s/../../x", b"evil")]),
        ("absolute", vec![Item::File("/tmp/x", b"evil")]),
        ("symlink", vec![Item::Symlink("s/link", "/etc/passwd")]),
        ("hard link", vec![Item::HardLink("s/link", "/etc/passwd")]),
        ("fifo", vec![Item::Fifo("s/pipe")]),
        ("no SKILL.md", vec![Item::File("s/README.md", b"hi")]),
        (
            "two top folders",
            vec![
                Item::File("a/SKILL.md", SKILL_MD.as_bytes()),
                Item::File("b/x", b"x"),
            ],
        ),
        (
            "bad front matter",
            vec![Item::File("s/SKILL.md", b"# no front matter\n")],
        ),
        (
            "duplicate",
            vec![
                Item::File("s/a.txt", b"1"),
                Item::File("s/a.txt", b"2"),
                Item::File("s/SKILL.md", SKILL_MD.as_bytes()),
            ],
        ),
    ];
    for (what, mut items) in cases {
        let s = Scratch::new();
        if !matches!(
            what,
            "no SKILL.md" | "two top folders" | "bad front matter" | "duplicate"
        ) {
            items.push(Item::File("s/SKILL.md", SKILL_MD.as_bytes()));
        }
        let err = s
            .stage(&tar_gz(&items), &SkillLimits::default())
            .expect_err(what);
        assert!(matches!(err, Error::InvalidSkill { .. }), "{what}: {err:?}");
        assert!(!err.is_over_limit(), "{what}");
        assert_eq!(s.outside(), Vec::<PathBuf>::new(), "{what}");
        assert!(!s.staging().join("x").exists(), "{what}");
    }
}

#[test]
fn limits_are_enforced_while_streaming() {
    let limits = SkillLimits {
        max_files: 3,
        max_file_bytes: 100,
        max_total_bytes: 150,
        max_depth: 3,
    };
    let small = SkillLimits {
        max_file_bytes: 1000,
        ..limits
    };
    let big = vec![b'x'; 101];
    let half = vec![b'y'; 90];
    let cases: Vec<(&str, Vec<Item<'_>>, SkillLimits, bool)> = vec![
        (
            "too many entries",
            vec![
                Item::File("s/a", b"a"),
                Item::File("s/b", b"b"),
                Item::File("s/c", b"c"),
                Item::File("s/SKILL.md", SKILL_MD.as_bytes()),
            ],
            small,
            true,
        ),
        (
            "a file too big",
            vec![Item::File("s/big", &big)],
            limits,
            true,
        ),
        (
            "too much in all",
            vec![Item::File("s/a", &half), Item::File("s/b", &half)],
            limits,
            true,
        ),
        (
            "too deep",
            vec![Item::File("s/a/b/c", b"deep")],
            small,
            false,
        ),
    ];
    for (what, items, limits, over) in cases {
        let s = Scratch::new();
        let err = s.stage(&tar_gz(&items), &limits).expect_err(what);
        assert_eq!(err.is_over_limit(), over, "{what}: {}", reason(&err));
        assert_eq!(s.outside(), Vec::<PathBuf>::new(), "{what}");
    }
}

#[test]
fn a_gzip_bomb_stops_at_the_limit() {
    // 64 MiB of zeros as one file, compressed to a few dozen KiB.
    let mut raw = Vec::new();
    let size = 64u64 << 20;
    raw.extend(header("s/zeros", b'0', size, ""));
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(&raw).unwrap();
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..64 {
        gz.write_all(&zeros).unwrap();
    }
    let archive = gz.finish().unwrap();
    assert!(archive.len() < 1 << 20);
    let s = Scratch::new();
    let err = s.stage(&archive, &SkillLimits::default()).unwrap_err();
    assert!(err.is_over_limit(), "{err:?}");
}

#[test]
fn garbage_is_an_invalid_skill_not_a_panic() {
    let s = Scratch::new();
    let err = s
        .stage(b"definitely not gzip", &SkillLimits::default())
        .unwrap_err();
    assert!(matches!(err, Error::InvalidSkill { .. }), "{err:?}");
}

#[test]
fn unsafe_relative_paths_are_refused() {
    for bad in [
        "", "/a", "\\a", "C:x", "a//b", "a/./b", "a/../b", "..", ".", "a/", "a\0b",
    ] {
        assert!(safe_relative_path(bad, 8).is_err(), "{bad:?}");
    }
    assert!(safe_relative_path("a/b/c", 2).is_err());
    assert_eq!(
        safe_relative_path("a\\b/c.md", 8).unwrap(),
        PathBuf::from("a/b/c.md")
    );
}

#[test]
fn a_workspace_folder_is_copied_and_links_are_refused() {
    let s = Scratch::new();
    let ws = s.dir.path().join("ws");
    std::fs::create_dir_all(ws.join("skills/mine/sub")).unwrap();
    std::fs::write(ws.join("skills/mine/SKILL.md"), SKILL_MD).unwrap();
    std::fs::write(ws.join("skills/mine/sub/a.txt"), "a").unwrap();
    let source = ConfinedDir::open(&ws, "/workspace").unwrap();
    let staged = stage_skill_dir(
        &source,
        Path::new("skills/mine"),
        &SkillLimits::default(),
        &s.staging(),
    )
    .unwrap();
    assert_eq!(staged, s.staging().join("greet"));
    assert_eq!(std::fs::read(staged.join("sub/a.txt")).unwrap(), b"a");

    // A folder whose SKILL.md is a link out of the workspace.
    std::fs::create_dir_all(ws.join("evil")).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", ws.join("evil/SKILL.md")).unwrap();
    let err = stage_skill_dir(
        &source,
        Path::new("evil"),
        &SkillLimits::default(),
        &s.dir.path().join("staging2"),
    )
    .unwrap_err();
    assert!(matches!(err, Error::InvalidSkill { .. }), "{err:?}");
    // A folder that is itself a link out of the workspace.
    let outside = s.dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("SKILL.md"), SKILL_MD).unwrap();
    std::os::unix::fs::symlink(&outside, ws.join("escape")).unwrap();
    let err = stage_skill_dir(
        &source,
        Path::new("escape"),
        &SkillLimits::default(),
        &s.dir.path().join("staging3"),
    )
    .unwrap_err();
    assert!(reason(&err).contains("outside"), "{err}");
}

#[test]
fn a_staging_directory_must_start_empty() {
    let s = Scratch::new();
    std::fs::create_dir_all(s.staging()).unwrap();
    std::fs::write(s.staging().join("leftover"), "x").unwrap();
    assert!(SkillStage::new(&s.staging(), SkillLimits::default()).is_err());
}
